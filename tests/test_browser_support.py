"""Explore's support check in a real browser at 1280x800 (issue 41): with ``?support=1`` a run
ends with the summary line and a badge (icon and word) on each point, and the evidence dialog
highlights the supporting quote in the community's text.

Screenshots go to ``test-artifacts/``. Skipped when /usr/bin/chromium is missing.
"""

from __future__ import annotations

import re

import pytest

from .browser_support import ask, require_browser, shot, wait_for_script_run

pytestmark = pytest.mark.browser

QUESTION = "What is a hacker?"

sync_api = require_browser()
expect = sync_api.expect


def test_a_run_with_support_1_shows_the_summary_line_the_badges_and_the_highlighted_quote(server: str, page) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 1280, "height": 800})  # a presenter's screen
    page.goto(server + "/?support=1&latency=0.02&concurrency=4")
    expect(page.get_by_role("button", name="Run global search")).to_be_enabled()
    expect(page.get_by_role("switch", name="Check support")).to_be_checked()
    ask(page, QUESTION)
    summary = page.get_by_text(re.compile(r"^Support check: \d+ of \d+ points? supported$")).first
    expect(summary).to_be_visible()
    assert "support=1" in page.url, "the URL keeps the switch"
    box = page.locator(".st-key-answer-support")
    point = box.locator("p").filter(has=page.get_by_role("img", name="check_circle icon")).first
    expect(point).to_be_visible()
    expect(point).to_contain_text(re.compile(r"^check_circle\s*supported "))  # the badge: its icon and its word
    wait_for_script_run(page)
    summary.scroll_into_view_if_needed()
    expect(summary).to_be_in_viewport()
    point.get_by_role("button", name="Help").hover()
    expect(page.get_by_text(re.compile(r"^Supported\. Its cited texts hold \d+% of its words")).first).to_be_visible()  # the reason on hover
    shot(page, "support-answer")

    page.locator(".st-key-answer-evidence button").first.click()  # the first cited community's evidence
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_text("of the points citing it")).to_be_visible()
    highlight = dialog.locator("[data-testid='stMarkdownContainer'] span strong").first
    expect(highlight).to_be_visible()
    wait_for_script_run(page)
    shot(page, "support-dialog")
