"""The steps of one run (:class:`RunSteps`), each one method: plan (with dynamic selection),
rank, map, select for the reduce or pack the ranked chunks, reduce, finish. The steps share one
state and one event stream, so a failure in any of them becomes the same ``RunFailed`` with the
same figures (:func:`failure_event`). :mod:`.search` drives them for a whole run and for a
stopped run's answer from what it read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .batching import SummaryBatch
from .events import (
    BatchesPlanned,
    ChunksRanked,
    Event,
    ModelNotice,
    PlannedBatch,
    ReduceReplied,
    ReduceAnswerDelta,
    ReduceFailed,
    ReduceRetried,
    ReduceSelection,
    ReduceStarted,
    RunFailed,
    RunFinished,
    SummariesSelected,
)
from .errors import SpendLimitReached, describe_error
from .language import Language, corpus_language, language_drift
from .llm.base import ChatModel, ChatRequest, ChatResponse, StreamingChatModel, TokenUsage, model_identity
from .llm.embeddings import EmbeddingModel
from .map import MapPhaseResult, run_global_map
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
    rag_prompt_skeleton,
    reduce_prompt_skeleton,
    render_rag_messages,
    render_reduce_messages,
)
from .ranking import Ranking, rank_chunks
from .reduce import ReducePlan, plan_reduce
from .request import GlobalSearchRequest, check_question_reserve
from .results import NO_RELEVANT_CHUNKS_ANSWER, NO_RESULTS_ANSWER, GlobalSearchDiagnostics, GlobalSearchResult
from .retry import Attempts, CallBudget, CallerFailed, CallFailed, CallHooks, RetryNotice, RetryPolicy, complete_with_retry
from .selection import SelectionOutcome, select_dynamic
from .spending import SpendingLimit
from .state import RunState
from .status import RunStatus
from .tokens import Tokenizer

if TYPE_CHECKING:
    from .cache import MapCache

from .batch_plan import plan_batches, sent_prompt_budget

EventSink = Callable[[Event], None]


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
class RunSteps:
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
    language: Language | None = field(init=False)
    """The corpus's language (:func:`~graphrag_core.language.corpus_language`): the prompts ask
    for it, and answers in another are reported (``diagnostics.language_drift``)."""

    def __post_init__(self) -> None:
        self.language = corpus_language(self.index.communities)

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
        drift = language_drift(self.language, [a.answer for a in mapped.answers] if mapped is not None else [], answer if reduce_calls else None)
        if drift is not None:  # said once, as a notice, and kept with the run's figures
            diagnostics = diagnostics.model_copy(update={"language_drift": drift})
            self.emit(ModelNotice(at=self.clock(), message=drift.note))
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
            ranking.chunks, rag_prompt_skeleton(request.query, language=self.language), sent_prompt_budget(request.reduce_prompt_budget, self.tokenizer),
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
            language=self.language,
        )

    def select(self, mapped: MapPhaseResult) -> ReducePlan:
        request = self.request
        skeleton = reduce_prompt_skeleton(request.query, unit=self.prompt_unit, language=self.language)
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
            messages = render_rag_messages(request.query, plan.context, language=self.language)
        else:
            messages = render_reduce_messages(request.query, plan.context, unit=self.prompt_unit, language=self.language)
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
                hooks=CallHooks(
                    clock=self.clock, on_start=on_start, on_retry=on_retry,
                    on_notice=lambda message: self.emit(ModelNotice(at=self.clock(), message=message)),
                ),
                budget=CallBudget(tokenizer=self.tokenizer, token_budget=request.reduce_token_budget, spending=self.spending, final=True),
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
        self.batches, estimates = evidence.batches(seed=self.seed, tokenizer=self.tokenizer, language=self.language)
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


def failure_event(state: RunState, at: float, exc: BaseException) -> RunFailed:
    """``RunFailed`` with the figures of what the run did and spent before it ended."""
    if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
        return state.stopped(at=at)
    if isinstance(exc, SpendLimitReached):
        return state.stopped(at=at, reason=str(exc), error_type=type(exc).__name__)
    message = exc.message if isinstance(exc, BaseExceptionGroup) else describe_error(exc)
    return state.failure(at=at, error=message or type(exc).__name__, error_type=type(exc).__name__)


__all__ = ["RunSteps", "failure_event"]
