"""The lazy method's relevance tests under their budget (docs/lazy-search.md, step 3): a walk
of the community hierarchy from the top level down, best first, by iterative deepening.

Each subquery walks on its own frontier; the walks share the budget and take their turns round
by round. A round makes one test for each community of the frontier (subqueries interleaved,
each one's communities best first): the community's next :data:`CHUNKS_PER_TEST` untested
candidates. After its test a community is

- ``opened`` when the test found a relevant chunk and the community has sub-communities with
  untested candidates: they join the next round's frontier (it is not tested again itself);
- tested ``again`` in the next round when it found one and has no such sub-community (a leaf),
  or found nothing fewer than :data:`MAX_MISSES` times in a row;
- ``left`` after :data:`MAX_MISSES` tests in a row found nothing relevant;
- ``exhausted`` when no untested candidate of its own is left.

Invariants: the relevance-test calls (and map cache answers) never exceed the budget
(:class:`~graphrag_core.lazy.budget.TestTickets`); a chunk is tested at most once per subquery;
a round's chunks are assigned before any of its calls, in frontier order, so the walk is a
function of the index, the subqueries and the replies whatever order the calls end in; at
most ``map_concurrency`` calls are in flight; a test whose every attempt failed is recorded as
failed (``RelevanceTested.failed``) and counts as a try that found nothing.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ..errors import ModelOutputError, RelevanceBudgetSpent, SpendLimitReached, describe_error
from ..events import Event, RelevanceTested, TestNext
from ..llm.base import ChatModel, ChatRequest, TokenUsage
from ..retry import Attempts, CallBudget, CallFailed, CallHooks, RetryPolicy, complete_with_retry
from ..models import Index
from ..pool import run_pool
from ..ranking import RankedChunk
from ..request import GlobalSearchRequest
from ..spending import SpendingLimit
from ..tokens import Tokenizer
from .budget import TestSpending, TestTickets
from .candidates import CHUNKS_PER_TEST, SubqueryCandidates
from .relevance import Verdict, parse_relevance_output, relevance_request

if TYPE_CHECKING:
    from ..cache import MapCache

MAX_MISSES = 2
"""Tests in a row that find nothing relevant before a community is left ("a few tries")."""


@dataclass
class _Entry:
    """A community on one subquery's frontier."""

    subquery: int
    community_id: str
    level: int
    misses: int = 0


@dataclass
class _Test:
    """One planned test and what it found."""

    entry: _Entry
    chunks: list[RankedChunk]
    request: ChatRequest
    verdicts: dict[str, Verdict] | None = None
    made: bool = False
    calls: int = 0
    cache_hits: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    errors: list[str] = field(default_factory=list)
    started_at: float | None = None
    prompt_tokens: int = 0
    step: TestNext = "again"
    after: list[_Entry] = field(default_factory=list)
    """The entries this test puts on the next round's frontier."""

    @property
    def relevant_ids(self) -> tuple[str, ...]:
        return tuple(ref for ref, verdict in (self.verdicts or {}).items() if verdict.relevant)


