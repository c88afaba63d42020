"""Issue 10: bad input reads clearly (file, line or row, field), never a traceback or silence."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphrag_app.loaders import IndexAccessError, resolve_source
from graphrag_app.settings import settings_from_mapping
from graphrag_cli.context import EXIT_INDEX, EXIT_USAGE
from graphrag_cli.main import main
from graphrag_core.errors import IndexFormatError, IndexValidationError, RequestValidationError
from graphrag_core.index import load_index, save_index
from graphrag_core.request import SEED_MAX, GlobalSearchRequest

from . import APP_ROOT
from .factories import small_index
from .test_index_msgraphrag import file_name, fixture_tables, write_fixture


def native_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "native"
    save_index(small_index(), folder)
    return folder


def rewrite_line(path: Path, number: int, change) -> None:  # type: ignore[no-untyped-def]
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[number - 1])
    change(record)
    lines[number - 1] = json.dumps(record, allow_nan=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# -- Microsoft GraphRAG tables ------------------------------------------------------------------


@pytest.mark.parametrize("table", ["communities", "community_reports"])
def test_an_empty_graphrag_table_is_an_index_format_error_naming_it(tmp_path: Path, table: str) -> None:
    folder = write_fixture(tmp_path / "out", "v3")
    empty = {name: [] for name in fixture_tables("v3")[table]}
    schema = pq.read_schema(folder / file_name("v3", table))
    pq.write_table(pa.table(empty, schema=schema), folder / file_name("v3", table))
    with pytest.raises(IndexFormatError, match=rf"{table}\.parquet: the table has no rows"):
        load_index(folder)


def test_every_table_empty_is_a_clear_error_in_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_fixture(tmp_path / "out", "v3")
    for path in folder.iterdir():
        pq.write_table(pq.read_table(path).slice(0, 0), path)
    code = main(["inspect", str(folder)], environ={})
    err = capsys.readouterr().err
    assert code == EXIT_INDEX and "communities.parquet: the table has no rows" in err and "Traceback" not in err


@pytest.mark.parametrize(("table", "column", "values", "row"), [
    ("community_reports", "rank", [8.5, math.nan, 6.0, 5.5], 1),
    ("relationships", "weight", [2.0, math.inf], 1),
])
def test_nan_numbers_in_graphrag_tables_name_file_row_and_field(tmp_path: Path, table: str, column: str, values: list, row: int) -> None:
    folder = write_fixture(tmp_path / "out", "v3", edit={table: {column: values}})
    with pytest.raises(IndexValidationError, match=rf'{table}\.parquet row {row}, field "{column}": (nan|inf) is not a finite number'):
        load_index(folder).load_tables()  # reports open with the index, relationships when they are read


# -- the native format --------------------------------------------------------------------------


def test_nan_rank_in_a_native_index_names_file_line_and_field(tmp_path: Path) -> None:
    folder = native_folder(tmp_path)
    rewrite_line(folder / "communities.jsonl", 2, lambda r: r.update(rank=math.nan))
    with pytest.raises(IndexValidationError, match=r'communities\.jsonl line 2, field "rank": .*finite number'):
        load_index(folder)


@pytest.mark.parametrize("field", ["id", "parent_id"])
def test_float_ids_are_refused_not_turned_into_text(tmp_path: Path, field: str) -> None:
    folder = native_folder(tmp_path)
    rewrite_line(folder / "communities.jsonl", 3, lambda r: r.update({field: 1.5}))
    with pytest.raises(IndexValidationError, match=rf'communities\.jsonl line 3, field "{field}": .*not the number 1\.5'):
        load_index(folder)


def test_a_claim_on_a_non_leaf_community_is_refused(tmp_path: Path) -> None:
    index = small_index()
    parent = next(c.id for c in index.communities if any(k.parent_id == c.id for k in index.communities))
    folder = native_folder(tmp_path)
    rewrite_line(folder / "claims.jsonl", 1, lambda r: r.update(community_id=parent))
    index = load_index(folder)
    with pytest.raises(IndexValidationError, match=r'claims\.jsonl line 1, field "community_id": .*not a leaf'):
        index.claims


def test_a_manifest_json_folder_says_so(tmp_path: Path) -> None:
    folder = native_folder(tmp_path)
    (folder / "manifest.json").unlink()
    (folder / "manifest.json").mkdir()
    with pytest.raises(IndexFormatError) as caught:
        load_index(folder)
    message = str(caught.value)
    assert "manifest.json: is a folder" in message and "not an index folder" not in message


def test_a_file_symlink_out_of_the_allowed_roots_is_refused(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    folder = native_folder(allowed)
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "communities.jsonl"
    (folder / "communities.jsonl").rename(secret)
    (folder / "communities.jsonl").symlink_to(secret)
    app = settings_from_mapping({"GRAPHRAG_EXPLORER_ALLOWED_ROOTS": str(allowed)})
    with pytest.raises(IndexAccessError, match=r"communities\.jsonl links to .*outside the folders this app may open"):
        resolve_source(str(folder), app)
    (allowed / "inside.jsonl").write_text("", encoding="utf-8")
    (folder / "claims-copy.jsonl").symlink_to(allowed / "inside.jsonl")  # a link that stays inside is fine
    secret.rename(tmp_path / "gone")
    (folder / "communities.jsonl").unlink()
    (tmp_path / "gone").rename(folder / "communities.jsonl")
    assert resolve_source(str(folder), app).path == folder.resolve()


# -- request values -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [2**64, 2**63, -(2**63) - 1])
def test_a_seed_beyond_64_bits_is_refused_up_front(seed: int) -> None:
    with pytest.raises(RequestValidationError, match=r"seed must be between .* \(a 64-bit integer\)"):
        GlobalSearchRequest(query="q", seed=seed)
    assert GlobalSearchRequest(query="q", seed=SEED_MAX).seed == SEED_MAX


def test_a_huge_seed_is_a_usage_error_in_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["query", "jargon", "x", "--seed", str(2**64), "--store", str(tmp_path / "runs.sqlite3")], environ={})
    err = capsys.readouterr().err
    assert code == EXIT_USAGE and "seed must be between" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "arguments",
    [
        ["query", "jargon", "x", "--seed", "-1"],
        ["query", "jargon", "x", "--seed", str(2**31)],
        ["sweep", "jargon", "x", "--seeds", "1,-2"],
    ],
    ids=["negative", "past-the-range", "a-sweep-s-seeds"],
)
def test_a_seed_outside_the_one_range_is_a_usage_error_in_the_cli(arguments: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([*arguments, "--store", str(tmp_path / "runs.sqlite3"), "--no-cache"], environ={})
    err = capsys.readouterr().err
    assert code == EXIT_USAGE and "seed must be between 0 and 2147483647" in err and "Traceback" not in err


# -- the command line ---------------------------------------------------------------------------


def test_a_level_the_index_lacks_is_exit_2_naming_the_levels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["query", "jargon", "What?", "--level", "7", "--no-store", "--no-cache"], environ={})
    captured = capsys.readouterr()
    assert code == EXIT_USAGE and captured.out == ""
    assert "--level 7: the index" in captured.err and "its levels are leaf, 0, 1, 2." in captured.err
    code = main(["sweep", "jargon", "What?", "--levels", "leaf,9", "--no-store", "--no-cache"], environ={})
    assert code == EXIT_USAGE and "--levels 9:" in capsys.readouterr().err


def test_runs_list_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    import asyncio
    import os
    import subprocess
    import sys

    from graphrag_core.llm.scripted import ScriptedChatModel
    from graphrag_core.search import retrieve_global
    from graphrag_core.history import RunRecord, RunStore

    events: list = []
    asyncio.run(retrieve_global(small_index(), GlobalSearchRequest(query="q", seed=1), ScriptedChatModel('{"answer": "a", "usefulness": 5}'), on_event=events.append))
    store = RunStore(tmp_path / "runs.sqlite3")
    record = RunRecord.from_events(events, index_name="small")
    for i in range(40):  # about 200 kB of listing: more than a pipe holds, so the writer meets the closed end
        store.save(record.model_copy(update={"run_id": f"run{i}", "query": "a long question " * 300}))
    root = APP_ROOT
    process = subprocess.Popen(
        [sys.executable, "-m", "graphrag_core", "runs", "--store", str(store.path), "list", "--limit", "40"],
        cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()  # what `| head -1` does
    err = process.stderr.read().decode()
    assert process.wait(60) == 0
    assert first.startswith(b"run") and "BrokenPipeError" not in err and "Traceback" not in err
