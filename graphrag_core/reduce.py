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
from .tokens import HeuristicTokenizer, Tokenizer, get_tokenizer, is_cut_additive, join_tokens


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
    (each candidate headed by the ids of its ``unit`` kind).

    Linear in the candidates with the heuristic and with the exact encodings: each candidate
    is read once and a trial's count is the selection's count plus the separator and the
    candidate's own (cut-additive counts, see :mod:`graphrag_core.tokens`); any other tokenizer
    counts the whole trial context, as the spec writes it."""
    tokenizer = tokenizer or get_tokenizer()
    dropped = [a for a in answers if a.usefulness <= 0]
    ranked = sorted((a for a in answers if a.usefulness > 0), key=lambda a: -a.usefulness)  # sorted() is stable
    trial = trial_counter(tokenizer, prompt_skeleton + "\n")

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
        tokens = trial.tokens(texts, text)
        if tokens <= prompt_budget:
            trial.keep(text, tokens)
            texts.append(text)
            selected.append(answer)
            tokens_now = tokens
            candidates.append(ReduceCandidate(rank=rank, answer=answer, fate="selected", tokens=tokens))
        else:
            candidates.append(ReduceCandidate(rank=rank, answer=answer, fate="skipped", tokens=tokens))
            if strategy == "stop":
                stopped = True
    candidates.extend(ReduceCandidate(rank=None, answer=a, fate="dropped") for a in dropped)
    return ReducePlan(
        candidates=candidates, selected=selected, context=CANDIDATE_SEPARATOR.join(texts), prompt_tokens=tokens_now
    )


class _WholeTrials:
    """Any tokenizer: a trial is ``count(prefix + separator.join(selected + [candidate]))``."""

    def __init__(self, tokenizer: Tokenizer, prefix: str) -> None:
        self.tokenizer, self.prefix = tokenizer, prefix

    def tokens(self, selected: list[str], text: str) -> int:
        return self.tokenizer.count(self.prefix + CANDIDATE_SEPARATOR.join([*selected, text]))

    def keep(self, text: str, tokens: int) -> None:
        pass


class _MeasuredTrials:
    """The heuristic: code point measures add up, separators included."""

    def __init__(self, tokenizer: HeuristicTokenizer, prefix: str) -> None:
        self.tokenizer = tokenizer
        self.used = tokenizer.measure(prefix)
        self.trial = self.used

    def tokens(self, selected: list[str], text: str) -> int:
        a, c = self.tokenizer.measure(text)
        self.trial = (self.used[0] + a + (len(CANDIDATE_SEPARATOR) if selected else 0), self.used[1] + c)
        return HeuristicTokenizer.total(*self.trial)

    def keep(self, text: str, tokens: int) -> None:
        self.used = self.trial


class _CountedTrials:
    """A cut-additive tokenizer: every candidate starts with ``[`` after a newline, a safe cut,
    so a trial is the selection's count, the separator's share and the candidate's count."""

    def __init__(self, tokenizer: Tokenizer, prefix: str) -> None:
        self.tokenizer = tokenizer
        self.used = tokenizer.count(prefix)
        self.join = 0

    def tokens(self, selected: list[str], text: str) -> int:
        return self.used + (self.join if selected else 0) + self.tokenizer.count(text)

    def keep(self, text: str, tokens: int) -> None:
        self.used = tokens
        self.join = join_tokens(text, CANDIDATE_SEPARATOR, self.tokenizer)


def trial_counter(tokenizer: Tokenizer, prefix: str) -> _WholeTrials | _MeasuredTrials | _CountedTrials:
    """How the count of ``prefix`` and candidates joined by :data:`CANDIDATE_SEPARATOR` is kept
    while packing (each candidate starting with ``[``): exact for every tokenizer, reading each
    candidate once with the heuristic and with cut-additive ones."""
    if isinstance(tokenizer, HeuristicTokenizer):
        return _MeasuredTrials(tokenizer, prefix)
    if is_cut_additive(tokenizer):
        return _CountedTrials(tokenizer, prefix)
    return _WholeTrials(tokenizer, prefix)


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
