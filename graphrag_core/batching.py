"""Pack map texts into token-budgeted batches (spec section 5). Pure: no I/O, no model.

Invariants of :func:`build_summary_batches`: every code point of every non-blank text lands in
exactly one part, every part in exactly one batch, in shuffled order; every batch fits the
budget together with the prompt skeleton; the same random source gives the same batches.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise
from typing import Any

from pydantic import BaseModel, ConfigDict

from .context import COMMUNITY, Unit, format_part_header
from .errors import BudgetError
from .tokens import (
    MAX_ENCODE_CHARS,
    HeuristicTokenizer,
    PrefixCounts,
    Tokenizer,
    get_tokenizer,
    is_cut_additive,
    is_safe_cut,
    join_tokens,
    last_safe_cut,
    next_safe_cut,
    spaced_safe_cuts,
)

PART_HEADER_PLACEHOLDER = "9999999"
"""Only for sizing: the header of a part is measured with this part number, whatever its own."""


class MapText(BaseModel):
    """The map text of one selected community."""

    model_config = ConfigDict(frozen=True, coerce_numbers_to_str=True)

    community_id: str
    text: str


class SummaryBatch(BaseModel):
    """One map call's content: parts joined by newlines, and their community ids in first-seen order."""

    model_config = ConfigDict(frozen=True, coerce_numbers_to_str=True)

    content: str
    community_ids: tuple[str, ...]


