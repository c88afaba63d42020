"""Dynamic community selection (``docs/dynamic-selection.md``): the model rates
communities from the roots down, and the map reads the most specific relevant ones.

Invariants of :func:`select_dynamic`:
- a frontier is always in index order; a blank summary is never rated, its children take its
  place in the same round (recursively);
- each community of a round is called ``rating_repeats`` times, each repeat at most
  ``retry_policy.max_attempts`` attempts (2 by default) through the engine's one retry loop
  (``retry.complete_with_retry``), with at most ``map_concurrency`` calls in flight across the
  round; the repeat number is part of the cache key;
- a community whose repeats all failed counts as relevant (kept and expanded) and is recorded
  as failed, never turned into a made-up rating;
- every community of the index ends with exactly one fate: kept, pruned, superseded, skipped,
  failed or unreached.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .events import CommunityRated, HierarchyNode, SelectionFinished, SelectionRound, SelectionStarted
from .llm.base import ChatModel, ChatRequest, TokenUsage
from .errors import ModelOutputError, SpendLimitReached, describe_error
from .retry import DEFAULT_RETRY_POLICY, Attempts, CallBudget, CallFailed, RetryPolicy, complete_with_retry
from .models import Community, Index
from .parsing import RatingOutput, parse_rating_output
from .pool import run_pool
from .rating_call import majority_rating, rating_cache_key, rating_request
from .request import GlobalSearchRequest
from .results import CommunityFate, CommunityRating
from .spending import SpendingLimit
from .tokens import Tokenizer

if TYPE_CHECKING:
    from .cache import MapCache
    from .events import Event

EventSink = Callable[["Event"], None]
Clock = Callable[[], float]

HIERARCHY_TITLE_CHARS = 80  # titles in SelectionStarted are cut to this many characters (stored with every run)


@dataclass(frozen=True)
class RatingCost:
    """The range of what rating can cost before any call: at least every root is rated (the
    first frontier, blank roots replaced by their children), at most every non-blank community.
    Calls count repeats; tokens are the rating prompts' estimates (retries not counted)."""

    min_calls: int
    max_calls: int
    min_prompt_tokens: int
    max_prompt_tokens: int


def expand_blanks(index: Index, community_ids: Iterable[str]) -> tuple[list[str], list[str]]:
    """``community_ids`` with every blank community replaced by its children, recursively: the
    non-blank communities reached and the blank ones passed over, each in index order, once."""
    reached: set[str] = set()
    passed: set[str] = set()
    stack = list(community_ids)
    while stack:
        community = index.community(stack.pop())
        if community.summary.strip():
            reached.add(community.id)
        else:
            passed.add(community.id)
            stack.extend(child.id for child in index.children(community.id))
    return _in_index_order(index, reached), _in_index_order(index, passed)


def _in_index_order(index: Index, community_ids: set[str]) -> list[str]:
    return [c.id for c in index.communities if c.id in community_ids]


def root_ids(index: Index) -> list[str]:
    """The communities with no parent, in index order."""
    return [c.id for c in index.communities if c.parent_id is None]


def first_frontier(index: Index) -> list[Community]:
    """Round 0's frontier: the roots, each blank one replaced by its children (recursively), in index order."""
    reached, _ = expand_blanks(index, root_ids(index))
    return [index.community(community_id) for community_id in reached]


