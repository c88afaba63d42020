"""The reduce selection (spec section 7): rank map answers and pack them into the reduce budget.

Invariants of :func:`plan_reduce`: every map answer gets exactly one fate; the selected ones,
joined, fit the reduce prompt budget with the skeleton; ``skip`` keeps trying shorter answers
after one that does not fit, ``stop`` ends at the first that does not fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .context import CANDIDATE_SEPARATOR, COMMUNITY, Unit, format_reduce_candidate, format_usefulness  # noqa: F401 - format_* re-exported
from .results import MapAnswer, ReduceCandidate
from .tokens import HeuristicTokenizer, Tokenizer, get_tokenizer



class ReducePlan(BaseModel):
    """The fates of every map answer, the selected ones, and the reduce context they make."""

    model_config = ConfigDict(frozen=True)

    candidates: list[ReduceCandidate]
    selected: list[MapAnswer]
    context: str
    prompt_tokens: int | None
    """The estimate of ``skeleton + "\\n" + context``; None when nothing was selected."""


def plan_reduce(
    answers: Sequence[MapAnswer],
    prompt_skeleton: str,
    prompt_budget: int,
    *,
    strategy: Literal["skip", "stop"] = "skip",
    tokenizer: Tokenizer | None = None,
    unit: Unit = COMMUNITY,
) -> ReducePlan:
    """Drop zero scores, rank by usefulness (ties keep map order), pack into the budget
    (each candidate headed by the ids of its ``unit`` kind)."""
    tokenizer = tokenizer or get_tokenizer()
    dropped = [a for a in answers if a.usefulness <= 0]
    ranked = sorted((a for a in answers if a.usefulness > 0), key=lambda a: -a.usefulness)  # sorted() is stable

    heuristic = tokenizer if isinstance(tokenizer, HeuristicTokenizer) else None
    prefix = prompt_skeleton + "\n"
    if heuristic is not None:
        prefix_a, prefix_c = heuristic.measure(prefix)
        sep_a = len(CANDIDATE_SEPARATOR)
        used_a, used_c = prefix_a, prefix_c

    candidates: list[ReduceCandidate] = []
    selected: list[MapAnswer] = []
    texts: list[str] = []
    stopped = False
    tokens_now: int | None = None
    for rank, answer in enumerate(ranked, start=1):
        if stopped:
            candidates.append(ReduceCandidate(rank=rank, answer=answer, fate="not_tried"))
            continue
        text = format_reduce_candidate(answer, unit=unit)
        if heuristic is not None:
            a, c = heuristic.measure(text)
            trial_a, trial_c = used_a + a + (sep_a if texts else 0), used_c + c
            tokens = HeuristicTokenizer.total(trial_a, trial_c)
        else:
            tokens = tokenizer.count(prefix + CANDIDATE_SEPARATOR.join([*texts, text]))
        if tokens <= prompt_budget:
            texts.append(text)
            selected.append(answer)
            tokens_now = tokens
            if heuristic is not None:
                used_a, used_c = trial_a, trial_c
            candidates.append(ReduceCandidate(rank=rank, answer=answer, fate="selected", tokens=tokens))
        else:
            candidates.append(ReduceCandidate(rank=rank, answer=answer, fate="skipped", tokens=tokens))
            if strategy == "stop":
                stopped = True
    candidates.extend(ReduceCandidate(rank=None, answer=a, fate="dropped") for a in dropped)
    return ReducePlan(
        candidates=candidates, selected=selected, context=CANDIDATE_SEPARATOR.join(texts), prompt_tokens=tokens_now
    )


def select_reduce_answers(
    answers: Sequence[MapAnswer],
    prompt_skeleton: str,
    prompt_budget: int,
    *,
    strategy: Literal["skip", "stop"] = "skip",
    tokenizer: Tokenizer | None = None,
) -> list[MapAnswer]:
    """The map answers the reduce will read, in rank order (see :func:`plan_reduce`)."""
    return plan_reduce(answers, prompt_skeleton, prompt_budget, strategy=strategy, tokenizer=tokenizer).selected
