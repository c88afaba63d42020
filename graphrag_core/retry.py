"""The engine's only retry loop (:func:`complete_with_retry`): every model call of a run (map,
reduce, rating, judging, claims, questions) is tried here, as :class:`RetryPolicy` says.

Only the model call and the parsing of its reply are retried. An error raised by the caller's
own code (a callback of :class:`CallHooks`, the cache) is the caller's: it propagates unchanged
and is never retried. A reply cut at ``max_tokens`` is retried asking for less, with a larger
reserve where the call's budget allows; a call whose endpoint reported no usage is counted
with the call's tokenizer and marked estimated; a reply far beyond what was asked is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from .errors import ModelError, ModelOutputError, ReplyCutError, ReplyTooLongError, describe_error
from .llm.base import MAX_REPLY_CHARS, ChatModel, ChatRequest, ChatResponse, TokenUsage
from .parsing import quote_reply
from .prompts import render_cut_retry_request, render_retry_request
from .spending import SpendingLimit, spent_tokens, worst_case_tokens
from .tokens import HeuristicTokenizer, Tokenizer, estimate_tokens

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

T = TypeVar("T")
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
    error_type: str | None = None
    """The failed attempt's error class (``ReplyCutError``, ``CallTimedOut``, ...)."""


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


@dataclass(frozen=True)
class CallHooks:
    """What the caller hears of one call's attempts, and the clock that times them. Each
    callback's own error propagates unchanged (it is never a failed attempt)."""

    clock: Clock = time.monotonic
    on_start: Callable[[int], None] | None = None
    """Attempt ``n`` is about to be sent (inside the call's slot)."""
    on_retry: Callable[[RetryNotice], None] | None = None
    """An attempt failed and another follows."""
    on_notice: Callable[[str], None] | None = None
    """What the adapter says about its endpoint (``ChatResponse.notices``)."""


@dataclass(frozen=True)
class CallBudget:
    """How one call's tokens are counted and bounded.

    ``tokenizer`` counts a reply whose endpoint reported no usage (the spec's estimate when
    none is given) and each attempt's worst case; ``token_budget`` (prompt and reply of the
    call together) bounds the larger reserve of a retry after a cut reply. With ``spending``,
    each attempt first holds its worst case on the limit, keeping ``keep`` tokens free for what
    must follow (``final``: the run's last call, see :meth:`SpendingLimit.reserve`).
    """

    tokenizer: Tokenizer | None = None
    token_budget: int | None = None
    spending: SpendingLimit | None = None
    keep: int = 0
    final: bool = False


NO_HOOKS = CallHooks()
NO_BUDGET = CallBudget()


@dataclass(frozen=True)
class _Sent:
    """One attempt as it came back: the reply (or the model's error) and when the call ran."""

    response: ChatResponse | None
    error: Exception | None
    began: float
    ended: float


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
    hooks: CallHooks = NO_HOOKS,
    budget: CallBudget = NO_BUDGET,
) -> Reply[T]:
    """Call the model and parse its reply, trying again as ``policy`` says.

    Only ``model.complete`` and ``parse`` are inside the retry: any exception from the model
    (outside code) or a :class:`ModelOutputError` from ``parse`` fails the attempt; the
    ``hooks``' own errors propagate. ``slot`` is held only around ``model.complete`` (and the
    ``on_start`` it announces). A retry after an unusable reply sends the request again with
    that reply and what was wrong with it; after a reply cut at ``max_tokens`` that did not
    parse (:class:`ReplyCutError`), it asks for a shorter answer instead, with up to
    :data:`CUT_RESERVE_GROWTH` times the reserve where ``budget.token_budget`` leaves room.
    Raises :class:`CallFailed` when the tries run out. A reply whose endpoint reported no usage
    is counted with ``budget.tokenizer`` and marked estimated.

    With ``budget.spending``, each attempt first holds its worst case on the limit, inside
    ``slot`` and before ``on_start``: an attempt that could take the total past the limit is
    never sent, and :class:`~graphrag_core.errors.SpendLimitReached` propagates (it is no
    failed attempt).
    """
    attempts = attempts if attempts is not None else Attempts()
    counter = budget.tokenizer or HeuristicTokenizer()
    sent = request
    while True:
        attempts.count += 1
        number = attempts.count
        call = await _send(model, sent, number, attempts, slot=slot, hooks=hooks, budget=budget, counter=counter)
        response, error = call.response, call.error
        usage = await _reply_usage(sent, response, counter, hooks)
        if usage is not None:
            attempts.usage = attempts.usage + usage
        if response is not None:
            try:
                check_reply_size(sent, response.text)
                value = parse(response.text)
            except ModelOutputError as exc:
                error = _cut_error(sent, response, exc) if response.cut and not isinstance(exc, ReplyTooLongError) else exc
            else:
                return Reply(value=value, text=response.text, attempt=number, usage=usage, duration_s=hooks.clock() - call.began, ended_at=call.ended)
        assert error is not None
        fatal = isinstance(error, ModelError) and not error.retryable
        if number >= policy.max_attempts or fatal:
            raise CallFailed(error, attempts=number, usage=usage, raw_reply=_kept_reply(response, error), ended_at=call.ended)
        delay = policy.delay_after(number, error)
        if hooks.on_retry is not None:
            raw = _kept_reply(response, error)
            hooks.on_retry(
                RetryNotice(
                    attempt=number + 1, error=describe_error(error), delay_s=delay, usage=usage, raw_reply=raw, ended_at=call.ended,
                    error_type=type(error).__name__,
                )
            )
        sent = await _next_request(request, sent, response, error, counter, budget.token_budget)
        if delay:
            await policy.sleep(delay)


