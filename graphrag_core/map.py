"""The map phase (spec section 6): every batch asked of the model, at most ``concurrency`` at a time.

Invariants of :func:`run_global_map`: at most ``min(concurrency, len(batches))`` model calls are
in flight, and a call holds its slot only while the model works (cache reads, parsing and retry
back-offs happen outside it); each batch gets at most ``policy.max_attempts`` attempts; answers
and errors come back in batch order whatever the completion order; a failure is recorded as an
error, never as a fake answer; every attempt's reported token usage is counted.

Each batch's call goes through the engine's one retry loop (:mod:`graphrag_core.retry`, whose
names this module still exports for the callers that import them from here). An error raised
by the caller's own code (the ``on_event`` callback, the cache) propagates unchanged and is
never retried.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from .batching import SummaryBatch
from .context import COMMUNITY, SOURCE, Unit
from .errors import AllMapBatchesFailed, ModelOutputError, SpendLimitReached, describe_error
from .events import MapBatchCached, MapBatchFailed, MapBatchRetried, MapBatchStarted, MapBatchSucceeded, ModelNotice
from .llm.base import MAX_REPLY_CHARS, ChatModel, ChatRequest, TokenUsage
from .parsing import parse_map_output
from .pool import run_pool
from .language import Language
from .prompts import MAP_OUTPUT_SCHEMA, render_map_messages
from .request import DEFAULT_MAP_OUTPUT_RESERVE
from .results import BatchFailure, MapAnswer
from .retry import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_RETRY_POLICY,
    Attempts,
    CallBudget,
    CallerFailed,
    CallFailed,
    CallHooks,
    Reply,
    RetryNotice,
    RetryPolicy,
    check_reply_size,
    complete_with_retry,
    estimated_usage,
)
from .spending import SpendingLimit
from .tokens import Tokenizer

if TYPE_CHECKING:
    from .cache import MapCache
    from .events import Event

WORKERS_PER_SLOT = 2
"""Map workers per concurrency slot: a worker reading the cache or waiting out a back-off never
leaves a slot idle while another batch is ready to be sent."""

EventSink = Callable[["Event"], None]
Clock = Callable[[], float]


class MapPhaseResult(BaseModel):
    """What the map phase produced, in batch order.

    ``errors`` holds the last error of each failed batch (the exception objects, each with a
    note naming its batch); ``failures`` the same as records; ``usefulness`` one entry per batch
    (``None`` for a failed one). ``calls`` counts every attempt that reached the model and
    ``usage`` every such attempt's reported tokens, whether its reply was usable or not.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    answers: list[MapAnswer]
    errors: list[Exception] = Field(default_factory=list)
    failures: list[BatchFailure] = Field(default_factory=list)
    usefulness: list[float | None] = Field(default_factory=list)
    calls: int = 0
    cache_hits: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)

    def __repr__(self) -> str:
        # short on purpose: Python 3.11's asyncio.run reprs the main task's result when it
        # restores the SIGINT handler, and a full pydantic repr of thousands of answers is slow
        return (
            f"MapPhaseResult(answers={len(self.answers)}, failures={len(self.failures)}, "
            f"calls={self.calls}, cache_hits={self.cache_hits}, usage={self.usage!r})"
        )


def map_request(
    query: str, content: str, *, output_reserve: int = DEFAULT_MAP_OUTPUT_RESERVE, unit: Unit = COMMUNITY, data_first: bool = False,
    language: Language | None = None,
) -> ChatRequest:
    """The map call for one batch (also the cache's key material); ``unit`` says what its parts
    are; ``data_first`` puts the batch before the question (a run with a question reserve);
    ``language`` is the corpus's, which the prompt asks the answer to be in."""
    return ChatRequest(
        purpose="map",
        messages=render_map_messages(query, content, unit=unit, data_first=data_first, language=language),
        max_tokens=output_reserve or None,
        output_schema=MAP_OUTPUT_SCHEMA,
    )


