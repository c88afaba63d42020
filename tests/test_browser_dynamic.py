"""Dynamic selection in a real browser: the walk drawn on the hierarchy, then a screenshot.

Screenshots go to ``test-artifacts/`` (gitignored). Skipped when /usr/bin/chromium is missing.
"""

from __future__ import annotations

import re

import pytest

from .browser_support import ARTIFACTS, ask, chart_title, require_browser, shot

pytestmark = pytest.mark.browser

sync_api = require_browser()


@pytest.fixture
def page_height() -> int:
    return 2200


def test_a_dynamic_run_draws_its_walk_on_the_hierarchy(server: str, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server + "/?selection=dynamic&concurrency=4")
    sync_api.expect(page.get_by_text("Est. rating calls")).to_be_visible()
    ask(page, "Who are the wizards?")
    final = chart_title(page, r"^Dynamic selection: \d+ rated, \d+ kept · round \d+$")
    sync_api.expect(final).to_be_visible()
    sync_api.expect(page.get_by_text("Status: completed", exact=True).locator("visible=true").first).to_be_visible()
    sync_api.expect(page.get_by_text("Rating tokens").first).to_be_visible()
    sunburst = page.locator(".js-plotly-plot .sunburstlayer path.surface")
    assert sunburst.count() > 100  # every community of the jargon sample is a sector
    assert "selection=dynamic" in page.url and "run=" in page.url
    shot(page, "dynamic-hierarchy")
    chart = page.locator(".js-plotly-plot").filter(has=page.locator(".sunburstlayer")).first
    chart.screenshot(path=str(ARTIFACTS / "dynamic-hierarchy-chart.png"))

    # With slow calls the sunburst is redrawn while the ratings come in.
    page.goto(server + "/?selection=dynamic&concurrency=4&latency=1.0")
    sync_api.expect(page.get_by_text("Est. rating calls")).to_be_visible()
    ask(page, "What do hackers call a clever but ugly fix?")
    live = chart_title(page, r"\(rating…\)$")
    sync_api.expect(live).to_be_visible()
    shot(page, "dynamic-hierarchy-live")
    page.get_by_role("button", name="Stop").click()
    sync_api.expect(page.get_by_text(re.compile(r"^Status: stopped"))).to_be_visible()
