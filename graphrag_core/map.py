"""The map phase (spec section 6): one model call per batch, bounded concurrency, one retry.

Invariants of :func:`run_global_map`: at most ``min(concurrency, len(batches))`` calls are in
flight; each batch gets at most ``max_attempts`` attempts; answers and errors come back in batch
order whatever the completion order; a failure is recorded as an error, never as a fake answer.
This module holds the engine's only retry loop (:func:`call_with_retry`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .batching import SummaryBatch
from .errors import AllMapBatchesFailed, ModelError
from .events import MapBatchFailed, MapBatchRetried, MapBatchStarted, MapBatchSucceeded
from .llm.base import ChatModel, ChatRequest, TokenUsage
from .parsing import parse_map_output
from .prompts import render_map_messages
from .request import DEFAULT_MAP_OUTPUT_RESERVE
from .results import BatchFailure, MapAnswer

if TYPE_CHECKING:
    from .cache import MapCache
    from .events import Event

DEFAULT_MAX_ATTEMPTS = 2
MAX_RETRY_AFTER_S = 60.0
"""A server's ``Retry-After`` is honoured up to this many seconds."""

T = TypeVar("T")
EventSink = Callable[["Event"], None]
Clock = Callable[[], float]


class MapPhaseResult(BaseModel):
    """What the map phase produced, in batch order.

    ``errors`` holds the last error of each failed batch (the exception objects, each with a
    note naming its batch); ``failures`` the same as records; ``usefulness`` one entry per batch
    (``None`` for a failed one).
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    answers: list[MapAnswer]
    errors: list[Exception] = Field(default_factory=list)
    failures: list[BatchFailure] = Field(default_factory=list)
    usefulness: list[float | None] = Field(default_factory=list)
    calls: int = 0
    cache_hits: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)


class Attempt:
    """The bookkeeping of one retried call: attempts made and the last error."""

    def __init__(self) -> None:
        self.count = 0
        self.error: Exception | None = None


async def call_with_retry(
    call: Callable[[int], Awaitable[T]],
    *,
    max_attempts: int,
    on_retry: Callable[[int, Exception, float], None] | None = None,
    attempt: Attempt | None = None,
) -> T:
    """Run ``call(attempt_number)`` until it returns, at most ``max_attempts`` times.

    Any exception from the call is a failed attempt (a model is outside code; its failure is
    recorded, never swallowed). A :class:`ModelError` that is not retryable ends the tries
    early; its ``retry_after`` delays the next try. The last error is raised.
    """
    attempt = attempt or Attempt()
    while True:
        attempt.count += 1
        try:
            return await call(attempt.count)
        except Exception as exc:  # noqa: BLE001 - the boundary with the model: see docstring
            attempt.error = exc
            fatal = isinstance(exc, ModelError) and not exc.retryable
            if attempt.count >= max_attempts or fatal:
                raise
            delay = 0.0
            if isinstance(exc, ModelError) and exc.retry_after:
                delay = min(max(exc.retry_after, 0.0), MAX_RETRY_AFTER_S)
            if on_retry is not None:
                on_retry(attempt.count + 1, exc, delay)
            if delay:
                await asyncio.sleep(delay)


RAW_REPLY_ATTR = "raw_reply"
"""An exception raised while reading a model's reply carries the reply's text under this name."""


def with_raw_reply(parse: Callable[[str], T], raw: str) -> T:
    """``parse(raw)``; an error it raises carries ``raw`` (see :func:`raw_reply_of`)."""
    try:
        return parse(raw)
    except Exception as exc:  # noqa: BLE001 - annotated and re-raised unchanged
        setattr(exc, RAW_REPLY_ATTR, raw)
        raise


def raw_reply_of(exc: BaseException) -> str | None:
    """The reply text a failed attempt got, when it got one."""
    raw = getattr(exc, RAW_REPLY_ATTR, None)
    return raw if isinstance(raw, str) else None


def describe_error(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text


async def run_global_map(
    query: str,
    batches: Sequence[SummaryBatch],
    model: ChatModel,
    *,
    concurrency: int,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    output_reserve: int = DEFAULT_MAP_OUTPUT_RESERVE,
    on_event: EventSink | None = None,
    cache: MapCache | None = None,
    clock: Clock | None = None,
) -> MapPhaseResult:
    """Ask the model about every batch; raise :class:`AllMapBatchesFailed` when none succeeded."""
    if not batches:
        return MapPhaseResult(answers=[])
    started = time.monotonic()
    clock = clock or (lambda: time.monotonic() - started)
    emit = on_event or (lambda event: None)

    answers: list[MapAnswer | None] = [None] * len(batches)
    failures: list[tuple[Exception, BatchFailure] | None] = [None] * len(batches)
    usage_total = TokenUsage()
    calls = 0
    hits = 0
    next_index = 0

    if cache is not None:
        from .cache import cache_key
    else:
        cache_key = None  # type: ignore[assignment]

    async def answer_batch(index: int) -> None:
        nonlocal usage_total, calls, hits
        batch = batches[index]
        community_ids = tuple(str(i) for i in batch.community_ids)
        request = ChatRequest(
            purpose="map",
            messages=render_map_messages(query, batch.content),
            max_tokens=output_reserve or None,
        )
        key = cache_key(model, request) if cache_key is not None else None

        async def one_try(attempt: int) -> None:
            nonlocal usage_total, calls, hits
            began = clock()
            emit(MapBatchStarted(at=began, batch_index=index, attempt=attempt, messages=request.messages if attempt == 1 else None))
            cached_text = cache.get(key) if cache is not None and key is not None else None
            if cached_text is not None:
                raw = cached_text
                output = with_raw_reply(parse_map_output, raw)
                hits += 1
                usage = None
            else:
                calls += 1
                response = await model.complete(request)
                raw = response.text
                output = with_raw_reply(parse_map_output, raw)
                usage = response.usage
                if usage is not None:
                    usage_total = usage_total + usage
                if cache is not None and key is not None:
                    cache.put(key, response.text)
            answers[index] = MapAnswer(
                answer=output.answer, usefulness=output.usefulness, community_ids=community_ids, batch_index=index
            )
            emit(
                MapBatchSucceeded(
                    at=clock(),
                    batch_index=index,
                    answer=output.answer,
                    usefulness=output.usefulness,
                    attempt=attempt,
                    duration_s=clock() - began,
                    usage=usage,
                    cached=cached_text is not None,
                    raw_reply=raw,
                )
            )

        def on_retry(next_attempt: int, exc: Exception, delay: float) -> None:
            emit(
                MapBatchRetried(
                    at=clock(), batch_index=index, attempt=next_attempt, error=describe_error(exc), delay_s=delay, raw_reply=raw_reply_of(exc)
                )
            )

        attempt = Attempt()
        try:
            await call_with_retry(one_try, max_attempts=max_attempts, on_retry=on_retry, attempt=attempt)
        except Exception as exc:  # noqa: BLE001 - recorded per batch, raised as a group below
            exc.add_note(f"Global Map batch {index} (communities {', '.join(community_ids)}) failed after {attempt.count} attempt(s).")
            failure = BatchFailure(
                batch_index=index,
                community_ids=community_ids,
                attempts=attempt.count,
                error=describe_error(exc),
                error_type=type(exc).__name__,
            )
            failures[index] = (exc, failure)
            emit(
                MapBatchFailed(
                    at=clock(),
                    batch_index=index,
                    attempts=attempt.count,
                    error=failure.error,
                    error_type=failure.error_type,
                    raw_reply=raw_reply_of(exc),
                )
            )

    async def worker() -> None:
        nonlocal next_index
        while next_index < len(batches):
            index = next_index
            next_index += 1
            await answer_batch(index)

    workers = [asyncio.ensure_future(worker()) for _ in range(min(concurrency, len(batches)))]
    try:
        await asyncio.gather(*workers)
    finally:
        for task in workers:
            task.cancel()

    failed = [f for f in failures if f is not None]
    if len(failed) == len(batches):
        raise AllMapBatchesFailed("Every Global Map batch failed.", [exc for exc, _ in failed])
    return MapPhaseResult(
        answers=[a for a in answers if a is not None],
        errors=[exc for exc, _ in failed],
        failures=[record for _, record in failed],
        usefulness=[a.usefulness if a is not None else None for a in answers],
        calls=calls,
        cache_hits=hits,
        usage=usage_total,
    )
