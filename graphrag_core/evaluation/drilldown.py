"""The Evaluate page's drill-down as data: one question's two answers, the judgment between them
and the judge's calls, seen from the side of the condition chosen as the row (pure).

Invariants of :func:`drilldown`: the row and the column stay as chosen, whichever of them was A
when judged; a side's score is its own (a judgment made with the row as B is flipped, 100 minus
A's score) and the two scores add up to 100; a criterion with no successful call scores ``None``
on both sides; a judge call's winner is named by condition, ``tie`` or ``failed``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..errors import EvaluationError
from .judge import JudgeCall
from .results import AnswerRecord, ExperimentResult, JudgmentRecord

QUESTION_CHARS_IN_CHOICE = 60
"""A choice shows this many characters of its question."""


class DrilldownSide(BaseModel):
    """One side of the pair: its condition, seed, answer (``None`` when there is none) and score."""

    model_config = ConfigDict(frozen=True)

    condition: str
    seed: int
    answer: AnswerRecord | None
    score: float | None


class DrilldownCall(BaseModel):
    """One judge call on the chosen criterion, with the conditions named."""

    model_config = ConfigDict(frozen=True)

    repeat: int
    """From 1."""
    shown_first: str
    winner: str
    reason: str
    attempts: int


class Drilldown(BaseModel):
    """One judged (or skipped) pair on one criterion, seen from ``row``."""

    model_config = ConfigDict(frozen=True)

    question_id: str
    question: str
    """The question's text, or its id when the experiment does not hold the question."""
    criterion: str
    row: DrilldownSide
    col: DrilldownSide
    skipped: str | None
    judged: bool
    calls: list[DrilldownCall]

    @property
    def compare_run_ids(self) -> tuple[str, str] | None:
        """The two answers' runs, row first, when both have one and they differ (a pair to compare)."""
        ids = [side.answer.run_id for side in (self.row, self.col) if side.answer is not None and side.answer.run_id]
        return (ids[0], ids[1]) if len(ids) == 2 and ids[0] != ids[1] else None

    def call_rows(self) -> list[dict[str, object]]:
        """The judge calls as table rows: repeat, shown first, winner, reason, attempts."""
        return [
            {"repeat": c.repeat, "shown first": c.shown_first, "winner": c.winner, "reason": c.reason, "attempts": c.attempts}
            for c in self.calls
        ]


def drilldown_choices(result: ExperimentResult, row: str, col: str) -> list[str]:
    """One label per judgment between ``row`` and ``col``, in the order :func:`drilldown` numbers
    them: ``{question id} · seeds {a}/{b} · {start of the question}``."""
    labels = []
    for record, _ in result.judgments_between(row, col):
        question = result.question(record.question_id)
        text = question.question[:QUESTION_CHARS_IN_CHOICE] if question else ""
        labels.append(f"{record.question_id} · seeds {record.seed_a}/{record.seed_b} · {text}")
    return labels


def drilldown(result: ExperimentResult, row: str, col: str, *, choice: int = 0, criterion: str) -> Drilldown | None:
    """Judgment number ``choice`` between ``row`` and ``col`` (see :func:`drilldown_choices`) on
    ``criterion``; ``None`` when nothing was judged between them."""
    pairs = result.judgments_between(row, col)
    if not pairs:
        return None
    if not 0 <= choice < len(pairs):
        raise EvaluationError(f"No judgment {choice} between {row} and {col}: there are {len(pairs)}.")
    record, flipped = pairs[choice]
    score_a = record.judgment.scores.get(criterion) if record.judgment else None
    score_row = None if score_a is None else (100 - score_a if flipped else score_a)
    (row_name, row_seed), (col_name, col_seed) = ((record.col, record.seed_b), (record.row, record.seed_a)) if flipped else ((record.row, record.seed_a), (record.col, record.seed_b))
    question = result.question(record.question_id)
    return Drilldown(
        question_id=record.question_id,
        question=question.question if question else record.question_id,
        criterion=criterion,
        row=DrilldownSide(condition=row_name, seed=row_seed, answer=result.answer(row_name, record.question_id, row_seed), score=score_row),
        col=DrilldownSide(
            condition=col_name, seed=col_seed, answer=result.answer(col_name, record.question_id, col_seed), score=None if score_row is None else 100 - score_row
        ),
        skipped=record.skipped,
        judged=record.judgment is not None,
        calls=[_call(c, record) for c in record.judgment.calls if c.criterion == criterion] if record.judgment else [],
    )


def _call(call: JudgeCall, record: JudgmentRecord) -> DrilldownCall:
    """A judge call with its conditions named: the one shown first, and the winner."""
    first, second = (record.row, record.col) if call.order == "AB" else (record.col, record.row)
    winner = {1: first, 2: second, 0: "tie"}.get(call.winner, "failed") if call.winner is not None else "failed"
    return DrilldownCall(repeat=call.repeat + 1, shown_first=first, winner=winner, reason=call.reason or call.error or "", attempts=call.attempts)


__all__ = ["Drilldown", "DrilldownCall", "DrilldownSide", "drilldown", "drilldown_choices"]
