"""Issue 39, item 5: reading the run history needs no space, and a file that is not one of ours
is named with what is wrong, in a sentence (never a raw SQLite message, never a change to it)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from graphrag_cli.context import EXIT_OK, EXIT_USAGE
from graphrag_core.history import RunStore, StoreError
from graphrag_core.history.migrations import SCHEMA_VERSION
from graphrag_core.index import save_index
from graphrag_core.llm.scripted import ScriptedChatModel

from . import factories
from .cli_support import QUESTION, run_cli
from .disk_support import fill, full_disk  # noqa: F401 - the fixture


def _reply(request):  # type: ignore[no-untyped-def]
    if request.purpose == "map":
        return '{"answer": "The mill matters [Communities: a].", "usefulness": 60}'
    return json.dumps({"answer": "The mill [Communities: a]."})


def test_runs_list_show_and_export_read_a_history_on_a_full_disk(capsys, tmp_path, full_disk) -> None:  # type: ignore[no-untyped-def]
    index = tmp_path / "index"
    save_index(factories.make_index(), index)
    store = full_disk / "runs.sqlite3"
    code, _, err = run_cli(capsys, "query", index, QUESTION, "--store", store, "--no-cache", model=ScriptedChatModel(_reply))
    assert code == EXIT_OK, err
    (run,) = RunStore(store).list_runs()
    fill(full_disk)
    held = store.read_bytes()

    code, out, err = run_cli(capsys, "runs", "--store", store, "list")
    assert code == EXIT_OK, err
    assert run.run_id in out and "completed" in out
    code, out, err = run_cli(capsys, "runs", "--store", store, "show", run.run_id)
    assert code == EXIT_OK and "The mill [Communities: a]." in out, err
    code, out, err = run_cli(capsys, "runs", "--store", store, "show", run.run_id, "--json")
    assert code == EXIT_OK and json.loads(out)["run_id"] == run.run_id, err
    report = tmp_path / "run.md"
    code, out, err = run_cli(capsys, "runs", "--store", store, "export", run.run_id, "--markdown", report)
    assert code == EXIT_OK and "The mill [Communities: a]." in report.read_text(encoding="utf-8"), err
    assert store.read_bytes() == held, "reading changed nothing"

    # what needs space says so, naming the file
    code, _, err = run_cli(capsys, "runs", "--store", store, "delete", run.run_id)
    assert code == EXIT_USAGE and str(store) in err and "Traceback" not in err


def test_a_history_that_is_not_there_is_listed_as_empty_and_not_made(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "nowhere" / "runs.sqlite3"
    code, out, err = run_cli(capsys, "runs", "--store", store, "list")
    assert code == EXIT_OK and out == "", err
    code, _, err = run_cli(capsys, "runs", "--store", store, "show", "abc")
    assert code == EXIT_USAGE and "No run 'abc'" in err
    assert not store.parent.exists(), "reading made no file and no folder"


FOREIGN = {
    "another program's database": (["CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)"], "users"),
    "a runs table of another shape": (["CREATE TABLE runs (id INTEGER PRIMARY KEY, started TEXT)"], "runs"),
    "a version but no runs": (["CREATE TABLE schema_version (version INTEGER)", f"INSERT INTO schema_version VALUES ({SCHEMA_VERSION})"], "no table runs"),
    "a version that is no number": (["CREATE TABLE schema_version (version TEXT)", "INSERT INTO schema_version VALUES ('abc')"], "'abc'"),
    "a schema_version of another shape": (["CREATE TABLE schema_version (v INTEGER)"], "schema_version"),
    "an old version of another shape": (
        ["CREATE TABLE schema_version (version INTEGER)", "INSERT INTO schema_version VALUES (1)", "CREATE TABLE runs (id INTEGER PRIMARY KEY)"],
        "its table runs lacks the columns run_id",
    ),
    "runs without its columns": (
        ["CREATE TABLE schema_version (version INTEGER)", f"INSERT INTO schema_version VALUES ({SCHEMA_VERSION})", "CREATE TABLE runs (run_id TEXT PRIMARY KEY)",
         "CREATE TABLE run_events (run_id TEXT, seq INTEGER, event_json TEXT)"],
        "created_at",
    ),
}


@pytest.mark.parametrize("case", list(FOREIGN), ids=list(FOREIGN))
@pytest.mark.parametrize("action", [("list",), ("show", "abc"), ("delete", "abc")], ids=["list", "show", "delete"])
def test_a_history_of_a_foreign_schema_is_named_in_a_sentence_and_left_alone(capsys, tmp_path, case, action) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "foreign.sqlite3"
    statements, detail = FOREIGN[case]
    with sqlite3.connect(store) as conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()
    held = store.read_bytes()
    code, out, err = run_cli(capsys, "runs", "--store", store, *action)
    assert code == EXIT_USAGE and out == ""
    assert f"{store}: not a run history of graphrag-explorer" in err and detail in err
    assert "nothing was changed" in err and "no such" not in err and "Traceback" not in err
    assert store.read_bytes() == held
    assert sorted(p.name for p in tmp_path.iterdir()) == ["foreign.sqlite3"]


def test_the_engine_says_the_same_sentence(tmp_path: Path) -> None:
    store = tmp_path / "other.sqlite3"
    with sqlite3.connect(store) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY)")
    conn.close()
    for opened in (lambda: RunStore(store), lambda: RunStore(store, read_only=True)):
        with pytest.raises(StoreError, match=r"not a run history of graphrag-explorer: it holds the table users"):
            opened()
