"""The Evaluate page's blind judging screen and people's votes on the results, under AppTest."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from graphrag_core.evaluation import Condition, EvaluationStore, ExperimentSpec, load_questions, run_experiment
from graphrag_core.evaluation.store import evaluation_store_path
from graphrag_core.evaluation.votes import VoteStore, order_shown, vote_tasks
from graphrag_core.index import load_index
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.samples import SAMPLES

from . import APP_ROOT
from .apptest_support import page as app_page

TIMEOUT = 120
CONDITIONS = ("Czero", "Cone")


def seed_experiment(run_db: Path, *, questions: int = 2, conditions: tuple[str, str] = CONDITIONS):  # type: ignore[no-untyped-def]
    """An offline experiment on zh-tea (``questions`` questions, ``conditions`` at levels 0 and 1), in the app's store."""
    spec = ExperimentSpec(
        questions=load_questions(APP_ROOT / "sample_data" / "zh-tea-questions.jsonl")[:questions],
        conditions=[Condition.parse(f"{conditions[0]}:level=0"), Condition.parse(f"{conditions[1]}:level=1")],
        seeds=[1],
        criteria=["comprehensiveness", "directness"],
    )
    store = EvaluationStore(evaluation_store_path(run_db))
    result = asyncio.run(run_experiment(load_index(SAMPLES["zh-tea"]), spec, OfflineChatModel(), OfflineChatModel(), store=store, index_path=str(SAMPLES["zh-tea"])))
    store.close()
    return result


@pytest.fixture
def experiment(run_db: Path):  # type: ignore[no-untyped-def]
    return seed_experiment(run_db)


def judging(experiment_id: str, **params: str) -> AppTest:
    at = app_page("evaluate", timeout=TIMEOUT)
    at.query_params.update({"experiment": experiment_id, "judge": "1", **params})
    return at


def page_text(at: AppTest) -> str:
    parts = [e.value for kind in ("markdown", "caption", "title", "subheader", "info", "success", "error") for e in at.get(kind)]
    parts += [b.label for b in at.button] + [p.proto.text for p in at.get("progress")]
    return "\n".join(str(p) for p in parts)


def test_a_judge_votes_blind_and_resumes_where_they_stopped(run_db: Path, experiment) -> None:  # type: ignore[no-untyped-def]
    at = judging(experiment.id).run()
    assert not at.exception, at.exception
    assert "Judge answers" in page_text(at) and "4 comparisons" in page_text(at)
    at.text_input(key="judge_name_input").input("Ada")
    at.button[0].click().run()  # the form's "Start judging"
    assert not at.exception, at.exception
    assert at.query_params["judge_name"] in ("Ada", ["Ada"])
    text = page_text(at)
    assert "0 of 4" in text and "Criterion: comprehensiveness" in text and "Answer 1" in text and "Answer 2" in text
    assert not any(name in text for name in CONDITIONS)  # blind: no condition named
    tasks = vote_tasks(experiment)
    at.button(key="judge_choice_1").click().run()
    at.button(key="judge_skip").click().run()
    at.button(key="judge_choice_0").click().run()
    votes = VoteStore(evaluation_store_path(run_db)).votes(experiment.id, judge="Ada")
    assert [(v.key, v.choice, v.order_shown) for v in votes] == [
        (tasks[0].key, 1, order_shown("Ada", experiment.id, tasks[0])),
        (tasks[2].key, 0, order_shown("Ada", experiment.id, tasks[2])),
    ]
    # a new browser session with the same name goes on at the last pair
    again = judging(experiment.id, judge_name="Ada").run()
    assert "2 of 4" in page_text(again) and "1 skipped" in page_text(again)
    again.button(key="judge_choice_2").click().run()
    assert "Thank you" in page_text(again)
    again.button(key="judge_again").click().run()
    assert "Criterion: directness" in page_text(again)  # the skipped one, second criterion of the first pair
    assert not any(name in page_text(again) for name in CONDITIONS)


def test_a_bad_link_and_a_bad_name_say_what_is_wrong(run_db: Path, experiment) -> None:  # type: ignore[no-untyped-def]
    at = judging("0123456789abcdef").run()
    assert any("No finished experiment 0123456789abcdef" in e.value for e in at.error)
    at = judging(experiment.id).run()
    at.text_input(key="judge_name_input").input("   ")
    at.button[0].click().run()
    assert any("must not be empty" in i.value for i in at.info) and at.text_input(key="judge_name_input") is not None


def test_results_put_people_beside_the_llm_judge(run_db: Path, experiment) -> None:  # type: ignore[no-untyped-def]
    at = app_page("evaluate", timeout=TIMEOUT)
    at.query_params["experiment"] = experiment.id
    at.run()
    assert not at.exception, at.exception
    assert any("Nobody has judged these pairs yet" in m.value for m in at.markdown)
    store = VoteStore(evaluation_store_path(run_db))
    for judge in ("Ada", "Grace"):
        session = judging(experiment.id, judge_name=judge).run()
        for _ in range(4):
            session.button(key="judge_choice_1").click().run()
    assert len(store.votes(experiment.id)) == 8
    at = app_page("evaluate", timeout=TIMEOUT)
    at.query_params["experiment"] = experiment.id
    at.run()
    assert not at.exception, at.exception
    assert len([c for c in at.get("plotly_chart")]) == 2 * 2 + 2 + 1 + 1  # LLM and people per criterion, the choice per criterion, cost, agreement
    assert any("Agreement with people" in s.value for s in at.subheader)
    assert any(b.proto.label == "Votes CSV" for b in at.get("download_button"))
