"""Dynamic community selection (``shared/spec/dynamic-selection.md``): the model rates
communities from the roots down, and the map reads the most specific relevant ones.

Invariants of :func:`select_dynamic`:
- a frontier is always in index order; a blank summary is never rated, its children take its
  place in the same round (recursively);
- each community of a round is called ``rating_repeats`` times, each repeat at most
  ``retry_policy.max_attempts`` attempts (2 by default) through the engine's one retry loop
  (``map.complete_with_retry``), with at most ``map_concurrency`` calls in flight across the
  round; the repeat number is part of the cache key;
- a community whose repeats all failed counts as relevant (kept and expanded) and is recorded
  as failed, never turned into a made-up rating;
- every community of the index ends with exactly one fate: kept, pruned, superseded, skipped,
  failed or unreached.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .events import CommunityRated, HierarchyNode, SelectionFinished, SelectionRound, SelectionStarted
from .llm.base import ChatModel, ChatRequest, TokenUsage
from .errors import BudgetError, ModelOutputError, describe_error
from .map import DEFAULT_RETRY_POLICY, Attempts, CallFailed, RetryPolicy, complete_with_retry
from .models import Community, Index
from .parsing import RatingOutput, parse_rating_output
from .pool import run_pool
from .prompts import RATING_OUTPUT_SCHEMA, render_rating_messages
from .request import GlobalSearchRequest
from .results import CommunityFate, CommunityRating
from .tokens import Tokenizer

if TYPE_CHECKING:
    from .cache import MapCache
    from .events import Event

EventSink = Callable[["Event"], None]
Clock = Callable[[], float]

RATING_PROMPT_TOO_SMALL = "Map token budget cannot fit the rating prompt."
HIERARCHY_TITLE_CHARS = 80
"""Titles in ``SelectionStarted`` are cut to this many characters (the event is stored with every run)."""


# -- the rating prompt -----------------------------------------------------------------------


def rating_request(
    query: str, community: Community, *, budget: int, output_reserve: int, tokenizer: Tokenizer
) -> ChatRequest:
    """The rating call for one community, its summary cut to the longest code-point prefix whose
    whole prompt fits ``budget``. Raises :class:`BudgetError` when even an empty summary does not fit."""
    summary = community.summary

    def request_for(text: str) -> ChatRequest:
        return ChatRequest(
            purpose="rate",
            messages=render_rating_messages(query, community.id, text),
            max_tokens=output_reserve or None,
            json_mode=True,
            output_schema=RATING_OUTPUT_SCHEMA,
        )

    def fits(length: int) -> bool:
        return tokenizer.count(request_for(summary[:length]).prompt_text) <= budget

    if fits(len(summary)):
        return request_for(summary)
    if not fits(0):
        raise BudgetError(RATING_PROMPT_TOO_SMALL)
    low, high = 0, len(summary)  # fits(low) and not fits(high)
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            low = middle
        else:
            high = middle
    return request_for(summary[:low])


def rating_cache_key(model: object, request: ChatRequest, repeat: int) -> str:
    """The map cache's key for one repeat of a rating call: the map's key of the exact request
    (its output schema left out), with the repeat number, so repeats are cached apart and a
    rerun reuses every one."""
    from .cache import cache_key

    keyed = request.model_copy(update={"output_schema": None})  # the same shape the prompt asks for: stored ratings stay valid
    return hashlib.sha256(f"{cache_key(model, keyed)}\x00rate-repeat:{repeat}".encode()).hexdigest()


def majority_rating(ratings: Sequence[int]) -> int:
    """The most frequent rating; a tie goes to the lowest value (as Microsoft GraphRAG's)."""
    counts = Counter(ratings)
    best = max(counts.values())
    return min(value for value, count in counts.items() if count == best)


@dataclass(frozen=True)
class RatingCost:
    """The range of what rating can cost before any call: at least every root is rated (the
    first frontier, blank roots replaced by their children), at most every non-blank community.
    Calls count repeats; tokens are the rating prompts' estimates (retries not counted)."""

    min_calls: int
    max_calls: int
    min_prompt_tokens: int
    max_prompt_tokens: int


def first_frontier(index: Index) -> list[Community]:
    """Round 0's frontier: the roots, each blank one replaced by its children (recursively), in index order."""
    chosen: set[str] = set()
    stack = [c.id for c in index.communities if c.parent_id is None]
    while stack:
        community = index.community(stack.pop())
        if community.summary.strip():
            chosen.add(community.id)
        else:
            stack.extend(child.id for child in index.children(community.id))
    return [c for c in index.communities if c.id in chosen]


def estimate_rating_cost(index: Index, request: GlobalSearchRequest, *, tokenizer: Tokenizer) -> RatingCost:
    """The rating cost range of a dynamic request (raises ``BudgetError`` like a run would)."""

    def tokens(community: Community) -> int:
        chat = rating_request(
            request.query, community, budget=request.rating_prompt_budget, output_reserve=request.rating_output_reserve, tokenizer=tokenizer
        )
        return tokenizer.count(chat.prompt_text)

    every = {c.id: tokens(c) for c in index.communities if c.summary.strip()}
    roots = [c.id for c in first_frontier(index)]
    repeats = request.rating_repeats
    return RatingCost(
        min_calls=len(roots) * repeats,
        max_calls=len(every) * repeats,
        min_prompt_tokens=sum(every[i] for i in roots) * repeats,
        max_prompt_tokens=sum(every.values()) * repeats,
    )


# -- the walk --------------------------------------------------------------------------------


@dataclass
class _Rated:
    """The outcome of every repeat of one community in one round."""

    ratings: list[int | None]
    reasons: list[str | None]
    errors: list[str] = field(default_factory=list)
    calls: int = 0
    cache_hits: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)

    @property
    def successes(self) -> list[int]:
        return [r for r in self.ratings if r is not None]

    @property
    def failed(self) -> bool:
        return not self.successes

    @property
    def rating(self) -> int | None:
        return None if self.failed else majority_rating(self.successes)

    @property
    def reason(self) -> str | None:
        return next((reason for rating, reason in zip(self.ratings, self.reasons) if rating is not None), None)


