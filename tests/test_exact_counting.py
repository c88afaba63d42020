"""Exact token counts at the cost of one read: cut-additive counting in batching and the reduce.

The exact encodings split text into pieces with a regular expression before merging bytes, and
no piece crosses a *safe cut* (``tokens.is_safe_cut``), so a text cut there counts as the sum of
its pieces. Batching and the reduce plan rely on it to count each text once; their results must
be exactly those of the spec's whole-string counting.
"""

from __future__ import annotations

import random

import pytest

from graphrag_core import GlobalSearchRequest
from graphrag_core.batching import build_summary_batches, estimate_batches, plan_summary_batches
from graphrag_core.context import SOURCE
from graphrag_core.index import load_index
from graphrag_core.naive_rag import plan_excerpts
from graphrag_core.prompts import map_prompt_skeleton
from graphrag_core.ranking import RankedChunk
from graphrag_core.reduce import plan_reduce
from graphrag_core.results import MapAnswer
from graphrag_core.samples import sample_path
from graphrag_core.search import plan_batches, sent_prompt_budget
from graphrag_core.tokens import ExactTokenizer, get_tokenizer, is_safe_cut, join_tokens, last_safe_cut

ENCODINGS = ("o200k_base", "cl100k_base")
WORDS = [
    "tea ", "oolong ", "茶", "乌龙", "the hacker ethic ", "。", "\n", "x" * 30 + " ", "12345 ", "3.14159", "\n\n",
    " / ", "[Data: Reports (1, 2)]", "  ", "Scrooge's", "’", "\t", "e\u0301", "ÅNGSTRÖM ", "---\n", "/path\n",
]
ALPHABET = list("abZQ .,;:!?'\"/\\-_()[]{}<>#*\n\t\r 0123456789中文。、茶éüÅ") + ["'s", " the", "\n\n", "  ", "...", "’", "e\u0301", "\u00a0", "\u3000"]
SKELETON = "---Role---\nYou answer.\n---Data---\n"


class WholeStrings:
    """The same counts with no declared property: the engine counts whole strings, as the spec writes."""

    def __init__(self, exact: ExactTokenizer) -> None:
        self.exact, self.name = exact, "whole-" + exact.name

    def count(self, text: str) -> int:
        return self.exact.count(text)


class Reading(ExactTokenizer):
    """An exact encoding that tallies how many code points it was asked to encode."""

    def __init__(self, encoding: str) -> None:
        super().__init__(encoding)
        self.read = 0

    def count(self, text: str) -> int:
        self.read += len(text)
        return super().count(text)


