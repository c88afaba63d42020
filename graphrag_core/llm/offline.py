"""An offline chat model: deterministic, extractive, no network and no downloads.

It answers the engine's real prompts (``graphrag_core.prompts``) by reading them back:

- ``map``: the batch's complete sentences (fragments cut off by a chunk boundary, headings
  without a full stop and sentences with unbalanced quotes are left out; ``{cross-reference}``
  braces are removed) are scored against the question with BM25 (English words and Chinese
  characters plus character bigrams); the answer is the most relevant sentences, each cited
  ``[Communities: id, ...]``. ``usefulness`` is the BM25 mass of the best three sentences
  mapped to 0-100 (``1 - exp(-mass / 15)``), weighted by how much of the question the batch
  covers, so it spreads with relevance. Nothing relevant gives ``{"answer": "", "usefulness": 0}``.
  A broad question with no content words left ("What are the main themes?") is answered from
  the batch's most central sentences instead; its usefulness grows with the batch's share of
  summary text and with the terms its communities' summaries share (themes).
- ``reduce``: the candidates' cited sentences are merged round-robin in usefulness order,
  deduplicated (their citations merged), under a one-line overview in the question's language
  (Chinese for a question written in Chinese).
- ``summary``: an extractive ``{"title", "summary"}`` of a community's text.
- ``rate``: a 0-5 rating of one community summary (``offline_rating``).

Invariants: the reply text is a function of the request alone (never of time, latency or
call order); it is always one JSON object, which goes through the same parsing and
validation as a real model's reply; ``identity`` is ``"offline:bm25/v{OFFLINE_VERSION}"``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
from functools import lru_cache
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..context import (
    MAP_SECTION_SUMMARY,
    format_citation,
    parse_candidate_header,
    parse_citations,
    parse_map_section,
    parse_part_header,
    split_prompt_sections,
)
from ..samples.text import strip_reference_braces
from ..tokens import estimate_tokens
from .base import ChatRequest, ChatResponse, TokenUsage
from .offline_eval import EVAL_PURPOSES, eval_reply

OFFLINE_VERSION = 3
"""Bumped whenever the offline model's answers change, so map caches keyed by its identity
never serve an older version's answers."""
OFFLINE_IDENTITY = f"offline:bm25/v{OFFLINE_VERSION}"
MAP_ANSWER_MAX_WORDS = 120
MAP_ANSWER_MAX_SENTENCES = 5
REDUCE_MAX_POINTS = 8
REDUCE_MAX_WORDS = 260
SUMMARY_MAX_SENTENCES = 4
BM25_K1 = 1.2
BM25_B = 0.75
NO_ANSWER = "The intermediate answers do not contain enough information to answer the question."
NO_ANSWER_ZH = "中间回答中没有足够的信息来回答这个问题。"
USEFULNESS_MASS_SCALE = 15.0
"""BM25 mass (sum of the best three sentence scores) at which usefulness reaches 63% of its ceiling."""
BROAD_THEMES_SCALE = 20.0
"""Shared summary terms at which a broad question's theme bonus reaches 63% of its ceiling."""

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
_CJK_STOP_CHARS = frozenset("的了是在和与及或有也都就而之其这那个一些哪什么吗呢吧啊着被把对于为从等我你他她它们")
_CJK_GENERIC_CHARS = frozenset("主要题怎样如何语料档内容总结概述请问")
_CJK_GENERIC_BIGRAMS = frozenset(
    "什么 哪些 主要 主题 语料 文档 内容 总结 概述 数据 资料 问题 哪个 如何 为什么 怎么 关于 有关 哪里 请问 介绍".split()
)

