"""What a request's map would send, with no model call: the communities (or source chunks) it
selects, their map texts and the token-budgeted batches they pack into (:func:`plan_batches`),
and what of a prompt budget a prompt's text may take (:func:`sent_prompt_budget`). A run, the
cost preview and an experiment's estimate plan the same batches here.
"""

from __future__ import annotations

import random

from .batching import MapText, SummaryBatch, plan_summary_batches
from .context import COMMUNITY, SOURCE, question_tail
from .language import corpus_language
from .llm.base import ChatModel
from .methods import LAZY, TEXT, VECTOR
from .sources import source_units
from .models import Community, Index
from .prompts import map_prompt_head, map_prompt_skeleton
from .request import GlobalSearchRequest, check_question_reserve
from .tokens import Tokenizer, prompt_overhead, tokenizer_for


def plan_batches(
    index: Index,
    request: GlobalSearchRequest,
    *,
    seed: int,
    tokenizer: Tokenizer | None = None,
    communities: list[Community] | None = None,
    model: ChatModel | None = None,
) -> tuple[list[Community], list[SummaryBatch], list[int]]:
    """The communities a request selects and the batches it would send, with no model call.

    ``communities`` overrides the level's selection (dynamic selection passes what it kept).
    Returns ``(communities, batches, token_estimates)``; raises ``BudgetError`` like a run would,
    and ``RequestValidationError`` for a question longer than the request's ``question_reserve``.
    ``model`` is needed only for the ``"endpoint"`` tokenizer (the server's own count). The
    ``text`` method's batches hold source chunks (no communities); ``vector`` sends no batch.

    With a ``question_reserve``, the batches are packed before the question (the data-first
    layout) in the map prompt budget less the reserve and the question's marker, so they are
    the same for every question up to the reserve; each estimate is the packed prompt's count
    plus the question's part. The spec's estimate never counts a whole above its parts, so each
    prompt is within the budget; an exact encoding's count of the join after the data may
    differ from its parts' by the newlines that meet there.
    """
    tokenizer = tokenizer or tokenizer_for(request.tokenizer, model)
    if request.method in (VECTOR, LAZY):  # vector sends no batch; lazy's are known after its relevance tests
        source_units(index, method=request.method)  # an index without chunks is refused as a run would
        return [], [], []
    reserve = request.question_reserve
    if reserve:
        check_question_reserve(request.query, reserve, tokenizer)
    unit = SOURCE if request.method == TEXT else COMMUNITY
    if request.method == TEXT:
        communities = []
        texts = [MapText(community_id=ref, text=chunk.text) for ref, chunk in source_units(index, method=TEXT)]
    else:
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
    budget = sent_prompt_budget(request.map_prompt_budget, tokenizer)
    rng = random.Random(seed)
    language = corpus_language(index.communities)
    if not reserve:
        skeleton = map_prompt_skeleton(request.query, unit=unit, language=language)
        batches, estimates = plan_summary_batches(texts, skeleton, budget, rng=rng, tokenizer=tokenizer, unit=unit)
        return communities, batches, estimates
    # Packed as if the question took exactly `reserve` tokens: the head and the content of every
    # prompt are the same for any question up to that length, the question comes after them.
    budget -= reserve + tokenizer.count(question_tail(""))
    batches, packed = plan_summary_batches(texts, map_prompt_head(unit=unit, language=language), budget, rng=rng, tokenizer=tokenizer, unit=unit)
    tail = tokenizer.count(question_tail(request.query))
    return communities, batches, [tokens + tail for tokens in packed]


PROMPT_MESSAGES = 2
"""Messages in a map or reduce call (system and user)."""


def sent_prompt_budget(budget: int, tokenizer: Tokenizer) -> int:
    """What of a prompt budget the prompt's text may take: the rest is what the endpoint adds
    around the messages, as the tokenizer knows it (nothing for the spec's estimate), so a sent
    prompt is within the budget in the endpoint's own count."""
    return budget - prompt_overhead(tokenizer, PROMPT_MESSAGES)


__all__ = ["PROMPT_MESSAGES", "plan_batches", "sent_prompt_budget"]