def random_text(rng: random.Random, length: int) -> str:
    """``length`` code points of words, figures, Chinese, newlines and odd spacing."""
    return "".join(rng.choices(WORDS, k=length // 3 + 1))[:length]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_text_cut_at_a_safe_cut_counts_as_its_pieces(encoding: str) -> None:
    exact = get_tokenizer(encoding)
    rng = random.Random(3)
    tried = 0
    for _ in range(4000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(2, 24)))
        for i in range(1, len(text)):
            if is_safe_cut(text, i):
                tried += 1
                assert exact.count(text) == exact.count(text[:i]) + exact.count(text[i:]), (text[:i], text[i:])
    assert tried > 1000


def test_safe_cuts_are_found_after_newlines_and_between_words() -> None:
    text = "first line\nsecond line, then more words"
    assert is_safe_cut(text, text.index("second"))
    assert not is_safe_cut("a\n b", 2) and not is_safe_cut("a\n/b", 2)  # whitespace or / after the newline
    assert not is_safe_cut("it's", 2)  # a contraction stays whole
    assert last_safe_cut(text, len(text) - 1) == text.rindex(" ")  # the space before "words"
    assert last_safe_cut("中文中文", 3) is None


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_joining_adds_what_the_tail_says(encoding: str) -> None:
    exact = get_tokenizer(encoding)
    for text in ("ends with a full stop.", "ends in a word", "spaces at the end   ", "中文。", "line\n[next]"):
        for separator in ("\n", "\n\n"):
            assert join_tokens(text, separator, exact) == exact.count(text + separator) - exact.count(text)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("seed", range(8))
def test_batches_and_estimates_are_exactly_the_whole_string_ones(encoding: str, seed: int) -> None:
    exact = get_tokenizer(encoding)
    rng = random.Random(seed)
    texts = [(f"c{i}", random_text(rng, rng.choice([40, 300, 2000, 12000, 30000]))) for i in range(rng.randint(1, 10))]
    budget = rng.choice([160, 400, 1500, 5000])
    batches, estimates = plan_summary_batches(texts, SKELETON, budget, rng=random.Random(seed), tokenizer=exact)
    whole = WholeStrings(exact)
    expected = build_summary_batches(texts, SKELETON, budget, rng=random.Random(seed), tokenizer=whole)
    assert batches == expected
    assert estimates == estimate_batches(expected, SKELETON, tokenizer=whole)
    assert all(e <= budget for e in estimates)


def test_a_too_small_budget_fails_the_same_way() -> None:
    exact = get_tokenizer("o200k_base")
    texts = [("c1", "short"), ("c2", "word " * 50)]
    for budget in (5, 12, 14, 16, 18):
        outcomes = []
        for tokenizer in (exact, WholeStrings(exact)):
            try:
                outcomes.append(build_summary_batches(texts, SKELETON, budget, rng=random.Random(1), tokenizer=tokenizer))
            except ValueError as exc:
                outcomes.append(str(exc))
        assert outcomes[0] == outcomes[1]


def test_planning_reads_each_code_point_a_bounded_number_of_times() -> None:
    rng = random.Random(11)
    texts = [(f"c{i}", random_text(rng, rng.randint(500, 3000))) for i in range(300)]
    texts += [("long", random_text(rng, 120_000))]  # split into many parts
    total = sum(len(t) for _, t in texts)
    reading = Reading("o200k_base")
    batches, _ = plan_summary_batches(texts, SKELETON, 2000, rng=random.Random(2), tokenizer=reading)
    assert len(batches) > 30
    # whole-string counting reads every batch once per part added (and splits with whole probes)
    assert reading.read <= 4 * total, reading.read / total


def answers_for(rng: random.Random, n: int) -> list[MapAnswer]:
    return [
        MapAnswer(
            answer=random_text(rng, rng.randint(1, 600)).strip() or "x",
            usefulness=rng.choice([0, 10, 50, 50, 85.5, 100]),
            community_ids=(str(i),),
            batch_index=i,
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("strategy", ["skip", "stop"])
def test_the_reduce_plan_is_exactly_the_whole_string_one(encoding: str, strategy: str) -> None:
    exact = get_tokenizer(encoding)
    for seed in range(10):
        rng = random.Random(seed)
        answers = answers_for(rng, rng.randint(0, 40))
        budget = rng.choice([200, 800, 3000])
        plan = plan_reduce(answers, SKELETON, budget, strategy=strategy, tokenizer=exact)  # type: ignore[arg-type]
        assert plan == plan_reduce(answers, SKELETON, budget, strategy=strategy, tokenizer=WholeStrings(exact))  # type: ignore[arg-type]
        if plan.selected:
            assert exact.count(SKELETON + "\n" + plan.context) == plan.prompt_tokens <= budget


def test_the_reduce_plan_reads_each_candidate_once() -> None:
    rng = random.Random(5)
    answers = answers_for(rng, 400)
    reading = Reading("o200k_base")
    plan = plan_reduce(answers, SKELETON, 3000, tokenizer=reading)
    candidates = sum(len(c.answer.answer) + 40 for c in plan.candidates if c.fate != "dropped")
    assert any(c.fate == "skipped" for c in plan.candidates)
    assert reading.read <= 2 * candidates + len(SKELETON) + 10


def test_a_text_longer_than_the_encoder_takes_is_counted_in_pieces() -> None:
    exact = get_tokenizer("o200k_base")
    line = "The hacker ethic holds that information should be free.\n"
    text = line * 20_000  # over a million code points
    assert exact.count(text) == 20_000 * exact.count(line)


@pytest.mark.parametrize("seed", range(4))
def test_the_estimates_made_while_packing_are_the_spec_ones(seed: int) -> None:
    rng = random.Random(seed)
    texts = [(f"c{i}", random_text(rng, rng.choice([40, 300, 2000, 9000]))) for i in range(rng.randint(1, 12))]
    estimate = get_tokenizer("heuristic")
    batches, estimates = plan_summary_batches(texts, SKELETON, 700, rng=random.Random(seed), tokenizer=estimate)
    assert estimates == estimate_batches(batches, SKELETON, tokenizer=estimate)


# -- the paper's text and vector methods count the same way ----------------------------------------


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("seed", range(4))
def test_source_chunks_batch_exactly_as_the_whole_strings_say(encoding: str, seed: int) -> None:
    """TS: chunks are the map units, each part headed by its chunk id, packed by the same exact path."""
    exact = get_tokenizer(encoding)
    rng = random.Random(seed)
    chunks = [(f"k{i}", random_text(rng, rng.choice([40, 300, 2000, 9000]))) for i in range(rng.randint(1, 12))]
    budget = rng.choice([400, 1500, 5000])
    batches, estimates = plan_summary_batches(chunks, SKELETON, budget, rng=random.Random(seed), tokenizer=exact, unit=SOURCE)
    whole = WholeStrings(exact)
    expected = build_summary_batches(chunks, SKELETON, budget, rng=random.Random(seed), tokenizer=whole, unit=SOURCE)
    assert batches == expected and estimates == estimate_batches(expected, SKELETON, tokenizer=whole)
    assert all(e <= budget for e in estimates)
    assert all(b.content.startswith("[Source ID: ") and "[Community ID:" not in b.content for b in batches)
    assert sorted({i for b in batches for i in b.community_ids}) == sorted({ref for ref, text in chunks if text.strip()})


def test_planning_source_chunks_reads_each_code_point_a_bounded_number_of_times() -> None:
    rng = random.Random(12)
    chunks = [(f"k{i}", random_text(rng, rng.randint(500, 3000))) for i in range(200)]
    total = sum(len(t) for _, t in chunks)
    reading = Reading("o200k_base")
    batches, _ = plan_summary_batches(chunks, SKELETON, 2000, rng=random.Random(2), tokenizer=reading, unit=SOURCE)
    assert len(batches) > 20 and reading.read <= 4 * total, reading.read / total


def test_a_text_run_plans_its_batches_on_the_exact_path_within_the_sent_budget() -> None:
    index = load_index(sample_path("jargon"))
    exact = get_tokenizer("o200k_base")
    request = GlobalSearchRequest(query="What are the main themes?", method="text", map_token_budget=2500, tokenizer="o200k_base")
    _, batches, estimates = plan_batches(index, request, seed=3, tokenizer=exact)
    skeleton = map_prompt_skeleton(request.query, unit=SOURCE)
    assert len(batches) > 1 and estimates == estimate_batches(batches, skeleton, tokenizer=exact)
    assert max(estimates) <= sent_prompt_budget(request.map_prompt_budget, exact) < request.map_prompt_budget


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("strategy", ["skip", "stop"])
def test_naive_rag_packs_exactly_as_the_whole_strings_say_reading_each_chunk_once(encoding: str, strategy: str) -> None:
    """SS: the ranked chunks' plan is the whole-string one, each chunk counted once."""
    exact = get_tokenizer(encoding)
    for seed in range(6):
        rng = random.Random(seed)
        ranked = [
            RankedChunk(reference=f"k{i}", chunk_id=f"k{i}", text=random_text(rng, rng.randint(1, 900)).strip() or "x", score=100.0 - i)
            for i in range(rng.randint(0, 30))
        ]
        budget = rng.choice([200, 800, 3000])
        plan = plan_excerpts(ranked, SKELETON, budget, strategy=strategy, tokenizer=exact)  # type: ignore[arg-type]
        assert plan == plan_excerpts(ranked, SKELETON, budget, strategy=strategy, tokenizer=WholeStrings(exact))  # type: ignore[arg-type]
        if plan.selected:
            assert exact.count(SKELETON + "\n" + plan.context) == plan.prompt_tokens <= budget
    reading = Reading("o200k_base")
    ranked = [RankedChunk(reference=f"k{i}", chunk_id=f"k{i}", text=random_text(random.Random(i), 600), score=1.0) for i in range(20)]
    plan_excerpts(ranked, SKELETON, 3000, tokenizer=reading)
    assert reading.read <= 2 * sum(len(c.text) + 30 for c in ranked) + len(SKELETON) + 10
