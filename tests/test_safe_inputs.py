"""Issue 27: what the command line reads and writes is safe: text that is not Unicode is bad
input, a run history that is damaged reads one clear way, CSV and Markdown exports run nothing
when opened, ``import`` never overwrites what it did not write."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_cli.context import EXIT_USAGE
from graphrag_core.errors import EvaluationError, RequestValidationError
from graphrag_core.evaluation.questions import parse_questions_jsonl
from graphrag_core.request import GlobalSearchRequest

from .cli_support import QUESTION, run_cli

LONE = "\udcff"  # what a non-UTF-8 byte becomes in argv (surrogateescape), or "\udcff" in JSON


# -- lone surrogates ------------------------------------------------------------------------------


def test_a_question_with_a_lone_surrogate_is_refused_with_a_clear_message() -> None:
    with pytest.raises(RequestValidationError, match=r"not valid Unicode.*U\+DCFF.*character 9"):
        GlobalSearchRequest(query=f"What is {LONE} here?")


def test_query_with_a_lone_surrogate_exits_2_without_a_traceback(capsys, index_dir: Path, tmp_path: Path) -> None:
    code, _out, err = run_cli(capsys, "query", index_dir, f"What is {LONE}?", "--store", tmp_path / "runs.sqlite3", "--cache", tmp_path / "c.sqlite3")
    assert code == EXIT_USAGE, err
    assert "not valid Unicode" in err and "Traceback" not in err


def test_a_question_set_with_a_lone_surrogate_names_its_file_and_line() -> None:
    text = '{"question": "Fine?"}\n{"question": "What is \\udcff here?"}\n'
    with pytest.raises(EvaluationError, match=r"q\.jsonl:2: .*not valid Unicode"):
        parse_questions_jsonl(text, "q.jsonl")


def test_eval_with_a_lone_surrogate_in_its_questions_exits_2(capsys, index_dir: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "What is \\udcff here?"}\n', encoding="utf-8")
    code, _out, err = run_cli(
        capsys, "eval", questions, "--index", index_dir, "--condition", "A:level=0", "--condition", "B:level=1",
        "--judge", "offline", "--model", "offline", "--eval-db", tmp_path / "e.sqlite3", "--no-store", "--no-cache",
    )
    assert code == EXIT_USAGE, err
    assert "q.jsonl:1" in err and "not valid Unicode" in err and "Traceback" not in err


def test_a_condition_name_with_a_lone_surrogate_is_bad_input(capsys, index_dir: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(f'{{"question": "{QUESTION}"}}\n', encoding="utf-8")
    code, _out, err = run_cli(
        capsys, "eval", questions, "--index", index_dir, "--condition", f"A{LONE}:level=0", "--condition", "B:level=1",
        "--judge", "offline", "--model", "offline", "--eval-db", tmp_path / "e.sqlite3", "--no-store", "--no-cache",
    )
    assert code == EXIT_USAGE, err
    assert "not valid Unicode" in err and "Traceback" not in err
