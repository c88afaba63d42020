"""People judge in a real browser: two judges vote on the same experiment from two browser
contexts at once, and every vote is in the store afterwards, with the order each was shown; the
blind screen names no condition. Screenshots: ``test-artifacts/judging.png`` (1280x800, as a
colleague handed the link sees it), ``test-artifacts/judging-results.png`` and
``test-artifacts/judging-drilldown-points.png`` (the drill-down's answers point by point).

Skipped when /usr/bin/chromium is missing.
"""

from __future__ import annotations

import contextlib
import difflib
import re
from pathlib import Path

import pytest

from .browser_support import chromium_page, cut_texts, require_browser, shot, wait_for_plots_settled, wait_for_script_run
from .test_page_judging import seed_experiment

pytestmark = pytest.mark.browser

require_browser()

CONDITIONS = ("C0", "C1")
JUDGES = ("Ada", "Grace")
CHOICES = {"Ada": [1, 2, 0, 1, 1, 2], "Grace": [2, 2, 1, 0, 1, 1]}
"""What each judge clicks, pair after pair (1 and 2: the answer shown there, 0: a tie)."""


@pytest.fixture(scope="module")
def server_seed(server_history: Path):  # type: ignore[no-untyped-def]
    """An offline experiment on the zh-tea sample (three questions, C0 against C1), where the app looks."""
    return seed_experiment(server_history, questions=3, conditions=CONDITIONS)


@pytest.fixture
def page_height() -> int:
    return 2600


def _shown_first(page, result, task) -> str:  # type: ignore[no-untyped-def]
    """Which condition's answer the page shows as Answer 1 (the closer of the two texts)."""
    shown = page.locator(".st-key-judge_answer_1").inner_text()
    a, b = result.answer(task.row, task.question_id, task.seed_a), result.answer(task.col, task.question_id, task.seed_b)

    def closeness(answer: str) -> float:
        return difflib.SequenceMatcher(None, re.sub(r"\W+", "", shown), re.sub(r"\W+", "", answer)).ratio()

    return task.row if closeness(a.answer) >= closeness(b.answer) else task.col


def test_two_judges_vote_at_once_and_every_vote_is_kept_in_the_order_shown(server: str, server_seed, server_history: Path, browser) -> None:  # type: ignore[no-untyped-def]
    from graphrag_core.evaluation.votes import VoteStore, vote_tasks

    result = server_seed
    tasks = vote_tasks(result)
    assert len(tasks) == 6
    link = f"{server}/evaluate?experiment={result.id}&judge=1"
    seen: dict[str, list[str]] = {judge: [] for judge in JUDGES}
    with contextlib.ExitStack() as pages_open:
        pages = {}
        for judge in JUDGES:  # two browser contexts: two people, no shared cookies or session
            page = pages_open.enter_context(chromium_page(height=800, browser=browser))
            page.set_viewport_size({"width": 1280, "height": 800})
            page.goto(link)
            page.get_by_role("textbox", name="Your name").wait_for()
            if judge == JUDGES[0]:
                shot(page, "judging-name")  # what a colleague handed the link sees first
            page.get_by_role("textbox", name="Your name").fill(judge)
            page.get_by_role("button", name="Start judging").click()
            page.get_by_text(f"0 of {len(tasks)} judged").wait_for()
            wait_for_script_run(page)
            pages[judge] = page
        for judge, page in pages.items():
            body = page.locator("body").inner_text()
            assert "Criterion: comprehensiveness" in body and "Answer 1" in body and "Answer 2" in body
            assert not [name for name in CONDITIONS if re.search(rf"\b{name}\b", body)], "the blind screen names a condition"
        shot(pages["Ada"], "judging")
        assert not cut_texts(pages["Ada"]), cut_texts(pages["Ada"])  # "Answer 1" and "Answer 2" whole on their buttons
        skip = pages["Ada"].get_by_role("button", name="Skip").bounding_box()
        assert skip is not None and skip["y"] + skip["height"] <= pages["Ada"].viewport_size["height"]  # the vote on the first screen
        for step in range(len(tasks)):  # the two vote in turn, each before the other has seen the result of theirs
            for judge, page in pages.items():
                seen[judge].append(_shown_first(page, result, tasks[step]))
                choice = CHOICES[judge][step]
                if judge == "Grace" and step % 2:
                    page.keyboard.press(str(choice))  # the keys work as the buttons do
                else:
                    page.get_by_role("button", name={1: "Answer 1", 2: "Answer 2", 0: "Tie"}[choice]).click()
            for judge, page in pages.items():
                page.get_by_text(f"{step + 1} of {len(tasks)} judged").wait_for()
                wait_for_script_run(page)  # the run that counted the vote has drawn the next pair too
        for page in pages.values():
            page.get_by_text("Thank you").wait_for()
    votes = VoteStore(server_history.parent / "evaluations.sqlite3").votes(result.id)
    assert len(votes) == 2 * len(tasks)
    for judge in JUDGES:
        mine = [v for v in votes if v.judge == judge]
        assert [v.key for v in mine] == [t.key for t in tasks]
        assert [v.choice for v in mine] == CHOICES[judge]
        assert [v.shown_first for v in mine] == seen[judge], "the order stored is the order the judge saw"


def test_the_results_put_people_beside_the_llm_judge(server: str, server_seed, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{server}/evaluate?experiment={server_seed.id}")
    page.get_by_text(f"Experiment {server_seed.id}").wait_for()
    page.get_by_text("Judge these answers yourself").wait_for()
    page.get_by_text("Agreement with people").wait_for()
    page.get_by_text("row beats column, by people").first.wait_for()
    wait_for_plots_settled(page)
    shot(page, "judging-results")


def test_the_drilldown_sets_the_two_answers_point_by_point(server: str, server_seed, page) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 1500, "height": 3800})  # the whole drill-down in the screenshot
    page.goto(f"{server}/evaluate?experiment={server_seed.id}")
    panel = page.get_by_text("Point by point: what one answer has that the other lacks")
    panel.wait_for()
    page.get_by_text("both make").first.wait_for()
    rows = page.locator(".st-key-eval_dd_points_rows")
    rows.get_by_text("only here").first.wait_for()  # a point only one answer makes, marked
    rows.locator("a[href*='provenance?']").first.wait_for()  # each point's citations link to their communities
    page.get_by_role("button", name="Markdown report").wait_for()
    wait_for_plots_settled(page)
    shot(page, "judging-drilldown-points")
