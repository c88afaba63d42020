"""The figures of an experiment: win rates with Wilcoxon p-values Holm-corrected per criterion,
each condition's cost, claim summaries (evaluation spec sections 3-4). Pure functions.

Invariants: a win rate is the row's mean score over its judgments, the reverse direction is 100
minus it with the same p-values; p-values test the per-question scores (the mean over seeds)
against 50 and are scipy's (:func:`wilcoxon_p`); the pairs of distinct conditions are
Holm-corrected per criterion, A/A p-values are left uncorrected.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..methods import TEXT
from ..status import RunStatus
from .claims import claim_metrics
from .results import AnswerRecord, ClaimSummary, ConditionCost, JudgmentRecord, SupportShare, WinRate
from .spec import ExperimentSpec

PURPOSES_SHOWN = ("rate", "expand", "relevance", "map", "reduce")
"""The purposes whose calls and prompt tokens a condition's cost reports, in this order."""
EXACT_TIED_MAX = 13
"""Up to this many scores, a sample with ties or zeros gets the exact p-value of every sign
assignment, as scipy's ``method="auto"`` chooses."""
EXACT_MAX = 50
"""Up to this many scores, a sample with neither ties nor zeros gets scipy's exact p-value."""
_ZERO = 1e-12


def wilcoxon_p(scores: Sequence[float]) -> float | None:
    """Two-sided Wilcoxon signed-rank p-value of ``scores`` against 50 (zero differences dropped,
    Wilcoxon's way); 1.0 when every score is 50, ``None`` with no scores.

    The method is scipy's default (``method="auto"``): the exact distribution for up to
    :data:`EXACT_MAX` scores with neither ties nor zeros; the exact permutation distribution
    (every sign assignment, tied differences sharing their mean rank) for up to
    :data:`EXACT_TIED_MAX` scores with ties or zeros, as judge scores often are (0, 50, 100);
    else the normal approximation with tie correction. Four questions all won give 0.125."""
    if not scores:
        return None
    differences = [0.0 if abs(s - 50.0) < _ZERO else s - 50.0 for s in scores]
    nonzero = [d for d in differences if d != 0]
    if not nonzero:
        return 1.0
    untied = len(nonzero) == len(differences) and len({abs(d) for d in nonzero}) == len(nonzero)
    if not untied and len(differences) <= EXACT_TIED_MAX:
        return _every_sign_p(nonzero)
    method = "exact" if untied and len(differences) <= EXACT_MAX else "asymptotic"
    from scipy.stats import wilcoxon  # scipy loads only when a p-value is computed (a cold command line skips it)

    p = float(wilcoxon(differences, alternative="two-sided", method=method).pvalue)
    return p if p == p else 1.0


def _every_sign_p(nonzero: Sequence[float]) -> float:
    """The exact two-sided p-value of the sum of positive ranks over every sign assignment of the
    nonzero differences, by scipy's exhaustive :func:`~scipy.stats.permutation_test` (the test
    ``wilcoxon(..., method=PermutationMethod())`` makes, with the statistic vectorized: scipy's
    own evaluates it once per assignment, seconds at 13 scores). One difference: p = 1."""
    if len(nonzero) < 2:
        return 1.0
    from scipy.stats import permutation_test, rankdata

    ranks = rankdata(np.abs(nonzero))

    def positive_rank_sum(signed: np.ndarray, axis: int) -> np.ndarray:
        return np.sum(ranks * (signed > 0), axis=axis)

    test = permutation_test(
        (np.asarray(nonzero),), positive_rank_sum, permutation_type="samples", vectorized=True, n_resamples=np.inf, alternative="two-sided"
    )
    return float(test.pvalue)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values, in the input order (``None`` stays ``None`` and does
    not count towards the family size)."""
    indexed = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(indexed)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def _win_rate(criterion: str, row: str, col: str, judgments: Sequence[JudgmentRecord]) -> WinRate:
    """``row``'s win rate over ``col`` as judged (row as A), and the p-value of its per-question scores."""
    by_question: dict[str, list[float]] = {}
    scores: list[float] = []
    for j in judgments:
        if (j.row, j.col) != (row, col) or j.judgment is None:
            continue
        s = j.judgment.scores.get(criterion)
        if s is None:
            continue
        scores.append(s)
        by_question.setdefault(j.question_id, []).append(s)
    per_question = [sum(v) / len(v) for v in by_question.values()]
    mean = sum(scores) / len(scores) if scores else None
    return WinRate(criterion=criterion, row=row, col=col, win_rate=mean, judgments=len(scores), questions=len(per_question), p_value=wilcoxon_p(per_question))


def compute_win_rates(spec: ExperimentSpec, judgments: Sequence[JudgmentRecord]) -> list[WinRate]:
    """Win rates for every ordered pair of conditions (both directions) and every A/A, per criterion.

    p-values test the per-question scores (the mean over seeds of a question) against 50; those of
    distinct pairs are Holm-corrected per criterion; A/A p-values are shown uncorrected.
    """
    names = [c.name for c in spec.conditions]
    rates: list[WinRate] = []
    for criterion in spec.criteria:
        rates.extend(corrected_both_ways([_win_rate(criterion, row, col, judgments) for row, col in [*spec.pairs(), *((n, n) for n in names if spec.seed_pairs())]]))
    return rates


