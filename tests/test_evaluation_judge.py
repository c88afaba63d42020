"""judge_pair and its parsing (evaluation spec sections 1-2), with scripted judges."""

from __future__ import annotations

import asyncio

import pytest

from graphrag_core.errors import EvaluationError, JudgeOutputError, ModelOutputError
from graphrag_core.evaluation import CRITERIA, judge_pair, parse_judge_output, validate_criteria
from graphrag_core.llm.base import ChatRequest
from graphrag_core.llm.scripted import ScriptedChatModel
from graphrag_core.prompts import JUDGE_OUTPUT_SCHEMA


def shown(request: ChatRequest) -> tuple[str, str]:
    """The two answers of a judge prompt, in the order shown."""
    user = request.messages[-1].content
    _, _, rest = user.partition("\n[Answer 1]\n")
    first, _, second = rest.partition("\n[Answer 2]\n")
    return first, second


def run(coro):
    return asyncio.run(coro)


def test_the_four_criteria_in_the_papers_order():
    assert list(CRITERIA) == ["comprehensiveness", "diversity", "empowerment", "directness"]


def test_unknown_criterion_is_refused_by_name():
    with pytest.raises(EvaluationError, match=r"^Unknown evaluation criterion: depth\.$"):
        validate_criteria(["diversity", "depth"])
    with pytest.raises(EvaluationError, match=r"^Unknown evaluation criterion: depth\.$"):
        run(judge_pair("q", "a", "b", ScriptedChatModel('{"winner": 1}'), criteria=["depth"]))


@pytest.mark.parametrize("repeats", [0, -1, 1.5, True, "2", None])
def test_repeats_must_be_a_positive_integer(repeats):
    with pytest.raises(ValueError, match=r"^repeats must be a positive integer\.$"):
        run(judge_pair("q", "a", "b", ScriptedChatModel('{"winner": 1}'), repeats=repeats))


def test_a_judge_that_always_prefers_the_first_position_scores_exactly_50():
    model = ScriptedChatModel('{"winner": 1, "reason": "first"}')
    judgment = run(judge_pair("Q?", "short", "a much longer answer", model, repeats=3))
    assert judgment.scores == {c: 50.0 for c in CRITERIA}
    assert judgment.scores_b == {c: 50.0 for c in CRITERIA}
    assert len(judgment.calls) == model.calls == 4 * 3 * 2
    assert [c.order for c in judgment.calls[:2]] == ["AB", "BA"]


def test_a_judge_that_always_prefers_the_second_position_scores_exactly_50():
    judgment = run(judge_pair("Q?", "x", "y", ScriptedChatModel('{"winner": 2}'), criteria=["diversity"]))
    assert judgment.scores == {"diversity": 50.0}


def test_a_judge_that_prefers_the_longer_answer_gives_it_100():
    def longer(request: ChatRequest) -> dict:
        first, second = shown(request)
        return {"winner": 1 if len(first) > len(second) else 2, "reason": "longer"}

    judgment = run(judge_pair("Q?", "a long and detailed answer", "short", ScriptedChatModel(longer)))
    assert judgment.scores == {c: 100.0 for c in CRITERIA}
    assert judgment.scores_b == {c: 0.0 for c in CRITERIA}
    flipped = run(judge_pair("Q?", "short", "a long and detailed answer", ScriptedChatModel(longer)))
    assert flipped.scores == {c: 0.0 for c in CRITERIA}


def test_the_prompt_holds_the_criterion_and_both_answers_on_lines_of_their_own():
    model = ScriptedChatModel('{"winner": 0}')
    run(judge_pair("Which themes?", "ANSWER-A", "ANSWER-B", model, criteria=["directness"]))
    ab, ba = model.requests
    for request in (ab, ba):
        assert request.purpose == "judge" and request.json_mode
        lines = request.prompt_text.splitlines()
        assert "[Criterion: directness]" in lines
        assert "Which themes?" in request.prompt_text
    lines = ab.prompt_text.splitlines()
    assert lines[lines.index("[Answer 1]") + 1] == "ANSWER-A"
    assert lines[lines.index("[Answer 2]") + 1] == "ANSWER-B"
    lines = ba.prompt_text.splitlines()
    assert lines[lines.index("[Answer 1]") + 1] == "ANSWER-B"
    assert lines[lines.index("[Answer 2]") + 1] == "ANSWER-A"


def test_a_tie_scores_50_and_scores_follow_100_50_0():
    # A wins when shown first, tie when shown second: (100 + 50) / 2
    replies = ['{"winner": 1}', '{"winner": 0}']
    judgment = run(judge_pair("q", "a", "b", ScriptedChatModel(replies), criteria=["diversity"]))
    assert judgment.scores == {"diversity": 75.0}
    assert judgment.scores_b == {"diversity": 25.0}


