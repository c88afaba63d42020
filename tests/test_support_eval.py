"""Evaluate's supported share (issue 41): each condition's answers support-checked as they are
made (offline by default, the judge model on request), in the result, the Markdown report and
its CSV; kept answers checked again when another judge asks."""

from __future__ import annotations

import asyncio
import csv
import io
import json

from graphrag_core import ScriptedChatModel
from graphrag_core.evaluation import Condition, EvalQuestion, EvaluationStore, ExperimentSpec, estimate_experiment, run_experiment
from graphrag_core.evaluation.report import support_csv, to_markdown
from graphrag_core.llm.base import ChatRequest

from . import factories

TRUE = "The mill employs most people [Communities: a]."
FALSE = "Dragons guard the mill at night [Communities: a]."


def _spec() -> ExperimentSpec:
    return ExperimentSpec(
        questions=[EvalQuestion(id="q1", question="What shapes the town?"), EvalQuestion(id="q2", question="Who works where?")],
        conditions=[Condition(name="honest", overrides={"map_token_budget": 8000}), Condition(name="liar", overrides={"map_token_budget": 7000})],
        seeds=[1],
        criteria=("directness",),
    )


def _answering(request: ChatRequest) -> str:
    """The judge's reply: the first answer wins."""
    return json.dumps({"winner": 1, "reason": "first"})


def _answers_by_budget() -> ScriptedChatModel:
    """The answering model: one point (true) for the first condition's two answers, two (true,
    made up) for the second's (the answers are made condition by condition, in order)."""
    seen: dict[str, int] = {}

    def reply(request: ChatRequest) -> str:
        if request.purpose == "map":
            return json.dumps({"answer": "The mill matters.", "usefulness": 60})
        if request.purpose == "reduce":
            seen["reduces"] = seen.get("reduces", 0) + 1
            return json.dumps({"answer": f"- {TRUE}" if seen["reduces"] <= 2 else f"- {TRUE}\n- {FALSE}"})
        return json.dumps({"winner": 1, "reason": "first"})

    return ScriptedChatModel(reply)


def test_each_conditions_supported_share_is_in_the_result_the_report_and_the_csv(tmp_path) -> None:
    index = factories.make_index(with_claim=True)
    result = asyncio.run(run_experiment(index, _spec(), _answers_by_budget(), ScriptedChatModel(_answering)))
    assert result.support_judge == "offline"
    shares = {s.condition: s for s in result.supported_shares}
    assert (shares["honest"].points, shares["honest"].supported, shares["honest"].share) == (2, 2, 1.0)
    assert (shares["liar"].points, shares["liar"].supported, shares["liar"].unsupported, shares["liar"].share) == (4, 2, 2, 0.5)
    assert all(a.support is not None and a.support.judge == "offline" for a in result.answers)
    report = to_markdown(result)
    assert "## Supported share" in report and "| liar | 2 | 4 | 2 | 0 | 2 | 50.0% |" in report
    rows = list(csv.DictReader(io.StringIO(support_csv(result))))
    assert [(r["condition"], r["supported_share"]) for r in rows] == [("honest", "1.0"), ("liar", "0.5")]


def test_without_a_support_judge_nothing_is_checked_or_reported() -> None:
    index = factories.make_index(with_claim=True)
    result = asyncio.run(run_experiment(index, _spec(), _answers_by_budget(), ScriptedChatModel(_answering), support_judge=None))
    assert result.supported_shares == [] and all(a.support is None for a in result.answers)
    assert "## Supported share" not in to_markdown(result)


def test_kept_answers_are_checked_again_by_the_model_judge_through_the_judge_model(tmp_path) -> None:
    index = factories.make_index(with_claim=True)
    store = EvaluationStore(tmp_path / "eval.sqlite3")
    answering = _answers_by_budget()
    asyncio.run(run_experiment(index, _spec(), answering, ScriptedChatModel(_answering), store=store))
    calls = answering.calls

    def judging(request: ChatRequest) -> str:
        if request.purpose != "support":
            return _answering(request)
        from graphrag_core.context import parse_support_prompt

        _, points = parse_support_prompt(request.messages[-1].content)
        return json.dumps({"points": [
            {"point": n, "verdict": "supported", "evidence": [{"kind": "summary", "id": "a", "quote": "The mill employs most people."}], "reason": ""}
            for n, _, _ in points
        ]})

    judge = ScriptedChatModel(judging)
    again = asyncio.run(run_experiment(index, _spec(), answering, judge, store=store, support_judge="model"))
    assert answering.calls == calls  # the answers were kept
    assert judge.calls_for("support") and all(a.support is not None and a.support.judge == "model" for a in again.answers)
    assert {s.condition: s.share for s in again.supported_shares} == {"honest": 1.0, "liar": 1.0}  # the scripted judge says so
    assert estimate_experiment(index, _spec(), support_judge="model").support_calls >= 4
    assert estimate_experiment(index, _spec()).support_calls == 0 and "support_calls" not in estimate_experiment(index, _spec()).model_dump()
