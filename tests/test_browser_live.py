"""The live view as an audience sees it, in Debian's chromium: sampled during paced runs on a
busy machine (two CPU-bound processes beside the server) at 1920x1080 and 1280x800, through a
reload and a second tab, stopped and answered from what was read, replayed, presented, and
checked for cut labels at 1280x800.

The figures the samplers see (charts present in N of M samples) are written to
``test-artifacts/live-samples.txt``. The sampled tests are marked ``timing``: scripts/test.sh
runs them alone, after every other test, since beside another test their samples would measure
that test's load as well.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import pytest

from graphrag_app.navigation import SIDEBAR_WIDTH_PX

from .browser_support import (
    ARTIFACTS,
    UI_TIMEOUT_MS,
    busy_processes,
    chart_title,
    chromium_page,
    cut_texts,
    install_live_sampler,
    legend_overlaps,
    live_figures,
    require_browser,
    shot,
    url_param,
    wait_for_new_url_param,
    wait_for_plots_settled,
)

pytestmark = pytest.mark.browser

sync_api = require_browser()

SIZES = [(1920, 1080), (1280, 800)]
HELD_SHARE = 0.9
"""Nearly every sample: the share of samples, once the first batch is drawn, in which both the
usefulness chart and the call timeline must be on the page."""
MIN_SAMPLES = 10
"""Samples a paced run gives at the least (every 100 ms for several seconds)."""


LOADED_TIMEOUT_MS = 240_000
"""How long a page on a machine kept busy on purpose may take to get somewhere (a bound, not a measurement)."""


@contextlib.contextmanager
def slow_expectations() -> Iterator[None]:
    """Within the block, expectations wait up to :data:`LOADED_TIMEOUT_MS`."""
    sync_api.expect.set_options(timeout=LOADED_TIMEOUT_MS)
    try:
        yield
    finally:
        sync_api.expect.set_options(timeout=UI_TIMEOUT_MS)


def open_explore(page, url: str, *, timeout: float | None = None) -> None:  # type: ignore[no-untyped-def]
    page.goto(url, timeout=timeout)
    sync_api.expect(page.get_by_role("button", name="Run global search")).to_be_enabled(timeout=timeout)


def answer(page):  # type: ignore[no-untyped-def]
    """A finished answer on the page (the first: while the page is drawn whole after a run, the
    live view's copy and the page's own may both be there for a moment)."""
    return page.locator(".st-key-answer-box").first


def record_figures(name: str, figures: dict) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "live-samples.txt", "a", encoding="utf-8") as out:
        out.write(
            f"{name}: charts present in {figures['held']} of {figures['samples']} samples (greyed out in {figures['faded']}); "
            f"first bar {figures['first_bar_s']:.2f} s and "
            f"answer {figures['answer_s']:.2f} s after Run; gaps at {figures['gaps']} ms\n"
        )


_FITS = """() => {
    const shown = (el) => { const box = el.getBoundingClientRect(); return box.width > 0 && box.height > 0 ? box : null; };
    const plot = (pattern) => [...document.querySelectorAll('.js-plotly-plot')].find((p) => {
        const title = p.querySelector('.gtitle');
        return title && shown(p) && pattern.test(title.textContent);
    });
    const parts = [document.querySelector('[data-testid="stProgress"]'), plot(/^Map batches: [1-9]/), plot(/^Model calls: /)];
    return parts.every((part) => {
        const box = part && shown(part);
        return box && box.top >= 0 && box.bottom <= window.innerHeight && box.right <= window.innerWidth;
    });
}"""


def wait_until_the_run_fits_on_screen(page) -> None:  # type: ignore[no-untyped-def]
    """Wait until the progress bar, the usefulness chart (with a finished batch) and the call
    timeline are all on the screen at once, with no scrolling (one look at the page)."""
    page.wait_for_function(_FITS, polling=200)


@pytest.mark.timing
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_live_view_holds_under_load(server: str, browser, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    width, height = size
    with busy_processes(2), chromium_page(height=height, browser=browser) as page, slow_expectations():
        page.set_viewport_size({"width": width, "height": height})
        page.set_default_timeout(LOADED_TIMEOUT_MS)
        open_explore(page, server + f"/?latency=0.3&concurrency=4&seed={width}", timeout=LOADED_TIMEOUT_MS)  # a seed of its own: nothing from the map cache
        install_live_sampler(page)
        page.get_by_role("button", name="Run global search").click()
        sync_api.expect(chart_title(page, r"^Map batches: [1-9][\d,]* of")).to_be_visible()
        sync_api.expect(chart_title(page, r"^Model calls: ")).to_be_visible()
        wait_until_the_run_fits_on_screen(page)  # while it streams, the progress and both charts fit on the screen
        assert cut_texts(page) == [] and legend_overlaps(page) == []
        shot(page, f"live-{width}x{height}")
        sync_api.expect(answer(page)).to_be_visible()
        figures = live_figures(page)
        record_figures(f"a paced run at {width}x{height}, two CPU-bound processes beside the server", figures)
        assert figures["samples"] >= MIN_SAMPLES, figures
        assert figures["held"] >= HELD_SHARE * figures["samples"], figures
        assert figures["faded"] == 0, figures  # never greyed out while a tick draws them again
        assert figures["answer_s"] > figures["first_bar_s"] > 0


def test_a_reload_mid_run_follows_the_run_to_its_end_with_stop_offered(server: str, page) -> None:  # type: ignore[no-untyped-def]
    open_explore(page, server + "/?latency=1&concurrency=2&level=2&seed=11")  # 23 batches: about 12 s, time for a reload
    page.get_by_role("button", name="Run global search").click()
    sync_api.expect(chart_title(page, r"^Map batches: [1-9][\d,]* of")).to_be_visible()
    run_id = url_param(page.url, "run")
    assert run_id
    page.reload()
    sync_api.expect(page.get_by_text(re.compile(r"^Status: running"))).to_be_visible()
    sync_api.expect(page.get_by_role("button", name="Stop")).to_be_enabled()  # attached to the run itself
    sync_api.expect(page.get_by_role("button", name="Run global search")).to_be_disabled()
    sync_api.expect(answer(page)).to_be_visible()  # followed to the end, no click
    sync_api.expect(page.get_by_text("Status: completed", exact=True).first).to_be_visible()
    sync_api.expect(page.get_by_role("button", name="Run global search")).to_be_enabled()
    assert url_param(page.url, "run") == run_id


def test_a_second_tab_stops_the_run_and_the_first_answers_from_what_was_read(server: str, page) -> None:  # type: ignore[no-untyped-def]
    open_explore(page, server + "/?latency=1&concurrency=2&seed=12")
    page.get_by_role("button", name="Run global search").click()
    sync_api.expect(chart_title(page, r"^Map batches: [2-9][\d,]* of")).to_be_visible()
    second = page.context.new_page()
    second.goto(page.url)  # the run's link in another tab: a session of its own
    stop = second.get_by_role("button", name="Stop")
    sync_api.expect(stop).to_be_enabled()
    stop.click()
    sync_api.expect(second.get_by_text(re.compile(r"^Status: stopped"))).to_be_visible()
    sync_api.expect(page.get_by_text(re.compile(r"^Status: stopped"))).to_be_visible()  # the first tab follows

    page.get_by_role("button", name="Answer from what was read").click()
    sync_api.expect(answer(page)).to_be_visible()
    partial = page.get_by_text(re.compile(r"^Status: partial · Stopped after reading \d+ of \d+ batches"))
    sync_api.expect(partial).to_have_count(1)  # once the page is drawn whole: the live view's copy of the answer is gone
    sync_api.expect(partial).to_be_visible()
    shot(page, "explore-partial-answer")
    second.goto(server)
    second.get_by_text("Recent runs").click()
    sync_api.expect(second.get_by_text("status: partial").first).to_be_visible()  # in the history, labelled partial


def usefulness_bars(page) -> list:  # type: ignore[no-untyped-def]
    """The usefulness chart's bars as drawn: each trace's name, batches and heights."""
    return page.evaluate(
        """() => {
            const plot = [...document.querySelectorAll('.js-plotly-plot')].find((p) => /^Map batches/.test((p.querySelector('.gtitle') || {}).textContent || ''));
            return plot ? plot._fullData.map((t) => [t.name, Array.from(t.x), Array.from(t.y)]) : null;
        }"""
    )


@pytest.mark.timing
def test_a_replay_draws_the_same_bars_as_the_recorded_run(server: str, page) -> None:  # type: ignore[no-untyped-def]
    open_explore(page, server + "/?latency=0.2&concurrency=4&level=1&seed=13")
    page.get_by_role("button", name="Run global search").click()
    sync_api.expect(answer(page)).to_be_visible()
    wait_for_plots_settled(page)
    recorded = usefulness_bars(page)
    run_id = url_param(page.url, "run")
    assert recorded and run_id

    install_live_sampler(page)
    page.get_by_role("button", name="Replay").click()  # at its recorded pace
    playing = page.get_by_text(re.compile(r"replay of a recorded run at 1×"))
    sync_api.expect(playing).to_be_visible()
    assert url_param(page.url, "replay") == run_id and url_param(page.url, "speed") == "1"
    sync_api.expect(playing).to_have_count(0)  # it played to the end
    sync_api.expect(answer(page)).to_be_visible()
    figures = live_figures(page)
    record_figures("a replay at its recorded pace, 1500x1800", figures)
    assert figures["held"] >= HELD_SHARE * figures["samples"], figures
    wait_for_plots_settled(page)
    assert usefulness_bars(page) == recorded

    open_explore(page, server + f"/?replay={run_id}&speed=8")  # from a link, in a new session
    sync_api.expect(page.get_by_text(re.compile(r"replay of a recorded run at 8×"))).to_have_count(0)
    sync_api.expect(answer(page)).to_be_visible()
    wait_for_plots_settled(page)
    assert usefulness_bars(page) == recorded


def test_presenter_mode_is_a_clean_screen(server: str, browser) -> None:  # type: ignore[no-untyped-def]
    with chromium_page(height=800, browser=browser) as page:
        page.set_viewport_size({"width": 1280, "height": 800})
        open_explore(page, server + "/?presenter=1&latency=0.3&concurrency=4&seed=14")
        sync_api.expect(page.locator("section[data-testid='stSidebar']")).to_be_hidden()
        page.get_by_role("button", name="Run global search").click()
        sync_api.expect(chart_title(page, r"^Map batches: [1-9][\d,]* of")).to_be_visible()
        wait_until_the_run_fits_on_screen(page)
        shot(page, "presenter-live")
        sync_api.expect(answer(page)).to_be_visible()
        assert page.get_by_text("run id:").count() == 0 and page.get_by_role("heading", name="Diagnostics").count() == 0
        assert url_param(page.url, "presenter") == "1"
        page.get_by_text("Presenter mode").click()  # the switch is on the page itself
        sync_api.expect(page.locator("section[data-testid='stSidebar']")).to_be_visible()


def test_a_citation_shows_its_evidence_beside_the_answer_and_provenance_opens_in_the_same_tab(server: str, page) -> None:  # type: ignore[no-untyped-def]
    open_explore(page, server + "/?latency=0&level=1&seed=15")
    page.get_by_role("button", name="Run global search").click()
    sync_api.expect(page.locator(".st-key-answer-evidence")).to_be_visible()  # the page drawn whole, its evidence ready
    citation = page.locator(".st-key-answer-box a[href*='provenance?']").first
    community = re.search(r"community=([^&]+)", citation.get_attribute("href") or "").group(1)  # type: ignore[union-attr]
    citation.click()
    dialog = page.get_by_role("dialog")
    sync_api.expect(dialog.get_by_text(f"Evidence for community {community}")).to_be_visible()
    sync_api.expect(dialog.get_by_text("In this run")).to_be_visible()
    assert len(page.context.pages) == 1  # no new tab
    shot(page, "evidence-dialog")
    dialog.get_by_role("link", name="Open the full Provenance page").click()
    page.wait_for_url(re.compile(rf"/provenance\?.*community={re.escape(community)}"))
    assert len(page.context.pages) == 1
    sync_api.expect(page.get_by_role("heading", name=re.compile(rf"^Community {re.escape(community)}:"))).to_be_visible()
    page.go_back()  # Back returns to the answer
    sync_api.expect(answer(page)).to_be_visible()
    sync_api.expect(page.get_by_role("dialog")).to_have_count(0)


@pytest.mark.parametrize("path", ["", "sweeps", "index_browser", "evaluate", "compare"])
def test_no_label_is_cut_and_no_legend_overlaps_at_1280x800(server: str, browser, path: str) -> None:  # type: ignore[no-untyped-def]
    with chromium_page(height=800, browser=browser) as page:
        page.set_viewport_size({"width": 1280, "height": 800})
        if path == "":
            open_explore(page, server + "/?latency=0&level=1&seed=16")
            page.get_by_role("button", name="Run global search").click()
            sync_api.expect(answer(page)).to_be_visible()
            sync_api.expect(page.get_by_role("button", name="Run global search")).to_be_enabled()  # the page drawn whole after the run
        else:
            page.goto(f"{server}/{path}")
            sync_api.expect(page.locator("[data-testid='stApp'][data-test-script-state='notRunning']")).to_be_attached()
            sync_api.expect(page.get_by_role("heading").first).to_be_visible()
        wait_for_plots_settled(page)
        shot(page, f"at-1280x800-{path or 'explore'}")
        cut = [text for text in cut_texts(page) if not (path == "compare" and re.match(r"^[0-9a-f]{8} · ", text))]
        assert cut == [], f"cut at 1280x800 on /{path}: {cut}"
        assert legend_overlaps(page) == [], f"legends over titles or toolbars on /{path}"


def test_the_call_timelines_title_fits_at_1280x800_when_the_map_came_from_the_cache(server: str, browser) -> None:  # type: ignore[no-untyped-def]
    """A run whose map batches came from the map cache says so in the call timeline's title,
    which read "… · 85 from th" at 1280x800, cut by its chart."""
    with chromium_page(height=800, browser=browser) as page:
        page.set_viewport_size({"width": 1280, "height": 800})
        open_explore(page, server + "/?latency=0&seed=18")
        run = page.get_by_role("button", name="Run global search")
        run.click()
        first = wait_for_new_url_param(page, "run", None)
        sync_api.expect(run).to_be_enabled()  # the page drawn whole after the run
        run.click()  # the same settings again: every map answer is in the cache now
        wait_for_new_url_param(page, "run", first)
        sync_api.expect(run).to_be_enabled()
        title = chart_title(page, r"^Model calls: 1 \(1 reduce\).*from the cache")
        sync_api.expect(title).to_be_visible()
        wait_for_plots_settled(page)
        title.scroll_into_view_if_needed()  # the page keeps its answer in view, under the charts
        shot(page, "timeline-title-cached-1280x800")
        assert cut_texts(page) == []


def test_explore_loads_the_charts_code_before_a_chart_needs_it(server: str, page) -> None:  # type: ignore[no-untyped-def]
    """The browser fetched Plotly's chart code (4.7 MB) at the first chart on the page: a click on
    Run before the cost preview's chart was drawn left it to the live view's first chart, whose
    first bar then waited 1-4.5 s on a busy machine. A dynamic selection's preview draws no chart:
    the code comes with the page's hidden loader chart, which no one sees and which takes no room."""
    open_explore(page, server + "/?selection=dynamic&seed=19")
    page.wait_for_function("() => performance.getEntriesByType('resource').some((e) => /PlotlyChart\\.[^/]*\\.js$/.test(e.name))")
    assert page.locator(".js-plotly-plot >> visible=true").count() == 0  # no chart the reader sees asked for it
    assert page.locator(".st-key-chart-code").bounding_box() is None  # its loader takes no room on the page


