"""The offline model's answers to the search prompts: map, reduce and community summaries.

- ``map``: the batch's complete sentences (fragments cut off by a chunk boundary, headings
  without a full stop and sentences with unbalanced quotes are left out; ``{cross-reference}``
  braces are removed) are scored against the question with BM25 (English words and Chinese
  characters plus character bigrams); the answer is the most relevant sentences, each cited
  ``[Communities: id, ...]``, each written as a point that names its subject (the headword of
  its line, or the term of the source chunk it is in: ``chase pointers: Used only in a debugging
  context.``); lines that only list names make no point. ``usefulness`` is the BM25 mass of the best three sentences
  mapped to 0-100 (``1 - exp(-mass / 15)``), weighted by how much of the question the batch
  covers, so it spreads with relevance. Nothing relevant gives ``{"answer": "", "usefulness": 0}``.
  A broad question with no content words left ("What are the main themes?") is answered from
  the batch's most central sentences instead; its usefulness grows with the batch's share of
  summary text and with the terms its communities' summaries share (themes).
- ``reduce``: the candidates' cited sentences are merged round-robin in usefulness order,
  deduplicated (the same point in other words once, its citations merged), under a one-line
  overview in the language the prompt asks for (the corpus's), else the answers', else the
  question's; Chinese in the script of the answers, quoting the question only when it is in the
  answer's language. Naive RAG's call (source excerpts instead of
  candidates) is answered as a map over the excerpts is, under the same kind of overview.
- Source chunks (the ``text`` and ``vector`` methods: ``[Source ID: ...]`` parts,
  ``Source IDs`` candidates) are read and cited as such: ``[Sources: id, ...]``.
- The lazy method's evidence (``[Community ID: ... | evidence part n]`` parts) is read by
  :mod:`.lazy`; its points cite their community and their sources,
  ``[Communities: 3] [Sources: 40]``, and the reduce keeps both.
- ``summary``: an extractive ``{"title", "summary"}`` of a community's text, in its language.

Invariant: each answer is a function of its arguments alone.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ...context import (
    COMMUNITY,
    MAP_SECTION_SOURCES,
    EVIDENCE,
    MAP_SECTION_SUMMARY,
    SOURCE,
    Unit,
    format_citation,
    header_unit,
    parse_candidate_header,
    parse_cited_points,
    parse_citations,
    parse_map_section,
    parse_part_header,
)
from ...language import Language, chinese_script, text_language
from ...samples.text import strip_reference_braces
from ...sentences import split_sentences as engine_sentences
from .retrieval import (
    BULLET_RE,
    CJK_RANGES,
    CJK_RUN_RE,
    TOKEN_RE,
    Sentence,
    bm25,
    centrality,
    is_chinese,
    is_complete_sentence,
    is_name_list,
    pick,
    split_sentences,
    stem,
    terms,
    truncate_words,
    word_count,
)

MAP_ANSWER_MAX_WORDS = 120
MAP_ANSWER_MAX_SENTENCES = 5
REDUCE_MAX_POINTS = 8
REDUCE_MAX_WORDS = 260
SUMMARY_MAX_SENTENCES = 4
NO_ANSWER = "The intermediate answers do not contain enough information to answer the question."
NO_ANSWER_ZH = "中间回答中没有足够的信息来回答这个问题。"
NO_EXCERPT_ANSWER = "The source excerpts do not contain enough information to answer the question."
NO_EXCERPT_ANSWER_ZH = "原文片段中没有足够的信息来回答这个问题。"
USEFULNESS_MASS_SCALE = 15.0
"""BM25 mass (sum of the best three sentence scores) at which usefulness reaches 63% of its ceiling."""
BROAD_THEMES_SCALE = 20.0
"""Shared summary terms at which a broad question's theme bonus reaches 63% of its ceiling."""


def _bullets(sentences: Iterable[Sentence], unit: Unit = COMMUNITY) -> str:
    """Each sentence as a cited list item; one whose sources are known cites them too
    (``[Communities: 3] [Sources: 40]``, the lazy method's form)."""
    return "\n".join(
        f"- {s.text} {format_citation(s.community_ids, unit=unit)}" + (f" {format_citation(s.source_ids, unit=SOURCE)}" if s.source_ids else "")
        for s in sentences
    )


