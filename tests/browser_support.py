"""What the browser tests share: a real ``streamlit run app.py`` server and Debian's chromium.

The fixtures built on these (``server``, ``page``, ``page_height``, ``server_history``,
``server_env``) are in ``tests/conftest.py``. A browser test module starts with::

    pytestmark = pytest.mark.browser
    sync_api = require_browser()
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from urllib.parse import parse_qs, urlsplit

import pytest

from . import APP_ROOT, wait_until

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = APP_ROOT / "test-artifacts"
SERVER_START_TIMEOUT_S = 60
UI_TIMEOUT_MS = 60_000
SERVER_PROCESSES: dict[str, subprocess.Popen] = {}
"""The ``streamlit run`` process behind each URL :func:`streamlit_server` yields (tests that
kill a server look it up here)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def streamlit_server(home: Path, db: Path, *, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """``streamlit run app.py`` on a free port with the run history in ``db`` (and ``env`` over
    the environment); yields its URL once it answers its health check, and stops it afterwards
    (its log is ``home/server.log``)."""
    port = free_port()
    extra = dict(env or {})
    env = {**os.environ, "GRAPHRAG_EXPLORER_DB": str(db), "GRAPHRAG_LLM_OFFLINE_LATENCY": "0"}  # no presentation pace
    env.pop("GRAPHRAG_EXPLORER_ALLOWED_ROOTS", None)
    env.pop("GRAPHRAG_EXPLORER_CACHE", None)  # the map cache goes beside the run history
    env.update(extra)
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless", "true"]
    url = f"http://localhost:{port}"
    with open(home / "server.log", "w") as log:
        process = subprocess.Popen(command, cwd=APP_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:

            def healthy() -> bool:
                if process.poll() is not None:
                    raise RuntimeError(f"streamlit exited with code {process.returncode} before it answered; see {home / 'server.log'}")
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                        return response.status == 200
                except OSError:
                    return False

            wait_until(healthy, f"streamlit to answer its health check (see {home / 'server.log'})", timeout_s=SERVER_START_TIMEOUT_S, pause_s=0.3)
            SERVER_PROCESSES[url] = process
            yield url
        finally:
            SERVER_PROCESSES.pop(url, None)
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


@contextlib.contextmanager
def chromium_page(*, height: int) -> Iterator[object]:
    """A page of Debian's chromium (headless, driven by Playwright; never a downloaded browser),
    1,500 px wide and ``height`` px tall, so full-page screenshots show every section."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1500, "height": height})
            page = context.new_page()
            page.set_default_timeout(UI_TIMEOUT_MS)
            yield page
        finally:
            browser.close()


def require_browser() -> ModuleType:
    """Skip the calling test module (call it at module level) when Debian's chromium or
    Playwright is missing; else return ``playwright.sync_api`` with ``expect`` waiting up to
    :data:`UI_TIMEOUT_MS`."""
    if not CHROMIUM.exists():
        pytest.skip(f"Debian's chromium ({CHROMIUM}) is not installed", allow_module_level=True)
    sync_api = pytest.importorskip("playwright.sync_api")  # a third-party tool, not the project's code
    sync_api.expect.set_options(timeout=UI_TIMEOUT_MS)
    return sync_api


def shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    """A full-page screenshot of ``page`` saved as ``test-artifacts/<name>.png``."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def url_param(url: str, name: str) -> str | None:
    """The value of query parameter ``name`` in ``url`` (the last one if repeated), or None."""
    values = parse_qs(urlsplit(url).query).get(name)
    return values[-1] if values else None


def wait_for_url_param(page, name: str, value: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until ``page``'s URL has ``name=value``. Explore writes its settings into the URL on
    the script run that reads them, so from then on the server holds the new value."""
    page.wait_for_url(lambda url: url_param(url, name) == value)


def wait_for_new_url_param(page, name: str, old: str | None) -> str:  # type: ignore[no-untyped-def]
    """Wait until ``page``'s URL has a value of ``name`` other than ``old``, and return it."""
    page.wait_for_url(lambda url: url_param(url, name) not in (None, old))
    return str(url_param(page.url, name))


def ask(page, question: str) -> None:  # type: ignore[no-untyped-def]
    """Type ``question`` into Explore's question box and press Run global search once the
    server has the question (the text area commits on Ctrl+Enter; the URL's ``q`` follows)."""
    box = page.get_by_label("Question")
    box.fill(question)
    box.press("Control+Enter")
    wait_for_url_param(page, "q", question)
    page.get_by_role("button", name="Run global search").click()


def wait_for_script_run(page) -> None:  # type: ignore[no-untyped-def]
    """Wait until the app's script is not running (Streamlit marks its root element with
    ``data-test-script-state``): what the page shows is what that run drew."""
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(state="attached")


_PLOTS_SETTLED = """(token) => {
    const signature = [...document.querySelectorAll('.js-plotly-plot')].map((plot) => {
        const box = plot.getBoundingClientRect();
        const shown = box.width > 0 && box.height > 0;
        if (shown && (!plot._fullLayout || !plot._fullData || plot._transitioning)) return null;
        const traces = plot._fullData ? plot._fullData.length : 0;
        const drawn = plot.querySelectorAll('svg *').length;
        return [box.x + window.scrollX, box.y + window.scrollY, box.width, box.height, traces, drawn].map(Math.round).join(',');
    });
    if (signature.includes(null)) return false;
    const joined = signature.join(';');
    const last = window.__graphragPlots;
    window.__graphragPlots = {token, joined};
    return last !== undefined && last.token === token && last.joined === joined;
}"""

_SETTLE_TOKENS = itertools.count()

PLOTS_POLL_MS = 150
"""How far apart :func:`wait_for_plots_settled` samples the charts; two equal samples in a row
mean they have settled."""


def wait_for_plots_settled(page) -> None:  # type: ignore[no-untyped-def]
    """Wait until every Plotly chart on ``page`` is drawn (its figure laid out with its traces,
    no transition running) and two samples :data:`PLOTS_POLL_MS` apart agree on each chart's
    place, size, trace count and number of drawn SVG elements: the state a screenshot shows."""
    page.wait_for_function(_PLOTS_SETTLED, arg=next(_SETTLE_TOKENS), polling=PLOTS_POLL_MS)


def chart_title(page, pattern: str):  # type: ignore[no-untyped-def]
    """The first visible title of a Plotly chart matching the regex ``pattern`` (Plotly keeps
    hidden copies of text while it lays out)."""
    return page.locator(".js-plotly-plot .gtitle >> visible=true").filter(has_text=re.compile(pattern)).first
