"""The lazy method's query expansion (docs/lazy-search.md, step 1): one call turns the question
into a few subqueries, each of which the relevance tests ask of the source text.

Invariants: one expansion is at most ``policy.max_attempts`` attempts through the engine's one
retry loop (:func:`~graphrag_core.map.complete_with_retry`, with the run's spending limit), or
one answer from the map cache; its reply gives 1 to :data:`MAX_SUBQUERIES` distinct non-blank
subqueries, or it fails. A failed expansion is recorded (``QueryExpanded.error``) and the
question itself is the one subquery: nothing is made up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import ExpansionOutputError, ModelOutputError, describe_error
from ..events import Event, QueryExpanded
from ..llm.base import ChatModel, ChatRequest, TokenUsage
from ..retry import Attempts, CallBudget, CallFailed, CallHooks, RetryPolicy, complete_with_retry
from ..parsing import invalid_output, parse_json_output
from ..prompts import EXPANSION_OUTPUT_SCHEMA, render_expansion_messages
from ..spending import SpendingLimit
from ..tokens import Tokenizer

if TYPE_CHECKING:
    from ..cache import MapCache

MAX_SUBQUERIES = 4
"""Subqueries one expansion gives at most (Microsoft's description speaks of a few)."""
EXPANSION_SHAPE_ERROR = "Query expansion output must contain a non-empty list of strings subqueries."


def expansion_request(query: str, *, output_reserve: int) -> ChatRequest:
    """The expansion call of ``query``."""
    return ChatRequest(
        purpose="expand", messages=render_expansion_messages(query, most=MAX_SUBQUERIES), max_tokens=output_reserve or None,
        output_schema=EXPANSION_OUTPUT_SCHEMA,
    )


def parse_expansion_output(raw: str) -> tuple[str, ...]:
    """The subqueries of a reply ``{"subqueries": [...]}``: stripped, blank and repeated ones
    (case aside) dropped, the first :data:`MAX_SUBQUERIES` kept; none left is an error."""
    value = parse_json_output(raw, error=ExpansionOutputError)
    items = value.get("subqueries") if isinstance(value, dict) else None
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise invalid_output(ExpansionOutputError, EXPANSION_SHAPE_ERROR, raw)
    kept: dict[str, str] = {}
    for item in items:
        text = " ".join(item.split())
        if text:
            kept.setdefault(text.casefold(), text)
    if not kept:
        raise invalid_output(ExpansionOutputError, EXPANSION_SHAPE_ERROR, raw)
    return tuple(kept.values())[:MAX_SUBQUERIES]


@dataclass
class Expansion:
    """The subqueries and what asking for them cost."""

    subqueries: tuple[str, ...]
    calls: int = 0
    cache_hits: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    error: str | None = None


async def expand_query(
    query: str,
    model: ChatModel,
    *,
    output_reserve: int,
    token_budget: int,
    tokenizer: Tokenizer,
    policy: RetryPolicy,
    emit: Callable[[Event], None],
    clock: Callable[[], float],
    cache: MapCache | None = None,
    spending: SpendingLimit | None = None,
    keep: int = 0,
) -> Expansion:
    """Expand ``query`` (see the module docstring); emits one ``QueryExpanded``."""
    from ..cache import cache_key

    request = expansion_request(query, output_reserve=output_reserve)
    planned = tokenizer.count(request.prompt_text)
    key = cache_key(model, request) if cache is not None else None
    if key is not None:
        kept = await asyncio.to_thread(cache.get, key)  # type: ignore[union-attr]
        if kept is not None:
            try:
                subqueries = parse_expansion_output(kept)
            except ModelOutputError:
                pass  # an entry that is no expansion: ask the model again
            else:
                emit(QueryExpanded(at=clock(), subqueries=subqueries, cache_hits=1, messages=request.messages, raw_reply=kept, prompt_tokens=planned))
                return Expansion(subqueries, cache_hits=1)
    tally, started = Attempts(), clock()
    try:
        reply = await complete_with_retry(
            model, request, parse_expansion_output, policy=policy, attempts=tally, hooks=CallHooks(clock=clock),
            budget=CallBudget(tokenizer=tokenizer, token_budget=token_budget, spending=spending, keep=keep),
        )
    except CallFailed as failed:
        error = describe_error(failed.error)
        emit(
            QueryExpanded(
                at=clock(), subqueries=(query,), calls=tally.calls, usage=tally.usage, error=error, messages=request.messages,
                raw_reply=failed.raw_reply, started_at=started, prompt_tokens=planned,
            )
        )
        return Expansion((query,), calls=tally.calls, usage=tally.usage, error=error)
    if key is not None:
        await asyncio.to_thread(cache.put, key, reply.text)  # type: ignore[union-attr]
    emit(
        QueryExpanded(
            at=clock(), subqueries=reply.value, calls=tally.calls, usage=tally.usage, messages=request.messages, raw_reply=reply.text,
            started_at=started, prompt_tokens=planned,
        )
    )
    return Expansion(reply.value, calls=tally.calls, usage=tally.usage)


__all__ = ["EXPANSION_SHAPE_ERROR", "MAX_SUBQUERIES", "Expansion", "expand_query", "expansion_request", "parse_expansion_output"]
