"""Issue 10 in a real browser: a shared link cannot send the server's API key to another host.

Two fake OpenAI-compatible servers on 127.0.0.1: the app is configured with the first and its
key; a link points the page at the second. The second must never see the key, and the page
must say which endpoint and model the run calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from . import wait_until
from .browser_support import UI_TIMEOUT_MS, ask, chromium_page, require_browser, streamlit_server
from .openai_server import Server, completion_body, openai_server

pytestmark = pytest.mark.browser

sync_api = require_browser()

SECRET = "sk-configured-SECRET-9876543210"
ANSWER = json.dumps({"answer": "Tea is a drink.", "usefulness": 70})


@pytest.fixture(scope="module")
def chat_servers() -> Iterator[tuple[Server, Server]]:
    """The configured endpoint and another one; each answers every call with one valid map and
    reduce reply, and records the requests' headers."""

    def answer(path: str, body: dict) -> tuple[int, dict]:
        return 200, completion_body(ANSWER)

    with openai_server(answer) as configured, openai_server(answer) as other:
        yield configured, other


@pytest.fixture(scope="module")
def server_env(chat_servers: tuple[Server, Server]) -> dict[str, str]:
    configured, _ = chat_servers
    return {
        "GRAPHRAG_LLM_PROVIDER": "openai",
        "GRAPHRAG_LLM_BASE_URL": configured.base_url,
        "GRAPHRAG_LLM_API_KEY": SECRET,
        "GRAPHRAG_LLM_MODEL": "configured-model",
    }


@pytest.fixture(scope="module")
def servers(server: str, chat_servers: tuple[Server, Server]) -> tuple[str, Server, Server]:
    """The app server configured with the first fake endpoint and its key; (url, configured, other)."""
    return (server, *chat_servers)


def run_link(page, url: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(url)
    sync_api.expect(page.get_by_role("button", name="Run global search")).to_be_enabled()
    page.get_by_role("button", name="Run global search").click()
    sync_api.expect(page.get_by_text("Status: completed", exact=True).locator("visible=true").first).to_be_visible()


def test_a_link_to_another_endpoint_never_gets_the_configured_key(servers, browser) -> None:  # type: ignore[no-untyped-def]
    url, configured, other = servers
    with chromium_page(height=1400, browser=browser) as page:
        link = f"{url}/?index=zh-tea&model=openai&base_url={quote(other.base_url, safe='')}&llm=x&q=what+is+tea%3F&concurrency=2"
        page.goto(link)
        sync_api.expect(page.get_by_text(f"Runs call model x at {other.base_url} without an API key")).to_be_visible()
        run_link(page, link)
        assert other.authorizations, "the run did not call the endpoint of the link"
        assert all(SECRET not in header for header in other.authorizations)
        assert not configured.authorizations

        # The key typed in this browser session is the one the other endpoint receives.
        page.get_by_role("textbox", name="API key").fill("sk-typed-in-the-page")
        page.get_by_role("textbox", name="API key").press("Enter")
        sync_api.expect(page.get_by_text("with the API key typed in this session")).to_be_visible()
        calls = len(other.authorizations)
        ask(page, "what is oolong?")  # a new question: nothing comes from the map cache
        wait_until(lambda: len(other.authorizations) > calls, "a call to the other endpoint", timeout_s=UI_TIMEOUT_MS / 1000, pause_s=0.1)
        sync_api.expect(page.get_by_text("Status: completed", exact=True).locator("visible=true").first).to_be_visible()
        assert other.authorizations[calls:] and set(other.authorizations[calls:]) == {"Bearer sk-typed-in-the-page"}

    with chromium_page(height=1400, browser=browser) as page:  # a new browser session: the configured endpoint gets the configured key
        page.goto(f"{url}/?index=zh-tea&q=what+is+tea%3F&concurrency=2")
        sync_api.expect(page.get_by_text(f"Runs call model configured-model at {configured.base_url} with the configured API key")).to_be_visible()
        run_link(page, f"{url}/?index=zh-tea&q=what+is+tea%3F&concurrency=2")
        assert configured.authorizations and set(configured.authorizations) == {f"Bearer {SECRET}"}
    assert all(SECRET not in header for header in other.authorizations)


def test_a_killed_server_leaves_the_run_in_the_history_as_interrupted(browser, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import re
    import signal

    from graphrag_core.history import RunStore

    from .browser_support import SERVER_PROCESSES

    db = tmp_path / "runs.sqlite3"
    env = {"GRAPHRAG_LLM_PROVIDER": "offline"}
    with chromium_page(height=1400, browser=browser) as page:
        with streamlit_server(tmp_path, db, env=env) as url:
            page.goto(f"{url}/?index=jargon&latency=0.4&concurrency=1&q=Who+is+the+Mentor%3F")
            page.get_by_role("button", name="Run global search").click()
            sync_api.expect(page.get_by_text(re.compile(r"^Status: running"))).to_be_visible()

            def two_batches_written() -> bool:
                runs = RunStore(db).list_runs() if db.exists() else []
                record = RunStore(db).get(runs[0].run_id) if runs else None
                return record is not None and sum(b.status == "done" for b in record.replay().batches) >= 2

            wait_until(two_batches_written, "finished batches written while the run streams", pause_s=0.2)
            SERVER_PROCESSES[url].send_signal(signal.SIGKILL)
            SERVER_PROCESSES[url].wait(30)
        with streamlit_server(tmp_path, db, env=env) as url:  # the app again, on the same history
            page.goto(url)
            recent = page.locator("details").filter(has=page.get_by_text("Recent runs")).first
            if recent.get_attribute("open") is None:
                page.get_by_text("Recent runs").click()
            sync_api.expect(page.get_by_text("status: interrupted").first).to_be_visible()
            recent.get_by_role("button", name="Open", exact=True).first.click()
            sync_api.expect(page.get_by_text(re.compile(r"^Status: interrupted")).first).to_be_visible()
            sync_api.expect(page.get_by_text(re.compile(r"The run was interrupted: its process ended before it finished \(\d+ of \d+ map batches were done\)")).first).to_be_visible()
