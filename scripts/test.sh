#!/usr/bin/env bash
# Set up a fresh machine and run every test: the engine, the importers, the samples, the app
# (AppTest) and the browser tests (Playwright driving Debian's chromium).
#
#   bash scripts/test.sh                 set up, then every test
#   bash scripts/test.sh PYTEST_ARG...   set up, then pytest -q PYTEST_ARG...
#   bash scripts/test.sh --setup-only    set up, then stop
#
# The set-up: Debian's chromium and a CJK font (installed as root, else named), and the
# project's virtual environment .venv with the package and its test extras (scripts/setup.sh);
# the tests run from it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

if ! command -v chromium >/dev/null 2>&1; then
  if is_root; then
    say "installing Debian's chromium for the browser tests"
    apt_install chromium || fail "apt-get could not install chromium (see above)"
  else
    say "chromium is missing: install Debian's chromium (sudo apt-get install chromium) for the browser tests"
  fi
fi

# A CJK font, so the browser tests' screenshots of the Chinese sample show characters, not boxes.
# (grep reads all of fc-list's output: with -q it would stop early, and pipefail would count
# fc-list's broken pipe as no font.)
if ! fc-list 2>/dev/null | grep -i "noto sans cjk\|wqy" >/dev/null; then
  if is_root; then
    say "installing a CJK font (fonts-noto-cjk) for readable Chinese screenshots"
    apt_install fonts-noto-cjk || fail "apt-get could not install fonts-noto-cjk (see above)"
  else
    say "no CJK font: install one (sudo apt-get install fonts-noto-cjk) for readable Chinese screenshots"
  fi
fi

set_up test
if [ "${1:-}" = --setup-only ]; then
  say "done: .venv is ready with the test extras (bash scripts/test.sh ARGS, or .venv/bin/python -m pytest ARGS)"
  exit 0
fi
# The tests start many Python processes over the same sources (pytest's workers, the app's
# servers, the command line): each reads the bytecode, and pytest's rewritten test modules, that
# the first one wrote, instead of compiling them again.
unset PYTHONDONTWRITEBYTECODE
if [ "$#" -gt 0 ]; then
  exec "$VENV/bin/python" -m pytest -q "$@"
fi
# Every test, in three parts: the engine and page tests on both cores (pytest-xdist); the browser
# tests on both cores, a file per worker (its tests in order, with the module's app server and
# chromium), so a page test never waits beside a browser; then the tests marked timing alone: they
# sample what a page shows while a run streams, and a test beside them would be measured too.
status=0
# browser_tests PYTEST_ARG...: pytest -q with them; none to run (exit 5: without chromium the
# browser tests skip) is no failure.
browser_tests() {
  "$VENV/bin/python" -m pytest -q "$@" || {
    local code=$?
    [ "$code" = 5 ] || status=$code
  }
}
"$VENV/bin/python" -m pytest -q -m "not browser" -n 2 || status=$?
browser_tests -m "browser and not timing" -n 2 --dist loadfile
browser_tests -m timing
exit "$status"
