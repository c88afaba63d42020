"""Records as reports cite them: the importer keeps short ids, text units and relationship
communities; :class:`graphrag_core.records.IndexRecords` resolves references and answers the
provenance views' questions. Real Microsoft GraphRAG outputs are read from ``../shared``."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_core.citations import find_citations, references_of_kind
from graphrag_core.index import load_index
from graphrag_core.models import Claim, Community, Entity, Index, Relationship, SourceChunk
from graphrag_core.records import IndexRecords, mention_excerpt, record_ref

SHARED = Path(__file__).resolve().parents[1].parent / "shared/data/msgraphrag"
REAL_FOLDERS = ("v1-operation-dulce", "v2-christmas-carol", "v3-operation-dulce")


def _real(name: str) -> Index:
    folder = SHARED / name
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent (the real GraphRAG samples live outside the repository)")
    return load_index(folder)


@pytest.mark.parametrize("name", REAL_FOLDERS)
def test_every_entity_and_relationship_a_real_report_cites_resolves_with_its_sources(name: str) -> None:
    index = _real(name)
    records = IndexRecords(index)
    chunk_ids = {c.id for c in index.chunks}
    cited = {"entity": set(), "relationship": set()}
    for community in index.communities:
        citations = find_citations(community.summary)
        for kind in cited:
            cited[kind].update(references_of_kind(citations, kind))
    assert cited["entity"] and cited["relationship"]
    for kind, refs in cited.items():
        for ref in refs:
            record = records.get(kind, ref)  # type: ignore[arg-type]
            assert record is not None, f"{kind} {ref} of a report is not in {name}"
            assert record_ref(record) == ref
            assert record.chunk_ids and set(record.chunk_ids) <= chunk_ids, "its text units, all in the index"
    # text units and claims keep the number reports cite them by
    assert all(c.short_id is not None for c in index.chunks) and all(c.short_id is not None for c in index.claims)


@pytest.mark.parametrize("name", REAL_FOLDERS)
def test_a_relationships_communities_are_those_whose_relationship_ids_hold_it(name: str) -> None:
    import pyarrow.parquet as pq

    index = _real(name)
    file = SHARED / name / ("create_final_communities.parquet" if name.startswith("v1") else "communities.parquet")
    table = pq.read_table(file, columns=["community", "relationship_ids"]).to_pydict()
    expected: dict[str, list[str]] = {}
    for community, rel_ids in zip(table["community"], table["relationship_ids"]):
        for rid in rel_ids or ():
            expected.setdefault(rid, []).append(str(community))
    assert expected, "the sample lists relationships per community"
    for rel in index.relationships:
        assert list(rel.community_ids) == expected.get(rel.id, [])
    records = IndexRecords(index)
    some = next(iter(expected.values()))[0]
    assert {r.id for r in records.community_relationships(some)} == {rid for rid, cids in expected.items() if some in cids}


def _tiny() -> Index:
    return Index(
        communities=(Community(id="1", level=0, entity_ids=("e1",)), Community(id="2", level=0)),
        chunks=(SourceChunk(id="k1", text="Ada met Babbage.", short_id="0"), SourceChunk(id="k2", text="Later.", short_id="1")),
        claims=(Claim(id="c1", community_id="1", subject="ADA", chunk_ids=("k1",), short_id="5"),),
        entities=(
            Entity(id="e1", title="ADA", chunk_ids=("k1", "gone"), short_id="0", community_ids=("1",)),
            Entity(id="e2", title="BABBAGE", chunk_ids=("k1",), community_ids=("2",)),  # no short id
        ),
        relationships=(Relationship(id="r1", source="ADA", target="BABBAGE", weight=2.0, chunk_ids=("k1",), short_id="0", community_ids=("1",)),),
    )


def test_references_resolve_by_short_id_then_id_and_missing_chunks_are_named() -> None:
    records = IndexRecords(_tiny())
    assert records.get("entity", "0").id == "e1"
    assert records.get("entity", "e2").title == "BABBAGE" and record_ref(records.get("entity", "e2")) == "e2"
    assert records.get("entity", "9") is None
    assert records.get("claim", "5").id == "c1" and records.get("source", "1").id == "k2"
    chunks, missing = records.chunks_of(records.get("entity", "0"))
    assert [c.id for c in chunks] == ["k1"] and missing == ["gone"]
    assert [r.id for r in records.relationships_of(records.get("entity", "0"))] == ["r1"]
    assert [e.id for e in records.community_entities("1")] == ["e1"]
    assert [e.id for e in records.community_entities("2")] == ["e2"], "from the entities' own community ids"
    entities, relationships, claims = records.from_chunk("k1")
    assert [e.id for e in entities] == ["e1", "e2"] and [r.id for r in relationships] == ["r1"] and [c.id for c in claims] == ["c1"]
    assert records.has_kind("claim") and not IndexRecords(Index(communities=(Community(id="1", level=0),))).has_kind("entity")


def test_mention_excerpt_cuts_around_the_first_mention() -> None:
    text = "x" * 500 + " Ada Lovelace " + "y" * 500
    excerpt = mention_excerpt(text, ["lovelace", "nobody"], width=40)
    assert excerpt is not None and excerpt.startswith("…") and excerpt.endswith("…") and "Lovelace" in excerpt
    assert len(excerpt) <= 40 + len("lovelace") + 2
    assert mention_excerpt("short text", ["absent"]) is None
    assert mention_excerpt("Ada here", ["ada"]) == "Ada here"


def test_the_native_format_keeps_the_records_sources_and_omits_them_when_empty(tmp_path: Path) -> None:
    from graphrag_core.index import save_index

    index = _tiny()
    save_index(index, tmp_path / "tiny")
    loaded = load_index(tmp_path / "tiny")
    assert loaded.entities == index.entities and loaded.relationships == index.relationships
    assert loaded.claims == index.claims and loaded.chunks == index.chunks
    bare = Index(communities=(Community(id="1", level=0),), entities=(Entity(id="e", title="E"),),
                 relationships=(Relationship(id="r", source="E", target="E"),))
    save_index(bare, tmp_path / "bare")
    written = (tmp_path / "bare" / "entities.jsonl").read_text() + (tmp_path / "bare" / "relationships.jsonl").read_text()
    assert "chunk_ids" not in written and "short_id" not in written, "indexes without them keep their bytes"
    assert '"community_ids": []' in (tmp_path / "bare" / "entities.jsonl").read_text(), "an entity's communities as before"


def test_a_chunk_listed_twice_is_shown_once():
    # a Microsoft GraphRAG output may list a text unit twice; each chunk is a widget key on the page
    index = Index(
        communities=(Community(id="1", level=0, title="Root", summary="Root."),),
        chunks=(SourceChunk(id="k1", document_id=None, text="Ada."),),
        entities=(Entity(id="e1", title="ADA", community_ids=("1", "1"), chunk_ids=("k1", "k1", "k9")),),
    )
    found, missing = IndexRecords(index).chunks_of(index.entities[0])
    assert [c.id for c in found] == ["k1"] and missing == ["k9"]
