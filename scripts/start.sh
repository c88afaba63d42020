#!/usr/bin/env bash
# Set up and start the app on the bundled sample index with the offline model.
#
#   bash scripts/start.sh [STREAMLIT OPTION...]   set up (scripts/setup.sh), then streamlit run app.py
#   bash scripts/start.sh --setup-only            set up, then stop
#
# The set-up makes the project's virtual environment .venv once (any Python >= 3.11, the
# system's included) and installs the package into it; the app runs from it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

set_up
if [ "${1:-}" = --setup-only ]; then
  say "done: .venv is ready (source .venv/bin/activate, or run .venv/bin/graphrag-explorer)"
  exit 0
fi
exec "$VENV/bin/python" -m streamlit run app.py "$@"
