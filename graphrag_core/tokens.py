"""Token counting: the spec's heuristic estimate, exact OpenAI encodings, and which to use.

The engine only needs ``Tokenizer.count``. Two further properties let planners count a text
once instead of re-reading whole strings:

- *additive* (the heuristic): the count of a concatenation is a function of per-piece measures
  (``measure``/``total``);
- *cut-additive* (the exact encodings, ``cut_additive = True``): ``count(a + b) == count(a) +
  count(b)`` whenever ``len(a)`` is a safe cut of ``a + b`` (:func:`is_safe_cut`): after a
  newline that is followed by neither whitespace nor ``/``, or at a single separator (a space or
  punctuation, not ``'``) between two letters. Both encodings split text into pieces with a
  regular expression before merging bytes, and no piece crosses such a cut.

``"auto"`` (the default setting) is the estimate for the offline model, where it is the
spec's, and an exact count for a real endpoint (:func:`tokenizer_for`).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

HEURISTIC = "heuristic"
EXACT_ENCODINGS = ("cl100k_base", "o200k_base")
DEFAULT_EXACT = "o200k_base"
"""The exact encoding a real endpoint is counted with when it offers no count of its own."""
ENDPOINT = "endpoint"
"""Count with the model server's own tokenizer (llama-cpp-python's ``/extras/tokenize``, llama.cpp's
and vLLM's ``/tokenize``)."""
AUTO = "auto"
"""The model decides: the estimate offline, the server's own count for a local server that
offers one, else :data:`DEFAULT_EXACT` (see :func:`tokenizer_for`)."""
TOKENIZER_NAMES = (AUTO, HEURISTIC, *EXACT_ENCODINGS, ENDPOINT)

MAX_ENCODE_CHARS = 500_000
"""Longer texts are counted in pieces cut at safe cuts (the encoder refuses 1,000,000 code points)."""


def is_safe_cut(text: str, i: int) -> bool:
    """Whether ``count(text) == count(text[:i]) + count(text[i:])`` for a cut-additive tokenizer.

    True after a newline followed by a character that is neither whitespace nor ``/``, and at a
    separator (not a letter, mark, digit, newline or ``'``) between two letters."""
    if i <= 0 or i >= len(text):
        return False
    before, at = text[i - 1], text[i]
    if before == "\n":
        return not at.isspace() and at != "/"
    return (
        i + 1 < len(text)
        and before.isalpha()
        and text[i + 1].isalpha()
        and at not in "\r\n'"
        and unicodedata.category(at)[0] not in "LMN"
    )


_SEPARATOR_CUT = re.compile(r"(?<=[^\W\d_])[ ,.;:!?()\"\-\u3001\u3002\uff0c\uff1b\uff1a\uff01\uff1f](?=[^\W\d_])")
"""Candidates for the second kind of safe cut (each is checked with :func:`is_safe_cut`)."""
CUT_SEARCH_CHARS = 512
"""How far back from a position :func:`last_safe_cut` looks for a separator between letters."""


def last_safe_cut(text: str, end: int, start: int = 0) -> int | None:
    """The largest safe cut ``i`` with ``start < i <= end`` and ``i < len(text)``, preferring a
    newline within reach; None when there is none (a cut at ``end`` needs ``text[end]``)."""
    end = min(end, len(text) - 1)
    best = _last_newline_cut(text, start, end)
    low = max(start, end - CUT_SEARCH_CHARS, best or 0)
    high, window = end, 32
    while high > low:  # windows growing back from `end`: the last separator is usually near it
        first = max(low, high - window)
        for match in reversed(list(_SEPARATOR_CUT.finditer(text, first, high + 2))):
            if start < match.start() <= end and is_safe_cut(text, match.start()):
                return match.start()
        high, window = first, window * 4
    return best


def _last_newline_cut(text: str, start: int, end: int) -> int | None:
    """The largest cut after a newline (a safe cut) ``i`` with ``start < i <= end``, or None."""
    newline = text.rfind("\n", start, end)
    while newline >= start:
        if is_safe_cut(text, newline + 1):
            return newline + 1
        newline = text.rfind("\n", start, newline)
    return None


