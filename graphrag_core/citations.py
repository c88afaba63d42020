"""Citations in an answer, checked against the run, and the three community sets of a run.

Models cite communities in many forms; :func:`find_citations` reads all of these::

    [Communities: 12, 45]            the engine's own reduce prompt asks for this
    [Community 12]  [Community: 12]  [Communities 3, 4]  [Community IDs: 1, 2]
    [Data: Reports (12, 45, +more)]  Microsoft GraphRAG's global search prompts
    [Data: Reports (3); Entities (5); Relationships (7)]
    [Data: Communities (3)]          [Reports: 3, 4]

In a ``[Data: ...]`` citation only ``Reports``/``Communities`` name communities; ``Entities``,
``Relationships``, ``Claims`` and ``Sources`` are kept as references of their kind (a Microsoft
GraphRAG community report cites its entities that way). ``+more`` is kept as a flag. The answers
of the ``text`` and ``vector`` methods cite source chunks, ``[Sources: 12, 40]`` (also
``[Source 12]``, ``[Chunks: 12]``), read as references of kind ``source``.

The three sets (named the same on every page, in the command line's JSON and here) hold a
run's units: communities, or for a run of the ``text`` and ``vector`` methods the source chunks
it read (``CommunitySets.unit`` says which):

- **cited**: the communities the answer cites, in order of first citation;
- **behind**: the communities of the map answers selected for the reduce (what it read);
- **read but unused**: the communities of batches whose answers were dropped (usefulness 0),
  skipped (over the reduce budget) or not tried (after a ``stop``), and that are not behind the
  answer, each with the best usefulness of the batches that carried it.

A cited id is *unsupported* when it is not in the index (``not_in_index``, when the index's ids
are known) or when no selected map answer carried it (``not_behind``): models invent ids.
Everything here is a pure function of text, a result or a run's events.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from .sentences import sentence_spans
from .status import RunStatus

if TYPE_CHECKING:
    from .results import GlobalSearchResult

ReferenceKind = Literal["community", "entity", "relationship", "claim", "source"]
SetName = Literal["cited", "behind", "read_but_unused"]
SET_NAMES: dict[SetName, str] = {"cited": "cited", "behind": "behind", "read_but_unused": "read but unused"}
"""The three sets' names, the same on every page, in reports and in the command line's text."""
UnsupportedReason = Literal["not_in_index", "not_behind"]
UNSUPPORTED_LABELS: dict[str, str] = {"not_in_index": "not in the index", "not_behind": "in no selected map answer"}
"""Why a cited id is unsupported, in words (the app's badges and the Markdown report)."""
UnusedFate = Literal["dropped", "skipped", "not_tried"]

MORE_MARK = "+more"

# The kind each record name stands for ("Reports (12)" -> community 12).
_KIND_WORDS: dict[str, ReferenceKind] = {
    "report": "community",
    "reports": "community",
    "community": "community",
    "communities": "community",
    "community id": "community",
    "community ids": "community",
    "entity": "entity",
    "entities": "entity",
    "relationship": "relationship",
    "relationships": "relationship",
    "claim": "claim",
    "claims": "claim",
    "covariates": "claim",
    "source": "source",
    "sources": "source",
}
_KIND_PATTERN = "|".join(sorted((re.escape(w) for w in _KIND_WORDS), key=len, reverse=True))

# [Data: Reports (1, 2); Entities (3)]  -- groups separated by ';' (or ',' between groups)
_DATA_RE = re.compile(r"\[\s*Data\s*:\s*(?P<body>(?:[^\[\]]*?\([^()\[\]]*\)\s*[;,]?\s*)+)\]", re.IGNORECASE)
_GROUP_RE = re.compile(rf"(?P<kind>{_KIND_PATTERN})\s*\((?P<ids>[^()]*)\)", re.IGNORECASE)
# [Communities: 1, 2]  [Community 12]  [Reports: 3]  [Community IDs: 1, 2]
_PLAIN_RE = re.compile(
    r"\[\s*(?P<kind>Communit(?:y|ies)(?:\s+IDs?)?|Reports?)\s*(?::\s*|\s+)(?P<ids>[^\[\]]*?)\s*\]",
    re.IGNORECASE,
)
# [Sources: 12, 40]  [Source 12]  [Source IDs: 1, 2]  [Chunks: 3]
_PLAIN_SOURCE_RE = re.compile(
    r"\[\s*(?P<kind>Sources?(?:\s+IDs?)?|Chunks?(?:\s+IDs?)?)\s*(?::\s*|\s+)(?P<ids>[^\[\]]*?)\s*\]",
    re.IGNORECASE,
)
_ID_RE = re.compile(r"[^,;\s()\[\]]+")
_ID_LIST_RE = re.compile(r"^\s*[\w.:\-+]+(?:\s*(?:[,;]|\band\b)\s*[\w.:\-+]+)*\s*,?\s*$")
"""A body that is a list of id-like tokens (so "[Community report about X]" is not a citation)."""


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True)


