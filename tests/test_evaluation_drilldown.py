"""The Evaluate page's drill-down as data: one pair, seen from the row's side, scores flipped
when the row was judged as B."""

from __future__ import annotations

import asyncio
import json

import pytest

from graphrag_core.errors import EvaluationError
from graphrag_core.evaluation.conditions import Condition
from graphrag_core.evaluation.drilldown import drilldown, drilldown_choices
from graphrag_core.evaluation.experiment import run_experiment
from graphrag_core.evaluation.questions import EvalQuestion
from graphrag_core.evaluation.spec import ExperimentSpec
from graphrag_core.llm.base import ChatRequest
from graphrag_core.llm.scripted import ScriptedChatModel

from .factories import small_index
from .test_evaluation_experiment import _answers_by_level, _longer_wins


def experiment(*, seeds=(1, 2), answerer=_answers_by_level, judge=_longer_wins):  # type: ignore[no-untyped-def]
    spec = ExperimentSpec(
        questions=[EvalQuestion(id="q1", question="What about topic 1?"), EvalQuestion(id="q2", question="What about topic 2?")],
        conditions=[Condition.parse("C0:level=0"), Condition.parse("C2:level=2")],
        seeds=list(seeds),
        criteria=["diversity", "directness"],
    )
    return asyncio.run(run_experiment(small_index(), spec, ScriptedChatModel(answerer), ScriptedChatModel(judge)))


def test_a_row_judged_as_b_sees_its_own_score_and_the_conditions_named():
    result = experiment()  # C0 was A against C2; C2 (more batches, longer answers) always won
    assert drilldown_choices(result, "C2", "C0") == [
        "q1 · seeds 1/1 · What about topic 1?",
        "q1 · seeds 2/2 · What about topic 1?",
        "q2 · seeds 1/1 · What about topic 2?",
        "q2 · seeds 2/2 · What about topic 2?",
    ]
    view = drilldown(result, "C2", "C0", choice=1, criterion="diversity")
    assert view is not None and (view.question_id, view.question) == ("q1", "What about topic 1?")
    assert (view.row.condition, view.row.seed, view.row.score) == ("C2", 2, 100.0)
    assert (view.col.condition, view.col.seed, view.col.score) == ("C0", 2, 0.0)
    assert view.row.answer == result.answer("C2", "q1", 2) and view.col.answer == result.answer("C0", "q1", 2)
    assert view.judged and view.skipped is None
    assert view.call_rows() == [
        {"repeat": 1, "shown first": "C0", "winner": "C2", "reason": "longer", "attempts": 1},
        {"repeat": 1, "shown first": "C2", "winner": "C2", "reason": "longer", "attempts": 1},
    ]
    assert view.compare_run_ids == (view.row.answer.run_id, view.col.answer.run_id)


def test_the_same_pair_from_the_other_side_is_not_flipped():
    result = experiment()
    view = drilldown(result, "C0", "C2", choice=1, criterion="directness")
    assert view is not None
    assert (view.row.condition, view.row.score, view.col.condition, view.col.score) == ("C0", 0.0, "C2", 100.0)
    assert [c.winner for c in view.calls] == ["C2", "C2"]


def test_aa_compares_a_condition_across_seeds():
    result = experiment()
    assert drilldown_choices(result, "C0", "C0") == ["q1 · seeds 1/2 · What about topic 1?", "q2 · seeds 1/2 · What about topic 2?"]
    view = drilldown(result, "C0", "C0", choice=0, criterion="diversity")
    assert view is not None and (view.row.seed, view.col.seed) == (1, 2)
    assert view.row.score == view.col.score == 50.0 and {c.winner for c in view.calls} == {"tie"}


def test_nothing_judged_between_two_is_none():
    result = experiment(seeds=[1])  # one seed: no A/A
    assert drilldown_choices(result, "C0", "C0") == []
    assert drilldown(result, "C0", "C0", criterion="diversity") is None
    with pytest.raises(EvaluationError, match=r"^No judgment 4 between C0 and C2: there are 2\.$"):
        drilldown(result, "C0", "C2", choice=4, criterion="diversity")


def test_a_skipped_pair_shows_the_failed_answer_and_no_scores():
    def level0_fails(request: ChatRequest) -> str:
        if request.purpose == "map" and "Everything about hackers" in request.prompt_text:
            return "not json"
        return _answers_by_level(request)

    view = drilldown(experiment(seeds=[1], answerer=level0_fails), "C2", "C0", criterion="diversity")
    assert view is not None and not view.judged and view.calls == []
    assert view.skipped == "answer failed: C0 seed 1"
    assert view.row.score is None and view.col.score is None
    assert view.col.answer is not None and view.col.answer.status == "failed"


def test_failed_judge_calls_are_named_failed_and_score_none():
    view = drilldown(experiment(seeds=[1], judge=lambda request: "no verdict"), "C0", "C2", criterion="diversity")
    assert view is not None and view.judged
    assert view.row.score is None and view.col.score is None
    assert [(c.winner, c.attempts) for c in view.calls] == [("failed", 2), ("failed", 2)]
    assert all(c.reason.startswith("LLM output is not valid JSON") for c in view.calls)
    assert json.loads(view.model_dump_json())["criterion"] == "diversity"
