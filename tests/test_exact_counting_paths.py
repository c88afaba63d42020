"""The fast paths of exact planning, each checked against whole-string counting.

Exact planning counts a map text in segments between safe cuts, decides most probes from the
counts it knows (a tail counts at least 0 and at most its UTF-8 bytes), learns the count before
a safe cut by counting the shorter way from a known one, and remembers what it learnt per text.
Every one of those must give the count the encoder gives the whole string: these tests compare
them on digit-heavy, Chinese, emoji and mixed text, at and around the cuts.
"""

from __future__ import annotations

import random
from itertools import pairwise

import pytest

from graphrag_core import body_counts
from graphrag_core.batching import (
    MapText,
    _Fitter,
    _split_parts,
    build_summary_batches,
    plan_summary_batches,
)
from graphrag_core.body_counts import CountedBody
from graphrag_core.context import format_part_header
from graphrag_core.tokens import (
    PARAGRAPHS_FROM_CHARS,
    ExactTokenizer,
    PrefixCounts,
    get_tokenizer,
    is_safe_cut,
    last_safe_cut,
    next_safe_cut,
    spaced_safe_cuts,
    text_key,
)

SKELETON = "---Role---\nYou answer.\n---Data---\n"
KINDS = {
    "digits": ["12345", " ", "3.14159", ",", "2024-01-31", "\n", "0x1F", " 42 ", "1,000,000", "\n\n", "99%"],
    "chinese": ["茶", "乌龙", "。", "，", "中文测试", "\n", "“引号”", "、", "ＡＢＣ", "龍", "\n\n", " "],
    "emoji": ["🎉", " ", "😀😀", "👩\u200d💻", "party", "\n", "🇬🇧", "e\u0301", "—", "\n\n", "ok "],
    "mixed": [
        "tea ", "oolong ", "茶", "the hacker ethic ", "。", "\n", "12345 ", "3.14159", "\n\n", " / ",
        "[Data: Reports (1, 2)]", "  ", "Scrooge's", "’", "\t", "🎉", "ÅNGSTRÖM ", "---\n", "/path\n",
    ],
}


def text_of(kind: str, rng: random.Random, length: int) -> str:
    pieces: list[str] = []
    size = 0
    while size < length:
        pieces.append(rng.choice(KINDS[kind]))
        size += len(pieces[-1])
    return "".join(pieces)[:length]


def counted_body(body: str, fitter: _Fitter) -> CountedBody:
    """The counts the batcher reads for ``body`` with ``fitter``'s tokenizer and budget."""
    return CountedBody(body, fitter.tokenizer, limit=fitter.content_budget, max_run=fitter.max_run)


def fresh(encoding: str = "o200k_base") -> ExactTokenizer:
    """A tokenizer that remembers nothing yet (get_tokenizer's is shared by every test)."""
    return ExactTokenizer(encoding)


# -- finding safe cuts --------------------------------------------------------------------------


