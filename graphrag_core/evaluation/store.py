"""Where an experiment keeps what it made, as it makes it (SQLite, one file, WAL mode).

Answers are keyed by what determines them (the index's content, the answering model, the exact
request with its question and seed), judge calls by the judge and the exact prompt
(:func:`~graphrag_core.evaluation.judge.judge_call_key`), claims by the model and the answer.
So a rerun of an interrupted experiment, or of one that shares conditions with an earlier one,
redoes only what is missing. Failures are not stored as answers, judge calls or claims: a rerun
tries them again; a finished experiment keeps its own (failed answers, claims not listed).
The store lives beside the run history (:func:`evaluation_store_path`) unless told otherwise.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .judge import JudgeCall
from .results import AnswerRecord, ExperimentResult

SQLITE_TIMEOUT_S = 30.0
EVAL_DB_FILE_NAME = "evaluations.sqlite3"
"""The default evaluation store lives next to the run store."""


def evaluation_store_path(run_store_path: str | Path) -> Path:
    """Where the evaluation store lives by default: :data:`EVAL_DB_FILE_NAME` in the run history's folder."""
    return Path(run_store_path).with_name(EVAL_DB_FILE_NAME)


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, record TEXT NOT NULL, created_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS judge_calls (key TEXT PRIMARY KEY, call TEXT NOT NULL, created_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, claims TEXT NOT NULL, created_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS experiments (id TEXT PRIMARY KEY, result TEXT NOT NULL, created_at REAL NOT NULL)",
)


class EvaluationStore:
    """Answers, judge calls, claims and finished experiments in one SQLite file.

    One connection per instance, used under a lock, so an instance may be shared by threads
    (the app's worker and its script thread); other processes may use the same file (WAL).
    A connection per operation would checkpoint the WAL on every close: 30 ms per judge call.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._connection = sqlite3.connect(self.path, timeout=SQLITE_TIMEOUT_S, check_same_thread=False)
        with self._connect() as connection:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: safe on a crash, no fsync per call
            for statement in _SCHEMA:
                connection.execute(statement)

    def __repr__(self) -> str:
        return f"EvaluationStore({str(self.path)!r})"

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._connection:  # commits on success, rolls back on error
            yield self._connection

    def _get(self, table: str, column: str, key: str) -> str | None:
        with self._connect() as connection:
            row = connection.execute(f"SELECT {column} FROM {table} WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _put(self, table: str, column: str, key: str, text: str) -> None:
        with self._connect() as connection:
            connection.execute(f"INSERT OR REPLACE INTO {table} (key, {column}, created_at) VALUES (?, ?, ?)", (key, text, time.time()))

    # answers
    def get_answer(self, key: str) -> AnswerRecord | None:
        text = self._get("answers", "record", key)
        return None if text is None else AnswerRecord.model_validate_json(text)

    def put_answer(self, key: str, record: AnswerRecord) -> None:
        self._put("answers", "record", key, record.model_dump_json())

    # judge calls (the JudgeCallStore protocol)
    def get_call(self, key: str) -> JudgeCall | None:
        text = self._get("judge_calls", "call", key)
        return None if text is None else JudgeCall.model_validate_json(text)

    def put_call(self, key: str, call: JudgeCall) -> None:
        self._put("judge_calls", "call", key, call.model_dump_json())

    # claims
    def get_claims(self, key: str) -> list[str] | None:
        text = self._get("claims", "claims", key)
        return None if text is None else list(json.loads(text))

    def put_claims(self, key: str, claims: list[str]) -> None:
        self._put("claims", "claims", key, json.dumps(claims, ensure_ascii=False))

    # finished experiments
    def save_experiment(self, result: ExperimentResult) -> None:
        with self._connect() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO experiments (id, result, created_at) VALUES (?, ?, ?)",
                (result.id, result.model_dump_json(), time.time()),
            )

    def get_experiment(self, experiment_id: str) -> ExperimentResult | None:
        with self._connect() as connection:
            row = connection.execute("SELECT result FROM experiments WHERE id = ?", (experiment_id,)).fetchone()
        return None if row is None else ExperimentResult.model_validate_json(row[0])

    def counts(self) -> dict[str, int]:
        with self._connect() as connection:
            return {
                table: int(connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
                for table in ("answers", "judge_calls", "claims", "experiments")
            }


__all__ = ["EVAL_DB_FILE_NAME", "EvaluationStore", "evaluation_store_path"]
