"""The paper's experiment in a real browser (issue 23): an experiment of the paper's conditions on
the zh-tea sample opened from its shared URL, with the choice chart per criterion and the cost
table in the paper's form; and a source-text (TS) and a naive RAG (SS) run on Explore, their
cited chunks links to the chunks' views.

Screenshots go to ``test-artifacts/`` (``paper-evaluate.png``, ``paper-choice.png``,
``paper-explore-text.png``, ``paper-explore-vector.png``). Skipped when /usr/bin/chromium is missing.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from .browser_support import ARTIFACTS, ask, chart_title, require_browser, shot, wait_for_plots_settled, wait_for_script_run

pytestmark = pytest.mark.browser

sync_api = require_browser()


@pytest.fixture(scope="module")
def paper_experiment(server_history: Path):  # type: ignore[no-untyped-def]
    """An offline experiment of the paper's conditions on zh-tea, saved where the app looks."""
    from graphrag_core.evaluation import EvaluationStore, ExperimentSpec, load_questions, paper_conditions, run_experiment
    from graphrag_core.history import RunStore
    from graphrag_core.index import load_index
    from graphrag_core.llm.offline import OfflineChatModel
    from graphrag_core.samples import SAMPLES, SAMPLE_DATA

    index = load_index(SAMPLES["zh-tea"])
    spec = ExperimentSpec(questions=load_questions(SAMPLE_DATA / "zh-tea-questions.jsonl"), conditions=paper_conditions(index), seeds=[1])
    result = asyncio.run(
        run_experiment(
            index, spec, OfflineChatModel(), OfflineChatModel(), store=EvaluationStore(server_history.parent / "evaluations.sqlite3"),
            run_store=RunStore(server_history), index_path=str(SAMPLES["zh-tea"]),
        )
    )
    return result


@pytest.fixture(scope="module")
def server_seed(paper_experiment) -> str:  # type: ignore[no-untyped-def]
    return paper_experiment.id


@pytest.fixture
def page_height() -> int:
    return 3400


def test_the_choice_of_a_paper_experiment_is_drawn_per_criterion(server: str, server_seed: str, paper_experiment, page) -> None:  # type: ignore[no-untyped-def]
    from graphrag_core.evaluation.choice import choose

    page.goto(f"{server}/evaluate?experiment={server_seed}")
    page.get_by_text("Which condition to use?").wait_for()
    title = chart_title(page, "Which condition\\? comprehensiveness")
    title.wait_for()
    assert page.get_by_text("cheapest condition whose win rate is not significantly below", exact=False).count() + page.get_by_text(" is best", exact=False).count() > 0
    sync_api.expect(page.get_by_text("In the paper's form (its Table 2)", exact=False)).to_be_visible()
    assert page.get_by_role("button", name="Choice CSV").count() == 1
    wait_for_plots_settled(page)
    shot(page, "paper-evaluate")
    chart = title.locator("xpath=ancestor::div[contains(@class, 'js-plotly-plot')]")
    ARTIFACTS.mkdir(exist_ok=True)
    chart.screenshot(path=str(ARTIFACTS / "paper-choice.png"))
    legend = chart.locator(".legendtext").evaluate_all("texts => texts.map((text) => text.textContent)")
    assert any(text.startswith("recommended: ") for text in legend)
    # The dashed Pareto line is drawn exactly where the front joins two conditions or more.
    choice_tabs = page.locator("div.stTabs").filter(has=page.locator(".st-key-eval_choice_comprehensiveness"))
    for choice in choose(paper_experiment):  # a tab per criterion
        choice_tabs.get_by_role("tab", name=choice.criterion, exact=False).first.click()
        criterion_title = chart_title(page, f"Which condition\\? {choice.criterion}")
        criterion_title.wait_for()
        criterion_chart = criterion_title.locator("xpath=ancestor::div[contains(@class, 'js-plotly-plot')]")
        texts = criterion_chart.locator(".legendtext").evaluate_all("texts => texts.map((text) => text.textContent)")
        assert ("Pareto front" in texts) == (sum(point.pareto for point in choice.points) > 1), (choice.criterion, texts)
    assert any(sum(point.pareto for point in choice.points) > 1 for choice in choose(paper_experiment))  # a line is drawn somewhere


@pytest.mark.parametrize(("method", "label"), [("text", "Source text (TS)"), ("vector", "Naive RAG (SS)")])
def test_a_chunk_method_runs_on_explore_and_links_its_citations_to_the_chunks(server: str, page, method: str, label: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{server}/?index=jargon&method={method}")
    sync_api.expect(page.get_by_role("radio", name=label)).to_be_checked()
    sync_api.expect(page.get_by_text("Source chunks").first).to_be_visible()
    ask(page, "What is a kludge?")
    page.get_by_text("Status: completed").first.wait_for()
    wait_for_script_run(page)
    cited = page.locator("[data-testid='stMarkdownContainer'] a[href*='source=']").first
    cited.wait_for()
    href = cited.get_attribute("href") or ""
    assert "provenance?index=jargon&source=" in href and "&run=" in href
    reference = href.split("source=")[1].split("&")[0]
    sync_api.expect(cited).to_have_attribute("title", re.compile(rf"^Source {re.escape(reference)}: "))
    sync_api.expect(page.get_by_text("Source chunks:", exact=False).first).to_be_visible()
    wait_for_plots_settled(page)
    shot(page, f"paper-explore-{method}")
    with page.context.expect_page() as opened:
        cited.click()
    view = opened.value
    view.wait_for_url(re.compile(rf"/provenance\?.*source={re.escape(reference)}(&|$)"))
    sync_api.expect(view.get_by_role("heading", name=f"Source {reference}")).to_be_visible()