@dataclass
class Found:
    """A relevant chunk: the community whose test found it first, and its claims by subquery."""

    chunk: RankedChunk
    community_id: str
    level: int
    claims: dict[int, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class WalkOutcome:
    """What the tests found and cost: relevant chunks in the order found, by reference."""

    found: dict[str, Found]
    tests: int
    calls: int
    cache_hits: int
    failed: int
    rounds: int
    usage: TokenUsage
    reason: Literal["budget", "frontier"]

    @classmethod
    def nothing(cls) -> WalkOutcome:
        """The outcome before any test."""
        return cls(found={}, tests=0, calls=0, cache_hits=0, failed=0, rounds=0, usage=TokenUsage(), reason="frontier")


class RelevanceWalk:
    """One lazy run's relevance tests (see the module docstring)."""

    def __init__(
        self,
        index: Index,
        request: GlobalSearchRequest,
        model: ChatModel,
        candidates: Sequence[SubqueryCandidates],
        *,
        tokenizer: Tokenizer,
        emit: Callable[[Event], None],
        clock: Callable[[], float],
        policy: RetryPolicy,
        cache: MapCache | None = None,
        spending: SpendingLimit | None = None,
        keep: int = 0,
    ) -> None:
        self.index, self.request, self.model, self.candidates = index, request, model, list(candidates)
        self.tokenizer, self.emit, self.clock, self.policy, self.cache = tokenizer, emit, clock, policy, cache
        self.spending, self.keep = spending, keep
        self.tickets = TestTickets(request.relevance_budget)
        self.tested: list[set[str]] = [set() for _ in self.candidates]
        self.found: dict[str, Found] = {}
        self.calls = self.cache_hits = self.failed = 0
        self.usage = TokenUsage()
        self.limit_reached: SpendLimitReached | None = None
        self.left_after_round = request.relevance_budget
        """What the budget leaves after the current round's tests, one call each."""

    # -- the frontier ------------------------------------------------------------------------

    def untested(self, subquery: int, community_id: str) -> list[RankedChunk]:
        """The candidates of ``community_id`` not yet tested (or planned) for ``subquery``, best first."""
        done = self.tested[subquery]
        return [c for c in self.candidates[subquery].by_community.get(community_id, []) if c.reference not in done]

    def roots(self) -> list[_Entry]:
        """Round 0: every root with candidates, for every subquery."""
        entries = []
        for number, one in enumerate(self.candidates):
            for community in self.index.communities:
                if community.parent_id is None and community.id in one.by_community:
                    entries.append(_Entry(number, community.id, community.level))
        return self.ordered(entries)

    def ordered(self, entries: list[_Entry]) -> list[_Entry]:
        """Each subquery's entries top level first, then best first (ties: index order); the
        subqueries interleaved, so they share the budget turn by turn."""
        position = {c.id: i for i, c in enumerate(self.index.communities)}
        per: dict[int, list[_Entry]] = {}
        for entry in entries:
            per.setdefault(entry.subquery, []).append(entry)
        for number, mine in per.items():
            mine.sort(key=lambda e: (e.level, -self.candidates[number].score(e.community_id), position[e.community_id]))
        interleaved: list[_Entry] = []
        for turn in range(max((len(v) for v in per.values()), default=0)):
            interleaved.extend(per[n][turn] for n in sorted(per) if turn < len(per[n]))
        return interleaved

    # -- a round ------------------------------------------------------------------------------

    def plan(self, frontier: list[_Entry]) -> list[_Test]:
        """Each entry's test, its chunks taken from its untested candidates in frontier order."""
        tests = []
        for entry in frontier:
            chunks = self.untested(entry.subquery, entry.community_id)[:CHUNKS_PER_TEST]
            if not chunks:
                continue
            request, taken = relevance_request(
                self.candidates[entry.subquery].subquery, chunks, budget=self.request.map_prompt_budget,
                output_reserve=self.request.map_output_reserve, tokenizer=self.tokenizer,
            )
            self.tested[entry.subquery].update(c.reference for c in taken)
            tests.append(_Test(entry, taken, request, prompt_tokens=self.tokenizer.count(request.prompt_text)))
        return tests

    async def run(self) -> WalkOutcome:
        frontier, number = self.roots(), 0
        reason: Literal["budget", "frontier"] = "frontier"
        while frontier:
            tests = self.plan(frontier)
            if not tests:
                break
            self.left_after_round = self.tickets.remaining - len(tests)  # one call each; retries take more
            await run_pool(len(tests), self.request.map_concurrency, functools.partial(self.make, tests, number))
            frontier = self.settle(tests)
            number += 1
            if self.limit_reached is not None:
                raise self.limit_reached
            if not all(test.made for test in tests) or (frontier and self.tickets.remaining <= 0):
                reason = "budget"
                break
        return WalkOutcome(
            found=self.found, tests=self.tickets.used, calls=self.calls, cache_hits=self.cache_hits, failed=self.failed,
            rounds=number, usage=self.usage, reason=reason,
        )

    async def make(self, tests: list[_Test], number: int, job: int) -> None:
        """One test and its event as soon as it ends: from the map cache, or from the model
        through the one retry loop, each attempt holding a ticket; none is made when the budget
        is spent."""
        test = tests[job]
        try:
            await self.ask(test)
        finally:
            if test.made:
                self.tested_event(test, number)

    async def ask(self, test: _Test) -> None:
        """Make ``test`` (see :meth:`make`); ``test.made`` says whether it was."""
        if self.limit_reached is not None or not self.tickets.take():
            return
        held = TestSpending(self.tickets, self.spending, prepaid=True)
        expected = [c.reference for c in test.chunks]
        parse = functools.partial(parse_relevance_output, expected=expected)
        try:
            key = None
            if self.cache is not None:
                from ..cache import cache_key

                key = cache_key(self.model, test.request)
                kept = await asyncio.to_thread(self.cache.get, key)
                if kept is not None:
                    try:
                        test.verdicts = parse(kept)
                    except ModelOutputError:
                        pass  # not a usable test: ask the model again
                    else:
                        held.prepaid = False
                        self.tickets.use()
                        test.made, test.cache_hits = True, 1
                        return
            tally = Attempts()
            test.started_at = self.clock()
            try:
                reply = await complete_with_retry(
                    self.model, test.request, parse, policy=self.policy, attempts=tally, hooks=CallHooks(clock=self.clock),
                    budget=CallBudget(tokenizer=self.tokenizer, token_budget=self.request.map_token_budget, spending=held, keep=self.keep),  # type: ignore[arg-type]
                )
            except CallFailed as failed:
                test.errors.append(describe_error(failed.error))
                test.made = True
            except RelevanceBudgetSpent as spent:  # the retry of a failed attempt found no ticket
                test.errors.append(str(spent))
                test.made = tally.calls > 0
            except SpendLimitReached as reached:
                self.limit_reached = self.limit_reached or reached
                test.made = tally.calls > 0
            else:
                test.verdicts, test.made = reply.value, True
                if key is not None:
                    await asyncio.to_thread(self.cache.put, key, reply.text)  # type: ignore[union-attr]
            finally:
                test.calls, test.usage = tally.calls, tally.usage
        finally:
            held.close()

    def tested_event(self, test: _Test, number: int) -> None:
        """What the walk does after ``test`` (from the frontier's state as its round planned it,
        so it does not depend on the order the round's calls end in), and its event."""
        relevant = test.relevant_ids
        test.step, test.after = self.next_step(test.entry, bool(relevant))
        entry = test.entry
        self.emit(
            RelevanceTested(
                at=self.clock(), community_id=entry.community_id, level=entry.level, round=number, subquery=entry.subquery,
                source_ids=tuple(c.reference for c in test.chunks), relevant_ids=relevant,
                claims=sum(len((test.verdicts or {})[ref].claims) for ref in relevant), failed=test.verdicts is None, errors=tuple(test.errors),
                next=test.step, calls=test.calls, cache_hits=test.cache_hits, usage=test.usage, started_at=test.started_at,
                prompt_tokens=test.prompt_tokens,
            )
        )

    def settle(self, tests: list[_Test]) -> list[_Entry]:
        """Fold a round's tests in plan order: what each found and cost, and the next frontier."""
        following: list[_Entry] = []
        for test in tests:
            if not test.made:
                continue
            entry = test.entry
            self.calls += test.calls
            self.cache_hits += test.cache_hits
            self.usage = self.usage + test.usage
            self.failed += test.verdicts is None
            for chunk in test.chunks:
                verdict = (test.verdicts or {}).get(chunk.reference)
                if verdict is not None and verdict.relevant:
                    found = self.found.setdefault(chunk.reference, Found(chunk, entry.community_id, entry.level))
                    if entry.level > found.level:  # a more specific community holds it
                        found.community_id, found.level = entry.community_id, entry.level
                    found.claims[entry.subquery] = verdict.claims
            following.extend(test.after)
        return self.ordered(following)

    def next_step(self, entry: _Entry, relevant: bool) -> tuple[TestNext, list[_Entry]]:
        """What the walk does with ``entry`` after a test (see the module docstring)."""
        if relevant:
            children = [
                _Entry(entry.subquery, child.id, child.level)
                for child in self.index.children(entry.community_id)
                if self.untested(entry.subquery, child.id)
            ]
            if children:
                return "opened", children
            entry.misses = 0
        else:
            entry.misses += 1
            if entry.misses >= MAX_MISSES:
                return "left", []
        if not self.untested(entry.subquery, entry.community_id):
            return "exhausted", []
        if self.left_after_round <= 0:  # as planned, whatever order the round's calls end in
            return "stopped", []
        return "again", [entry]


__all__ = ["MAX_MISSES", "Found", "RelevanceWalk", "WalkOutcome"]
