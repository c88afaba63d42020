"""Global search, end to end: a request in, a stream of typed events out, a result at the end.

:func:`retrieve_global` and :func:`stream_global` run the same steps (:func:`_run`): select the
summaries of a level, build their map texts, pack them into batches, map, select for the
reduce, reduce. Every step reports itself as an event; a run that cannot finish reports
``RunFailed`` before raising, so what was computed up to then is not lost.

The request's ``method`` (evaluation spec section 7) chooses the units: ``global`` maps over
community summaries; ``text`` runs the same steps over the index's source chunks; ``vector``
ranks the chunks (:mod:`.ranking`), packs the most relevant into the reduce budget
(:mod:`.naive_rag`) and makes one call, with the reduce's events.

Why this module is long: it is the run's one orchestration, and the steps of the three methods
(plan, rank, map, select or pack, reduce, finish) and a stopped run's answer from what it read
(:func:`answer_from_read`, for Stop and for the spending limit) share one state and one event
stream, so a failure in any of them becomes the same ``RunFailed`` with the same figures;
splitting them would spread that state over modules that each need all of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .batching import MapText, SummaryBatch, plan_summary_batches
from .cache import GuardedCache
from .context import COMMUNITY, SOURCE, question_tail
from .events import (
    BatchesPlanned,
    ChunksRanked,
    Event,
    ModelNotice,
    PartialAnswerStarted,
    PlannedBatch,
    ReduceReplied,
    ReduceAnswerDelta,
    ReduceFailed,
    ReduceRetried,
    ReduceSelection,
    ReduceStarted,
    RunFailed,
    RunFinished,
    RunStarted,
    RunWarning,
    SummariesSelected,
)
from .errors import NothingReadError, SpendLimitReached, describe_error
from .llm.base import ChatModel, ChatRequest, ChatResponse, StreamingChatModel, TokenUsage, model_identity
from .llm.embeddings import EmbeddingModel
from .map import (
    DEFAULT_RETRY_POLICY,
    Attempts,
    CallerFailed,
    CallFailed,
    MapPhaseResult,
    RetryNotice,
    RetryPolicy,
    complete_with_retry,
    run_global_map,
)
from .context import EVIDENCE
from .lazy.evidence import Evidence, gather_evidence
from .lazy.state import RelevanceState
from .methods import GLOBAL, LAZY, TEXT, VECTOR, unit_kind
from .sources import source_units, unit_ids
from .models import Community, Index
from .citations import check_citations
from .naive_rag import plan_excerpts
from .parsing import AnswerStream, parse_reduce_output
from .prompts import (
    REDUCE_OUTPUT_SCHEMA,
    map_prompt_head,
    map_prompt_skeleton,
    rag_prompt_skeleton,
    reduce_prompt_skeleton,
    render_rag_messages,
    render_reduce_messages,
)
from .ranking import Ranking, rank_chunks
from .reduce import ReducePlan, plan_reduce
from .request import GlobalSearchRequest, check_question_reserve
from .results import NO_RELEVANT_CHUNKS_ANSWER, NO_RESULTS_ANSWER, GlobalSearchDiagnostics, GlobalSearchResult
from .selection import SelectionOutcome, select_dynamic
from .spending import SpendingLimit
from .state import RunState
from .stopped import map_read, walk_outcome
from .status import RunStatus
from .tokens import Tokenizer, prompt_overhead, tokenizer_for

if TYPE_CHECKING:
    from .cache import MapCache

EventSink = Callable[[Event], None]


def draw_seed() -> int:
    """A fresh seed for a request that did not set one; it is reported so the run can be repeated."""
    return random.SystemRandom().randrange(2**31)


def plan_batches(
    index: Index,
    request: GlobalSearchRequest,
    *,
    seed: int,
    tokenizer: Tokenizer | None = None,
    communities: list[Community] | None = None,
    model: ChatModel | None = None,
) -> tuple[list[Community], list[SummaryBatch], list[int]]:
    """The communities a request selects and the batches it would send, with no model call.

    ``communities`` overrides the level's selection (dynamic selection passes what it kept).
    Returns ``(communities, batches, token_estimates)``; raises ``BudgetError`` like a run would,
    and ``RequestValidationError`` for a question longer than the request's ``question_reserve``.
    ``model`` is needed only for the ``"endpoint"`` tokenizer (the server's own count). The
    ``text`` method's batches hold source chunks (no communities); ``vector`` sends no batch.

    With a ``question_reserve``, the batches are packed before the question (the data-first
    layout) in the map prompt budget less the reserve and the question's marker, so they are
    the same for every question up to the reserve; each estimate is the packed prompt's count
    plus the question's part. The spec's estimate never counts a whole above its parts, so each
    prompt is within the budget; an exact encoding's count of the join after the data may
    differ from its parts' by the newlines that meet there.
    """
    tokenizer = tokenizer or tokenizer_for(request.tokenizer, model)
    if request.method in (VECTOR, LAZY):  # vector sends no batch; lazy's are known after its relevance tests
        source_units(index, method=request.method)  # an index without chunks is refused as a run would
        return [], [], []
    reserve = request.question_reserve
    if reserve:
        check_question_reserve(request.query, reserve, tokenizer)
    unit = SOURCE if request.method == TEXT else COMMUNITY
    if request.method == TEXT:
        communities = []
        texts = [MapText(community_id=ref, text=chunk.text) for ref, chunk in source_units(index, method=TEXT)]
    else:
        if communities is None:
            communities = index.select_communities(request.community_level)
        texts = [
            MapText(
                community_id=c.id,
                text=index.map_text(c.id, include_claims=request.include_claims, include_sources=request.include_sources),
            )
            for c in communities
        ]
    if not texts:
        return communities, [], []
    budget = sent_prompt_budget(request.map_prompt_budget, tokenizer)
    rng = random.Random(seed)
    if not reserve:
        skeleton = map_prompt_skeleton(request.query, unit=unit)
        batches, estimates = plan_summary_batches(texts, skeleton, budget, rng=rng, tokenizer=tokenizer, unit=unit)
        return communities, batches, estimates
    # Packed as if the question took exactly `reserve` tokens: the head and the content of every
    # prompt are the same for any question up to that length, the question comes after them.
    budget -= reserve + tokenizer.count(question_tail(""))
    batches, packed = plan_summary_batches(texts, map_prompt_head(unit=unit), budget, rng=rng, tokenizer=tokenizer, unit=unit)
    tail = tokenizer.count(question_tail(request.query))
    return communities, batches, [tokens + tail for tokens in packed]


PROMPT_MESSAGES = 2
"""Messages in a map or reduce call (system and user)."""


def sent_prompt_budget(budget: int, tokenizer: Tokenizer) -> int:
    """What of a prompt budget the prompt's text may take: the rest is what the endpoint adds
    around the messages, as the tokenizer knows it (nothing for the spec's estimate), so a sent
    prompt is within the budget in the endpoint's own count."""
    return budget - prompt_overhead(tokenizer, PROMPT_MESSAGES)


class _StreamedReduce:
    """The reduce call through a streaming model: each new piece of the answer becomes a
    ``ReduceAnswerDelta`` event (of the current attempt) as it is written."""

    def __init__(self, model: StreamingChatModel, emit: EventSink, clock: Callable[[], float], attempts: Attempts) -> None:
        self.model, self.emit, self.clock, self.attempts = model, emit, clock, attempts
        self.identity = model_identity(model)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        reader = AnswerStream()
        attempt = self.attempts.count

        def on_text(piece: str) -> None:
            text = reader.feed(piece)
            if text:
                try:
                    self.emit(ReduceAnswerDelta(at=self.clock(), attempt=attempt, text=text))
                except Exception as exc:  # noqa: BLE001 - the caller's error: propagated as is, never retried
                    raise CallerFailed(exc) from exc

        return await self.model.complete_streaming(request, on_text)


@dataclass
class _Steps:
    """One run's fixed inputs and what its steps produced so far; each step is one method."""

    index: Index
    request: GlobalSearchRequest
    model: ChatModel
    emit: EventSink
    seed: int
    cache: MapCache | None
    tokenizer: Tokenizer
    clock: Callable[[], float]
    policy: RetryPolicy
    embedder: EmbeddingModel | None = None
    spending: SpendingLimit | None = None
    """The run's spending limit (its request's, or a sweep's or an experiment's), held by every call."""
    selection: SelectionOutcome | None = None
    ranking: Ranking | None = None
    evidence: Evidence | RelevanceState | None = None
    """What a ``lazy`` run's relevance tests found (its map reads it), or their fold for a run
    answered from what it read after a stop."""
    communities: list[Community] = field(default_factory=list)
    unit_count: int = 0
    """The units the run reads: summaries selected, or source chunks (ranked relevant, for ``vector``)."""
    batches: list[SummaryBatch] = field(default_factory=list)
    planned: tuple[PlannedBatch, ...] = ()
    """Each batch as its ``BatchesPlanned`` event reports it (community ids, prompt estimate)."""
    stopped_at_limit: int | None = None
    """The spending limit that stopped the run, when it answers from what it read after that stop."""

    @property
    def unit(self):  # noqa: ANN201 - a context.Unit
        """What the run's units are: communities (``global``) or source chunks."""
        return unit_kind(self.request.method)

    @property
    def prompt_unit(self):  # noqa: ANN201 - a context.Unit
        """What the map and reduce prompts call the units: a ``lazy`` run's are communities' evidence."""
        return EVIDENCE if self.request.method == LAZY else self.unit

    @property
    def no_results_answer(self) -> str:
        return NO_RESULTS_ANSWER if self.request.method == GLOBAL else NO_RELEVANT_CHUNKS_ANSWER

    def finish(
        self,
        status: RunStatus,
        answer: str,
        *,
        mapped: MapPhaseResult | None = None,
        plan: ReducePlan | None = None,
        reduce_calls: int = 0,
        reduce_usage: TokenUsage | None = None,
        unread: int | None = None,
    ) -> GlobalSearchResult:
        """The result of the run (and its ``RunFinished`` event), from what the steps produced.
        ``unread`` is given for a run answered from what it read after a stop: how many of its
        batches had not ended."""
        request = self.request
        selected = plan.selected if plan is not None else []
        usage = mapped.usage if mapped is not None else TokenUsage()
        if reduce_usage is not None:
            usage = usage + reduce_usage
        extra: dict[str, object] = {}
        if self.selection is not None:  # rating figures apart; the run's usage is everything it spent
            extra = self.selection.diagnostics()
            usage = usage + self.selection.usage
        if self.evidence is not None:  # the expansion's and the relevance tests' figures, apart
            extra = self.evidence.diagnostics()
            usage = usage + self.evidence.spent
        if self.ranking is not None:  # the embedding model's figures, apart from the chat model's
            extra.update(
                ranker=self.ranking.ranker, embedding_calls=self.ranking.embedding_calls,
                embedding_cache_hits=self.ranking.embedding_cache_hits, embedding_usage=self.ranking.usage,
            )
        diagnostics = GlobalSearchDiagnostics(
            community_level=request.reported_level,
            summary_count=self.unit_count,
            batch_count=len(self.planned),
            batch_community_ids=[b.community_ids for b in self.planned],
            batch_token_estimates=[b.token_estimate for b in self.planned],
            batch_usefulness=mapped.usefulness if mapped is not None else [],
            failed_batch_count=len(mapped.failures) if mapped is not None else 0,
            selected_answer_count=len(selected),
            reduce_prompt_tokens=plan.prompt_tokens if plan is not None else None,
            map_prompt_budget=request.map_prompt_budget,
            reduce_prompt_budget=request.reduce_prompt_budget,
            seed=self.seed,
            map_calls=mapped.calls if mapped is not None else 0,
            reduce_calls=reduce_calls,
            cache_hits=mapped.cache_hits if mapped is not None else 0,
            usage=usage,
            map_usage=mapped.usage if mapped is not None else TokenUsage(),
            duration_s=self.clock(),
            stopped_early=unread is not None,
            unread_batch_count=unread or 0,
            stopped_at_limit=self.stopped_at_limit if unread is not None else None,
            **extra,  # type: ignore[arg-type]
        )
        behind = list(dict.fromkeys(cid for a in selected for cid in a.community_ids)) if reduce_calls else []
        if reduce_calls:
            unsupported = check_citations(answer, behind=behind, index_ids=unit_ids(self.index, request.method), kind=self.unit)
            diagnostics = diagnostics.model_copy(update={"unsupported_citation_count": len(unsupported)})
        result = GlobalSearchResult(
            query=request.query,
            community_level=request.reported_level,
            seed=self.seed,
            request=request,
            status=status,
            answer=answer,
            map_answers=mapped.answers if mapped is not None else [],
            selected_answers=selected,
            reduce_candidates=plan.candidates if plan is not None else [],
            failed_batches=mapped.failures if mapped is not None else [],
            community_ids=behind,
            diagnostics=diagnostics,
        )
        self.emit(RunFinished(at=self.clock(), result=result))
        return result

    async def plan(self) -> None:
        request = self.request
        if request.question_reserve:  # a long question is refused before any call
            check_question_reserve(request.query, request.question_reserve, self.tokenizer)
        # Dynamic selection (dynamic-selection.md): the model picks the communities; the rest is unchanged.
        if request.dynamic:
            self.selection = await select_dynamic(
                self.index, request, self.model, tokenizer=self.tokenizer, on_event=self.emit, cache=self.cache, clock=self.clock,
                retry_policy=self.policy, spending=self.spending, keep=request.reduce_token_budget,
            )
        self.communities, self.batches, estimates = plan_batches(
            self.index, request, seed=self.seed, tokenizer=self.tokenizer,
            communities=self.selection.communities if self.selection is not None else None,
        )
        self.planned = tuple(PlannedBatch(index=i, community_ids=b.community_ids, token_estimate=t) for i, (b, t) in enumerate(zip(self.batches, estimates)))
        if request.method == TEXT:
            units = tuple(ref for ref, _ in source_units(self.index, method=TEXT))
        else:
            units = tuple(c.id for c in self.communities)
        self.unit_count = len(units)
        self.emit(SummariesSelected(at=self.clock(), community_level=request.reported_level, count=len(units), community_ids=units))

    async def rank(self) -> Ranking:
        """The ``vector`` method's first step: the source chunks ranked for the question."""
        request = self.request
        ranking = self.ranking = await rank_chunks(self.index, request.query, embedder=self.embedder, cache=self.cache, policy=self.policy)
        self.unit_count = len(ranking.chunks)
        self.emit(
            ChunksRanked(
                at=self.clock(), ranker=ranking.ranker, unit_count=ranking.unit_count, relevant_count=len(ranking.chunks),
                embedding_calls=ranking.embedding_calls, embedding_cache_hits=ranking.embedding_cache_hits,
                usage=ranking.usage, duration_s=ranking.duration_s,
            )
        )
        self.emit(
            SummariesSelected(
                at=self.clock(), community_level=request.reported_level, count=len(ranking.chunks),
                community_ids=tuple(c.reference for c in ranking.chunks),
            )
        )
        return ranking

    def pack(self, ranking: Ranking) -> ReducePlan:
        """The ``vector`` method's context: the ranked chunks packed into the reduce budget."""
        request = self.request
        plan = plan_excerpts(
            ranking.chunks, rag_prompt_skeleton(request.query), sent_prompt_budget(request.reduce_prompt_budget, self.tokenizer),
            strategy=request.reduce_strategy, tokenizer=self.tokenizer,
        )
        self.emit(
            ReduceSelection(
                at=self.clock(), candidates=tuple(plan.candidates), reduce_prompt_budget=request.reduce_prompt_budget,
                strategy=request.reduce_strategy,
            )
        )
        return plan

    async def map(self) -> MapPhaseResult:
        request = self.request
        self.emit(
            BatchesPlanned(
                at=self.clock(), batches=self.planned, map_prompt_budget=request.map_prompt_budget,
                concurrency=min(request.map_concurrency, len(self.batches)),
            )
        )
        return await run_global_map(
            request.query, self.batches, self.model,
            concurrency=request.map_concurrency, output_reserve=request.map_output_reserve,
            on_event=self.emit, cache=self.cache, clock=self.clock, retry_policy=self.policy, unit=self.prompt_unit,
            tokenizer=self.tokenizer, token_budget=request.map_token_budget, data_first=request.question_reserve > 0,
            spending=self.spending, keep=request.reduce_token_budget,  # a run stopped at the limit can still reduce what it read
        )

    def select(self, mapped: MapPhaseResult) -> ReducePlan:
        request = self.request
        skeleton = reduce_prompt_skeleton(request.query, unit=self.prompt_unit)
        plan = plan_reduce(
            mapped.answers, skeleton, sent_prompt_budget(request.reduce_prompt_budget, self.tokenizer),
            strategy=request.reduce_strategy, tokenizer=self.tokenizer, unit=self.prompt_unit,
        )
        self.emit(
            ReduceSelection(
                at=self.clock(), candidates=tuple(plan.candidates), reduce_prompt_budget=request.reduce_prompt_budget,
                strategy=request.reduce_strategy,
            )
        )
        return plan

    async def reduce(self, plan: ReducePlan) -> tuple[str, Attempts]:
        """The final answer, with the same retry policy and events as a map call.

        Raises the last attempt's error when every attempt failed (after ``ReduceFailed``)."""
        request = self.request
        if request.method == VECTOR:
            messages = render_rag_messages(request.query, plan.context)
        else:
            messages = render_reduce_messages(request.query, plan.context, unit=self.prompt_unit)
        reduce_request = ChatRequest(
            purpose="reduce",
            messages=messages,
            max_tokens=request.reduce_output_reserve or None,
            output_schema=REDUCE_OUTPUT_SCHEMA,
        )
        attempts = Attempts()

        def on_start(attempt: int) -> None:
            self.emit(
                ReduceStarted(
                    at=self.clock(), answer_count=len(plan.selected), prompt_tokens=plan.prompt_tokens or 0, attempt=attempt,
                    messages=reduce_request.messages if attempt == 1 else None,  # a retry adds what was wrong to these
                )
            )

        def replied(attempt: int, raw: str | None, *, error: str | None = None, usage: TokenUsage | None = None, duration_s: float = 0.0) -> None:
            self.emit(ReduceReplied(at=self.clock(), attempt=attempt, raw_reply=raw, error=error, usage=usage, duration_s=duration_s))

        def on_retry(notice: RetryNotice) -> None:
            replied(notice.attempt - 1, notice.raw_reply, error=notice.error, usage=notice.usage)
            self.emit(ReduceRetried(at=self.clock(), attempt=notice.attempt, error=notice.error, delay_s=notice.delay_s, usage=notice.usage))

        model: ChatModel = self.model
        if isinstance(model, StreamingChatModel):
            model = _StreamedReduce(model, self.emit, self.clock, attempts)
        try:
            reply = await complete_with_retry(
                model, reduce_request, parse_reduce_output, policy=self.policy, attempts=attempts,
                clock=self.clock, on_start=on_start, on_retry=on_retry,
                on_notice=lambda message: self.emit(ModelNotice(at=self.clock(), message=message)),
                tokenizer=self.tokenizer, token_budget=request.reduce_token_budget, spending=self.spending, final=True,
            )
        except CallFailed as failed:
            replied(failed.attempts, failed.raw_reply, error=describe_error(failed.error), usage=failed.usage)
            self.emit(
                ReduceFailed(
                    at=self.clock(), attempts=failed.attempts, error=describe_error(failed.error),
                    error_type=type(failed.error).__name__, usage=failed.usage,
                )
            )
            raise failed.error from None
        replied(reply.attempt, reply.text, usage=reply.usage, duration_s=reply.duration_s)
        return reply.value, attempts

    async def run(self) -> GlobalSearchResult:
        if self.request.method == VECTOR:
            return await self.run_vector()
        if self.request.method == LAZY:
            return await self.run_lazy()
        await self.plan()
        if not self.batches:
            return self.finish(RunStatus.NO_RESULTS, self.no_results_answer)
        return await self.answer(await self.map())

    async def answer(self, mapped: MapPhaseResult, *, unread: int | None = None) -> GlobalSearchResult:
        """Select for the reduce, reduce, finish: a run's last steps (after its map, or after a
        stop over what it read, then ``partial`` whatever else happened)."""
        plan = self.select(mapped)
        if not plan.selected:
            return self.finish(RunStatus.NO_RESULTS, self.no_results_answer, mapped=mapped, plan=plan, unread=unread)
        answer, attempts = await self.reduce(plan)
        degraded = (
            unread is not None or mapped.failures or (self.selection is not None and self.selection.failed_count)
            or (self.evidence is not None and self.evidence.degraded)
        )
        return self.finish(
            RunStatus.PARTIAL if degraded else RunStatus.COMPLETED, answer,
            mapped=mapped, plan=plan, reduce_calls=attempts.calls, reduce_usage=attempts.usage, unread=unread,
        )

    async def run_lazy(self) -> GlobalSearchResult:
        """The lazy method (docs/lazy-search.md): relevance tests under the budget
        (:mod:`.lazy.evidence`), then the map over each community's evidence and the reduce."""
        evidence = self.evidence = await gather_evidence(
            self.index, self.request, self.model, tokenizer=self.tokenizer, emit=self.emit, clock=self.clock, policy=self.policy,
            cache=self.cache, embedder=self.embedder, spending=self.spending,
        )
        self.batches, estimates = evidence.batches(seed=self.seed, tokenizer=self.tokenizer)
        self.planned = tuple(PlannedBatch(index=i, community_ids=b.community_ids, token_estimate=t) for i, (b, t) in enumerate(zip(self.batches, estimates)))
        groups = tuple(evidence.groups())
        self.unit_count = len(groups)
        self.emit(SummariesSelected(at=self.clock(), community_level=self.request.reported_level, count=len(groups), community_ids=groups))
        if not self.batches:
            return self.finish(RunStatus.NO_RESULTS, evidence.no_results_answer())
        return await self.answer(await self.map())

    async def run_vector(self) -> GlobalSearchResult:
        """Naive RAG: rank the chunks, pack the most relevant, one call writes the answer."""
        plan = self.pack(await self.rank())
        if not plan.selected:
            return self.finish(RunStatus.NO_RESULTS, self.no_results_answer, plan=plan)
        answer, attempts = await self.reduce(plan)
        return self.finish(RunStatus.COMPLETED, answer, plan=plan, reduce_calls=attempts.calls, reduce_usage=attempts.usage)


def _failure_event(state: RunState, at: float, exc: BaseException) -> RunFailed:
    """``RunFailed`` with the figures of what the run did and spent before it ended."""
    if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
        return state.stopped(at=at)
    if isinstance(exc, SpendLimitReached):
        return state.stopped(at=at, reason=str(exc), error_type=type(exc).__name__)
    message = exc.message if isinstance(exc, BaseExceptionGroup) else describe_error(exc)
    return state.failure(at=at, error=message or type(exc).__name__, error_type=type(exc).__name__)


async def _run(
    index: Index,
    request: GlobalSearchRequest,
    model: ChatModel,
    emit: EventSink,
    *,
    cache: MapCache | None,
    tokenizer: Tokenizer | None,
    run_id: str | None,
    retry_policy: RetryPolicy | None = None,
    embedder: EmbeddingModel | None = None,
    spending: SpendingLimit | None = None,
) -> GlobalSearchResult:
    started = time.monotonic()

    def clock() -> float:
        return time.monotonic() - started

    state = RunState()

    def observe(event: Event) -> None:
        state.apply(event)
        emit(event)

    if cache is not None:  # a failed read or write is one warning, never the run's end
        loop = asyncio.get_running_loop()
        cache = GuardedCache(
            cache, on_failure=lambda message: loop.call_soon_threadsafe(observe, RunWarning(at=clock(), message=message))
        )

    seed = request.seed if request.seed is not None else draw_seed()
    tokenizer = tokenizer or tokenizer_for(request.tokenizer, model)
    observe(
        RunStarted(
            run_id=run_id or uuid.uuid4().hex,
            request=request,
            seed=seed,
            model=model_identity(model),
            tokenizer=tokenizer.name,
        )
    )
    if spending is None and request.spend_limit_tokens is not None:
        spending = SpendingLimit(request.spend_limit_tokens)
    steps = _Steps(
        index, request, model, observe, seed, cache, tokenizer, clock, retry_policy or DEFAULT_RETRY_POLICY, embedder=embedder, spending=spending
    )
    try:
        return await steps.run()
    except SpendLimitReached as exc:
        # Stopped at the spending limit as Stop stops a run, then answered from what was read as
        # Stop's answer is (the map and the ratings kept the reduce's worst case free for it).
        observe(_failure_event(state, clock(), exc))
        if not state.answerable_from_read:
            raise
        return await answer_from_read(
            index, list(state.events), model, on_event=emit, tokenizer=tokenizer, retry_policy=retry_policy, spending=spending
        )
    except (asyncio.CancelledError, KeyboardInterrupt) as exc:  # stopped: by its consumer, or Ctrl-C inside a call
        emit(_failure_event(state, clock(), exc))
        raise
    except Exception as exc:  # noqa: BLE001 - reported as an event, then re-raised unchanged
        emit(_failure_event(state, clock(), exc))
        raise


async def retrieve_global(
    index: Index,
    request: GlobalSearchRequest,
    model: ChatModel,
    *,
    on_event: EventSink | None = None,
    cache: MapCache | None = None,
    tokenizer: Tokenizer | None = None,
    run_id: str | None = None,
    retry_policy: RetryPolicy | None = None,
    embedder: EmbeddingModel | None = None,
    spending: SpendingLimit | None = None,
) -> GlobalSearchResult:
    """Answer a global question over ``index``; ``on_event`` sees every event as it happens.

    ``embedder`` ranks the chunks of a ``vector`` run by embeddings (BM25 without one). Raises
    ``AllMapBatchesFailed`` when every map batch failed, ``BudgetError`` when the budgets cannot
    hold the prompt or a summary part, ``NoSourceChunksError`` when a ``text`` or ``vector`` run
    meets an index without chunks, and the reduce's last error when it failed twice.
    A run with a spending limit (the request's ``spend_limit_tokens``, or ``spending`` shared by
    a sweep or an experiment) sends no call that could pass it. One that reaches it stops as Stop
    stops a run (``RunFailed(cancelled=True)`` saying so) and answers from what it read
    (:func:`answer_from_read`: a ``partial`` result, ``diagnostics.stopped_at_limit`` set); with no
    useful map answer read yet it raises ``SpendLimitReached``.
    """
    return await _run(
        index, request, model, on_event or (lambda event: None),
        cache=cache, tokenizer=tokenizer, run_id=run_id, retry_policy=retry_policy, embedder=embedder, spending=spending,
    )


async def answer_from_read(
    index: Index,
    events: list[Event],
    model: ChatModel,
    *,
    on_event: EventSink | None = None,
    tokenizer: Tokenizer | None = None,
    retry_policy: RetryPolicy | None = None,
    spending: SpendingLimit | None = None,
) -> GlobalSearchResult:
    """Answer a stopped run from what it read: a reduce over the map answers it finished before
    the stop, through the same selection and reduce as a whole run.

    ``events`` are the run's so far, ending with its stop (``RunFailed``, cancelled or
    interrupted). The run goes on under its own id and clock: ``on_event`` sees
    ``PartialAnswerStarted``, the reduce's events and ``RunFinished``, whose result is
    ``partial`` with ``diagnostics.stopped_early`` set and the batches not read counted in
    ``diagnostics.unread_batch_count`` (and ``diagnostics.stopped_at_limit`` when the spending
    limit stopped it). Raises ``NothingReadError`` when the run was not stopped or finished no
    useful map answer; a failure (or another stop) ends it with ``RunFailed`` as in
    :func:`retrieve_global`. The reduce holds the run's spending limit (``spending``, else one
    made from the request's ``spend_limit_tokens`` with what the run spent counted in)."""
    emit = on_event or (lambda event: None)
    state = RunState.replay(events)
    if not state.answerable_from_read or state.request is None or state.seed is None:
        raise NothingReadError("The run has no finished map answer to answer from (it was not stopped, or it read nothing useful).")
    resumed_at, started = state.elapsed_s, time.monotonic()

    def clock() -> float:
        return resumed_at + time.monotonic() - started

    def observe(event: Event) -> None:
        state.apply(event)
        emit(event)

    request = state.request
    if spending is None and request.spend_limit_tokens is not None:
        spending = SpendingLimit(request.spend_limit_tokens, spent=state.usage.total_tokens)
    steps = _Steps(
        index, request, model, observe, state.seed, None, tokenizer or tokenizer_for(request.tokenizer, model), clock,
        retry_policy or DEFAULT_RETRY_POLICY, spending=spending,
    )
    if state.error_type == SpendLimitReached.__name__ and spending is not None:
        steps.stopped_at_limit = spending.limit
    steps.communities = [c for c in index.communities if c.id in set(state.selected_community_ids)]
    steps.unit_count = len(state.selected_community_ids)  # summaries, or a text run's source chunks
    steps.planned = tuple(PlannedBatch(index=b.index, community_ids=b.community_ids, token_estimate=b.token_estimate) for b in state.batches)
    if request.dynamic:
        steps.selection = walk_outcome(index, state.selection)
    if request.method == LAZY:
        steps.evidence = state.relevance
    mapped, unread = map_read(state)
    observe(PartialAnswerStarted(at=clock(), answers=len(mapped.answers), batches_read=len(state.batches) - unread, batch_count=len(state.batches)))
    try:
        return await steps.answer(mapped, unread=unread)
    except (asyncio.CancelledError, KeyboardInterrupt, Exception) as exc:  # noqa: BLE001 - reported as an event, then re-raised unchanged
        emit(_failure_event(state, clock(), exc))
        raise
_END = object()


async def stream_global(
    index: Index,
    request: GlobalSearchRequest,
    model: ChatModel,
    *,
    cache: MapCache | None = None,
    tokenizer: Tokenizer | None = None,
    run_id: str | None = None,
    retry_policy: RetryPolicy | None = None,
    embedder: EmbeddingModel | None = None,
    spending: SpendingLimit | None = None,
) -> AsyncIterator[Event]:
    """The events of a run as they happen; the last one is ``RunFinished`` (with the result).

    A failed run yields ``RunFailed`` and then raises its error. Closing the iterator early
    (or cancelling its consumer) cancels the run and its model calls.
    """
    queue: asyncio.Queue[object] = asyncio.Queue()

    async def produce() -> None:
        try:
            await _run(
                index, request, model, queue.put_nowait,
                cache=cache, tokenizer=tokenizer, run_id=run_id, retry_policy=retry_policy, embedder=embedder, spending=spending,
            )
        finally:
            queue.put_nowait(_END)

    task = asyncio.ensure_future(produce())
    try:
        while True:
            item = await queue.get()
            if item is _END:
                break
            yield item  # type: ignore[misc]
        await task
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
