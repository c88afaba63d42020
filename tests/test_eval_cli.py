"""``graphrag-explorer eval``: report, CSV, progress on stderr, resuming, errors."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from graphrag_cli import loop
from graphrag_cli.commands import eval as eval_command
from graphrag_cli.context import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from graphrag_cli.main import main
from graphrag_core.index import save_index
from graphrag_core.llm.base import ChatRequest
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.scripted import ScriptedChatModel

from .factories import small_index


@pytest.fixture
def setup(tmp_path: Path, run_db: Path) -> dict:
    index = tmp_path / "idx"
    save_index(small_index(), index)
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "What are hackers like?"}\n{"question": "What is a kludge?"}\n')
    return {"index": str(index), "questions": str(questions), "env": {"XDG_DATA_HOME": str(tmp_path / "data")}, "tmp": tmp_path}


def _run(args: list[str], env: dict, *, model=None) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    out, err = io.StringIO(), io.StringIO()
    code = main(args, stdout=out, stderr=err, environ=env, model=model)
    return code, out.getvalue(), err.getvalue()


def offline_until(interrupt_at_reduce: int | None) -> ScriptedChatModel:
    """The offline model's replies under one identity, with Ctrl-C (``KeyboardInterrupt``) in
    place of the ``interrupt_at_reduce``-th reduce call, if any."""
    offline, reduces = OfflineChatModel(), []

    async def reply(request: ChatRequest):  # type: ignore[no-untyped-def]
        if request.purpose == "reduce":
            reduces.append(request)
            if len(reduces) == interrupt_at_reduce:
                return KeyboardInterrupt()
        return await offline.complete(request)

    return ScriptedChatModel(reply, identity="offline-replies")


@pytest.fixture
def loop_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The coroutines the eval commands hand to the command line's loop runner, by name."""
    names: list[str] = []

    def spy(coroutine):  # type: ignore[no-untyped-def]
        names.append(coroutine.__name__)
        return loop.run_async(coroutine)

    monkeypatch.setattr(eval_command, "run_async", spy)
    return names


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
    assert "asked for 4 questions (2 personas × 1 task × 2 per task), kept 4" in err
    code, _, err = _run(["eval-questions", "jargon", "--personas", "0", "--model", "offline"], setup["env"])
    assert code == EXIT_USAGE and "personas must be a positive integer." in err


def test_eval_ctrl_c_goes_through_the_loop_runner_exits_130_and_a_rerun_goes_on(setup, loop_runs):
    args = ["eval", setup["questions"], "--index", setup["index"], "--condition", "a:level=0", "--condition", "b:level=1", "--no-store", "--no-cache"]
    code, out, err = _run(args, setup["env"], model=offline_until(3))
    assert code == EXIT_INTERRUPTED and out == ""
    assert loop_runs == ["run_experiment"]
    assert "answers 2/4" in err and "answers 3/4" not in err
    assert "kept in " in err and "the same command goes on from there" in err
    assert err.strip().splitlines()[-1] == "interrupted"
    assert "Traceback" not in err and "never retrieved" not in err

    code, out, err = _run(args, setup["env"], model=offline_until(None))
    assert code == EXIT_OK, err
    assert loop_runs == ["run_experiment", "run_experiment"]
    lines = err.splitlines()
    assert "answers 1/4: a · q1 · seed 0 (kept from an earlier run)" in lines
    assert "answers 2/4: a · q2 · seed 0 (kept from an earlier run)" in lines
    assert "answers 3/4: b · q1 · seed 0" in lines  # the interrupted answer is made now
    assert out.startswith("# Evaluation")


def test_eval_questions_ctrl_c_goes_through_the_loop_runner_and_exits_130(setup, loop_runs):
    model = ScriptedChatModel(lambda request: KeyboardInterrupt())
    code, out, err = _run(["eval-questions", setup["index"], "--personas", "1", "--tasks", "1", "--per-task", "1"], setup["env"], model=model)
    assert code == EXIT_INTERRUPTED and out == ""
    assert loop_runs == ["generate_questions"]
    assert err.strip() == "interrupted"
