"""The test suite. Its shared modules: ``conftest`` (fixtures), ``factories`` (indexes and runs
built in code), ``apptest_support`` (the app under AppTest), ``browser_support`` (the app in
chromium), ``cli_support`` (the command line) and ``openai_server`` (a fake endpoint)."""

from pathlib import Path

APP_ROOT = Path(__file__).resolve().parents[1]
"""The project's folder (``app.py``, ``pages/``, ``pyproject.toml``)."""

MSGRAPHRAG_DATA = APP_ROOT.parent / "shared" / "data" / "msgraphrag"
"""Real Microsoft GraphRAG outputs, read in place beside the project (never copied into it)."""
