"""Issue 28: every GraphRAG output people have opens: 0.3-0.9 outputs (parent links from
``create_final_nodes``), 3.x tables written as CSV, and a GraphRAG project root. Each form is
built here from the parquet fixture of ``test_index_msgraphrag`` and must read as the same index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphrag_cli.context import EXIT_OK
from graphrag_cli.main import main
from graphrag_core.errors import IndexFormatError, IndexValidationError
from graphrag_core.index import detect_format, index_files, load_index, resolve_index_folder
from graphrag_core.index.tables import parse_id_list
from graphrag_core.models import Index

from .test_index_msgraphrag import LIST, file_name, fixture_tables, write_fixture


def content(index: Index) -> dict[str, Any]:
    """What an index holds, whatever it was read from (not its name or description)."""
    index.load_tables()
    return index.model_dump(exclude={"name", "description"})


def write_tables(folder: Path, tables: dict[str, dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, columns in tables.items():
        pq.write_table(pa.table(columns), folder / f"create_final_{name}.parquet")
    return folder


# -- GraphRAG 0.x ----------------------------------------------------------------------------------------


def v09_tables() -> dict[str, dict[str, Any]]:
    """The fixture as GraphRAG 0.5-0.9 writes it: no ``parent``; ``create_final_nodes`` gives each
    entity its community at every level (-1: none)."""
    tables = fixture_tables("v1")
    del tables["communities"]["parent"]
    tables["nodes"] = {
        "id": ["e-a", "e-b", "e-c", "e-d", "e-a", "e-b"],
        "human_readable_id": [0, 1, 2, 3, 0, 1],
        "title": ["ALICE", "BOB", "CAROL", "DAVE", "ALICE", "BOB"],
        "community": [0, 0, 1, -1, 2, 3],
        "level": [0, 0, 0, 0, 1, 1],
        "degree": [1, 1, 0, 0, 1, 1],
    }
    return tables


def v03_tables() -> dict[str, dict[str, Any]]:
    """The fixture as GraphRAG 0.3-0.4 writes it: communities named by ``id``/``raw_community``
    (text) with no members but relationships and comma-joined text units; entities with ``name``;
    nodes with text communities ("" for none); reports naming communities as text."""
    v1 = fixture_tables("v1")
    communities = {
        "id": ["0", "1", "2", "3"],
        "title": ["Community 0", "Community 1", "Community 2", "Community 3"],
        "level": [0, 0, 1, 1],
        "raw_community": ["0", "1", "2", "3"],
        "relationship_ids": pa.array([["r1"], [], [], []], LIST),
        "text_unit_ids": pa.array([["u1,u2"], ["u3"], ["u1"], ["u2"]], LIST),
    }
    reports = {key: v1["community_reports"][key] for key in ("full_content", "level", "rank", "title", "summary", "id")}
    reports["community"] = ["0", "1", "2", "3"]
    entities = dict(v1["entities"])
    entities["name"] = entities.pop("title")
    nodes = {
        "level": [0, 0, 0, 0, 1, 1, 1, 1],
        "title": ["ALICE", "BOB", "CAROL", "DAVE"] * 2,
        "community": ["0", "0", "1", "", "2", "3", "", ""],
        "id": ["e-a", "e-b", "e-c", "e-d"] * 2,
        "human_readable_id": [0, 1, 2, 3] * 2,
    }
    relationships = dict(v1["relationships"])
    relationships["human_readable_id"] = ["0", "1"]
    return {**v1, "communities": communities, "community_reports": reports, "entities": entities, "nodes": nodes, "relationships": relationships}


@pytest.mark.parametrize("form", [v09_tables, v03_tables], ids=["0.5-0.9", "0.3-0.4"])
def test_a_0x_output_reads_as_the_same_content_in_1x(tmp_path: Path, form: Any) -> None:
    folder = write_tables(tmp_path / "old" / "output", form())
    assert detect_format(folder) == "msgraphrag-v0"
    index = load_index(folder)
    assert [(c.id, c.parent_id, c.level) for c in index.communities] == [("0", None, 0), ("1", None, 0), ("2", "0", 1), ("3", "0", 1)]
    assert index.name == "old" and "(v0 layout)" in index.description
    expected = load_index(write_fixture(tmp_path / "v1", "v1"))
    assert content(index) == content(expected)


def test_0x_parents_follow_the_nodes_one_level_up(tmp_path: Path) -> None:
    tables = v09_tables()
    tables["nodes"]["community"] = [0, 1, 1, -1, 2, 3]  # BOB is in 1 at level 0, so 3 (BOB's at level 1) is under 1
    index = load_index(write_tables(tmp_path, tables))
    assert [(c.id, c.parent_id) for c in index.communities] == [("0", None), ("1", None), ("2", "0"), ("3", "1")]


def test_a_0x_community_without_nodes_at_its_level_is_a_root_with_a_warning(tmp_path: Path) -> None:
    tables = v09_tables()
    tables["nodes"]["level"] = [0, 0, 0, 0, 1, 2]  # BOB's second row sits at level 2: community 3 has no node
    index = load_index(write_tables(tmp_path, tables))
    assert index.community(3).parent_id is None
    assert index.warnings[0] == (
        "1 communities above level 0 have no parent: none of their nodes in create_final_nodes.parquet is in a "
        'community one level up, so they are read as roots: "3".'
    )


def test_0x_members_split_between_parents_follow_the_most_of_them(tmp_path: Path) -> None:
    tables = v09_tables()
    tables["nodes"] = {
        "id": ["e-a", "e-b", "e-c", "e-a", "e-b", "e-c"],
        "title": ["ALICE", "BOB", "CAROL"] * 2,
        "community": [0, 1, 1, 2, 2, 2],  # 2 holds ALICE (in 0 above) and BOB and CAROL (in 1 above)
        "level": [0, 0, 0, 1, 1, 1],
    }
    tables["communities"]["level"] = [0, 0, 1, 0]
    index = load_index(write_tables(tmp_path, tables))
    assert index.community(2).parent_id == "1"
    assert any(w.startswith("1 communities have nodes in several communities one level up") for w in index.warnings)


def test_a_0x_report_for_community_minus_one_is_left_out_with_a_warning(tmp_path: Path) -> None:
    tables = v09_tables()
    reports = tables["community_reports"]
    for key, values in reports.items():
        reports[key] = values.to_pylist() + [values.to_pylist()[0]] if isinstance(values, pa.Array) else [*values, values[0]]
    reports["community"][-1] = -1
    index = load_index(write_tables(tmp_path, tables))
    assert len(index.communities) == 4
    assert "create_final_community_reports.parquet has a report for community -1 (the entities in no community; row 4)" in index.warnings[0]


def test_a_0x_nodes_table_without_its_columns_is_named(tmp_path: Path) -> None:
    tables = v09_tables()
    del tables["nodes"]["level"]
    with pytest.raises(IndexFormatError, match=r"^create_final_nodes\.parquet: missing column level \(found: id, "):
        load_index(write_tables(tmp_path, tables))


# -- CSV tables (GraphRAG 3.x's csv table storage) ---------------------------------------------------


def to_csv(parquet: Path, *, lists: str) -> None:
    """Write a parquet table as GraphRAG's CSV storage does (pandas ``to_csv``): list cells as numpy
    prints them (``['a' 'b']``, the frames GraphRAG writes) or as Python lists (``['a', 'b']``)."""
    frame = pq.read_table(parquet).to_pandas()
    if lists == "python":
        frame = frame.map(lambda value: [*value] if isinstance(value, np.ndarray) else value)
    frame.to_csv(parquet.with_suffix(".csv"), index=False)
    parquet.unlink()


@pytest.mark.parametrize("lists", ["numpy", "python"])
@pytest.mark.parametrize("version", ["v3", "v2"])
def test_csv_tables_read_as_the_same_parquet_tables(tmp_path: Path, version: str, lists: str) -> None:
    expected = load_index(write_fixture(tmp_path / "parquet", version))
    folder = write_fixture(tmp_path / "csv", version)
    for path in sorted(folder.glob("*.parquet")):
        to_csv(path, lists=lists)
    assert sorted(p.suffix for p in folder.iterdir()) == [".csv"] * 7
    assert detect_format(folder) == f"msgraphrag-{version}"
    index = load_index(folder)
    assert f"({version} layout, CSV tables)" in index.description
    assert index.community(2).summary == "# Report 2\n\nFull content 2."  # a value over several lines
    assert content(index) == content(expected)


def test_csv_tables_saved_with_a_byte_order_mark_read_the_same(tmp_path: Path) -> None:
    expected = load_index(write_fixture(tmp_path / "parquet", "v3"))
    folder = write_fixture(tmp_path / "csv", "v3")
    for path in sorted(folder.glob("*.parquet")):
        to_csv(path, lists="python")
        csv_file = path.with_suffix(".csv")
        csv_file.write_bytes(b"\xef\xbb\xbf" + csv_file.read_bytes())  # as spreadsheet programs save
    assert content(load_index(folder)) == content(expected)


def test_long_numpy_lists_over_several_lines_are_read_whole(tmp_path: Path) -> None:
    ids = [f"entity-{n:040d}" for n in range(6)]
    folder = write_fixture(tmp_path, "v3", edit={"communities": {"entity_ids": pa.array([ids, ids[:1], ids[:2], ids[:3]], LIST)}})
    to_csv(folder / "communities.parquet", lists="numpy")
    assert "\n" in (folder / "communities.csv").read_text().split("\n", 1)[1].split('"')[1]  # numpy wrapped the list
    assert load_index(folder).community(0).entity_ids == tuple(ids)


def test_a_bad_csv_value_names_its_file_row_and_field(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path, "v3")
    to_csv(folder / "communities.parquet", lists="numpy")
    path = folder / "communities.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    row = lines[2].split(",")
    row[header.index("level")] = "one"
    lines[2] = ",".join(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(IndexValidationError) as caught:
        load_index(folder)
    assert str(caught.value) == 'communities.csv row 1, field "level": expected integers, found "one".'
    assert (caught.value.row, caught.value.field, caught.value.path) == (1, "level", str(path))


def test_a_csv_table_missing_a_column_names_what_it_has(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path, "v3", edit={"covariates": {"subject_id": None}})
    to_csv(folder / "covariates.parquet", lists="python")
    with pytest.raises(IndexFormatError, match=r"^covariates\.csv: missing column subject_id \(found: id, human_readable_id, "):
        load_index(folder)


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("['a', 'b']", ["a", "b"]),
        ("['a' 'b']", ["a", "b"]),
        ("['a'\n 'b']", ["a", "b"]),
        ('["a", "b"]', ["a", "b"]),
        ("[2 3]", ["2", "3"]),
        ("[2, 3]", ["2", "3"]),
        ("[]", []),
        ("a,b", ["a", "b"]),
        ("['it\\'s' 'x']", ["it's", "x"]),
        ("['a,b', 'c']", ["a,b", "c"]),
    ],
)
def test_csv_lists_in_every_form_graphrag_writes(text: str, ids: list[str]) -> None:
    assert parse_id_list(text) == ids


@pytest.mark.parametrize("text", ["[a b]", "['a' junk]", "[1.5]", "[{'a': 1}]", "['a'", "a]"])
def test_csv_text_that_is_no_list_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_id_list(text)


# -- GraphRAG project roots ---------------------------------------------------------------------------


def test_a_project_root_opens_its_output_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "my-project"
    write_fixture(root / "output", "v3")
    (root / "settings.yaml").write_text("models:\n  default_chat_model:\n    type: chat\n", encoding="utf-8")
    assert resolve_index_folder(root) == root / "output"
    assert detect_format(root) == "msgraphrag-v3"
    index = load_index(root)
    assert index.name == "my-project"
    assert content(index) == content(load_index(root / "output"))
    assert [p.name for p in index_files(root)] == sorted(file_name("v3", t) for t in fixture_tables("v3"))
    assert main(["inspect", str(root)], environ={}) == EXIT_OK
    assert "my-project" in capsys.readouterr().out


def test_a_project_root_follows_its_configured_output_folder(tmp_path: Path) -> None:
    write_fixture(tmp_path / "runs" / "latest", "v2")
    write_fixture(tmp_path / "output", "v3")  # the default, which the settings override
    (tmp_path / "settings.yaml").write_text(
        'input_storage:\n  base_dir: "input"\noutput_storage:\n  type: file # [file, blob, cosmosdb]\n  base_dir: "runs/latest"\n',
        encoding="utf-8",
    )
    assert resolve_index_folder(tmp_path) == tmp_path / "runs" / "latest"
    assert detect_format(tmp_path) == "msgraphrag-v2"


def test_a_0x_project_root_opens_its_newest_run(tmp_path: Path) -> None:
    write_tables(tmp_path / "output" / "20240801-101500" / "artifacts", v09_tables())
    newest = write_tables(tmp_path / "proj" / "output" / "20240902-093000" / "artifacts", v09_tables())
    write_tables(tmp_path / "proj" / "output" / "20240801-101500" / "artifacts", v03_tables())
    (tmp_path / "proj" / "settings.yaml").write_text('storage:\n  type: file\n  base_dir: "output/${timestamp}/artifacts"\n', encoding="utf-8")
    assert resolve_index_folder(tmp_path / "proj") == newest
    assert load_index(tmp_path / "proj").name == "proj"


def test_a_project_output_outside_the_project_is_not_followed(tmp_path: Path) -> None:
    write_fixture(tmp_path / "elsewhere", "v3")
    root = tmp_path / "proj"
    root.mkdir()
    (root / "settings.yaml").write_text(f"output:\n  base_dir: {tmp_path / 'elsewhere'}\n", encoding="utf-8")
    (root / "output").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(IndexFormatError) as caught:
        load_index(root)
    assert "It is a GraphRAG project (settings.yaml) whose output holds no index yet" in str(caught.value)


def test_a_project_never_indexed_says_so(tmp_path: Path) -> None:
    (tmp_path / "output").mkdir()
    (tmp_path / "settings.yaml").write_text("x")
    with pytest.raises(IndexFormatError) as caught:
        load_index(tmp_path)
    message = str(caught.value)
    assert "It is a GraphRAG project (settings.yaml) whose output holds no index yet" in message
    assert 'It has an "output" subfolder' in message
