"""One question's two answers in an experiment and their judgments, scored from the row's side
(pure: no streamlit). Evaluate's drill-down draws what :func:`drill_down` returns.

A judgment is stored once per pair, as A (its ``row``) against B (its ``col``); asked for the
other way round, it is *flipped*: the sides, their seeds and the scores swap, so the left side is
always the condition picked as the row and its score is the row's.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_core.evaluation import ExperimentResult
from graphrag_core.evaluation.experiment import AnswerRecord, JudgmentRecord

TIE = "tie"
FAILED_CALL = "failed"
QUESTION_SHOWN = 60
"""Characters of a question shown in the picker."""


@dataclass(frozen=True)
class Side:
    """One side of a drill-down: the condition, the seed its answer was made with, the answer
    (None when it is missing) and its score on the criterion (None when the judge failed)."""

    condition: str
    seed: int
    answer: AnswerRecord | None
    score: float | None


@dataclass(frozen=True)
class JudgeCallRow:
    """One judge call on the criterion: which condition was shown first, who won, why."""

    repeat: int
    shown_first: str
    winner: str
    reason: str
    attempts: int

    def as_row(self) -> dict[str, object]:
        return {"repeat": self.repeat, "shown first": self.shown_first, "winner": self.winner, "reason": self.reason, "attempts": self.attempts}


@dataclass(frozen=True)
class DrillDown:
    """One judged pair seen from ``row``: the question, both sides, the judge calls on one
    criterion, and why the pair was not judged (``skipped``)."""

    question: str
    left: Side
    right: Side
    calls: tuple[JudgeCallRow, ...]
    skipped: str | None
    judged: bool
    """Whether the judge compared the pair (False: skipped, or not judged yet)."""

    @property
    def run_ids(self) -> tuple[str, ...]:
        """The two answers' runs when both have one and they differ (for a comparison link)."""
        ids = tuple(side.answer.run_id for side in (self.left, self.right) if side.answer is not None and side.answer.run_id)
        return ids if len(ids) == 2 and ids[0] != ids[1] else ()


def nothing_judged(row: str, col: str) -> str:
    """Why a drill-down between ``row`` and ``col`` is empty."""
    return "Nothing was judged between these two." + (" (A/A needs two seeds.)" if row == col else "")


def pair_labels(result: ExperimentResult, row: str, col: str) -> list[str]:
    """One label per judged pair between ``row`` and ``col``: question id, seeds, question."""
    labels = []
    for record, _flipped in result.judgments_between(row, col):
        question = result.question(record.question_id)
        text = question.question[:QUESTION_SHOWN] if question is not None else ""
        labels.append(f"{record.question_id} · seeds {record.seed_a}/{record.seed_b} · {text}")
    return labels


def _winner(record: JudgmentRecord, order: str, winner: int | None) -> str:
    """The condition a call named: position 1 is whoever was shown first (A for ``AB``)."""
    if winner is None:
        return FAILED_CALL
    first, second = (record.row, record.col) if order == "AB" else (record.col, record.row)
    return {1: first, 2: second, 0: TIE}.get(winner, FAILED_CALL)


def drill_down(result: ExperimentResult, row: str, col: str, pick: int, criterion: str) -> DrillDown | None:
    """The ``pick``-th judged pair between ``row`` and ``col`` on ``criterion``, seen from
    ``row``; None when nothing was judged between them."""
    pairs = result.judgments_between(row, col)
    if not pairs:
        return None
    record, flipped = pairs[min(max(pick, 0), len(pairs) - 1)]
    question = result.question(record.question_id)
    answer_a = result.answer(record.row, record.question_id, record.seed_a)
    answer_b = result.answer(record.col, record.question_id, record.seed_b)
    judgment = record.judgment
    score_a = judgment.scores.get(criterion) if judgment is not None else None
    score_b = None if score_a is None else 100 - score_a
    side_a = Side(condition=record.row, seed=record.seed_a, answer=answer_a, score=score_a)
    side_b = Side(condition=record.col, seed=record.seed_b, answer=answer_b, score=score_b)
    left, right = (side_b, side_a) if flipped else (side_a, side_b)
    calls = tuple(
        JudgeCallRow(
            repeat=call.repeat + 1,
            shown_first=record.row if call.order == "AB" else record.col,
            winner=_winner(record, call.order, call.winner),
            reason=call.reason or call.error or "",
            attempts=call.attempts,
        )
        for call in (judgment.calls if judgment is not None else ())
        if call.criterion == criterion
    )
    return DrillDown(
        question=question.question if question is not None else record.question_id,
        left=left,
        right=right,
        calls=calls,
        skipped=record.skipped,
        judged=judgment is not None,
    )


__all__ = ["DrillDown", "JudgeCallRow", "Side", "drill_down", "nothing_judged", "pair_labels"]
