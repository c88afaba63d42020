"""Evidence in a real browser: a citation leads to its provenance in one click, a map bar opens
its batch's verbatim prompt, and a run bundle downloaded in one browser session opens in another.

Screenshots go to ``test-artifacts/``. Skipped when /usr/bin/chromium is missing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from graphrag_app.explore.inspector import ANSWER_ANCHOR, CALL_ANCHOR

from .browser_support import UI_TIMEOUT_MS, ask, require_browser, shot, wait_for_plots_settled, wait_for_script_run

pytestmark = pytest.mark.browser

QUESTION = "What do hackers think of Microsoft?"

sync_api = require_browser()
expect = sync_api.expect


@pytest.fixture
def page_height() -> int:
    return 2200


def run_question(page, url: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(url + "/?latency=0.02&concurrency=4")
    expect(page.get_by_role("button", name="Run global search")).to_be_enabled()
    ask(page, QUESTION)
    expect(page.get_by_text("Status: completed", exact=True).locator("visible=true").first).to_be_visible()
    expect(page.get_by_role("heading", name="Answer").locator("visible=true").first).to_be_visible()
    expect(page.get_by_role("button", name="Download run bundle")).to_be_visible()


def test_a_citation_leads_to_its_provenance_in_one_click_and_back(server: str, page) -> None:  # type: ignore[no-untyped-def]
    run_question(page, server)
    run_id = parse_qs(urlsplit(page.url).query)["run"][0]
    citation = page.locator("[data-testid='stMarkdownContainer'] a[href*='provenance?']").first
    expect(citation).to_be_visible()
    title = citation.get_attribute("title") or ""
    assert title.startswith("Community "), "the community's title on hover"
    shot(page, "evidence-answer")
    expect(page.locator(".st-key-answer-evidence")).to_be_visible()
    citation.click()  # its evidence beside the answer (issue 20: no new tab), then the full page in this tab
    page.get_by_role("dialog").get_by_role("link", name="Open the full Provenance page").click()
    provenance = page
    provenance.wait_for_url(re.compile(r"/provenance\?.*community="))
    assert len(page.context.pages) == 1
    query = parse_qs(urlsplit(provenance.url).query)
    assert query["run"] == [run_id]
    community = query["community"][0]
    expect(provenance.get_by_role("heading", name=re.compile(rf"^Community {re.escape(community)}:"))).to_be_visible()
    expect(provenance.get_by_text("In this run")).to_be_visible()
    expect(provenance.get_by_role("button", name="Back to Explore")).to_be_visible()
    wait_for_script_run(provenance)
    wait_for_plots_settled(provenance)
    shot(provenance, "evidence-provenance")

    # the picker changes the view and the URL, every time; Back returns to the previous view
    picker = provenance.get_by_label("Community", exact=True)
    for choice in ("0 ", "1 "):
        picker.click()
        provenance.get_by_role("option", name=re.compile("^" + re.escape(choice))).first.click()
        provenance.wait_for_url(re.compile(rf"community={choice.strip()}(&|$)"))
        expect(provenance.get_by_role("heading", name=re.compile(rf"^Community {choice.strip()}:"))).to_be_visible()
    provenance.go_back()
    provenance.wait_for_url(re.compile(r"community=0(&|$)"))
    expect(provenance.get_by_role("heading", name=re.compile(r"^Community 0:"))).to_be_visible()

    # Back to Explore shows the run again
    provenance.get_by_role("button", name="Back to Explore").click()
    provenance.wait_for_url(re.compile(rf"run={run_id}"))
    expect(provenance.get_by_text("Status: completed", exact=True).locator("visible=true").first).to_be_visible()


def scroll_over(page, anchor: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until the app's last scroll to ``anchor`` is over: the script marks the page's root
    element ``data-<anchor>-scroll="done"`` (and its own span, which a redraw of the page may
    drop while the script goes on)."""
    expect(page.locator("html")).to_have_attribute(f"data-{anchor}-scroll", "done")


def settled(page) -> None:  # type: ignore[no-untyped-def]
    """Wait until the finished run's page is drawn with its widgets ("Open a call" comes after
    the clickable map chart) and its answer scroll is over: from then on nothing moves the page
    but the reader."""
    expect(page.get_by_role("heading", name="Open a call")).to_be_visible()
    scroll_over(page, ANSWER_ANCHOR)


def click_first_bar(page) -> None:  # type: ignore[no-untyped-def]
    settled(page)
    bar = page.locator(".js-plotly-plot .barlayer .point path").first
    bar.scroll_into_view_if_needed()
    expect(bar).to_be_in_viewport()
    box = bar.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] - 2)  # bars sit under Plotly's drag layer


