"""The Evaluate page in a real browser: a finished offline experiment opened from its shared URL
(``/evaluate?experiment=<id>``), with its heatmaps, cost table and drill-down drawn.

The screenshot goes to ``test-artifacts/evaluate.png``. Skipped when /usr/bin/chromium is missing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from . import APP_ROOT
from .browser_support import require_browser, shot, wait_for_plots_settled

pytestmark = pytest.mark.browser

require_browser()


def _seed_experiment(db: Path) -> str:
    """An offline experiment on the zh-tea sample, saved where the app looks (beside the runs)."""
    from graphrag_core.evaluation import Condition, EvaluationStore, ExperimentSpec, load_questions, run_experiment
    from graphrag_core.index import load_index
    from graphrag_core.llm.offline import OfflineChatModel
    from graphrag_core.samples import SAMPLES
    from graphrag_core.history import RunStore

    root = APP_ROOT
    spec = ExperimentSpec(
        questions=load_questions(root / "sample_data" / "zh-tea-questions.jsonl")[:4],
        conditions=[Condition.parse("C0:level=0"), Condition.parse("C1:level=1"), Condition.parse("small:level=0,map_budget=1500")],
        seeds=[1, 2],
    )
    index = load_index(SAMPLES["zh-tea"])
    result = asyncio.run(
        run_experiment(
            index, spec, OfflineChatModel(), OfflineChatModel(), store=EvaluationStore(db.parent / "evaluations.sqlite3"), run_store=RunStore(db), index_path=str(SAMPLES["zh-tea"])
        )
    )
    return result.id


@pytest.fixture(scope="module")
def server_seed(server_history: Path) -> str:
    return _seed_experiment(server_history)


@pytest.fixture
def page_height() -> int:
    return 2600


def test_a_shared_experiment_draws_heatmaps_costs_and_drilldown(server: str, server_seed: str, page) -> None:  # type: ignore[no-untyped-def]
    experiment = server_seed  # saved before the server started
    page.goto(f"{server}/evaluate?experiment={experiment}")
    page.get_by_text(f"Experiment {experiment}").wait_for()
    page.locator(".js-plotly-plot").first.wait_for()
    page.get_by_text("row beats column").first.wait_for()
    assert page.get_by_text("heuristic", exact=False).count() > 0
    page.get_by_text("Compare the two runs").wait_for()
    assert page.locator(".js-plotly-plot").count() == 9  # a heatmap and a choice chart per criterion (one tab each) + the cost chart
    wait_for_plots_settled(page)
    shot(page, "evaluate")
    assert "experiment=" in page.url
    href = page.get_by_text("Provenance of community").first.locator("xpath=ancestor-or-self::a").get_attribute("href")
    assert "index=zh-tea" in href  # links name the experiment's index, not the picker's default
