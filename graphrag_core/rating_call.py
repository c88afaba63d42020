"""One rating call of dynamic selection (``docs/dynamic-selection.md``): its request (the
community's summary cut to fit the rating prompt budget), its cache key per repeat, and the
majority of its repeats.

Invariants: a rating request's whole prompt fits its budget, or :class:`BudgetError` says the
budget cannot hold even an empty summary; with a ``question_reserve`` the prompt up to the
question is the same for every question within the reserve; repeats of one request are cached
apart.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

from .errors import BudgetError
from .llm.base import ChatRequest
from .models import Community
from .prompts import RATING_OUTPUT_SCHEMA, render_rating_messages
from .tokens import Tokenizer, prompt_overhead

RATING_PROMPT_TOO_SMALL = "Map token budget cannot fit the rating prompt."



def rating_request(
    query: str, community: Community, *, budget: int, output_reserve: int, tokenizer: Tokenizer, question_reserve: int = 0
) -> ChatRequest:
    """The rating call for one community, its summary cut to the longest code-point prefix whose
    whole prompt fits ``budget`` (raises :class:`BudgetError` when even an empty one does not).
    With a ``question_reserve`` the summary comes before the question and is cut as if the
    question took exactly that many tokens: the same prompt up to any question within it."""
    summary, data_first = community.summary, question_reserve > 0

    def request_for(text: str, question: str = query) -> ChatRequest:
        return ChatRequest(
            purpose="rate",
            messages=render_rating_messages(question, community.id, text, data_first=data_first),
            max_tokens=output_reserve or None,
            json_mode=True,
            output_schema=RATING_OUTPUT_SCHEMA,
        )

    budget -= prompt_overhead(tokenizer, len(request_for("").messages)) + question_reserve  # the endpoint's share, the question's
    sized = "" if data_first else query  # the cut does not depend on a question within the reserve

    def fits(length: int) -> bool:
        return tokenizer.count(request_for(summary[:length], sized).prompt_text) <= budget

    if fits(len(summary)):
        return request_for(summary)
    if not fits(0):
        raise BudgetError(RATING_PROMPT_TOO_SMALL)
    low, high = 0, len(summary)  # fits(low) and not fits(high)
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            low = middle
        else:
            high = middle
    return request_for(summary[:low])


def rating_cache_key(model: object, request: ChatRequest, repeat: int) -> str:
    """The map cache's key for one repeat of a rating call: the map's key of the exact request
    (its output schema left out), with the repeat number, so repeats are cached apart and a
    rerun reuses every one."""
    from .cache import cache_key

    keyed = request.model_copy(update={"output_schema": None})  # the same shape the prompt asks for: stored ratings stay valid
    return hashlib.sha256(f"{cache_key(model, keyed)}\x00rate-repeat:{repeat}".encode()).hexdigest()


def majority_rating(ratings: Sequence[int]) -> int:
    """The most frequent rating; a tie goes to the lowest value (as Microsoft GraphRAG's)."""
    counts = Counter(ratings)
    best = max(counts.values())
    return min(value for value, count in counts.items() if count == best)


__all__ = ["RATING_PROMPT_TOO_SMALL", "majority_rating", "rating_cache_key", "rating_request"]
