"""A freshly started ``streamlit run app.py`` warms up before it answers (graphrag_app.warmup),
and its first session, in Debian's chromium, draws Explore whole: Run enabled, the level picker
with each level's tokens, and the cost preview's chart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphrag_app.warmup import LOG_PREFIX

from . import wait_until
from .browser_support import chart_title, require_browser, shot

pytestmark = pytest.mark.browser

sync_api = require_browser()


def test_a_started_server_is_warm_and_its_first_session_draws_explore(server: str, server_history: Path, page) -> None:  # type: ignore[no-untyped-def]
    log = server_history.parent / "server.log"
    # the server answered its health check only after its warm-up ended, or gave up waiting for
    # it (a machine too busy to warm up within WARM_WAIT_S): either way its line is in the log
    assert LOG_PREFIX in log.read_text()
    ready = wait_until(lambda: re.search(f"{re.escape(LOG_PREFIX)} ready in .*", log.read_text()), "the warm-up to end")
    assert "failed" not in ready.group(0), ready.group(0)
    assert "missing ScriptRunContext" not in log.read_text()  # the warm-up draws nothing, so Streamlit has nothing to warn of

    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(server)
    sync_api.expect(page.get_by_role("button", name="Run global search")).to_be_enabled()
    picker = page.get_by_role("combobox", name="Community level")
    sync_api.expect(picker).to_have_value(re.compile(r"^leaf · ≈[\d.,]+[kM]? tokens · [\d,]+ summaries$"))
    sync_api.expect(chart_title(page, r"^Planned map batches: ")).to_be_visible()  # the cost preview, Plotly's script loaded
    shot(page, "first-open-explore")
