"""Issue 39, not yet tried: ``kill -9`` during an evaluation. The same command goes on from the
store: what was answered and judged before the kill is kept (never judged again, no judgment
twice), the rest is made, and the report is whole."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphrag_core.evaluation.store import EvaluationStore
from graphrag_core.index import save_index

from .factories import small_index

APP_ROOT = Path(__file__).resolve().parents[1]
WAIT_S = 120.0


def _stored(db: Path, table: str = "judge_calls") -> dict[str, float]:
    """Each stored row's key and when it was stored (read-only: the writer goes on)."""
    if not db.exists():
        return {}
    try:
        connection = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            return {str(k): float(t) for k, t in connection.execute(f"SELECT key, created_at FROM {table}")}
        finally:
            connection.close()
    except sqlite3.OperationalError:  # the table is not made yet
        return {}


@pytest.mark.parametrize(("table", "kill_after"), [("answers", 3), ("judge_calls", 6)], ids=["answering", "judging"])
def test_an_evaluation_killed_with_sigkill_goes_on_and_judges_nothing_twice(tmp_path: Path, table: str, kill_after: int) -> None:
    index = tmp_path / "idx"
    save_index(small_index(), index)
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "What are hackers like?"}\n{"question": "What is a kludge?"}\n', encoding="utf-8")
    db, report = tmp_path / "evals.sqlite3", tmp_path / "report.md"
    args = [
        sys.executable, "-m", "graphrag_core", "eval", str(questions), "--index", str(index), "--condition", "C0:level=0",
        "--condition", "leaf:level=leaf", "--seeds", "1,2", "--eval-db", str(db), "--no-cache", "--out", str(report),
    ]
    env = {
        **os.environ, "PYTHONPATH": str(APP_ROOT), "GRAPHRAG_EXPLORER_DB": str(tmp_path / "runs.sqlite3"),
        "GRAPHRAG_LLM_PROVIDER": "offline", "GRAPHRAG_LLM_OFFLINE_LATENCY": "0.02,0.04",
    }
    env.pop("GRAPHRAG_EXPLORER_CACHE", None)
    first = subprocess.Popen(args, cwd=APP_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + WAIT_S
        while len(_stored(db, table)) < kill_after and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert first.poll() is None, f"the evaluation ended before it could be killed: {first.stderr.read().decode()[-2000:] if first.stderr else ''}"
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL
    kept, kept_answers = _stored(db), _stored(db, "answers")
    assert len(_stored(db, table)) >= kill_after and not report.exists()
    assert len(kept_answers) < 8 if table == "answers" else len(kept_answers) == 8

    again = subprocess.run(args, cwd=APP_ROOT, env=env, capture_output=True, text=True, timeout=WAIT_S)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "kept from an earlier run" in again.stderr
    after = _stored(db)
    assert {key: after[key] for key in kept} == kept, "a judge call kept in the store is never made again"
    answers = _stored(db, "answers")
    assert {key: answers[key] for key in kept_answers} == kept_answers, "nor is a kept answer"

    # the same experiment made in one go, with no kill: the resumed one is the same
    whole_db, whole_report = tmp_path / "whole.sqlite3", tmp_path / "whole.md"
    whole_args = [whole_db if a == str(db) else whole_report if a == str(report) else a for a in args]
    whole = subprocess.run([str(a) for a in whole_args], cwd=APP_ROOT, env=env, capture_output=True, text=True, timeout=WAIT_S)
    assert whole.returncode == 0, whole.stderr[-3000:]
    assert set(after) == set(_stored(whole_db)) and set(answers) == set(_stored(whole_db, "answers")), "the same judge calls stored, each once (a key is one prompt)"

    resumed, uninterrupted = _experiment(db), _experiment(whole_db)
    jobs = [(j.question_id, j.row, j.col, j.seed_a, j.seed_b) for j in resumed.judgments]
    assert len(jobs) == len(set(jobs)), "no judgment twice"
    assert all(j.judgment is not None and j.skipped is None for j in resumed.judgments), "every pair judged"
    assert [j.model_dump(exclude={"judgment"}) for j in resumed.judgments] == [j.model_dump(exclude={"judgment"}) for j in uninterrupted.judgments]
    assert [[c.raw for c in j.judgment.calls] for j in resumed.judgments] == [[c.raw for c in j.judgment.calls] for j in uninterrupted.judgments]  # type: ignore[union-attr]
    assert resumed.win_rates == uninterrupted.win_rates
    assert len(resumed.answers) == 2 * 2 * 2 and all(a.error is None for a in resumed.answers)
    assert "## Win rates" in report.read_text(encoding="utf-8")


def _experiment(db: Path):  # type: ignore[no-untyped-def]
    with contextlib.closing(sqlite3.connect(db)) as connection:
        (experiment_id,), = connection.execute("SELECT id FROM experiments").fetchall()  # the one experiment saved
    store = EvaluationStore(db)
    try:
        result = store.get_experiment(experiment_id)
    finally:
        store.close()
    assert result is not None
    return result
