"""The test suite. Its shared modules: ``conftest`` (fixtures), ``factories`` (indexes and runs
built in code), ``apptest_support`` (the app under AppTest), ``browser_support`` (the app in
chromium), ``cli_support`` (the command line) and ``openai_server`` (a fake endpoint)."""

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

APP_ROOT = Path(__file__).resolve().parents[1]
"""The project's folder (``app.py``, ``pages/``, ``pyproject.toml``)."""

MSGRAPHRAG_DATA = APP_ROOT.parent / "shared" / "data" / "msgraphrag"
"""Real Microsoft GraphRAG outputs, read in place beside the project (never copied into it)."""

T = TypeVar("T")


def wait_until(condition: Callable[[], T], what: str, *, timeout_s: float = 120, pause_s: float = 0.01) -> T:
    """Poll ``condition`` until it returns something true, and return that; fail naming ``what``
    after ``timeout_s``. For waiting on another thread or process to get somewhere (a bound, not
    a measurement), never for putting events in order."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(pause_s)
