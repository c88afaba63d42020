"""Global search, end to end: a request in, a stream of typed events out, a result at the end.

:func:`retrieve_global` and :func:`stream_global` run the same steps (:func:`_run`): select the
summaries of a level, build their map texts, pack them into batches, map, select for the
reduce, reduce. Every step reports itself as an event; a run that cannot finish reports
``RunFailed`` before raising, so what was computed up to then is not lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from .batching import MapText, SummaryBatch, build_summary_batches, estimate_batches
from .errors import STOPPED_MESSAGE
from .events import (
    BatchesPlanned,
    Event,
    PlannedBatch,
    ReduceReplied,
    ReduceSelection,
    ReduceStarted,
    RunFailed,
    RunFinished,
    RunStarted,
    SummariesSelected,
)
from .llm.base import ChatModel, ChatRequest, TokenUsage, model_identity
from .map import DEFAULT_MAX_ATTEMPTS, call_with_retry, run_global_map
from .models import Community, Index
from .citations import check_citations
from .errors import ReduceOutputError
from .parsing import parse_reduce_output
from .prompts import map_prompt_skeleton, reduce_prompt_skeleton, render_reduce_messages
from .reduce import plan_reduce
from .request import GlobalSearchRequest
from .results import NO_RESULTS_ANSWER, GlobalSearchDiagnostics, GlobalSearchResult
from .selection import SelectionOutcome, select_dynamic
from .tokens import Tokenizer, get_tokenizer

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
) -> tuple[list[Community], list[SummaryBatch], list[int]]:
    """The communities a request selects and the batches it would send, with no model call.

    ``communities`` overrides the level's selection (dynamic selection passes what it kept).
    Returns ``(communities, batches, token_estimates)``; raises ``BudgetError`` like a run would.
    """
    tokenizer = tokenizer or get_tokenizer(request.tokenizer)
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
    skeleton = map_prompt_skeleton(request.query)
    batches = build_summary_batches(texts, skeleton, request.map_prompt_budget, rng=random.Random(seed), tokenizer=tokenizer)
    return communities, batches, estimate_batches(batches, skeleton, tokenizer=tokenizer)


async def _run(
    index: Index,
    request: GlobalSearchRequest,
    model: ChatModel,
    emit: EventSink,
    *,
    cache: MapCache | None,
    tokenizer: Tokenizer | None,
    run_id: str | None,
) -> GlobalSearchResult:
    started = time.monotonic()

    def clock() -> float:
        return time.monotonic() - started

    seed = request.seed if request.seed is not None else draw_seed()
    tokenizer = tokenizer or get_tokenizer(request.tokenizer)
    emit(
        RunStarted(
            run_id=run_id or uuid.uuid4().hex,
            request=request,
            seed=seed,
            model=model_identity(model),
            tokenizer=tokenizer.name,
        )
    )
    try:
        return await _steps(index, request, model, emit, seed=seed, cache=cache, tokenizer=tokenizer, clock=clock)
    except asyncio.CancelledError:
        emit(RunFailed(at=clock(), error=STOPPED_MESSAGE, error_type="RunCancelled", cancelled=True))
        raise
    except Exception as exc:  # noqa: BLE001 - reported as an event, then re-raised unchanged
        message = exc.message if isinstance(exc, BaseExceptionGroup) else str(exc)
        emit(RunFailed(at=clock(), error=message or type(exc).__name__, error_type=type(exc).__name__))
        raise


async def _steps(
    index: Index,
    request: GlobalSearchRequest,
    model: ChatModel,
    emit: EventSink,
    *,
    seed: int,
    cache: MapCache | None,
    tokenizer: Tokenizer,
    clock: Callable[[], float],
) -> GlobalSearchResult:
    # Dynamic selection (dynamic-selection.md): the model picks the communities; the rest is unchanged.
    selection: SelectionOutcome | None = None
    if request.dynamic:
        selection = await select_dynamic(index, request, model, tokenizer=tokenizer, on_event=emit, cache=cache, clock=clock)
    communities, batches, estimates = plan_batches(
        index, request, seed=seed, tokenizer=tokenizer, communities=selection.communities if selection else None
    )
    emit(
        SummariesSelected(
            at=clock(), community_level=request.reported_level, count=len(communities), community_ids=tuple(c.id for c in communities)
        )
    )

    def finish(**fields: Any) -> GlobalSearchResult:
        extra = fields.pop("diagnostics", {})
        if selection is not None:  # rating figures apart; the run's usage is everything it spent
            extra = {**extra, **selection.diagnostics(), "usage": extra.get("usage", TokenUsage()) + selection.usage}
        diagnostics = GlobalSearchDiagnostics(
            community_level=request.reported_level,
            summary_count=len(communities),
            batch_count=len(batches),
            batch_community_ids=[b.community_ids for b in batches],
            batch_token_estimates=estimates,
            map_prompt_budget=request.map_prompt_budget,
            reduce_prompt_budget=request.reduce_prompt_budget,
            seed=seed,
            duration_s=clock(),
            **extra,
        )
        result = GlobalSearchResult(
            query=request.query, community_level=request.reported_level, seed=seed, request=request, diagnostics=diagnostics, **fields
        )
        emit(RunFinished(at=clock(), result=result))
        return result

    if not batches:
        return finish(
            status="no_results",
            answer=NO_RESULTS_ANSWER,
            diagnostics=dict(batch_usefulness=[], failed_batch_count=0, selected_answer_count=0, reduce_prompt_tokens=None),
        )

    emit(
        BatchesPlanned(
            at=clock(),
            batches=tuple(PlannedBatch(index=i, community_ids=b.community_ids, token_estimate=t) for i, (b, t) in enumerate(zip(batches, estimates))),
            map_prompt_budget=request.map_prompt_budget,
            concurrency=min(request.map_concurrency, len(batches)),
        )
    )
    mapped = await run_global_map(
        request.query,
        batches,
        model,
        concurrency=request.map_concurrency,
        output_reserve=request.map_output_reserve,
        on_event=emit,
        cache=cache,
        clock=clock,
    )

    skeleton = reduce_prompt_skeleton(request.query)
    plan = plan_reduce(mapped.answers, skeleton, request.reduce_prompt_budget, strategy=request.reduce_strategy, tokenizer=tokenizer)
    emit(
        ReduceSelection(
            at=clock(), candidates=tuple(plan.candidates), reduce_prompt_budget=request.reduce_prompt_budget, strategy=request.reduce_strategy
        )
    )
    common = dict(
        map_answers=mapped.answers,
        selected_answers=plan.selected,
        reduce_candidates=plan.candidates,
        failed_batches=mapped.failures,
    )
    diagnostics = dict(
        batch_usefulness=mapped.usefulness,
        failed_batch_count=len(mapped.failures),
        selected_answer_count=len(plan.selected),
        reduce_prompt_tokens=plan.prompt_tokens,
        map_calls=mapped.calls,
        cache_hits=mapped.cache_hits,
        usage=mapped.usage,
        map_usage=mapped.usage,
    )
    if not plan.selected:
        return finish(status="no_results", answer=NO_RESULTS_ANSWER, diagnostics=diagnostics, **common)

    reduce_request = ChatRequest(
        purpose="reduce",
        messages=render_reduce_messages(request.query, plan.context),
        max_tokens=request.reduce_output_reserve or None,
    )
    emit(ReduceStarted(at=clock(), answer_count=len(plan.selected), prompt_tokens=plan.prompt_tokens or 0, messages=reduce_request.messages))
    reduce_calls = 0
    usage = mapped.usage

    async def reduce_once(attempt: int) -> str:
        nonlocal reduce_calls, usage
        reduce_calls += 1
        began = clock()
        response = await model.complete(reduce_request)
        if response.usage is not None:
            usage = usage + response.usage
        try:
            answer = parse_reduce_output(response.text)
        except ReduceOutputError as exc:
            emit(ReduceReplied(at=clock(), attempt=attempt, raw_reply=response.text, error=str(exc), usage=response.usage, duration_s=clock() - began))
            raise
        emit(ReduceReplied(at=clock(), attempt=attempt, raw_reply=response.text, usage=response.usage, duration_s=clock() - began))
        return answer

    answer = await call_with_retry(reduce_once, max_attempts=DEFAULT_MAX_ATTEMPTS)
    behind = list(dict.fromkeys(cid for a in plan.selected for cid in a.community_ids))
    unsupported = check_citations(answer, behind=behind, index_ids={c.id for c in index.communities})
    diagnostics.update(reduce_calls=reduce_calls, usage=usage, unsupported_citation_count=len(unsupported))
    return finish(
        status="partial" if mapped.failures or (selection and selection.failed_count) else "completed",
        answer=answer,
        community_ids=behind,
        diagnostics=diagnostics,
        **common,
    )


async def retrieve_global(
    index: Index,
    request: GlobalSearchRequest,
    model: ChatModel,
    *,
    on_event: EventSink | None = None,
    cache: MapCache | None = None,
    tokenizer: Tokenizer | None = None,
    run_id: str | None = None,
) -> GlobalSearchResult:
    """Answer a global question over ``index``; ``on_event`` sees every event as it happens.

    Raises ``AllMapBatchesFailed`` when every map batch failed, ``BudgetError`` when the budgets
    cannot hold the prompt or a summary part, and the reduce's last error when it failed twice.
    """
    return await _run(index, request, model, on_event or (lambda event: None), cache=cache, tokenizer=tokenizer, run_id=run_id)


_END = object()


async def stream_global(
    index: Index,
    request: GlobalSearchRequest,
    model: ChatModel,
    *,
    cache: MapCache | None = None,
    tokenizer: Tokenizer | None = None,
    run_id: str | None = None,
) -> AsyncIterator[Event]:
    """The events of a run as they happen; the last one is ``RunFinished`` (with the result).

    A failed run yields ``RunFailed`` and then raises its error. Closing the iterator early
    (or cancelling its consumer) cancels the run and its model calls.
    """
    queue: asyncio.Queue[object] = asyncio.Queue()

    async def produce() -> None:
        try:
            await _run(index, request, model, queue.put_nowait, cache=cache, tokenizer=tokenizer, run_id=run_id)
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
