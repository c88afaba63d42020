"""People judging the pairs an LLM judged (evaluation spec section 9): what a judge is shown,
in which order, and the votes, kept in the experiment's store as they are cast.

Invariants:

- the pairs a person judges (:func:`vote_tasks`) are the experiment's judged pairs of distinct
  conditions (its A/A pairs only when it has nothing else), each once per criterion, in the
  experiment's judgment order: every judge meets them in the same order, so their votes overlap;
- the order two answers are shown in (:func:`order_shown`) is a function of the judge's name,
  the experiment and the pair only: the same judge sees a pair the same way on every visit and
  on every criterion, another judge independently of the first;
- a vote's ``choice`` is the position chosen as shown (1 = Answer 1, 2 = Answer 2, 0 = tie),
  ``order_shown`` says which condition was Answer 1, and :attr:`Vote.score_a` scores it as a
  judge call is scored (section 2);
- a judge has at most one vote per pair and criterion (voting again replaces it, keeping its
  place in the order cast); a skip is kept until the judge votes on that pair or asks for the
  skipped pairs again, and never replaces a vote;
- every write is one short transaction on the store's SQLite file (WAL), so several people
  voting at once from their own browsers lose nothing.
"""

from __future__ import annotations

import hashlib
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import EvaluationError
from ..sqlite import connect, enable_wal
from .judge import Order, score_of_a
from .results import ExperimentResult

Choice = Literal[0, 1, 2]
CHOICE_WORDS: dict[int, str] = {1: "Answer 1", 2: "Answer 2", 0: "Tie"}
"""What the three choices are called on the judging screen."""
MAX_JUDGE_NAME_CHARS = 80
SQLITE_TIMEOUT_S = 30.0

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS votes ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " experiment_id TEXT NOT NULL, judge TEXT NOT NULL, question_id TEXT NOT NULL,"
    " condition_a TEXT NOT NULL, condition_b TEXT NOT NULL, seed_a INTEGER NOT NULL, seed_b INTEGER NOT NULL,"
    " criterion TEXT NOT NULL, order_shown TEXT NOT NULL, choice INTEGER, created_at REAL NOT NULL,"
    " UNIQUE (experiment_id, judge, question_id, condition_a, condition_b, seed_a, seed_b, criterion))"
)
"""One row per judge, pair and criterion: a vote, or a skip (``choice`` NULL)."""


class VoteTask(BaseModel):
    """One pair on one criterion: ``row``'s answer (A, ``seed_a``) and ``col``'s (B, ``seed_b``)."""

    model_config = ConfigDict(frozen=True)

    question_id: str
    row: str
    col: str
    seed_a: int
    seed_b: int
    criterion: str

    @property
    def key(self) -> tuple[str, str, str, int, int, str]:
        return (self.question_id, self.row, self.col, self.seed_a, self.seed_b, self.criterion)


class Vote(BaseModel):
    """One person's choice on one pair and criterion, with the order the answers were shown in."""

    model_config = ConfigDict(frozen=True)

    judge: str
    experiment_id: str
    question_id: str
    condition_a: str
    condition_b: str
    seed_a: int
    seed_b: int
    criterion: str
    order_shown: Order
    """``AB``: condition A's answer was Answer 1; ``BA``: condition B's was."""
    choice: Choice
    """The position chosen as shown: 1, 2, or 0 for a tie."""
    created_at: float = Field(default_factory=time.time)

    @property
    def key(self) -> tuple[str, str, str, int, int, str]:
        return (self.question_id, self.condition_a, self.condition_b, self.seed_a, self.seed_b, self.criterion)

    @property
    def score_a(self) -> float:
        """A's score as a judge call is scored: 100 if A won, 50 for a tie, 0 if B won."""
        return score_of_a(self.order_shown, self.choice)

    @property
    def preferred(self) -> Choice:
        """The choice in A/B terms, whatever the order shown: 1 = A, 2 = B, 0 = tie."""
        return 0 if self.choice == 0 else 1 if self.score_a > 50 else 2

    @property
    def shown_first(self) -> str:
        return self.condition_a if self.order_shown == "AB" else self.condition_b

    @property
    def winner(self) -> str:
        """The condition chosen, or ``tie``."""
        return {0: "tie", 1: self.condition_a, 2: self.condition_b}[self.preferred]


def validate_judge_name(name: str) -> str:
    """The name as it is stored: trimmed, whitespace collapsed; refuses an empty, an overlong
    or a control-character name with an :class:`EvaluationError` naming what is wrong."""
    text = " ".join(str(name).split())
    if not text:
        raise EvaluationError("A judge's name must not be empty.")
    if len(text) > MAX_JUDGE_NAME_CHARS:
        raise EvaluationError(f"A judge's name must be at most {MAX_JUDGE_NAME_CHARS} characters.")
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs") for ch in text):
        raise EvaluationError("A judge's name must not contain control characters.")
    return text