async def _send(
    model: ChatModel, sent: ChatRequest, number: int, attempts: Attempts, *,
    slot: asyncio.Semaphore | None, hooks: CallHooks, budget: CallBudget, counter: Tokenizer,
) -> _Sent:
    """One attempt: within ``slot``, hold its worst case on the spending limit, announce it,
    call the model and settle what it spent; then hand the slot on."""
    response: ChatResponse | None = None
    error: Exception | None = None
    spending = budget.spending
    async with slot if slot is not None else contextlib.nullcontext():
        held = None
        if spending is not None:
            held = await spending.reserve(worst_case_tokens(sent, counter, token_budget=budget.token_budget), keep=budget.keep, final=budget.final)
        if hooks.on_start is not None:
            hooks.on_start(number)
        began = hooks.clock()
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
        ended = hooks.clock()  # the call's own end: an event emitted after the hand-off must not overlap the next call
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
    return _Sent(response, error, began, ended)


async def _reply_usage(sent: ChatRequest, response: ChatResponse | None, counter: Tokenizer, hooks: CallHooks) -> TokenUsage | None:
    """Pass the reply's notices on; its usage as reported, or counted (and marked estimated)
    when the endpoint reported none."""
    if response is not None and response.notices and hooks.on_notice is not None:
        for notice in response.notices:
            hooks.on_notice(notice)
    usage = response.usage if response is not None else None
    if response is not None and usage is None and response.usage_unreported:
        usage = await asyncio.to_thread(estimated_usage, sent, response.text, counter)
    return usage


async def _next_request(
    request: ChatRequest, sent: ChatRequest, response: ChatResponse | None, error: Exception, counter: Tokenizer, token_budget: int | None
) -> ChatRequest:
    """What the next attempt sends: a shorter ask after a cut reply, the unusable reply with
    what was wrong with it, else the request again."""
    if isinstance(error, ReplyCutError):
        return await asyncio.to_thread(_shorter_request, request, sent, counter, token_budget)
    if isinstance(error, ModelOutputError) and response is not None:
        return render_retry_request(request, response.text, describe_error(error))
    return request



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



__all__ = [
    "CUT_RESERVE_GROWTH",
    "DEFAULT_BACKOFF_BASE_S",
    "DEFAULT_BACKOFF_CAP_S",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_RETRY_POLICY",
    "MAX_RETRY_AFTER_S",
    "NO_BUDGET",
    "NO_HOOKS",
    "REFUSED_REPLY_KEPT_CHARS",
    "REPLY_TOKEN_FACTOR",
    "Attempts",
    "CallBudget",
    "CallFailed",
    "CallHooks",
    "CallerFailed",
    "Reply",
    "RetryNotice",
    "RetryPolicy",
    "check_reply_size",
    "complete_with_retry",
    "estimated_usage",
]
