"""The app in a real browser: ``streamlit run app.py`` driven by Playwright in Debian's chromium.

Screenshots go to ``test-artifacts/`` (gitignored). Skipped when /usr/bin/chromium is missing.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from urllib.parse import parse_qs, urlsplit
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import APP_ROOT

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = APP_ROOT / "test-artifacts"
SERVER_START_TIMEOUT_S = 60
UI_TIMEOUT_MS = 60_000
QUESTION = "What do hackers think of Microsoft?"

if not CHROMIUM.exists():  # noqa: SIM108
    pytest.skip("Debian's chromium (/usr/bin/chromium) is not installed", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
sync_api.expect.set_options(timeout=UI_TIMEOUT_MS)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real app server on a free port, with its own run history."""
    port = _free_port()
    home = tmp_path_factory.mktemp("server")
    env = {**os.environ, "GRAPHRAG_EXPLORER_DB": str(home / "runs.sqlite3")}
    env.pop("GRAPHRAG_EXPLORER_ALLOWED_ROOTS", None)
    log = open(home / "server.log", "w")
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless", "true"]
    process = subprocess.Popen(command, cwd=APP_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://localhost:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start; see {home / 'server.log'}")
            time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1500, "height": 1800})
    page = context.new_page()
    page.set_default_timeout(UI_TIMEOUT_MS)
    yield page
    context.close()


def shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def open_explore(page, url: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(url)
    sync_api.expect(page.get_by_role("button", name="Run global search")).to_be_enabled()
    sync_api.expect(page.get_by_text("Est. map prompt tokens")).to_be_visible()


def chart_title(page, pattern: str):  # type: ignore[no-untyped-def]
    """The visible title of a Plotly chart (Plotly keeps hidden copies of text while it lays out)."""
    return page.locator(".js-plotly-plot .gtitle >> visible=true").filter(has_text=re.compile(pattern)).first


def ask(page, question: str) -> None:  # type: ignore[no-untyped-def]
    box = page.get_by_label("Question")
    box.fill(question)
    box.press("Control+Enter")  # commit the text area before clicking
    page.wait_for_timeout(500)
    page.get_by_role("button", name="Run global search").click()


def test_run_a_question_watch_it_and_follow_a_cited_community(server: str, page) -> None:  # type: ignore[no-untyped-def]
    open_explore(page, server + "/?latency=0.05&concurrency=4")
    ask(page, QUESTION)
    sync_api.expect(chart_title(page, r"^Map batches: \d+ of \d+ finished")).to_be_visible()
    sync_api.expect(page.get_by_text("Status: completed", exact=True).locator("visible=true").first).to_be_visible()
    sync_api.expect(chart_title(page, r"^Reduce candidates: \d+ of \d+ selected")).to_be_visible()
    sync_api.expect(page.get_by_role("heading", name="Answer").locator("visible=true").first).to_be_visible()
    assert "run=" in page.url and "seed=" in page.url
    shot(page, "explore-completed")

    page.get_by_role("link", name=re.compile(r"Community ")).first.click()
    page.wait_for_url(re.compile(r"/provenance\?.*community="))
    community = parse_qs(urlsplit(page.url).query)["community"][0]
    sync_api.expect(page.get_by_role("heading", name=re.compile(rf"^Community {re.escape(community)}:"))).to_be_visible()
    sync_api.expect(page.get_by_text(re.compile(r"^Claims from leaf descendants"))).to_be_visible()
    sync_api.expect(page.get_by_text(re.compile(r"^Source chunk ")).first).to_be_visible()
    sync_api.expect(page.get_by_text("In this run")).to_be_visible()
    shot(page, "provenance")

    page.reload()  # a provenance link is shareable: it reloads to the same page
    sync_api.expect(page.get_by_role("heading", name=re.compile(rf"^Community {re.escape(community)}:"))).to_be_visible()


def test_stop_cancels_a_slow_run_and_the_run_survives_a_reload(server: str, page) -> None:  # type: ignore[no-untyped-def]
    open_explore(page, server + "/?latency=1.5&concurrency=2")
    ask(page, "Who is the Mentor?")
    sync_api.expect(page.get_by_text(re.compile(r"^Status: running"))).to_be_visible()
    stop = page.get_by_role("button", name="Stop")
    sync_api.expect(stop).to_be_enabled()
    page.wait_for_timeout(1500)
    stop.click()
    sync_api.expect(page.get_by_text(re.compile(r"^Status: stopped"))).to_be_visible()
    sync_api.expect(page.get_by_role("button", name="Run global search")).to_be_enabled()
    shot(page, "explore-stopped")

    page.goto(server)  # a new session: the stopped run is in the history
    page.get_by_text("Recent runs").click()
    sync_api.expect(page.get_by_text("status: cancelled").first).to_be_visible()
    shot(page, "recent-runs")
