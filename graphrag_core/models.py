"""The index: communities, claims, source chunks and documents, with the lookups search needs.

Its rows are the frozen records of :mod:`graphrag_core.rows` (importable from here too). The
community hierarchy lives in a networkx ``DiGraph`` whose edges point parent -> child.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

import networkx as nx
from pydantic import PrivateAttr, ValidationError, model_validator

from .context import format_claim_line, format_map_text
from .errors import IndexValidationError
from .levels import LEAF
from .rows import Claim, Community, Document, Entity, Id, Record, Relationship, SourceChunk
from .validation import check_structure, locate

if TYPE_CHECKING:
    from .validation import RecordSource


class Index(Record):
    """A loaded index. Constructing one validates its structure.

    Invariants once built: ids are unique per table; every parent exists and the parent links
    form a forest whose child levels are their parent's level + 1; every claim names an
    existing community and existing chunks; every chunk's document exists when documents are
    given. ``warnings`` holds recoverable oddities found while loading.
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
    _graph: nx.DiGraph = PrivateAttr(default_factory=nx.DiGraph)
    _order: dict[str, int] = PrivateAttr(default_factory=dict)

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

    def _build(self) -> None:
        """The lookups and the hierarchy graph (the structure is already checked)."""
        communities = self._communities = {c.id: c for c in self.communities}
        self._chunks = {c.id: c for c in self.chunks}
        self._documents = {d.id: d for d in self.documents}
        self._claims = {c.id: c for c in self.claims}
        graph = nx.DiGraph()
        graph.add_nodes_from(communities)
        graph.add_edges_from((c.parent_id, c.id) for c in self.communities if c.parent_id is not None)
        self._graph = graph
        self._order = {community_id: position for position, community_id in enumerate(communities)}
        by_community: dict[str, list[Claim]] = {}
        for claim in self.claims:
            by_community.setdefault(claim.community_id, []).append(claim)
        self._claims_by_community = by_community

    def __eq__(self, other: object) -> bool:
        """Equal when every table and the metadata are equal (the derived lookups are not compared)."""
        if not isinstance(other, Index):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in type(self).model_fields)

    __hash__ = None  # type: ignore[assignment]

    # -- lookups -----------------------------------------------------------------------------

    @property
    def graph(self) -> nx.DiGraph:
        """The hierarchy as a DiGraph, edges parent -> child (read-only by convention)."""
        return self._graph

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
        return [self._communities[c] for c in self._graph.successors(self.community(community_id).id)]

    def path_to_root(self, community_id: str | int) -> list[Community]:
        """The community, then its parent, up to its root."""
        path = [self.community(community_id)]
        while path[-1].parent_id is not None:
            path.append(self._communities[path[-1].parent_id])
        return path

    def is_leaf(self, community_id: str | int) -> bool:
        """True when no community names this one as its parent."""
        return self._graph.out_degree(self.community(community_id).id) == 0

    def descendant_leaves(self, community_id: str | int) -> list[Community]:
        """The leaf communities below this one, in index order; a leaf is its own descendant."""
        root = self.community(community_id).id
        graph, communities = self._graph, self._communities
        if graph.out_degree(root) == 0:
            return [communities[root]]
        leaves = [c for c in nx.descendants(graph, root) if graph.out_degree(c) == 0]
        return [communities[c] for c in sorted(leaves, key=self._order.__getitem__)]

    def claims_of(self, community_id: str | int) -> list[Claim]:
        """The claims attached directly to this community."""
        return list(self._claims_by_community.get(self.community(community_id).id, ()))

    def leaf_claims(self, community_id: str | int) -> list[Claim]:
        """The claims attached to the descendant leaves of this community, leaf by leaf."""
        return [claim for leaf in self.descendant_leaves(community_id) for claim in self._claims_by_community.get(leaf.id, ())]

    def claim(self, claim_id: str | int) -> Claim:
        try:
            return self._claims[str(claim_id)]
        except KeyError:
            raise KeyError(f"No claim {claim_id!r} in this index.") from None

    def chunk(self, chunk_id: str | int) -> SourceChunk:
        try:
            return self._chunks[str(chunk_id)]
        except KeyError:
            raise KeyError(f"No source chunk {chunk_id!r} in this index.") from None

    def document(self, document_id: str | int) -> Document | None:
        return self._documents.get(str(document_id))

    def claim_chunks(self, claim: Claim | str | int) -> list[SourceChunk]:
        """The source chunks a claim cites, in the claim's order."""
        if not isinstance(claim, Claim):
            claim = self.claim(claim)
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
        return tuple(c for c in self.communities if self._graph.out_degree(c.id) == 0)

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


def _structure_error(error: ValidationError) -> IndexValidationError | None:
    """The IndexValidationError a ValidationError carries, when the structure check was its one failure."""
    details = error.errors()
    if len(details) != 1:
        return None
    carried = details[0].get("ctx", {}).get("error")
    return carried if isinstance(carried, IndexValidationError) else None


__all__ = ["LEAF", "Claim", "Community", "Document", "Entity", "Id", "Index", "Relationship", "SourceChunk"]
