"""The map phase (spec section 6) and the engine's only retry loop (:func:`complete_with_retry`).

Invariants of :func:`run_global_map`: at most ``min(concurrency, len(batches))`` model calls are
in flight, and a call holds its slot only while the model works (cache reads, parsing and retry
back-offs happen outside it); each batch gets at most ``policy.max_attempts`` attempts; answers
and errors come back in batch order whatever the completion order; a failure is recorded as an
error, never as a fake answer; every attempt's reported token usage is counted.

Only the model call and the parsing of its reply are retried. An error raised by the caller's
own code (the ``on_event`` callback, the cache) is the caller's: it propagates unchanged and
is never retried. A reply cut at ``max_tokens`` is retried asking for less, with a larger
reserve where the call's budget allows; a call whose endpoint reported no usage is counted
with the run's tokenizer and marked estimated.

Why this module is long: the one retry loop serves every kind of call, and what it decides
(back-offs, feedback, cut replies, estimated usage, reply bounds) belongs together with the map
phase it was written for, which every other phase copies in shape.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .batching import SummaryBatch
from .context import COMMUNITY, SOURCE, Unit
from .errors import AllMapBatchesFailed, ModelError, ModelOutputError, ReplyCutError, ReplyTooLongError, SpendLimitReached, describe_error
from .events import MapBatchCached, MapBatchFailed, MapBatchRetried, MapBatchStarted, MapBatchSucceeded, ModelNotice
from .llm.base import MAX_REPLY_CHARS, ChatModel, ChatRequest, ChatResponse, TokenUsage
from .parsing import parse_map_output, quote_reply
from .pool import run_pool
from .prompts import MAP_OUTPUT_SCHEMA, render_cut_retry_request, render_map_messages, render_retry_request
from .request import DEFAULT_MAP_OUTPUT_RESERVE
from .results import BatchFailure, MapAnswer
from .spending import SpendingLimit, spent_tokens, worst_case_tokens
from .tokens import HeuristicTokenizer, Tokenizer, estimate_tokens

if TYPE_CHECKING:
    from .cache import MapCache
    from .events import Event

DEFAULT_MAX_ATTEMPTS = 2
MAX_RETRY_AFTER_S = 60.0
"""A server's ``Retry-After`` is honoured up to this many seconds."""
DEFAULT_BACKOFF_BASE_S = 0.5
"""The back-off before the first retry of a failed call with no ``Retry-After`` (before jitter)."""
DEFAULT_BACKOFF_CAP_S = 8.0
"""The longest back-off between two attempts without ``Retry-After``."""
REPLY_TOKEN_FACTOR = 8
"""A reply estimated at more than this many times the call's ``max_tokens`` is refused."""
CUT_RESERVE_GROWTH = 2
"""A retry after a reply cut at ``max_tokens`` may have up to this many times the reserve, as
far as the call's token budget leaves room beside its prompt."""
WORKERS_PER_SLOT = 2
"""Map workers per concurrency slot: a worker reading the cache or waiting out a back-off never
leaves a slot idle while another batch is ready to be sent."""

T = TypeVar("T")
EventSink = Callable[["Event"], None]
Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    """How failed calls are tried again (map and reduce alike).

    A model error that is not retryable ends the tries at once. A server's ``retry_after`` is
    honoured (capped at ``retry_after_cap_s``); any other model error (429, 5xx, timeouts, lost
    connections) waits ``backoff_base_s * 2**(n-1)`` capped at ``backoff_cap_s``, with "equal
    jitter" (half fixed, half random), before attempt ``n + 1``. An unusable reply is retried at
    once, with feedback. ``sleep`` and ``random`` are injectable so tests never wait.
    """

    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    backoff_base_s: float = DEFAULT_BACKOFF_BASE_S
    backoff_cap_s: float = DEFAULT_BACKOFF_CAP_S
    retry_after_cap_s: float = MAX_RETRY_AFTER_S
    sleep: Sleep = asyncio.sleep
    random: Callable[[], float] = random.random

    def delay_after(self, failed_attempt: int, error: BaseException) -> float:
        """Seconds to wait after attempt ``failed_attempt`` failed with ``error``."""
        if not isinstance(error, ModelError):
            return 0.0
        if error.retry_after is not None:
            return min(max(error.retry_after, 0.0), self.retry_after_cap_s)
        ceiling = min(self.backoff_cap_s, self.backoff_base_s * 2 ** (failed_attempt - 1))
        return ceiling / 2 + self.random() * ceiling / 2