@dataclass
class SelectionOutcome:
    """What the walk chose and what it cost. ``communities`` are the kept ones, in index order;
    ``ratings`` has one record per community of the index, in index order."""

    communities: list[Community]
    ratings: list[CommunityRating]
    calls: int = 0
    cache_hits: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    rounds: int = 0

    @property
    def failed_count(self) -> int:
        return sum(1 for r in self.ratings if r.failed)

    def diagnostics(self) -> dict[str, object]:
        """The rating figures of a run's diagnostics (kept apart from the map's and the reduce's)."""
        return dict(
            rating_calls=self.calls,
            rating_cache_hits=self.cache_hits,
            rating_usage=self.usage,
            community_ratings=self.ratings,
            failed_rating_count=self.failed_count,
        )


async def select_dynamic(
    index: Index,
    request: GlobalSearchRequest,
    model: ChatModel,
    *,
    tokenizer: Tokenizer,
    on_event: EventSink | None = None,
    cache: MapCache | None = None,
    clock: Clock | None = None,
    retry_policy: RetryPolicy = DEFAULT_RETRY_POLICY,
) -> SelectionOutcome:
    """Walk the hierarchy from the roots, rating each frontier (see the module docstring)."""
    emit = on_event or (lambda event: None)
    clock = clock or (lambda: 0.0)
    order = {c.id: i for i, c in enumerate(index.communities)}
    children: dict[str, list[str]] = {c.id: [] for c in index.communities}
    for community in index.communities:
        if community.parent_id is not None:
            children[community.parent_id].append(community.id)  # index order, as communities are

    def blank(community_id: str) -> bool:
        return not index.community(community_id).summary.strip()

    def in_order(ids: Sequence[str]) -> list[str]:
        return sorted(set(ids), key=order.__getitem__)

    def expand(ids: Sequence[str], skipped: list[str]) -> list[str]:
        """``ids`` with every blank community replaced by its children, recursively."""
        out: list[str] = []
        stack = list(ids)
        while stack:
            community_id = stack.pop()
            if blank(community_id):
                skipped.append(community_id)
                stack.extend(children[community_id])
            else:
                out.append(community_id)
        return in_order(out)

    def nearest_rated_ancestor(community_id: str) -> str | None:
        parent = index.community(community_id).parent_id
        while parent is not None and blank(parent):
            parent = index.community(parent).parent_id
        return parent

    roots = [c.id for c in index.communities if c.parent_id is None]
    for community in index.communities:  # a budget too small for any prompt fails before the first call
        if community.summary.strip():
            rating_request(
                request.query,
                community.model_copy(update={"summary": ""}),
                budget=request.rating_prompt_budget,
                output_reserve=request.rating_output_reserve,
                tokenizer=tokenizer,
            )
    emit(
        SelectionStarted(
            at=clock(),
            community_count=len(index.communities),
            hierarchy=tuple(
                HierarchyNode(id=c.id, parent_id=c.parent_id, level=c.level, title=c.title[:HIERARCHY_TITLE_CHARS], blank=not c.summary.strip())
                for c in index.communities
            ),
            root_ids=tuple(roots),
            rating_threshold=request.rating_threshold,
            keep_parent=request.keep_parent,
            rating_repeats=request.rating_repeats,
            rating_prompt_budget=request.rating_prompt_budget,
        )
    )

    records: dict[str, CommunityRating] = {}
    kept: set[str] = set()
    total = _Totals()
    levels = {c.level for c in index.communities}

    def next_frontier(ids: Sequence[str], round_number: int) -> tuple[list[str], tuple[str, ...]]:
        skipped: list[str] = []
        frontier = expand(ids, skipped)
        for community_id in skipped:
            records[community_id] = CommunityRating(
                community_id=community_id, level=index.community(community_id).level, fate="skipped", round=round_number
            )
        return frontier, tuple(in_order(skipped))

    frontier, skipped = next_frontier(roots, 0)
    fallback = False
    round_number = 0
    while frontier:
        emit(SelectionRound(at=clock(), round=round_number, community_ids=tuple(frontier), skipped_ids=skipped, fallback=fallback))
        # Build every prompt first, so a budget error stops the walk before any call.
        requests = {
            cid: rating_request(
                request.query,
                index.community(cid),
                budget=request.rating_prompt_budget,
                output_reserve=request.rating_output_reserve,
                tokenizer=tokenizer,
            )
            for cid in frontier
        }
        next_ids: list[str] = []

        def settle(community_id: str, rated: _Rated, this_round: int = round_number) -> None:
            """Fold one community's ratings into the walk, as soon as its repeats are done."""
            community = index.community(community_id)
            rating = rated.rating
            relevant = rated.failed or (rating is not None and rating >= request.rating_threshold)
            superseded: str | None = None
            if relevant:
                kept.add(community_id)
                next_ids.extend(children[community_id])
                ancestor = nearest_rated_ancestor(community_id)
                if not request.keep_parent and ancestor is not None and ancestor in kept:
                    kept.discard(ancestor)
                    records[ancestor] = records[ancestor].model_copy(update={"fate": "superseded"})
                    superseded = ancestor
            fate: CommunityFate = "failed" if rated.failed else "kept" if relevant else "pruned"
            records[community_id] = CommunityRating(
                community_id=community_id,
                level=community.level,
                fate=fate,
                round=this_round,
                rating=rating,
                failed=rated.failed,
                repeat_ratings=tuple(rated.ratings),
                reason=rated.reason,
                errors=tuple(rated.errors),
                calls=rated.calls,
                cache_hits=rated.cache_hits,
                usage=rated.usage,
            )
            total.add(rated)
            emit(
                CommunityRated(
                    at=clock(),
                    community_id=community_id,
                    level=community.level,
                    round=this_round,
                    rating=rating,
                    failed=rated.failed,
                    repeat_ratings=tuple(rated.ratings),
                    reason=rated.reason,
                    kept=relevant,
                    superseded_id=superseded,
                    errors=tuple(rated.errors),
                    calls=rated.calls,
                    cache_hits=rated.cache_hits,
                    usage=rated.usage,
                    cached_prompt_tokens=tokenizer.count(requests[community_id].prompt_text) * rated.cache_hits if rated.cache_hits else 0,
                )
            )

        await _rate_round(
            frontier,
            requests,
            model,
            repeats=request.rating_repeats,
            concurrency=request.map_concurrency,
            cache=cache,
            policy=retry_policy,
            settle=settle,
        )
        next_level = round_number + 1
        frontier, skipped = next_frontier(next_ids, next_level)
        fallback = False
        if not frontier and not kept and next_level in levels and next_level <= request.fallback_max_level:
            frontier = [c.id for c in index.communities if c.level == next_level and c.summary.strip()]
            fallback = True
        round_number = next_level

    for community in index.communities:
        records.setdefault(community.id, CommunityRating(community_id=community.id, level=community.level, fate="unreached"))
    outcome = SelectionOutcome(
        communities=[c for c in index.communities if c.id in kept],
        ratings=[records[c.id] for c in index.communities],
        calls=total.calls,
        cache_hits=total.cache_hits,
        usage=total.usage,
        rounds=round_number,
    )
    emit(
        SelectionFinished(
            at=clock(),
            kept_ids=tuple(c.id for c in outcome.communities),
            fates={r.community_id: r.fate for r in outcome.ratings},
            rated_count=total.rated,
            rounds=outcome.rounds,
            calls=outcome.calls,
            cache_hits=outcome.cache_hits,
            failed_count=outcome.failed_count,
            usage=outcome.usage,
        )
    )
    return outcome