def reference_last_safe_cut(text: str, end: int, start: int = 0) -> int | None:
    """What last_safe_cut returned before its search was windowed: every separator within
    CUT_SEARCH_CHARS of ``end`` tried from the last, else the last newline cut."""
    from graphrag_core.tokens import _SEPARATOR_CUT, CUT_SEARCH_CHARS

    end = min(end, len(text) - 1)
    newline = text.rfind("\n", start, end)
    best = None
    while newline >= start:
        if is_safe_cut(text, newline + 1):
            best = newline + 1
            break
        newline = text.rfind("\n", start, newline)
    low = max(start, end - CUT_SEARCH_CHARS, best or 0)
    if low < end:
        for match in reversed(list(_SEPARATOR_CUT.finditer(text, low, end + 2))):
            if start < match.start() <= end and is_safe_cut(text, match.start()):
                return match.start()
    return best


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_last_safe_cut_is_the_one_the_full_search_finds(kind: str) -> None:
    rng = random.Random(kind)
    for _ in range(300):
        text = text_of(kind, rng, rng.randint(1, 1500))
        end = rng.randint(0, len(text))
        start = rng.randint(0, max(0, end - 1))
        assert last_safe_cut(text, end, start) == reference_last_safe_cut(text, end, start), (text, end, start)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_next_safe_cut_is_the_first_one(kind: str) -> None:
    from graphrag_core.tokens import _SEPARATOR_CUT

    rng = random.Random(kind)
    for _ in range(300):
        text = text_of(kind, rng, rng.randint(1, 400))
        start = rng.randint(0, len(text))
        stop = rng.randint(start, len(text))
        candidates = (i for i in range(start + 1, stop) if text[i - 1] == "\n" or _SEPARATOR_CUT.match(text[:stop], i))
        expected = next((i for i in candidates if is_safe_cut(text[:stop], i)), None)
        assert next_safe_cut(text, start, stop) == expected, (text, start, stop)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_spaced_cuts_are_safe_where_they_are_used_and_add_up(kind: str) -> None:
    exact = get_tokenizer("o200k_base")
    rng = random.Random(kind)
    for _ in range(20):
        text = text_of(kind, rng, rng.randint(200, 6000))
        start = rng.randint(0, len(text) // 3)
        stop = rng.randint(start, len(text))
        spacing = rng.choice([16, 64, 300])
        cuts = spaced_safe_cuts(text, spacing, start, stop)
        assert cuts == sorted(set(cuts)) and all(start < c < stop and is_safe_cut(text[:stop], c) for c in cuts)
        bounds = [start, *cuts, stop]
        assert exact.count(text[start:stop]) == sum(exact.count(text[a:b]) for a, b in pairwise(bounds))


def test_paragraph_cuts_are_the_safe_cuts_after_blank_lines_a_scan_finds() -> None:
    """The regular expression finds what scanning every blank line and asking is_safe_cut finds,
    whitespace of every kind (str.isspace's) after the blank line included."""
    from graphrag_core.tokens import PARAGRAPH_CHARS, _paragraph_cuts

    def scanned(text: str) -> list[int]:
        cuts, blank = [], text.find("\n\n", PARAGRAPH_CHARS - 2)
        while blank != -1:
            if is_safe_cut(text, blank + 2):
                cuts.append(blank + 2)
                blank = text.find("\n\n", blank + PARAGRAPH_CHARS)
            else:
                blank = text.find("\n\n", blank + 1)
        return cuts

    rng = random.Random(12)
    pieces = ["a", "b ", "\n", "\n\n", "\n\n\n", " ", "/", "\t", "\r", "\u00a0", "\u2028", "\u3000", "\x1c", "\x85", "茶", "x" * 50, "word " * 20]
    found = 0
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 120)))
        assert _paragraph_cuts(text) == scanned(text), repr(text)
        found += bool(scanned(text))
    assert found > 1000


def test_spaced_cuts_follow_newlines_so_shared_text_is_cut_alike() -> None:
    shared = "".join(f"line {i} of the shared excerpt, with some words\n" for i in range(400))
    first = spaced_safe_cuts("A short title\n" + shared, 1024)
    second = spaced_safe_cuts("A rather longer title (copy 12)\n" + shared, 1024)
    offset = len("A rather longer title (copy 12)\n") - len("A short title\n")
    assert len(first) > 10 and {c + offset for c in first[2:]} <= set(second)


# -- counting a text paragraph by paragraph --------------------------------------------------------


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_text_counted_by_paragraphs_counts_as_the_whole_string(encoding: str, kind: str) -> None:
    rng = random.Random(f"paragraphs-{kind}")
    breaks = ["\n\n", "\n\n\n", "\n\n ", "\n\n/", "\n \n", "\n\n\t", ".\n\n", "\n\n["]
    long_enough = 0
    for _ in range(30):
        exact = fresh(encoding)
        pieces = [text_of(kind, rng, rng.randint(1, 700)) for _ in range(rng.randint(4, 16))]
        text = "".join(piece + rng.choice(breaks) for piece in pieces)
        long_enough += len(text) >= PARAGRAPHS_FROM_CHARS  # shorter texts are encoded whole
        assert exact.count(text) == exact._encode_count(text), text
    assert long_enough > 10


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_paragraph_prefixes_are_the_counts_of_the_prefixes(kind: str) -> None:
    exact = fresh()
    rng = random.Random(f"prefixes-{kind}")
    for _ in range(10):
        text = "\n\n".join(text_of(kind, rng, rng.randint(20, 600)) for _ in range(rng.randint(1, 15)))
        prefixes = exact.paragraph_prefixes(text)
        assert prefixes[-1] == (len(text), exact._encode_count(text))
        assert [cut for cut, _ in prefixes] == sorted({cut for cut, _ in prefixes})
        for cut, count in prefixes:
            assert count == exact._encode_count(text[:cut]), cut


def test_a_text_key_holds_the_hash_and_the_length_whole() -> None:
    for text in ["", "a", "tea " * 1000, "茶" * 70_000, "x" * 499_999]:
        key = text_key(text)
        assert isinstance(key, int) and key >> 32 == hash(text) and key & (2**32 - 1) == len(text)
        assert text_key(text[:-1] + text[-1:]) == key


