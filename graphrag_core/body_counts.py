"""Exact counts of one map text's spans for a cut-additive tokenizer, at about one read of it.

The batcher's binary search (spec section 5) asks, for one text and one part header, whether
``header + text[start:end]`` fits a token limit, for about twenty ``end`` per part. Counting
each probe whole reads the text once per probe; :class:`CountedBody` answers from counts of the
pieces between safe cuts (:func:`graphrag_core.tokens.is_safe_cut`), exact by cut-additivity,
encoding a little text per part, and hands what it learnt back to the tokenizer.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from itertools import pairwise

from .tokens import (
    MAX_ENCODE_CHARS,
    PrefixCounts,
    Tokenizer,
    is_safe_cut,
    last_safe_cut,
    next_safe_cut,
    spaced_safe_cuts,
    text_key,
)

SEGMENT_CHARS = 4096
"""About how many code points lie between two of the safe cuts a map text is first counted at."""
SPAN_MEMO = 32
"""Tails, joins and heads a text's :class:`~graphrag_core.tokens.PrefixCounts` keeps of each kind."""
CUT_MEMO = 512
"""Learnt cuts a text's :class:`~graphrag_core.tokens.PrefixCounts` keeps beside its segments."""
SPACE_REACH = 64
"""How far back from a probe a space between letters is looked for first."""


class CountedBody:
    """One map text's body for a cut-additive tokenizer: ``count(header + body[start:end])``
    exactly, from counts of the pieces between safe cuts (``tokens.is_safe_cut``).

    The body is cut about every :data:`SEGMENT_CHARS` code points (after newlines where it can
    be, so equal stretches of text are cut alike and the tokenizer remembers their counts) and
    each segment is counted once. A count is then a head (the header and the body up to the
    first safe cut), a difference of prefix counts and a tail after the last safe cut. A probe
    that the known prefix counts decide (a tail counts at least 0 and at most its UTF-8 bytes,
    and the count up to a safe cut is at most the count up to any later one) encodes nothing;
    another makes the safe cut before it known by counting the shorter way
    from a known one, so the cuts a search needs close in on its answer and each costs a piece
    of text about as long as the last step of the search. What is learnt is handed back to the
    tokenizer (:meth:`remember`), so the same text planned again reads almost nothing.
    """

    def __init__(self, body: str, tokenizer: Tokenizer, *, limit: int, max_run: int | None = None) -> None:
        self.body = body
        self.count_text = tokenizer.count
        paragraphs = getattr(tokenizer, "paragraph_prefixes", None)
        self.paragraphs: Callable[[str], list[tuple[int, int]]] | None = paragraphs if callable(paragraphs) else None
        recall_paragraphs = getattr(tokenizer, "remembered_paragraphs", None)
        self.recall_paragraphs: Callable[[int], list[tuple[int, int]] | None] | None = (
            recall_paragraphs if callable(recall_paragraphs) else None
        )
        self.limit = limit
        self.max_run = max_run
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
        keys = self.known.segment_keys
        for left, right in pairwise(bounds):
            segment = body[left:right]
            total += self.count_text(segment)
            prefix[right] = total
            cuts.append(right)
            keys.append(text_key(segment))  # the count just read it: its hash is kept
        self.known.segments = list(cuts)
        return True

    def _expand(self, end: int) -> None:
        """Make the paragraph cuts of the segment holding ``end`` known, from counts the
        tokenizer remembers of the segment's paragraphs (nothing is encoded again when it does)."""
        segments, known = self.known.segments, self.known
        at = bisect.bisect_right(segments, end) - 1
        if at + 1 >= len(segments) or segments[at] in known.expanded or self.paragraphs is None:
            return
        left, right = segments[at], segments[at + 1]
        known.expanded.add(left)
        base = self.prefix[left]
        paragraphs = None
        if self.recall_paragraphs is not None and at < len(known.segment_keys):
            paragraphs = self.recall_paragraphs(known.segment_keys[at])
        if paragraphs is None:
            paragraphs = self.paragraphs(self.body[left:right])[:-1]
        for cut, count in paragraphs:
            if left + cut not in self.prefix:
                self.prefix[left + cut] = base + count
                bisect.insort(known.cuts, left + cut)

    def remember(self, tokenizer: Tokenizer) -> None:
        """Hand what was learnt of the body's counts back to ``tokenizer`` (when it keeps them)."""
        keep = getattr(tokenizer, "remember_prefix_counts", None)
        if callable(keep) and not self.whole:
            known = self.known
            for memo in (known.spans, known.joins, known.heads):
                if len(memo) > SPAN_MEMO:
                    memo.clear()
            if len(known.cuts) > len(known.segments) + CUT_MEMO:
                known.cuts, known.expanded = list(known.segments), set()
                known.prefix = {cut: known.prefix[cut] for cut in known.segments}
                known.spans, known.joins, known.heads = {}, {}, {}
            keep(self.body, known)

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
        reach = max(known + 1, end - SPACE_REACH)
        space = body.rfind(" ", reach, end - 1)
        while space > known:
            if body[space - 1].isalpha() and body[space + 1].isalpha():
                return space  # a space between letters is a safe cut, and usable before end - 1
            space = body.rfind(" ", reach, space)
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
            if last == end or (known + end - last <= limit and (ascii_only or known + self._bytes(last, end) <= limit)):
                return True  # the tail counts at most its bytes (and has at least as many as code points)
            return self._decide(base, last, end)

        return fits_run

    def _decide(self, base: int, last: int, end: int) -> bool:
        """``base + count(body[:end]) <= limit`` where the known cuts left it open (``last`` is
        the last known cut the span adds up from)."""
        self._expand(end)
        cut = self._safe_after(self._known_before(end, last), end)
        cuts = self.known.cuts
        after = cuts[bisect.bisect_left(cuts, end)]  # count(body[:cut]) <= count(body[:after]): both are safe cuts
        if after != cut and self._usable(cut, after) and self._within(base + self.prefix[after], cut, end):
            return True
        known = base + self._learn(cut)
        if cut == end:
            return known <= self.limit
        if known + 1 > self.limit:
            return False  # a tail of one code point or more counts at least one token
        if self._within(known, cut, end):
            return True
        return known + self._tail(cut, end) <= self.limit

    def _within(self, known: int, start: int, end: int) -> bool:
        """Whether ``known`` plus the most ``body[start:end]`` can count (its UTF-8 bytes) is
        within the limit; the bytes are read only when the code points alone are."""
        return known + end - start <= self.limit and (self.ascii or known + self._bytes(start, end) <= self.limit)

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
