"""Sentence and word handling for English and Chinese sample text.

Only what the sample builder needs: sentence splitting that survives the Jargon File's
abbreviations (``esp.``, ``e.g.``, ``n.``), the first sentences of a paragraph under a length
cap, and word tokens for similarity (English words, or Chinese character pairs).
"""

from __future__ import annotations

import re

from ..language import Language

REFERENCE_RE = re.compile(r"\{([^{}]+)\}")
"""A cross-reference in the samples' source text: ``{term}`` (the Jargon File's and the Chinese
sample's syntax); group 1 is the term."""
_EN_BOUNDARY = re.compile(r"(?<=[.!?])[\"”’')\]]*\s+(?=[\"“‘'(\[{A-Z0-9])")
_ZH_BOUNDARY = re.compile(r"(?<=[。！？；])[”」』）]*")
_ABBREVIATIONS = frozenset(
    """e.g i.e esp cf vs etc approx poss prob orig fig mr mrs ms dr st no vol inc ltd jr sr prof
    n v vt vi adj adv interj pl syn abbr obs var excl ca al ed eds op""".split()
)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_LATIN_WORD = re.compile(r"[a-z][a-z0-9'-]{2,}")
_STOPWORDS = frozenset(
    """the and for that this with from are was were has have had not but you your its it's his her
    their they them there which who whom what when where why how all any can could would should will
    one two also into than then some such more most other only very just may might been being about
    used use uses see often usually sense compare something someone out our over under via""".split()
)


def strip_reference_braces(text: str) -> str:
    """``{term}`` cross-reference markers replaced by the bare term."""
    return REFERENCE_RE.sub(lambda match: match.group(1), text)


def split_sentences(text: str, language: Language) -> list[str]:
    """The sentences of one paragraph, in order; joining them (with a space for English, with
    nothing for Chinese) gives back the paragraph up to whitespace."""
    text = text.strip()
    if not text:
        return []
    if language == "zh":
        cuts = [m.end() for m in _ZH_BOUNDARY.finditer(text)]
        pieces = [text[a:b].strip() for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        return [piece for piece in pieces if piece]
    sentences: list[str] = []
    start = 0
    for match in _EN_BOUNDARY.finditer(text):
        head = text[start : match.start()]
        last_word = head.rsplit(None, 1)[-1].rstrip(".!?").lower() if head.strip() else ""
        if last_word in _ABBREVIATIONS or (len(last_word) == 1 and last_word.isalpha()):
            continue
        sentences.append(text[start : match.end()].strip())
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def first_sentences(text: str, language: Language, *, max_chars: int, enough: int | None = None) -> str:
    """The opening sentences of ``text``: at least one, adding more while shorter than ``enough``
    characters and while the total stays within ``max_chars``. A first sentence longer than
    ``max_chars`` is cut at a word boundary and ends with an ellipsis. Never longer than
    ``max_chars``."""
    enough = enough if enough is not None else (60 if language == "zh" else 120)
    joiner = "" if language == "zh" else " "
    chosen = ""
    for sentence in split_sentences(text, language):
        candidate = f"{chosen}{joiner}{sentence}" if chosen else sentence
        if len(candidate) > max_chars:
            if not chosen:
                chosen = _cut(sentence, max_chars, language)
            break
        chosen = candidate
        if len(chosen) >= enough:
            break
    return chosen


def _cut(text: str, max_chars: int, language: Language) -> str:
    room = max_chars - 1
    if language == "zh":
        return text[:room] + "…"
    head = text[: room + 1]
    if " " in head:
        head = head[: head.rindex(" ")]
    return head[:room].rstrip(" ,;:") + "…"


def word_tokens(text: str, language: Language) -> list[str]:
    """Similarity tokens: lower-cased English words of 3+ letters without stopwords, plus (for
    Chinese) every pair of adjacent Chinese characters."""
    lowered = text.lower()
    tokens = [word for word in _LATIN_WORD.findall(lowered) if word not in _STOPWORDS]
    if language == "zh":
        for run in _CJK.findall(text):
            tokens.extend(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    return tokens


def count_words(text: str, language: Language) -> int:
    """Words for English; Chinese characters plus Latin words for Chinese."""
    if language == "zh":
        return sum(len(run) for run in _CJK.findall(text)) + len(_LATIN_WORD.findall(text.lower()))
    return len(text.split())
