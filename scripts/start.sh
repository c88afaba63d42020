#!/usr/bin/env bash
# Set up and start the app on the bundled sample index with the offline model.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check -e .
exec python3 -m streamlit run app.py "$@"
