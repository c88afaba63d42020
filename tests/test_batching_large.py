"""Splitting a huge summary is linear in its length, and still exactly spec section 5."""

from __future__ import annotations

import random

import pytest

from graphrag_core.batching import MapText, _Fitter, _split_parts
from graphrag_core.context import format_part_header
from graphrag_core.errors import BudgetError
from graphrag_core.tokens import HeuristicTokenizer, estimate_tokens, get_tokenizer

SKELETON = "---Role---\nYou answer.\n---Data tables---\n"
WORDS = ["tea ", "oolong ", "茶", "乌龙", "the hacker ethic ", "。", "\n", "x" * 30 + " "]


def spec_split(community_id: str, body: str, budget: int, count=estimate_tokens) -> list[str]:  # type: ignore[no-untyped-def]
    """Spec section 5 as written: binary-search the largest k over whole strings."""
    header = format_part_header(community_id, "9999999")

    def fits(k: int) -> bool:
        return count(SKELETON + "\n" + header + body[offset : offset + k]) <= budget

    parts, offset = [], 0
    if not body.strip():
        return []
    while offset < len(body):
        remaining = len(body) - offset
        if fits(remaining):
            k = remaining
        else:
            lo, hi = 0, remaining - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
            k = lo
        if k == 0:
            raise BudgetError("too small")
        parts.append(body[offset : offset + k])
        offset += k
    return parts


def random_text(rng: random.Random, length: int) -> str:
    pieces: list[str] = []
    size = 0
    while size < length:
        pieces.append(rng.choice(WORDS))
        size += len(pieces[-1])
    return "".join(pieces)[:length]


@pytest.mark.parametrize("seed", range(12))
def test_split_matches_the_spec_search(seed: int) -> None:
    rng = random.Random(seed)
    body = random_text(rng, rng.randint(1, 6000))
    budget = rng.randint(40, 900)
    tokenizer = get_tokenizer()
    fitter = _Fitter(SKELETON, budget, tokenizer)
    expected = spec_split("c7", body, budget)
    assert _split_parts(MapText(community_id="c7", text=body), fitter) == expected


def test_exact_tokenizer_split_matches_the_spec_search() -> None:
    exact = get_tokenizer("cl100k_base")  # bpe-openai is a dependency: no skip
    rng = random.Random(5)
    for _ in range(3):
        body = random_text(rng, 3000)
        budget = rng.randint(60, 400)
        expected = spec_split("c1", body, budget, count=exact.count)
        assert _split_parts(MapText(community_id="c1", text=body), _Fitter(SKELETON, budget, exact)) == expected


class CountingTokenizer(HeuristicTokenizer):
    """The heuristic, counting how many code points it was asked to read."""

    def __init__(self) -> None:
        self.read = 0

    def measure(self, text: str) -> tuple[int, int]:
        self.read += len(text)
        return super().measure(text)

    def count(self, text: str) -> int:
        self.read += len(text)
        return super().count(text)


def test_splitting_reads_each_code_point_a_bounded_number_of_times() -> None:
    body = random_text(random.Random(1), 400_000)  # about 400 parts at this budget
    tokenizer = CountingTokenizer()
    fitter = _Fitter(SKELETON, 300, tokenizer)
    tokenizer.read = 0
    parts = _split_parts(MapText(community_id="big", text=body), fitter)
    assert "".join(parts) == body and len(parts) > 300
    assert tokenizer.read <= 6 * len(body)  # linear: a quadratic split reads the text once per part


def test_exact_probes_longer_than_the_budget_can_hold_are_skipped() -> None:
    exact = get_tokenizer("cl100k_base")  # bpe-openai is a dependency: no skip
    body = "word " * 200_000
    fitter = _Fitter(SKELETON, 200, exact)
    assert fitter.max_run == 200 * exact.max_token_chars
    read = []
    original = exact.count
    try:
        exact.count = lambda text: (read.append(len(text)), original(text))[1]  # type: ignore[method-assign]
        first = _split_parts(MapText(community_id="w", text=body[:50_000]), fitter)[0]
    finally:
        del exact.count
    assert max(read) <= fitter.max_run + 200  # never the whole remainder
    assert first == spec_split("w", body[:50_000], 200, count=original)[0]
