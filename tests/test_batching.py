import random

import pytest

from graphrag_core import (
    BudgetError,
    MapText,
    build_summary_batches,
    estimate_tokens,
    get_tokenizer,
)
from graphrag_core.batching import shuffle_in_place
from graphrag_core.context import format_part_header

SKELETON = "Answer the question using the data.\n---Data---\n"


def _fits(content: str, budget: int, skeleton: str = SKELETON) -> bool:
    return estimate_tokens(skeleton + "\n" + content) <= budget


def _parts(batches):
    """Every part of every batch as (community id, part number, text)."""
    import re

    found = []
    for batch in batches:
        pieces = re.split(r"\[Community ID: (\S+) \| summary part (\d+)\]\n", batch.content)
        assert pieces[0] == ""
        for cid, number, text in zip(pieces[1::3], pieces[2::3], pieces[3::3]):
            found.append((cid, int(number), text))
    return found


def _rejoin(batches):
    texts: dict[str, str] = {}
    for batch in batches:
        for index, (cid, number, text) in enumerate(_parts([batch])):
            # parts are joined by "\n" inside a batch: drop the separator of all but the last
            last = index == len(_parts([batch])) - 1
            texts[cid] = texts.get(cid, "") + (text if last else text[:-1])
    return texts


def test_every_part_fits_and_rejoins_to_the_original_english():
    text = " ".join(f"sentence number {i} about hackers and their culture." for i in range(400))
    batches = build_summary_batches([("c1", text)], SKELETON, 300, rng=random.Random(1))
    assert len(batches) > 5
    for batch in batches:
        assert _fits(batch.content, 300)
        assert batch.community_ids == ("c1",)
    assert _rejoin(batches) == {"c1": text}
    numbers = [n for _, n, _ in _parts(batches)]
    assert numbers == list(range(1, len(numbers) + 1))


def test_long_chinese_text_is_split_by_code_point_under_the_budget():
    text = "中文社区摘要讲述了黑客文化的历史。" * 200
    batches = build_summary_batches([MapText(community_id="zh", text=text)], SKELETON, 200, rng=random.Random(0))
    assert len(batches) > 3
    for batch in batches:
        assert _fits(batch.content, 200)
    assert _rejoin(batches) == {"zh": text}


def test_split_takes_the_largest_fitting_run():
    text = "x" * 5000
    batches = build_summary_batches([("7", text)], SKELETON, 100, rng=random.Random(0))
    first_part = _parts(batches[:1])[0][2]
    header = format_part_header("7", "9999999")
    assert _fits(header + first_part, 100)
    assert not _fits(header + text[: len(first_part) + 1], 100)


def test_skeleton_that_does_not_fit():
    with pytest.raises(BudgetError) as info:
        build_summary_batches([], SKELETON, estimate_tokens(SKELETON + "\n") - 1)
    assert str(info.value) == "Map token budget cannot fit the Map prompt."
    assert isinstance(info.value, ValueError)


def test_budget_too_small_names_the_community():
    # The skeleton fits, but not even one code point with the part header.
    budget = estimate_tokens(SKELETON + "\n") + 2
    with pytest.raises(BudgetError) as info:
        build_summary_batches([("comm-42", "some text")], SKELETON, budget)
    assert str(info.value) == "Map token budget is too small for community summary comm-42."


def test_blank_text_gives_no_parts():
    batches = build_summary_batches([("a", "   "), ("b", "real text")], SKELETON, 500, rng=random.Random(0))
    assert [b.community_ids for b in batches] == [("b",)]


def test_same_seed_same_batches_and_different_seed_different_order():
    texts = [(str(i), f"summary {i} " * (i % 7 + 1)) for i in range(60)]
    one = build_summary_batches(texts, SKELETON, 150, rng=random.Random(42))
    two = build_summary_batches(texts, SKELETON, 150, rng=random.Random(42))
    other = build_summary_batches(texts, SKELETON, 150, rng=random.Random(43))
    assert one == two
    assert [b.community_ids for b in one] != [b.community_ids for b in other]


def test_fisher_yates_from_the_end():
    class Fixed:
        def __init__(self, values):
            self.values = list(values)

        def random(self):
            return self.values.pop(0)

    items = ["a", "b", "c", "d"]
    # i=3: j=floor(0.0*4)=0 -> d b c a; i=2: j=floor(0.99*3)=2 -> same; i=1: j=floor(0.5*2)=1 -> same
    shuffle_in_place(items, Fixed([0.0, 0.99, 0.5]))
    assert items == ["d", "b", "c", "a"]


def test_greedy_packing_and_first_seen_ids():
    texts = [("a", "alpha " * 20), ("b", "beta " * 20), ("c", "gamma " * 20)]
    batches = build_summary_batches(texts, SKELETON, 10_000, rng=random.Random(5))
    assert len(batches) == 1
    assert sorted(batches[0].community_ids) == ["a", "b", "c"]
    order = [cid for cid, _, _ in _parts(batches)]
    assert list(batches[0].community_ids) == order


def test_packing_flushes_when_the_next_part_does_not_fit():
    texts = [(str(i), "word " * 40) for i in range(10)]
    budget = estimate_tokens(SKELETON + "\n" + format_part_header("0", 1) + "word " * 40) * 2
    batches = build_summary_batches(texts, SKELETON, budget, rng=random.Random(0))
    for batch in batches:
        assert _fits(batch.content, budget)
    # greedy: the first part of each next batch would not have fitted in the previous one
    for previous, following in zip(batches, batches[1:]):
        first_part = following.content.split("\n[Community ID")[0]
        assert not _fits(previous.content + "\n" + first_part, budget)
    assert sum(len(b.community_ids) for b in batches) == 10


def test_pairs_and_objects_are_accepted():
    class Obj:
        community_id = 3
        text = "object text"

    batches = build_summary_batches([Obj(), (4, "pair text")], SKELETON, 1000, rng=random.Random(0))
    assert set(batches[0].community_ids) == {"3", "4"}


def test_exact_tokenizer_is_supported():
    tokenizer = get_tokenizer("cl100k_base")
    text = "The jargon of hackers is playful and dense. " * 200
    batches = build_summary_batches([("x", text)], SKELETON, 200, rng=random.Random(0), tokenizer=tokenizer)
    for batch in batches:
        assert tokenizer.count(SKELETON + "\n" + batch.content) <= 200
    assert _rejoin(batches) == {"x": text}


def test_non_additive_tokenizer_path_matches_heuristic_results():
    class Plain:
        name = "plain-heuristic"

        def count(self, text):
            return estimate_tokens(text)

    texts = [(str(i), ("混合 mixed text %d " % i) * (i * 3 + 1)) for i in range(25)]
    fast = build_summary_batches(texts, SKELETON, 120, rng=random.Random(9))
    slow = build_summary_batches(texts, SKELETON, 120, rng=random.Random(9), tokenizer=Plain())
    assert fast == slow


def test_a_part_that_fits_no_batch_names_its_community():
    """Parts are sized with the placeholder header ``summary part 9999999``; a tokenizer for
    which the real header costs more than the placeholder leaves a part that fits no batch."""

    class RealHeadersCostMore:
        name = "real-headers-cost-more"

        def count(self, text):
            return estimate_tokens(text) + (1000 if "summary part 1]" in text else 0)

    with pytest.raises(BudgetError) as caught:
        build_summary_batches([("c7", "short text")], SKELETON, 200, rng=random.Random(0), tokenizer=RealHeadersCostMore())
    assert str(caught.value) == "Map token budget cannot fit a summary part for c7."
