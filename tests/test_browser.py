"""The app in a real browser: ``streamlit run app.py`` driven by Playwright in Debian's chromium.

Screenshots go to ``test-artifacts/`` (gitignored). Skipped when /usr/bin/chromium is missing.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from .browser_support import ask, chart_title, chromium_page, require_browser, shot, url_param, wait_for_new_url_param, wait_for_url_param

pytestmark = pytest.mark.browser

QUESTION = "What do hackers think of Microsoft?"

sync_api = require_browser()


def open_explore(page, url: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(url)
    sync_api.expect(page.get_by_role("button", name="Run global search")).to_be_enabled()
    sync_api.expect(page.get_by_text("Est. map prompt tokens")).to_be_visible()


def test_run_a_question_watch_it_and_follow_a_cited_community(server: str, page) -> None:  # type: ignore[no-untyped-def]
    open_explore(page, server + "/?latency=0.05&concurrency=4")
    ask(page, QUESTION)
    sync_api.expect(chart_title(page, r"^Map batches: \d+ of \d+ finished")).to_be_visible()
    sync_api.expect(page.get_by_text("Status: completed", exact=True).locator("visible=true").first).to_be_visible()
    sync_api.expect(chart_title(page, r"^Reduce candidates: \d+ of \d+ selected")).to_be_visible()
    sync_api.expect(page.get_by_role("heading", name="Answer").locator("visible=true").first).to_be_visible()
    assert "run=" in page.url and "seed=" in page.url
    shot(page, "explore-completed")

    sync_api.expect(page.locator(".st-key-answer-evidence")).to_be_visible()
    page.locator(".st-key-answer-box a[href*='provenance?']").first.click()  # a citation: its evidence beside the answer
    dialog = page.get_by_role("dialog")
    sync_api.expect(dialog.get_by_text("In this run")).to_be_visible()
    dialog.get_by_role("link", name="Open the full Provenance page").click()  # the full page, in the same tab
    page.wait_for_url(re.compile(r"/provenance\?.*community="))
    assert len(page.context.pages) == 1
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
    sync_api.expect(chart_title(page, r"^Map batches: [1-9][\d,]* of [\d,]+ finished")).to_be_visible()  # stopped mid-run, with work done
    stop.click()
    sync_api.expect(page.get_by_text(re.compile(r"^Status: stopped"))).to_be_visible()
    sync_api.expect(page.get_by_role("button", name="Run global search")).to_be_enabled()
    shot(page, "explore-stopped")

    open_explore(page, server)  # a new session: the stopped run is in the history
    recent = page.locator("details").filter(has=page.get_by_text("Recent runs")).first
    if recent.get_attribute("open") is None:  # it opens by itself while no run is shown
        page.get_by_text("Recent runs").click()
    sync_api.expect(page.get_by_text("status: stopped").first).to_be_visible()  # one word for a stopped run
    shot(page, "recent-runs")


def test_a_new_run_clears_the_previous_runs_panels_and_brings_the_answer_into_view(server: str, browser) -> None:  # type: ignore[no-untyped-def]
    with chromium_page(height=800, browser=browser) as page:  # a presenter's 1280x800 screen
        page.set_viewport_size({"width": 1280, "height": 800})
        open_explore(page, server + "/?latency=0.05&concurrency=4")
        page.get_by_role("button", name="Run global search").click()  # the sample question is already there
        answer = page.get_by_role("heading", name="Answer").locator("visible=true").first
        sync_api.expect(answer).to_be_visible()
        sync_api.expect(answer).to_be_in_viewport()  # scrolled into view when it arrived
        sync_api.expect(page.get_by_role("heading", name="Diagnostics").first).to_be_attached()
        shot(page, "explore-answer-in-view")

        latency = page.get_by_role("spinbutton", name="Simulated latency (s)")
        latency.fill("1.5")
        latency.press("Enter")
        wait_for_url_param(page, "latency", "1.5")
        seed = url_param(page.url, "seed")
        page.get_by_role("button", name="New seed").click()  # other batches: no map cache hits, so it runs slowly
        wait_for_new_url_param(page, "seed", seed)
        page.get_by_role("button", name="Run global search").click()
        sync_api.expect(page.get_by_text(re.compile(r"^Status: running")).first).to_be_visible()
        sync_api.expect(chart_title(page, r"^Map batches: [1-9][\d,]* of [\d,]+ finished")).to_be_visible()  # the new run has redrawn as it streams
        shot(page, "explore-second-run")
        assert page.get_by_role("heading", name="Diagnostics").count() == 0, "the previous run's diagnostics linger"
        page.get_by_role("button", name="Stop").click()
        sync_api.expect(page.get_by_text(re.compile(r"^Status: stopped"))).to_be_visible()


BOTH_RUNS_WATCH = """(() => {
    window.__graphragBothRuns = {bars: 0, beside: 0};
    const look = () => {
        if (!document.body.innerText.includes('Status: running')) return;
        const bar = [...document.querySelectorAll('.js-plotly-plot .gtitle')].some(t => /^Map batches: [1-9][\\d,]* of/.test(t.textContent));
        if (!bar) return;
        window.__graphragBothRuns.bars += 1;
        if ([...document.querySelectorAll('h1, h2, h3')].some(h => h.textContent.trim().startsWith('Diagnostics'))) window.__graphragBothRuns.beside += 1;
    };
    new MutationObserver(look).observe(document.body, {subtree: true, childList: true, characterData: true});
})();"""
"""Counts, on every change of the page while a run streams and its usefulness chart has a bar,
how often the previous run's Diagnostics were on the page too."""