def test_the_sidebar_is_wide_enough_for_the_level_picker_even_when_the_page_config_comes_late(server: str, browser) -> None:  # type: ignore[no-untyped-def]
    """The first session of a freshly started server draws the sidebar before the page config
    (and its width) arrives: the sidebar then opens 300 px wide. It must still show the level
    picker's whole choice at 1280x800."""
    with chromium_page(height=800, browser=browser) as page:
        page.set_viewport_size({"width": 1280, "height": 800})
        open_explore(page, server + "/?latency=0&seed=17")
        sidebar = page.locator("section[data-testid='stSidebar']")
        sidebar.evaluate("(element) => { element.style.width = '300px'; }")  # the width a late page config leaves
        # The app's style sheet is drawn with the page; on a busy machine it may reach the browser a
        # moment after the button does (CI measured 300 px once): wait for the width it sets.
        page.wait_for_function(
            "(least) => document.querySelector(\"section[data-testid='stSidebar']\").getBoundingClientRect().width >= least",
            arg=SIDEBAR_WIDTH_PX - 1,
        )
        assert (sidebar.bounding_box() or {}).get("width", 0) >= SIDEBAR_WIDTH_PX - 1
        assert cut_texts(page) == []


def test_a_lazy_run_draws_its_relevance_tests_live_within_the_budget_at_1280x800(server: str, browser) -> None:  # type: ignore[no-untyped-def]
    """Issue 42: while a lazy run tests relevance, the status names "relevance tests: N of B"
    and the chart of tests by community grows; the answer follows, the chart stays with the run."""
    with chromium_page(height=800, browser=browser) as page:
        page.set_viewport_size({"width": 1280, "height": 800})
        open_explore(page, server + "/?method=lazy&relevance_budget=40&latency=0.3&concurrency=2&seed=21")
        page.get_by_role("button", name="Run global search").click()
        sync_api.expect(page.get_by_text(re.compile(r"^relevance tests: [1-9]\d* of 40 · \d+ relevant chunks found$"))).to_be_visible()
        sync_api.expect(chart_title(page, r"^Relevance tests: [1-9]\d* of 40 · ")).to_be_visible()
        shot(page, "lazy-live-1280x800")
        sync_api.expect(answer(page)).to_be_visible()
        sync_api.expect(page.get_by_role("button", name="Run global search")).to_be_enabled()  # the page drawn whole after the run
        title = chart_title(page, r"^Relevance tests: \d+ of 40 · .*(budget spent|nothing left to test)$")
        sync_api.expect(title).to_be_visible()
        used = int(re.match(r"^Relevance tests: (\d+) of 40", title.text_content() or "").group(1))  # type: ignore[union-attr]
        assert 0 < used <= 40
        sync_api.expect(page.get_by_text(re.compile(rf"^{used} of 40 relevance tests · "))).to_be_visible()
        wait_for_plots_settled(page)
        shot(page, "lazy-done-1280x800")
        assert cut_texts(page) == [] and legend_overlaps(page) == []
