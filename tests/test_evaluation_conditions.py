"""Conditions and the experiment spec: parsing, aliases, validation (evaluation spec section 3)."""

from __future__ import annotations

import pytest

from graphrag_core.errors import EvaluationError
from graphrag_core.evaluation.conditions import Condition, parse_conditions
from graphrag_core.evaluation.questions import EvalQuestion
from graphrag_core.evaluation.spec import ExperimentSpec, JudgmentJob


def test_conditions_parse_aliases_and_validate_through_the_request():
    condition = Condition.parse("C0:level=0,map_budget=3000,strategy=stop,claims=false")
    assert condition.name == "C0"
    assert condition.overrides == {"community_level": 0, "map_token_budget": 3000, "reduce_strategy": "stop", "include_claims": False}
    assert Condition.parse("leafy:level=leaf").overrides == {"community_level": "leaf"}
    with pytest.raises(EvaluationError, match=r"Condition bad: community_level must be \"leaf\" or a non-negative integer\."):
        Condition.parse("bad:level=-1")
    with pytest.raises(EvaluationError, match="Condition x: unknown request field colour"):
        Condition.parse("x:colour=red")
    with pytest.raises(EvaluationError, match="Condition x: expected key=value"):
        Condition.parse("x:level")


def test_spec_validation():
    questions = [EvalQuestion(id="1", question="q")]
    with pytest.raises(EvaluationError, match="unique"):
        ExperimentSpec(questions=questions, conditions=[Condition(name="a"), Condition(name="a")])
    with pytest.raises(EvaluationError, match="two conditions"):
        ExperimentSpec(questions=questions, conditions=[Condition(name="a")], seeds=[1])
    with pytest.raises(EvaluationError, match=r"^Unknown evaluation criterion: x\.$"):
        ExperimentSpec(questions=questions, conditions=[Condition(name="a"), Condition(name="b")], criteria=["x"])
    with pytest.raises(EvaluationError, match=r"^repeats must be a positive integer\.$"):
        ExperimentSpec(questions=questions, conditions=[Condition(name="a"), Condition(name="b")], repeats=0)


def test_the_conditions_box_reads_one_condition_per_line_with_comments_and_blanks():
    conditions = parse_conditions("C0: level=0\n\n# a comment\nsmall: map_budget = 2000, strategy=stop  # cheap\n")
    assert [(c.name, c.overrides) for c in conditions] == [
        ("C0", {"community_level": 0}),
        ("small", {"map_token_budget": 2000, "reduce_strategy": "stop"}),
    ]
    with pytest.raises(EvaluationError, match="Condition x: unknown request field colour"):
        parse_conditions("x: colour=red")


def _two(**fields) -> ExperimentSpec:
    return ExperimentSpec(questions=[EvalQuestion(id="1", question="q")], conditions=[Condition(name="a"), Condition(name="b")], **fields)


def test_seeds_may_be_typed_text_read_as_every_front_end_reads_a_list():
    assert _two(seeds="1, 2 3").seeds == [1, 2, 3]
    assert _two(seeds=[4, 5]).seeds == [4, 5]
    with pytest.raises(EvaluationError, match=r"^Seeds: 'x' is not a whole number\.$"):
        _two(seeds="1, x")
    with pytest.raises(EvaluationError, match=r"^seeds must be a non-empty list of integers\.$"):
        _two(seeds=" , ")
    with pytest.raises(EvaluationError, match=r"^seeds must not repeat\.$"):
        _two(seeds="1 1")


def test_judgment_jobs_are_the_pairs_per_seed_then_the_aa_pairs_question_by_question():
    spec = ExperimentSpec(
        questions=[EvalQuestion(id="q1", question="q"), EvalQuestion(id="q2", question="r")],
        conditions=[Condition(name="a"), Condition(name="b"), Condition(name="c")],
        seeds=[1, 2],
    )
    jobs = spec.judgment_jobs()
    assert jobs[:8] == [
        JudgmentJob("a", "b", "q1", 1, 1), JudgmentJob("a", "c", "q1", 1, 1), JudgmentJob("b", "c", "q1", 1, 1),
        JudgmentJob("a", "b", "q1", 2, 2), JudgmentJob("a", "c", "q1", 2, 2), JudgmentJob("b", "c", "q1", 2, 2),
        JudgmentJob("a", "a", "q1", 1, 2), JudgmentJob("b", "b", "q1", 1, 2),
    ]
    assert len(jobs) == 2 * (3 * 2 + 3 * 1)
    assert spec.answer_count() == 3 * 2 * 2
    assert len(spec.model_copy(update={"include_aa": False}).judgment_jobs()) == 2 * 3 * 2