def test_a_text_counted_by_paragraphs_keeps_its_paragraph_counts() -> None:
    reading = Reading()
    rng = random.Random(11)
    text = "\n\n".join(text_of("mixed", rng, rng.randint(200, 700)).strip() or "x" for _ in range(12))
    assert len(text) >= PARAGRAPHS_FROM_CHARS
    assert reading.remembered_paragraphs(text_key(text)) is None  # nothing counted yet
    reading.count(text)
    reading.encoded = 0
    kept = reading.remembered_paragraphs(text_key(text[:-1] + text[-1:]))  # an equal text, another string
    assert kept and reading.encoded == 0
    assert kept == reading.paragraph_prefixes(text)[:-1]
    assert all(count == reading._encode_count(text[:cut]) for cut, count in kept)


def test_paragraphs_shared_by_texts_are_encoded_once() -> None:
    reading = Reading()
    rng = random.Random(9)
    excerpts = [f"Excerpt {i}: " + " ".join(text_of("mixed", rng, rng.randint(300, 900)).split()) for i in range(20)]  # no blank line inside
    first = "[Community summary]\nOne title\n\n" + "\n\n".join(excerpts)
    second = "[Community summary]\nAnother, longer title\n\n" + "\n\n".join(reversed(excerpts))
    assert reading.count(first) == reading._encode_count(first) and reading.encoded > len(first)
    reading.encoded = 0
    assert reading.count(second) == Reading()._encode_count(second)
    assert reading.encoded < len(second) / 4, (reading.encoded, len(second))


# -- counting a body ----------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_body_counts_every_span_as_the_whole_string_does(encoding: str, kind: str) -> None:
    exact = fresh(encoding)
    rng = random.Random(f"{encoding}-{kind}")
    header = format_part_header("c1", 9999999)
    for _ in range(3):
        body = text_of(kind, rng, rng.randint(3000, 9000))
        counted = counted_body(body, _Fitter(SKELETON, 10**9, exact))
        ends = [rng.randint(1, len(body)) for _ in range(40)]
        ends += [c + d for c in counted.known.cuts[1:-1] for d in (-1, 0, 1, 2)]  # at and around the cuts
        for end in ends:
            start = rng.randint(0, end - 1)
            assert counted.count(header, start, end) == exact.count(header + body[start:end]), (start, end)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_fits_agrees_with_whole_strings_near_the_limit(kind: str) -> None:
    exact = fresh()
    rng = random.Random(kind)
    header = format_part_header("c2", 9999999)
    body = text_of(kind, rng, 8000)
    for limit_share in (0.2, 0.5, 0.9):
        whole_count = exact.count(header + body)
        budget = exact.count(SKELETON + "\n") + int(whole_count * limit_share)
        counted = counted_body(body, _Fitter(SKELETON, budget, exact))
        start = rng.randint(0, 100)
        for end in range(start + 1, len(body) + 1, 7):  # every probe a search could make, near the limit too
            expected = exact.count(SKELETON + "\n" + header + body[start:end]) <= budget
            assert counted.fits(header, start, end) == expected, (start, end)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_probe_around_the_limit_is_decided_as_the_whole_string_says(kind: str) -> None:
    """Probes asked in a random order (so each is decided from whatever earlier ones taught:
    a known cut before it, one after it, or none near), at every end around where a part stops fitting."""
    exact = fresh()
    rng = random.Random(f"every-{kind}")
    header = format_part_header("c3", 9999999)
    paragraphs = [text_of(kind, rng, rng.randint(40, 900)) for _ in range(12)]
    body = "\n\n".join(p.strip() or "x" for p in paragraphs)
    skeleton_tokens = exact.count(SKELETON + "\n")
    for share in (0.3, 0.75):
        start = rng.randint(0, 60)
        budget = skeleton_tokens + int(exact.count(header + body[start:]) * share)
        counted = counted_body(body, _Fitter(SKELETON, budget, exact))
        fits = counted.prober(header, start)
        crossing = next(end for end in range(start + 1, len(body) + 1) if exact.count(SKELETON + "\n" + header + body[start:end]) > budget)
        ends = list(range(max(start + 1, crossing - 300), min(len(body), crossing + 300) + 1))
        rng.shuffle(ends)
        for end in ends:
            expected = exact.count(SKELETON + "\n" + header + body[start:end]) <= budget
            assert fits(end - start) == expected, (share, start, end)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_part_join_is_what_a_newline_adds_to_the_whole_part(kind: str) -> None:
    exact = fresh()
    rng = random.Random(f"join-{kind}")
    body = text_of(kind, rng, 6000)
    counted = counted_body(body, _Fitter(SKELETON, 10**9, exact))
    header = format_part_header("j", 3)
    checked = 0
    for _ in range(200):
        end = rng.randint(1, len(body))
        start = rng.randint(0, end - 1)
        join = counted.join_after(header, start, end)
        if join is not None:
            part = header + body[start:end]
            assert join == exact.count(part + "\n") - exact.count(part), (start, end)
            checked += 1
    assert checked > 100