class Reference(_Value):
    """One id inside a citation; ``start``/``end`` locate it in the whole answer text."""

    kind: ReferenceKind
    id: str
    start: int
    end: int


class Citation(_Value):
    """One bracketed citation: its span in the answer, its text, and the ids it names."""

    start: int
    end: int
    text: str
    references: tuple[Reference, ...]
    more: bool = False
    """The model wrote ``+more``: it cited more than it listed."""

    @property
    def community_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.references if r.kind == "community")

    def ids_of(self, kind: ReferenceKind) -> tuple[str, ...]:
        """The ids of the references of ``kind`` (``community_ids`` for ``"community"``)."""
        return tuple(r.id for r in self.references if r.kind == kind)


class UnsupportedCitation(_Value):
    community_id: str
    reason: UnsupportedReason
    count: int = 1
    """How many times the answer cites it."""


class UnusedCommunity(_Value):
    """A community the map read but whose answer did not reach the reduce."""

    community_id: str
    best_score: float
    batch_indexes: tuple[int, ...]
    fate: UnusedFate
    """The fate of the best-scored batch that carried it."""


class CommunitySets(_Value):
    """The three sets of a run (see the module docstring) and the unsupported citations; ``unit``
    says what their ids are: communities, or source chunks (the ``text`` and ``vector`` methods)."""

    unit: ReferenceKind = "community"
    cited: tuple[str, ...] = ()
    behind: tuple[str, ...] = ()
    read_but_unused: tuple[UnusedCommunity, ...] = ()
    unsupported: tuple[UnsupportedCitation, ...] = ()

    @property
    def unsupported_count(self) -> int:
        """Distinct unsupported ids the answer cites."""
        return len(self.unsupported)

    def ids(self, name: SetName) -> tuple[str, ...]:
        """The community ids of one set, in its order."""
        if name == "read_but_unused":
            return tuple(u.community_id for u in self.read_but_unused)
        return self.cited if name == "cited" else self.behind

    def first_followable(self) -> tuple[str, SetName] | None:
        """The community to open first for this run, and its set: the first one the answer cites
        that a selected map answer carried (a citation that can be followed), else the first one
        behind the answer; ``None`` when nothing is behind it."""
        behind = set(self.behind)
        cited = next((cid for cid in self.cited if cid in behind), None)
        if cited is not None:
            return cited, "cited"
        return (self.behind[0], "behind") if self.behind else None

    def reason(self, community_id: str) -> UnsupportedReason | None:
        for item in self.unsupported:
            if item.community_id == community_id:
                return item.reason
        return None

    def to_json_dict(self) -> dict[str, object]:
        """The shape the command line's JSON uses (``"community_sets"``)."""
        return {
            "unit": self.unit,
            "cited": list(self.cited),
            "behind": list(self.behind),
            "read_but_unused": [
                {"community_id": u.community_id, "best_score": u.best_score, "batches": list(u.batch_indexes), "fate": u.fate}
                for u in self.read_but_unused
            ],
            "unsupported": [{"community_id": u.community_id, "reason": u.reason, "count": u.count} for u in self.unsupported],
        }


def _ids(body: str, offset: int, kind: ReferenceKind) -> tuple[list[Reference], bool]:
    refs: list[Reference] = []
    more = False
    if not _ID_LIST_RE.match(body):
        return refs, more
    for match in _ID_RE.finditer(body):
        token = match.group(0).strip()
        if token.lower().lstrip("+").strip() == "more" or token.lower() == MORE_MARK:
            more = True
            continue
        if token.lower() in ("and", "etc", "etc."):
            continue
        refs.append(Reference(kind=kind, id=token, start=offset + match.start(), end=offset + match.start() + len(token)))
    return refs, more


def find_citations(text: str) -> list[Citation]:
    """Every citation in ``text``, in order; spans never overlap."""
    found: list[Citation] = []
    taken: list[tuple[int, int]] = []
    for match in _DATA_RE.finditer(text):
        body_start = match.start("body")
        refs: list[Reference] = []
        more = False
        for group in _GROUP_RE.finditer(match.group("body")):
            kind = _KIND_WORDS[" ".join(group.group("kind").lower().split())]
            group_refs, group_more = _ids(group.group("ids"), body_start + group.start("ids"), kind)
            refs.extend(group_refs)
            more = more or group_more
        if refs or more:
            found.append(Citation(start=match.start(), end=match.end(), text=match.group(0), references=tuple(refs), more=more))
            taken.append((match.start(), match.end()))
    for pattern, kind in ((_PLAIN_RE, "community"), (_PLAIN_SOURCE_RE, "source")):
        for match in pattern.finditer(text):
            if any(s < match.end() and match.start() < e for s, e in taken):
                continue
            refs, more = _ids(match.group("ids"), match.start("ids"), kind)  # type: ignore[arg-type]
            if refs:
                found.append(Citation(start=match.start(), end=match.end(), text=match.group(0), references=tuple(refs), more=more))
                taken.append((match.start(), match.end()))
    return sorted(found, key=lambda c: c.start)


