"""A hard spending limit: no model call is dispatched that could take the total past it.

One :class:`SpendingLimit` holds for a run (``GlobalSearchRequest.spend_limit_tokens``), a sweep
or an experiment (the command line's ``--spend-limit-tokens``); every call of the engine's one
retry loop (:func:`graphrag_core.retry.complete_with_retry`) asks it before dispatching.

Invariants:

- ``spent + reserved <= limit`` at every moment: a call reserves its worst case (its prompt as
  the run counts it, plus its ``max_tokens``) before it is sent, and when it returns its
  reservation becomes what the endpoint reported (or the run's own count of it);
- a call that does not fit waits while other calls are in flight (they may cost less than
  their worst case); when none is, :class:`~graphrag_core.errors.SpendLimitReached` is raised
  and ``reached`` stays true: from then on every call is refused at once, except a ``final``
  one (the reduce that answers from what was read), which is judged by its fit alone;
- ``keep`` holds room back for what must still follow: a map or rating call keeps the reduce's
  worst case free, so a run stopped at the limit can still answer from what it read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .errors import SpendLimitReached
from .llm.base import ChatRequest, ChatResponse
from .request import check_spend_limit
from .tokens import Tokenizer, prompt_overhead

UNBOUNDED_REPLY_TOKENS = 4096
"""The worst case assumed for the reply of a call with no ``max_tokens`` and no budget to bound it."""


HELD_FOR = "the reduce that answers from what was read"
"""What the room a call keeps free (``keep``) is held back for, in people's words."""


def limit_message(limit: int, spent: int, *, what: str = "run", needed: int | None = None, kept: int = 0) -> str:
    """What people read when a spending limit stopped something: the next call's worst case
    (``needed``) and what was held back beside it (``kept``, for the reduce), when known."""
    head = f"The {what} stopped at its spending limit of {limit:,} tokens ({spent:,} spent): "
    if needed is None:
        return head + "the next model call could have taken the total past it, so it was not sent."
    if not kept:
        return head + f"the next model call could cost up to {needed:,} tokens, which would pass the limit, so it was not sent."
    return head + (
        f"the next model call could cost up to {needed:,} tokens and {kept:,} are held back for {HELD_FOR} (its token budget), "
        "which together would pass the limit, so it was not sent."
    )


def worst_case_tokens(request: ChatRequest, tokenizer: Tokenizer, *, token_budget: int | None = None) -> int:
    """The most one attempt of ``request`` can cost: its prompt (with what the endpoint adds
    around the messages) and its reply's bound (``max_tokens``; else what ``token_budget`` leaves
    beside the prompt; else :data:`UNBOUNDED_REPLY_TOKENS`)."""
    prompt = tokenizer.count(request.prompt_text) + prompt_overhead(tokenizer, len(request.messages))
    if request.max_tokens:
        reply = request.max_tokens
    elif token_budget is not None:
        reply = max(0, token_budget - prompt)
    else:
        reply = UNBOUNDED_REPLY_TOKENS
    return prompt + reply


def spent_tokens(request: ChatRequest, response: ChatResponse | None, tokenizer: Tokenizer) -> int:
    """What one attempt spent: the endpoint's reported tokens; a reply without a report counted by
    the run (prompt and reply); a call that raised before replying, nothing."""
    if response is None:
        return 0
    if response.usage is not None:
        return response.usage.total_tokens
    return tokenizer.count(request.prompt_text) + tokenizer.count(response.text)


Verdict = Literal["within", "may_reach", "will_reach"]


@dataclass(frozen=True)
class LimitForecast:
    """Whether a run will reach its spending limit, before any call (the cost preview's line).

    ``worst_case`` is every call at its bound (each map batch's prompt and output reserve,
    ratings at their most, the reduce at its token budget); ``planned`` the prompts as planned
    (the fewest ratings); ``batches_sent`` how many map batches the limit lets through, as a
    range: with every reply as long as its reserve, and with replies of no length."""

    limit: int
    planned: int
    worst_case: int
    batches: int
    batches_sent: tuple[int, int]
    held_back: int = 0
    """What every map or rating call keeps free for the reduce (its token budget)."""
    first_batch: int = 0
    """The most the first map batch can cost (its prompt, what the endpoint adds, its reserve),
    with the fewest ratings before it."""

    @property
    def verdict(self) -> Verdict:
        if self.worst_case <= self.limit:
            return "within"
        return "will_reach" if self.batches_sent[1] < self.batches or self.planned > self.limit else "may_reach"

    @property
    def reads_nothing(self) -> bool:
        """Whether the limit lets no map batch through beside what is held back: no answer."""
        return self.batches > 0 and self.batches_sent[1] == 0

    def text(self) -> str:
        """What people read before the run (one or two sentences)."""
        limit = f"{self.limit:,} tokens"
        held = f"{self.held_back:,} tokens are held back for {HELD_FOR} (the reduce token budget)"
        if self.verdict == "within":
            return f"Within the spending limit of {limit}: the run takes at most {self.worst_case:,}."
        if self.reads_nothing:
            return (
                f"The spending limit of {limit} will stop the run before it reads anything: the first batch needs up to "
                f"{self.first_batch:,} tokens and {self.held_back:,} are held back for the reduce (the reduce token budget), "
                f"so there will be no answer. Raise the limit to at least {self.first_batch + self.held_back:,} tokens, "
                "or lower the reduce token budget."
            )
        if self.verdict == "will_reach":
            low, high = self.batches_sent
            sent = f"{low:,}" if low == high else f"{low:,}–{high:,}"
            return (
                f"The spending limit of {limit} will be reached: the map stops after about {sent} of {self.batches:,} "
                f"batches (the planned prompts take {self.planned:,} tokens, and {held}); the run stops there, as Stop "
                "stops it, and answers from what it read."
            )
        return (
            f"The spending limit of {limit} may be reached: the planned prompts take {self.planned:,} tokens, "
            f"the replies and the reduce up to {self.worst_case - self.planned:,} more ({held})."
        )