def shuffle_in_place(items: list[Any], rng: random.Random) -> None:
    """Fisher-Yates from the end: for i = n-1..1, j = floor(r * (i + 1)), swap i and j."""
    for i in range(len(items) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        items[i], items[j] = items[j], items[i]


def _as_map_text(item: Any) -> MapText:
    if isinstance(item, MapText):
        return item
    if isinstance(item, tuple | list) and len(item) == 2:
        return MapText(community_id=item[0], text=item[1])
    return MapText(community_id=item.community_id, text=item.text)


class _Fitter:
    """Answers ``fits(content)`` for one skeleton and budget: ``count(skeleton + "\\n" + content) <= budget``.

    With the additive heuristic the skeleton is measured once and pieces are measured
    separately; with a cut-additive tokenizer (the exact encodings) the skeleton is counted once
    and every content starting at a safe cut is counted on its own (parts start with ``[``);
    otherwise the whole string is counted each time, so any tokenizer works.
    """

    def __init__(self, skeleton: str, budget: int, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.budget = budget
        self.prefix = skeleton + "\n"
        self.heuristic = tokenizer if isinstance(tokenizer, HeuristicTokenizer) else None
        self.additive = self.heuristic is not None
        self.cut_additive = not self.additive and is_cut_additive(tokenizer)
        self.prefix_measure = self.measure(self.prefix) if self.additive else (0, 0)
        self.prefix_tokens = tokenizer.count(self.prefix) if self.cut_additive else 0
        max_token = getattr(tokenizer, "max_token_chars", None)
        self.max_run: int | None = budget * max_token if isinstance(max_token, int) and max_token > 0 else None
        """No run longer than this fits: each token covers at most ``max_token_chars`` code points."""

    def measure(self, text: str) -> tuple[int, int]:
        """The additive measure of ``text`` (only with the heuristic tokenizer)."""
        assert self.heuristic is not None
        return self.heuristic.measure(text)

    def fits(self, content: str) -> bool:
        if self.cut_additive and content.startswith("["):
            return self.prefix_tokens + self.tokenizer.count(content) <= self.budget
        return self.tokenizer.count(self.prefix + content) <= self.budget

    def fits_measure(self, ascii_count: int, cjk_count: int) -> bool:
        a, c = self.prefix_measure
        return HeuristicTokenizer.total(a + ascii_count, c + cjk_count) <= self.budget

    @property
    def content_budget(self) -> int:
        """Tokens left for the content once the skeleton is counted (cut-additive tokenizers)."""
        return self.budget - self.prefix_tokens


_UNIT_NAMES: dict[str, str] = {COMMUNITY: "community summary", "source": "source chunk"}
"""How a budget error names a unit: ``... too small for community summary 12.`` (the spec's) or ``source chunk 12``."""


def _split_parts(text: MapText, fitter: _Fitter, unit: Unit = COMMUNITY) -> list[str]:
    """Split one text into the longest code point runs whose header-plus-run fits the budget.

    Each run is the largest ``k`` with ``fits(header + next k code points)`` (spec section 5).
    Work is linear in the text's length with the additive (heuristic) tokenizer; with a
    cut-additive one the spec's binary search runs as written over counts made of memoized
    segment counts (:class:`_CountedBody`), so each code point is encoded a bounded number of
    times; with any other tokenizer the spec's binary search runs as written, except that probes
    longer than any fitting run can be (``_Fitter.max_run``) are known to fail and are not counted.
    """
    return [run for run, _, _ in _split_counted(text, fitter, unit)]


def _split_counted(text: MapText, fitter: _Fitter, unit: Unit = COMMUNITY) -> list[tuple[str, int | None, int | None]]:
    """The runs of :func:`_split_parts`, each with the count of its part (real header and run)
    and what a newline after the part adds, when the tokenizer is cut-additive (else None)."""
    header = format_part_header(text.community_id, PART_HEADER_PLACEHOLDER, unit=unit)
    body = text.text
    if not body.strip():
        return []
    counted = _CountedBody(body, fitter) if fitter.cut_additive else None
    runs: list[tuple[str, int | None, int | None]] = []
    offset = 0
    n = len(body)
    number = 0
    while offset < n:
        if fitter.additive:
            k = _longest_run_additive(body, offset, header, fitter)
        elif counted is not None:
            k = _longest_run_searched(n - offset, counted.prober(header, offset))
        else:
            k = _longest_run_searched(n - offset, _probe(body, offset, header, fitter))
        if k == 0:
            raise BudgetError(f"Map token budget is too small for {_UNIT_NAMES[unit]} {text.community_id}.")
        number += 1
        tokens = join = None
        if counted is not None:
            real_header = format_part_header(text.community_id, number, unit=unit)
            tokens = counted.count(real_header, offset, offset + k)
            join = counted.join_after(real_header, offset, offset + k)
        runs.append((body[offset : offset + k], tokens, join))
        offset += k
    if counted is not None:
        counted.remember(fitter.tokenizer)
    return runs


FIRST_RUN = 512
"""Code points a part's search tries first; the run then doubles while it still fits."""


def _longest_run_additive(body: str, offset: int, header: str, fitter: _Fitter) -> int:
    """The largest ``k`` whose run fits, measuring each code point O(1) times.

    Measures add up, so the run grows by doubling steps while it fits, and the step that does
    not fit is bisected by measuring only the half being added. Fitting is monotone in ``k``
    (a longer run never counts fewer tokens), so this is the same ``k`` a binary search finds.
    """
    n = len(body)
    a, c = fitter.measure(header)
    position, step = offset, FIRST_RUN
    while position < n:
        end = min(n, position + step)
        da, dc = fitter.measure(body[position:end])
        if fitter.fits_measure(a + da, c + dc):
            a, c, position, step = a + da, c + dc, end, step * 2
            continue
        low, high = position, end  # a run to `low` fits, a run to `high` does not
        while high - low > 1:
            middle = (low + high) // 2
            da, dc = fitter.measure(body[low:middle])
            if fitter.fits_measure(a + da, c + dc):
                a, c, low = a + da, c + dc, middle
            else:
                high = middle
        return low - offset
    return n - offset


def _probe(body: str, offset: int, header: str, fitter: _Fitter) -> Callable[[int], bool]:
    """``fits(header + next k code points)`` for any tokenizer, skipping probes that cannot fit."""
    bound = fitter.max_run

    def fits_run(k: int) -> bool:
        if bound is not None and k > bound:
            return False  # more code points than the budget can hold, whatever the tokenizer
        return fitter.fits(header + body[offset : offset + k])

    return fits_run


def _longest_run_searched(remaining: int, fits_run: Callable[[int], bool]) -> int:
    """The spec's binary search for any tokenizer (a count need not be additive or monotone)."""
    if fits_run(remaining):
        return remaining
    low, high = 0, remaining - 1  # the largest fitting k lies in [low, high]
    while low < high:
        middle = (low + high + 1) // 2
        if fits_run(middle):
            low = middle
        else:
            high = middle - 1
    return low


SEGMENT_CHARS = 4096
"""About how many code points lie between two of the safe cuts a map text is first counted at."""
SPAN_MEMO = 32
SPACE_REACH = 64
"""How far back from a probe a space between letters is looked for first."""
"""Tail counts a text's :class:`~graphrag_core.tokens.PrefixCounts` keeps."""


class _CountedBody:
    """One map text's body for a cut-additive tokenizer: ``count(header + body[start:end])``
    exactly, from counts of the pieces between safe cuts (``tokens.is_safe_cut``).

    The body is cut about every :data:`SEGMENT_CHARS` code points (after newlines where it can
    be, so equal stretches of text are cut alike and the tokenizer remembers their counts) and
    each segment is counted once. A count is then a head (the header and the body up to the
    first safe cut), a difference of prefix counts and a tail after the last safe cut. A probe
    that the known prefix counts decide (a tail counts at least 0 and at most its UTF-8 bytes)
    encodes nothing; another makes the safe cut before it known by counting the shorter way
    from a known one, so the cuts a search needs close in on its answer and each costs a piece
    of text about as long as the last step of the search. What is learnt is handed back to the
    tokenizer (:meth:`remember`), so the same text planned again reads almost nothing.
    """

    def __init__(self, body: str, fitter: _Fitter) -> None:
        tokenizer = fitter.tokenizer
        self.body = body
        self.count_text = tokenizer.count
        self.limit = fitter.content_budget
        self.max_run = fitter.max_run
        self.ascii = body.isascii()
        recall = getattr(tokenizer, "prefix_counts", None)
        self.known: PrefixCounts = recall(body) if callable(recall) else PrefixCounts()
        self.whole = False
        """A stretch too long to encode has no safe cut: probes count whole strings, as the spec writes."""
        if len(self.known.cuts) == 1:
            self.whole = not self._count_segments()
        self.prefix = self.known.prefix
        self._headers: dict[str, int] = {}

    def _count_segments(self) -> bool:
        """Count the segments; False (counting nothing) when one is too long to encode."""
        body, cuts, prefix = self.body, self.known.cuts, self.known.prefix
        bounds = [0, *spaced_safe_cuts(body, SEGMENT_CHARS), len(body)]
        if any(right - left > MAX_ENCODE_CHARS for left, right in pairwise(bounds)):
            return False
        total = 0
        for left, right in pairwise(bounds):
            total += self.count_text(body[left:right])
            prefix[right] = total
            cuts.append(right)
        return True

    def remember(self, tokenizer: Tokenizer) -> None:
        """Hand what was learnt of the body's counts back to ``tokenizer`` (when it keeps them)."""
        keep = getattr(tokenizer, "remember_prefix_counts", None)
        if callable(keep) and not self.whole:
            for memo in (self.known.spans, self.known.joins, self.known.heads):
                if len(memo) > SPAN_MEMO:
                    memo.clear()
            keep(self.body, self.known)

    def _usable(self, cut: int, end: int) -> bool:
        """Whether the safe cut ``cut`` splits a span ending at ``end`` additively (a cut between
        letters needs the letter after it)."""
        return cut == end or cut + 1 < end or self.body[cut - 1] == "\n"

    def _known_before(self, end: int, low: int) -> int:
        """The largest known cut in ``[low, end]`` usable for a span ending at ``end`` (``low``,
        a known cut, is)."""
        cuts = self.known.cuts
        at = bisect.bisect_right(cuts, end) - 1
        while cuts[at] > low and not self._usable(cuts[at], end):
            at -= 1
        return cuts[at]

    def _learn(self, cut: int) -> int:
        """``count(body[:cut])`` for a safe cut, counting the shorter way from a known neighbour."""
        prefix = self.prefix
        known = prefix.get(cut)
        if known is not None:
            return known
        cuts = self.known.cuts
        at = bisect.bisect_right(cuts, cut)
        left, right = cuts[at - 1], cuts[at]
        if cut - left <= right - cut:
            known = prefix[left] + self.count_text(self.body[left:cut])
        else:
            known = prefix[right] - self.count_text(self.body[cut:right])
        prefix[cut] = known
        cuts.insert(at, cut)
        return known

    def _head(self, header: str, start: int) -> tuple[int | None, int]:
        """``(cut, count(header + body[start:cut]) - count(body[:cut]))`` for the first known cut
        at or after ``start`` that the header does not change (``(None, 0)`` when there is none)."""
        key = (header, start)
        heads = self.known.heads
        known = heads.get(key)
        if known is None:
            if start in self.prefix and is_safe_cut(header + self.body[start], len(header)):
                known = (start, self._header_count(header) - self.prefix[start])
            else:
                cut = next_safe_cut(self.body, start)
                known = (None, 0) if cut is None else (cut, self.count_text(header + self.body[start:cut]) - self._learn(cut))
            heads[key] = known
        return known

    def _adds_up(self, cut: int | None, start: int, end: int) -> bool:
        """Whether a span from ``start`` to ``end`` adds up from the head's ``cut``."""
        return cut is not None and cut <= end and (cut == start or cut == end or self._usable(cut, end))

    def _last_safe(self, end: int, low: int) -> int:
        """A safe cut in ``[low, end]`` usable for a span ending at ``end``, as late as a short
        search finds (the last space between letters, else :func:`~graphrag_core.tokens.last_safe_cut`),
        and never before the last known one."""
        return self._safe_after(self._known_before(end, low), end)

    def _safe_after(self, known: int, end: int) -> int:
        """A safe cut in ``[known, end]`` usable for a span ending at ``end`` (``known`` is one),
        as late as a short search finds."""
        body = self.body
        space = body.rfind(" ", max(known + 1, end - SPACE_REACH), end - 1)
        if space > known and body[space - 1].isalpha() and body[space + 1].isalpha():
            return space  # a space between letters is a safe cut, and usable before end - 1
        cut = last_safe_cut(body, end, known)
        if cut is not None and not self._usable(cut, end):
            cut = last_safe_cut(body, end - 2, known)
        return known if cut is None else cut

    def _tail(self, cut: int, end: int) -> int:
        """``count(body[cut:end])``, remembered."""
        spans = self.known.spans
        tail = spans.get((cut, end))
        if tail is None:
            tail = spans[(cut, end)] = self.count_text(self.body[cut:end])
        return tail

    def count(self, header: str, start: int, end: int) -> int:
        """``count(header + body[start:end])`` (``header`` ends with a newline)."""
        low, base = self._head(header, start) if start < end and not self.whole else (None, 0)
        if low is None or not self._adds_up(low, start, end):
            return self.count_text(header + self.body[start:end])
        cut = self._last_safe(end, low)
        return base + self._learn(cut) + (self._tail(cut, end) if cut < end else 0)

    def join_after(self, header: str, start: int, end: int) -> int | None:
        """``count(part + "\\n") - count(part)`` for the part ``header + body[start:end]``, read
        from its tail after a safe cut; None when the part has no usable one."""
        if self.whole or end - start < 3:
            return None
        known = self.known.joins.get(end)
        if known is None:
            cut = self._last_safe(end - 1, start)
            if cut <= start or not self._usable(cut, end):
                return None
            known = self.known.joins[end] = self.count_text(self.body[cut:end] + "\n") - self._tail(cut, end)
        return known

    def fits(self, header: str, start: int, end: int) -> bool:
        """``count(header + body[start:end]) <= limit``."""
        return self.prober(header, start)(end - start)

    def prober(self, header: str, start: int) -> Callable[[int], bool]:
        """``fits(k)``: whether ``count(header + body[start:start + k]) <= limit``, encoding only
        what the known counts leave open."""
        limit, max_run, body, count_text = self.limit, self.max_run, self.body, self.count_text
        low, base = self._head(header, start) if not self.whole else (None, 0)
        cuts, prefix, usable, ascii_only = self.known.cuts, self.prefix, self._usable, self.ascii

        def fits_run(k: int) -> bool:
            if max_run is not None and k > max_run:
                return False  # more code points than the budget can hold
            end = start + k
            if k == 0 or low is None or low > end or (start < low < end and not usable(low, end)):
                return count_text(header + body[start:end]) <= limit
            at = bisect.bisect_right(cuts, end) - 1
            while cuts[at] > low and not usable(cuts[at], end):
                at -= 1
            last = cuts[at]
            known = base + prefix[last]
            if known > limit:
                return False  # the tail counts at least nothing
            if last == end or known + (end - last if ascii_only else self._bytes(last, end)) <= limit:
                return True  # the tail counts at most its bytes
            return self._decide(base, last, end)

        return fits_run

    def _decide(self, base: int, last: int, end: int) -> bool:
        """``base + count(body[:end]) <= limit`` where the known cuts left it open (``last`` is
        the last known cut the span adds up from)."""
        cut = self._safe_after(last, end)
        cuts = self.known.cuts
        after = cuts[bisect.bisect_left(cuts, cut)]  # count(body[:cut]) is at most its count
        if base + self.prefix[after] + self._bytes(cut, end) <= self.limit:
            return True
        known = base + self._learn(cut)
        if cut == end:
            return known <= self.limit
        if known + 1 > self.limit:
            return False  # a tail of one code point or more counts at least one token
        if known + self._bytes(cut, end) <= self.limit:
            return True
        return known + self._tail(cut, end) <= self.limit

    def _bytes(self, start: int, end: int) -> int:
        """UTF-8 bytes of ``body[start:end]``: no text counts more tokens than it has bytes."""
        if self.ascii:
            return end - start
        return len(self.body[start:end].encode("utf-8", "surrogatepass"))

    def _header_count(self, header: str) -> int:
        known = self._headers.get(header)
        if known is None:
            known = self._headers[header] = self.count_text(header)
        return known


def build_summary_batches(
    texts: Iterable[Any],
    prompt_skeleton: str,
    prompt_budget: int,
    *,
    rng: random.Random | None = None,
    tokenizer: Tokenizer | None = None,
    unit: Unit = COMMUNITY,
) -> list[SummaryBatch]:
    """Shuffle the map texts, split them into budgeted parts and pack the parts greedily.

    ``texts`` holds objects with ``community_id`` and ``text``, or ``(community_id, text)``
    pairs. ``rng`` defaults to a fresh ``random.Random()``; pass a seeded one to repeat a run.
    ``unit`` says what the texts are: community map texts (``[Community ID: ...]`` parts) or
    source chunks (``[Source ID: ...]`` parts, the ``text`` method); the packing is the same.
    Raises :class:`BudgetError` when the skeleton alone, or one code point of a text with its
    header, does not fit.
    """
    return plan_summary_batches(texts, prompt_skeleton, prompt_budget, rng=rng, tokenizer=tokenizer, unit=unit)[0]


def plan_summary_batches(
    texts: Iterable[Any],
    prompt_skeleton: str,
    prompt_budget: int,
    *,
    rng: random.Random | None = None,
    tokenizer: Tokenizer | None = None,
    unit: Unit = COMMUNITY,
) -> tuple[list[SummaryBatch], list[int]]:
    """:func:`build_summary_batches` and each batch's prompt tokens (what
    :func:`estimate_batches` returns), counted while packing when the tokenizer allows it:
    a batch's count is its parts' counts plus its joins, so no batch is read twice."""
    tokenizer = tokenizer or get_tokenizer()
    rng = rng if rng is not None else random.Random()
    fitter = _Fitter(prompt_skeleton, prompt_budget, tokenizer)
    if not fitter.fits(""):
        raise BudgetError("Map token budget cannot fit the Map prompt.")

    items = [_as_map_text(t) for t in texts]
    shuffle_in_place(items, rng)

    batches: list[SummaryBatch] = []
    estimates: list[int | None] = []
    current: list[str] = []
    current_ids: dict[str, None] = {}
    current_measure = (0, 0)
    current_tokens = 0  # cut-additive: the count of prefix + the current batch's content
    last_join = 0  # cut-additive: what the newline after the current batch's last part adds

    def flush() -> None:
        if current:
            batches.append(SummaryBatch(content="\n".join(current), community_ids=tuple(current_ids)))
            if fitter.additive:
                a, c = fitter.prefix_measure
                estimates.append(HeuristicTokenizer.total(a + current_measure[0], c + current_measure[1]))
            else:
                estimates.append(current_tokens if fitter.cut_additive else None)
            current.clear()
            current_ids.clear()

    for item in items:
        for number, (run, part_tokens, part_join) in enumerate(_split_counted(item, fitter, unit), start=1):
            part = format_part_header(item.community_id, number, unit=unit) + run
            if fitter.additive:
                a, c = fitter.measure(part)
                joined = (current_measure[0] + a + 1, current_measure[1] + c) if current else (a, c)
                fits_current = fitter.fits_measure(*joined)
            elif part_tokens is not None:
                tokens = current_tokens + last_join + part_tokens if current else fitter.prefix_tokens + part_tokens
                fits_current = tokens <= fitter.budget
            else:
                joined_text = "\n".join([*current, part])
                fits_current = fitter.fits(joined_text)
            if not fits_current:
                flush()
                if fitter.additive:
                    joined = (a, c)
                    fits_alone = fitter.fits_measure(a, c)
                elif part_tokens is not None:
                    tokens = fitter.prefix_tokens + part_tokens
                    fits_alone = tokens <= fitter.budget
                else:
                    fits_alone = fitter.fits(part)
                if not fits_alone:
                    what = "a summary part" if unit == COMMUNITY else "a source chunk part"
                    raise BudgetError(f"Map token budget cannot fit {what} for {item.community_id}.")
            current.append(part)
            current_ids.setdefault(item.community_id, None)
            if fitter.additive:
                current_measure = joined
            elif part_tokens is not None:
                current_tokens = tokens
                last_join = part_join if part_join is not None else join_tokens(part, "\n", tokenizer)
    flush()
    if any(estimate is None for estimate in estimates):
        return batches, estimate_batches(batches, prompt_skeleton, tokenizer=tokenizer)
    return batches, [e for e in estimates if e is not None]


def estimate_batches(batches: Sequence[SummaryBatch], prompt_skeleton: str, *, tokenizer: Tokenizer | None = None) -> list[int]:
    """The prompt token estimate of each batch: ``count(skeleton + "\\n" + content)``."""
    tokenizer = tokenizer or get_tokenizer()
    return [tokenizer.count(prompt_skeleton + "\n" + b.content) for b in batches]
