"""The text formats the engine writes into prompts, each ``format_*`` beside its ``parse_*``
(as Microsoft GraphRAG's ``context_builder/``): the map text of one community (spec section 3),
a batch part's header (spec section 5), a reduce candidate (spec section 7), a citation, the
support check's cited texts and points, and the prompt's section markers.

A run's units are communities (the ``global`` method) or source chunks (``text`` and
``vector``, evaluation spec section 7); the formats that name units take the unit kind and
write ``Community`` or ``Source`` where the other writes the other (``[Source ID: 12 | part 1]``,
``[Usefulness: 80; Source IDs: 12, 40]``, ``[Sources: 12, 40]``). The community forms are the
spec's, unchanged. The ``lazy`` method maps over *evidence*: a community's relevant claims and
source text (:func:`format_evidence_text`), its parts headed ``[Community ID: 12 | evidence part 1]``.

Invariant: for every format here, ``parse_x(format_x(v))`` gives ``v`` back (for the values the
engine writes), so whatever reads prompts back (the offline model, tests) reads exactly what
the engine wrote.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple

if TYPE_CHECKING:
    from .rows import Claim
    from .results import MapAnswer

# -- the map text of one community (spec section 3) -------------------------------------------

MAP_SECTION_SUMMARY = "[Community summary]"
MAP_SECTION_CLAIMS = "[Supporting claims]"
MAP_SECTION_SOURCES = "[Source excerpts]"
MAP_SECTIONS: tuple[str, ...] = (MAP_SECTION_SUMMARY, MAP_SECTION_CLAIMS, MAP_SECTION_SOURCES)
"""The three parts of a map text, in their order."""
MAP_SECTION_SEPARATOR = "\n\n"
EXCERPT_SEPARATOR = "\n\n"


def format_claim_line(claim: Claim) -> str:
    """One line of the ``[Supporting claims]`` part: subject, object when present, description."""
    head = claim.subject if not claim.object else f"{claim.subject} -> {claim.object}"
    description = " ".join(claim.description.split())
    return f"- {head}: {description}" if description else f"- {head}"


def format_map_text(summary: str, claim_lines: Sequence[str] = (), excerpts: Sequence[str] = ()) -> str:
    """The text the batcher packs for one community: its summary, its claim lines and its
    source excerpts, each part under its section marker and left out when empty."""
    parts: list[str] = []
    if summary.strip():
        parts.append(f"{MAP_SECTION_SUMMARY}\n{summary.strip()}")
    if claim_lines:
        parts.append(MAP_SECTION_CLAIMS + "\n" + "\n".join(claim_lines))
    kept = [text.strip() for text in excerpts if text.strip()]
    if kept:
        parts.append(MAP_SECTION_SOURCES + "\n" + EXCERPT_SEPARATOR.join(kept))
    return MAP_SECTION_SEPARATOR.join(parts)


def parse_map_section(line: str) -> str | None:
    """The section marker ``line`` is (one of :data:`MAP_SECTIONS`), else None."""
    stripped = line.strip()
    return stripped if stripped in MAP_SECTIONS else None


# -- a batch part's header (spec section 5) -----------------------------------------------------

Unit = Literal["community", "source", "evidence"]
"""What a prompt's units are: communities, source chunks (:func:`graphrag_core.methods.unit_kind`),
or *evidence*: a community's source text and claims found relevant by the lazy method, named by
the community's id like a community, but never holding its summary."""
COMMUNITY: Unit = "community"
SOURCE: Unit = "source"
EVIDENCE: Unit = "evidence"


class PartHeader(NamedTuple):
    community_id: str
    """The unit's id: a community id, or a source chunk's reference (see :func:`header_unit`)."""
    part: int


_PART_HEADER_RE = re.compile(r"^\[Community ID: (?P<id>.*?) \| summary part (?P<n>\d+)\]\s*$")
_EVIDENCE_HEADER_RE = re.compile(r"^\[Community ID: (?P<id>.*?) \| evidence part (?P<n>\d+)\]\s*$")
_SOURCE_HEADER_RE = re.compile(r"^\[Source ID: (?P<id>.*?)(?: \| part (?P<n>\d+))?\]\s*$")


