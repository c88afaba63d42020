"""The structure of an index, checked in one place: ids unique per table, parents that exist
and form a forest whose child levels are their parent's + 1, claims naming existing communities
and chunks, chunks naming existing documents (when documents are given).

:class:`~graphrag_core.models.Index` runs :func:`check_structure` when it is built; a loader that
knows where each record came from (:class:`RecordSource`: file and line or parquet row) turns
the error into one naming that file, line and field with :func:`locate`. The recoverable
oddities (graph ends naming nothing) are :func:`structure_warnings`, which loaders add to the
index's warnings.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from typing import TYPE_CHECKING, Any, Literal, Union

from .errors import IndexValidationError

if TYPE_CHECKING:
    from .rows import Claim, Community, Document, Entity, Relationship, SourceChunk

WARNING_EXAMPLES = 5
"""How many example ids a warning about many records names."""

Message = Union[str, Callable[["RecordSource"], str]]
"""An error's text, or a function of the record source that gives it."""

TABLES: tuple[str, ...] = ("communities", "claims", "chunks", "documents", "entities", "relationships")


@dataclass(frozen=True)
class RecordSource:
    """Where the records of one table came from: record ``i`` is at ``unit`` ``numbers[i]`` of ``file``.

    Lines of JSON Lines files are counted from 1 (as editors show them); parquet rows from 0
    (as ``pyarrow.Table.slice`` and ``DataFrame.iloc`` index them). ``fields`` renames model
    fields to the source's column names in messages (e.g. ``parent_id`` -> ``parent``).
    """

    file: str
    unit: Literal["line", "row", "record"]
    numbers: Sequence[int]
    path: str | None = None
    fields: Mapping[str, str] = dataclass_field(default_factory=dict)
    table: str | None = None
    """The index table (one of :data:`TABLES`) these records belong to, when known."""

    @classmethod
    def in_memory(cls, table: str, count: int) -> "RecordSource":
        """Records built in code: ``communities record 3`` (positions from 0)."""
        return cls(table, "record", range(count), table=table)

    def error(self, position: int, field_name: str, message: Message) -> IndexValidationError:
        """An error about record ``position`` whose message starts with the file, line/row and field.

        ``message`` may be a function of the source, for a message that names another record."""
        text = message(self) if callable(message) else message
        number = self.numbers[position]
        shown = self.fields.get(field_name, field_name)
        error = IndexValidationError(
            f'{self.file} {self.unit} {number}, field "{shown}": {text}',
            path=None if self.unit == "record" else (self.path or self.file),
            row=number,
            field=shown,
        )
        error.location = (self.table, position, field_name, message) if self.table else None
        return error


def quote(value: object) -> str:
    """A value quoted for a message (JSON style, so ids with quotes stay unambiguous)."""
    return json.dumps(value, ensure_ascii=False)


_q = quote


def _examples(items: Sequence[str]) -> str:
    shown = ", ".join(items[:WARNING_EXAMPLES])
    return shown + (f", ... ({len(items) - WARNING_EXAMPLES} more)" if len(items) > WARNING_EXAMPLES else "")


def check_unique_ids(kind: str, records: Sequence[Any], source: RecordSource) -> dict[str, int]:
    """Map id -> position; raise on the first repeated id, naming where it was first seen."""
    first: dict[str, int] = {}
    for position, record in enumerate(records):
        seen = first.setdefault(record.id, position)
        if seen != position:
            def message(where: RecordSource, record_id: str = record.id, seen: int = seen) -> str:
                return f"duplicate {kind} id {_q(record_id)} (first at {where.unit} {where.numbers[seen]})."

            raise source.error(position, "id", message)
    return first


UNIQUE_KINDS: dict[str, str] = {
    "communities": "community", "claims": "claim", "chunks": "chunk",
    "documents": "document", "entities": "entity", "relationships": "relationship",
}
"""What one record of each table is called in a duplicate-id message."""


