"""``graphrag-explorer eval``: report, CSV, progress on stderr, resuming, errors."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from graphrag_cli.context import EXIT_OK, EXIT_USAGE
from graphrag_cli.main import main
from graphrag_core.index import save_index

from .factories import small_index


@pytest.fixture
def setup(tmp_path: Path, run_db: Path) -> dict:
    index = tmp_path / "idx"
    save_index(small_index(), index)
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "What are hackers like?"}\n{"question": "What is a kludge?"}\n')
    return {"index": str(index), "questions": str(questions), "env": {"XDG_DATA_HOME": str(tmp_path / "data")}, "tmp": tmp_path}


def _run(args: list[str], env: dict) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, stdout=out, stderr=err, environ=env)
    return code, out.getvalue(), err.getvalue()


def test_eval_writes_a_markdown_report_and_csv_and_resumes(setup):
    report = setup["tmp"] / "out" / "report.md"
    args = ["eval", setup["questions"], "--index", setup["index"], "--condition", "C0:level=0", "--condition", "leaf:level=leaf", "--seeds", "1,2", "--out", str(report)]
    code, out, err = _run(args, setup["env"])
    assert code == EXIT_OK, err
    text = report.read_text()
    assert "## Win rates" in text and "### comprehensiveness (heuristic)" in text
    assert "offline:bm25" in text and "(heuristic)" in text
    assert "| C0 |" in text and "share" in text
    assert (setup["tmp"] / "out" / "report.win-rates.csv").read_text().startswith("criterion,row,col,win_rate")
    assert (setup["tmp"] / "out" / "report.costs.csv").exists() and (setup["tmp"] / "out" / "report.judgments.csv").exists()
    assert "answers 1/8" in err and "judgments" in err and out == ""
    # A/A is exactly 50 with the offline heuristic
    rows = [line.split(",") for line in (setup["tmp"] / "out" / "report.win-rates.csv").read_text().splitlines()[1:]]
    assert all(float(r[3]) == 50.0 for r in rows if r[1] == r[2])
    code, _, err = _run(args, setup["env"])
    assert code == EXIT_OK
    assert "kept from an earlier run" in err


def test_eval_prints_markdown_on_stdout_without_out(setup):
    code, out, _ = _run(["eval", setup["questions"], "--index", setup["index"], "--condition", "a:level=0", "--condition", "b:level=1", "-q", "--criteria", "directness"], setup["env"])
    assert code == EXIT_OK
    assert out.startswith("# Evaluation") and "### directness" in out and "### diversity" not in out


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--condition", "a:level=0", "--condition", "b:level=x"], 'Condition b: community_level must be "leaf" or a non-negative integer.'),
        (["--condition", "a:level=0", "--condition", "b:level=1", "--criteria", "depth"], "Unknown evaluation criterion: depth."),
        (["--condition", "a:level=0", "--condition", "b:level=1", "--repeats", "0"], "repeats must be a positive integer."),
        ([], "eval needs at least one --condition"),
    ],
)
def test_eval_usage_errors(setup, extra, message):
    code, _, err = _run(["eval", setup["questions"], "--index", setup["index"], *extra], setup["env"])
    assert code == EXIT_USAGE
    assert message in err


def test_eval_names_a_blank_question_with_file_and_line(setup):
    bad = setup["tmp"] / "bad.csv"
    bad.write_text("question\nok?\n\"\"\n")
    code, _, err = _run(["eval", str(bad), "--index", setup["index"], "--condition", "a:level=0", "--condition", "b:level=1"], setup["env"])
    assert code == EXIT_USAGE
    assert f"{bad}:3: question must not be empty." in err


def test_eval_estimate(setup):
    code, out, _ = _run(["eval", setup["questions"], "--index", setup["index"], "--condition", "a:level=0", "--condition", "b:level=1", "--estimate"], setup["env"])
    assert code == EXIT_OK
    assert "judge_calls: 16" in out  # 2 questions x 1 pair x 2 orders x 4 criteria


def test_the_evaluation_store_sits_beside_the_configured_run_history(setup):
    runs = setup["tmp"] / "elsewhere" / "runs.sqlite3"
    code, _, _ = _run(["eval", setup["questions"], "--index", setup["index"], "--condition", "a:level=0", "--condition", "b:level=1", "-q"], {"GRAPHRAG_EXPLORER_DB": str(runs)})
    assert code == EXIT_OK
    assert (runs.parent / "evaluations.sqlite3").exists() and runs.exists()


def test_eval_questions_writes_a_tagged_question_set_that_eval_reads(setup):
    out = setup["tmp"] / "generated.jsonl"
    code, _, err = _run(["eval-questions", "jargon", "--personas", "2", "--tasks", "1", "--per-task", "2", "--model", "offline", "--out", str(out)], setup["env"])
    assert code == EXIT_OK, err
    assert "(heuristic)" in err
    from graphrag_core.evaluation import load_questions

    questions = load_questions(out)
    assert len(questions) == 4 and all(set(q.tags) == {"persona", "task"} for q in questions)
    code, _, err = _run(["eval-questions", "jargon", "--personas", "0", "--model", "offline"], setup["env"])
    assert code == EXIT_USAGE and "personas must be a positive integer." in err
