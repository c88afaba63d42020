"""Where a sentence ends, in English and Chinese: the engine's one sentence splitter.

Every part of the engine that cuts text into sentences cuts it here: the points of an answer
(:mod:`graphrag_core.answer_points`), the sentences that cite a community
(:func:`graphrag_core.citations.citing_sentences`), the offline model's retrieval
(:mod:`graphrag_core.llm.offline.retrieval`) and the support check (:mod:`graphrag_core.support`).

The rules, in order (:func:`sentence_spans`):

- a line break always ends a sentence (a list item, a heading, a line of a paragraph), and a
  sentence never spans two lines;
- Chinese end marks (``。！？；`` and their half-width and small forms ``｡．﹒﹔﹖﹗``) end a sentence
  where they stand, with no space after them; so do ``. ! ? ;`` written right after a Chinese
  character;
- ``. ! ? …`` (and runs such as ``?!`` or ``...``) end an English sentence when whitespace (or
  the end of the line) follows and the next sentence does not start with a lowercase letter
  (``esp. among`` goes on);
- the closing quotes and brackets after an end mark (``."`` ``.)`` ``。”`` ``！」``) and Markdown
  emphasis (``.**``) stay with the sentence they close, and so does a citation in square
  brackets right after it (``... town. [Communities: 3]``);
- a quotation that ends inside a sentence does not end it: an end mark whose closers are
  followed by a colon or a comma (``“有哪些？”：``, ``"Why?", she asked``) goes on;
- a full stop after an abbreviation that never ends a sentence (:data:`ABBREVIATIONS`: ``e.g.``,
  ``i.e.``, ``esp.``, ``Dr.``, ``vs.``, ...), after a single letter (an initial, the Jargon
  File's ``n.``), after a dotted initialism (``U.S.``, ``a.k.a.``), after ``No.``/``Fig.``/...
  before a number (:data:`NUMBER_ABBREVIATIONS`), or after a number that opens its line (``1.``,
  a list's enumerator) is no end;
- a full stop inside a word or number (``3.5``, ``malloc.c``, ``www.example.com``) is no end:
  no space follows it.

Known limits: ``etc.`` or ``Inc.`` before a capital ends a sentence (``etc. The next`` does;
``Acme Inc. Ltd`` is cut too); an initialism that ends a sentence before a capital does not
(``in the U.S. The`` stays one); a sentence written to start in lowercase after a full stop is
read as going on. Invariant: the spans are in order, do not overlap, never cross a line break,
and are trimmed of surrounding whitespace; joining the text between them drops only whitespace.
"""

from __future__ import annotations

import re

ABBREVIATIONS: frozenset[str] = frozenset(
    """e.g i.e esp cf vs viz a.k.a aka approx ca resp incl dept est
    mr mrs ms dr prof st mt sr jr gen col capt lt sgt rev hon gov sen rep pres
    n v vt vi adj adv interj pl syn abbr obs var excl orig poss prob""".split()
)
"""Abbreviations (lowercase, without their last full stop) after which a full stop never ends a
sentence, even before a capital (``e.g. Unix``, ``Dr. Smith``, ``vs. Windows``); the last row
holds the Jargon File's grammar marks (``n.``, ``vt.``, ``obs.``)."""
NUMBER_ABBREVIATIONS: frozenset[str] = frozenset("no nos vol vols p pp fig figs ch sec art eq op ed".split())
"""Abbreviations that end no sentence before a number (``No. 5``, ``pp. 12-14``, ``Fig. 3``) and
may end one elsewhere (``The answer is no. Then``)."""