def _unit_of(data: str) -> Unit:
    """What the data's parts are: source chunks when a part header says so, else communities."""
    for line in data.splitlines():
        unit = header_unit(line)
        if unit is not None:
            return unit
    return COMMUNITY


_EXCERPT_HEADING_RE = re.compile(r"^:(?P<term>[^:\s][^:]*?):(?:\s|$)")
"""The first line of a source chunk the sample builder wrote (``:root: n.``, ``:李白: 詩人``): the
chunk's paragraphs are about that term."""
_HEADWORD_RE = re.compile(r"^(?P<head>[^:：。.!?，、；;\[\]]{1,40}?)\s*(?:->[^:：]*)?(?P<colon>[:：])\s*(?=\S)")
"""What opens a sentence that says what it is about: ``headword: ...`` (a summary's member line,
a claim line ``subject -> object: ...``, 李白：...)."""
_SPEECH_ENDINGS = tuple("曰云謂道言說问問答")
"""A Chinese "headword" ending in a verb of saying is a speaker (帝曰：“...”), not an entry."""
_CHINESE_START_RE = re.compile(f"[{CJK_RANGES}《「『（]")
"""What a Chinese sentence starts with: a Han character or an opening mark."""
_FRAGMENT_START_RE = re.compile(
    r"^(?:to|used|also|often|usually|sometimes|esp|especially|syn|synonym|compare|see|of|or|and|more|"
    r"occasionally|formerly|now|orig|originally|rare|obs|similar|opposite|abbrev|abbreviation)\b",
    re.IGNORECASE,
)
"""Words an English fragment of a definition opens with ("To insert a kluge...", "Used only in
...", "Also called..."): such a sentence needs its subject before it even when it names it."""


def sentence_subject(text: str, *, full_width_only: bool = False) -> str:
    """The headword ``text`` opens with (``root: ...``, ``李白：...``), else ``""``. With
    ``full_width_only`` only a full-width colon counts (inside a line of Chinese, where the
    builder's summaries run their members together)."""
    match = _HEADWORD_RE.match(text)
    if not match or (full_width_only and match.group("colon") != "："):
        return ""
    head = match.group("head").strip()
    return "" if _CHINESE_START_RE.match(head) and head.endswith(_SPEECH_ENDINGS) else head


def with_subject(text: str, subject: str) -> str:
    """``text`` as a point that names what it is about: ``subject: text`` (``subject：text`` in
    Chinese) unless ``text`` opens with ``subject:`` or names it as a sentence would; an English
    fragment of a definition ("Often used to repair bugs.") always gets it. A Chinese sentence's
    ``headword: `` is written with the full-width colon."""
    head = _HEADWORD_RE.match(text)
    if head and head.group("colon") == ":" and _CHINESE_START_RE.match(text, head.end()):
        text = f"{text[: head.start('colon')].rstrip()}：{text[head.end():]}"
    if not subject or sentence_subject(text).casefold() == subject.casefold():
        return text
    named = subject.casefold() in text.casefold()
    if named and not _FRAGMENT_START_RE.match(text):
        return text
    chinese = _CHINESE_START_RE.match(text) or _CHINESE_START_RE.search(subject)
    return f"{subject}：{text}" if chinese else f"{subject}: {text}"


