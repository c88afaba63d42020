"""The native index format: round trip, file layout, and every validation error's message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphrag_core.errors import IndexFormatError, IndexValidationError
from graphrag_core.index import (
    NATIVE_FORMAT_VERSION,
    detect_format,
    load_index,
    save_index,
)
from graphrag_core.models import (
    Claim,
    Community,
    Document,
    Entity,
    Index,
    Relationship,
    SourceChunk,
)

from . import APP_ROOT


def sample_index() -> Index:
    return Index(
        communities=(
            Community(id="0", level=0, title="Root", summary="Über-summary — naïve ✓", rank=8.5, size=3, entity_ids=("e1", "e2")),
            Community(id="1", level=1, parent_id="0", title="Leaf A", summary="A", entity_ids=("e1",)),
            Community(id="2", level=1, parent_id="0", title="Leaf B", summary="", rank=None),
        ),
        claims=(
            Claim(id="k1", community_id="1", subject="ALICE", object="BOB", description="Alice met Bob.", chunk_ids=("c1",)),
            Claim(id="k2", community_id="2", subject="CAROL", description="Carol left.", chunk_ids=("c1", "c2")),
        ),
        chunks=(
            SourceChunk(id="c1", document_id="d1", text="Alice met Bob.\nThen \"Carol\" left."),
            SourceChunk(id="c2", document_id=None, text="日本語のテキスト"),
        ),
        documents=(Document(id="d1", title="Story"),),
        entities=(
            Entity(id="e1", title="ALICE", type="PERSON", description="a person", community_ids=("0", "1")),
            Entity(id="e2", title="BOB", community_ids=("0",)),
        ),
        relationships=(Relationship(id="r1", source="ALICE", target="BOB", description="met", weight=2.0),),
        name="Sample",
        description="A small index — for tests.",
        warnings=("3 claims could not be attached.",),
    )


# -- round trip and layout -------------------------------------------------------------------------


def test_round_trip_gives_an_equal_index(tmp_path: Path) -> None:
    """Index equality compares the record tuples and the metadata."""
    index = sample_index()
    save_index(index, tmp_path / "ix")
    loaded = load_index(tmp_path / "ix")
    assert loaded == index
    save_index(loaded, tmp_path / "again")
    assert load_index(str(tmp_path / "again")) == index


def test_saving_twice_writes_identical_bytes(tmp_path: Path) -> None:
    save_index(sample_index(), tmp_path / "a")
    save_index(load_index(tmp_path / "a"), tmp_path / "b")
    for path in sorted((tmp_path / "a").iterdir()):
        assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes(), path.name


def test_files_are_one_record_per_line_in_field_order_utf8(tmp_path: Path) -> None:
    save_index(sample_index(), tmp_path)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [
        "chunks.jsonl",
        "claims.jsonl",
        "communities.jsonl",
        "documents.jsonl",
        "entities.jsonl",
        "manifest.json",
        "relationships.jsonl",
    ]
    text = (tmp_path / "communities.jsonl").read_text(encoding="utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n")
    lines = text.splitlines()
    assert len(lines) == 3
    assert "Über-summary — naïve ✓" in lines[0]  # ensure_ascii=False
    assert list(json.loads(lines[0])) == list(Community.model_fields)
    chunk_lines = (tmp_path / "chunks.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(chunk_lines) == 2  # the newline inside a text stays escaped
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest == {
        "format": "graphrag-explorer-index",
        "format_version": NATIVE_FORMAT_VERSION,
        "name": "Sample",
        "description": "A small index — for tests.",
        "counts": {"communities": 3, "claims": 2, "chunks": 2, "documents": 1, "entities": 2, "relationships": 1},
        "warnings": ["3 claims could not be attached."],
    }


def test_accepts_a_manifest_path_and_str_paths(tmp_path: Path) -> None:
    save_index(sample_index(), str(tmp_path))
    assert detect_format(tmp_path) == "native"
    assert load_index(tmp_path / "manifest.json") == sample_index()
    assert load_index(str(tmp_path / "manifest.json")) == sample_index()


def test_entities_and_relationships_are_optional(tmp_path: Path) -> None:
    save_index(sample_index(), tmp_path)
    (tmp_path / "entities.jsonl").unlink()
    (tmp_path / "relationships.jsonl").unlink()
    loaded = load_index(tmp_path)
    assert loaded.entities == () and loaded.relationships == ()
    assert any("counts differ" in w for w in loaded.warnings)


def test_blank_lines_are_ignored(tmp_path: Path) -> None:
    save_index(sample_index(), tmp_path)
    path = tmp_path / "claims.jsonl"
    path.write_text("\n" + path.read_text(encoding="utf-8").replace("\n", "\n\n"), encoding="utf-8")
    assert load_index(tmp_path).claims == sample_index().claims


def test_save_refuses_a_file_path(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    with pytest.raises(IndexValidationError, match="exists and is not a folder"):
        save_index(sample_index(), target)


# -- validation errors --------------------------------------------------------------------------------


def saved(tmp_path: Path) -> Path:
    folder = tmp_path / "ix"
    save_index(sample_index(), folder)
    return folder


def rewrite(folder: Path, name: str, rows: list[dict[str, Any]] | list[str]) -> None:
    lines = [row if isinstance(row, str) else json.dumps(row, ensure_ascii=False) for row in rows]
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def rows_of(folder: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / name).read_text(encoding="utf-8").splitlines()]


def error_of(folder: Path, *, when: str = "opened") -> IndexValidationError:
    """The error ``folder`` raises when it is opened or, with ``when="read"``, only once its
    other tables are read (opening reads the manifest and the communities)."""
    if when == "opened":
        with pytest.raises(IndexValidationError) as caught:
            load_index(folder)
        return caught.value
    index = load_index(folder)
    with pytest.raises(IndexValidationError) as caught:
        index.load_tables()
    return caught.value


def test_path_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(IndexValidationError, match=r"nowhere: no such file or folder; cannot load an index from it\."):
        load_index(tmp_path / "nowhere")


def test_path_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(IndexValidationError, match=r"notes\.txt: is a file, not an index folder"):
        load_index(tmp_path / "notes.txt")


def test_empty_folder_is_an_unknown_layout(tmp_path: Path) -> None:
    with pytest.raises(IndexFormatError) as caught:
        load_index(tmp_path)
    message = str(caught.value)
    assert "not an index folder. Found: nothing." in message
    assert "manifest.json" in message and "communities.parquet" in message


def test_jsonl_without_manifest_names_what_is_missing(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    (folder / "manifest.json").unlink()
    with pytest.raises(IndexFormatError, match=r"Found: chunks\.jsonl, claims\.jsonl, .*Expected either manifest\.json"):
        load_index(folder)


def test_missing_file(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    (folder / "claims.jsonl").unlink()
    error = error_of(folder)
    assert str(error).endswith("the native index is missing claims.jsonl (next to manifest.json).")
    assert error.path is not None and error.path.endswith("claims.jsonl")


def test_invalid_json(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    rewrite(folder, "claims.jsonl", [rows_of(folder, "claims.jsonl")[0], '{"id": "k2", "community_id": '])
    error = error_of(folder, when="read")
    assert str(error).startswith("claims.jsonl line 2: invalid JSON (")
    assert (error.row, error.field) == (2, None)


def test_line_that_is_not_an_object(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    rewrite(folder, "documents.jsonl", ['["d1", "Story"]'])
    assert str(error_of(folder, when="read")) == "documents.jsonl line 1: expected a JSON object (a Document)."


def test_missing_field(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    rows = rows_of(folder, "chunks.jsonl")
    del rows[1]["text"]
    rewrite(folder, "chunks.jsonl", rows)
    error = error_of(folder, when="read")
    assert str(error) == 'chunks.jsonl line 2, field "text": this required field is missing.'
    assert (error.row, error.field) == (2, "text")


@pytest.mark.parametrize(
    ("name", "line", "field", "value", "message"),
    [
        pytest.param(
            "communities.jsonl", 3, "level", "one",
            'communities.jsonl line 3, field "level": Input should be a valid integer, unable to parse string as an integer (found "one").',
            id="mistyped-field",
        ),
        pytest.param(
            "claims.jsonl", 1, "chunk_ids", ["c1", None],
            'claims.jsonl line 1, field "chunk_ids.1": Input should be a valid string (found null).',
            id="mistyped-list-item",
        ),
        pytest.param(
            "documents.jsonl", 1, "titel", "typo",
            'documents.jsonl line 1, field "titel": unknown field (a Document has: id, title).',
            id="unknown-field",
        ),
        pytest.param(
            "claims.jsonl", 2, "id", "k1",
            'claims.jsonl line 2, field "id": duplicate claim id "k1" (first at line 1).',
            id="duplicate-claim-id",
        ),
        pytest.param(
            "communities.jsonl", 1, "parent_id", "2",  # 0 -> 2 -> 0
            'communities.jsonl line 1, field "parent_id": the parent links form a cycle: "0" -> "2" -> "0".',
            id="cycle-of-parents",
        ),
        pytest.param(
            "communities.jsonl", 2, "parent_id", "1",
            'communities.jsonl line 2, field "parent_id": the parent links form a cycle: "1" -> "1".',
            id="self-parent",
        ),
        pytest.param(
            "communities.jsonl", 3, "level", 2,
            'communities.jsonl line 3, field "level": community "2" has level 2, but its parent "0" has level 0; '
            "a child's level must be its parent's + 1.",
            id="level-not-parents-plus-one",
        ),
        pytest.param(
            "claims.jsonl", 2, "community_id", "99",
            'claims.jsonl line 2, field "community_id": claim "k2" names community "99", which does not exist.',
            id="claim-names-an-unknown-community",
        ),
        pytest.param(
            "claims.jsonl", 1, "chunk_ids", ["c1", "c9"],
            'claims.jsonl line 1, field "chunk_ids": claim "k1" cites chunk "c9", which does not exist.',
            id="claim-cites-an-unknown-chunk",
        ),
        pytest.param(
            "chunks.jsonl", 2, "document_id", "d9",
            'chunks.jsonl line 2, field "document_id": chunk "c2" names document "d9", which does not exist.',
            id="chunk-names-an-unknown-document",
        ),
    ],
)
def test_one_bad_value_names_its_file_line_and_field(tmp_path: Path, name: str, line: int, field: str, value: object, message: str) -> None:
    folder = saved(tmp_path)
    rows = rows_of(folder, name)
    rows[line - 1][field] = value
    rewrite(folder, name, rows)
    assert str(error_of(folder, when="opened" if name == "communities.jsonl" else "read")) == message


def test_duplicate_ids(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    rows = rows_of(folder, "communities.jsonl")
    rows[2]["id"] = "1"
    rewrite(folder, "communities.jsonl", rows)
    error = error_of(folder)
    assert str(error) == 'communities.jsonl line 3, field "id": duplicate community id "1" (first at line 2).'
    assert (error.row, error.field) == (3, "id")
    assert error.path is not None and error.path.endswith("communities.jsonl")


def test_parent_that_does_not_exist(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    rows = rows_of(folder, "communities.jsonl")
    rows.extend({"id": f"pad{i}", "level": 0} for i in range(3))
    rows.append({"id": "x", "level": 1, "parent_id": "y"})
    rewrite(folder, "communities.jsonl", rows)
    error = error_of(folder)
    assert str(error) == 'communities.jsonl line 7, field "parent_id": community "x" names parent "y", which does not exist.'
    assert (error.row, error.field) == (7, "parent_id")


def test_relationship_naming_an_unknown_entity_is_a_warning(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    rows = rows_of(folder, "relationships.jsonl")
    rows.append({"id": "r2", "source": "ALICE", "target": "ZED"})
    rewrite(folder, "relationships.jsonl", rows)
    loaded = load_index(folder)
    assert len(loaded.relationships) == 2
    assert '1 relationship ends name no entity title: "r2" (target "ZED").' in loaded.warnings
    # a second round trip keeps each warning once
    save_index(loaded, tmp_path / "again")
    assert load_index(tmp_path / "again").warnings == loaded.warnings


def test_entity_naming_an_unknown_community_is_a_warning(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    rows = rows_of(folder, "entities.jsonl")
    rows[1]["community_ids"] = ["0", "77"]
    rewrite(folder, "entities.jsonl", rows)
    assert '1 entity community ids name no community: "e2" ("77").' in load_index(folder).warnings


def test_manifest_of_another_format(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    (folder / "manifest.json").write_text('{"format": "something-else", "format_version": 1}')
    with pytest.raises(IndexFormatError) as caught:
        load_index(folder)
    assert str(caught.value) == 'manifest.json, field "format": expected "graphrag-explorer-index", found "something-else".'


def test_manifest_from_a_newer_version(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["format_version"] = NATIVE_FORMAT_VERSION + 1
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexFormatError, match=r'field "format_version": this index has format version 2, but this program reads versions up to 1'):
        load_index(folder)


def test_manifest_with_invalid_json(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    (folder / "manifest.json").write_text('{\n  "format": "graphrag-explorer-index",\n  "name": \n}')
    assert str(error_of(folder)) == "manifest.json line 4: invalid JSON (Expecting value)."


def test_manifest_with_a_mistyped_field(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["name"] = 5
    (folder / "manifest.json").write_text(json.dumps(manifest))
    assert str(error_of(folder)) == 'manifest.json, field "name": Input should be a valid string (found 5).'


def test_manifest_counts_that_differ_are_a_warning(tmp_path: Path) -> None:
    folder = saved(tmp_path)
    rewrite(folder, "relationships.jsonl", [])
    (folder / "relationships.jsonl").write_text("")
    loaded = load_index(folder)
    assert "manifest.json counts differ from the files: relationships 1 (files hold 0)." in loaded.warnings


# -- JSON Schema ---------------------------------------------------------------------------------------


def test_committed_schema_equals_the_generated_one() -> None:
    from graphrag_core.index.schema import SCHEMA_PATH, render_schema

    committed = (APP_ROOT / SCHEMA_PATH).read_text(encoding="utf-8")
    assert committed == render_schema(), "run: python -m graphrag_core.index.schema"


def test_schema_describes_every_file() -> None:
    from graphrag_core.index.schema import index_schema

    schema = index_schema()
    assert set(schema["properties"]) == {
        "manifest.json",
        "communities.jsonl",
        "claims.jsonl",
        "chunks.jsonl",
        "documents.jsonl",
        "entities.jsonl",
        "relationships.jsonl",
    }
    assert set(schema["$defs"]) >= {"Community", "Claim", "SourceChunk", "Document", "Entity", "Relationship", "Manifest"}