@pytest.mark.parametrize("text,winner", [('{"winner": 1.0}', 1), ('{"winner": 2}', 2), ('{"winner": 0, "reason": " even "}', 0), ('```json\n{"winner": 2}\n```', 2)])
def test_winner_parsing(text, winner):
    verdict = parse_judge_output(text)
    assert verdict.winner == winner


@pytest.mark.parametrize(
    "text",
    ['{"winner": true}', '{"winner": 3}', '{"winner": 1.5}', '{"winner": "1"}', '{"reason": "x"}', "[1]", '{"winner": null}', '{"winner": 1, "reason": 5}', pytest.param('{"winner": 1' + "0" * 400 + "}", id="integer-too-large-for-a-float")],
)
def test_other_json_shapes_are_refused_with_the_spec_message(text):
    with pytest.raises(JudgeOutputError, match=r"^Judge output must contain a winner of 1, 2 or 0\.$") as caught:
        parse_judge_output(text)
    assert caught.value.reply_start.startswith("The reply began: ")  # what the judge said, for the record


def test_text_that_is_not_json_gets_the_global_search_message():
    with pytest.raises(ModelOutputError, match=r"^LLM output is not valid JSON: "):
        parse_judge_output("I prefer the first one")
    with pytest.raises(JudgeOutputError) as caught:  # the judge's own error type, like a rating's
        parse_judge_output("I prefer the first one")
    assert str(caught.value) == "LLM output is not valid JSON: I prefer the first one..."


def test_each_call_gets_two_attempts_then_is_recorded_and_left_out():
    # A shown first: fails twice (not JSON, then a bad winner); B shown first: "2", so A wins
    replies = {"a": iter(["not json", '{"winner": 7}']), "b": iter(['{"winner": 2}'])}
    model = ScriptedChatModel(lambda request: next(replies[shown(request)[0]]))
    judgment = run(judge_pair("q", "a", "b", model, criteria=["diversity"]))
    assert model.calls == 3
    failed = [c for c in judgment.calls if not c.ok]
    assert len(failed) == 1 and failed[0].attempts == 2 and failed[0].order == "AB"
    assert failed[0].error == "Judge output must contain a winner of 1, 2 or 0."
    assert failed[0].raw == '{"winner": 7}'
    assert judgment.scores == {"diversity": 100.0}


def test_a_retry_that_succeeds_counts():
    replies = {"a": iter(["nope", '{"winner": 1}']), "b": iter(['{"winner": 1}'])}
    judgment = run(judge_pair("q", "a", "b", ScriptedChatModel(lambda r: next(replies[shown(r)[0]])), criteria=["diversity"]))
    assert judgment.calls[0].attempts == 2 and judgment.calls[0].ok
    assert judgment.scores == {"diversity": 50.0}


def test_a_criterion_whose_calls_all_failed_scores_none():
    def script(request: ChatRequest) -> str:
        return "garbage" if "[Criterion: diversity]" in request.prompt_text else '{"winner": 1}'

    judgment = run(judge_pair("q", "a", "b", ScriptedChatModel(script), criteria=["diversity", "directness"]))
    assert judgment.scores == {"diversity": None, "directness": 50.0}
    assert judgment.scores_b["diversity"] is None


def test_every_call_is_recorded_with_reply_reason_and_usage():
    judgment = run(judge_pair("q", "a", "b", ScriptedChatModel('{"winner": 1, "reason": "clearer"}'), criteria=["empowerment"]))
    call = judgment.calls[0]
    assert call.raw == '{"winner": 1, "reason": "clearer"}'
    assert call.winner == 1 and call.reason == "clearer" and call.score_a == 100.0
    assert judgment.calls[1].score_a == 0.0
    assert judgment.judge == "scripted"


def test_judge_pair_through_the_openai_compatible_adapter():
    """A real HTTP round trip on 127.0.0.1: the judge's JSON Schema sent, usage recorded, a reply in prose retried."""
    from .openai_server import Reply, completion_body, openai_server
    from .test_openai_model import make_model

    with openai_server() as server:
        server.script(
            Reply(body=completion_body('{"winner": 1, "reason": "covers more"}', prompt_tokens=90, completion_tokens=9)),
            Reply(body=completion_body("Answer 2 is better.")),  # not JSON: the call's second attempt follows
            Reply(body=completion_body('{"winner": 2}')),
        )
        judgment = run(judge_pair("Q?", "A", "B", make_model(server), criteria=["comprehensiveness"], concurrency=1))
    assert len(server.requests) == 3
    judge_format = {
        "type": "json_schema",
        "json_schema": {"name": JUDGE_OUTPUT_SCHEMA.name, "schema": JUDGE_OUTPUT_SCHEMA.schema_, "strict": True},
    }
    assert all(r["json"].get("response_format") == judge_format for r in server.requests)
    first = judgment.calls[0]
    assert first.usage is not None and first.usage.prompt_tokens == 90
    assert judgment.scores == {"comprehensiveness": 100.0}  # A first and won; B first, "2" won
    assert judgment.calls[1].attempts == 2