def _map_sentences(data: str) -> list[Sentence]:
    """The batch's sentences, each with the id of the part (community or source chunk) it came
    from, written as points that name their subject (:func:`with_subject`): the last headword
    before it on its line (:func:`sentence_subject`), or in a source excerpt the term of the
    chunk it is in. Lines that only list names (:func:`~.retrieval.is_name_list`) make no point."""
    sentences: list[Sentence] = []
    community: str | None = None
    section = ""
    chunk_subject = ""
    first_in_section = True
    for line in data.splitlines():
        header = parse_part_header(line)
        marker = parse_map_section(line)
        if header:
            community, chunk_subject, first_in_section = header.community_id, "", True
            section = MAP_SECTION_SUMMARY if header.part == 1 and header_unit(line) == COMMUNITY else ""
            continue
        if marker:
            section, chunk_subject, first_in_section = marker, "", True
            continue
        if community is None:
            continue
        heading = _EXCERPT_HEADING_RE.match(line.strip())
        if heading:
            chunk_subject = heading.group("term").strip()
        excerpt = section == MAP_SECTION_SOURCES or bool(chunk_subject)  # a paragraph is about its chunk's term
        subject = chunk_subject if excerpt else ""
        for position, raw in enumerate(split_sentences(line)):
            text = strip_reference_braces(raw)
            if not (excerpt and chunk_subject):
                subject = sentence_subject(text, full_width_only=position > 0) or subject
            if is_complete_sentence(text) and not is_name_list(text):
                sentences.append(
                    Sentence(with_subject(text, subject), [community], len(sentences), section, terms(text), opens_section=first_in_section)
                )
            first_in_section = False
    return sentences


def answer_map(
    question: str, data: str, *, max_words: int = MAP_ANSWER_MAX_WORDS, max_count: int = MAP_ANSWER_MAX_SENTENCES
) -> dict[str, object]:
    """The map reply ``{"answer", "usefulness"}`` for one batch (see the module docstring); a
    batch of the lazy method's evidence is read as such (:func:`.lazy.evidence_sentences`)."""
    unit = _unit_of(data)
    if unit == EVIDENCE:
        from .lazy import evidence_sentences

        return answer_sentences(question, evidence_sentences(data), COMMUNITY, max_words=max_words, max_count=max_count)
    return answer_sentences(question, _map_sentences(data), unit, max_words=max_words, max_count=max_count)


def answer_sentences(
    question: str, sentences: Sequence[Sentence], unit: Unit, *, max_words: int = MAP_ANSWER_MAX_WORDS, max_count: int = MAP_ANSWER_MAX_SENTENCES
) -> dict[str, object]:
    """The map reply for a batch's ``sentences`` (see the module docstring)."""
    if not sentences:
        return {"answer": "", "usefulness": 0}
    query = terms(question, keep_generic=False)
    if not query.all:
        return _answer_broad(sentences, unit, max_words=max_words, max_count=max_count)

    weights = query.weights()
    scores = bm25(weights, [s.terms for s in sentences])
    # Single CJK characters alone make a sentence relevant only when the question has no
    # stronger term; otherwise every Chinese text would share a character with the question.
    strong_query = set(query.strong)
    relevant = [
        _shape(s, score, set(weights)) if (strong_query & set(s.terms.strong)) or not strong_query else 0.0
        for s, score in zip(sentences, scores)
    ]
    if not any(score > 0 for score in relevant):
        return {"answer": "", "usefulness": 0}
    chosen = pick(sentences, relevant, max_words=max_words, max_count=max_count)

    batch_terms = {t for s in sentences for t in s.terms.all}
    total_weight = sum(weights.values())
    coverage = sum(w for t, w in weights.items() if t in batch_terms) / total_weight
    mass = sum(sorted(relevant, reverse=True)[:3])
    usefulness = 100.0 * (1.0 - math.exp(-mass / USEFULNESS_MASS_SCALE)) * (0.4 + 0.6 * coverage)
    return {"answer": _bullets(chosen, unit), "usefulness": max(1, min(100, round(usefulness)))}


def _shape(sentence: Sentence, score: float, query: set[str]) -> float:
    """BM25 adjusted for the shape of the sentence: a query term among its first three terms
    (the subject of a claim line, a glossary headword) counts more; a fragment counts less."""
    if any(term in query for term in sentence.terms.strong[:3]):
        score *= 1.5
    if word_count(sentence.text) < 5:
        score *= 0.5
    return score


