"""The lazy method's candidates (docs/lazy-search.md, step 2): the source chunks ranked for
each subquery, grouped by the communities whose entities (or claims) name them.

A chunk belongs to a community when one of the community's entities was extracted from it
(``Entity.chunk_ids`` with ``Entity.community_ids``, or ``Community.entity_ids``), or one of its
claims cites it; a chunk that belongs to a community belongs to that community's ancestors
too, so a root holds every chunk of its branch. The chunks are ranked as the ``vector`` method
ranks them (:func:`graphrag_core.ranking.rank_chunks`: BM25, or an embedding model's cosine).

Invariants: :func:`memberships` is a function of the index; each community's candidates keep
the ranking's order (best first); a community's score is the sum of its best
:data:`CHUNKS_PER_TEST` candidates' relevance, so communities are tried best first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import NoChunkCommunitiesError
from ..models import Index
from ..ranking import RankedChunk, Ranking

CHUNKS_PER_TEST = 3
"""Source chunks one relevance test holds at most (fewer when the prompt budget is small)."""


def memberships(index: Index) -> dict[str, tuple[str, ...]]:
    """Each source chunk's communities, by chunk id (ancestors included, index order); a chunk no
    entity or claim names is left out. Raises :class:`NoChunkCommunitiesError` when no chunk has one."""
    found: dict[str, set[str]] = {}
    entities = {e.id: e for e in index.entities}
    known = {c.id for c in index.communities}
    for entity in index.entities:
        for chunk_id in entity.chunk_ids:
            found.setdefault(chunk_id, set()).update(cid for cid in entity.community_ids if cid in known)
    for community in index.communities:
        for entity_id in community.entity_ids:
            entity = entities.get(entity_id)
            for chunk_id in entity.chunk_ids if entity is not None else ():
                found.setdefault(chunk_id, set()).add(community.id)
    for claim in index.claims:
        for chunk_id in claim.chunk_ids:
            if claim.community_id in known:
                found.setdefault(chunk_id, set()).add(claim.community_id)
    ancestors = {c.id: [a.id for a in index.path_to_root(c.id)] for c in index.communities}
    order = {c.id: i for i, c in enumerate(index.communities)}
    result: dict[str, tuple[str, ...]] = {}
    for chunk_id, communities in found.items():
        every = {a for cid in communities for a in ancestors[cid]}
        if every:
            result[chunk_id] = tuple(sorted(every, key=order.__getitem__))
    if not result:
        raise NoChunkCommunitiesError()
    return result


@dataclass
class SubqueryCandidates:
    """One subquery's ranked chunks, and each community's share of them (best first)."""

    subquery: str
    ranking: Ranking
    by_community: dict[str, list[RankedChunk]] = field(default_factory=dict)

    def score(self, community_id: str) -> float:
        """How promising a community is for this subquery: its best candidates' relevance."""
        return sum(chunk.score for chunk in self.by_community.get(community_id, [])[:CHUNKS_PER_TEST])


def group_candidates(subquery: str, ranking: Ranking, membership: dict[str, tuple[str, ...]]) -> SubqueryCandidates:
    """``ranking``'s chunks under each community they belong to, in rank order."""
    by_community: dict[str, list[RankedChunk]] = {}
    for chunk in ranking.chunks:
        for community_id in membership.get(chunk.chunk_id, ()):
            by_community.setdefault(community_id, []).append(chunk)
    return SubqueryCandidates(subquery=subquery, ranking=ranking, by_community=by_community)


def candidate_counts(candidates: Sequence[SubqueryCandidates]) -> dict[str, int]:
    """Each community's distinct candidate chunks over every subquery."""
    chunks: dict[str, set[str]] = {}
    for one in candidates:
        for community_id, ranked in one.by_community.items():
            chunks.setdefault(community_id, set()).update(chunk.reference for chunk in ranked)
    return {community_id: len(refs) for community_id, refs in chunks.items()}


__all__ = ["CHUNKS_PER_TEST", "SubqueryCandidates", "candidate_counts", "group_candidates", "memberships"]
