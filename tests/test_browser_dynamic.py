"""Dynamic selection in a real browser: the walk drawn on the hierarchy, then a screenshot.

Screenshots go to ``test-artifacts/`` (gitignored). Skipped when /usr/bin/chromium is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from .browser_support import ARTIFACTS, CHROMIUM, UI_TIMEOUT_MS, chromium_page, streamlit_server

pytestmark = pytest.mark.browser

if not CHROMIUM.exists():
    pytest.skip("Debian's chromium (/usr/bin/chromium) is not installed", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
sync_api.expect.set_options(timeout=UI_TIMEOUT_MS)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("server-dynamic")
    with streamlit_server(home, home / "runs.sqlite3") as url:
        yield url


def ask(page, question: str) -> None:  # type: ignore[no-untyped-def]
    box = page.get_by_label("Question")
    box.fill(question)
    box.press("Control+Enter")  # commit the text area before clicking
    page.wait_for_timeout(500)
    page.get_by_role("button", name="Run global search").click()


def hierarchy_titles(page):  # type: ignore[no-untyped-def]
    return page.locator(".js-plotly-plot .gtitle >> visible=true")


def test_a_dynamic_run_draws_its_walk_on_the_hierarchy(server: str) -> None:
    with chromium_page(height=2200) as page:
        page.goto(server + "/?selection=dynamic&concurrency=4")  # type: ignore[attr-defined]
        sync_api.expect(page.get_by_text("Est. rating calls")).to_be_visible()  # type: ignore[attr-defined]
        ask(page, "Who are the wizards?")
        final = hierarchy_titles(page).filter(has_text=re.compile(r"^Dynamic selection: \d+ rated, \d+ kept · round \d+$"))
        sync_api.expect(final.first).to_be_visible()
        sync_api.expect(page.get_by_text("Status: completed", exact=True).locator("visible=true").first).to_be_visible()  # type: ignore[attr-defined]
        sync_api.expect(page.get_by_text("Rating tokens").first).to_be_visible()  # type: ignore[attr-defined]
        sunburst = page.locator(".js-plotly-plot .sunburstlayer path.surface")  # type: ignore[attr-defined]
        assert sunburst.count() > 100  # every community of the jargon sample is a sector
        assert "selection=dynamic" in page.url and "run=" in page.url  # type: ignore[attr-defined]
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "dynamic-hierarchy.png"), full_page=True)  # type: ignore[attr-defined]
        chart = page.locator(".js-plotly-plot").filter(has=page.locator(".sunburstlayer")).first  # type: ignore[attr-defined]
        chart.screenshot(path=str(ARTIFACTS / "dynamic-hierarchy-chart.png"))

        # With slow calls the sunburst is redrawn while the ratings come in.
        page.goto(server + "/?selection=dynamic&concurrency=4&latency=1.0")  # type: ignore[attr-defined]
        sync_api.expect(page.get_by_text("Est. rating calls")).to_be_visible()  # type: ignore[attr-defined]
        ask(page, "What do hackers call a clever but ugly fix?")
        live = hierarchy_titles(page).filter(has_text=re.compile(r"\(rating…\)$"))
        sync_api.expect(live.first).to_be_visible()
        page.screenshot(path=str(ARTIFACTS / "dynamic-hierarchy-live.png"), full_page=True)  # type: ignore[attr-defined]
        page.get_by_role("button", name="Stop").click()  # type: ignore[attr-defined]
        sync_api.expect(page.get_by_text(re.compile(r"^Status: stopped"))).to_be_visible()  # type: ignore[attr-defined]