class _MapRun:
    """The state of one map phase: per-batch outcomes in batch order and the running totals."""

    def __init__(
        self,
        query: str,
        batches: Sequence[SummaryBatch],
        model: ChatModel,
        *,
        concurrency: int,
        policy: RetryPolicy,
        output_reserve: int,
        emit: EventSink,
        cache: MapCache | None,
        clock: Clock,
        unit: Unit = COMMUNITY,
        tokenizer: Tokenizer | None,
        token_budget: int | None,
        data_first: bool = False,
        spending: SpendingLimit | None = None,
        keep: int = 0,
        language: Language | None = None,
    ) -> None:
        self.query, self.batches, self.model, self.unit = query, batches, model, unit
        self.data_first, self.language = data_first, language
        self.limit_reached: SpendLimitReached | None = None
        """Set when a batch's call could not be sent within the spending limit: the batches not
        started yet are left unread, the calls in flight end and are recorded."""
        self.budget = CallBudget(tokenizer=tokenizer, token_budget=token_budget, spending=spending, keep=keep)
        self.policy, self.output_reserve, self.emit, self.cache, self.clock = policy, output_reserve, emit, cache, clock
        self.slot = asyncio.Semaphore(max(1, concurrency))
        self.answers: list[MapAnswer | None] = [None] * len(batches)
        self.failures: list[tuple[Exception, BatchFailure] | None] = [None] * len(batches)
        self.calls = 0
        self.usage = TokenUsage()
        self.hits = 0

    def _community_ids(self, index: int) -> tuple[str, ...]:
        return tuple(str(i) for i in self.batches[index].community_ids)

    def _accept(self, index: int, answer: str, usefulness: float) -> None:
        self.answers[index] = MapAnswer(
            answer=answer, usefulness=usefulness, community_ids=self._community_ids(index), batch_index=index
        )

    async def _from_cache(self, index: int, key: str, request: ChatRequest) -> bool:
        """Answer batch ``index`` from the cache; False when it holds no usable reply."""
        assert self.cache is not None
        started = self.clock()
        text = await asyncio.to_thread(self.cache.get, key)
        if text is None:
            return False
        try:
            output = parse_map_output(text)
        except ModelOutputError:
            return False  # an entry written by an older, laxer version: ask the model again
        self.hits += 1
        self._accept(index, output.answer, output.usefulness)
        at = self.clock()
        self.emit(
            MapBatchCached(
                at=at, batch_index=index, answer=output.answer, usefulness=output.usefulness,
                duration_s=at - started, messages=request.messages, raw_reply=text,
            )
        )
        return True

    async def answer(self, index: int) -> None:
        if self.limit_reached is not None:
            return
        request = map_request(
            self.query, self.batches[index].content, output_reserve=self.output_reserve, unit=self.unit, data_first=self.data_first,
            language=self.language,
        )
        key = None
        if self.cache is not None:
            from .cache import cache_key

            key = cache_key(self.model, request)
            if await self._from_cache(index, key, request):
                return

        def on_start(attempt: int) -> None:
            # the verbatim messages of the first attempt (a retry after an unusable reply adds
            # that reply and what was wrong to the system message)
            self.emit(MapBatchStarted(at=self.clock(), batch_index=index, attempt=attempt, messages=request.messages if attempt == 1 else None))

        def on_retry(notice: RetryNotice) -> None:
            self.emit(
                MapBatchRetried(
                    at=self.clock(), batch_index=index, attempt=notice.attempt, error=notice.error,
                    delay_s=notice.delay_s, usage=notice.usage, raw_reply=notice.raw_reply, call_ended_at=notice.ended_at,
                    error_type=notice.error_type,
                )
            )

        def on_notice(message: str) -> None:
            self.emit(ModelNotice(at=self.clock(), message=message))

        tally = Attempts()
        try:
            reply = await complete_with_retry(
                self.model, request, parse_map_output, policy=self.policy, attempts=tally, slot=self.slot,
                hooks=CallHooks(clock=self.clock, on_start=on_start, on_retry=on_retry, on_notice=on_notice), budget=self.budget,
            )
        except CallFailed as failed:
            self._fail(index, failed)
            return
        except SpendLimitReached as reached:
            self.limit_reached = self.limit_reached or reached
            return
        finally:
            self.calls += tally.calls
            if tally.usage.total_tokens:
                self.usage = self.usage + tally.usage
        if self.cache is not None and key is not None:
            await asyncio.to_thread(self.cache.put, key, reply.text)
        output = reply.value
        self._accept(index, output.answer, output.usefulness)
        self.emit(
            MapBatchSucceeded(
                at=self.clock(), batch_index=index, answer=output.answer, usefulness=output.usefulness,
                attempt=reply.attempt, duration_s=reply.duration_s, usage=reply.usage, raw_reply=reply.text,
                call_ended_at=reply.ended_at,
            )
        )

    def _fail(self, index: int, failed: CallFailed) -> None:
        exc, ids = failed.error, self._community_ids(index)
        units = "source chunks" if self.unit == SOURCE else "communities"  # a lazy run's evidence is named by its community
        exc.add_note(f"Global Map batch {index} ({units} {', '.join(ids)}) failed after {failed.attempts} attempt(s).")
        failure = BatchFailure(
            batch_index=index, community_ids=ids, attempts=failed.attempts,
            error=describe_error(exc), error_type=type(exc).__name__,
        )
        self.failures[index] = (exc, failure)
        self.emit(
            MapBatchFailed(
                at=self.clock(), batch_index=index, attempts=failed.attempts, error=failure.error,
                error_type=failure.error_type, usage=failed.usage, raw_reply=failed.raw_reply, call_ended_at=failed.ended_at,
            )
        )

    def result(self) -> MapPhaseResult:
        failed = [f for f in self.failures if f is not None]
        if len(failed) == len(self.batches):
            raise AllMapBatchesFailed("Every Global Map batch failed.", [exc for exc, _ in failed])
        return MapPhaseResult(
            answers=[a for a in self.answers if a is not None],
            errors=[exc for exc, _ in failed],
            failures=[record for _, record in failed],
            usefulness=[a.usefulness if a is not None else None for a in self.answers],
            calls=self.calls,
            cache_hits=self.hits,
            usage=self.usage,
        )