def table_source(table: str, records: Sequence[Any], given: Mapping[str, RecordSource] | None) -> RecordSource:
    """Where ``table``'s records came from: ``given[table]`` (marked with its table), else records in memory."""
    if given and table in given:
        return replace(given[table], table=table)
    return RecordSource.in_memory(table, len(records))


def check_structure(
    *,
    communities: Sequence[Community],
    claims: Sequence[Claim] = (),
    chunks: Sequence[SourceChunk] = (),
    documents: Sequence[Document] = (),
    entities: Sequence[Entity] = (),
    relationships: Sequence[Relationship] = (),
    sources: Mapping[str, RecordSource] | None = None,
) -> None:
    """Check the cross-record rules of an index, naming the table (or file), record (or line or
    row) and field.

    ``sources`` maps each table name (:data:`TABLES`) to where its records came from; a table
    without one is named as records in memory. Raises :class:`IndexValidationError` on the first
    failure, in this order: duplicate ids, unknown parents, parent cycles, levels that are not
    the parent's + 1, claims naming unknown or non-leaf communities or unknown chunks, chunks
    naming unknown documents (only when documents are given). An index read table by table runs
    the same checks per table (:func:`check_hierarchy` when it opens, :func:`check_claims` and
    :func:`check_chunks` when those tables are read).
    """
    tables: dict[str, Sequence[Any]] = {
        "communities": communities, "claims": claims, "chunks": chunks,
        "documents": documents, "entities": entities, "relationships": relationships,
    }
    where = {name: table_source(name, records, sources) for name, records in tables.items()}
    ids = {
        name: check_unique_ids(UNIQUE_KINDS[name], tables[name], where[name])
        for name in ("communities", "chunks", "documents", "claims", "entities", "relationships")
    }
    check_hierarchy(communities, ids["communities"], where["communities"])
    check_claims(claims, where["claims"], communities=ids["communities"], parents=parent_ids(communities), chunk_ids=ids["chunks"])
    if documents:
        check_chunks(chunks, where["chunks"], document_ids=ids["documents"])


def parent_ids(communities: Sequence[Community]) -> set[str]:
    """The ids of the communities some community names as its parent (the non-leaves)."""
    return {community.parent_id for community in communities if community.parent_id is not None}


def check_hierarchy(communities: Sequence[Community], by_id: Mapping[str, int], where: RecordSource) -> None:
    """Parents exist, form no cycle, and sit one level above their children (ids already unique)."""
    for position, community in enumerate(communities):
        if community.parent_id is not None and community.parent_id not in by_id:
            raise where.error(
                position,
                "parent_id",
                f"community {_q(community.id)} names parent {_q(community.parent_id)}, which does not exist.",
            )
    _check_no_cycle(communities, by_id, where)
    for position, community in enumerate(communities):
        if community.parent_id is None:
            continue
        parent = communities[by_id[community.parent_id]]
        if community.level != parent.level + 1:
            raise where.error(
                position,
                "level",
                f"community {_q(community.id)} has level {community.level}, but its parent {_q(parent.id)} "
                f"has level {parent.level}; a child's level must be its parent's + 1.",
            )


def check_claims(
    claims: Sequence[Claim],
    where: RecordSource,
    *,
    communities: Container[str],
    parents: Container[str],
    chunk_ids: Container[str],
) -> None:
    """Every claim names an existing leaf community (not one of ``parents``) and existing chunks."""
    for position, claim in enumerate(claims):
        if claim.community_id not in communities:
            raise where.error(
                position,
                "community_id",
                f"claim {_q(claim.id)} names community {_q(claim.community_id)}, which does not exist.",
            )
        if claim.community_id in parents:
            raise where.error(
                position,
                "community_id",
                f"claim {_q(claim.id)} names community {_q(claim.community_id)}, which is not a leaf (it has "
                "child communities); claims belong to leaf communities, whose map texts carry them.",
            )
        for chunk_id in claim.chunk_ids:
            if chunk_id not in chunk_ids:
                raise where.error(
                    position, "chunk_ids", f"claim {_q(claim.id)} cites chunk {_q(chunk_id)}, which does not exist."
                )