def format_part_header(community_id: str, part: int | str, *, unit: Unit = COMMUNITY) -> str:
    """``[Community ID: {id} | summary part {n}]`` (``[Source ID: {id} | part {n}]`` for a source
    chunk, ``[Community ID: {id} | evidence part {n}]`` for a community's evidence) and a
    newline, before each part's text."""
    if unit == SOURCE:
        return f"[Source ID: {community_id} | part {part}]\n"
    if unit == EVIDENCE:
        return f"[Community ID: {community_id} | evidence part {part}]\n"
    return f"[Community ID: {community_id} | summary part {part}]\n"


def format_source_header(reference: str) -> str:
    """``[Source ID: {ref}]`` and a newline, before a whole source chunk (naive RAG's excerpts)."""
    return f"[Source ID: {reference}]\n"


def parse_part_header(line: str) -> PartHeader | None:
    """The unit id and part number of a part header line (a community's or a source chunk's),
    else None; a whole source chunk's header is its part 1."""
    stripped = line.strip()
    match = _PART_HEADER_RE.match(stripped) or _EVIDENCE_HEADER_RE.match(stripped)
    if match:
        return PartHeader(match.group("id"), int(match.group("n")))
    match = _SOURCE_HEADER_RE.match(stripped)
    if match:
        return PartHeader(match.group("id"), int(match.group("n") or 1))
    return None


def header_unit(line: str) -> Unit | None:
    """What a part or candidate header line heads: ``"community"``, ``"source"``, or None when
    the line is no header."""
    stripped = line.strip()
    if _PART_HEADER_RE.match(stripped):
        return COMMUNITY
    if _EVIDENCE_HEADER_RE.match(stripped):
        return EVIDENCE
    if _SOURCE_HEADER_RE.match(stripped):
        return SOURCE
    match = _CANDIDATE_HEADER_RE.match(stripped)
    if match:
        return SOURCE if match.group("unit") == "Source" else COMMUNITY
    return None


# -- a reduce candidate (spec section 7) ------------------------------------------------------

CANDIDATE_SEPARATOR = "\n\n"
"""Between two reduce candidates in the reduce prompt."""


class CandidateHeader(NamedTuple):
    usefulness: float
    community_ids: list[str]


_CANDIDATE_HEADER_RE = re.compile(r"^\[Usefulness: (?P<u>[^;\]]*); (?P<unit>Community|Source) IDs: (?P<ids>[^\]]*)\]\s*$")
_UNIT_WORD: dict[str, str] = {COMMUNITY: "Community", SOURCE: "Source", EVIDENCE: "Community"}


def format_usefulness(usefulness: float) -> str:
    """A whole number prints without a decimal point (85, not 85.0)."""
    value = float(usefulness)
    return str(int(value)) if value.is_integer() else repr(value)


def format_ids(ids: Iterable[str]) -> str:
    """Community ids as written in the prompts: ``a, b, c``."""
    return ", ".join(ids)


def parse_ids(text: str) -> list[str]:
    """The ids of ``a, b, c`` (braces around the list are tolerated)."""
    return [part.strip() for part in text.strip().strip("{}").split(",") if part.strip()]


def format_reduce_candidate(answer: MapAnswer, *, unit: Unit = COMMUNITY) -> str:
    """``[Usefulness: {u}; Community IDs: {id1, id2}]\\n{answer}`` (``Source IDs`` for source chunks)."""
    ids = format_ids(answer.community_ids)
    return f"[Usefulness: {format_usefulness(answer.usefulness)}; {_UNIT_WORD[unit]} IDs: {ids}]\n{answer.answer}"


