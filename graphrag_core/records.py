"""An index's graph records as reports cite them: entities, relationships, claims and sources.

A Microsoft GraphRAG report cites records by their ``human_readable_id`` (``short_id`` here):
``[Data: Entities (5); Relationships (3, 7); Claims (2); Sources (1)]``. :class:`IndexRecords`
resolves such a reference (the short id first, then the record's own id, so records without a
short id can be named too) and answers the questions a provenance view asks: which communities
hold a record, which records a community holds, and which records came from a source chunk.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, TypeVar

from .models import Claim, Entity, Index, Relationship, SourceChunk

RecordKind = Literal["entity", "relationship", "claim", "source"]
RECORD_NAMES: dict[RecordKind, str] = {"entity": "Entity", "relationship": "Relationship", "claim": "Claim", "source": "Source"}
"""What a report calls each kind (singular): ``Entities (5)`` names Entity 5."""

AnyRecord = Entity | Relationship | Claim | SourceChunk
_R = TypeVar("_R", Entity, Relationship, Claim, SourceChunk)


def record_ref(record: AnyRecord) -> str:
    """The id a report (and a URL) names the record by: its short id, else its id."""
    return record.short_id if record.short_id is not None else record.id


def _by_ref(records: Iterable[_R]) -> dict[str, _R]:
    """Reference -> record: every id, then every short id (a short id wins over an equal id)."""
    records = list(records)
    table = {r.id: r for r in records}
    table.update({r.short_id: r for r in records if r.short_id is not None})
    return table


_TABLE_OF: dict[RecordKind, str] = {"entity": "entities", "relationship": "relationships", "claim": "claims", "source": "chunks"}
"""The index table that holds each kind."""


class IndexRecords:
    """Lookups over one index's entities, relationships, claims and chunks (read-only). Each
    kind's lookup is built when it is first asked for, so an opened index reads only the tables
    a page or a citation needs."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self._tables: dict[RecordKind, dict[str, AnyRecord]] = {}
        self._entity_by_title: dict[str, Entity] | None = None

    def _table(self, kind: RecordKind) -> dict[str, AnyRecord]:
        table = self._tables.get(kind)
        if table is None:
            table = self._tables[kind] = _by_ref(getattr(self.index, _TABLE_OF[kind]))
        return table

    def get(self, kind: RecordKind, ref: str) -> AnyRecord | None:
        """The record of ``kind`` a report or URL names ``ref``, or None."""
        return self._table(kind).get(ref)

    def has_kind(self, kind: RecordKind) -> bool:
        return bool(self._table(kind))

    def entity_titled(self, title: str) -> Entity | None:
        """The entity a relationship end (or a claim's subject) names by title."""
        if self._entity_by_title is None:
            self._entity_by_title = {e.title: e for e in self.index.entities}
        return self._entity_by_title.get(title)

    def chunks_of(self, record: Entity | Relationship | Claim) -> tuple[list[SourceChunk], list[str]]:
        """The record's source chunks in the index, and the chunk ids the index does not hold."""
        ids = list(dict.fromkeys(record.chunk_ids))  # an output may list a chunk twice; shown once
        held = {cid for cid in ids if self.index.has_chunk(cid)}
        return [self.index.chunk(cid) for cid in ids if cid in held], [cid for cid in ids if cid not in held]

    def relationships_of(self, entity: Entity) -> list[Relationship]:
        """The relationships with ``entity`` at either end, heaviest first."""
        found = [r for r in self.index.relationships if entity.title in (r.source, r.target)]
        return sorted(found, key=lambda r: -(r.weight or 0.0))

    def community_entities(self, community_id: str) -> list[Entity]:
        """The entities a community holds: its members, else those naming it among their communities."""
        community = self.index.community(community_id)
        by_id = {e.id: e for e in self.index.entities}
        members = [by_id[eid] for eid in community.entity_ids if eid in by_id]
        return members or [e for e in self.index.entities if community_id in e.community_ids]

    def community_relationships(self, community_id: str) -> list[Relationship]:
        return [r for r in self.index.relationships if community_id in r.community_ids]

    def from_chunk(self, chunk_id: str) -> tuple[list[Entity], list[Relationship], list[Claim]]:
        """The entities, relationships and claims extracted from one source chunk."""
        return (
            [e for e in self.index.entities if chunk_id in e.chunk_ids],
            [r for r in self.index.relationships if chunk_id in r.chunk_ids],
            [c for c in self.index.claims if chunk_id in c.chunk_ids],
        )


def mention_excerpt(text: str, terms: Iterable[str], *, width: int = 240) -> str | None:
    """About ``width`` characters of ``text`` around the first mention of any of ``terms``
    (case-insensitive), with ``…`` where it is cut; None when no term occurs."""
    lowered = text.lower()
    hits = [(pos, term) for term in terms if term and (pos := lowered.find(term.lower())) >= 0]
    if not hits:
        return None
    pos, term = min(hits)
    start = max(0, pos - width // 2)
    end = min(len(text), pos + len(term) + width // 2)
    return ("…" if start > 0 else "") + " ".join(text[start:end].split()) + ("…" if end < len(text) else "")


__all__ = ["RECORD_NAMES", "AnyRecord", "IndexRecords", "RecordKind", "mention_excerpt", "record_ref"]