def check_chunks(chunks: Sequence[SourceChunk], where: RecordSource, *, document_ids: Container[str]) -> None:
    """Every chunk that names a document names an existing one (run only when documents are given)."""
    for position, chunk in enumerate(chunks):
        if chunk.document_id is not None and chunk.document_id not in document_ids:
            raise where.error(
                position,
                "document_id",
                f"chunk {_q(chunk.id)} names document {_q(chunk.document_id)}, which does not exist.",
            )


def _check_no_cycle(communities: Sequence[Community], by_id: Mapping[str, int], where: RecordSource) -> None:
    """Raise on the first community whose parent chain comes back to itself (parents all exist).

    Each community is walked at most once overall (states: unseen, on the current walk, done),
    so this is linear in the number of communities.
    """
    done: set[int] = set()
    for start in range(len(communities)):
        walk: list[int] = []
        on_walk: set[int] = set()
        position: int | None = start
        while position is not None and position not in done:
            if position in on_walk:
                loop = walk[walk.index(position) :] + [position]
                chain = " -> ".join(_q(communities[p].id) for p in loop)
                raise where.error(position, "parent_id", f"the parent links form a cycle: {chain}.")
            walk.append(position)
            on_walk.add(position)
            parent_id = communities[position].parent_id
            position = None if parent_id is None else by_id[parent_id]
        done.update(walk)


def structure_warnings(
    *, communities: Sequence[Community], entities: Sequence[Entity] = (), relationships: Sequence[Relationship] = ()
) -> list[str]:
    """The recoverable oddities of an index's graph tables, as warning texts: relationships
    naming unknown entity titles, entities naming unknown communities, communities naming
    unknown entities."""
    by_id = {community.id for community in communities}
    entity_ids = {entity.id for entity in entities}
    warnings: list[str] = []
    if entities:
        titles = {entity.title for entity in entities}
        dangling = [
            f"{_q(r.id)} ({end} {_q(getattr(r, end))})"
            for r in relationships
            for end in ("source", "target")
            if getattr(r, end) not in titles
        ]
        if dangling:
            warnings.append(
                f"{len(dangling)} relationship ends name no entity title: {_examples(dangling)}."
            )
        unknown_members = [
            f"{_q(c.id)} ({_q(e)})" for c in communities for e in c.entity_ids if e not in entity_ids
        ]
        if unknown_members:
            warnings.append(
                f"{len(unknown_members)} community members name no entity: {_examples(unknown_members)}."
            )
    unknown_communities = [
        f"{_q(e.id)} ({_q(c)})" for e in entities for c in e.community_ids if c not in by_id
    ]
    if unknown_communities:
        warnings.append(
            f"{len(unknown_communities)} entity community ids name no community: {_examples(unknown_communities)}."
        )
    return warnings


def locate(error: IndexValidationError, sources: Mapping[str, RecordSource]) -> IndexValidationError:
    """``error`` (from :func:`check_structure` on records in memory) restated with the file, line
    or row and column name that ``sources`` give for its record; unchanged when it has no record."""
    location = getattr(error, "location", None)
    if not location or location[0] not in sources:
        return error
    table, position, field_name, message = location
    return replace(sources[table], table=table).error(position, field_name, message)


__all__ = [
    "TABLES",
    "UNIQUE_KINDS",
    "WARNING_EXAMPLES",
    "Message",
    "RecordSource",
    "check_chunks",
    "check_claims",
    "check_hierarchy",
    "check_structure",
    "check_unique_ids",
    "locate",
    "parent_ids",
    "quote",
    "structure_warnings",
    "table_source",
]
