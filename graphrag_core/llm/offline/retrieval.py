"""A small text-retrieval kit for the offline model: terms, stemming, sentences, BM25.

Terms are lowercase English words minus stopwords, stemmed for plurals, plus Chinese
characters (weak terms) and character bigrams (strong terms); :func:`standalone_characters`
finds the single characters that are words of their own (茶 in 茶的历史). Sentences are split by
the engine's one splitter (:mod:`graphrag_core.sentences`); :func:`is_complete_sentence` tells a
sentence that can stand on its own from a fragment cut by a chunk boundary. :func:`bm25` scores documents against a weighted query,
:func:`centrality` scores how typical each document is of its set, and :func:`pick` takes the
best sentences within word and count limits.

Invariant: every function here is pure (a function of its arguments alone).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from ...context import parse_map_section
from ...language import HAN_RANGES
from ...sentences import split_sentences as engine_sentences

BM25_K1 = 1.2
BM25_B = 0.75

_STOPWORDS = frozenset(
    """a an the and or nor of to in on for with by at from as is are was were be been being it its
    this that these those which who whom whose when where why how do does did done has have had
    not no but if then than so such can could would should will shall may might must there their
    theirs they them he she his her hers we our ours you your yours i me my mine about into onto
    over under between also more most other others some any all each both only very just own same
    s t here out up down off again further once while during before after above below own too
    per via among within without""".split()
)
# Words a question uses to ask, not to say what it is about: alone they must not make a
# sentence relevant.
_GENERIC_WORDS = frozenset(
    """what which main key major primary principal central core important notable significant
    theme themes topic topics subject subjects corpus dataset data document documents text texts
    collection overall general summarize summarise summary summaries describe description overview
    tell give list explain discuss discussed mention mentioned cover covered covers top highlight
    highlights thing things aspect aspects point points idea ideas issue issues content contents
    question questions answer find show mean means meaning meant define defined definition refer
    refers""".split()
)
# Each list in simplified characters, then the traditional forms of those that differ.
_CJK_STOP_CHARS = frozenset("的了是在和与及或有也都就而之其这那个一些哪什么吗呢吧啊着被把对于为从等我你他她它们" "與這個們為爲於對從麼嗎")
_CJK_GENERIC_CHARS = frozenset("主要题怎样如何语料档内容总结概述请问" "題樣語檔內總結請問")
_CJK_GENERIC_BIGRAMS = frozenset(
    "什么 哪些 主要 主题 语料 文档 内容 总结 概述 数据 资料 问题 哪个 如何 为什么 怎么 关于 有关 哪里 请问 介绍 "
    "什麼 主題 語料 文檔 內容 總結 數據 資料 問題 哪個 怎麼 關於 有關 哪裡 請問 介紹".split()
)

CJK_RANGES = HAN_RANGES
TOKEN_RE = re.compile(rf"[{CJK_RANGES}]+|[A-Za-z0-9]+(?:'[A-Za-z]+)?")
CJK_RUN_RE = re.compile(rf"^[{CJK_RANGES}]+$")
BULLET_RE = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|#{1,6})\s+")


# -- terms -----------------------------------------------------------------------------------


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """Light English stemming: plural endings only (``studies`` -> ``study``, ``rivers`` -> ``river``)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("sses"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@dataclass(frozen=True)
class Terms:
    """The terms of a text: ``strong`` terms (English words, CJK bigrams) can make a sentence
    relevant on their own; ``weak`` ones (single CJK characters) only add to its score."""

    strong: tuple[str, ...]
    weak: tuple[str, ...]

    @property
    def all(self) -> tuple[str, ...]:
        return self.strong + self.weak

    def weights(self) -> Counter[str]:
        """Each term's weight as a query: 1 per strong occurrence, 0.5 per weak one."""
        weights: Counter[str] = Counter()
        for term in self.strong:
            weights[term] += 1.0
        for term in self.weak:
            weights[term] += 0.5
        return weights


def terms(text: str, *, keep_generic: bool = True) -> Terms:
    """Lowercase English words minus stopwords, stemmed; CJK characters and bigrams.

    With ``keep_generic=False`` the question words of ``_GENERIC_WORDS`` are dropped too (used
    for questions, so that "what are the main themes" has no content terms). The text is read
    in its NFKC form, so full-width letters and digits (ＡＢＣ, １９３７) are the ASCII ones and a
    compatibility ideograph is its unified character; Chinese stop and question words are known
    in simplified and traditional characters.
    """
    strong: list[str] = []
    weak: list[str] = []
    for token in TOKEN_RE.findall(unicodedata.normalize("NFKC", text)):
        if CJK_RUN_RE.match(token):
            for char in token:
                if char not in _CJK_STOP_CHARS and (keep_generic or char not in _CJK_GENERIC_CHARS):
                    weak.append(char)
            for first, second in zip(token, token[1:]):
                bigram = first + second
                if first in _CJK_STOP_CHARS or second in _CJK_STOP_CHARS:
                    continue
                if not keep_generic and (
                    bigram in _CJK_GENERIC_BIGRAMS or (first in _CJK_GENERIC_CHARS and second in _CJK_GENERIC_CHARS)
                ):
                    continue
                strong.append(bigram)
            continue
        word = token.lower()
        if word in _STOPWORDS or (not keep_generic and word in _GENERIC_WORDS):
            continue
        stemmed = stem(word)
        if not keep_generic and stemmed in _GENERIC_WORDS:
            continue
        strong.append(stemmed)
    return Terms(tuple(strong), tuple(weak))


_CJK_PARTICLES = frozenset("的之与和及或了是在对于从为等把被也都就而其着吗呢吧啊" "與於對從為爲嗎")
"""Characters that stand between Chinese words (particles, conjunctions, prepositions): a
character between two of them, or between one and the edge of a phrase, is a word of its own."""


def standalone_characters(text: str) -> tuple[str, ...]:
    """The single CJK characters of ``text`` that are words on their own: flanked on both sides
    by a particle (:data:`_CJK_PARTICLES`) or the edge of a run of Chinese text, as 茶 in
    "茶的历史" ("the history of tea"). Such a character names a subject as a bigram does, so a
    question's standalone characters are strong terms for rating (question words like 哪 and
    generic characters never are)."""
    found: list[str] = []
    for token in TOKEN_RE.findall(unicodedata.normalize("NFKC", text)):
        if not CJK_RUN_RE.match(token):
            continue
        for i, char in enumerate(token):
            if char in _CJK_STOP_CHARS or char in _CJK_GENERIC_CHARS:
                continue
            before = token[i - 1] if i > 0 else None
            after = token[i + 1] if i + 1 < len(token) else None
            if all(side is None or side in _CJK_PARTICLES for side in (before, after)):
                found.append(char)
    return tuple(dict.fromkeys(found))


def word_count(text: str) -> int:
    """Words for answer length limits: English words, plus one per two CJK characters."""
    words = 0
    cjk = 0
    for token in TOKEN_RE.findall(text):
        if CJK_RUN_RE.match(token):
            cjk += len(token)
        else:
            words += 1
    return words + (cjk + 1) // 2


def truncate_words(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` words (whitespace-separated), with an ellipsis when cut."""
    pieces = text.split()
    if len(pieces) > 1:
        if len(pieces) <= limit:
            return text
        return " ".join(pieces[:limit]).rstrip(",;:") + " …"
    # One unbroken run (e.g. Chinese): cut by characters, two per word.
    return text if len(text) <= 2 * limit else text[: 2 * limit] + "…"


# -- sentences -------------------------------------------------------------------------------


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: each line, split at sentence ends by the engine's one splitter
    (:func:`graphrag_core.sentences.split_sentences`: abbreviations and Chinese end marks
    known); bullets, Markdown heading marks, map section markers and blanks removed."""
    sentences: list[str] = []
    for line in text.splitlines():
        line = BULLET_RE.sub("", line.strip())
        if not line or parse_map_section(line):
            continue
        sentences.extend(engine_sentences(line))
    return sentences


_HEADWORD_RE = re.compile(r"^[^:：。.!?]{1,40}[:：]\s*")
_DATA_REFERENCE_RE = re.compile(r"\s*\[Data:[^\]]*\]")
_COMPLETE_END_RE = re.compile(r"[.!?。！？…][\"'”’)\]）」』]*$")
_COMPLETE_START_RE = re.compile(rf"^[\"'“‘(（「『]?[A-Z0-9{CJK_RANGES}]")
_HEADWORD_START_RE = re.compile(r"^[A-Za-z0-9][^:：。.!?]{0,39}[:：]\s+\S")
_PAIRS = (("“", "”"), ("(", ")"), ("（", "）"), ("「", "」"))


def is_complete_sentence(text: str) -> bool:
    """A sentence that can stand on its own in an answer: it starts like a sentence (a capital,
    a digit, a Chinese character, an opening quote, or ``headword: ...``), ends with end
    punctuation, and its quotes and brackets are balanced. Chunk boundaries cut sentences
    ("Scrooge was not a man to be"); report headings have no full stop."""
    body = _DATA_REFERENCE_RE.sub("", text).strip()
    if not body or not _COMPLETE_END_RE.search(body):
        return False
    if not (_COMPLETE_START_RE.match(body) or _HEADWORD_START_RE.match(body)):
        return False
    if body.count('"') % 2:
        return False
    return all(body.count(open_) == body.count(close) for open_, close in _PAIRS)


def is_chinese(text: str) -> bool:
    """Whether a question is written in Chinese (more CJK characters than Latin letters)."""
    cjk = sum(1 for char in text if "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff")
    latin = sum(1 for char in text if char.isascii() and char.isalpha())
    return cjk > 0 and cjk >= latin


_POINT_LEAD_RE = re.compile(r"^(?:\d{1,2}\.\s+)?(?:\[[^\]]*\]\s*)*")
MIN_CONTAINED_KEY = 16
"""A point's key (its letters) at least this long is the same point as a longer one holding it."""


def point_key(sentence: str) -> str:
    """What makes two sentences the same point: their words, lowercased, without a leading
    ``headword:`` (a claim line and the summary sentence it repeats are one point), a sense
    number or bracketed labels (``1. [Unix] The superuser...`` is the summary's ``The superuser...``)."""
    body = _HEADWORD_RE.sub("", sentence.strip()) or sentence
    body = _POINT_LEAD_RE.sub("", body) or body
    return "".join(t.lower() for t in TOKEN_RE.findall(unicodedata.normalize("NFKC", body)))


def same_point(key: str, other: str) -> bool:
    """Whether two :func:`point_key` keys say the same thing: equal, or the shorter (of at
    least :data:`MIN_CONTAINED_KEY` characters) inside the longer (a claim cut short with an
    ellipsis, a summary's sentence quoted in a longer one)."""
    if key == other:
        return True
    short, long = sorted((key, other), key=len)
    return len(short) >= MIN_CONTAINED_KEY and short in long


_LIST_ITEM_SPLIT_RE = re.compile(r"\s*(?:[,，、;；]|\band\b|[與与和及])\s*")
MIN_LIST_ITEMS = 4


def is_name_list(sentence: str) -> bool:
    """A ``headword: a, b, c, d`` line that only lists names (a summary's "Also here: ..." or
    其他條目：...): four or more items, nearly all of them a name's length (up to four words,
    or four Chinese characters). It says nothing on its own, so it makes no point."""
    match = _HEADWORD_RE.match(sentence.strip())
    if not match:
        return False
    body = re.sub(r"(?:[.。]|等[^、，,]*)$", "", sentence.strip()[match.end() :].strip())
    items = [item for item in _LIST_ITEM_SPLIT_RE.split(body) if item.strip()]
    if len(items) < MIN_LIST_ITEMS:
        return False
    short = sum(1 for item in items if (len(item.strip()) <= 4 if CJK_RUN_RE.match(item.strip()) else len(item.split()) <= 4))
    return short >= 0.8 * len(items)


# -- scoring ---------------------------------------------------------------------------------


@dataclass
class Sentence:
    """A sentence of a prompt with the communities that say it, its place, its section (the
    map data's section marker it came under) and its terms (of the sentence as written, when
    ``text`` adds its subject before it); ``source_ids`` are the source chunks behind it where
    the prompt names them beside its community (the lazy method's evidence)."""

    text: str
    community_ids: list[str]
    order: int
    section: str = ""
    terms: Terms = field(default_factory=lambda: Terms((), ()))
    opens_section: bool = False
    source_ids: list[str] = field(default_factory=list)


def bm25(query: Counter[str], docs: Sequence[Terms]) -> list[float]:
    """BM25 of each doc against the query terms (weights: the query counts), over ``docs``."""
    n = len(docs)
    if n == 0 or not query:
        return [0.0] * n
    counts = [Counter(doc.all) for doc in docs]
    lengths = [len(doc.all) for doc in docs]
    average = (sum(lengths) / n) or 1.0
    df: Counter[str] = Counter()
    for count in counts:
        df.update(set(count) & set(query))
    scores: list[float] = []
    for count, length in zip(counts, lengths):
        score = 0.0
        for term, weight in query.items():
            tf = count.get(term, 0)
            if not tf:
                continue
            idf = math.log(1.0 + (n - df[term] + 0.5) / (df[term] + 0.5))
            score += weight * idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
        scores.append(score)
    return scores


def centrality(docs: Sequence[Terms]) -> list[float]:
    """How typical each doc is of the whole set: the mean document frequency of its terms.

    Each score is exactly rounded (``math.fsum``), so it does not depend on the order its
    distinct terms iterate in (a set's order changes with the process's hash seed)."""
    df: Counter[str] = Counter()
    for doc in docs:
        df.update(set(doc.all))
    scores: list[float] = []
    for doc in docs:
        distinct = set(doc.all)
        if not distinct:
            scores.append(0.0)
            continue
        scores.append(math.fsum(math.log1p(df[t]) for t in distinct) / math.sqrt(len(distinct)))
    return scores


def pick(sentences: Sequence[Sentence], scores: Sequence[float], *, max_words: int, max_count: int) -> list[Sentence]:
    """The best-scoring sentences (ties: earlier first) within the word and count limits.

    Sentences making the same point (:func:`same_point`) are kept once, the first taken, with
    the community (and source) ids of every copy merged; the sentences given are never changed (the chosen
    ones are copies).
    """
    ranked = sorted(range(len(sentences)), key=lambda i: (-scores[i], sentences[i].order))
    chosen: list[Sentence] = []
    kept: list[tuple[str, Sentence]] = []  # every sentence taken or merged, by its point key
    words = 0
    for i in ranked:
        if scores[i] <= 0:
            break
        sentence = sentences[i]
        key = point_key(sentence.text)
        same = next((copy for other, copy in kept if same_point(key, other)), None)
        if same is not None:
            same.community_ids.extend(c for c in sentence.community_ids if c not in same.community_ids)
            same.source_ids.extend(s for s in sentence.source_ids if s not in same.source_ids)
            continue
        length = word_count(sentence.text)
        if chosen and words + length > max_words:
            continue
        if not chosen and length > max_words:
            sentence = Sentence(
                truncate_words(sentence.text, max_words), list(sentence.community_ids), sentence.order, source_ids=list(sentence.source_ids)
            )
            length = max_words
        copy = Sentence(
            sentence.text, list(sentence.community_ids), sentence.order, sentence.section, sentence.terms, source_ids=list(sentence.source_ids)
        )
        chosen.append(copy)
        kept.append((key, copy))
        words += length
        if len(chosen) >= max_count:
            break
    return chosen


__all__ = [
    "BM25_B",
    "BM25_K1",
    "BULLET_RE",
    "CJK_RANGES",
    "CJK_RUN_RE",
    "TOKEN_RE",
    "Sentence",
    "Terms",
    "bm25",
    "centrality",
    "is_chinese",
    "is_complete_sentence",
    "is_name_list",
    "pick",
    "point_key",
    "same_point",
    "split_sentences",
    "stem",
    "terms",
    "truncate_words",
    "word_count",
]