def next_safe_cut(text: str, start: int, stop: int | None = None) -> int | None:
    """The smallest ``i`` with ``start < i < stop`` that is a safe cut of ``text[:stop]`` after a
    newline or at a separator :data:`_SEPARATOR_CUT` looks for (``stop`` defaults to the text's
    length), or None."""
    stop = len(text) if stop is None else min(stop, len(text))
    found: int | None = None
    newline = text.find("\n", start, stop - 1)
    while newline != -1:
        if is_safe_cut(text, newline + 1):
            found = newline + 1
            break
        newline = text.find("\n", newline + 1, stop - 1)
    match = _SEPARATOR_CUT.search(text, start + 1, found if found is not None else stop)
    while match is not None:
        if is_safe_cut(text, match.start()):
            return match.start()
        match = _SEPARATOR_CUT.search(text, match.start() + 1, found if found is not None else stop)
    return found


_PARAGRAPH_CUT = re.compile(r"\n\n(?=[^\s/])")
"""A blank line before a character that makes the cut after it safe (:func:`is_safe_cut`: after a
newline, neither whitespace, as ``str.isspace`` has it, nor ``/``)."""


def _paragraph_cuts(text: str) -> list[int]:
    """The safe cuts after blank lines, each at least :data:`PARAGRAPH_CHARS` after the one
    before (and after the text's start)."""
    cuts: list[int] = []
    search = _PARAGRAPH_CUT.search
    found = search(text, PARAGRAPH_CHARS - 2)
    while found is not None:
        cut = found.start() + 2
        cuts.append(cut)
        found = search(text, cut + PARAGRAPH_CHARS - 2)
    return cuts


def spaced_safe_cuts(text: str, spacing: int, start: int = 0, stop: int | None = None) -> list[int]:
    """Safe cuts of ``text[:stop]`` strictly between ``start`` and ``stop`` (default: its length), in
    order, about ``spacing`` code points apart: each the last cut after a newline within
    ``spacing`` of the one before, else the last safe cut there, else the next one further on.

    Preferring newlines makes the cuts depend on the text more than on where it starts, so two
    texts that share a stretch (the same source excerpt, the same map text planned again) tend
    to be cut alike inside it."""
    stop = len(text) if stop is None else stop
    cuts: list[int] = []
    position = start
    while stop - position > spacing:
        target = position + spacing
        cut = _last_newline_cut(text, position, target)
        if cut is None:
            cut = last_safe_cut(text, min(target, stop - 2), position)  # a cut between letters needs the next one
        if cut is None:
            cut = next_safe_cut(text, target, stop)
            if cut is None:
                break
        cuts.append(cut)
        position = cut
    return cuts


def join_tokens(text: str, separator: str, tokenizer: Tokenizer) -> int:
    """``count(text + separator) - count(text)`` for a cut-additive tokenizer: what joining
    ``text`` to a following text that starts at a safe cut adds, read from ``text``'s tail."""
    cut = last_safe_cut(text, len(text) - 1)
    tail = text[cut:] if cut is not None else text
    return tokenizer.count(tail + separator) - tokenizer.count(tail)


def text_key(text: str) -> int:
    """The key an exact tokenizer remembers a text's counts by: its hash and its length in one
    integer (``hash * 2**32 + length``: both recoverable, and an integer, unlike a tuple, is no
    object the garbage collector tracks). A string keeps its hash, so asking again costs nothing."""
    return hash(text) << 32 | len(text)


@runtime_checkable
class Tokenizer(Protocol):
    name: str

    def count(self, text: str) -> int: ...


def _ascii_count(text: str) -> int:
    # encode() with errors="ignore" drops every code point >= 128 at C speed.
    return len(text) if text.isascii() else len(text.encode("ascii", "ignore"))


def estimate_tokens(text: str) -> int:
    """``ceil(cjk / 1.8 + ascii / 4)`` over code points (spec section 4), in exact arithmetic.

    A code point below 128 counts as ASCII, any other as CJK. ``cjk / 1.8 + ascii / 4`` equals
    ``(20 * cjk + 9 * ascii) / 36``, so the ceiling is taken on integers and never suffers from
    floating-point rounding.
    """
    ascii_count = _ascii_count(text)
    return _total(ascii_count, len(text) - ascii_count)