def estimate_rating_cost(index: Index, request: GlobalSearchRequest, *, tokenizer: Tokenizer) -> RatingCost:
    """The rating cost range of a dynamic request (raises ``BudgetError`` like a run would)."""

    def tokens(community: Community) -> int:
        chat = rating_request(request.query, community, budget=request.rating_prompt_budget, output_reserve=request.rating_output_reserve,
                              tokenizer=tokenizer, question_reserve=request.question_reserve)
        return tokenizer.count(chat.prompt_text)

    every = {c.id: tokens(c) for c in index.communities if c.summary.strip()}
    roots = [c.id for c in first_frontier(index)]
    n = request.rating_repeats
    return RatingCost(min_calls=len(roots) * n, max_calls=len(every) * n, min_prompt_tokens=sum(every[i] for i in roots) * n, max_prompt_tokens=sum(every.values()) * n)


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
    started_at: float | None = None  # when its first call to the model started (None: the cache answered every repeat)

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
    spending: SpendingLimit | None = None,
    keep: int = 0,
) -> SelectionOutcome:
    """Walk the hierarchy from the roots, rating each frontier (see the module docstring)."""
    emit, clock = on_event or (lambda event: None), clock or (lambda: 0.0)
    walk = _Walk(index, request, model, tokenizer=tokenizer, emit=emit, cache=cache, clock=clock, retry_policy=retry_policy)
    walk.spending, walk.keep_free = spending, keep  # no rating call that could pass the limit (keeping `keep` free) is sent
    return await walk.run()


@dataclass
class _Round:
    """One round of the walk: the rating call of each member of its frontier, and what it found.

    ``next_ids`` collects the children of the round's relevant communities, in the order they
    were settled (the next frontier puts them in index order)."""

    number: int
    requests: dict[str, ChatRequest]
    rated: dict[str, _Rated]
    remaining: dict[str, int]
    jobs: list[tuple[str, int]]
    next_ids: list[str] = field(default_factory=list)
    limit_reached: SpendLimitReached | None = None