async def run_global_map(
    query: str,
    batches: Sequence[SummaryBatch],
    model: ChatModel,
    *,
    concurrency: int,
    max_attempts: int | None = None,
    output_reserve: int = DEFAULT_MAP_OUTPUT_RESERVE,
    on_event: EventSink | None = None,
    cache: MapCache | None = None,
    clock: Clock | None = None,
    retry_policy: RetryPolicy | None = None,
    unit: Unit = COMMUNITY,
    tokenizer: Tokenizer | None = None,
    token_budget: int | None = None,
    data_first: bool = False,
    spending: SpendingLimit | None = None,
    keep: int = 0,
    language: Language | None = None,
) -> MapPhaseResult:
    """Ask the model about every batch; raise :class:`AllMapBatchesFailed` when none succeeded.

    ``max_attempts``, when given, overrides ``retry_policy.max_attempts``; ``unit`` says what the
    batches' parts are (community reports, or source chunks for the ``text`` method).
    ``tokenizer`` counts the calls whose endpoint reported no usage; ``token_budget`` (the map
    token budget) bounds the larger reserve of a retry after a cut reply (:func:`complete_with_retry`).
    ``data_first`` sends each batch before the question (see :func:`map_request`). With
    ``spending`` no call that could take the total past its limit (keeping ``keep`` free) is
    sent: :class:`~graphrag_core.errors.SpendLimitReached` ends the phase once the calls in
    flight have returned and been recorded (their events emitted). ``language`` is the corpus's
    (the prompts ask for it).
    """
    if not batches:
        return MapPhaseResult(answers=[])
    started = time.monotonic()
    policy = retry_policy or DEFAULT_RETRY_POLICY
    if max_attempts is not None:
        policy = RetryPolicy(**{**policy.__dict__, "max_attempts": max_attempts})
    run = _MapRun(
        query, batches, model,
        concurrency=concurrency, policy=policy, output_reserve=output_reserve,
        emit=on_event or (lambda event: None), cache=cache,
        clock=clock or (lambda: time.monotonic() - started), unit=unit,
        tokenizer=tokenizer, token_budget=token_budget, data_first=data_first, spending=spending, keep=keep, language=language,
    )
    await run_pool(len(batches), max(1, concurrency) * WORKERS_PER_SLOT, run.answer)
    if run.limit_reached is not None:
        raise run.limit_reached
    return run.result()


__all__ = [
    "MapPhaseResult",
    "map_request",
    "run_global_map",
    # the retry loop's names, defined in graphrag_core.retry and importable from here as before
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_RETRY_POLICY",
    "MAX_REPLY_CHARS",
    "Attempts",
    "CallFailed",
    "CallerFailed",
    "Reply",
    "RetryNotice",
    "RetryPolicy",
    "check_reply_size",
    "complete_with_retry",
    "estimated_usage",
]
