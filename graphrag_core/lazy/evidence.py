"""The lazy method up to its map (docs/lazy-search.md, steps 1-4): expand the question, rank
and group the candidates, test them under the budget, and turn what was found relevant into
map texts, one per community, holding its claims and source text (never its summary).

:func:`gather_evidence` emits ``QueryExpanded``, ``RelevanceStarted``, one ``RelevanceTested``
per test and ``RelevanceFinished``; :meth:`Evidence.batches` packs the map texts as the other
methods' are packed (:func:`~graphrag_core.batching.plan_summary_batches`, shuffled with the
run's seed), so the map, the reduce and their events are the other methods'.

Invariants: every relevant chunk lands in exactly one community's map text (the most specific
community whose test found it), in the order found; a community's text lists its claims, each
citing its chunk, then the chunks' text; what the expansion, the ranking and the tests spent
is in :meth:`Evidence.diagnostics`, apart from the map's and the reduce's.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..batching import MapText, SummaryBatch, plan_summary_batches
from ..context import EVIDENCE, EvidenceItem, format_evidence_text, question_tail
from ..events import Event, LazyCommunity, RelevanceFinished, RelevanceStarted
from ..llm.base import ChatModel, TokenUsage
from ..llm.embeddings import BM25_RANKER, EmbeddingModel
from ..retry import RetryPolicy
from ..models import Index
from ..language import Language
from ..prompts import map_prompt_head, map_prompt_skeleton
from ..ranking import rank_chunks
from ..request import GlobalSearchRequest, check_question_reserve
from ..results import NO_RELEVANT_CHUNKS_ANSWER
from ..sources import source_units
from ..spending import SpendingLimit
from ..tokens import Tokenizer, prompt_overhead
from .candidates import CHUNKS_PER_TEST, SubqueryCandidates, candidate_counts, group_candidates, memberships
from .expansion import Expansion, expand_query
from .relevance import check_prompt_budget
from .walk import MAX_MISSES, RelevanceWalk, WalkOutcome

if TYPE_CHECKING:
    from ..cache import MapCache

TITLE_CHARS = 80
"""Community titles in ``RelevanceStarted`` are cut to this many characters (stored with every run)."""
PROMPT_MESSAGES = 2


@dataclass
class Evidence:
    """What a lazy run found before its map: the subqueries, the tests, and the relevant chunks."""

    request: GlobalSearchRequest
    expansion: Expansion
    walk: WalkOutcome
    ranker: str
    embedding_calls: int = 0
    embedding_cache_hits: int = 0
    embedding_usage: TokenUsage = field(default_factory=TokenUsage)

    @property
    def spent(self) -> TokenUsage:
        """The chat model's tokens before the map: the expansion's and the tests'."""
        return self.expansion.usage + self.walk.usage

    @property
    def degraded(self) -> bool:
        """Whether something failed on the way (the expansion, or a test): the run is at best partial."""
        return self.expansion.error is not None or self.walk.failed > 0

    def groups(self) -> dict[str, list[EvidenceItem]]:
        """The relevant chunks by community, communities in the order first found."""
        groups: dict[str, list[EvidenceItem]] = {}
        for found in self.walk.found.values():
            claims = tuple(dict.fromkeys(claim for number in sorted(found.claims) for claim in found.claims[number]))
            groups.setdefault(found.community_id, []).append(EvidenceItem(found.chunk.reference, found.chunk.text, claims))
        return groups

    def map_texts(self) -> list[MapText]:
        """One map text per community (see the module docstring)."""
        return [MapText(community_id=cid, text=format_evidence_text(items)) for cid, items in self.groups().items()]

    def batches(self, *, seed: int, tokenizer: Tokenizer, language: Language | None) -> tuple[list[SummaryBatch], list[int]]:
        """The map texts packed into the map budget as :func:`graphrag_core.search.plan_batches`
        packs the other methods' (with a question reserve, data first, as if the question took
        exactly the reserve), with each batch's prompt estimate. ``language`` is the corpus's, which
        the map prompt asks for: it is packed as it is sent, so no caller may leave it out."""
        request, texts = self.request, self.map_texts()
        if not texts:
            return [], []
        budget = request.map_prompt_budget - prompt_overhead(tokenizer, PROMPT_MESSAGES)
        rng = random.Random(seed)
        reserve = request.question_reserve
        if not reserve:
            skeleton = map_prompt_skeleton(request.query, unit=EVIDENCE, language=language)
            return plan_summary_batches(texts, skeleton, budget, rng=rng, tokenizer=tokenizer, unit=EVIDENCE)
        budget -= reserve + tokenizer.count(question_tail(""))
        batches, packed = plan_summary_batches(texts, map_prompt_head(unit=EVIDENCE, language=language), budget, rng=rng, tokenizer=tokenizer, unit=EVIDENCE)
        tail = tokenizer.count(question_tail(request.query))
        return batches, [tokens + tail for tokens in packed]

    def no_results_answer(self) -> str:
        """Why a lazy run found nothing to map, in its figures (the answer of a ``no_results`` run)."""
        tests, budget = self.walk.tests, self.request.relevance_budget
        if self.walk.reason == "budget":
            return (
                f"{NO_RELEVANT_CHUNKS_ANSWER[:-1]} within the relevance budget: {tests:,} of {budget:,} relevance "
                f"{'test' if tests == 1 else 'tests'} found none (a larger relevance_budget tests more source chunks)."
            )
        if not tests:
            return f"{NO_RELEVANT_CHUNKS_ANSWER[:-1]}: no source chunk linked to a community is a candidate for it."
        return (
            f"{NO_RELEVANT_CHUNKS_ANSWER[:-1]}: {tests:,} relevance {'test' if tests == 1 else 'tests'} (of a budget of "
            f"{budget:,}) found none, and no candidate was left to test."
        )

    def diagnostics(self) -> dict[str, object]:
        """The lazy figures of a run's diagnostics (apart from the map's and the reduce's)."""
        return dict(
            relevance_budget=self.request.relevance_budget,
            relevance_tests=self.walk.tests,
            relevance_calls=self.walk.calls,
            relevance_cache_hits=self.walk.cache_hits,
            relevance_usage=self.walk.usage,
            failed_test_count=self.walk.failed,
            expansion_calls=self.expansion.calls,
            expansion_usage=self.expansion.usage,
            subqueries=list(self.expansion.subqueries),
            relevant_chunks={cid: [item.reference for item in items] for cid, items in self.groups().items()},
            ranker=self.ranker,
            embedding_calls=self.embedding_calls,
            embedding_cache_hits=self.embedding_cache_hits,
            embedding_usage=self.embedding_usage,
        )