def _answer_broad(sentences: Sequence[Sentence], unit: Unit, *, max_words: int, max_count: int) -> dict[str, object]:
    """A question with no content terms: the batch's most central sentences, summaries first."""
    scores = centrality([s.terms for s in sentences])
    # Summary sentences say what a community is about, its first one most of all: they come
    # first, then the most central of the rest.
    top = max(scores, default=0.0) + 1.0
    scores = [
        (score + (top * (1 + s.opens_section) if s.section == MAP_SECTION_SUMMARY else 0.0))
        * (0.5 if word_count(s.text) < 5 else 1.0)
        for s, score in zip(sentences, scores)
    ]
    chosen = pick(sentences, scores, max_words=max_words, max_count=max_count)
    if not chosen:
        return {"answer": "", "usefulness": 0}
    return {"answer": _bullets(chosen, unit), "usefulness": _broad_usefulness(sentences)}


def _broad_usefulness(sentences: Sequence[Sentence]) -> int:
    """How much a batch says about themes: 20, plus up to 40 for its share of summary text
    (summaries describe what communities are about; claims and excerpts are details), plus
    up to 30 for the terms that two or more of its communities' summaries share."""
    summary = [s for s in sentences if s.section == MAP_SECTION_SUMMARY]
    total_words = sum(word_count(s.text) for s in sentences) or 1
    share = sum(word_count(s.text) for s in summary) / total_words
    holders: dict[str, set[str]] = {}
    for sentence in summary:
        for term in sentence.terms.strong:
            if len(term) > 2 or CJK_RUN_RE.match(term):
                holders.setdefault(term, set()).update(sentence.community_ids)
    shared = sum(1 for ids in holders.values() if len(ids) >= 2)
    return max(1, min(100, round(20 + 40 * math.sqrt(share) + 30 * (1 - math.exp(-shared / BROAD_THEMES_SCALE)))))


def _candidate_points(answer: str, default_ids: list[str], rank: int) -> list[Sentence]:
    """The cited sentences of one intermediate answer, in its order.

    A citation ``[Communities: ...]`` applies to the text before it on its line (back to the
    previous citation); text with no citation after it gets the candidate's community ids.
    """
    points: list[Sentence] = []
    for line in answer.splitlines():
        line = BULLET_RE.sub("", line.strip())
        if not line or parse_map_section(line):
            continue
        for text, ids, sources in parse_cited_points(line):
            for sentence in engine_sentences(text):
                sentence = strip_reference_braces(sentence.strip())
                if sentence and TOKEN_RE.search(sentence):
                    points.append(
                        Sentence(sentence, list(ids or default_ids), rank * 1000 + len(points), terms=terms(sentence), source_ids=list(sources))
                    )
    return points


@dataclass(frozen=True)
class _Wording:
    """What the offline model writes around the sentences it extracts, in one language (and,
    for Chinese, one script): the overview lines and the answers for nothing found."""

    no_answer: str
    no_excerpt_answer: str
    topic: str
    overview: str
    excerpt_overview: str
    communities: tuple[str, str]
    chunks: tuple[str, str]
    excerpts: tuple[str, str]


_WORDINGS: dict[str, _Wording] = {
    "en": _Wording(
        no_answer=NO_ANSWER,
        no_excerpt_answer=NO_EXCERPT_ANSWER,
        topic=' on "{question}"',
        overview="Overview{topic}: {points} drawn from {answers} covering {covered}.",
        excerpt_overview="Overview{topic}: {points} drawn from {covered}.",
        communities=("community", "communities"),
        chunks=("source chunk", "source chunks"),
        excerpts=("source excerpt", "source excerpts"),
    ),
    "hans": _Wording(
        no_answer=NO_ANSWER_ZH,
        no_excerpt_answer=NO_EXCERPT_ANSWER_ZH,
        topic="关于“{question}”：",
        overview="{topic}从 {answers} 个中间回答中归纳出 {points} 个要点，涉及 {covered} {noun}。",
        excerpt_overview="{topic}从 {covered} 个原文片段中归纳出 {points} 个要点。",
        communities=("个社区", "个社区"),
        chunks=("个原文片段", "个原文片段"),
        excerpts=("个原文片段", "个原文片段"),
    ),
    "hant": _Wording(
        no_answer="中間回答中沒有足夠的資訊來回答這個問題。",
        no_excerpt_answer="原文片段中沒有足夠的資訊來回答這個問題。",
        topic="關於“{question}”：",
        overview="{topic}從 {answers} 個中間回答中歸納出 {points} 個要點，涉及 {covered} {noun}。",
        excerpt_overview="{topic}從 {covered} 個原文片段中歸納出 {points} 個要點。",
        communities=("個社區", "個社區"),
        chunks=("個原文片段", "個原文片段"),
        excerpts=("個原文片段", "個原文片段"),
    ),
}