def parse_candidate_header(line: str) -> CandidateHeader | None:
    """The usefulness and community ids of a reduce candidate's header line, else None.

    A usefulness that is not a finite number reads as 0."""
    match = _CANDIDATE_HEADER_RE.match(line.strip())
    if not match:
        return None
    try:
        usefulness = float(match.group("u"))
    except ValueError:
        usefulness = 0.0
    if usefulness != usefulness or usefulness in (float("inf"), float("-inf")):
        usefulness = 0.0
    return CandidateHeader(usefulness, parse_ids(match.group("ids")))


# -- a citation in an answer ------------------------------------------------------------------

CITATION_RE = re.compile(r"\s*\[(?:Communities?|Sources?): (?P<ids>[^\]]*)\]\s*")
"""A citation as the prompts ask for it (``[Communities: id, id]``, ``[Community: id]`` too;
``[Sources: id, id]`` for source chunks)."""


def format_citation(ids: Iterable[str], *, unit: Unit = COMMUNITY) -> str:
    """``[Communities: a, b]``, or ``[Sources: a, b]`` for source chunks."""
    return f"[{'Sources' if unit == SOURCE else 'Communities'}: {format_ids(ids)}]"


# -- a community's evidence (the lazy method's map text, docs/lazy-search.md) ---------------------

EVIDENCE_SECTION_CLAIMS = "[Relevant claims]"
EVIDENCE_SECTION_SOURCES = "[Relevant source text]"
EVIDENCE_SECTIONS: tuple[str, ...] = (EVIDENCE_SECTION_CLAIMS, EVIDENCE_SECTION_SOURCES)
_EXCERPT_HEADER_RE = re.compile(r"^\[Source: (?P<id>[^\]]+)\]\s*$")


class EvidenceItem(NamedTuple):
    """One relevant source chunk of a community's evidence: its reference, its text and the
    claims its relevance tests drew from it."""

    reference: str
    text: str
    claims: tuple[str, ...] = ()


def format_excerpt_header(reference: str) -> str:
    """``[Source: {ref}]``, alone on its line before an excerpt of a community's evidence."""
    return f"[Source: {reference}]"


def parse_excerpt_header(line: str) -> str | None:
    """The reference of an excerpt header line (:func:`format_excerpt_header`), else None."""
    match = _EXCERPT_HEADER_RE.match(line.strip())
    return match.group("id") if match else None


def format_evidence_text(items: Sequence[EvidenceItem]) -> str:
    """A community's evidence as the lazy method's map reads it: ``[Relevant claims]`` (one line
    per claim, each citing its source ``[Sources: ref]``), then ``[Relevant source text]`` (each
    chunk under its :func:`format_excerpt_header`). A part with nothing in it is left out; no
    community summary is ever part of it."""
    claim_lines = [
        f"- {' '.join(claim.split())} {format_citation([item.reference], unit=SOURCE)}"
        for item in items for claim in item.claims if claim.strip()
    ]
    excerpts = [f"{format_excerpt_header(item.reference)}\n{item.text.strip()}" for item in items if item.text.strip()]
    parts: list[str] = []
    if claim_lines:
        parts.append(EVIDENCE_SECTION_CLAIMS + "\n" + "\n".join(claim_lines))
    if excerpts:
        parts.append(EVIDENCE_SECTION_SOURCES + "\n" + EXCERPT_SEPARATOR.join(excerpts))
    return MAP_SECTION_SEPARATOR.join(parts)


def parse_evidence_section(line: str) -> str | None:
    """The evidence section marker ``line`` is (one of :data:`EVIDENCE_SECTIONS`), else None."""
    stripped = line.strip()
    return stripped if stripped in EVIDENCE_SECTIONS else None


def parse_citations(line: str) -> list[tuple[str, list[str]]]:
    """``line`` cut at its citations: each piece of text with the ids cited right after it
    (the last piece, after the last citation, with none); a run cites one kind of unit, so the
    kind is not returned."""
    segments: list[tuple[str, list[str]]] = []
    offset = 0
    for match in CITATION_RE.finditer(line):
        segments.append((line[offset : match.start()], parse_ids(match.group("ids"))))
        offset = match.end()
    segments.append((line[offset:], []))
    return segments


