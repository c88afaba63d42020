#!/usr/bin/env bash
# Set up a fresh machine and run every test: the engine, the importers, the samples, the app
# (AppTest) and the browser tests (Playwright driving Debian's chromium).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "chromium is missing: install Debian's chromium (sudo apt-get install chromium) for the browser tests" >&2
  fi
fi

# A CJK font, so the browser tests' screenshots of the Chinese sample show characters, not boxes.
if ! fc-list 2>/dev/null | grep -qi "noto sans cjk\|wqy"; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk >/dev/null
  else
    echo "no CJK font: install one (sudo apt-get install fonts-noto-cjk) for readable Chinese screenshots" >&2
  fi
fi

python3 -m pip install -q --disable-pip-version-check -e ".[test]"
if [ "$#" -gt 0 ]; then
  python3 -m pytest -q "$@"
else
  # Every test: the engine and page tests on both cores (pytest-xdist), then the browser tests
  # one at a time (each drives a real server and chromium, and waits on what they draw).
  status=0
  python3 -m pytest -q -m "not browser" -n 2 || status=$?
  python3 -m pytest -q -m browser || status=$?
  exit "$status"
fi