def _question_language(question: str) -> Language:
    return text_language(question) or ("zh" if is_chinese(question) else "en")


def _answer_language(question: str, data: str, requested: Language | None) -> Language:
    """The language an answer is written in: the one the prompt asks for (the corpus's), else
    the data's, else the question's."""
    return requested or text_language(data) or _question_language(question)


def _wording(language: Language, text: str) -> _Wording:
    return _WORDINGS[chinese_script(text)] if language == "zh" else _WORDINGS["en"]


def _overview(wording: _Wording, language: Language, question: str, template: str, **figures: object) -> str:
    """An overview line; it quotes the question only when the question is in the answer's
    language (an English question is not quoted inside a Chinese answer, nor the reverse)."""
    quoted = question.strip() and _question_language(question) == language
    topic = wording.topic.format(question=question.strip()) if quoted else ""
    return template.format(topic=topic, **figures)


def _counted(language: Language, count: int, nouns: tuple[str, str]) -> str:
    if language == "zh":
        return str(count)
    return f"{count} {nouns[0] if count == 1 else nouns[1]}"


def answer_reduce(question: str, data: str, *, language: Language | None = None) -> dict[str, object]:
    """The reduce reply ``{"answer"}``: an overview line and the merged, cited points.

    A point's rank blends its candidate's usefulness, its relevance to the question (BM25 over
    every candidate's points, scaled to 0-1) and its place in its candidate's answer (earlier
    is better); ties keep a round-robin order over the candidates. The overview is in
    ``language`` (what the prompt asks for), else in the language of the answers, else of the
    question; its Chinese follows the answers' script.
    """
    candidates: list[tuple[float, list[str], list[str]]] = []  # (usefulness, ids, answer lines)
    unit: Unit = COMMUNITY
    for line in data.splitlines():
        header = parse_candidate_header(line)
        if header:
            candidates.append((header.usefulness, header.community_ids, []))
            unit = header_unit(line) or COMMUNITY
        elif candidates:
            candidates[-1][2].append(line)
    if not candidates and _unit_of(data) == SOURCE:
        return _answer_excerpts(question, data, language=language)
    per_candidate = [
        (usefulness, points)
        for rank, (usefulness, ids, lines) in enumerate(candidates)
        if (points := _candidate_points("\n".join(lines), ids, rank))
    ]
    language = _answer_language(question, data, language)
    wording = _wording(language, data + question)
    if not per_candidate:
        return {"answer": wording.no_answer}

    merged: list[tuple[float, int, Sentence]] = []  # (usefulness, depth, point), round-robin
    for depth in range(max(len(points) for _, points in per_candidate)):
        merged.extend((u, depth, points[depth]) for u, points in per_candidate if depth < len(points))
    query = terms(question, keep_generic=False)
    weights = Counter({**{t: 0.5 for t in query.weak}, **{t: 1.0 for t in query.strong}})
    relevance = bm25(weights, [point.terms for _, _, point in merged])
    relevance = [_shape(point, score, set(weights)) for (_, _, point), score in zip(merged, relevance)]
    top_relevance = max(relevance, default=0.0) or 1.0
    scores = [
        2.0 * u / 100.0 + relevance[i] / top_relevance - 0.25 * depth + _length_factor(point.text) + 1e-6 * (len(merged) - i)
        for i, (u, depth, point) in enumerate(merged)
    ]
    floor = min(scores)
    points = [Sentence(p.text, p.community_ids, i, terms=p.terms, source_ids=p.source_ids) for i, (_, _, p) in enumerate(merged)]
    chosen = pick(points, [score - floor + 1.0 for score in scores], max_words=REDUCE_MAX_WORDS, max_count=REDUCE_MAX_POINTS)
    communities: list[str] = []
    for sentence in chosen:
        communities.extend(c for c in sentence.community_ids if c not in communities)
    nouns = wording.communities if unit == COMMUNITY else wording.chunks
    overview = _overview(
        wording, language, question, wording.overview,
        points=_counted(language, len(chosen), ("key point", "key points")),
        answers=_counted(language, len(per_candidate), ("intermediate answer", "intermediate answers")),
        covered=_counted(language, len(communities), nouns), noun=nouns[0],
    )
    return {"answer": f"{overview}\n\n{_bullets(chosen, unit)}"}