def corrected_both_ways(block: Sequence[WinRate]) -> list[WinRate]:
    """One criterion's win rates, each followed by its reverse (100 minus it) unless it is A/A,
    with the p-values of distinct pairs Holm-corrected together (A/A ones left as they are)."""
    distinct = [w for w in block if w.row != w.col]
    corrected = {(w.row, w.col): a for w, a in zip(distinct, holm([w.p_value for w in distinct]))}
    rates: list[WinRate] = []
    for w in block:
        p_holm = corrected.get((w.row, w.col), w.p_value)
        rates.append(w.model_copy(update={"p_holm": p_holm}))
        if w.row != w.col:
            reverse = None if w.win_rate is None else 100.0 - w.win_rate
            rates.append(w.model_copy(update={"row": w.col, "col": w.row, "win_rate": reverse, "p_holm": p_holm}))
    return rates


def _purpose_order(purpose: str) -> tuple[bool, int, str]:
    return (purpose not in PURPOSES_SHOWN, PURPOSES_SHOWN.index(purpose) if purpose in PURPOSES_SHOWN else 0, purpose)


def _units(answer: AnswerRecord) -> int:
    return answer.cost.units if answer.cost.units is not None else answer.cost.summaries


def compute_costs(spec: ExperimentSpec, answers: Sequence[AnswerRecord]) -> list[ConditionCost]:
    """Each condition's mean cost per answer (failed answers included: they cost too), and its
    prompt tokens as a share of the first ``text`` condition's (the paper's Table 2), else of
    the most expensive condition's (evaluation spec sections 3 and 7)."""
    rows: list[ConditionCost] = []
    for condition in spec.conditions:
        mine = [a for a in answers if a.condition == condition.name]
        n = len(mine) or 1
        purposes = sorted({p for a in mine for p in [*a.cost.calls, *a.cost.prompt_tokens]}, key=_purpose_order)
        calls = {p: sum(a.cost.calls.get(p, 0) for a in mine) / n for p in purposes}
        tokens = {p: sum(a.cost.prompt_tokens.get(p, 0) for a in mine) / n for p in purposes}
        rows.append(
            ConditionCost(
                condition=condition.name,
                answers=len(mine),
                failed=sum(1 for a in mine if a.status == RunStatus.FAILED),
                unanswered=sum(1 for a in mine if a.status == RunStatus.NO_RESULTS),
                reported_tokens=sum(a.cost.reported_tokens for a in mine) / n,
                cached_tokens=sum(a.cost.cached_tokens for a in mine) / n,
                summaries=sum(a.cost.summaries for a in mine) / n,
                batches=sum(a.cost.batches for a in mine) / n,
                calls=calls,
                prompt_tokens=tokens,
                total_prompt_tokens=sum(tokens.values()),
                share=None,
                method=condition.method,
                units=sum(_units(a) for a in mine) / n,
                embedding_tokens=sum(a.cost.embedding_tokens for a in mine) / n,
            )
        )
    reference = next((r for r in rows if r.method == TEXT), None) or max(rows, key=lambda r: r.total_prompt_tokens, default=None)
    if reference is None or not reference.total_prompt_tokens:
        return rows
    base = reference.total_prompt_tokens
    return [r.model_copy(update={"share": r.total_prompt_tokens / base, "share_of": reference.condition}) for r in rows]


def compute_claim_summaries(spec: ExperimentSpec, answers: Sequence[AnswerRecord]) -> list[ClaimSummary]:
    """Each condition's mean claim metrics over its answers whose claims were listed (none: no row)."""
    summaries: list[ClaimSummary] = []
    for condition in spec.conditions:
        metrics = [claim_metrics(a.claims, threshold=spec.claim_threshold) for a in answers if a.condition == condition.name and a.claims is not None]
        if not metrics:
            continue
        summaries.append(
            ClaimSummary(
                condition=condition.name,
                answers=len(metrics),
                comprehensiveness=sum(m.comprehensiveness for m in metrics) / len(metrics),
                diversity=sum(m.diversity for m in metrics) / len(metrics),
            )
        )
    return summaries


def compute_support_shares(spec: ExperimentSpec, answers: Sequence[AnswerRecord], judge: str) -> list[SupportShare]:
    """Each condition's supported share: the points of its answers checked by ``judge``, pooled
    (an answer checked by another judge, or not at all, is left out)."""
    shares: list[SupportShare] = []
    for condition in spec.conditions:
        tallies = [a.support for a in answers if a.condition == condition.name and a.support is not None and a.support.judge == judge]
        shares.append(
            SupportShare(
                condition=condition.name, judge=judge, answers=len(tallies), points=sum(t.points for t in tallies),
                supported=sum(t.supported for t in tallies), partial=sum(t.partial for t in tallies),
                unsupported=sum(t.unsupported for t in tallies), unjudged=sum(t.unjudged for t in tallies),
            )
        )
    return shares


__all__ = ["PURPOSES_SHOWN", "compute_support_shares", "compute_claim_summaries", "corrected_both_ways", "compute_costs", "compute_win_rates", "holm", "wilcoxon_p"]
