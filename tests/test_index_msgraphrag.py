"""Importing Microsoft GraphRAG outputs: small parquet fixtures per layout, and the real samples."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphrag_core.errors import IndexFormatError, IndexValidationError
from graphrag_core.index import detect_format, load_index, save_index
from graphrag_core.models import Index

from . import MSGRAPHRAG_DATA

REAL_FOLDERS = ("v3-operation-dulce", "v2-christmas-carol", "v1-operation-dulce")
VERSIONS = ("v3", "v2", "v1")

# -- fixtures written by the tests ----------------------------------------------------------------
#
# Communities: 0 (root) -> 2, 3 (leaves at level 1); 1 is a root leaf.
# Entities ALICE (in 0, 2), BOB (in 0, 3), CAROL (in 1), DAVE (in no community).
# Text units u1, u2 (document d1), u3, u4 (document d2); u4 is in no community.
# Claims: k1 ALICE -> leaf 2 by entity; k2 BOB -> leaf 3 by entity; k3 an unknown subject -> leaf 1
# by its text unit u3; k4 DAVE -> leaf 2 by text unit u1; k5 fits nowhere; k6 CAROL -> leaf 1.

LIST = pa.list_(pa.string())


def fixture_tables(version: str) -> dict[str, dict[str, Any]]:
    """Column data of each table, in the given GraphRAG layout."""
    communities: dict[str, Any] = {
        "id": ["uuid-c0", "uuid-c1", "uuid-c2", "uuid-c3"],
        "human_readable_id": [0, 1, 2, 3],
        "community": [0, 1, 2, 3],
        "level": [0, 0, 1, 1],
        "parent": [-1, -1, 0, 0],
        "title": ["Community 0", "Community 1", "Community 2", "Community 3"],
        "entity_ids": pa.array([["e-a", "e-b"], ["e-c"], ["e-a"], ["e-b"]], LIST),
        "relationship_ids": pa.array([["r1"], [], [], []], LIST),
        "text_unit_ids": pa.array([["u1", "u2"], ["u3"], ["u1"], ["u2"]], LIST),
        "period": ["2024-01-01"] * 4,
        "size": [2, 1, 1, 1],
    }
    reports: dict[str, Any] = {
        "id": ["rep-0", "rep-1", "rep-2", "rep-3"],
        "human_readable_id": [0, 1, 2, 3],
        "community": [0, 1, 2, 3],
        "level": [0, 0, 1, 1],
        "parent": [-1, -1, 0, 0],
        "title": ["Alice and Bob", "Carol", "Alice", "Bob"],
        "summary": [f"Short summary {i}." for i in range(4)],
        "full_content": [f"# Report {i}\n\nFull content {i}." for i in range(4)],
        "rank": [8.5, 3.0, 6.0, 5.5],
        "findings": pa.array(
            [[{"summary": "s", "explanation": "e"}]] * 4,
            pa.list_(pa.struct([("explanation", pa.string()), ("summary", pa.string())])),
        ),
        "full_content_json": ["{}"] * 4,
        "period": ["2024-01-01"] * 4,
        "size": [2, 1, 1, 1],
    }
    entities = {
        "id": ["e-a", "e-b", "e-c", "e-d"],
        "human_readable_id": [0, 1, 2, 3],
        "title": ["ALICE", "BOB", "CAROL", "DAVE"],
        "type": ["PERSON", "PERSON", "PERSON", None],
        "description": ["Alice.", "Bob.", "Carol.", None],
        "text_unit_ids": pa.array([["u1"], ["u2"], ["u3"], ["u1"]], LIST),
    }
    relationships = {
        "id": ["r1", "r2"],
        "human_readable_id": [0, 1],
        "source": ["ALICE", "ALICE"],
        "target": ["BOB", "ZED"],
        "description": ["Alice knows Bob.", "Alice knows Zed."],
        "weight": [2.0, 1.0],
        "combined_degree": [2, 1],
        "text_unit_ids": pa.array([["u1"], ["u1"]], LIST),
    }
    covariates = {
        "id": ["k1", "k2", "k3", "k4", "k5", "k6"],
        "human_readable_id": [0, 1, 2, 3, 4, 5],
        "covariate_type": ["claim"] * 6,
        "type": ["FACT"] * 6,
        "description": ["Alice did a.", "Bob did b.", "Someone did c.", "Dave did d.", "Nobody did e.", None],
        "subject_id": ["ALICE", "BOB", "SOMEONE", "DAVE", "NOBODY", "CAROL"],
        "object_id": ["NONE", "CAROL", "NONE", "ALICE", "NONE", "NONE"],
        "status": ["TRUE"] * 6,
        "start_date": ["NONE"] * 6,
        "end_date": ["NONE"] * 6,
        "source_text": ["..."] * 6,
        "text_unit_id": ["u1", "u2", "u3", "u1", "u4", "u3"],
    }
    text_units: dict[str, Any] = {
        "id": ["u1", "u2", "u3", "u4"],
        "human_readable_id": [0, 1, 2, 3],
        "text": ["Alice met Bob.", "Bob met Carol.", "Carol — naïve.", "Unrelated."],
        "n_tokens": [3, 3, 3, 1],
    }
    documents: dict[str, Any] = {
        "id": ["d1", "d2"],
        "human_readable_id": [0, 1],
        "title": ["first.txt", "second.txt"],
        "text": ["...", "..."],
        "text_unit_ids": pa.array([["u1", "u2"], ["u3", "u4"]], LIST),
    }
    owners = ["d1", "d1", "d2", "d2"]
    if version == "v3":
        text_units["document_id"] = owners
    else:
        text_units["document_ids"] = pa.array([[o] for o in owners], LIST)
    if version in ("v2", "v3"):
        children = pa.array([[2, 3], [], [], []], pa.list_(pa.int64()))
        communities["children"] = children
        reports["children"] = children
        reports["rating_explanation"] = ["why"] * 4
    else:
        reports["rank_explanation"] = ["why"] * 4
    return {
        "communities": communities,
        "community_reports": reports,
        "entities": entities,
        "relationships": relationships,
        "covariates": covariates,
        "text_units": text_units,
        "documents": documents,
    }


def file_name(version: str, table: str) -> str:
    return ("create_final_" if version == "v1" else "") + table + ".parquet"


def write_fixture(folder: Path, version: str, *, edit: dict[str, dict[str, Any]] | None = None, drop: tuple[str, ...] = ()) -> Path:
    """Write the fixture tables; ``edit`` replaces (or, with None, removes) columns per table."""
    folder.mkdir(parents=True, exist_ok=True)
    for table, columns in fixture_tables(version).items():
        if table in drop:
            continue
        for column, values in (edit or {}).get(table, {}).items():
            if values is None:
                columns.pop(column, None)
            else:
                columns[column] = values
        pq.write_table(pa.table(columns), folder / file_name(version, table))
    return folder



# -- the mapping, per layout --------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_fixture_loads_with_the_documented_mapping(tmp_path: Path, version: str) -> None:
    folder = write_fixture(tmp_path / version, version)
    assert detect_format(folder) == f"msgraphrag-{version}"
    index = load_index(folder)

    assert [c.id for c in index.communities] == ["0", "1", "2", "3"]
    assert [c.parent_id for c in index.communities] == [None, None, "0", "0"]
    assert [c.level for c in index.communities] == [0, 0, 1, 1]
    assert [c.title for c in index.communities] == ["Alice and Bob", "Carol", "Alice", "Bob"]
    assert index.community(2).summary == "# Report 2\n\nFull content 2."
    assert index.community(0).rank == 8.5 and index.community(0).size == 2
    assert index.community(0).entity_ids == ("e-a", "e-b")

    attached = {claim.id: claim.community_id for claim in index.claims}
    assert attached == {"k1": "2", "k2": "3", "k3": "1", "k4": "2", "k6": "1"}
    k2 = index.claim("k2")
    assert (k2.subject, k2.object, k2.description, k2.chunk_ids) == ("BOB", "CAROL", "Bob did b.", ("u2",))
    assert index.claim("k1").object is None  # "NONE" means no object
    assert index.claim("k6").description == ""

    assert [(c.id, c.document_id) for c in index.chunks] == [("u1", "d1"), ("u2", "d1"), ("u3", "d2"), ("u4", "d2")]
    assert index.chunk("u3").text == "Carol — naïve."
    assert [(d.id, d.title) for d in index.documents] == [("d1", "first.txt"), ("d2", "second.txt")]
    assert {e.title: e.community_ids for e in index.entities} == {
        "ALICE": ("0", "2"),
        "BOB": ("0", "3"),
        "CAROL": ("1",),
        "DAVE": (),
    }
    assert index.entities[3].type is None and index.entities[3].description == ""
    assert [(r.source, r.target, r.weight) for r in index.relationships] == [("ALICE", "BOB", 2.0), ("ALICE", "ZED", 1.0)]

    assert index.warnings == (
        '1 of 6 claims could not be attached to a leaf community (neither their subject entity nor their '
        'text unit is in one) and were left out: "k5".',
        '1 relationship ends name no entity title: "r2" (target "ZED").',
    )
    assert index.name == version
    assert f"({version} layout)" in index.description


@pytest.mark.parametrize("version", VERSIONS)
def test_summary_option_picks_the_short_summary(tmp_path: Path, version: str) -> None:
    folder = write_fixture(tmp_path, version)
    assert load_index(folder, summary="summary").community(1).summary == "Short summary 1."
    assert load_index(folder, summary="full_content").community(1).summary == "# Report 1\n\nFull content 1."


def test_unknown_summary_option() -> None:
    with pytest.raises(ValueError, match='summary must be "full_content" or "summary"'):
        load_index(".", summary="title")  # type: ignore[arg-type]


@pytest.mark.parametrize("version", VERSIONS)
def test_imported_index_round_trips_through_the_native_format(tmp_path: Path, version: str) -> None:
    index = load_index(write_fixture(tmp_path / "in", version))
    save_index(index, tmp_path / "out")
    assert load_index(tmp_path / "out") == index


def test_optional_tables_may_be_absent(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path, "v3", drop=("entities", "relationships", "covariates", "documents"))
    index = load_index(folder)
    assert (len(index.communities), len(index.claims), len(index.chunks)) == (4, 0, 4)
    assert index.entities == () and index.relationships == () and index.warnings == ()


def test_without_entities_claims_attach_by_text_unit(tmp_path: Path) -> None:
    index = load_index(write_fixture(tmp_path, "v3", drop=("entities",)))
    assert {c.id: c.community_id for c in index.claims} == {"k1": "2", "k2": "3", "k3": "1", "k4": "2", "k6": "1"}


def test_string_community_numbers_are_accepted(tmp_path: Path) -> None:
    folder = write_fixture(
        tmp_path,
        "v3",
        edit={
            "communities": {"community": ["0", "1", "2", "3"], "parent": ["-1", "-1", "0", "0"]},
            "community_reports": {"community": ["0", "1", "2", "3"]},
        },
    )
    assert [c.parent_id for c in load_index(folder).communities] == [None, None, "0", "0"]


def test_a_community_without_report_is_a_warning(tmp_path: Path) -> None:
    tables = fixture_tables("v3")["community_reports"]
    keep = {k: (v[:3] if isinstance(v, list) else v.slice(0, 3)) for k, v in tables.items()}
    folder = write_fixture(tmp_path, "v3", edit={"community_reports": keep})
    index = load_index(folder)
    assert index.community(3).summary == "" and index.community(3).title == "Community 3"
    assert '1 communities have no report, so no summary: "3".' in index.warnings


def test_output_folder_is_named_after_its_project(tmp_path: Path) -> None:
    assert load_index(write_fixture(tmp_path / "my-project" / "output", "v3")).name == "my-project"


# -- layouts and validation errors ----------------------------------------------------------------------


def error_of(folder: Path, kind: type[Exception] = IndexValidationError, *, when: str = "opened") -> IndexValidationError:
    """The error ``folder`` raises when it is opened or, with ``when="read"``, only once its
    other tables are read (opening reads the communities and reports and every table's columns)."""
    if when == "opened":
        with pytest.raises(kind) as caught:
            load_index(folder)
    else:
        index = load_index(folder)
        with pytest.raises(kind) as caught:
            index.load_tables()
    error = caught.value
    assert isinstance(error, IndexValidationError)
    return error


def test_missing_reports_table(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path, "v3", drop=("community_reports",))
    error = error_of(folder, IndexFormatError)
    assert str(error) == (
        f"{folder}: looks like a Microsoft GraphRAG 2.x/3.x output (found communities.parquet) "
        "but is missing community_reports.parquet."
    )


def test_missing_v1_communities_table(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path, "v1", drop=("communities",))
    assert str(error_of(folder, IndexFormatError)) == (
        f"{folder}: looks like a Microsoft GraphRAG 1.x output (found create_final_community_reports.parquet) "
        "but is missing create_final_communities.parquet."
    )


def test_0x_output_without_its_nodes_table(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path, "v1", edit={"communities": {"parent": None}})
    assert detect_format(folder) == "msgraphrag-v0"
    error = error_of(folder, IndexFormatError)
    assert str(error) == (
        f"{folder}: a Microsoft GraphRAG 0.x output (create_final_communities.parquet has no parent column); "
        "its parent links come from create_final_nodes.parquet, which is missing."
    )
    assert error.path == str(folder / "create_final_nodes.parquet")


def test_unknown_layout_names_what_was_found(tmp_path: Path) -> None:
    (tmp_path / "output").mkdir()
    (tmp_path / "settings.yaml").write_text("x")
    error = error_of(tmp_path, IndexFormatError)
    assert "Found: output, settings.yaml." in str(error)
    assert "communities.parquet, community_reports.parquet" in str(error)
    assert 'It has an "output" subfolder' in str(error)


def test_covariates_without_text_units(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path, "v3", drop=("text_units",))
    assert "is missing text_units.parquet" in str(error_of(folder, IndexFormatError))


def test_mistyped_column(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path, "v3", edit={"communities": {"level": ["0", "0", "1", "1"]}})
    error = error_of(folder)
    assert str(error) == 'communities.parquet, field "level": expected integers, found column type string.'
    assert error.field == "level"


def test_null_in_a_required_column(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path, "v2", edit={"covariates": {"subject_id": ["ALICE", "BOB", None, "DAVE", "X", "Y"]}})
    error = error_of(folder, when="read")
    assert str(error) == 'covariates.parquet row 2, field "subject_id": missing value (null).'
    assert (error.row, error.field) == (2, "subject_id")


@pytest.mark.parametrize(
    ("version", "edit", "message"),
    [
        pytest.param(
            "v3", {"communities": {"level": [0, -1, 1, 1]}},
            'communities.parquet row 1, field "level": level -1 is negative; levels count from 0.',
            id="negative-level",
        ),
        pytest.param(
            "v3", {"community_reports": {"community": [0, 1, 2, 2]}},
            'community_reports.parquet row 3, field "community": a second report for community "2" (first at row 2).',
            id="duplicate-report",
        ),
        pytest.param(
            "v3", {"community_reports": {"community": [0, 1, 2, 12]}},
            'community_reports.parquet row 3, field "community": the report is for community "12", which communities.parquet does not hold.',
            id="report-for-an-unknown-community",
        ),
        pytest.param(
            "v1", {"communities": {"parent": [3, -1, 0, 0], "level": [2, 0, 3, 1]}},
            'create_final_communities.parquet row 0, field "parent": the parent links form a cycle: "0" -> "3" -> "0".',
            id="cycle-of-parents",
        ),
        pytest.param(
            "v3", {"communities": {"level": [0, 0, 1, 2]}},
            'communities.parquet row 3, field "level": community "3" has level 2, but its parent "0" has level 0; '
            "a child's level must be its parent's + 1.",
            id="level-not-parents-plus-one",
        ),
        pytest.param(
            "v3", {"text_units": {"document_id": ["d1", "d1", "d7", "d2"]}},
            'text_units.parquet row 2, field "document_id": chunk "u3" names document "d7", which does not exist.',
            id="chunk-names-an-unknown-document",
        ),
    ],
)
def test_one_bad_column_names_its_file_row_and_field(tmp_path: Path, version: str, edit: dict, message: str) -> None:
    when = "opened" if set(edit) <= {"communities", "community_reports"} else "read"
    assert str(error_of(write_fixture(tmp_path, version, edit=edit), when=when)) == message


def test_duplicate_community(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path, "v3", edit={"communities": {"community": [0, 1, 2, 1]}})
    error = error_of(folder)
    assert str(error) == 'communities.parquet row 3, field "community": duplicate community "1" (first at row 1).'
    assert error.path == str(folder / "communities.parquet")


def test_parent_that_does_not_exist(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path, "v3", edit={"communities": {"parent": [-1, -1, 0, 9]}})
    error = error_of(folder)
    assert str(error) == 'communities.parquet row 3, field "parent": community "3" names parent "9", which does not exist.'
    assert (error.row, error.field, error.path) == (3, "parent", str(folder / "communities.parquet"))


def test_claim_naming_an_unknown_text_unit(tmp_path: Path) -> None:
    folder = write_fixture(
        tmp_path, "v2", edit={"covariates": {"text_unit_id": ["u1", "u2", "u3", "u9", "u4", "u3"]}}
    )
    error = error_of(folder, when="read")
    assert str(error) == 'covariates.parquet row 3, field "text_unit_id": claim "k4" names text unit "u9", which does not exist.'


def test_unreadable_parquet(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path, "v3")
    (folder / "entities.parquet").write_bytes(b"not parquet")
    assert str(error_of(folder)).startswith("entities.parquet: not a readable parquet file (")


# -- the real GraphRAG outputs in ../shared -------------------------------------------------------------


def real_folder(name: str) -> Path:
    folder = MSGRAPHRAG_DATA / name
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent (the real GraphRAG samples live outside the repository)")
    return folder


def rows(folder: Path, table: str) -> int:
    prefix = "create_final_" if (folder / "create_final_communities.parquet").exists() else ""
    path = folder / f"{prefix}{table}.parquet"
    return pq.read_metadata(path).num_rows if path.exists() else 0


def left_out(index: Index) -> int:
    for warning in index.warnings:
        match = re.match(r"(\d+) of \d+ claims could not be attached", warning)
        if match:
            return int(match.group(1))
    return 0


@pytest.mark.parametrize("name", REAL_FOLDERS)
def test_real_output_loads_with_the_parquet_counts(name: str) -> None:
    folder = real_folder(name)
    index = load_index(folder)
    assert detect_format(folder) == "msgraphrag-" + name.split("-")[0]
    assert len(index.communities) == rows(folder, "communities") == rows(folder, "community_reports")
    assert len(index.chunks) == rows(folder, "text_units")
    assert len(index.documents) == rows(folder, "documents")
    assert len(index.entities) == rows(folder, "entities")
    assert len(index.relationships) == rows(folder, "relationships")
    assert len(index.claims) + left_out(index) == rows(folder, "covariates")
    prefix = "create_final_" if name.startswith("v1") else ""
    reports = pq.read_table(folder / f"{prefix}community_reports.parquet", columns=["community", "full_content"])
    for community, content in zip(reports.column("community").to_pylist(), reports.column("full_content").to_pylist()):
        assert index.has_community(community), f"report for community {community} is not reachable"
        assert index.community(community).summary == content
    assert all(c.summary.strip() for c in index.communities)


@pytest.mark.parametrize("name", REAL_FOLDERS)
def test_real_output_round_trips_through_the_native_format(tmp_path: Path, name: str) -> None:
    index = load_index(real_folder(name), summary="summary")
    save_index(index, tmp_path)
    assert load_index(tmp_path / "manifest.json") == index


@pytest.mark.parametrize("name", REAL_FOLDERS)
def test_global_search_completes_at_every_level(name: str) -> None:
    index = load_index(real_folder(name))
    from graphrag_core.llm.scripted import ScriptedChatModel
    from graphrag_core.request import GlobalSearchRequest
    from graphrag_core.search import retrieve_global

    for level in index.levels():
        model = ScriptedChatModel(
            lambda req: '{"answer": "x", "usefulness": 50}' if req.purpose == "map" else '{"answer": "final"}'
        )
        result = asyncio.run(
            retrieve_global(index, GlobalSearchRequest(query="What are the main themes?", community_level=level, seed=1), model)
        )
        assert result.status == "completed", (name, level)
