"""Choosing a condition (evaluation spec section 8): per criterion, each condition's cost against
its overall win rate, the cost-quality Pareto front, and the recommended condition. Pure.

- A condition's **overall win rate** on a criterion is its mean score over every judgment
  against another condition (A/A left out), from its own side; its 95% confidence interval is
  a percentile bootstrap over questions (:data:`BOOTSTRAP_RESAMPLES` resamples with a fixed
  seed, the same resampled questions for every condition), so a report is reproducible.
- Its **cost** is its mean prompt tokens per answer (:class:`~.results.ConditionCost`).
- It is on the **Pareto front** when no other condition is at least as cheap and at least as
  good, and strictly one of the two.
- The **best** condition has the highest overall win rate (ties: the cheaper). A condition is
  **significantly below** the best when their pairwise comparison's Holm-corrected p-value is
  under :data:`SIGNIFICANCE` and it lost that comparison (win rate under 50); the
  **recommended** condition is the cheapest one that is not (the best itself qualifies; ties on
  cost: the better). A condition never judged against the best does not qualify.

Invariants: the recommended condition is never significantly below the best, and no cheaper
condition qualifies; every interval holds its win rate (``ci_low <= win_rate <= ci_high``, a
percentile interval widened to it when the resamples all fall on one side); with a heuristic
judge every sentence says that the choice is heuristic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from .results import ConditionCost, ExperimentResult, JudgmentRecord, WinRate

BOOTSTRAP_RESAMPLES = 1_000
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95
SIGNIFICANCE = 0.05
CHOICE_FIELDS = ("condition", "method", "criterion", "prompt_tokens_per_answer", "win_rate", "ci_low", "ci_high", "pareto", "recommended")
"""The columns of ``{stem}.choice.csv``, in order (evaluation spec section 8)."""


class ChoicePoint(BaseModel):
    """One condition on one criterion: its cost, overall win rate with its interval, and its
    place in the choice."""

    model_config = ConfigDict(frozen=True)

    condition: str
    method: str
    criterion: str
    prompt_tokens_per_answer: float | None
    win_rate: float | None
    ci_low: float | None
    ci_high: float | None
    judgments: int
    pareto: bool
    recommended: bool
    best: bool = False
    p_vs_best: float | None = None
    """The Holm-corrected p-value of its pairwise comparison with the best (None: the best itself, or never judged against it)."""
    below_best: bool = False
    """Significantly below the best (see the module docstring)."""


class Choice(BaseModel):
    """The choice on one criterion: every condition's point, the best and the recommended one."""

    model_config = ConfigDict(frozen=True)

    criterion: str
    points: list[ChoicePoint]
    best: str | None
    recommended: str | None
    heuristic: bool
    sentence: str
    """The choice in words, for the report and the page."""

    def point(self, condition: str) -> ChoicePoint | None:
        return next((p for p in self.points if p.condition == condition), None)


def condition_scores(judgments: Sequence[JudgmentRecord], criterion: str, names: Sequence[str]) -> dict[str, dict[str, list[float]]]:
    """Each condition's scores on ``criterion`` against the other conditions, by question (from
    its own side: a judgment's score for the row, 100 minus it for the column; A/A left out)."""
    scores: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    for j in judgments:
        if j.judgment is None or j.row == j.col:
            continue
        score = j.judgment.scores.get(criterion)
        if score is None:
            continue
        if j.row in scores:
            scores[j.row].setdefault(j.question_id, []).append(score)
        if j.col in scores:
            scores[j.col].setdefault(j.question_id, []).append(100.0 - score)
    return scores


