# The set-up shared by scripts/start.sh and scripts/test.sh (sourced by both, from the project's
# folder): a Python >= 3.11, the project's virtual environment .venv (made once, reused after) and
# the package installed into it, editable, with the extras a script needs. Nothing is installed
# into the system's Python: Debian's and Ubuntu's refuse it (PEP 668, "externally managed").
#
#   PYTHON=python3.12 bash scripts/start.sh   makes .venv with that Python instead of python3
#   rm -r .venv                               starts over
#
# The venv records what it holds in .venv/.graphrag-explorer-setup (pyproject.toml's checksum and
# the extras), so a later run installs again only when pyproject.toml changed.

VENV=.venv
MIN_PYTHON=3.11
SETUP_RECORD="$VENV/.graphrag-explorer-setup"

say() { printf 'set-up: %s\n' "$*" >&2; }
# fail LINE...: the first line after "set-up failed:", the others below it, then exit 1.
fail() {
  printf 'set-up failed: %s\n' "$1" >&2
  shift
  [ "$#" -eq 0 ] || printf '  %s\n' "$@" >&2
  exit 1
}

is_root() { [ "$(id -u)" = 0 ]; }

# apt_install PACKAGE...: Debian's packages, as root only (once per run: apt-get update first).
apt_install() {
  is_root && command -v apt-get >/dev/null 2>&1 || return 1
  if [ -z "${APT_UPDATED:-}" ]; then
    apt-get update -qq || return 1
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# python_version PYTHON: prints "3.11" (nothing when PYTHON does not run).
python_version() {
  "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null
}

# recent_enough VERSION: VERSION (major.minor) >= MIN_PYTHON.
recent_enough() {
  local major=${1%%.*} minor=${1#*.}
  [ -n "$1" ] || return 1
  [ "$major" -gt "${MIN_PYTHON%%.*}" ] || { [ "$major" -eq "${MIN_PYTHON%%.*}" ] && [ "$minor" -ge "${MIN_PYTHON#*.}" ]; }
}

# find_python: prints the Python to make .venv with: $PYTHON when set, else python3 when it is
# recent enough, else the newest python3.X on PATH that is.
find_python() {
  local candidate version found=""
  if [ -n "${PYTHON:-}" ]; then
    version=$(python_version "$PYTHON")
    [ -n "$version" ] || fail "PYTHON=$PYTHON does not run"
    recent_enough "$version" || fail "PYTHON=$PYTHON is Python $version; this project needs Python >= $MIN_PYTHON"
    echo "$PYTHON"
    return
  fi
  for candidate in python3 python3.14 python3.13 python3.12 python3.11; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    version=$(python_version "$candidate")
    if recent_enough "$version"; then
      echo "$candidate"
      return
    fi
    [ -n "$found" ] || found="$candidate is Python ${version:-(does not run)}"
  done
  fail "this project needs Python >= $MIN_PYTHON, and ${found:-there is no python3 on PATH}." \
    "Install one (Debian/Ubuntu: sudo apt-get install python3 python3-venv, or python3.11 python3.11-venv)," \
    "or name it: PYTHON=/path/to/python3.12 bash $0"
}

# venv_works: .venv runs a recent enough Python that has pip.
venv_works() {
  [ -x "$VENV/bin/python" ] && recent_enough "$(python_version "$VENV/bin/python")" \
    && "$VENV/bin/python" -c "import pip" >/dev/null 2>&1
}

# make_venv: .venv, made with find_python's choice when it is missing or does not work.
make_venv() {
  local python version
  venv_works && return 0
  python=$(find_python)
  version=$(python_version "$python")
  if ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    # Debian and Ubuntu ship the venv module apart from Python (python3.X-venv).
    if is_root && command -v apt-get >/dev/null 2>&1; then
      say "installing python$version-venv (Debian's venv module for $python)"
      apt_install "python$version-venv" || fail "apt-get could not install python$version-venv (see above)"
    else
      fail "$python (Python $version) cannot make a virtual environment: its venv module is missing." \
        "Install it (Debian/Ubuntu: sudo apt-get install python$version-venv), then run this again."
    fi
  fi
  if [ -e "$VENV" ]; then
    say "$VENV does not work (no recent Python with pip in it); making it again with $python (Python $version)"
    "$python" -m venv --clear "$VENV" || fail "$python -m venv --clear $VENV failed (see above)"
  else
    say "making the project's environment $VENV with $python (Python $version); later runs reuse it"
    "$python" -m venv "$VENV" || fail "$python -m venv $VENV failed (see above)"
  fi
}

# install_package [EXTRAS]: the package (editable) with EXTRAS into .venv, unless .venv already
# holds it for this pyproject.toml (a venv set up with the test extras holds the plain package too).
install_package() {
  local extras=${1:-} checksum spec=.
  checksum=$(sha256sum pyproject.toml | cut -d' ' -f1)
  if [ -f "$SETUP_RECORD" ] && grep -q "^$checksum ${extras:-.*}\$" "$SETUP_RECORD"; then
    return 0
  fi
  [ -z "$extras" ] || spec=".[$extras]"
  say "installing the package${extras:+ with its $extras extras} into $VENV (pip install -e '$spec')"
  # --no-compile: Python compiles a module when it is first imported (and keeps the bytecode);
  # compiling every file of every package up front was half of a fresh install's time.
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-compile -e "$spec" \
    || fail "pip could not install '$spec' into $VENV (see above)"
  { grep "^$checksum " "$SETUP_RECORD" 2>/dev/null || true; echo "$checksum ${extras:-app}"; } > "$SETUP_RECORD.new"
  mv "$SETUP_RECORD.new" "$SETUP_RECORD"
}

# set_up [EXTRAS]: .venv with the package (and EXTRAS) in it, then its bin/ first on PATH, as
# `source .venv/bin/activate` does, so what runs next (streamlit, pytest, graphrag-explorer) is
# the venv's.
set_up() {
  make_venv
  install_package "${1:-}"
  export VIRTUAL_ENV="$PWD/$VENV"
  export PATH="$VIRTUAL_ENV/bin:$PATH"
  unset PYTHONHOME
}
