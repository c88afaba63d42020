"""Win rates, Wilcoxon p-values (scipy's) and the Holm correction (evaluation spec section 3)."""

from __future__ import annotations

import pytest

from graphrag_core.evaluation.statistics import holm, wilcoxon_p


def test_holm_matches_the_textbook_example():
    adjusted = holm([0.01, 0.04, 0.03, None])
    assert adjusted[3] is None
    assert adjusted[0] == pytest.approx(0.03)  # 3 * 0.01
    assert adjusted[2] == pytest.approx(0.06)  # 2 * 0.03
    assert adjusted[1] == pytest.approx(0.06)  # max(1 * 0.04, 0.06): monotone
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_wilcoxon_against_50():
    from scipy.stats import wilcoxon

    tied = [100, 100, 75, 100, 50, 100, 0, 100]  # ties and a zero: scipy's default is its exact permutation test
    assert wilcoxon_p(tied) == pytest.approx(wilcoxon([s - 50 for s in tied]).pvalue)
    many_tied = [100] * 10 + [0] * 3 + [75] * 4 + [50]  # more than 13: the normal approximation, as scipy's default
    assert wilcoxon_p(many_tied) == pytest.approx(wilcoxon([s - 50 for s in many_tied], method="approx").pvalue)
    distinct = [100, 90, 75, 60, 45, 20]
    assert wilcoxon_p(distinct) == pytest.approx(wilcoxon([s - 50 for s in distinct], method="exact").pvalue)
    assert wilcoxon_p([100] * 10) < 0.01
    assert wilcoxon_p([50, 50]) == 1.0
    assert wilcoxon_p([]) is None


def test_small_tied_samples_get_the_exact_p_value():
    # n questions all won: only 2 of the 2**n sign assignments are as extreme, so p = 2 / 2**n
    # (the normal approximation said 0.046 for four questions: "significant" where no four-question
    # experiment can be)
    assert wilcoxon_p([100] * 4) == 0.125
    assert wilcoxon_p([100] * 6) == 0.03125
    assert wilcoxon_p([100, 100, 100, 50, 50, 50]) == 0.25  # the three ties at 50 are dropped
    assert wilcoxon_p([100, 0]) == 1.0
    # tied ranks: |d| = 50, 50, 25 have midranks 2.5, 2.5, 1; T+ = 5 of 6
    assert wilcoxon_p([100, 100, 25]) == pytest.approx(2 * 2 / 8)


def test_the_exact_tied_p_value_is_scipys_permutation_test():
    from scipy.stats import PermutationMethod, wilcoxon

    for scores in ([100, 100, 75, 100, 50, 100, 0, 100], [100, 100, 25], [75, 75, 25, 100, 100, 0, 50, 50, 100]):
        differences = [s - 50 for s in scores]
        assert wilcoxon_p(scores) == pytest.approx(wilcoxon(differences, method=PermutationMethod()).pvalue, rel=1e-12)


def test_one_difference_from_50_is_never_significant():
    assert wilcoxon_p([100]) == 1.0
    assert wilcoxon_p([0, 50, 50]) == 1.0  # the zeros are dropped, one difference is left