def parse_cited_points(line: str) -> list[tuple[str, list[str], list[str]]]:
    """``line`` cut at its citations as :func:`parse_citations` cuts it, except that a
    ``[Sources: ...]`` citation right after another citation names the sources of the same text
    (the lazy method's ``point [Communities: 3] [Sources: 40]``): each piece of text with the
    ids cited right after it and those sources."""
    segments: list[tuple[str, list[str], list[str]]] = []
    offset = 0
    for match in CITATION_RE.finditer(line):
        text = line[offset : match.start()]
        ids = parse_ids(match.group("ids"))
        if segments and segments[-1][1] and not text.strip() and match.group(0).lstrip().startswith("[Source"):
            segments[-1][2].extend(ids)
        else:
            segments.append((text, ids, []))
        offset = match.end()
    segments.append((line[offset:], [], []))
    return segments


# -- the prompt's sections ----------------------------------------------------------------------

# -- the support check's prompt: the cited texts, then the points --------------------------------

SUPPORT_TEXTS_MARKER = "---Texts---"
SUPPORT_POINTS_MARKER = "---Points---"
_SUPPORT_TEXT_RE = re.compile(r"^\[(?P<kind>summary|claim|chunk) (?P<id>[^\]·]+?)(?: · (?:community|source) (?P<cited>[^\]]+))?\]$")
_SUPPORT_POINT_RE = re.compile(r"^\[Point (?P<n>\d+) · cites (?:communities|community|sources|source) (?P<ids>[^\]]*)\]$")


def format_support_text_header(kind: str, unit_id: str, cited: str, *, unit: Unit = COMMUNITY) -> str:
    """The line that heads one cited text: ``[summary 98]`` (a community's summary: its id is the
    community's), ``[claim c01088 · community 98]``, ``[chunk d1813-1 · source 12]``."""
    if kind == "summary" and unit_id == cited:
        return f"[summary {unit_id}]"
    return f"[{kind} {unit_id} · {'community' if unit == COMMUNITY else 'source'} {cited}]"


def parse_support_text_header(line: str) -> tuple[str, str, str] | None:
    """``(kind, id, cited)`` of a cited text's header line, else None."""
    found = _SUPPORT_TEXT_RE.match(line.strip())
    if found is None:
        return None
    return found.group("kind"), found.group("id"), found.group("cited") or found.group("id")


def format_support_point_header(number: int, cited: Sequence[str], *, unit: Unit = COMMUNITY) -> str:
    """The line that heads one point: ``[Point 1 · cites community 98]``, ``[Point 2 · cites communities 3, 4]``."""
    noun = "community" if unit == COMMUNITY else "source"
    nouns = noun if len(cited) == 1 else ("communities" if unit == COMMUNITY else "sources")
    return f"[Point {number} · cites {nouns} {format_ids(cited)}]"


def parse_support_point_header(line: str) -> tuple[int, list[str]] | None:
    """``(number, cited ids)`` of a point's header line, else None."""
    found = _SUPPORT_POINT_RE.match(line.strip())
    return None if found is None else (int(found.group("n")), parse_ids(found.group("ids")))


def format_support_prompt(texts: Sequence[tuple[str, str]], points: Sequence[tuple[str, str]]) -> str:
    """The user message of a support check call: every ``(header, text)`` the points cite, then
    every ``(header, point)``."""
    blocks = [f"{header}\n{text.strip()}" for header, text in texts]
    asked = [f"{header}\n{' '.join(point.split())}" for header, point in points]
    return f"{SUPPORT_TEXTS_MARKER}\n" + "\n\n".join(blocks) + f"\n\n{SUPPORT_POINTS_MARKER}\n" + "\n\n".join(asked)