DEFAULT_RETRY_POLICY = RetryPolicy()


@dataclass
class Attempts:
    """What the attempts of one call cost: how many, how many reached the model, their usage."""

    count: int = 0
    calls: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)


@dataclass(frozen=True)
class RetryNotice:
    """Attempt ``attempt - 1`` failed with ``error``; attempt ``attempt`` follows in ``delay_s``."""

    attempt: int
    error: str
    delay_s: float
    usage: TokenUsage | None
    raw_reply: str | None = None
    """The failed attempt's reply text, when the model replied (e.g. a reply that did not parse)."""
    ended_at: float | None = None
    """When the failed attempt's call returned or raised (``clock``), before its slot was released."""


@dataclass(frozen=True)
class Reply(Generic[T]):
    """A call that succeeded: the parsed value, the reply text, and the attempt that made it."""

    value: T
    text: str
    attempt: int
    usage: TokenUsage | None
    duration_s: float
    ended_at: float | None = None
    """When the successful call returned (``clock``), read before its slot was released."""


class CallerFailed(Exception):
    """Raised through a model call when the caller's own callback (e.g. ``on_text`` of a
    streaming call) failed: :func:`complete_with_retry` unwraps it and raises the callback's
    error unchanged, never as a failed attempt."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class CallFailed(Exception):
    """Every attempt of a call failed. ``error`` is the last attempt's error, ``usage`` the
    last attempt's reported usage (earlier attempts' usage was reported with their retries)."""

    def __init__(
        self, error: Exception, *, attempts: int, usage: TokenUsage | None, raw_reply: str | None = None, ended_at: float | None = None
    ) -> None:
        super().__init__(describe_error(error))
        self.error = error
        self.attempts = attempts
        self.usage = usage
        self.raw_reply = raw_reply
        """The last attempt's reply text, when the model replied."""
        self.ended_at = ended_at
        """When the last attempt's call returned or raised (``clock``), before its slot was released."""


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


def check_reply_size(request: ChatRequest, text: str) -> None:
    """Refuse a reply far beyond what the call asked for (more than ``MAX_REPLY_CHARS``, or an
    estimate over ``REPLY_TOKEN_FACTOR`` x ``max_tokens``): it would only be stored, never used."""
    limit = request.max_tokens
    too_long = len(text) > MAX_REPLY_CHARS
    if not too_long and limit and len(text) > REPLY_TOKEN_FACTOR * limit:  # a token is at least a character
        too_long = estimate_tokens(text) > REPLY_TOKEN_FACTOR * limit
    if too_long:
        asked = f"max_tokens was {limit}" if limit else "no max_tokens was set"
        raise ReplyTooLongError(
            f"The model's reply is far longer than asked ({len(text):,} characters; {asked}), so it was refused. "
            f"{quote_reply(text)}"
        )


REFUSED_REPLY_KEPT_CHARS = 2_000
"""How much of a reply refused as too long is kept for the record (the rest is never stored)."""


def _kept_reply(response: ChatResponse | None, error: Exception) -> str | None:
    """A failed attempt's reply text as it may be recorded: only the start of one refused as too long."""
    if response is None:
        return None
    if isinstance(error, ReplyTooLongError):
        text = response.text
        return f"{text[:REFUSED_REPLY_KEPT_CHARS]}… [{len(text):,} characters in all; refused as too long, the rest is not kept]"
    return response.text