def cited_community_ids(text: str, *, kind: ReferenceKind = "community") -> list[str]:
    """The distinct community ids ``text`` cites (ids of ``kind``, e.g. ``"source"``), in order of first citation."""
    return list(dict.fromkeys(cid for c in find_citations(text) for cid in c.ids_of(kind)))


def citing_sentences(text: str, community_id: str) -> list[str]:
    """The sentences of ``text`` (an answer) with a citation naming ``community_id``, in order,
    each whole with its citations (:func:`~graphrag_core.sentences.sentence_spans`: an
    abbreviation such as ``esp.`` ends no sentence); a list item's marker is left out. Empty
    when none cites it."""
    spans = [c.start for c in find_citations(text) if community_id in c.community_ids]
    found: list[str] = []
    for start, end in sentence_spans(text):
        if any(start <= s < end for s in spans):
            found.append(re.sub(r"^\s*(?:[-*\u2022]|\d+[.)])\s+", "", text[start:end].strip()))
    return found


def citation_count(text: str, community_id: str) -> int:
    """How many times ``text`` cites ``community_id`` (each citation naming it counts once)."""
    return sum(1 for c in find_citations(text) if community_id in c.community_ids)


def check_citations(
    text: str, *, behind: Collection[str], index_ids: Collection[str] | None = None, kind: ReferenceKind = "community"
) -> list[UnsupportedCitation]:
    """The cited ids (of communities, or of ``kind``) that are not in the index or that no
    selected map answer carried."""
    behind = set(behind)
    known = None if index_ids is None else set(index_ids)
    counts: dict[str, int] = {}
    for citation in find_citations(text):
        for cid in citation.ids_of(kind):
            counts[cid] = counts.get(cid, 0) + 1
    unsupported: list[UnsupportedCitation] = []
    for cid, count in counts.items():
        if known is not None and cid not in known:
            unsupported.append(UnsupportedCitation(community_id=cid, reason="not_in_index", count=count))
        elif cid not in behind:
            unsupported.append(UnsupportedCitation(community_id=cid, reason="not_behind", count=count))
    return unsupported


def result_unit(result: GlobalSearchResult) -> ReferenceKind:
    """What a run's units are: ``"community"`` (the ``global`` and ``lazy`` methods), or ``"source"``
    for the ``text`` and ``vector`` methods."""
    from .methods import unit_kind

    return unit_kind(result.request.method)


def community_sets(result: GlobalSearchResult, *, index_ids: Collection[str] | None = None) -> CommunitySets:
    """The three sets of a finished run (see the module docstring). ``index_ids`` are the ids
    the index has for the run's units (:func:`graphrag_core.methods.unit_ids`)."""
    unit = result_unit(result)
    behind = tuple(dict.fromkeys(cid for a in result.selected_answers for cid in a.community_ids))
    behind_set = set(behind)
    best: dict[str, tuple[float, UnusedFate]] = {}
    batches: dict[str, list[int]] = {}
    for candidate in result.reduce_candidates:
        if candidate.fate == "selected":
            continue
        answer = candidate.answer
        for cid in answer.community_ids:
            if cid in behind_set:
                continue
            if answer.batch_index is not None:
                batches.setdefault(cid, []).append(answer.batch_index)
            if cid not in best or answer.usefulness > best[cid][0]:
                best[cid] = (answer.usefulness, candidate.fate)  # type: ignore[assignment]
            batches.setdefault(cid, [])
    unused = tuple(
        UnusedCommunity(community_id=cid, best_score=score, batch_indexes=tuple(sorted(set(batches[cid]))), fate=fate)
        for cid, (score, fate) in sorted(best.items(), key=lambda item: (-item[1][0], _sort_key(item[0])))
    )
    answer = result.answer if result.status != RunStatus.NO_RESULTS else ""
    return CommunitySets(
        unit=unit,
        cited=tuple(cited_community_ids(answer, kind=unit)),
        behind=behind,
        read_but_unused=unused,
        unsupported=tuple(check_citations(answer, behind=behind_set, index_ids=index_ids, kind=unit)),
    )


def _sort_key(community_id: str) -> tuple[int, int | str]:
    return (0, int(community_id)) if community_id.isdigit() else (1, community_id)


def references_of_kind(citations: Sequence[Citation], kind: ReferenceKind) -> list[str]:
    """The distinct ids of one kind (e.g. ``entity``) across ``citations``, in order."""
    return list(dict.fromkeys(r.id for c in citations for r in c.references if r.kind == kind))


__all__ = [
    "SET_NAMES",
    "UNSUPPORTED_LABELS",
    "Citation",
    "CommunitySets",
    "Reference",
    "SetName",
    "UnsupportedCitation",
    "UnusedCommunity",
    "check_citations",
    "citation_count",
    "cited_community_ids",
    "citing_sentences",
    "community_sets",
    "find_citations",
    "references_of_kind",
    "result_unit",
]
