"""What a local model server's own facts mean for a run, before it starts: the concurrency its
slots allow, and the budgets its context can hold (:func:`advise`). Pure: the facts
(:class:`~graphrag_core.llm.server_facts.ServerFacts`) and the request in, the settings to change
and the sentences that say so out; a front end applies the settings and shows the sentences
before the run (the command line before its first call, the app in its cost preview).

Invariants: a setting the user gave explicitly (``given``) is never changed, only advised; every
change is said; a budget is lowered to the server's context only where the budget then still
exceeds its output reserve (else it is advised, not changed); a call of a token budget ``B``
fits a context of ``n`` tokens when ``B <= n`` as the server counts (the budgets hold the
prompt, what the chat template adds, and the reply), so with a count that is not the server's
own (``exact`` false) a budget within :data:`CONTEXT_MARGIN` of the context is warned about.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .llm.server_facts import ServerFacts
from .request import GlobalSearchRequest

CONTEXT_MARGIN = 0.9
"""A budget above this share of the server's context is near it: an estimated count (not the
server's own) may put a full call past it (small models' tokenizers count several times more
tokens for Chinese than the estimate)."""

_BUDGETS: tuple[tuple[str, str, str, str], ...] = (
    ("map_token_budget", "map_output_reserve", "map token budget", "--map-budget"),
    ("reduce_token_budget", "reduce_output_reserve", "reduce token budget", "--reduce-budget"),
)


@dataclass(frozen=True)
class ServerAdvice:
    """The settings to change (``changes``, setting name -> value) and every sentence people
    should read before the run (``notes``); ``single_slot``: the server serves one request at a time."""

    changes: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    single_slot: bool = False

    def apply(self, request: GlobalSearchRequest) -> GlobalSearchRequest:
        """``request`` with the changes made (validated again)."""
        if not self.changes:
            return request
        return GlobalSearchRequest.model_validate({**request.model_dump(), **self.changes})


def advise(
    facts: ServerFacts, request: GlobalSearchRequest, *, exact: bool, timeout_s: float | None = None, given: Collection[str] = ()
) -> ServerAdvice:
    """What ``facts`` mean for ``request`` (module docstring). ``exact``: the run counts tokens
    with the server's own tokenizer; ``timeout_s``: the model's call timeout (named in the
    single-slot advice); ``given``: the settings the user set explicitly."""
    changes: dict[str, Any] = {}
    notes: list[str] = []
    where = f" ({facts.source})" if facts.source else ""
    slots = facts.slots
    if slots is not None and request.map_concurrency > slots:
        served = "one request at a time" if slots == 1 else f"{slots:,} requests at a time"
        wait = (
            "each call waits for the one before it, so give calls a timeout that holds one whole reply"
            + (f" (GRAPHRAG_LLM_TIMEOUT, now {timeout_s:g}s)" if timeout_s is not None else " (GRAPHRAG_LLM_TIMEOUT)")
        )
        if "map_concurrency" in given:
            notes.append(
                f"The model server answers {served}{where}: set the concurrency to {slots:,} (--concurrency {slots}, or the "
                f"concurrency slider); the other calls wait in its queue. With {slots:,} at a time, {wait}."
            )
        else:
            changes["map_concurrency"] = slots
            notes.append(f"The model server answers {served}{where}: the concurrency is set to {slots:,} (it was {request.map_concurrency:,}); {wait}.")
    context = facts.context_tokens
    if context is not None:
        for budget_name, reserve_name, words, option in _BUDGETS:
            budget, reserve = getattr(request, budget_name), getattr(request, reserve_name)
            notes.extend(_fit(context, budget, reserve, words=words, option=option, where=where, exact=exact, fixed=budget_name in given, name=budget_name, changes=changes))
    return ServerAdvice(changes=changes, notes=tuple(notes), single_slot=slots == 1)


def _fit(
    context: int, budget: int, reserve: int, *, words: str, option: str, where: str, exact: bool, fixed: bool, name: str, changes: dict[str, Any]
) -> list[str]:
    """The sentence (and the change) for one budget against the server's context."""
    per_request = f"the server's context of {context:,} tokens per request{where}"
    if budget > context:
        if fixed or context <= reserve:
            return [
                f"The {words} ({budget:,} tokens) does not fit {per_request}: a full call would be refused. Lower it to at most "
                f"{context:,} ({option} {context}), or start the server with a larger context."
            ]
        changes[name] = context
        return [f"The {words} ({budget:,} tokens) does not fit {per_request}: it is lowered to {context:,}."]
    if not exact and budget > CONTEXT_MARGIN * context:
        return [
            f"The {words} ({budget:,} tokens) leaves {context - budget:,} of {per_request}, counted with an estimate, not the "
            "server's own tokenizer: a full call may not fit (small models' tokenizers count Chinese several times higher). "
            "Count with the server's tokenizer (tokenizer \"endpoint\"), or lower the budget."
        ]
    return []


__all__ = ["CONTEXT_MARGIN", "ServerAdvice", "advise"]
