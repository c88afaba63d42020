"""The Evaluate page under AppTest: offline experiment end to end, estimate, errors, shared URL."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from graphrag_app.evaluate.charts import p_value_rows, win_rate_heatmap
from graphrag_app.navigation import PAGE_SPECS
from graphrag_core.citations import community_sets
from graphrag_core.evaluation import EvaluationStore
from graphrag_core.history import RunStore

from .apptest_support import page as app_page

TIMEOUT = 120


@pytest.fixture
def db(run_db: Path) -> Path:
    return run_db


def page() -> AppTest:
    return app_page("evaluate", timeout=TIMEOUT)


def setup_small(at: AppTest) -> AppTest:
    at.selectbox(key="eval_index").set_value("zh-tea").run()
    at.text_input(key="eval_seeds").input("1")
    at.multiselect(key="eval_criteria").set_value(["comprehensiveness", "directness"])
    return at.run()


def test_the_page_is_in_the_navigation():
    assert any(spec.path == "pages/evaluate.py" and spec.url_path == "evaluate" for spec in PAGE_SPECS)


def test_an_offline_experiment_end_to_end(db: Path):
    at = setup_small(page().run())
    assert not at.exception
    estimate = [c.value for c in at.caption if "model calls" in c.value]
    assert estimate and "40 to judge (10 judgments)" in estimate[0]  # 10 questions x 1 pair x 2 orders x 2 criteria
    at.button(key="eval_start").click().run()
    assert not at.exception, at.exception
    charts = [chart.key for chart in at.get("plotly_chart")]
    assert len(charts) == 5  # two heatmaps, the choice on both criteria, one cost chart
    assert {"eval_choice_comprehensiveness", "eval_choice_directness"} <= set(charts)
    assert any("heuristic" in i.value for i in at.info)
    assert len(at.get("download_button")) >= 4
    assert at.query_params["experiment"]
    # answers' runs were saved for Compare and Provenance
    assert len(RunStore(db)) == 20
    # shared by URL: a fresh session with ?experiment= shows the same result
    shared = page()
    shared.query_params["experiment"] = at.query_params["experiment"][0] if isinstance(at.query_params["experiment"], list) else at.query_params["experiment"]
    shared.run()
    assert not shared.exception
    assert any(s.value.startswith("Experiment ") for s in shared.subheader)
    assert shared.text_area(key="eval_conditions").value == "C0: community_level=0\nleaf: community_level=leaf"
    assert shared.selectbox(key="eval_index").value == "zh-tea"


def test_drill_down_shows_both_answers_and_the_judge_calls(db: Path):
    at = setup_small(page().run())
    at.button(key="eval_start").click().run()
    at.selectbox(key="eval_dd_row").set_value("leaf")
    at.selectbox(key="eval_dd_col").set_value("C0")
    at.selectbox(key="eval_dd_criterion").set_value("directness").run()
    assert not at.exception
    calls = [f.value for f in at.dataframe if "shown first" in f.value.columns]
    assert calls and len(calls[0]) == 2 and set(calls[0]["shown first"]) == {"C0", "leaf"}
    assert all(r.startswith("heuristic") for r in calls[0]["reason"])
    # each answer links the community to check first: one it cites, else one behind it
    links = [m.value for m in at.markdown if "Provenance of community" in m.value]
    assert len(links) == 2
    for link in links:
        community, which = re.search(r"Provenance of community (\S+) \((cited|behind the answer)\)", link).groups()
        run_id = parse_qs(urlsplit(re.search(r"\]\(([^)]*provenance[^)]*)\)", link).group(1)).query)["run"][0]
        sets = community_sets(RunStore(db).get(run_id).result)
        assert sets.first_followable() == (community, "cited" if which == "cited" else "behind")


def test_bad_conditions_and_seeds_are_shown_and_block_the_start(db: Path):
    at = page().run()
    at.text_area(key="eval_conditions").input("C0: level=zero\nleaf: level=leaf").run()
    assert any("Condition C0" in w.value for w in at.warning)
    assert at.button(key="eval_start").disabled
    at.text_area(key="eval_conditions").input("C0: level=0").run()
    at.text_input(key="eval_seeds").input("1").run()
    assert any("two conditions" in w.value for w in at.warning)
    at.multiselect(key="eval_criteria").set_value([]).run()
    assert at.button(key="eval_start").disabled


def test_generated_questions_carry_persona_and_task(db: Path):
    at = page().run()
    at.selectbox(key="eval_index").set_value("zh-tea").run()
    at.radio(key="eval_source").set_value("generate").run()
    at.button(key="eval_generate").click().run()
    assert not at.exception
    table = [f.value for f in at.dataframe if "tags" in f.value.columns]
    assert table and all("persona=" in t and "task=" in t for t in table[0]["tags"])


def test_an_unknown_shared_experiment_is_reported(db: Path):
    EvaluationStore(db.parent / "evaluations.sqlite3")
    at = page()
    at.query_params["experiment"] = "nope"
    at.run()
    assert not at.exception
    assert any("No finished experiment nope" in w.value for w in at.warning)


def test_heatmap_rows_beat_columns():
    import asyncio

    from graphrag_core.evaluation import Condition, ExperimentSpec, run_experiment
    from graphrag_core.evaluation.questions import EvalQuestion
    from graphrag_core.llm.scripted import ScriptedChatModel

    from .factories import small_index
    from .test_evaluation_experiment import _answers_by_level, _longer_wins

    spec = ExperimentSpec(questions=[EvalQuestion(id="1", question="q?"), EvalQuestion(id="2", question="r?")], conditions=[Condition.parse("C0:level=0"), Condition.parse("C2:level=2")], seeds=[1], criteria=["diversity"])
    result = asyncio.run(run_experiment(small_index(), spec, ScriptedChatModel(_answers_by_level), ScriptedChatModel(_longer_wins)))
    figure = win_rate_heatmap(result, "diversity")
    z = figure.data[0].z
    assert list(figure.data[0].y) == ["C0", "C2"] and z[1][0] == 100.0 and z[0][1] == 0.0
    assert "row beats column" in figure.layout.title.text
    rows = p_value_rows(result)
    assert len(rows) == 1 and rows[0]["row"] == "C0"


def test_the_background_job_stops_between_items_and_keeps_what_it_made(tmp_path: Path):
    import json
    import threading

    from graphrag_app.jobs import start_evaluation
    from graphrag_core.evaluation import Condition, ExperimentSpec
    from graphrag_core.evaluation.questions import EvalQuestion
    from graphrag_core.llm.scripted import ScriptedChatModel

    from .factories import small_index

    started, release = threading.Event(), threading.Event()

    def script(request):
        if request.purpose == "map":
            started.set()
            release.wait(30)  # holds the first answer until the test has asked to stop
            return json.dumps({"answer": "point", "usefulness": 50})
        return json.dumps({"answer": "an answer"})

    spec = ExperimentSpec(questions=[EvalQuestion(id=str(i), question=f"q{i}?") for i in range(5)], conditions=[Condition.parse("a:level=0"), Condition.parse("b:level=1")], seeds=[1])
    job = start_evaluation(small_index(), spec, lambda: ScriptedChatModel(script), lambda: ScriptedChatModel('{"winner": 0}'), eval_store_path=tmp_path / "e.sqlite3", run_store_path=None)
    assert started.wait(30)
    job.request_stop()
    release.set()
    assert job.wait(60)
    assert job.error is None and job.result is not None and job.result.stopped
    assert len(job.result.answers) == 1 and not job.result.judgments
    assert EvaluationStore(tmp_path / "e.sqlite3").counts()["answers"] == 1


def _significant_result(*, heuristic: bool, seeds: list[int]):  # type: ignore[no-untyped-def]
    """An experiment whose C2 beats C0 with a Holm p below 0.05, judged by a heuristic or not."""
    from graphrag_core.evaluation import Condition, ExperimentSpec
    from graphrag_core.evaluation.questions import EvalQuestion
    from graphrag_core.evaluation.results import ExperimentResult, WinRate

    spec = ExperimentSpec(
        questions=[EvalQuestion(id=str(i), question=f"q{i}?") for i in range(8)],
        conditions=[Condition.parse("C0:level=0"), Condition.parse("C2:level=2")],
        seeds=seeds,
        criteria=["diversity"],
    )
    rates = [
        WinRate(criterion="diversity", row="C2", col="C0", win_rate=100.0, judgments=16, questions=8, p_value=0.0078, p_holm=0.0078),
        WinRate(criterion="diversity", row="C0", col="C2", win_rate=0.0, judgments=16, questions=8, p_value=0.0078, p_holm=0.0078),
    ]
    return ExperimentResult.model_construct(
        id="e1", spec=spec, index_name="zh-tea", model="offline", judge="offline:bm25/v4", heuristic_judge=heuristic, win_rates=rates
    )


def test_a_heuristic_judge_stars_nothing_and_labels_its_p_values():
    for heuristic, star in ((False, True), (True, False)):
        result = _significant_result(heuristic=heuristic, seeds=[1, 2])
        cells = [cell for row in win_rate_heatmap(result, "diversity").data[0].text for cell in row]
        assert any("*" in cell for cell in cells) is star
        (row,) = p_value_rows(result)
        if heuristic:
            assert "significant" not in row and row["p (Holm, heuristic)"] == 0.0078
        else:
            assert row["significant"] is True and row["p (Holm)"] == 0.0078
    from graphrag_core.evaluation.report import significance_legend

    assert "No cell is marked significant: the judge is a heuristic" in significance_legend(_significant_result(heuristic=True, seeds=[1]))


def test_with_one_seed_the_a_a_diagonal_says_why_it_is_empty_and_how_to_fill_it():
    from graphrag_app.evaluate.charts import AA_CELL

    one = win_rate_heatmap(_significant_result(heuristic=False, seeds=[1]), "diversity").data[0]
    assert one.text[0][0] == AA_CELL == one.text[1][1] and "seeds 1, 2" in one.hovertext[0][0]
    two = win_rate_heatmap(_significant_result(heuristic=False, seeds=[1, 2]), "diversity").data[0]
    assert two.text[0][0] == ""  # two seeds and still not judged: nothing to explain by seeds


def test_the_intro_names_the_judge_and_the_result_explains_stars_and_the_diagonal(db: Path):
    at = setup_small(page().run())
    intro = at.caption[0].value
    assert "offline **heuristic** judge" in intro and "an LLM judge compares" not in intro
    at.button(key="eval_start").click().run()
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "No cell is marked significant: the judge is a heuristic" in captions
    assert "this experiment has one seed; run it with two or more seeds" in captions