_CJK_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK_RANGES}]+|[A-Za-z0-9]+(?:'[A-Za-z]+)?")
_CJK_RUN_RE = re.compile(rf"^[{_CJK_RANGES}]+$")
# A sentence ends at . ! ? before a capital, a digit or a quote, after a citation's "]", or
# at Chinese end punctuation; "x. [Communities: 3]" stays one sentence with its citation.
_SENTENCE_END_RE = re.compile(r"(?<=[.!?\]])\s+(?=[\"'(A-Z0-9])|(?<=[。！？；])")
_BULLET_RE = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|#{1,6})\s+")


# -- terms -----------------------------------------------------------------------------------


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """Light English stemming: plural endings only (``studies`` -> ``study``, ``rivers`` -> ``river``)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("sses"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@dataclass(frozen=True)
class _Terms:
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


def _terms(text: str, *, keep_generic: bool = True) -> _Terms:
    """Lowercase English words minus stopwords, stemmed; CJK characters and bigrams.

    With ``keep_generic=False`` the question words of ``_GENERIC_WORDS`` are dropped too (used
    for questions, so that "what are the main themes" has no content terms).
    """
    strong: list[str] = []
    weak: list[str] = []
    for token in _TOKEN_RE.findall(text):
        if _CJK_RUN_RE.match(token):
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
        stem = _stem(word)
        if not keep_generic and stem in _GENERIC_WORDS:
            continue
        strong.append(stem)
    return _Terms(tuple(strong), tuple(weak))


def _word_count(text: str) -> int:
    """Words for answer length limits: English words, plus one per two CJK characters."""
    words = 0
    cjk = 0
    for token in _TOKEN_RE.findall(text):
        if _CJK_RUN_RE.match(token):
            cjk += len(token)
        else:
            words += 1
    return words + (cjk + 1) // 2


def _truncate_words(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` words (whitespace-separated), with an ellipsis when cut."""
    pieces = text.split()
    if len(pieces) > 1:
        if len(pieces) <= limit:
            return text
        return " ".join(pieces[:limit]).rstrip(",;:") + " …"
    # One unbroken run (e.g. Chinese): cut by characters, two per word.
    return text if len(text) <= 2 * limit else text[: 2 * limit] + "…"


def _split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: each line, split at sentence ends; bullets, Markdown heading marks
    and blanks removed."""
    sentences: list[str] = []
    for line in text.splitlines():
        line = _BULLET_RE.sub("", line.strip())
        if not line or parse_map_section(line):
            continue
        sentences.extend(s.strip() for s in _SENTENCE_END_RE.split(line) if s.strip())
    return sentences


_HEADWORD_RE = re.compile(r"^[^:：。.!?]{1,40}[:：]\s*")
_DATA_REFERENCE_RE = re.compile(r"\s*\[Data:[^\]]*\]")
_COMPLETE_END_RE = re.compile(r"[.!?。！？…][\"'”’)\]）」』]*$")
_COMPLETE_START_RE = re.compile(rf"^[\"'“‘(（「『]?[A-Z0-9{_CJK_RANGES}]")
_HEADWORD_START_RE = re.compile(r"^[A-Za-z0-9][^:：。.!?]{0,39}[:：]\s+\S")
_PAIRS = (("“", "”"), ("(", ")"), ("（", "）"), ("「", "」"))


def _complete_sentence(text: str) -> bool:
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


def _is_chinese(text: str) -> bool:
    """Whether a question is written in Chinese (more CJK characters than Latin letters)."""
    cjk = sum(1 for char in text if "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff")
    latin = sum(1 for char in text if char.isascii() and char.isalpha())
    return cjk > 0 and cjk >= latin


def _norm_key(sentence: str) -> str:
    """What makes two sentences the same point: their words, lowercased, without a leading
    ``headword:`` (a claim line and the summary sentence it repeats are one point)."""
    body = _HEADWORD_RE.sub("", sentence.strip()) or sentence
    return "".join(t.lower() for t in _TOKEN_RE.findall(body))


# -- scoring ---------------------------------------------------------------------------------


@dataclass
class _Sentence:
    text: str
    community_ids: list[str]
    order: int
    section: str = ""
    terms: _Terms = field(default_factory=lambda: _Terms((), ()))
    opens_section: bool = False


def _bm25(query: Counter[str], docs: Sequence[_Terms]) -> list[float]:
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


def _centrality(docs: Sequence[_Terms]) -> list[float]:
    """How typical each doc is of the whole set: the mean document frequency of its terms."""
    df: Counter[str] = Counter()
    for doc in docs:
        df.update(set(doc.all))
    scores: list[float] = []
    for doc in docs:
        distinct = set(doc.all)
        if not distinct:
            scores.append(0.0)
            continue
        scores.append(sum(math.log1p(df[t]) for t in distinct) / math.sqrt(len(distinct)))
    return scores


def _pick(sentences: Sequence[_Sentence], scores: Sequence[float], *, max_words: int, max_count: int) -> list[_Sentence]:
    """The best-scoring sentences (ties: earlier first) within the word and count limits.

    Repeated sentences are kept once, with the community ids of every copy merged.
    """
    ranked = sorted(range(len(sentences)), key=lambda i: (-scores[i], sentences[i].order))
    chosen: list[_Sentence] = []
    by_key: dict[str, _Sentence] = {}
    words = 0
    for i in ranked:
        if scores[i] <= 0:
            break
        sentence = sentences[i]
        key = _norm_key(sentence.text)
        if key in by_key:
            kept = by_key[key]
            kept.community_ids.extend(c for c in sentence.community_ids if c not in kept.community_ids)
            continue
        length = _word_count(sentence.text)
        if chosen and words + length > max_words:
            continue
        if not chosen and length > max_words:
            sentence = _Sentence(_truncate_words(sentence.text, max_words), list(sentence.community_ids), sentence.order)
            length = max_words
        copy = _Sentence(sentence.text, list(sentence.community_ids), sentence.order, sentence.section, sentence.terms)
        chosen.append(copy)
        by_key[key] = copy
        words += length
        if len(chosen) >= max_count:
            break
    return chosen


def _bullets(sentences: Iterable[_Sentence]) -> str:
    return "\n".join(f"- {s.text} {format_citation(s.community_ids)}" for s in sentences)


# -- the three prompts -----------------------------------------------------------------------


def _map_sentences(data: str) -> list[_Sentence]:
    """The batch's sentences, each with the community id of the part it came from."""
    sentences: list[_Sentence] = []
    community: str | None = None
    section = ""
    lines: list[str] = []

    def flush() -> None:
        if community is None:
            return
        for position, raw in enumerate(_split_sentences("\n".join(lines))):
            text = strip_reference_braces(raw)
            if _complete_sentence(text):
                sentences.append(_Sentence(text, [community], len(sentences), section, _terms(text), opens_section=position == 0))

    for line in data.splitlines():
        header = parse_part_header(line)
        marker = parse_map_section(line)
        if header:
            flush()
            community, lines = header.community_id, []
            section = MAP_SECTION_SUMMARY if header.part == 1 else ""
        elif marker:
            flush()
            lines, section = [], marker
        else:
            lines.append(line)
    flush()
    return sentences


def answer_map(question: str, data: str) -> dict[str, object]:
    """The map reply ``{"answer", "usefulness"}`` for one batch (see the module docstring)."""
    sentences = _map_sentences(data)
    if not sentences:
        return {"answer": "", "usefulness": 0}
    query = _terms(question, keep_generic=False)
    if not query.all:
        return _answer_broad(sentences)

    weights = query.weights()
    scores = _bm25(weights, [s.terms for s in sentences])
    # Single CJK characters alone make a sentence relevant only when the question has no
    # stronger term; otherwise every Chinese text would share a character with the question.
    strong_query = set(query.strong)
    relevant = [
        _shape(s, score, set(weights)) if (strong_query & set(s.terms.strong)) or not strong_query else 0.0
        for s, score in zip(sentences, scores)
    ]
    if not any(score > 0 for score in relevant):
        return {"answer": "", "usefulness": 0}
    chosen = _pick(sentences, relevant, max_words=MAP_ANSWER_MAX_WORDS, max_count=MAP_ANSWER_MAX_SENTENCES)

    batch_terms = {t for s in sentences for t in s.terms.all}
    total_weight = sum(weights.values())
    coverage = sum(w for t, w in weights.items() if t in batch_terms) / total_weight
    mass = sum(sorted(relevant, reverse=True)[:3])
    usefulness = 100.0 * (1.0 - math.exp(-mass / USEFULNESS_MASS_SCALE)) * (0.4 + 0.6 * coverage)
    return {"answer": _bullets(chosen), "usefulness": max(1, min(100, round(usefulness)))}


def _shape(sentence: _Sentence, score: float, query: set[str]) -> float:
    """BM25 adjusted for the shape of the sentence: a query term among its first three terms
    (the subject of a claim line, a glossary headword) counts more; a fragment counts less."""
    if any(term in query for term in sentence.terms.strong[:3]):
        score *= 1.5
    if _word_count(sentence.text) < 5:
        score *= 0.5
    return score


def _answer_broad(sentences: Sequence[_Sentence]) -> dict[str, object]:
    """A question with no content terms: the batch's most central sentences, summaries first."""
    scores = _centrality([s.terms for s in sentences])
    # Summary sentences say what a community is about, its first one most of all: they come
    # first, then the most central of the rest.
    top = max(scores, default=0.0) + 1.0
    scores = [
        (score + (top * (1 + s.opens_section) if s.section == MAP_SECTION_SUMMARY else 0.0))
        * (0.5 if _word_count(s.text) < 5 else 1.0)
        for s, score in zip(sentences, scores)
    ]
    chosen = _pick(sentences, scores, max_words=MAP_ANSWER_MAX_WORDS, max_count=MAP_ANSWER_MAX_SENTENCES)
    if not chosen:
        return {"answer": "", "usefulness": 0}
    return {"answer": _bullets(chosen), "usefulness": _broad_usefulness(sentences)}


def _broad_usefulness(sentences: Sequence[_Sentence]) -> int:
    """How much a batch says about themes: 20, plus up to 40 for its share of summary text
    (summaries describe what communities are about; claims and excerpts are details), plus
    up to 30 for the terms that two or more of its communities' summaries share."""
    summary = [s for s in sentences if s.section == MAP_SECTION_SUMMARY]
    total_words = sum(_word_count(s.text) for s in sentences) or 1
    share = sum(_word_count(s.text) for s in summary) / total_words
    holders: dict[str, set[str]] = {}
    for sentence in summary:
        for term in sentence.terms.strong:
            if len(term) > 2 or _CJK_RUN_RE.match(term):
                holders.setdefault(term, set()).update(sentence.community_ids)
    shared = sum(1 for ids in holders.values() if len(ids) >= 2)
    return max(1, min(100, round(20 + 40 * math.sqrt(share) + 30 * (1 - math.exp(-shared / BROAD_THEMES_SCALE)))))


def _candidate_points(answer: str, default_ids: list[str], rank: int) -> list[_Sentence]:
    """The cited sentences of one intermediate answer, in its order.

    A citation ``[Communities: ...]`` applies to the text before it on its line (back to the
    previous citation); text with no citation after it gets the candidate's community ids.
    """
    points: list[_Sentence] = []
    for line in answer.splitlines():
        line = _BULLET_RE.sub("", line.strip())
        if not line or parse_map_section(line):
            continue
        for text, ids in parse_citations(line):
            for sentence in _SENTENCE_END_RE.split(text):
                sentence = strip_reference_braces(sentence.strip())
                if sentence and _TOKEN_RE.search(sentence):
                    points.append(
                        _Sentence(sentence, list(ids or default_ids), rank * 1000 + len(points), terms=_terms(sentence))
                    )
    return points


def answer_reduce(question: str, data: str) -> dict[str, object]:
    """The reduce reply ``{"answer"}``: an overview line and the merged, cited points.

    A point's rank blends its candidate's usefulness, its relevance to the question (BM25 over
    every candidate's points, scaled to 0-1) and its place in its candidate's answer (earlier
    is better); ties keep a round-robin order over the candidates.
    """
    candidates: list[tuple[float, list[str], list[str]]] = []  # (usefulness, ids, answer lines)
    for line in data.splitlines():
        header = parse_candidate_header(line)
        if header:
            candidates.append((header.usefulness, header.community_ids, []))
        elif candidates:
            candidates[-1][2].append(line)
    per_candidate = [
        (usefulness, points)
        for rank, (usefulness, ids, lines) in enumerate(candidates)
        if (points := _candidate_points("\n".join(lines), ids, rank))
    ]
    chinese = _is_chinese(question)
    if not per_candidate:
        return {"answer": NO_ANSWER_ZH if chinese else NO_ANSWER}

    merged: list[tuple[float, int, _Sentence]] = []  # (usefulness, depth, point), round-robin
    for depth in range(max(len(points) for _, points in per_candidate)):
        merged.extend((u, depth, points[depth]) for u, points in per_candidate if depth < len(points))
    query = _terms(question, keep_generic=False)
    weights = Counter({**{t: 0.5 for t in query.weak}, **{t: 1.0 for t in query.strong}})
    relevance = _bm25(weights, [point.terms for _, _, point in merged])
    relevance = [_shape(point, score, set(weights)) for (_, _, point), score in zip(merged, relevance)]
    top_relevance = max(relevance, default=0.0) or 1.0
    scores = [
        2.0 * u / 100.0 + relevance[i] / top_relevance - 0.25 * depth + _length_factor(point.text) + 1e-6 * (len(merged) - i)
        for i, (u, depth, point) in enumerate(merged)
    ]
    floor = min(scores)
    points = [_Sentence(p.text, p.community_ids, i, terms=p.terms) for i, (_, _, p) in enumerate(merged)]
    chosen = _pick(points, [score - floor + 1.0 for score in scores], max_words=REDUCE_MAX_WORDS, max_count=REDUCE_MAX_POINTS)
    communities: list[str] = []
    for sentence in chosen:
        communities.extend(c for c in sentence.community_ids if c not in communities)
    if chinese:
        return {"answer": f"{_overview_zh(question, len(chosen), len(per_candidate), len(communities))}\n\n{_bullets(chosen)}"}
    topic = f' on "{question}"' if question else ""
    overview = (
        f"Overview{topic}: {len(chosen)} key point{'s' if len(chosen) != 1 else ''} drawn from "
        f"{len(per_candidate)} intermediate answer{'s' if len(per_candidate) != 1 else ''} "
        f"covering {len(communities)} communit{'ies' if len(communities) != 1 else 'y'}."
    )
    return {"answer": f"{overview}\n\n{_bullets(chosen)}"}


def _overview_zh(question: str, points: int, answers: int, communities: int) -> str:
    topic = f"关于“{question.strip()}”：" if question.strip() else ""
    return f"{topic}从 {answers} 个中间回答中归纳出 {points} 个要点，涉及 {communities} 个社区。"


def _length_factor(text: str) -> float:
    """A penalty for fragments (fewer than five words): they rarely make a point on their own."""
    return -0.5 if _word_count(text) < 5 else 0.0


def answer_summary(data: str) -> dict[str, object]:
    """An extractive ``{"title", "summary"}``: the most frequent terms and most central sentences."""
    sentences = [_Sentence(text, [], i, terms=_terms(text)) for i, text in enumerate(_split_sentences(data))]
    if not sentences:
        return {"title": "Untitled community", "summary": "No description is available for this community."}
    surface: dict[str, str] = {}
    for token in _TOKEN_RE.findall(data):
        if not _CJK_RUN_RE.match(token):
            surface.setdefault(_stem(token.lower()), token)
    frequency: Counter[str] = Counter(t for s in sentences for t in s.terms.strong if len(t) > 2 or _CJK_RUN_RE.match(t))
    top = [term for term, _ in sorted(frequency.items(), key=lambda item: (-item[1], item[0]))[:3]]
    names = [surface.get(term, term) for term in top]
    names = [name[:1].upper() + name[1:] for name in names]
    if not names:
        title = _truncate_words(sentences[0].text, 8)
    elif len(names) == 1:
        title = names[0]
    else:
        title = ", ".join(names[:-1]) + " and " + names[-1]
    scores = _centrality([s.terms for s in sentences])
    chosen = _pick(sentences, [score + 1e-9 for score in scores], max_words=MAP_ANSWER_MAX_WORDS, max_count=SUMMARY_MAX_SENTENCES)
    chosen.sort(key=lambda s: s.order)
    summary = " ".join(s.text if s.text.endswith((".", "!", "?", "。", "！", "？")) else s.text + "." for s in chosen)
    return {"title": title, "summary": summary}


def _user_message(request: ChatRequest) -> str:
    for message in reversed(request.messages):
        if message.role == "user":
            return message.content
    return ""


class OfflineChatModel:
    """The default chat model when none is configured (see the module docstring).

    ``latency=(min_s, max_s)`` adds a simulated delay per call, drawn uniformly from that range
    by a hash of ``seed`` and the request: the same request with the same seed always waits
    the same time, and the reply never depends on the delay. ``usage`` is the heuristic token
    estimate of the prompt and the reply, so run diagnostics have numbers to show.
    """

    identity = OFFLINE_IDENTITY

    def __init__(self, *, latency: tuple[float, float] | None = None, seed: int = 0) -> None:
        if latency is not None:
            low, high = latency
            if low < 0 or high < low:
                raise ValueError("latency must be (min_s, max_s) with 0 <= min_s <= max_s.")
        self.latency = latency
        self.seed = seed
        if latency is not None and latency[1] > 0:
            # a demo with simulated latency also writes its final answer piece by piece, like a
            # real model's streamed reduce (without latency there is nothing to watch)
            self.complete_streaming = self._complete_streaming

    def __repr__(self) -> str:
        return f"OfflineChatModel(latency={self.latency!r}, seed={self.seed!r})"

    def delay_for(self, request: ChatRequest) -> float:
        """The simulated delay of ``request`` in seconds: a function of the seed and the request."""
        if self.latency is None:
            return 0.0
        low, high = self.latency
        digest = hashlib.sha256(f"{self.seed}\n{request.model_dump_json()}".encode()).digest()
        fraction = int.from_bytes(digest[:8], "big") / 2**64
        return low + (high - low) * fraction

    def reply(self, request: ChatRequest) -> str:
        """The reply text for ``request``, computed synchronously (no delay)."""
        if request.purpose in EVAL_PURPOSES:  # judge, claims, questions: a labelled heuristic
            return eval_reply(request)
        user = _user_message(request)
        if request.purpose == "summary":
            _, data = split_prompt_sections(user)
            payload = answer_summary(data or user)
        elif request.purpose == "rate":  # dynamic selection: see offline_rating
            from .offline_rating import answer_rating

            payload = answer_rating(*split_prompt_sections(user))
        else:
            question, data = split_prompt_sections(user)
            payload = answer_map(question, data) if request.purpose == "map" else answer_reduce(question, data)
        return json.dumps(payload, ensure_ascii=False)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        delay = self.delay_for(request)
        if delay > 0:
            await asyncio.sleep(delay)
        # Off the event loop: a big batch takes milliseconds to score, and other calls (and the
        # page's progress) must go on meanwhile, as they would with a remote model.
        text = await asyncio.to_thread(self.reply, request)
        usage = TokenUsage(prompt_tokens=estimate_tokens(request.prompt_text), completion_tokens=estimate_tokens(text))
        return ChatResponse(text=text, usage=usage)

    async def _complete_streaming(self, request: ChatRequest, on_text: Callable[[str], None]) -> ChatResponse:
        """The reply of :meth:`complete`, delivered in ``STREAM_PIECES`` pieces over its delay."""
        delay = self.delay_for(request)
        text = self.reply(request)
        size = max(1, -(-len(text) // STREAM_PIECES))
        for start in range(0, len(text), size):
            await asyncio.sleep(delay / STREAM_PIECES)
            on_text(text[start : start + size])
        usage = TokenUsage(prompt_tokens=estimate_tokens(request.prompt_text), completion_tokens=estimate_tokens(text))
        return ChatResponse(text=text, usage=usage)


STREAM_PIECES = 40
"""How many pieces a streamed offline reply comes in."""


__all__ = ["OFFLINE_IDENTITY", "OfflineChatModel", "answer_map", "answer_reduce", "answer_summary"]