class _Walk:
    """One run of dynamic selection, from the first round to the finished outcome.

    Invariants between rounds: ``records`` holds the final record of every community already
    rated or skipped; ``kept`` holds the relevant communities still selected (without
    ``keep_parent``, none of them is the nearest rated ancestor of another relevant one);
    ``totals`` counts every settled community's calls, cache hits and usage once.
    """

    def __init__(
        self,
        index: Index,
        request: GlobalSearchRequest,
        model: ChatModel,
        *,
        tokenizer: Tokenizer,
        emit: EventSink,
        cache: MapCache | None,
        clock: Clock,
        retry_policy: RetryPolicy,
    ) -> None:
        self.index, self.request, self.model = index, request, model
        self.tokenizer, self.emit, self.cache, self.clock, self.retry_policy = tokenizer, emit, cache, clock, retry_policy
        self.records: dict[str, CommunityRating] = {}
        self.spending: SpendingLimit | None = None
        self.keep_free, self.kept = 0, set[str]()
        self.totals = _Totals()
        self.levels = {c.level for c in index.communities}

    async def run(self) -> SelectionOutcome:
        """Check the budget, announce the hierarchy, rate round after round, then finish."""
        self.check_budget()
        roots = root_ids(self.index)
        self.start(roots)
        frontier, skipped = self.next_frontier(roots, 0)
        fallback = False
        number = 0
        while frontier:
            next_ids = await self.rate_round(number, frontier, skipped=skipped, fallback=fallback)
            number += 1
            frontier, skipped = self.next_frontier(next_ids, number)
            fallback = not frontier and self.falls_back(number)
            if fallback:
                frontier = [c.id for c in self.index.communities if c.level == number and c.summary.strip()]
        return self.finish(rounds=number)

    def prompt_for(self, community: Community) -> ChatRequest:
        request = self.request
        return rating_request(request.query, community, budget=request.rating_prompt_budget, output_reserve=request.rating_output_reserve,
                              tokenizer=self.tokenizer, question_reserve=request.question_reserve)

    def check_budget(self) -> None:
        """A budget too small for any rating prompt fails before the first event and call."""
        for community in self.index.communities:
            if community.summary.strip():
                self.prompt_for(community.model_copy(update={"summary": ""}))

    def start(self, roots: Sequence[str]) -> None:
        self.emit(
            SelectionStarted(
                at=self.clock(),
                community_count=len(self.index.communities),
                hierarchy=tuple(
                    HierarchyNode(id=c.id, parent_id=c.parent_id, level=c.level, title=c.title[:HIERARCHY_TITLE_CHARS], blank=not c.summary.strip())
                    for c in self.index.communities
                ),
                root_ids=tuple(roots),
                rating_threshold=self.request.rating_threshold,
                keep_parent=self.request.keep_parent,
                rating_repeats=self.request.rating_repeats,
                rating_prompt_budget=self.request.rating_prompt_budget,
            )
        )

    def next_frontier(self, community_ids: Sequence[str], number: int) -> tuple[list[str], tuple[str, ...]]:
        """Round ``number``'s frontier from ``community_ids``; the blank ones passed over are
        recorded as skipped in that round."""
        frontier, skipped = expand_blanks(self.index, community_ids)
        for community_id in skipped:
            level = self.index.community(community_id).level
            self.records[community_id] = CommunityRating(community_id=community_id, level=level, fate="skipped", round=number)
        return frontier, tuple(skipped)

    def falls_back(self, number: int) -> bool:
        """The fallback rule: with an empty frontier and nothing kept, round ``number`` rates every
        non-blank community of level ``number`` when that level exists and is allowed."""
        return not self.kept and number in self.levels and number <= self.request.fallback_max_level

    async def rate_round(self, number: int, frontier: list[str], *, skipped: tuple[str, ...], fallback: bool) -> list[str]:
        """Rate every member of the frontier (every prompt is built before any call, so a budget
        error stops the walk first); the children to visit next, as the members settled."""
        self.emit(SelectionRound(at=self.clock(), round=number, community_ids=tuple(frontier), skipped_ids=skipped, fallback=fallback))
        repeats = self.request.rating_repeats
        this = _Round(
            number=number,
            requests={cid: self.prompt_for(self.index.community(cid)) for cid in frontier},
            rated={cid: _Rated(ratings=[None] * repeats, reasons=[None] * repeats) for cid in frontier},
            remaining={cid: repeats for cid in frontier},
            jobs=[(cid, repeat) for cid in frontier for repeat in range(repeats)],
        )
        await run_pool(len(this.jobs), self.request.map_concurrency, functools.partial(self.rate_once, this))
        if this.limit_reached is not None:
            raise this.limit_reached
        return this.next_ids

    async def rate_once(self, this: _Round, job: int) -> None:
        """One repeat of one community, from the cache or from the model through the map's retry
        loop (:func:`~graphrag_core.retry.complete_with_retry`: every attempt's usage counts, and a
        retry after an unusable reply tells the model what was wrong); the community settles as
        soon as its last repeat is done."""
        community_id, repeat = this.jobs[job]
        rated, chat_request = this.rated[community_id], this.requests[community_id]
        key = rating_cache_key(self.model, chat_request, repeat) if self.cache is not None else None
        output = await self.from_cache(key) if key is not None else None
        if output is not None:
            rated.cache_hits += 1
        else:
            tally = Attempts()
            rated.started_at = self.clock() if rated.started_at is None else rated.started_at
            try:
                reply = await complete_with_retry(
                    self.model, chat_request, parse_rating_output, policy=self.retry_policy, attempts=tally,
                    budget=CallBudget(tokenizer=self.tokenizer, token_budget=self.request.map_token_budget, spending=self.spending, keep=self.keep_free),
                )
            except CallFailed as failed:  # a failed repeat is recorded; the walk keeps the community
                rated.errors.append(f"repeat {repeat}: {describe_error(failed.error)}")
            except SpendLimitReached as reached:  # the calls in flight end and are recorded, then the walk stops
                this.limit_reached = this.limit_reached or reached
                return
            else:
                output = reply.value
                if key is not None:
                    await asyncio.to_thread(self.cache.put, key, reply.text)  # type: ignore[union-attr]
            finally:
                rated.calls += tally.calls
                rated.usage = rated.usage + tally.usage
        if output is not None:
            rated.ratings[repeat], rated.reasons[repeat] = output.rating, output.reason
        this.remaining[community_id] -= 1
        if this.remaining[community_id] == 0:
            this.next_ids.extend(self.settle(this, community_id))

    async def from_cache(self, key: str) -> RatingOutput | None:
        assert self.cache is not None
        text = await asyncio.to_thread(self.cache.get, key)
        if text is None:
            return None
        try:
            return parse_rating_output(text)
        except ModelOutputError:
            return None  # an entry that is not a valid rating: ask the model again

    def settle(self, this: _Round, community_id: str) -> list[str]:
        """Fold one community's repeats into the walk: its record, the totals, its event; the
        children to visit next when it is relevant."""
        community, rated = self.index.community(community_id), this.rated[community_id]
        rating = rated.rating
        relevant = rated.failed or (rating is not None and rating >= self.request.rating_threshold)
        superseded = self.keep(community_id) if relevant else None
        fate: CommunityFate = "failed" if rated.failed else "kept" if relevant else "pruned"
        self.records[community_id] = CommunityRating(
            community_id=community_id,
            level=community.level,
            fate=fate,
            round=this.number,
            rating=rating,
            failed=rated.failed,
            repeat_ratings=tuple(rated.ratings),
            reason=rated.reason,
            errors=tuple(rated.errors),
            calls=rated.calls,
            cache_hits=rated.cache_hits,
            usage=rated.usage,
        )
        self.totals.add(rated)
        cached_tokens = self.tokenizer.count(this.requests[community_id].prompt_text) * rated.cache_hits if rated.cache_hits else 0
        shared = {name: value for name, value in self.records[community_id] if name != "fate"}
        extra = {"kept": relevant, "superseded_id": superseded, "cached_prompt_tokens": cached_tokens, "started_at": rated.started_at}
        self.emit(CommunityRated(at=self.clock(), **shared, **extra))
        return [child.id for child in self.index.children(community_id)] if relevant else []

    def keep(self, community_id: str) -> str | None:
        """Keep a relevant community and apply the supersede rule: without ``keep_parent``, its
        nearest rated ancestor (blank ones passed over) leaves the kept set. The superseded id, if any."""
        self.kept.add(community_id)
        ancestor = self.nearest_rated_ancestor(community_id)
        if self.request.keep_parent or ancestor is None or ancestor not in self.kept:
            return None
        self.kept.discard(ancestor)
        self.records[ancestor] = self.records[ancestor].model_copy(update={"fate": "superseded"})
        return ancestor

    def nearest_rated_ancestor(self, community_id: str) -> str | None:
        parent = self.index.parent(community_id)
        while parent is not None and not parent.summary.strip():
            parent = self.index.parent(parent.id)
        return None if parent is None else parent.id

    def finish(self, *, rounds: int) -> SelectionOutcome:
        """Every community not reached is recorded as unreached; the outcome and its event."""
        for community in self.index.communities:
            self.records.setdefault(community.id, CommunityRating(community_id=community.id, level=community.level, fate="unreached"))
        outcome = SelectionOutcome(
            communities=[c for c in self.index.communities if c.id in self.kept],
            ratings=[self.records[c.id] for c in self.index.communities],
            calls=self.totals.calls,
            cache_hits=self.totals.cache_hits,
            usage=self.totals.usage,
            rounds=rounds,
        )
        self.emit(
            SelectionFinished(
                at=self.clock(),
                kept_ids=tuple(c.id for c in outcome.communities),
                fates={r.community_id: r.fate for r in outcome.ratings},
                rated_count=self.totals.rated,
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


__all__ = [
    "RatingCost", "SelectionOutcome", "estimate_rating_cost", "expand_blanks", "first_frontier", "majority_rating",
    "rating_cache_key", "rating_request", "root_ids", "select_dynamic",
]
