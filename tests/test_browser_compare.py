"""The Compare, Index browser and Sweeps pages in a real browser: ``streamlit run app.py``
driven by Playwright in Debian's chromium, with a run history seeded before the server starts.

Screenshots go to ``test-artifacts/``. Skipped when /usr/bin/chromium is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_core import GlobalSearchRequest
from graphrag_core.history import RunStore

from .browser_support import require_browser, shot, wait_for_plots_settled
from .factories import sample_run

pytestmark = pytest.mark.browser

QUESTION = "What do hackers call a clever but ugly fix?"

sync_api = require_browser()


def _seed_runs(db: Path) -> list[str]:
    """Two offline runs on the jargon sample (levels 0 and 1), saved to the server's store."""
    store = RunStore(db)
    records = [
        sample_run(GlobalSearchRequest(query=QUESTION, community_level=level, seed=seed, include_sources=False), label=f"level {level}")
        for level, seed in ((0, 1), (1, 2))
    ]
    for record in records:
        store.save(record)
    return [record.run_id for record in records]


@pytest.fixture(scope="module")
def server_seed(server_history: Path) -> list[str]:
    return _seed_runs(server_history)


@pytest.fixture(scope="module")
def seeded_server(server: str, server_seed: list[str]) -> tuple[str, list[str]]:
    """The app server, whose run history held two runs when it started; (url, run ids)."""
    return server, server_seed


@pytest.fixture
def page_height() -> int:
    return 3800


def _no_exception(page) -> None:  # type: ignore[no-untyped-def]
    assert page.locator("[data-testid='stException']").count() == 0


def _nav_labels(page) -> list[str]:  # type: ignore[no-untyped-def]
    page.locator("[data-testid='stSidebarNav'] a").first.wait_for()
    return [" ".join(link.inner_text().split()) for link in page.locator("[data-testid='stSidebarNav'] a").all()]


def test_cold_deep_link_keeps_the_apps_navigation(seeded_server, page):  # type: ignore[no-untyped-def]
    # Must run first in this module: it needs a server no session has opened yet.
    url, (a, b) = seeded_server
    page.goto(f"{url}/compare?runs={a},{b}")
    page.get_by_role("heading", name="Compare runs").wait_for()
    assert any(label.endswith("Compare") for label in _nav_labels(page))


def test_compare_page_from_a_shared_link(seeded_server, page):  # type: ignore[no-untyped-def]
    url, (a, b) = seeded_server
    page.goto(f"{url}/compare?runs={a},{b}")
    page.get_by_role("heading", name="Compare runs").wait_for()
    page.get_by_role("heading", name="Metrics").wait_for()
    overlap = page.locator(".js-plotly-plot").filter(has_text="Overlap of the communities behind each answer")
    overlap.first.wait_for()
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 4")  # the charts draw one by one
    assert page.locator(".js-plotly-plot").count() >= 4
    page.get_by_text("Runs to compare").first.wait_for()
    assert any(label.endswith("Compare") for label in _nav_labels(page))
    provenance = page.locator("a[href*='provenance?']")
    provenance.first.wait_for()
    assert f"run={a}" in (provenance.first.get_attribute("href") or "")
    assert f"runs={a}" in page.url  # the URL still names the runs, so it can be shared
    _no_exception(page)
    wait_for_plots_settled(page)
    shot(page, "compare")


def test_index_browser_page(seeded_server, page):  # type: ignore[no-untyped-def]
    url, _ = seeded_server
    page.goto(f"{url}/index_browser?index=jargon")
    page.get_by_role("heading", name="Index browser").wait_for()
    page.locator(".js-plotly-plot").filter(has_text="communities in 3 levels").first.wait_for()
    page.locator(".js-plotly-plot").filter(has_text="Entity graph of").first.wait_for()
    _no_exception(page)
    wait_for_plots_settled(page)
    shot(page, "index_browser")


def test_sweeps_page_runs_a_grid(seeded_server, page):  # type: ignore[no-untyped-def]
    url, _ = seeded_server
    page.goto(f"{url}/sweeps")
    page.get_by_role("heading", name="Sweeps").wait_for()
    page.get_by_text("6 points").first.wait_for()  # leaf and level 0, seeds 0-2
    page.get_by_role("button", name="Run sweep").click()
    page.locator(".js-plotly-plot").filter(has_text="Stability of the communities behind the answer across seeds").first.wait_for()
    page.get_by_text("Status of each point").first.wait_for()
    _no_exception(page)
    wait_for_plots_settled(page)
    shot(page, "sweeps")
