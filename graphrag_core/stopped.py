"""What a stopped run read, from the fold of its events: its map phase so far and its dynamic
selection, as the engine's own steps would have reported them. Pure; used to answer a stopped
run from what it read (:func:`graphrag_core.search.answer_from_read`).

Invariants: every batch of the run is exactly one of answered (a ``MapAnswer``), failed (a
``BatchFailure``: it failed every attempt before the stop) or unread (it had not ended, or an
interruption cut it); the map's calls and tokens are the run's own counts.
"""

from __future__ import annotations

from .events import MapBatchFailed, MapBatchRetried, MapBatchSucceeded
from .llm.base import TokenUsage
from .map import MapPhaseResult
from .models import Index
from .results import BatchFailure, CommunityRating, MapAnswer
from .selection import SelectionOutcome
from .state import BatchStatus, RunState, SelectionState


def map_read(state: RunState) -> tuple[MapPhaseResult, int]:
    """What a stopped run's map read, from its fold: the answers and failures of the batches that
    ended before the stop, what their calls spent, and how many batches had not ended."""
    answers = [
        MapAnswer(answer=b.answer or "", usefulness=b.usefulness or 0.0, community_ids=b.community_ids, batch_index=b.index)
        for b in state.batches
        if b.status.succeeded
    ]
    failures = [
        BatchFailure(batch_index=b.index, community_ids=b.community_ids, attempts=b.attempts, error=b.errors[-1] if b.errors else "", error_type=b.error_type)
        for b in state.batches
        if b.status is BatchStatus.FAILED and b.error_type is not None  # a batch cut by an interruption was not read
    ]
    usage = TokenUsage()
    for event in state.events:
        if isinstance(event, MapBatchRetried | MapBatchSucceeded | MapBatchFailed) and event.usage is not None:
            usage = usage + event.usage
    mapped = MapPhaseResult(
        answers=answers,
        failures=failures,
        usefulness=[b.usefulness if b.status.succeeded else None for b in state.batches],
        calls=state.map_calls,
        cache_hits=sum(1 for b in state.batches if b.cached),
        usage=usage,
    )
    return mapped, len(state.batches) - len(answers) - len(failures)


def walk_outcome(index: Index, walk: SelectionState) -> SelectionOutcome:
    """A finished dynamic selection as its events recorded it (a blank community passed over
    keeps no round: its events do not carry one per community)."""
    ratings = []
    for community in index.communities:
        rated = walk.ratings.get(community.id)
        fate = walk.fate_of(community.id)
        if rated is None:
            ratings.append(CommunityRating(community_id=community.id, level=community.level, fate=fate))
            continue
        shared = {name: getattr(rated, name) for name in CommunityRating.model_fields if name != "fate"}
        ratings.append(CommunityRating(**shared, fate=fate))
    kept = set(walk.kept_ids)
    return SelectionOutcome(
        communities=[c for c in index.communities if c.id in kept], ratings=ratings,
        calls=walk.calls, cache_hits=walk.cache_hits, usage=walk.usage, rounds=(walk.round or 0) + 1,
    )


__all__ = ["map_read", "walk_outcome"]
