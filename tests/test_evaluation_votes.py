"""People's votes (evaluation spec section 9): what a judge is shown and in which order, the votes
kept as they are cast, and the agreement figures on hand-made votes whose kappa is known."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from graphrag_core.errors import EvaluationError
from graphrag_core.evaluation.agreement import (
    ALL_CRITERIA,
    cohen_kappa,
    judge_choice,
    people_and_judge,
    people_win_rates,
    people_with_each_other,
    share_identical,
)
from graphrag_core.evaluation.conditions import Condition
from graphrag_core.evaluation.experiment import run_experiment
from graphrag_core.evaluation.questions import EvalQuestion
from graphrag_core.evaluation.spec import ExperimentSpec
from graphrag_core.evaluation.vote_report import VOTE_FIELDS, people_markdown, votes_csv
from graphrag_core.evaluation.votes import Vote, VoteStore, VoteTask, next_task, order_shown, validate_judge_name, vote_tasks
from graphrag_core.llm.base import ChatRequest
from graphrag_core.llm.scripted import ScriptedChatModel

from .factories import small_index
from .test_evaluation_experiment import _answers_by_level
from .test_evaluation_judge import shown


def _longer_is_more_diverse_shorter_more_direct(request: ChatRequest) -> dict:
    """Diversity: the longer answer wins; directness: the shorter one does."""
    first, second = shown(request)
    longer = 1 if len(first) > len(second) else 2
    if "[Criterion: diversity]" in request.messages[-1].content:
        return {"winner": longer}
    return {"winner": 3 - longer}


@pytest.fixture(scope="module")
def result():  # type: ignore[no-untyped-def]
    """C0 against C2 on two questions and two seeds: the judge prefers C2 (B) on diversity and C0 (A) on directness."""
    spec = ExperimentSpec(
        questions=[EvalQuestion(id="q1", question="What about topic 1?"), EvalQuestion(id="q2", question="What about topic 2?")],
        conditions=[Condition.parse("C0:level=0"), Condition.parse("C2:level=2")],
        seeds=[1, 2],
        criteria=["diversity", "directness"],
    )
    return asyncio.run(run_experiment(small_index(), spec, ScriptedChatModel(_answers_by_level), ScriptedChatModel(_longer_is_more_diverse_shorter_more_direct)))


A, B, TIE = 1, 2, 0


def votes_for(result, judge: str, preferred: list[int]) -> list[Vote]:  # type: ignore[no-untyped-def]
    """One vote per task, in task order, choosing ``preferred`` (A/B terms) as shown to ``judge``."""
    votes = []
    for task, wanted in zip(vote_tasks(result), preferred):
        order = order_shown(judge, result.id, task)
        choice = 0 if wanted == TIE else wanted if order == "AB" else 3 - wanted
        votes.append(
            Vote(
                judge=judge, experiment_id=result.id, question_id=task.question_id, condition_a=task.row, condition_b=task.col,
                seed_a=task.seed_a, seed_b=task.seed_b, criterion=task.criterion, order_shown=order, choice=choice,
            )
        )
    return votes


def test_cohen_kappa_of_a_textbook_table():
    pairs = [(1, 1)] * 4 + [(2, 2)] * 3 + [(0, 0)] + [(1, 2), (2, 0)]
    assert share_identical(pairs) == 0.8
    assert cohen_kappa(pairs) == pytest.approx(21 / 31)  # po 0.8, pe 0.38
    assert cohen_kappa([(1, 2), (2, 1)]) == pytest.approx(-1.0)
    assert cohen_kappa([(1, 1), (1, 1)]) is None  # every choice the same: chance agreement is certain
    assert cohen_kappa([]) is None and share_identical([]) is None
    assert [judge_choice(s) for s in (100.0, 75.0, 50.0, 0.0, None)] == [1, 1, 0, 2, None]


def test_people_are_judged_on_distinct_pairs_once_per_criterion(result):  # type: ignore[no-untyped-def]
    tasks = vote_tasks(result)
    assert [(t.question_id, t.seed_a, t.criterion) for t in tasks] == [
        ("q1", 1, "diversity"), ("q1", 1, "directness"), ("q1", 2, "diversity"), ("q1", 2, "directness"),
        ("q2", 1, "diversity"), ("q2", 1, "directness"), ("q2", 2, "diversity"), ("q2", 2, "directness"),
    ]
    assert {(t.row, t.col) for t in tasks} == {("C0", "C2")}  # no A/A: people's time goes to distinct conditions


def test_the_order_shown_is_seeded_per_judge_and_pair():
    tasks = [VoteTask(question_id=f"q{i}", row="C0", col="C2", seed_a=1, seed_b=1, criterion=c) for i in range(40) for c in ("diversity", "directness")]
    ada = [order_shown("Ada", "exp", t) for t in tasks]
    assert ada == [order_shown("Ada", "exp", t) for t in tasks]  # the same on every visit
    assert ada[0::2] == ada[1::2]  # a pair is shown the same way on every criterion
    assert 10 < ada.count("AB") < 70  # random across pairs
    assert ada != [order_shown("Grace", "exp", t) for t in tasks]


def test_agreement_with_the_llm_judge_and_between_people_on_known_votes(result):  # type: ignore[no-untyped-def]
    # tasks alternate diversity, directness; the LLM judge says B, A, B, A, B, A, B, A
    ada = votes_for(result, "Ada", [B, A, B, A, B, B, A, TIE])
    grace = votes_for(result, "Grace", [B, A, A, A, B, B, A, B])
    with_judge = {a.criterion: a for a in people_and_judge(result, ada)}
    # diversity: Ada B B B A against B B B B -> po 3/4, pe 3/4, kappa 0; directness: A A B tie against A A A A -> 0
    assert with_judge["diversity"].identical == 0.75 and with_judge["diversity"].kappa == pytest.approx(0.0)
    assert with_judge["directness"].identical == 0.5 and with_judge["directness"].kappa == pytest.approx(0.0)
    # pooled: po 5/8; Ada A3 B4 T1, judge A4 B4 -> pe 28/64; kappa (5/8 - 7/16) / (9/16) = 1/3
    pooled = with_judge[ALL_CRITERIA]
    assert (pooled.items, pooled.identical, pooled.kappa) == (8, 0.625, pytest.approx(1 / 3))
    assert people_with_each_other(result, ada) == []  # one person: nothing to compare
    between = {a.criterion: a for a in people_with_each_other(result, ada + grace)}
    # Ada B A B A B B A T, Grace B A A A B B A B -> po 6/8; Ada A3 B4 T1, Grace A4 B4 -> pe 28/64; kappa 5/9
    assert (between[ALL_CRITERIA].items, between[ALL_CRITERIA].identical, between[ALL_CRITERIA].kappa) == (8, 0.75, pytest.approx(5 / 9))
    both = {a.criterion: a for a in people_and_judge(result, ada + grace)}
    assert both[ALL_CRITERIA].items == 16


def test_people_win_rates_score_votes_as_judge_calls_are_scored(result):  # type: ignore[no-untyped-def]
    ada = votes_for(result, "Ada", [B, A, B, A, B, B, A, TIE])
    rates = {(w.criterion, w.row, w.col): w for w in people_win_rates(result, ada)}
    assert rates[("diversity", "C2", "C0")].win_rate == 75.0  # B, B, B, A
    assert rates[("diversity", "C0", "C2")].win_rate == 25.0
    assert rates[("directness", "C0", "C2")].win_rate == pytest.approx(62.5)  # A, A, B, tie
    assert rates[("directness", "C0", "C2")].judgments == 4 and rates[("directness", "C0", "C2")].questions == 2
    assert rates[("diversity", "C0", "C0")].win_rate is None  # nobody judged A/A
    assert result.win_rate("diversity", "C2", "C0").win_rate == 100.0  # the LLM judge's, beside them in the report


def test_votes_are_kept_in_the_order_cast_replaced_not_duplicated(tmp_path: Path, result):  # type: ignore[no-untyped-def]
    store = VoteStore(tmp_path / "evaluations.sqlite3")
    ada = votes_for(result, "Ada", [B, A, B, A, B, B, A, TIE])
    for vote in ada[:3]:
        store.record(vote)
    tasks = vote_tasks(result)
    store.skip("Ada", result.id, tasks[3], order_shown("Ada", result.id, tasks[3]))
    store.skip("Ada", result.id, tasks[0], "AB")  # a skip never replaces a vote
    done = {v.key for v in store.votes(result.id, judge="Ada")}
    assert next_task(tasks, done, store.skipped("Ada", result.id)) == 4  # resumes after the skipped one
    store.record(ada[0].model_copy(update={"choice": 0}))  # voting again replaces, keeping its place
    kept = store.votes(result.id)
    assert [v.key for v in kept] == [v.key for v in ada[:3]] and kept[0].choice == 0
    assert store.clear_skips("Ada", result.id) == 1
    assert next_task(tasks, done, store.skipped("Ada", result.id)) == 3
    assert store.votes(result.id, judge="Grace") == [] and store.votes("another experiment") == []


def test_several_people_voting_at_once_lose_nothing(tmp_path: Path, result):  # type: ignore[no-untyped-def]
    path = tmp_path / "evaluations.sqlite3"
    VoteStore(path)
    people = {f"judge {i}": votes_for(result, f"judge {i}", [A, B, TIE, A, B, TIE, A, B]) for i in range(6)}

    def cast(votes: list[Vote]) -> None:
        mine = VoteStore(path)  # each browser session opens the store itself
        for vote in votes:
            mine.record(vote)

    threads = [threading.Thread(target=cast, args=(votes,)) for votes in people.values()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored = VoteStore(path).votes(result.id)
    assert len(stored) == 48
    for name, votes in people.items():
        assert [(v.key, v.order_shown, v.choice) for v in stored if v.judge == name] == [(v.key, v.order_shown, v.choice) for v in votes]


def test_the_report_and_the_csv_carry_the_votes(result):  # type: ignore[no-untyped-def]
    votes = votes_for(result, "Ada", [B, A, B, A, B, B, A, TIE]) + votes_for(result, "=Grace", [B, A, A, A, B, B, A, B])
    text = people_markdown(result, votes)
    assert "16 votes by 2 people" in text and "Cohen's kappa" in text and "people with each other" in text
    assert "| all criteria | people and the LLM judge | 16 |" in text
    lines = votes_csv(votes).splitlines()
    assert lines[0].split(",") == list(VOTE_FIELDS) and len(lines) == 17
    assert {"judge", "question_id", "criterion", "order_shown", "choice"} <= set(VOTE_FIELDS)
    assert lines[9].startswith("'=Grace,")  # a name is data, never a spreadsheet formula
    assert people_markdown(result, []).endswith("Nobody has judged this experiment's pairs yet.\n")


@pytest.mark.parametrize(("name", "message"), [("  ", "must not be empty"), ("x" * 81, "at most 80"), ("a\x00b", "control characters")])
def test_a_judges_name_is_refused_with_what_is_wrong(name: str, message: str):
    with pytest.raises(EvaluationError, match=message):
        validate_judge_name(name)
    assert validate_judge_name("  Ada   Lovelace ") == "Ada Lovelace"