def bootstrap_intervals(
    scores: dict[str, dict[str, list[float]]],
    questions: Sequence[str],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> dict[str, tuple[float | None, float | None]]:
    """Each condition's percentile bootstrap interval of its overall win rate, resampling
    ``questions`` with replacement (the same resamples for every condition)."""
    names = list(scores)
    if not questions or not names:
        return {name: (None, None) for name in names}
    sums = np.array([[sum(scores[n].get(q, ())) for n in names] for q in questions], dtype=float)
    counts = np.array([[len(scores[n].get(q, ())) for n in names] for q in questions], dtype=float)
    picks = np.random.default_rng(seed).integers(0, len(questions), size=(resamples, len(questions)))
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    tail = 100.0 * (1.0 - confidence) / 2.0
    intervals: dict[str, tuple[float | None, float | None]] = {}
    for i, name in enumerate(names):
        column = rates[:, i]
        column = column[~np.isnan(column)]
        if not column.size:
            intervals[name] = (None, None)
            continue
        low, high = np.percentile(column, [tail, 100.0 - tail])
        intervals[name] = (float(low), float(high))
    return intervals


def pareto_front(points: Sequence[tuple[str, float, float]]) -> set[str]:
    """The names of ``(name, cost, quality)`` points no other point dominates (as cheap or
    cheaper and as good or better, strictly one of the two)."""
    front: set[str] = set()
    for name, cost, quality in points:
        dominated = any(
            other != name and c <= cost and q >= quality and (c < cost or q > quality) for other, c, q in points
        )
        if not dominated:
            front.add(name)
    return front


def _widened(bound: float | None, rate: float | None, pick) -> float | None:  # noqa: ANN001 - min or max
    if bound is None or rate is None:
        return bound
    return float(pick(bound, rate))


def _pair(win_rates: Sequence[WinRate], criterion: str, row: str, col: str) -> WinRate | None:
    return next((w for w in win_rates if (w.criterion, w.row, w.col) == (criterion, row, col)), None)


def _tokens(value: float) -> str:
    return f"{value:,.0f}"


def _sentence(criterion: str, points: Sequence[ChoicePoint], best: ChoicePoint | None, chosen: ChoicePoint | None, heuristic: bool) -> str:
    lead = "Heuristic choice (the offline judge is not an LLM): " if heuristic else ""
    if best is None or chosen is None or best.win_rate is None or chosen.win_rate is None:
        return f"{lead}Nothing was judged on {criterion}, so no condition can be recommended."
    cost = chosen.prompt_tokens_per_answer
    figures = f"{chosen.win_rate:.1f}" + (f", {_tokens(cost)} prompt tokens per answer" if cost is not None else "")
    judged = [p for p in points if p.win_rate is not None and p.condition != best.condition]
    caveat = ""
    if judged and not any(p.below_best for p in judged):
        caveat = " No condition is significantly below the best yet: more questions sharpen the choice."
    if chosen.condition == best.condition:
        cheaper = [p for p in judged if p.prompt_tokens_per_answer is not None and cost is not None and p.prompt_tokens_per_answer < cost]
        tail = "; every cheaper condition is significantly below it" if cheaper else ""
        return f"{lead}On {criterion}, {chosen.condition} is best ({figures}){tail}.{caveat}"
    if cost and best.prompt_tokens_per_answer and best.prompt_tokens_per_answer > cost:
        figures += f", {best.prompt_tokens_per_answer / cost:.1f}x fewer than {best.condition}"
    return (
        f"{lead}On {criterion}, {chosen.condition} ({figures}) is the cheapest condition whose win rate is not "
        f"significantly below the best's ({best.condition}, {best.win_rate:.1f}).{caveat}"
    )


def choose_on(
    criterion: str,
    names: Sequence[str],
    methods: dict[str, str],
    judgments: Sequence[JudgmentRecord],
    win_rates: Sequence[WinRate],
    costs: Sequence[ConditionCost],
    questions: Sequence[str],
    *,
    heuristic: bool,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Choice:
    """The choice on one criterion (see the module docstring)."""
    scores = condition_scores(judgments, criterion, names)
    intervals = bootstrap_intervals(scores, questions, resamples=resamples, seed=seed)
    cost_of = {c.condition: c.total_prompt_tokens for c in costs if c.answers}
    rates: dict[str, float | None] = {}
    counts: dict[str, int] = {}
    for name in names:
        pooled = [s for per_question in scores[name].values() for s in per_question]
        rates[name] = sum(pooled) / len(pooled) if pooled else None
        counts[name] = len(pooled)
    judged = [(n, cost_of[n], rates[n]) for n in names if rates[n] is not None and cost_of.get(n)]
    front = pareto_front([(n, c, r) for n, c, r in judged])  # type: ignore[misc]
    best_name = min(judged, key=lambda t: (-t[2], t[1]))[0] if judged else None  # type: ignore[operator]
    p_vs_best: dict[str, float | None] = {}
    below: dict[str, bool] = {}
    for name, _, _ in judged:
        if name == best_name:
            p_vs_best[name], below[name] = None, False
            continue
        pair = _pair(win_rates, criterion, name, best_name) if best_name else None
        p = pair.p_holm if pair is not None else None
        p_vs_best[name] = p
        below[name] = p is None or (p < SIGNIFICANCE and pair is not None and pair.win_rate is not None and pair.win_rate < 50.0)
    eligible = [(n, c, r) for n, c, r in judged if not below.get(n, True)]
    chosen_name = min(eligible, key=lambda t: (t[1], -t[2]))[0] if eligible else None  # type: ignore[operator]
    points = [
        ChoicePoint(
            condition=name,
            method=methods.get(name, "global"),
            criterion=criterion,
            prompt_tokens_per_answer=cost_of.get(name),
            win_rate=rates[name],
            ci_low=_widened(intervals[name][0], rates[name], min),
            ci_high=_widened(intervals[name][1], rates[name], max),
            judgments=counts[name],
            pareto=name in front,
            recommended=name == chosen_name,
            best=name == best_name,
            p_vs_best=p_vs_best.get(name),
            below_best=below.get(name, False),
        )
        for name in names
    ]
    by_name = {p.condition: p for p in points}
    best = by_name.get(best_name) if best_name else None
    chosen = by_name.get(chosen_name) if chosen_name else None
    return Choice(
        criterion=criterion, points=points, best=best_name, recommended=chosen_name, heuristic=heuristic,
        sentence=_sentence(criterion, points, best, chosen, heuristic),
    )


def choose(result: ExperimentResult, *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> list[Choice]:
    """The choice on every criterion of the experiment (evaluation spec section 8)."""
    spec = result.spec
    names = [c.name for c in spec.conditions]
    methods = {c.name: c.method for c in spec.conditions}
    questions = [q.id for q in spec.questions]
    return [
        choose_on(
            criterion, names, methods, result.judgments, result.win_rates, result.costs, questions,
            heuristic=result.heuristic_judge, resamples=resamples, seed=seed,
        )
        for criterion in spec.criteria
    ]


__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "CHOICE_FIELDS",
    "CONFIDENCE",
    "SIGNIFICANCE",
    "Choice",
    "ChoicePoint",
    "bootstrap_intervals",
    "choose",
    "choose_on",
    "condition_scores",
    "pareto_front",
]