CJK_END_MARKS = "。！？；｡．﹒﹔﹖﹗"
"""The Chinese end marks: full-width, half-width and small forms."""
CLOSERS = "\"'”’)）]」』】》〉»›*_`"
"""What may follow an end mark and still belong to its sentence: closing quotes and brackets,
Markdown emphasis and code marks."""

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CLOSER_CLASS = re.escape(CLOSERS.replace("]", "")) + r"\]"
_END_RE = re.compile(
    rf"(?P<mark>[.!?…;{CJK_END_MARKS}]+)(?P<closers>[{_CLOSER_CLASS}]*)(?P<cite>(?:[ \t]*\[[^\[\]\n]*\])*)"
)
"""An end mark (a run of them), its closers and the citations right after it."""
_WORD_BEFORE_RE = re.compile(r"(?:^|(?<=[^A-Za-z.'\-]))([A-Za-z](?:[A-Za-z.'\-]*[A-Za-z])?)$")
_INITIALISM_RE = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]$")
_ENUMERATOR_RE = re.compile(r"^\s*(?:[-*+\u2022]\s+)?\(?\d{1,3}$")
_EMBEDDED_FOLLOWERS = "：:，,、"
_CJK_CONTEXT_MARKS = frozenset(".!?;")
"""ASCII marks that end a sentence right after a Chinese character, with no space (half-width punctuation in Chinese text)."""
_ENGLISH_END_MARKS = frozenset(".!?…")


def _is_cjk(char: str) -> bool:
    return bool(char) and ("\u3400" <= char <= "\u4dbf" or "\u4e00" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff")


def _no_end_after(head: str, following: str) -> bool:
    """Whether a full stop after ``head`` (the line up to it) is part of an abbreviation,
    an initial or an enumerator, given the text that follows the stop."""
    if _ENUMERATOR_RE.match(head):
        return True
    found = _WORD_BEFORE_RE.search(head)
    if found is None:
        return False
    word = found.group(1)
    lower = word.lower()
    if len(word) == 1:
        return word != "I"
    if lower in ABBREVIATIONS or _INITIALISM_RE.match(word):
        return True
    return lower in NUMBER_ABBREVIATIONS and following[:1].isdigit()


def _ends(line: str, match: re.Match[str]) -> bool:
    """Whether the end mark ``match`` found in ``line`` ends a sentence (the module's rules)."""
    mark, after = match.group("mark"), match.end()
    following = line[after:].lstrip()
    spaced = after == len(line) or line[after].isspace()
    if following[:1] and following[0] in _EMBEDDED_FOLLOWERS:
        return False  # a quotation inside the sentence: "有哪些？”：", "Why?", she asked
    if any(c in CJK_END_MARKS for c in mark):
        return True
    if _is_cjk(line[match.start() - 1 : match.start()]) and set(mark) <= _CJK_CONTEXT_MARKS:
        return spaced or not following or _is_cjk(following[0])  # "中国.com" goes on
    if not set(mark) & _ENGLISH_END_MARKS:
        return False  # an English semicolon joins clauses
    if not spaced:
        return False  # 3.5, malloc.c, "e.g.,"
    if following[:1].islower():
        return False
    return not (mark == "." and _no_end_after(line[: match.start()], following))


def _line_spans(line: str, offset: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _END_RE.finditer(line):
        if match.start() < start or not _ends(line, match):
            continue
        spans.append((start, match.end()))
        start = match.end()
    spans.append((start, len(line)))
    trimmed: list[tuple[int, int]] = []
    for a, b in spans:
        piece = line[a:b]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            trimmed.append((offset + a + lead, offset + a + len(piece.rstrip())))
    return trimmed


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` offsets in ``text`` of each of its sentences, in order (the module's
    rules): no span crosses a line break, each is trimmed, blank ones are left out."""
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        spans.extend(_line_spans(body, offset))
        offset += len(line)
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, in order, each trimmed (:func:`sentence_spans`)."""
    return [text[a:b] for a, b in sentence_spans(text)]


__all__ = ["ABBREVIATIONS", "CJK_END_MARKS", "CLOSERS", "NUMBER_ABBREVIATIONS", "sentence_spans", "split_sentences"]
