import pytest

from graphrag_core import HeuristicTokenizer, estimate_tokens


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 1),
        ("abcd", 1),
        ("abcde", 2),
        ("中", 1),
        ("中文", 2),
        ("中文测试", 3),
        ("A中文", 2),
        ("hello world", 3),
        ("中" * 9, 5),
        ("中" * 10, 6),
    ],
)
def test_spec_examples(text, expected):
    assert estimate_tokens(text) == expected


def test_non_ascii_outside_cjk_counts_as_cjk():
    assert estimate_tokens("é") == 1
    assert estimate_tokens("é" * 9) == 5


def test_exact_arithmetic_at_multiples_of_nine_cjk():
    # cjk / 1.8 is a whole number here; floating point must not push the ceiling up.
    for n in range(9, 9 * 200, 9):
        assert estimate_tokens("中" * n) == n * 5 // 9


def test_heuristic_measure_is_additive():
    tokenizer = HeuristicTokenizer()
    left, right = "hello 中文 ", "world テスト"
    a1, c1 = tokenizer.measure(left)
    a2, c2 = tokenizer.measure(right)
    assert tokenizer.total(a1 + a2, c1 + c2) == estimate_tokens(left + right)