def test_the_answer_scroll_gives_way_to_a_reader_who_scrolls(server: str, page) -> None:  # type: ignore[no-untyped-def]
    """The answer is brought into view when it arrives, but a reader who moves the page (a
    scrollbar drag, a link, assistive technology: no wheel or key) keeps where they went."""
    page.set_viewport_size({"width": 1280, "height": 800})  # a presenter's screen: the answer lies below the charts
    run_question(page, server)
    chart = page.locator(".js-plotly-plot").first
    expect(chart).not_to_be_in_viewport()  # the answer (below the charts) was brought into view
    chart.scroll_into_view_if_needed()
    scroll_over(page, ANSWER_ANCHOR)
    expect(chart).to_be_in_viewport()


def test_a_map_bar_opens_its_batch_to_the_verbatim_prompt(server: str, page) -> None:  # type: ignore[no-untyped-def]
    run_question(page, server)
    click_first_bar(page)
    expect(page.get_by_text("Messages sent (verbatim)")).to_be_visible()
    expect(page.locator("[data-testid='stCode']").filter(has_text="---Question---").first).to_be_visible()
    expect(page.locator("[data-testid='stCode']").filter(has_text=QUESTION).first).to_be_visible()
    expect(page.get_by_text(re.compile(r"^What the reduce did:")).first).to_be_visible()
    page.get_by_text("Messages sent (verbatim)").first.scroll_into_view_if_needed()
    shot(page, "evidence-batch")


ROW_PX = 35
"""The height of a header and of a row in ``st.dataframe`` (glide data grid's default)."""


def test_a_batch_table_row_and_the_reduce_chart_open_their_calls_in_view(server: str, page) -> None:  # type: ignore[no-untyped-def]
    run_question(page, server)
    settled(page)
    page.get_by_text(re.compile(r"^Batches \(\d+\)$")).click()  # the batch table, in the diagnostics
    table = page.locator("[data-testid='stExpanderDetails'] [data-testid='stDataFrame']").first
    table.scroll_into_view_if_needed()
    row = 3  # the fourth row: batch 3
    expect(table.locator(f"tr[aria-rowindex='{row + 2}']")).to_be_attached()  # the grid has drawn it (the header is row 1)
    box = table.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + ROW_PX / 2, box["y"] + ROW_PX + row * ROW_PX + ROW_PX / 2)  # its row selector
    heading = page.get_by_role("heading", name=re.compile(rf"^Batch {row} · "))
    expect(heading).to_be_in_viewport()  # it opens above the table and is brought into view
    expect(page.locator("[data-testid='stCode']").filter(has_text=QUESTION).first).to_be_visible()
    expect(page.get_by_text(re.compile(r"^What the reduce did:")).first).to_be_visible()
    shot(page, "evidence-batch-from-table")

    scroll_over(page, CALL_ANCHOR)
    candidate = page.locator(".js-plotly-plot").filter(has_text="Reduce candidates").locator(".barlayer .point path").first
    candidate.scroll_into_view_if_needed()
    expect(candidate).to_be_in_viewport()
    box = candidate.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] - 2)
    expect(page.get_by_role("heading", name=re.compile(r"^The reduce call · "))).to_be_in_viewport()
    expect(page.locator("[data-testid='stCode']").filter(has_text="[Usefulness: ").first).to_be_visible()
    shot(page, "evidence-reduce")


def test_a_bundle_downloaded_in_one_session_opens_in_another(server: str, page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run_question(page, server)
    run_id = parse_qs(urlsplit(page.url).query)["run"][0]
    answer = page.locator("[data-testid='stMarkdownContainer']").filter(has=page.locator("a[href*='provenance?']")).first.inner_text()
    with page.expect_download() as downloaded:
        page.get_by_role("button", name="Download run bundle").click()
    path = tmp_path / "run.bundle.json"
    downloaded.value.save_as(path)
    bundle = json.loads(path.read_text(encoding="utf-8"))
    assert bundle["run_id"] == run_id and bundle["index"]["fingerprint"].startswith("sha256:")

    context = page.context.browser.new_context(viewport={"width": 1500, "height": 2200})  # another session, no shared state
    try:
        other = context.new_page()
        other.set_default_timeout(UI_TIMEOUT_MS)
        other.goto(server + "/compare")
        expect(other.get_by_text("Open run bundle").first).to_be_visible()
        other.locator("input[type='file']").last.set_input_files(str(path))
        expect(other.get_by_text(re.compile(r"Opened run " + run_id[:8])).first).to_be_visible()
        other.goto(server)
        other.get_by_text("Open run bundle").first.click()
        other.locator("input[type='file']").last.set_input_files(str(path))
        expect(other.get_by_text(re.compile(r"Opened run " + run_id[:8])).first).to_be_visible()
        expect(other.get_by_text("Status: completed", exact=True).locator("visible=true").first).to_be_visible()
        shown = other.locator("[data-testid='stMarkdownContainer']").filter(has=other.locator("a[href*='provenance?']")).first
        expect(shown).to_have_text(answer)
        shot(other, "evidence-bundle-opened")
    finally:
        context.close()