def vote_tasks(result: ExperimentResult) -> list[VoteTask]:
    """What people judge in ``result``: its judged pairs of distinct conditions (its A/A pairs
    when there are none) once per criterion, pair by pair in judgment order."""
    judged = [j for j in result.judgments if j.judgment is not None]
    distinct = [j for j in judged if not j.aa]
    return [
        VoteTask(question_id=j.question_id, row=j.row, col=j.col, seed_a=j.seed_a, seed_b=j.seed_b, criterion=criterion)
        for j in (distinct or judged)
        for criterion in result.spec.criteria
    ]


def order_shown(judge: str, experiment_id: str, task: VoteTask) -> Order:
    """Which answer a judge sees first on ``task``'s pair: seeded by the judge, the experiment and
    the pair (not the criterion), so it is stable across visits and random across pairs."""
    text = "\x00".join(map(str, (judge, experiment_id, task.question_id, task.row, task.col, task.seed_a, task.seed_b)))
    return "AB" if hashlib.sha256(text.encode("utf-8")).digest()[0] % 2 == 0 else "BA"


def next_task(tasks: Sequence[VoteTask], done: set[tuple], skipped: set[tuple]) -> int | None:
    """The position of the first task neither voted on nor skipped, or ``None`` when none is left."""
    return next((i for i, task in enumerate(tasks) if task.key not in done and task.key not in skipped), None)


class VoteStore:
    """The votes table of an experiment store (the :class:`~graphrag_core.evaluation.store.EvaluationStore`'s
    file): one short connection per operation, so any number of script threads and processes
    may vote at once."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with connect(self.path, timeout=SQLITE_TIMEOUT_S) as connection:
            enable_wal(connection)
            connection.execute(_SCHEMA)

    def __repr__(self) -> str:
        return f"VoteStore({str(self.path)!r})"

    def record(self, vote: Vote) -> None:
        """Keep ``vote`` (replacing the judge's earlier vote or skip on that pair and criterion)."""
        with connect(self.path, timeout=SQLITE_TIMEOUT_S) as connection:
            connection.execute(
                "INSERT INTO votes (experiment_id, judge, question_id, condition_a, condition_b, seed_a, seed_b, criterion, order_shown, choice, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (experiment_id, judge, question_id, condition_a, condition_b, seed_a, seed_b, criterion)"
                " DO UPDATE SET order_shown = excluded.order_shown, choice = excluded.choice, created_at = excluded.created_at",
                (vote.experiment_id, vote.judge, *vote.key[:5], vote.criterion, vote.order_shown, vote.choice, vote.created_at),
            )

    def skip(self, judge: str, experiment_id: str, task: VoteTask, order: Order) -> None:
        """Note that ``judge`` skipped ``task`` (nothing happens when they already voted on it)."""
        with connect(self.path, timeout=SQLITE_TIMEOUT_S) as connection:
            connection.execute(
                "INSERT OR IGNORE INTO votes (experiment_id, judge, question_id, condition_a, condition_b, seed_a, seed_b, criterion, order_shown, choice, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)",
                (experiment_id, judge, *task.key, order, time.time()),
            )

    def clear_skips(self, judge: str, experiment_id: str) -> int:
        """Forget ``judge``'s skips, so the skipped pairs come round again; returns how many."""
        with connect(self.path, timeout=SQLITE_TIMEOUT_S) as connection:
            cursor = connection.execute("DELETE FROM votes WHERE experiment_id = ? AND judge = ? AND choice IS NULL", (experiment_id, judge))
            return int(cursor.rowcount)

    def votes(self, experiment_id: str, *, judge: str | None = None) -> list[Vote]:
        """The experiment's votes (one judge's, when named) in the order they were first cast."""
        query = (
            "SELECT judge, question_id, condition_a, condition_b, seed_a, seed_b, criterion, order_shown, choice, created_at"
            " FROM votes WHERE experiment_id = ? AND choice IS NOT NULL"
        )
        params: tuple[object, ...] = (experiment_id,)
        if judge is not None:
            query, params = query + " AND judge = ?", (experiment_id, judge)
        with connect(self.path, timeout=SQLITE_TIMEOUT_S) as connection:
            rows = connection.execute(query + " ORDER BY id", params).fetchall()
        return [
            Vote(
                judge=r[0], experiment_id=experiment_id, question_id=r[1], condition_a=r[2], condition_b=r[3], seed_a=int(r[4]), seed_b=int(r[5]),
                criterion=r[6], order_shown=r[7], choice=int(r[8]), created_at=float(r[9]),
            )
            for r in rows
        ]

    def skipped(self, judge: str, experiment_id: str) -> set[tuple[str, str, str, int, int, str]]:
        """The keys of the tasks ``judge`` skipped and has not voted on since."""
        with connect(self.path, timeout=SQLITE_TIMEOUT_S) as connection:
            rows = connection.execute(
                "SELECT question_id, condition_a, condition_b, seed_a, seed_b, criterion FROM votes WHERE experiment_id = ? AND judge = ? AND choice IS NULL",
                (experiment_id, judge),
            ).fetchall()
        return {(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5]) for r in rows}


__all__ = [
    "CHOICE_WORDS",
    "Choice",
    "Vote",
    "VoteStore",
    "VoteTask",
    "next_task",
    "order_shown",
    "validate_judge_name",
    "vote_tasks",
]