def _answer_excerpts(question: str, data: str, *, language: Language | None) -> dict[str, object]:
    """Naive RAG's answer: the excerpts' most relevant sentences, each cited, under an overview."""
    reply = answer_map(question, data, max_words=REDUCE_MAX_WORDS, max_count=REDUCE_MAX_POINTS)
    points = str(reply["answer"])
    language = _answer_language(question, points or data, language)
    wording = _wording(language, (points or data) + question)
    if not points:
        return {"answer": wording.no_excerpt_answer}
    lines = points.count("\n") + 1
    cited = {cid for _, ids in (part for line in points.splitlines() for part in parse_citations(line)) for cid in ids}
    overview = _overview(
        wording, language, question, wording.excerpt_overview,
        points=_counted(language, lines, ("key point", "key points")), covered=_counted(language, len(cited), wording.excerpts),
    )
    return {"answer": f"{overview}\n\n{points}"}


def _length_factor(text: str) -> float:
    """A penalty for fragments (fewer than five words): they rarely make a point on their own."""
    return -0.5 if word_count(text) < 5 else 0.0


_SUMMARY_WORDS: dict[str, tuple[str, str, str, str]] = {
    "en": ("Untitled community", "No description is available for this community.", ", ", " and "),
    "hans": ("未命名社区", "本社区没有可用的描述。", "、", "与"),
    "hant": ("未命名社區", "本社區沒有可用的描述。", "、", "與"),
}
"""A summary's words, by language (and script): untitled, no description, and how names are joined."""


def answer_summary(data: str) -> dict[str, object]:
    """An extractive ``{"title", "summary"}``: the most frequent terms and most central sentences,
    in the data's language (Chinese sentences are joined without spaces)."""
    chinese = text_language(data) == "zh"
    untitled, undescribed, comma, conjunction = _SUMMARY_WORDS[chinese_script(data) if chinese else "en"]
    sentences = [Sentence(text, [], i, terms=terms(text)) for i, text in enumerate(split_sentences(data))]
    if not sentences:
        return {"title": untitled, "summary": undescribed}
    surface: dict[str, str] = {}
    for token in TOKEN_RE.findall(data):
        if not CJK_RUN_RE.match(token):
            surface.setdefault(stem(token.lower()), token)
    frequency: Counter[str] = Counter(t for s in sentences for t in s.terms.strong if len(t) > 2 or CJK_RUN_RE.match(t))
    top = [term for term, _ in sorted(frequency.items(), key=lambda item: (-item[1], item[0]))[:3]]
    names = [surface.get(term, term) for term in top]
    names = [name[:1].upper() + name[1:] for name in names]
    if not names:
        title = truncate_words(sentences[0].text, 8)
    elif len(names) == 1:
        title = names[0]
    else:
        title = comma.join(names[:-1]) + conjunction + names[-1]
    scores = centrality([s.terms for s in sentences])
    chosen = pick(sentences, [score + 1e-9 for score in scores], max_words=MAP_ANSWER_MAX_WORDS, max_count=SUMMARY_MAX_SENTENCES)
    chosen.sort(key=lambda s: s.order)
    stop = "。" if chinese else "."
    summary = ("" if chinese else " ").join(s.text if s.text.endswith((".", "!", "?", "。", "！", "？")) else s.text + stop for s in chosen)
    return {"title": title, "summary": summary}


__all__ = ["NO_ANSWER", "NO_ANSWER_ZH", "answer_map", "answer_reduce", "answer_sentences", "answer_summary"]
