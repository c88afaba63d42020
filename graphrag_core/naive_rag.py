"""Naive RAG's context (the ``vector`` method, the paper's SS; evaluation spec section 7): the
ranked source chunks packed in rank order into the reduce token budget. Pure: no model.

Each chunk is written ``[Source ID: {ref}]`` and its text, chunks separated by a blank line. In
rank order a chunk that fits with those before it is selected; one that does not is skipped
(``skip``: later, shorter ones are still tried) or ends the packing (``stop``: the rest are not
tried). The candidates are those fates, each a :class:`~graphrag_core.results.MapAnswer` whose
answer is the chunk's text, whose ids are its reference and whose usefulness is its relevance
as a share of the best chunk's (0-100), so a ``vector`` run draws like any other.

Invariants of :func:`plan_excerpts`: the selected chunks, joined, fit the budget with the
skeleton; they keep rank order; candidates list every selected chunk and at most
:data:`MAX_UNPACKED_LISTED` others (the rest are only counted).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from .context import CANDIDATE_SEPARATOR, format_source_header
from .ranking import RankedChunk
from .reduce import ReducePlan, trial_counter
from .results import MapAnswer, ReduceCandidate
from .tokens import Tokenizer, get_tokenizer

MAX_UNPACKED_LISTED = 25
"""How many chunks that were ranked but not packed a plan lists (the others are counted)."""


def format_excerpt(chunk: RankedChunk) -> str:
    """One chunk as the naive RAG prompt shows it: its source header, then its text."""
    return format_source_header(chunk.reference) + chunk.text.strip()


def _relevance(score: float, top: float) -> float:
    return round(100.0 * score / top, 1) if top > 0 else 0.0


def plan_excerpts(
    ranked: Sequence[RankedChunk],
    prompt_skeleton: str,
    prompt_budget: int,
    *,
    strategy: Literal["skip", "stop"] = "skip",
    tokenizer: Tokenizer | None = None,
) -> ReducePlan:
    """Pack the ranked chunks into the budget (see the module docstring); each chunk is counted
    once, as :func:`~graphrag_core.reduce.plan_reduce` counts its candidates (exact for every
    tokenizer)."""
    tokenizer = tokenizer or get_tokenizer()
    top = ranked[0].score if ranked else 0.0
    trial = trial_counter(tokenizer, prompt_skeleton + "\n")
    selected: list[RankedChunk] = []
    texts: list[str] = []
    fates: list[tuple[RankedChunk, str, int | None]] = []
    tokens_now: int | None = None
    unpacked = 0
    stopped = False
    for chunk in ranked:
        if unpacked >= MAX_UNPACKED_LISTED:
            break
        if stopped:
            fates.append((chunk, "not_tried", None))
            unpacked += 1
            continue
        text = format_excerpt(chunk)
        tokens = trial.tokens(texts, text)
        if tokens <= prompt_budget:
            trial.keep(text, tokens)
            selected.append(chunk)
            texts.append(text)
            tokens_now = tokens
            fates.append((chunk, "selected", tokens))
        else:
            fates.append((chunk, "skipped", tokens))
            unpacked += 1
            stopped = strategy == "stop"
    context = CANDIDATE_SEPARATOR.join(texts)
    candidates: list[ReduceCandidate] = []
    answers: dict[str, MapAnswer] = {}
    for rank, (chunk, fate, tokens) in enumerate(fates, start=1):
        answer = MapAnswer(answer=chunk.text, usefulness=_relevance(chunk.score, top), community_ids=(chunk.reference,))
        answers[chunk.reference] = answer
        candidates.append(ReduceCandidate(rank=rank, answer=answer, fate=fate, tokens=tokens))  # type: ignore[arg-type]
    return ReducePlan(
        candidates=candidates,
        selected=[answers[chunk.reference] for chunk in selected],
        context=context,
        prompt_tokens=tokens_now,
    )


__all__ = ["MAX_UNPACKED_LISTED", "format_excerpt", "plan_excerpts"]