async def gather_evidence(
    index: Index,
    request: GlobalSearchRequest,
    model: ChatModel,
    *,
    tokenizer: Tokenizer,
    emit: Callable[[Event], None],
    clock: Callable[[], float],
    policy: RetryPolicy,
    cache: MapCache | None = None,
    embedder: EmbeddingModel | None = None,
    spending: SpendingLimit | None = None,
) -> Evidence:
    """Steps 1-3 of a lazy run (see the module docstring). Raises ``NoSourceChunksError`` or
    ``NoChunkCommunitiesError`` for an index it cannot search, ``BudgetError`` when a test cannot
    fit the map budget, both before any call; ``SpendLimitReached`` when the run's limit is."""
    source_units(index, method=request.method)  # an index without chunks is refused before any call
    membership = memberships(index)
    if request.question_reserve:
        check_question_reserve(request.query, request.question_reserve, tokenizer)
    check_prompt_budget(request.query, budget=request.map_prompt_budget, output_reserve=request.map_output_reserve, tokenizer=tokenizer)
    keep = request.reduce_token_budget  # a run stopped at its spending limit keeps the reduce's worst case free
    expansion = await expand_query(
        request.query, model, output_reserve=request.map_output_reserve, token_budget=request.map_token_budget, tokenizer=tokenizer,
        policy=policy, emit=emit, clock=clock, cache=cache, spending=spending, keep=keep,
    )
    candidates: list[SubqueryCandidates] = []
    evidence = Evidence(request, expansion, WalkOutcome.nothing(), BM25_RANKER)
    for subquery in expansion.subqueries:
        ranking = await rank_chunks(index, subquery, embedder=embedder, cache=cache, policy=policy)
        evidence.ranker = ranking.ranker if embedder is not None else BM25_RANKER
        evidence.embedding_calls += ranking.embedding_calls
        evidence.embedding_cache_hits += ranking.embedding_cache_hits
        evidence.embedding_usage = evidence.embedding_usage + ranking.usage
        candidates.append(group_candidates(subquery, ranking, membership))
    counts = candidate_counts(candidates)
    emit(
        RelevanceStarted(
            at=clock(), relevance_budget=request.relevance_budget, subqueries=expansion.subqueries, ranker=evidence.ranker,
            candidate_counts=tuple(len(c.ranking.chunks) for c in candidates),
            communities=tuple(
                LazyCommunity(id=c.id, parent_id=c.parent_id, level=c.level, title=c.title[:TITLE_CHARS], candidates=counts[c.id])
                for c in index.communities if c.id in counts
            ),
            root_ids=tuple(c.id for c in index.communities if c.parent_id is None and c.id in counts),
            chunks_per_test=CHUNKS_PER_TEST, max_misses=MAX_MISSES, prompt_budget=request.map_prompt_budget,
            embedding_calls=evidence.embedding_calls, embedding_cache_hits=evidence.embedding_cache_hits,
            embedding_usage=evidence.embedding_usage,
        )
    )
    walk = RelevanceWalk(
        index, request, model, candidates, tokenizer=tokenizer, emit=emit, clock=clock, policy=policy, cache=cache,
        spending=spending, keep=keep,
    )
    outcome = evidence.walk = await walk.run()
    groups = evidence.groups()
    emit(
        RelevanceFinished(
            at=clock(), relevance_budget=request.relevance_budget, tests=outcome.tests, calls=outcome.calls, cache_hits=outcome.cache_hits,
            failed_count=outcome.failed, rounds=outcome.rounds, groups={cid: tuple(i.reference for i in items) for cid, items in groups.items()},
            reason=outcome.reason, usage=outcome.usage,
        )
    )
    return evidence


__all__ = ["Evidence", "gather_evidence"]