def _total(ascii_count: int, cjk_count: int) -> int:
    return -(-(20 * cjk_count + 9 * ascii_count) // 36)


class HeuristicTokenizer:
    """The spec's estimate. Additive: a measure is ``(ascii, cjk)`` code point counts."""

    name = HEURISTIC

    def count(self, text: str) -> int:
        return estimate_tokens(text)

    def measure(self, text: str) -> tuple[int, int]:
        ascii_count = _ascii_count(text)
        return ascii_count, len(text) - ascii_count

    @staticmethod
    def total(ascii_count: int, cjk_count: int) -> int:
        return _total(ascii_count, cjk_count)


LONGEST_TOKEN_BYTES = {"cl100k_base": 128, "o200k_base": 128}
"""The byte length of each encoding's longest token (``max(len(b) for b in token_byte_values())``),
so bounding a run needs no rank table."""
REMEMBER_CHARS = 512
"""Counts of texts at least this long are remembered (by :func:`text_key`), so planning a level
again (the run after its cost preview, another seed or question, a sweep's next point) does
not encode its map texts again."""
REMEMBERED_COUNTS = 200_000
PARAGRAPH_CHARS = 256
"""A long text counted for the first time is counted paragraph by paragraph, in runs at least this long."""
PARAGRAPHS_FROM_CHARS = 2048
"""Texts at least this long (a planner's segments, not a reduce candidate) are counted by paragraphs."""


REMEMBERED_TEXTS = 20_000
"""How many texts' :class:`PrefixCounts` an exact tokenizer keeps."""


class PrefixCounts:
    """What is known of one text's counts, filled in by whoever reads it (a planner).

    ``prefix[cut]`` is ``count(text[:cut])`` for ``cut`` 0, the text's length, and safe cuts of
    the text (:func:`is_safe_cut`); ``cuts`` lists them in order. ``spans[(cut, end)]`` is
    ``count(text[cut:end])`` for a cut among them and a position after it; ``joins[end]`` is
    ``count(text[start:end] + "\\n") - count(text[start:end])`` for any ``start`` before a safe
    cut that such a span adds up from; ``heads[(header, start)]`` is the first safe cut ``cut``
    at or after ``start`` that ``header`` does not change, with
    ``count(header + text[start:cut]) - count(text[:cut])`` (``(None, 0)`` when there is none).
    """

    __slots__ = ("cuts", "expanded", "heads", "joins", "prefix", "segment_keys", "segments", "spans")

    def __init__(self) -> None:
        self.cuts: list[int] = [0]
        self.prefix: dict[int, int] = {0: 0}
        self.segments: list[int] = [0]
        """The cuts the text was first counted at (a planner's segments)."""
        self.segment_keys: list[int] = []
        """Each segment's :func:`text_key`, in order (the tokenizer finds what it remembers of them by it)."""
        self.expanded: set[int] = set()
        """Segments (by their start) whose paragraph cuts are among ``cuts``."""
        self.spans: dict[tuple[int, int], int] = {}
        self.joins: dict[int, int] = {}
        self.heads: dict[tuple[str, int], tuple[int | None, int]] = {}

    def copy(self) -> PrefixCounts:
        other = PrefixCounts()
        other.cuts, other.prefix, other.segments, other.segment_keys = list(self.cuts), dict(self.prefix), self.segments, self.segment_keys
        other.expanded, other.spans, other.joins, other.heads = set(self.expanded), dict(self.spans), dict(self.joins), dict(self.heads)
        return other


@lru_cache(maxsize=None)
def _compiled_counter(encoding: str) -> Callable[[str], int] | None:
    """The count of bpe-openai's compiled encoder for ``encoding``, loaded straight from its
    extension module (which carries the rank tables itself), so the package's import-time
    reading of every encoding is skipped; None when the module cannot be loaded that way."""
    loaded = sys.modules.get("bpe_openai._bindings")
    try:
        if loaded is None:
            spec = importlib.util.find_spec("bpe_openai")
            if spec is None or not spec.submodule_search_locations:
                return None
            path = next(Path(spec.submodule_search_locations[0]).glob("_bindings*.so"), None)
            extension = importlib.util.spec_from_file_location("bpe_openai._bindings", path) if path else None
            if extension is None or extension.loader is None:
                return None
            loaded = importlib.util.module_from_spec(extension)
            extension.loader.exec_module(loaded)
        return loaded.tokenizer_for_encoding(encoding).count
    except (ImportError, OSError, AttributeError, ValueError):
        return None


class ExactTokenizer:
    """An exact OpenAI encoding (``cl100k_base`` or ``o200k_base``), read from files that ship
    inside the ``bpe-openai`` wheel, so nothing is downloaded. Cut-additive (module docstring);
    the counts of long texts are remembered (:data:`REMEMBER_CHARS`)."""

    cut_additive = True

    def __init__(self, encoding: str) -> None:
        if encoding not in EXACT_ENCODINGS:
            raise ValueError(f"Unknown tokenizer {encoding!r}; choose one of {', '.join(TOKENIZER_NAMES)}.")
        self.name = encoding
        self._full: Any = None
        self._fast_count = _compiled_counter(encoding)
        if self._fast_count is None:
            self._fast_count = getattr(getattr(self._encoding, "_backend", None), "count", None)
        self._max_token_chars: int | None = None
        self._remembered: dict[int, int] = {}
        self._paragraphs: dict[int, list[tuple[int, int]]] = {}
        """The paragraph prefixes (:meth:`paragraph_prefixes`, without the end) of texts counted
        by paragraphs, by the same key as their counts."""
        self._prefixes: dict[int, PrefixCounts] = {}

    @property
    def _encoding(self) -> Any:
        """bpe-openai's whole encoding (token ids, byte values), loaded on first use: importing the
        package reads every encoding's rank table, seconds on a busy machine, which counting
        alone does not need."""
        if self._full is None:
            import bpe_openai

            self._full = bpe_openai.get_encoding(self.name)
        return self._full

    def count(self, text: str) -> int:
        if not text:
            return 0
        if len(text) < REMEMBER_CHARS:
            return self._encode_count(text)
        key = hash(text) << 32 | len(text)  # text_key, inline: this runs once per segment
        known = self._remembered.get(key)
        if known is None:
            if len(text) > MAX_ENCODE_CHARS:
                known = self._count_long(text)
            elif len(text) >= PARAGRAPHS_FROM_CHARS:
                known = self._count_paragraphs(text, key)
            else:
                known = self._encode_count(text)
            self._remember(key, known)
        return known

    def _remember(self, key: int, count: int) -> None:
        if len(self._remembered) >= REMEMBERED_COUNTS:
            self._remembered.clear()
            self._paragraphs.clear()
        self._remembered[key] = count

    def _count_paragraphs(self, text: str, key: int) -> int:
        """A text's count as the sum of its paragraphs' (:meth:`paragraph_prefixes`): a paragraph
        that several texts share (a source excerpt, a report) is encoded once. The prefixes are
        kept under ``key`` for :meth:`remembered_paragraphs`."""
        prefixes = self.paragraph_prefixes(text)
        self._paragraphs[key] = prefixes[:-1]
        return prefixes[-1][1]

    def remembered_paragraphs(self, text_key: int) -> list[tuple[int, int]] | None:
        """What :meth:`paragraph_prefixes` gave (without the end) for the text whose
        :func:`text_key` is ``text_key``, when :meth:`count` counted it by paragraphs and still
        remembers it; else None."""
        return self._paragraphs.get(text_key)

    def paragraph_prefixes(self, text: str) -> list[tuple[int, int]]:
        """``(cut, count(text[:cut]))`` at each cut after a blank line that is a safe cut, in runs
        of at least :data:`PARAGRAPH_CHARS` code points, and at the text's end; each run's count
        is remembered (so a text counted before is read again without encoding)."""
        prefixes, total, start = [], 0, 0
        for cut in [*_paragraph_cuts(text), len(text)]:
            total += self._count_piece(text[start:cut])
            prefixes.append((cut, total))
            start = cut
        return prefixes

    def _count_piece(self, piece: str) -> int:
        key = hash(piece) << 32 | len(piece)  # text_key, inline: this runs once per paragraph
        known = self._remembered.get(key)
        if known is None:
            known = self._encode_count(piece)
            self._remember(key, known)
        return known

    def prefix_counts(self, text: str) -> PrefixCounts:
        """A copy of what is remembered of ``text``'s counts (empty when nothing is), for the
        caller to fill in and hand back with :meth:`remember_prefix_counts`."""
        known = self._prefixes.get(text_key(text))
        return known.copy() if known is not None else PrefixCounts()

    def remember_prefix_counts(self, text: str, counts: PrefixCounts) -> None:
        """Keep ``counts`` as what is known of ``text`` (by :func:`text_key`, as counts are), so a
        text planned again is not read again; the caller no longer changes it."""
        if len(self._prefixes) >= REMEMBERED_TEXTS:
            self._prefixes.clear()
        self._prefixes[text_key(text)] = counts

    def _encode_count(self, text: str) -> int:
        if self._fast_count is not None:
            try:
                return self._fast_count(text)
            except UnicodeEncodeError:  # lone surrogates: the encoder's own path replaces them
                pass
        return len(self._encoding.encode(text, disallowed_special=()))

    def _count_long(self, text: str) -> int:
        """A long text's count as the sum of pieces cut at safe cuts (exact by cut-additivity)."""
        total, start = 0, 0
        while len(text) - start > MAX_ENCODE_CHARS:
            cut = last_safe_cut(text, start + MAX_ENCODE_CHARS, start)
            if cut is None:
                raise ValueError(
                    f"A text of {len(text):,} characters has no place to count it in pieces within "
                    f"{MAX_ENCODE_CHARS:,} characters; split it or choose the heuristic tokenizer."
                )
            total += self.count(text[start:cut])
            start = cut
        return total + self.count(text[start:])

    def prompt_overhead(self, messages: int) -> int:
        """Tokens a chat endpoint adds around ``messages`` messages and the reply's start
        (OpenAI's chat format: 3 per message, 3 to prime the reply)."""
        return 3 * messages + 3

    @property
    def max_token_chars(self) -> int:
        """The most code points one token can cover: its byte length bounds it (a code point is
        at least one byte), so no text of more than ``budget * max_token_chars`` code points
        fits in ``budget`` tokens."""
        if self._max_token_chars is None:
            known = LONGEST_TOKEN_BYTES.get(self.name)
            self._max_token_chars = known or max(len(value) for value in self._encoding.token_byte_values())
        return self._max_token_chars


def prompt_overhead(tokenizer: Tokenizer, messages: int) -> int:
    """Tokens the endpoint adds around a prompt of ``messages`` messages, as ``tokenizer`` knows
    them (0 for the spec's estimate and for tokenizers that do not say)."""
    overhead = getattr(tokenizer, "prompt_overhead", None)
    return int(overhead(messages)) if callable(overhead) else 0


def is_cut_additive(tokenizer: object) -> bool:
    """Whether ``tokenizer`` counts a text cut at a safe cut as the sum of its pieces."""
    return getattr(tokenizer, "cut_additive", False) is True


@lru_cache(maxsize=None)
def get_tokenizer(name: str = HEURISTIC) -> Tokenizer:
    """The tokenizer called ``name``: ``"heuristic"``, ``"cl100k_base"`` or ``"o200k_base"``
    (``"auto"`` without a model is the heuristic; ``"endpoint"`` needs the model: see
    :func:`tokenizer_for`)."""
    if name in (HEURISTIC, AUTO):
        return HeuristicTokenizer()
    if name == ENDPOINT:
        raise ValueError(
            "The 'endpoint' tokenizer counts with the model server's own /tokenize, so it needs the model; "
            "choose heuristic, cl100k_base or o200k_base here."
        )
    return ExactTokenizer(name)


def default_tokenizer_name(model: object | None) -> str:
    """What ``"auto"`` means for runs against ``model``: the model's own choice
    (``model.default_tokenizer()``, e.g. the OpenAI-compatible adapter's), else the heuristic
    (the offline model, fakes, no model)."""
    choose = getattr(model, "default_tokenizer", None)
    return choose() if callable(choose) else HEURISTIC


def planning_tokenizer_name(name: str, *, real_endpoint: bool) -> str:
    """The tokenizer a plan made without asking the model server counts with, for the setting
    ``name`` (a cost preview): ``"auto"`` is the estimate for the offline model and
    :data:`DEFAULT_EXACT` for a real endpoint; ``"endpoint"`` is :data:`DEFAULT_EXACT`, the
    nearest count that needs no server."""
    if name == AUTO:
        return DEFAULT_EXACT if real_endpoint else HEURISTIC
    return DEFAULT_EXACT if name == ENDPOINT else name


def tokenizer_for(name: str, model: object | None) -> Tokenizer:
    """The tokenizer called ``name`` for runs against ``model``: ``"auto"`` is
    :func:`default_tokenizer_name`; ``"endpoint"`` asks the model for its server's own count
    (``model.endpoint_tokenizer()``); raises ``ValueError`` naming the model when it offers none."""
    if name == AUTO:
        name = default_tokenizer_name(model)
    if name != ENDPOINT:
        return get_tokenizer(name)
    make = getattr(model, "endpoint_tokenizer", None)
    if make is None:
        identity = getattr(model, "identity", None) or type(model).__name__
        raise ValueError(
            f"The model {identity} has no token count of its own (the 'endpoint' tokenizer needs an "
            "OpenAI-compatible server with /tokenize); choose heuristic, cl100k_base or o200k_base."
        )
    return make()