def forecast_limit(
    limit: int,
    batch_tokens: Sequence[int],
    *,
    map_output_reserve: int,
    reduce_token_budget: int,
    rating: tuple[int, int, int, int] | None = None,
    rating_output_reserve: int = 0,
    overhead: int = 0,
) -> LimitForecast:
    """The :class:`LimitForecast` of a run whose map batches' prompts plan ``batch_tokens``
    (``overhead``: what the endpoint adds around each call's messages); ``rating`` is dynamic
    selection's ``(min calls, max calls, min prompt tokens, max prompt tokens)``. The map is
    let through as a run's :class:`SpendingLimit` would: a batch is sent while the tokens spent,
    its worst case and the reduce's kept free fit the limit."""
    ratings_low = ratings_high = 0
    if rating is not None:
        min_calls, max_calls, min_prompt, max_prompt = rating
        ratings_low = min_prompt + min_calls * overhead
        ratings_high = max_prompt + max_calls * (overhead + rating_output_reserve)

    def sent(reply: int) -> int:
        spent = ratings_low
        for count, tokens in enumerate(batch_tokens):
            if spent + tokens + overhead + map_output_reserve + reduce_token_budget > limit:
                return count
            spent += tokens + overhead + reply
        return len(batch_tokens)

    planned = ratings_low + sum(batch_tokens) + overhead * len(batch_tokens)
    worst = ratings_high + sum(batch_tokens) + (overhead + map_output_reserve) * len(batch_tokens) + reduce_token_budget
    first = ratings_low + batch_tokens[0] + overhead + map_output_reserve if batch_tokens else 0
    return LimitForecast(
        limit=limit, planned=planned, worst_case=worst, batches=len(batch_tokens), batches_sent=(sent(map_output_reserve), sent(0)),
        held_back=reduce_token_budget, first_batch=first,
    )


@dataclass
class Reservation:
    """One dispatched call's hold on the limit: its worst case until it is settled."""

    tokens: int
    settled: bool = False


class SpendingLimit:
    """The tokens a run, a sweep or an experiment may spend, and what it has spent and holds
    (see the module docstring). ``spent`` may start above 0 (what came before, counted in)."""

    def __init__(self, limit_tokens: int, *, spent: int = 0, what: str = "run") -> None:
        self.limit = check_spend_limit(limit_tokens) or 0
        self.spent = spent
        self.reserved = 0
        self.in_flight = 0
        self.reached = False
        self.what = what
        self._waiters: list[asyncio.Future[None]] = []

    def __repr__(self) -> str:
        return f"SpendingLimit(limit={self.limit}, spent={self.spent}, reserved={self.reserved}, reached={self.reached})"

    @property
    def remaining(self) -> int:
        """Tokens not yet spent or held by a call in flight."""
        return max(0, self.limit - self.spent - self.reserved)

    def fits(self, tokens: int, *, keep: int = 0) -> bool:
        """Whether a call costing at most ``tokens`` could be sent now, keeping ``keep`` free."""
        return self.spent + self.reserved + tokens + keep <= self.limit

    def stop(self, *, needed: int | None = None, kept: int = 0) -> SpendLimitReached:
        """Mark the limit reached; the error that says so (with the call that did not fit, when
        known: its worst case ``needed`` and the room ``kept`` beside it)."""
        self.reached = True
        message = limit_message(self.limit, self.spent, what=self.what, needed=needed, kept=kept)
        return SpendLimitReached(message, limit=self.limit, spent=self.spent)

    async def reserve(self, tokens: int, *, keep: int = 0, final: bool = False) -> Reservation:
        """Hold ``tokens`` for a call about to be sent, waiting for calls in flight to settle while
        it does not fit; raises :class:`SpendLimitReached` when it cannot fit with none in flight,
        or at once when the limit was reached before (unless the call is ``final``)."""
        if self.reached and not final:
            raise self.stop(needed=tokens, kept=keep)
        while not self.fits(tokens, keep=keep):
            if self.in_flight == 0 or (self.reached and not final):
                raise self.stop(needed=tokens, kept=keep)
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                self._waiters.remove(waiter)
        self.reserved += tokens
        self.in_flight += 1
        return Reservation(tokens)

    def settle(self, reservation: Reservation, spent: int) -> None:
        """A call returned (or failed, or was cancelled) having cost ``spent``: its hold becomes
        that, and the calls waiting for room look again."""
        if reservation.settled:
            return
        reservation.settled = True
        self.reserved -= reservation.tokens
        self.in_flight -= 1
        self.spent += spent
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)


__all__ = [
    "UNBOUNDED_REPLY_TOKENS",
    "LimitForecast",
    "forecast_limit",
    "Reservation",
    "SpendingLimit",
    "limit_message",
    "spent_tokens",
    "worst_case_tokens",
]
