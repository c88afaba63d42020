"""The index: communities, claims, source chunks and documents, with the lookups search needs.

Its rows are the frozen records of :mod:`graphrag_core.rows` (importable from here too). The
community hierarchy is a map of each community's children (``Index.graph`` gives it as a
networkx ``DiGraph`` whose edges point parent -> child).

An index is built whole (``Index(...)``, :meth:`Index.from_records`) or opened
(:meth:`Index.open`): its communities now, every other table
(:data:`~graphrag_core.deferred.DEFERRED_TABLES`) when it is first asked for, through a
:class:`~graphrag_core.deferred.TableReader`. Either way a table is checked before anyone
sees it, with the same checks and the same errors; an opened index's ``warnings`` are complete
once every table has been read, which asking for them does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pydantic import PrivateAttr, ValidationError, model_validator

from .context import format_claim_line, format_map_text
from .deferred import DEFERRED_TABLES, PendingTables, TableReader
from .errors import IndexValidationError
from .levels import LEAF
from .rows import Claim, Community, Document, Entity, Id, Record, Relationship, SourceChunk
from .validation import (
    UNIQUE_KINDS,
    check_chunks,
    check_claims,
    check_structure,
    check_unique_ids,
    locate,
    parent_ids,
    table_source,
)

if TYPE_CHECKING:
    import networkx as nx

    from .validation import RecordSource

MAP_TEXT_TABLES: tuple[str, ...] = ("claims", "chunks")
"""The tables :meth:`Index.map_text` reads when it puts claims or source excerpts in."""


class Index(Record):
    """A loaded index. Constructing one validates its structure.

    Invariants of every table anyone has seen: ids are unique per table; every parent exists and
    the parent links form a forest whose child levels are their parent's level + 1; every claim
    names an existing leaf community and existing chunks; every chunk's document exists when
    documents are given. ``warnings`` holds recoverable oddities found while loading.

    An opened index (:meth:`open`) reads each of ``DEFERRED_TABLES`` when an attribute,
    a lookup or :meth:`load_tables` first needs it; a failed read raises its error each time
    the table is asked for, and the tables already read stay usable.
    """

    communities: tuple[Community, ...]
    claims: tuple[Claim, ...] = ()
    chunks: tuple[SourceChunk, ...] = ()
    documents: tuple[Document, ...] = ()
    entities: tuple[Entity, ...] = ()
    relationships: tuple[Relationship, ...] = ()
    name: str = ""
    description: str = ""
    warnings: tuple[str, ...] = ()

    _communities: dict[str, Community] = PrivateAttr(default_factory=dict)
    _chunks: dict[str, SourceChunk] = PrivateAttr(default_factory=dict)
    _documents: dict[str, Document] = PrivateAttr(default_factory=dict)
    _claims: dict[str, Claim] = PrivateAttr(default_factory=dict)
    _claims_by_community: dict[str, list[Claim]] = PrivateAttr(default_factory=dict)
    _children: dict[str, list[str]] = PrivateAttr(default_factory=dict)
    _order: dict[str, int] = PrivateAttr(default_factory=dict)
    _pending: PendingTables | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check_structure(self) -> Index:
        """The one structure check (:func:`~graphrag_core.validation.check_structure`), then the lookups."""
        check_structure(
            communities=self.communities,
            claims=self.claims,
            chunks=self.chunks,
            documents=self.documents,
            entities=self.entities,
            relationships=self.relationships,
        )
        self._build()
        return self

    def __init__(self, /, **data: Any) -> None:
        # Pydantic reports every ValueError a validator raises as its own ValidationError (and
        # passes only non-ValueErrors through), so a structure failure arrives here wrapped; the
        # IndexValidationError it carries (pydantic's ``ctx["error"]``) is what Index(...) raises.
        # Only this unwrapping is custom: the check itself is the model validator above, which
        # model_validate and nested validation run too (they report pydantic's ValidationError).
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _structure_error(exc) or exc from None

    @classmethod
    def from_records(
        cls,
        *,
        communities: Iterable[Community],
        claims: Iterable[Claim] = (),
        chunks: Iterable[SourceChunk] = (),
        documents: Iterable[Document] = (),
        entities: Iterable[Entity] = (),
        relationships: Iterable[Relationship] = (),
        name: str = "",
        description: str = "",
        warnings: Iterable[str] = (),
        sources: Mapping[str, RecordSource] | None = None,
    ) -> Index:
        """The index of these records, as every loader and builder makes one.

        ``sources`` says where each table's records came from (:data:`~graphrag_core.validation.TABLES`
        -> :class:`~graphrag_core.validation.RecordSource`); a structure error then names that
        file, line or row and column instead of the record's position in memory.
        """
        try:
            return cls(
                communities=tuple(communities),
                claims=tuple(claims),
                chunks=tuple(chunks),
                documents=tuple(documents),
                entities=tuple(entities),
                relationships=tuple(relationships),
                name=name,
                description=description,
                warnings=tuple(warnings),
            )
        except IndexValidationError as exc:
            if not sources:
                raise
            raise locate(exc, sources) from None

    @classmethod
    def open(
        cls,
        *,
        communities: Iterable[Community],
        reader: TableReader,
        name: str = "",
        description: str = "",
        warnings: Iterable[str] = (),
        source: RecordSource | None = None,
    ) -> Index:
        """An index of these communities (checked now, errors located by ``source``) whose
        other tables ``reader`` reads when they are first needed.

        ``warnings`` are the oddities found so far; :attr:`warnings` adds each table's, the
        graph's and the reader's final ones once every table has been read.
        """
        opening = tuple(warnings)
        index = cls.from_records(
            communities=communities, name=name, description=description, warnings=opening,
            sources={"communities": source} if source is not None else None,
        )
        for table in (*DEFERRED_TABLES, "warnings"):
            del index.__dict__[table]
        index._pending = PendingTables(reader, opening)
        return index

    def _build(self) -> None:
        """The lookups and the hierarchy (the structure is already checked)."""
        communities = self._communities = {c.id: c for c in self.communities}
        children: dict[str, list[str]] = {}
        for community in self.communities:
            if community.parent_id is not None:
                children.setdefault(community.parent_id, []).append(community.id)
        self._children = children
        self._order = {community_id: position for position, community_id in enumerate(communities)}
        for table in DEFERRED_TABLES:
            self._index_table(table, getattr(self, table))

    def _index_table(self, table: str, records: tuple[Any, ...]) -> None:
        """The lookups of one table (set before the table itself, so a reader on another thread
        that sees the table also sees its lookups)."""
        if table == "chunks":
            self._chunks = {c.id: c for c in records}
        elif table == "documents":
            self._documents = {d.id: d for d in records}
        elif table == "claims":
            self._claims = {c.id: c for c in records}
            by_community: dict[str, list[Claim]] = {}
            for claim in records:
                by_community.setdefault(claim.community_id, []).append(claim)
            self._claims_by_community = by_community

    # -- reading an opened index's tables ---------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name in _DEFERRED_FIELDS:
            private = object.__getattribute__(self, "__pydantic_private__")
            if private and private.get("_pending") is not None:
                self._read(name)
                return self.__dict__[name]
        return super().__getattr__(name)

    @property
    def pending_tables(self) -> frozenset[str]:
        """The tables of :data:`DEFERRED_TABLES` not read yet (none for an index built whole)."""
        pending = self._pending
        return frozenset() if pending is None else frozenset(pending.tables)

    def load_tables(self, *tables: str) -> None:
        """Read ``tables`` now (every table, and so every warning, when none is named), raising
        the first one's error here rather than where it is first used."""
        unknown = [t for t in tables if t not in DEFERRED_TABLES and t != "communities"]
        if unknown:
            raise ValueError(f"No table {unknown[0]!r}; an index has communities, {', '.join(DEFERRED_TABLES)}.")
        for table in tables or (*DEFERRED_TABLES, "warnings"):
            getattr(self, table)

    def _table(self, table: str) -> None:
        """Make sure ``table`` is read (a no-op once it is)."""
        if table not in self.__dict__:
            getattr(self, table)

    def _read(self, name: str) -> None:
        pending = self._pending
        assert pending is not None
        with pending.lock:
            if name in self.__dict__:  # another thread read it while this one waited
                return
            if name == "warnings":
                for table in DEFERRED_TABLES:
                    self._table(table)
                return  # reading the last table set the warnings
            try:
                read = pending.reader.read(name, self)
            except AttributeError as exc:  # would otherwise read as "no such attribute"
                raise RuntimeError(f"Reading the {name} table failed: {exc}") from exc
            records = tuple(read.records)
            self._check_table(name, records, table_source(name, records, {name: read.source} if read.source else None))
            self._index_table(name, records)
            self.__dict__[name] = records
            pending.table_warnings[name] = tuple(read.warnings)
            pending.tables.discard(name)
            if not pending.tables:
                self._settle(pending.warnings(self))
                self._pending = None

    def _settle(self, warnings: tuple[str, ...]) -> None:
        """Every table read: the fields in declaration order, as a model built whole holds them
        (a dump lists them in that order), swapped in at once for readers on other threads."""
        values = {**self.__dict__, "warnings": warnings}
        ordered = {name: values.pop(name) for name in type(self).model_fields}
        object.__setattr__(self, "__dict__", {**ordered, **values})

    def _check_table(self, name: str, records: tuple[Any, ...], where: RecordSource) -> None:
        """The checks of :func:`~graphrag_core.validation.check_structure` that concern one table."""
        check_unique_ids(UNIQUE_KINDS[name], records, where)
        if name == "claims":
            self._table("chunks")
            check_claims(
                records, where, communities=self._communities, parents=parent_ids(self.communities), chunk_ids=self._chunks
            )
        elif name == "chunks":
            self._table("documents")
            if self.documents:
                check_chunks(records, where, document_ids=self._documents)

    def _loaded(self) -> Index:
        """This index with every table read (what a dump, a copy or a comparison sees)."""
        if self._pending is not None:
            self.load_tables()
        return self

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:  # noqa: D102 - pydantic's, after every table is read
        return super(Index, self._loaded()).model_dump(**kwargs)

    def model_dump_json(self, **kwargs: Any) -> str:  # noqa: D102
        return super(Index, self._loaded()).model_dump_json(**kwargs)

    def model_copy(self, **kwargs: Any) -> Index:  # noqa: D102
        return super(Index, self._loaded()).model_copy(**kwargs)

    def __iter__(self) -> Iterator[tuple[str, Any]]:  # type: ignore[override]
        return super(Index, self._loaded()).__iter__()

    def __repr_args__(self) -> Any:
        return super(Index, self._loaded()).__repr_args__()

    def __getstate__(self) -> dict[Any, Any]:
        return super(Index, self._loaded()).__getstate__()

    def __copy__(self) -> Index:
        return super(Index, self._loaded()).__copy__()

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Index:
        return super(Index, self._loaded()).__deepcopy__(memo)

    def __eq__(self, other: object) -> bool:
        """Equal when every table and the metadata are equal (the derived lookups are not compared)."""
        if not isinstance(other, Index):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in type(self).model_fields)

    __hash__ = None  # type: ignore[assignment]

    # -- lookups -----------------------------------------------------------------------------

    @cached_property
    def graph(self) -> nx.DiGraph:
        """The hierarchy as a DiGraph, edges parent -> child, in index order (read-only by convention)."""
        import networkx as nx  # only the views of the hierarchy need it: a search or a page that opens does not load it

        graph = nx.DiGraph()
        graph.add_nodes_from(self._communities)
        graph.add_edges_from((c.parent_id, c.id) for c in self.communities if c.parent_id is not None)
        return graph

    def community(self, community_id: str | int) -> Community:
        """The community with that id; ``KeyError`` naming the id when there is none."""
        try:
            return self._communities[str(community_id)]
        except KeyError:
            raise KeyError(f"No community {community_id!r} in this index.") from None

    def has_community(self, community_id: str | int) -> bool:
        return str(community_id) in self._communities

    def parent(self, community_id: str | int) -> Community | None:
        parent_id = self.community(community_id).parent_id
        return None if parent_id is None else self._communities[parent_id]

    def children(self, community_id: str | int) -> list[Community]:
        """The communities naming this one as parent, in index order."""
        return [self._communities[c] for c in self._children.get(self.community(community_id).id, ())]

    def path_to_root(self, community_id: str | int) -> list[Community]:
        """The community, then its parent, up to its root."""
        path = [self.community(community_id)]
        while path[-1].parent_id is not None:
            path.append(self._communities[path[-1].parent_id])
        return path

    def is_leaf(self, community_id: str | int) -> bool:
        """True when no community names this one as its parent."""
        return self.community(community_id).id not in self._children

    def descendant_leaves(self, community_id: str | int) -> list[Community]:
        """The leaf communities below this one, in index order; a leaf is its own descendant."""
        root = self.community(community_id).id
        children, communities = self._children, self._communities
        if root not in children:
            return [communities[root]]
        leaves: list[str] = []
        stack = [root]
        while stack:
            below = children.get(stack.pop())
            if below is None:
                continue
            for child in below:
                (stack if child in children else leaves).append(child)
        return [communities[c] for c in sorted(leaves, key=self._order.__getitem__)]

    def claims_of(self, community_id: str | int) -> list[Claim]:
        """The claims attached directly to this community."""
        self._table("claims")
        return list(self._claims_by_community.get(self.community(community_id).id, ()))

    def leaf_claims(self, community_id: str | int) -> list[Claim]:
        """The claims attached to the descendant leaves of this community, leaf by leaf."""
        self._table("claims")
        return [claim for leaf in self.descendant_leaves(community_id) for claim in self._claims_by_community.get(leaf.id, ())]

    def claim(self, claim_id: str | int) -> Claim:
        self._table("claims")
        try:
            return self._claims[str(claim_id)]
        except KeyError:
            raise KeyError(f"No claim {claim_id!r} in this index.") from None

    def has_chunk(self, chunk_id: str | int) -> bool:
        self._table("chunks")
        return str(chunk_id) in self._chunks

    def chunk(self, chunk_id: str | int) -> SourceChunk:
        self._table("chunks")
        try:
            return self._chunks[str(chunk_id)]
        except KeyError:
            raise KeyError(f"No source chunk {chunk_id!r} in this index.") from None

    def document(self, document_id: str | int) -> Document | None:
        self._table("documents")
        return self._documents.get(str(document_id))

    def claim_chunks(self, claim: Claim | str | int) -> list[SourceChunk]:
        """The source chunks a claim cites, in the claim's order."""
        if not isinstance(claim, Claim):
            claim = self.claim(claim)
        self._table("chunks")
        return [self._chunks[c] for c in claim.chunk_ids]

    def levels(self) -> dict[int, int]:
        """Each level present, with its number of communities, in level order."""
        return dict(sorted(Counter(c.level for c in self.communities).items()))

    def summary_counts(self) -> dict[int | str, int]:
        """How many non-blank summaries each choice of ``community_level`` would select."""
        counts: dict[int | str, int] = {LEAF: len(self.select_communities(LEAF))}
        for level in self.levels():
            counts[level] = len(self.select_communities(level))
        return counts

    @cached_property
    def leaves(self) -> tuple[Community, ...]:
        children = self._children
        return tuple(c for c in self.communities if c.id not in children)

    def select_communities(self, level: int | str = LEAF) -> list[Community]:
        """The communities whose summaries global search maps over (spec section 2), in index order.

        ``"leaf"``: every community with a non-blank summary that no community names as parent;
        an integer: every community at that level with a non-blank summary.
        """
        if level == LEAF:
            pool: Iterable[Community] = self.leaves
        else:
            pool = (c for c in self.communities if c.level == level)
        return [c for c in pool if c.summary.strip()]

    def map_text(self, community_id: str | int, *, include_claims: bool = True, include_sources: bool = True) -> str:
        """The text the batcher packs for one selected community (spec section 3).

        Three parts in order, each left out when empty: the community's summary; one line per
        claim of its descendant leaves; the text of the chunks those claims cite, each once,
        in first-seen order.
        """
        community = self.community(community_id)
        claims = self.leaf_claims(community.id) if (include_claims or include_sources) else []
        seen: dict[str, SourceChunk] = {}
        if include_sources:
            self._table("chunks")
            for claim in claims:
                for chunk_id in claim.chunk_ids:
                    seen.setdefault(chunk_id, self._chunks[chunk_id])
        return format_map_text(
            community.summary,
            [format_claim_line(c) for c in claims] if include_claims else (),
            [chunk.text for chunk in seen.values()],
        )

    def stats(self) -> dict[str, int]:
        return {
            "communities": len(self.communities),
            "claims": len(self.claims),
            "chunks": len(self.chunks),
            "documents": len(self.documents),
            "entities": len(self.entities),
            "relationships": len(self.relationships),
        }


_DEFERRED_FIELDS = frozenset({*DEFERRED_TABLES, "warnings"})


def map_text_tables(*, include_claims: bool, include_sources: bool) -> tuple[str, ...]:
    """The tables :meth:`Index.map_text` reads with these settings (a front end reads them
    before a run, so an unreadable table is reported as the index's error)."""
    return MAP_TEXT_TABLES if (include_claims or include_sources) else ()


def _structure_error(error: ValidationError) -> IndexValidationError | None:
    """The IndexValidationError a ValidationError carries, when the structure check was its one failure."""
    details = error.errors()
    if len(details) != 1:
        return None
    carried = details[0].get("ctx", {}).get("error")
    return carried if isinstance(carried, IndexValidationError) else None


__all__ = [
    "LEAF",
    "MAP_TEXT_TABLES",
    "Claim",
    "Community",
    "Document",
    "Entity",
    "Id",
    "Index",
    "Relationship",
    "SourceChunk",
    "map_text_tables",
]