@dataclass
class _Totals:
    calls: int = 0
    cache_hits: int = 0
    rated: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)

    def add(self, rated: _Rated) -> None:
        self.calls += rated.calls
        self.cache_hits += rated.cache_hits
        self.rated += 1
        self.usage = self.usage + rated.usage


async def _rate_round(
    frontier: Sequence[str],
    requests: dict[str, ChatRequest],
    model: ChatModel,
    *,
    repeats: int,
    concurrency: int,
    cache: MapCache | None,
    policy: RetryPolicy,
    settle: Callable[[str, _Rated], None],
) -> None:
    """Every repeat of every frontier community, at most ``concurrency`` in flight; ``settle``
    runs once per community, as soon as its last repeat is done.

    A repeat is read from the cache, or else asked of the model through the map's retry loop
    (:func:`~graphrag_core.map.complete_with_retry`): every attempt's usage counts, and a retry
    after an unusable reply tells the model what was wrong with it."""
    results = {cid: _Rated(ratings=[None] * repeats, reasons=[None] * repeats) for cid in frontier}
    remaining = {cid: repeats for cid in frontier}
    jobs = [(cid, repeat) for cid in frontier for repeat in range(repeats)]

    async def from_cache(key: str) -> RatingOutput | None:
        assert cache is not None
        text = await asyncio.to_thread(cache.get, key)
        if text is None:
            return None
        try:
            return parse_rating_output(text)
        except ModelOutputError:
            return None  # an entry written by an older, laxer version: ask the model again

    async def rate_once(job: int) -> None:
        community_id, repeat = jobs[job]
        rated = results[community_id]
        chat_request = requests[community_id]
        key = rating_cache_key(model, chat_request, repeat) if cache is not None else None
        output = await from_cache(key) if key is not None else None
        if output is not None:
            rated.cache_hits += 1
        else:
            tally = Attempts()
            try:
                reply = await complete_with_retry(model, chat_request, parse_rating_output, policy=policy, attempts=tally)
            except CallFailed as failed:  # a failed repeat is recorded; the walk keeps the community
                rated.errors.append(f"repeat {repeat}: {describe_error(failed.error)}")
            else:
                output = reply.value
                if key is not None:
                    await asyncio.to_thread(cache.put, key, reply.text)  # type: ignore[union-attr]
            finally:
                rated.calls += tally.calls
                rated.usage = rated.usage + tally.usage
        if output is not None:
            rated.ratings[repeat], rated.reasons[repeat] = output.rating, output.reason
        remaining[community_id] -= 1
        if remaining[community_id] == 0:
            settle(community_id, rated)

    await run_pool(len(jobs), concurrency, rate_once)


__all__ = ["RatingCost", "estimate_rating_cost", "first_frontier", "SelectionOutcome", "majority_rating", "rating_cache_key", "rating_request", "select_dynamic"]