async def complete_with_retry(
    model: ChatModel,
    request: ChatRequest,
    parse: Callable[[str], T],
    *,
    policy: RetryPolicy = DEFAULT_RETRY_POLICY,
    attempts: Attempts | None = None,
    slot: asyncio.Semaphore | None = None,
    clock: Clock = time.monotonic,
    on_start: Callable[[int], None] | None = None,
    on_retry: Callable[[RetryNotice], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
    tokenizer: Tokenizer | None = None,
    token_budget: int | None = None,
    spending: SpendingLimit | None = None,
    keep: int = 0,
    final: bool = False,
) -> Reply[T]:
    """Call the model and parse its reply, trying again as ``policy`` says.

    Only ``model.complete`` and ``parse`` are inside the retry: any exception from the model
    (outside code) or a :class:`ModelOutputError` from ``parse`` fails the attempt; the
    callbacks' own errors propagate. ``slot`` is held only around ``model.complete`` (and the
    ``on_start`` it announces). A retry after an unusable reply sends the request again with
    that reply and what was wrong with it; after a reply cut at ``max_tokens`` that did not
    parse (:class:`ReplyCutError`), it asks for a shorter answer instead, with up to
    :data:`CUT_RESERVE_GROWTH` times the reserve where ``token_budget`` (prompt and reply of the
    call together) leaves room. Raises :class:`CallFailed` when the tries run out.
    ``on_notice`` sees what the adapter says about its endpoint (``ChatResponse.notices``).
    A reply whose endpoint reported no usage is counted with ``tokenizer`` (the spec's estimate
    when none is given) and marked estimated.

    With ``spending``, each attempt first holds its worst case on the limit (keeping ``keep``
    tokens free for what must follow; ``final``: the run's last call, see
    :meth:`SpendingLimit.reserve`), inside ``slot`` and before ``on_start``: an attempt that
    could take the total past the limit is never sent, and
    :class:`~graphrag_core.errors.SpendLimitReached` propagates (it is no failed attempt).
    """
    attempts = attempts if attempts is not None else Attempts()
    counter = tokenizer or HeuristicTokenizer()
    sent = request
    while True:
        attempts.count += 1
        number = attempts.count
        response: ChatResponse | None = None
        error: Exception | None = None
        async with slot if slot is not None else contextlib.nullcontext():
            held = None
            if spending is not None:
                held = await spending.reserve(worst_case_tokens(sent, counter, token_budget=token_budget), keep=keep, final=final)
            if on_start is not None:
                on_start(number)
            began = clock()
            attempts.calls += 1
            try:
                response = await model.complete(sent)
            except CallerFailed as failed:
                raise failed.error from None
            except Exception as exc:  # noqa: BLE001 - the boundary with the model: its failure is an attempt's
                error = exc
            finally:
                if held is not None and spending is not None:
                    spending.settle(held, spent_tokens(sent, response, counter))
            ended = clock()  # the call's own end: an event emitted after the hand-off must not overlap the next call
        if slot is not None:
            # Hand the freed slot on before reading this reply: the release scheduled the waiting
            # call's wake-up, and the first yield lets it start. When it did go to a waiting call
            # (the slot is taken again), a second yield lets every other call that returned in
            # the same loop turn hand its slot on too, so no waiting call starts behind the
            # parsing, events and next request of the calls that returned before it. A reply is
            # read no later than needed: with no call waiting, one yield only.
            handed_on = slot.locked()
            await asyncio.sleep(0)
            if handed_on:
                await asyncio.sleep(0)
        if response is not None and response.notices and on_notice is not None:
            for notice in response.notices:
                on_notice(notice)
        usage = response.usage if response is not None else None
        if response is not None and usage is None and response.usage_unreported:
            usage = await asyncio.to_thread(estimated_usage, sent, response.text, counter)
        if usage is not None:
            attempts.usage = attempts.usage + usage
        if response is not None:
            try:
                check_reply_size(sent, response.text)
                value = parse(response.text)
            except ModelOutputError as exc:
                error = _cut_error(sent, response, exc) if response.cut and not isinstance(exc, ReplyTooLongError) else exc
            else:
                return Reply(value=value, text=response.text, attempt=number, usage=usage, duration_s=clock() - began, ended_at=ended)
        assert error is not None
        fatal = isinstance(error, ModelError) and not error.retryable
        if number >= policy.max_attempts or fatal:
            raise CallFailed(error, attempts=number, usage=usage, raw_reply=_kept_reply(response, error), ended_at=ended)
        delay = policy.delay_after(number, error)
        if on_retry is not None:
            raw = _kept_reply(response, error)
            on_retry(RetryNotice(attempt=number + 1, error=describe_error(error), delay_s=delay, usage=usage, raw_reply=raw, ended_at=ended))
        if isinstance(error, ReplyCutError):
            sent = await asyncio.to_thread(_shorter_request, request, sent, counter, token_budget)
        elif isinstance(error, ModelOutputError) and response is not None:
            sent = render_retry_request(request, response.text, describe_error(error))
        else:
            sent = request
        if delay:
            await policy.sleep(delay)


def estimated_usage(request: ChatRequest, reply: str, tokenizer: Tokenizer) -> TokenUsage:
    """One call's tokens as ``tokenizer`` counts its prompt and reply, marked estimated."""
    return TokenUsage(prompt_tokens=tokenizer.count(request.prompt_text), completion_tokens=tokenizer.count(reply), estimated_calls=1)


def _cut_error(sent: ChatRequest, response: ChatResponse, parse_error: ModelOutputError) -> ReplyCutError:
    """The error of a reply cut at the output reserve, quoting its start."""
    limit = sent.max_tokens
    at = f"the output reserve ({limit:,} tokens)" if limit else "the model's output limit"
    error = ReplyCutError(f"The reply was cut at {at} before it was complete.", max_tokens=limit)
    error.reply_start = quote_reply(response.text)
    error.__cause__ = parse_error
    return error


def _shorter_request(request: ChatRequest, cut: ChatRequest, tokenizer: Tokenizer, token_budget: int | None) -> ChatRequest:
    """``request`` again, asking for a shorter answer; its reserve grows (up to
    :data:`CUT_RESERVE_GROWTH` times the one ``cut`` was sent with) as far as ``token_budget``
    leaves room beside the new prompt, and never shrinks."""
    reserve = cut.max_tokens
    retry = render_cut_retry_request(request, cut_at=reserve, max_tokens=reserve)
    if reserve is None or token_budget is None:
        return retry
    room = token_budget - tokenizer.count(retry.prompt_text)
    return retry.model_copy(update={"max_tokens": max(reserve, min(room, reserve * CUT_RESERVE_GROWTH))})


def map_request(
    query: str, content: str, *, output_reserve: int = DEFAULT_MAP_OUTPUT_RESERVE, unit: Unit = COMMUNITY, data_first: bool = False
) -> ChatRequest:
    """The map call for one batch (also the cache's key material); ``unit`` says what its parts
    are; ``data_first`` puts the batch before the question (a run with a question reserve)."""
    return ChatRequest(
        purpose="map",
        messages=render_map_messages(query, content, unit=unit, data_first=data_first),
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
    ) -> None:
        self.query, self.batches, self.model, self.unit = query, batches, model, unit
        self.data_first, self.spending, self.keep = data_first, spending, keep
        self.limit_reached: SpendLimitReached | None = None
        """Set when a batch's call could not be sent within the spending limit: the batches not
        started yet are left unread, the calls in flight end and are recorded."""
        self.tokenizer, self.token_budget = tokenizer, token_budget
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
            self.query, self.batches[index].content, output_reserve=self.output_reserve, unit=self.unit, data_first=self.data_first
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
                )
            )

        def on_notice(message: str) -> None:
            self.emit(ModelNotice(at=self.clock(), message=message))

        tally = Attempts()
        try:
            reply = await complete_with_retry(
                self.model, request, parse_map_output, policy=self.policy, attempts=tally,
                slot=self.slot, clock=self.clock, on_start=on_start, on_retry=on_retry, on_notice=on_notice,
                tokenizer=self.tokenizer, token_budget=self.token_budget, spending=self.spending, keep=self.keep,
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
) -> MapPhaseResult:
    """Ask the model about every batch; raise :class:`AllMapBatchesFailed` when none succeeded.

    ``max_attempts``, when given, overrides ``retry_policy.max_attempts``; ``unit`` says what the
    batches' parts are (community reports, or source chunks for the ``text`` method).
    ``tokenizer`` counts the calls whose endpoint reported no usage; ``token_budget`` (the map
    token budget) bounds the larger reserve of a retry after a cut reply (:func:`complete_with_retry`).
    ``data_first`` sends each batch before the question (see :func:`map_request`). With
    ``spending`` no call that could take the total past its limit (keeping ``keep`` free) is
    sent: :class:`~graphrag_core.errors.SpendLimitReached` ends the phase once the calls in
    flight have returned and been recorded (their events emitted).
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
        tokenizer=tokenizer, token_budget=token_budget, data_first=data_first, spending=spending, keep=keep,
    )
    await run_pool(len(batches), max(1, concurrency) * WORKERS_PER_SLOT, run.answer)
    if run.limit_reached is not None:
        raise run.limit_reached
    return run.result()


__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_RETRY_POLICY",
    "Attempts",
    "CallFailed",
    "CallerFailed",
    "MapPhaseResult",
    "Reply",
    "RetryNotice",
    "RetryPolicy",
    "check_reply_size",
    "complete_with_retry",
    "estimated_usage",
    "map_request",
    "run_global_map",
]
