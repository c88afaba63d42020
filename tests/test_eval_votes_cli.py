"""``graphrag-explorer eval-votes``: the agreement table with Cohen's kappa, every vote as CSV,
and people's votes in ``eval``'s report."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from graphrag_cli.context import EXIT_OK, EXIT_USAGE
from graphrag_core.evaluation.store import EvaluationStore
from graphrag_core.evaluation.votes import Vote, VoteStore, order_shown, vote_tasks

from .test_eval_cli import _run, setup  # noqa: F401 - the fixture


def _experiment(setup: dict, db: Path, report: Path) -> str:  # noqa: F811
    args = ["eval", setup["questions"], "--index", setup["index"], "--condition", "C0:level=0", "--condition", "leaf:level=leaf", "--eval-db", str(db), "--out", str(report)]
    code, _, err = _run(args, setup["env"])
    assert code == EXIT_OK, err
    return re.search(r"experiment ([0-9a-f]{16}):", err).group(1)


def _vote(store: VoteStore, experiment, judge: str, preferred: list[int]) -> None:  # type: ignore[no-untyped-def]
    for task, wanted in zip(vote_tasks(experiment), preferred):
        order = order_shown(judge, experiment.id, task)
        choice = 0 if wanted == 0 else wanted if order == "AB" else 3 - wanted
        store.record(
            Vote(judge=judge, experiment_id=experiment.id, question_id=task.question_id, condition_a=task.row, condition_b=task.col,
                 seed_a=task.seed_a, seed_b=task.seed_b, criterion=task.criterion, order_shown=order, choice=choice)
        )


def test_eval_votes_prints_the_agreement_and_exports_every_vote(setup: dict) -> None:  # noqa: F811
    db, report = setup["tmp"] / "evals.sqlite3", setup["tmp"] / "out" / "report.md"
    experiment_id = _experiment(setup, db, report)
    assert not (setup["tmp"] / "out" / "report.votes.csv").exists()  # nobody voted yet
    code, out, _ = _run(["eval-votes", experiment_id, "--eval-db", str(db)], setup["env"])
    assert code == EXIT_OK and "Nobody has judged this experiment's pairs yet" in out and f"evaluate?experiment={experiment_id}&judge=1" in out

    experiment = EvaluationStore(db).get_experiment(experiment_id)
    tasks = vote_tasks(experiment)
    assert len(tasks) == 2 * 4  # two questions, one seed, four criteria
    store = VoteStore(db)
    _vote(store, experiment, "Ada", [1, 2, 0, 1, 1, 2, 2, 1])
    _vote(store, experiment, "Grace", [1, 2, 1, 1, 2, 2, 2, 1])
    export = setup["tmp"] / "votes" / "all.csv"
    code, out, err = _run(["eval-votes", experiment_id, "--eval-db", str(db), "--export", str(export)], setup["env"])
    assert code == EXIT_OK, err
    assert "16 votes by 2 people: Ada 8, Grace 8" in out
    assert re.search(r"^criterion\s+between\s+pairs\s+identical choices\s+Cohen's kappa$", out, re.MULTILINE)
    # Ada 1 2 0 1 1 2 2 1 and Grace 1 2 1 1 2 2 2 1: po 6/8; Ada A4 B3 T1, Grace A4 B4 -> pe 28/64; kappa 5/9
    assert re.search(r"^all criteria\s+people with each other\s+8\s+75%\s+0\.56$", out, re.MULTILINE)
    assert re.search(r"^all criteria\s+people and the LLM judge\s+16\s+", out, re.MULTILINE)
    assert "win rates" in out and "C0 over leaf" in out
    rows = list(csv.DictReader(io.StringIO(export.read_text())))
    assert len(rows) == 16 and {"judge", "question_id", "criterion", "order_shown", "choice"} <= set(rows[0])
    assert [r["judge"] for r in rows] == ["Ada"] * 8 + ["Grace"] * 8  # in the order cast
    assert {r["order_shown"] for r in rows} <= {"AB", "BA"} and {r["choice"] for r in rows} <= {"0", "1", "2"}
    assert f"wrote 16 votes to {export}" in err

    _experiment(setup, db, report)  # the same experiment again: its report now carries the votes
    assert "## People" in report.read_text() and "Cohen's kappa" in report.read_text()
    assert len((setup["tmp"] / "out" / "report.votes.csv").read_text().splitlines()) == 17


def test_eval_votes_names_an_unknown_experiment(setup: dict) -> None:  # noqa: F811
    db = setup["tmp"] / "evals.sqlite3"
    code, out, err = _run(["eval-votes", "0123456789abcdef", "--eval-db", str(db)], setup["env"])
    assert code == EXIT_USAGE and out == ""
    assert f"error: No finished experiment 0123456789abcdef in {db}." in err
