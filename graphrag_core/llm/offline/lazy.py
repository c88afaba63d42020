"""The offline model's answers to the lazy method's prompts (docs/lazy-search.md), deterministic.

- ``expand``: the question itself, then its parts when it asks several things (split at
  ``?``, ``;``, and at ``and`` / ``以及`` before a question word: "what is X and how ..."), at
  most four.
- ``relevance``: each source chunk is rated for the subquery as a community summary is rated
  (:func:`.rating.answer_rating`); it is relevant from :data:`RELEVANT_RATING` when it also
  holds one of the subquery's strong terms (as a map answer needs: a chunk the map would find
  nothing in is not relevant); its claims are
  its complete sentences that hold the most question terms (a broad question's: its first
  ones), at most :data:`CLAIMS_PER_CHUNK`.
- the map over a community's evidence (:func:`evidence_sentences`): its claims and its source
  text read as sentences, each with its community and the source chunk it came from; the
  claims stand where a community summary stands in the other maps (they are its distilled
  statements).

Invariant: each answer is a function of its arguments alone.
"""

from __future__ import annotations

import re

from ...context import (
    EVIDENCE_SECTION_CLAIMS,
    parse_cited_points,
    parse_evidence_section,
    parse_excerpt_header,
    parse_part_header,
    split_prompt_sections,
)
from ...context import MAP_SECTION_SUMMARY
from ...samples.text import strip_reference_braces
from .rating import answer_rating
from .retrieval import BULLET_RE, Sentence, is_complete_sentence, split_sentences, terms, truncate_words

RELEVANT_RATING = 2
"""The rating (0-5, as a community summary's) from which a chunk is relevant to a subquery."""
CLAIMS_PER_CHUNK = 2
MAX_SUBQUERIES = 4
_CLAUSE_RE = re.compile(r"(?<=[?？;；])\s*")
_JOIN_RE = re.compile(r",?\s+and\s+(?=(?:how|what|why|when|where|who|which)\b)|以及(?=[怎如为什哪谁何])", re.IGNORECASE)
_SOURCE_LINE_RE = re.compile(r"^\[Source ID: (?P<id>[^\]|]+)\]\s*$")


def _content_terms(text: str) -> int:
    return len(set(terms(text, keep_generic=False).strong))


def expansion_reply(question: str) -> dict[str, object]:
    """The expansion reply ``{"subqueries"}`` (see the module docstring)."""
    found = [question.strip()]
    for clause in (c.strip() for c in _CLAUSE_RE.split(question) if c.strip()):
        parts = [p.strip(" ,，") for p in _JOIN_RE.split(clause) if p.strip(" ,，")]
        if len(parts) > 1 and all(_content_terms(p) >= 1 for p in parts):
            found.extend(parts)
        elif clause != question.strip():
            found.append(clause)
    unique = list(dict.fromkeys(f for f in found if f))
    return {"subqueries": unique[:MAX_SUBQUERIES]}


def _chunks_of(data: str) -> list[tuple[str, str]]:
    """The ``(source id, text)`` of each chunk in a relevance test's data."""
    chunks: list[tuple[str, list[str]]] = []
    for line in data.splitlines():
        match = _SOURCE_LINE_RE.match(line.strip())
        if match:
            chunks.append((match.group("id").strip(), []))
        elif chunks:
            chunks[-1][1].append(line)
    return [(ref, "\n".join(lines).strip()) for ref, lines in chunks]


def _claims(question: str, text: str) -> list[str]:
    sentences = [strip_reference_braces(s) for s in split_sentences(text)]
    complete = [s for s in sentences if is_complete_sentence(s)] or [truncate_words(s, 30) for s in sentences[:1]]
    wanted = set(terms(question, keep_generic=False).all)
    if not wanted:
        return complete[:CLAIMS_PER_CHUNK]
    scored = sorted(
        ((len(wanted & set(terms(s).all)), -i, s) for i, s in enumerate(complete)), reverse=True
    )
    return [s for score, _, s in scored if score > 0][:CLAIMS_PER_CHUNK]


def relevance_reply(question: str, data: str) -> dict[str, object]:
    """The relevance test reply ``{"tests"}`` for the chunks of one test (see the module docstring)."""
    tests = []
    strong = set(terms(question, keep_generic=False).strong)
    for ref, text in _chunks_of(data):
        rating = int(answer_rating(question, text)["rating"])  # type: ignore[call-overload]
        relevant = rating >= RELEVANT_RATING and (not strong or bool(strong & set(terms(text).strong)))
        tests.append({"source_id": ref, "relevant": relevant, "claims": _claims(question, text) if relevant else []})
    return {"tests": tests}


def answer_relevance(user_message: str) -> dict[str, object]:
    return relevance_reply(*split_prompt_sections(user_message))


def evidence_sentences(data: str) -> list[Sentence]:
    """The sentences of a batch of the lazy method's evidence, each with its community and its
    source chunk (claims cite theirs; an excerpt's is its header's)."""
    sentences: list[Sentence] = []
    community: str | None = None
    section, source = "", None

    def add(text: str, sources: list[str], as_section: str) -> None:
        text = strip_reference_braces(text.strip())
        if community is not None and is_complete_sentence(text):
            sentences.append(Sentence(text, [community], len(sentences), as_section, terms(text), source_ids=sources))

    excerpt: list[str] = []

    def flush() -> None:
        for raw in split_sentences("\n".join(excerpt)):
            add(raw, [source] if source else [], "")
        excerpt.clear()

    for line in data.splitlines():
        header = parse_part_header(line)
        marker = parse_evidence_section(line)
        reference = parse_excerpt_header(line)
        if header or marker or reference is not None:
            flush()
            if header:
                community, section, source = header.community_id, "", None
            elif marker:
                section, source = marker, None
            else:
                source = reference
        elif section == EVIDENCE_SECTION_CLAIMS:
            for text, _ids, _sources in parse_cited_points(BULLET_RE.sub("", line.strip())):
                if text.strip():
                    add(text, list(_ids), MAP_SECTION_SUMMARY)
        else:
            excerpt.append(line)
    flush()
    return sentences


__all__ = ["CLAIMS_PER_CHUNK", "RELEVANT_RATING", "answer_relevance", "evidence_sentences", "expansion_reply", "relevance_reply"]