def test_a_new_run_s_first_bar_is_never_drawn_beside_the_previous_run_s_panels(server: str, browser) -> None:  # type: ignore[no-untyped-def]
    """The first bar may come while the page is still being drawn after the click (the old run's
    panels go only when that drawing ends): it must not be drawn in it."""
    with chromium_page(height=800, browser=browser) as page:
        open_explore(page, server + "/?latency=0.05&concurrency=4")
        page.get_by_role("button", name="Run global search").click()
        sync_api.expect(page.get_by_role("heading", name="Diagnostics").first).to_be_attached()
        for latency in ("0.5", "0.3"):  # a first reply within the whole page's drawing after the click
            field = page.get_by_role("spinbutton", name="Simulated latency (s)")
            field.fill(latency)
            field.press("Enter")
            wait_for_url_param(page, "latency", latency)
            seed = url_param(page.url, "seed")
            page.get_by_role("button", name="New seed").click()  # no map cache hits: the run streams
            wait_for_new_url_param(page, "seed", seed)
            page.evaluate(BOTH_RUNS_WATCH)
            page.get_by_role("button", name="Run global search").click()
            sync_api.expect(page.get_by_text(re.compile(r"^Status: running")).first).to_be_visible()
            sync_api.expect(page.get_by_text(re.compile(r"^Status: completed")).first).to_be_visible()  # the run ended, drawn whole
            seen = page.evaluate("() => window.__graphragBothRuns")
            assert seen["bars"] > 0, seen
            assert seen["beside"] == 0, f"the first bar was drawn beside the previous run's diagnostics (latency {latency}): {seen}"


def test_the_chinese_sample_answers_in_chinese_and_reads(server: str, page) -> None:  # type: ignore[no-untyped-def]
    open_explore(page, server + "/?index=zh-tea&concurrency=4")
    page.get_by_role("button", name="Run global search").click()  # the sample's own question
    sync_api.expect(page.get_by_role("heading", name="Answer").locator("visible=true").first).to_be_visible()
    sync_api.expect(page.get_by_text(re.compile(r"^关于“")).first).to_be_visible()  # no English frame
    sync_api.expect(chart_title(page, r"^Reduce candidates: ")).to_be_visible()  # charts drawn before the shot
    shot(page, "explore-zh-tea")  # readable with a CJK font (scripts/test.sh installs fonts-noto-cjk)


PROGRESS_WATCH = """(() => {
    window.__graphragFinished = [];
    const look = () => {
        const found = document.body.innerText.match(/(\\d+) of (\\d+) map batches finished/);
        if (found && !window.__graphragFinished.includes(found[1])) window.__graphragFinished.push(found[1]);
    };
    new MutationObserver(look).observe(document.body, {subtree: true, childList: true, characterData: true});
})();"""
"""Records every count of finished map batches the page shows while a run streams."""


def test_the_tang_sample_streams_its_batches_and_answers_in_chinese(server: str, page) -> None:  # type: ignore[no-untyped-def]
    """zh-tang (issue 43): the picker offers it, a default run at leaf streams 10 batches through
    the live view, and the answer's own words are Chinese, in the corpus's traditional script."""
    open_explore(page, server + "/?index=zh-tang&latency=0.6&concurrency=4&seed=5")
    sync_api.expect(page.locator("textarea").first).to_have_value("李白與杜甫等唐代詩人之間有哪些交往？")  # the sample's own question
    page.evaluate(PROGRESS_WATCH)
    page.get_by_role("button", name="Run global search").click()
    sync_api.expect(page.get_by_text(re.compile(r"^Status: running")).first).to_be_visible()
    sync_api.expect(page.get_by_text(re.compile(r"^Status: completed")).first).to_be_visible()
    sync_api.expect(page.get_by_text(re.compile(r"^關於“")).first).to_be_visible()  # the overview: no English frame
    finished = [int(n) for n in page.evaluate("() => window.__graphragFinished")]
    assert max(finished) >= 5 and any(0 < n < max(finished) for n in finished), finished  # batches came in while it ran
    sync_api.expect(chart_title(page, r"^Reduce candidates: ")).to_be_visible()
    shot(page, "explore-zh-tang")
