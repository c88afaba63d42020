"""Global search, end to end: a request in, a stream of typed events out, a result at the end.

:func:`retrieve_global` and :func:`stream_global` run the same steps (:func:`_run`, over
:class:`~graphrag_core.run_steps.RunSteps`): select the summaries of a level, build their map
texts, pack them into batches (:mod:`.batch_plan`), map, select for the reduce, reduce. Every
step reports itself as an event; a run that cannot finish reports ``RunFailed`` before raising,
so what was computed up to then is not lost. A stopped run answers from what it read
(:func:`answer_from_read`, for Stop and for the spending limit) through the same steps.

The request's ``method`` (evaluation spec section 7) chooses the units: ``global`` maps over
community summaries; ``text`` runs the same steps over the index's source chunks; ``vector``
ranks the chunks (:mod:`.ranking`), packs the most relevant into the reduce budget
(:mod:`.naive_rag`) and makes one call, with the reduce's events.

:func:`plan_batches`, :func:`sent_prompt_budget` and ``PROMPT_MESSAGES`` are
:mod:`.batch_plan`'s, importable from here as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from .batch_plan import PROMPT_MESSAGES, plan_batches, sent_prompt_budget
from .cache import GuardedCache
from .events import Event, PartialAnswerStarted, PlannedBatch, RunStarted, RunWarning
from .errors import NothingReadError, SpendLimitReached
from .llm.base import ChatModel, model_identity
from .llm.embeddings import EmbeddingModel
from .methods import LAZY
from .models import Index
from .request import SEED_MAX, SEED_MIN, GlobalSearchRequest
from .results import GlobalSearchResult
from .retry import DEFAULT_RETRY_POLICY, RetryPolicy
from .run_steps import RunSteps, failure_event
from .spending import SpendingLimit
from .state import RunState
from .stopped import map_read, walk_outcome
from .tokens import Tokenizer, tokenizer_for

if TYPE_CHECKING:
    from .cache import MapCache

EventSink = Callable[[Event], None]


def draw_seed() -> int:
    """A fresh seed for a request that did not set one (in ``SEED_MIN..SEED_MAX``, the range
    people give seeds in); it is reported so the run can be repeated."""
    return random.SystemRandom().randint(SEED_MIN, SEED_MAX)


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
    steps = RunSteps(
        index, request, model, observe, seed, cache, tokenizer, clock, retry_policy or DEFAULT_RETRY_POLICY, embedder=embedder, spending=spending
    )
    try:
        return await steps.run()
    except SpendLimitReached as exc:
        # Stopped at the spending limit as Stop stops a run, then answered from what was read as
        # Stop's answer is (the map and the ratings kept the reduce's worst case free for it).
        observe(failure_event(state, clock(), exc))
        if not state.answerable_from_read:
            raise
        return await answer_from_read(
            index, list(state.events), model, on_event=emit, tokenizer=tokenizer, retry_policy=retry_policy, spending=spending
        )
    except (asyncio.CancelledError, KeyboardInterrupt) as exc:  # stopped: by its consumer, or Ctrl-C inside a call
        emit(failure_event(state, clock(), exc))
        raise
    except Exception as exc:  # noqa: BLE001 - reported as an event, then re-raised unchanged
        emit(failure_event(state, clock(), exc))
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
    steps = RunSteps(
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
        emit(failure_event(state, clock(), exc))
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


__all__ = [
    "answer_from_read",
    "draw_seed",
    "retrieve_global",
    "stream_global",
    # defined in batch_plan, importable from here as before
    "PROMPT_MESSAGES",
    "plan_batches",
    "sent_prompt_budget",
]