def test_what_a_body_taught_is_remembered_and_stays_exact() -> None:
    reading = Reading()
    rng = random.Random(4)
    texts = [(f"c{i}", text_of("mixed", rng, rng.randint(2000, 20000))) for i in range(12)]
    first = plan_summary_batches(texts, SKELETON, 1500, rng=random.Random(1), tokenizer=reading)
    read_first, reading.encoded = reading.encoded, 0
    again = plan_summary_batches(texts, SKELETON, 1500, rng=random.Random(1), tokenizer=reading)
    assert again == first
    assert reading.encoded < read_first / 20, (reading.encoded, read_first)
    other_budget = plan_summary_batches(texts, SKELETON, 1100, rng=random.Random(2), tokenizer=reading)
    whole = build_summary_batches(texts, SKELETON, 1100, rng=random.Random(2), tokenizer=WholeStrings(fresh()))
    assert other_budget[0] == whole


def test_a_text_planned_at_many_budgets_stays_exact_as_its_memory_is_trimmed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(body_counts, "CUT_MEMO", 8)
    monkeypatch.setattr(body_counts, "SPAN_MEMO", 2)
    exact = fresh()
    rng = random.Random(6)
    texts = [(f"c{i}", text_of("mixed", rng, rng.randint(3000, 12000))) for i in range(3)]
    whole = WholeStrings(fresh())
    for budget in range(400, 2400, 150):
        got = plan_summary_batches(texts, SKELETON, budget, rng=random.Random(budget), tokenizer=exact)
        assert got[0] == build_summary_batches(texts, SKELETON, budget, rng=random.Random(budget), tokenizer=whole), budget
        assert got[1] == [whole.count(SKELETON + "\n" + b.content) for b in got[0]]
    assert all(len(exact.prefix_counts(text).cuts) <= len(exact.prefix_counts(text).segments) + 8 + 40 for _, text in texts)


def test_remembered_counts_are_handed_out_as_copies() -> None:
    exact = fresh()
    text = "words and more words\n" * 300
    counts = exact.prefix_counts(text)
    assert counts.cuts == [0] and counts.prefix == {0: 0}
    counts.cuts.append(len(text))
    counts.prefix[len(text)] = exact.count(text)
    exact.remember_prefix_counts(text, counts)
    again = exact.prefix_counts(text)
    assert again.prefix == counts.prefix and again is not counts
    again.prefix[5] = 123
    assert 5 not in exact.prefix_counts(text).prefix
    assert isinstance(exact.prefix_counts("another text"), PrefixCounts) and exact.prefix_counts("another text").cuts == [0]


def test_a_stretch_too_long_to_encode_is_probed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(body_counts, "MAX_ENCODE_CHARS", 3000)
    exact = fresh()
    body = "1234567890" * 600 + "\nThen words follow, as words do.\n" * 20  # 6,000 digits: no safe cut
    fitter = _Fitter(SKELETON, 700, exact)
    assert counted_body(body, fitter).whole
    parts = _split_parts(MapText(community_id="d", text=body), fitter)
    assert parts == _split_parts(MapText(community_id="d", text=body), _Fitter(SKELETON, 700, WholeStrings(exact)))  # type: ignore[arg-type]
    assert exact.prefix_counts(body).cuts == [0]  # nothing half-counted is remembered


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_batches_of_each_kind_are_the_whole_string_ones(kind: str) -> None:
    exact = fresh()
    rng = random.Random(kind)
    texts = [(f"c{i}", text_of(kind, rng, rng.choice([50, 900, 4000, 15000]))) for i in range(8)]
    for budget in (300, 2000):
        batches, estimates = plan_summary_batches(texts, SKELETON, budget, rng=random.Random(3), tokenizer=exact)
        whole = WholeStrings(fresh())
        expected = build_summary_batches(texts, SKELETON, budget, rng=random.Random(3), tokenizer=whole)
        assert batches == expected
        assert estimates == [whole.count(SKELETON + "\n" + b.content) for b in expected]


class Reading(ExactTokenizer):
    """o200k_base, tallying the code points its encoder reads (remembered counts read nothing)."""

    def __init__(self) -> None:
        super().__init__("o200k_base")
        self.encoded = 0

    def _encode_count(self, text: str) -> int:
        self.encoded += len(text)
        return super()._encode_count(text)


class WholeStrings:
    """The same counts with no declared property: the engine counts whole strings, as the spec writes."""

    def __init__(self, exact: ExactTokenizer) -> None:
        self.exact, self.name = exact, "whole-" + exact.name

    def count(self, text: str) -> int:
        return self.exact.count(text)
