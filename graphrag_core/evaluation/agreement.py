"""People's votes as figures (evaluation spec section 9): their win rates, and how far they agree
with the LLM judge and with each other. Pure functions of an experiment and its votes.

Invariants:

- a vote scores A as a judge call does (100 won, 50 tie, 0 lost); people's win rate of a row
  over a column is the mean over their votes, the reverse 100 minus it, with the per-question
  Wilcoxon p-values Holm-corrected per criterion, exactly as the LLM judge's are;
- choices are compared in A/B terms ({A, B, tie}), whatever order each judge saw; the LLM
  judge's choice on a pair is the side its score favours (a tie at exactly 50);
- people against the LLM judge: one item per vote on a pair the judge scored; people with each
  other: one item per two judges who both voted on the same pair and criterion;
- Cohen's kappa is ``(po - pe) / (1 - pe)`` over {A, B, tie}, ``None`` with no items or when
  chance agreement is certain (``pe = 1``: every choice the same, kappa undefined).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .results import ExperimentResult, WinRate
from .statistics import corrected_both_ways, wilcoxon_p
from .votes import Choice, Vote

ALL_CRITERIA = "all criteria"
"""The agreement rows that pool every criterion are labelled this way."""
Between = Literal["people and the LLM judge", "people with each other"]
PEOPLE_AND_JUDGE: Between = "people and the LLM judge"
PEOPLE_WITH_EACH_OTHER: Between = "people with each other"


class Agreement(BaseModel):
    """How often two sides made the same choice on the same pairs of one criterion (or all)."""

    model_config = ConfigDict(frozen=True)

    criterion: str
    between: Between
    items: int
    identical: float | None
    """The share of identical choices, 0 to 1."""
    kappa: float | None


def share_identical(pairs: Sequence[tuple[int, int]]) -> float | None:
    """The share of pairs whose two choices are the same; ``None`` with no pairs."""
    return sum(1 for a, b in pairs if a == b) / len(pairs) if pairs else None


def cohen_kappa(pairs: Sequence[tuple[int, int]]) -> float | None:
    """Cohen's kappa of two raters' choices over {1, 2, 0} (see the module's invariants)."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(1 for a, b in pairs if a == b) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[c] * second[c] for c in (0, 1, 2)) / (n * n)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def judge_choice(score_a: float | None) -> Choice | None:
    """The LLM judge's choice on a pair from A's score: 1 (A) above 50, 2 (B) below, 0 at 50."""
    if score_a is None:
        return None
    return 0 if abs(score_a - 50.0) < 1e-9 else 1 if score_a > 50 else 2


def _judge_scores(result: ExperimentResult) -> dict[tuple, float | None]:
    """A's score per (question, A, B, seed A, seed B, criterion), as the LLM judge scored it."""
    scores: dict[tuple, float | None] = {}
    for j in result.judgments:
        if j.judgment is None:
            continue
        for criterion, score in j.judgment.scores.items():
            scores[(j.question_id, j.row, j.col, j.seed_a, j.seed_b, criterion)] = score
    return scores


def _agreement(criterion: str, between: Between, pairs: Sequence[tuple[int, int]]) -> Agreement:
    return Agreement(criterion=criterion, between=between, items=len(pairs), identical=share_identical(pairs), kappa=cohen_kappa(pairs))


def people_and_judge(result: ExperimentResult, votes: Sequence[Vote]) -> list[Agreement]:
    """Per criterion (then pooled over all): every vote against the LLM judge's choice on its pair."""
    scores = _judge_scores(result)
    by_criterion: dict[str, list[tuple[int, int]]] = {c: [] for c in result.spec.criteria}
    for vote in votes:
        choice = judge_choice(scores.get(vote.key))
        if choice is not None and vote.criterion in by_criterion:
            by_criterion[vote.criterion].append((vote.preferred, choice))
    rows = [_agreement(c, PEOPLE_AND_JUDGE, pairs) for c, pairs in by_criterion.items()]
    return [*rows, _agreement(ALL_CRITERIA, PEOPLE_AND_JUDGE, [p for pairs in by_criterion.values() for p in pairs])]


def people_with_each_other(result: ExperimentResult, votes: Sequence[Vote]) -> list[Agreement]:
    """Per criterion (then pooled): every two judges' choices on a pair both voted on; empty
    with fewer than two judges."""
    if len({v.judge for v in votes}) < 2:
        return []
    by_pair: dict[tuple, dict[str, Choice]] = {}
    for vote in votes:
        by_pair.setdefault(vote.key, {})[vote.judge] = vote.preferred
    by_criterion: dict[str, list[tuple[int, int]]] = {c: [] for c in result.spec.criteria}
    for key, choices in by_pair.items():
        if key[-1] in by_criterion:
            by_criterion[key[-1]].extend(itertools.combinations([choices[j] for j in sorted(choices)], 2))
    rows = [_agreement(c, PEOPLE_WITH_EACH_OTHER, pairs) for c, pairs in by_criterion.items()]
    return [*rows, _agreement(ALL_CRITERIA, PEOPLE_WITH_EACH_OTHER, [p for pairs in by_criterion.values() for p in pairs])]


def people_win_rates(result: ExperimentResult, votes: Sequence[Vote]) -> list[WinRate]:
    """People's win rates, as :func:`~graphrag_core.evaluation.statistics.compute_win_rates`
    gives the LLM judge's: every pair the experiment judged, both directions, per criterion
    (``win_rate`` ``None`` and no p-value where nobody voted)."""
    pairs = list(dict.fromkeys((j.row, j.col) for j in result.judgments))
    rates: list[WinRate] = []
    for criterion in result.spec.criteria:
        block: list[WinRate] = []
        for row, col in pairs:
            mine = [v for v in votes if v.criterion == criterion and (v.condition_a, v.condition_b) == (row, col)]
            by_question: dict[str, list[float]] = {}
            for v in mine:
                by_question.setdefault(v.question_id, []).append(v.score_a)
            per_question = [sum(s) / len(s) for s in by_question.values()]
            mean = sum(v.score_a for v in mine) / len(mine) if mine else None
            block.append(
                WinRate(criterion=criterion, row=row, col=col, win_rate=mean, judgments=len(mine), questions=len(per_question), p_value=wilcoxon_p(per_question))
            )
        rates.extend(corrected_both_ways(block))
    return rates


def vote_counts(votes: Sequence[Vote]) -> dict[str, int]:
    """Each judge's number of votes, in the order they first voted."""
    return dict(Counter(v.judge for v in votes))


__all__ = [
    "ALL_CRITERIA",
    "PEOPLE_AND_JUDGE",
    "PEOPLE_WITH_EACH_OTHER",
    "Agreement",
    "Between",
    "cohen_kappa",
    "judge_choice",
    "people_and_judge",
    "people_win_rates",
    "people_with_each_other",
    "share_identical",
    "vote_counts",
]