def parse_support_prompt(user_message: str) -> tuple[list[tuple[str, str, str, str]], list[tuple[int, list[str], str]]]:
    """``(texts, points)`` of a support check's user message: each text as ``(kind, id, cited,
    text)``, each point as ``(number, cited ids, point)``. The points' part starts at the last
    points marker, so a text that holds the marker stays whole."""
    head, found, tail = user_message.rpartition(f"\n\n{SUPPORT_POINTS_MARKER}\n")
    if not found:
        return [], []
    texts: list[tuple[str, str, str, list[str]]] = []
    for line in head.removeprefix(f"{SUPPORT_TEXTS_MARKER}\n").split("\n"):
        header = parse_support_text_header(line)
        if header is not None:
            texts.append((*header, []))
        elif texts:
            texts[-1][3].append(line)
    points: list[tuple[int, list[str], list[str]]] = []
    for line in tail.split("\n"):
        header = parse_support_point_header(line)
        if header is not None:
            points.append((header[0], header[1], []))
        elif points:
            points[-1][2].append(line)
    return (
        [(kind, uid, cited, "\n".join(lines).strip()) for kind, uid, cited, lines in texts],
        [(n, ids, " ".join(lines).strip()) for n, ids, lines in points],
    )


QUESTION_MARKER = "---Question---"
DATA_MARKER = "---Data---"


def format_prompt_sections(query: str, content: str, *, data_first: bool = False) -> str:
    """The user message of a map, reduce or rating call: the question, then the data; with
    ``data_first``, the data, then the question (so calls over the same data share their prefix
    whatever the question: :func:`question_tail` is what follows the data)."""
    if data_first:
        return f"{DATA_MARKER}\n{content}{question_tail(query)}"
    return f"{QUESTION_MARKER}\n{query}\n\n{DATA_MARKER}\n{content}"


def question_tail(query: str) -> str:
    """What follows the data in a data-first user message: the question's marker and the question."""
    return f"\n\n{QUESTION_MARKER}\n{query}"


def split_prompt_sections(user_message: str) -> tuple[str, str]:
    """``(question, data)`` of a map, reduce or rating user message in either layout; missing
    parts are ``""``.

    Question first: only the first data marker counts, so data that itself contains the marker
    stays whole. Data first: the question is what follows the last question marker.
    """
    if user_message.startswith(f"{DATA_MARKER}\n"):
        data, found, question = user_message[len(DATA_MARKER) + 1 :].rpartition(question_tail(""))
        return (question.strip(), data) if found else ("", question)
    head, found, data = user_message.partition(f"{DATA_MARKER}\n")
    if not found:
        head, data = user_message, ""
    question = head.split(f"{QUESTION_MARKER}\n", 1)[-1] if QUESTION_MARKER in head else ""
    return question.strip(), data


__all__ = [
    "CANDIDATE_SEPARATOR",
    "CITATION_RE",
    "DATA_MARKER",
    "MAP_SECTIONS",
    "MAP_SECTION_CLAIMS",
    "MAP_SECTION_SOURCES",
    "MAP_SECTION_SUMMARY",
    "QUESTION_MARKER",
    "SUPPORT_POINTS_MARKER",
    "SUPPORT_TEXTS_MARKER",
    "COMMUNITY",
    "EVIDENCE",
    "EVIDENCE_SECTIONS",
    "EVIDENCE_SECTION_CLAIMS",
    "EVIDENCE_SECTION_SOURCES",
    "SOURCE",
    "EvidenceItem",
    "CandidateHeader",
    "PartHeader",
    "Unit",
    "format_citation",
    "format_claim_line",
    "format_evidence_text",
    "format_excerpt_header",
    "format_ids",
    "format_map_text",
    "format_part_header",
    "format_prompt_sections",
    "format_reduce_candidate",
    "format_source_header",
    "format_support_point_header",
    "format_support_prompt",
    "format_support_text_header",
    "header_unit",
    "format_usefulness",
    "parse_candidate_header",
    "parse_cited_points",
    "parse_evidence_section",
    "parse_excerpt_header",
    "parse_citations",
    "parse_ids",
    "parse_map_section",
    "parse_part_header",
    "parse_support_point_header",
    "parse_support_prompt",
    "parse_support_text_header",
    "question_tail",
    "split_prompt_sections",
]
