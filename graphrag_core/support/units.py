"""The texts a cited id stands for, and finding a quote in them.

A community stands for its summary, the claims of its descendant leaves (each claim's text is
its line as the map prompt shows it, ``subject: description``, without the list marker) and
the source chunks those claims cite, each once, in the order the map text has them. A ``text``
or ``vector`` run's citation names one source chunk by its reference
(:mod:`graphrag_core.sources`), which stands for that chunk alone.

A quote is found *whitespace aside* (:func:`find_quote`): its words in order, whatever spaces,
tabs or line breaks stand between them in the unit's text, and nothing else changed (case,
punctuation and every other character as written).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..citations import ReferenceKind
from ..context import format_claim_line
from ..models import Index
from ..rows import Claim, SourceChunk
from ..sources import source_table
from .models import EvidenceKind

_CLAIM_MARKER = "- "


@dataclass(frozen=True)
class SupportUnit:
    """One text a point may be checked against: its kind and id (a community id for a summary,
    a claim id, a chunk id), the cited id it belongs to (``cited``), and its text."""

    kind: EvidenceKind
    id: str
    cited: str
    text: str


def claim_text(claim: Claim) -> str:
    """The text of a claim as a unit: its map prompt line without the list marker."""
    return format_claim_line(claim).removeprefix(_CLAIM_MARKER)


def community_units(index: Index, community_id: str, *, chunks: bool = True) -> list[SupportUnit]:
    """The units of one community (see the module docstring); empty when the index has no such
    community. ``chunks=False`` leaves the source chunks out."""
    if not index.has_community(community_id):
        return []
    community = index.community(community_id)
    units: list[SupportUnit] = []
    if community.summary.strip():
        units.append(SupportUnit("summary", community.id, community.id, community.summary))
    claims = index.leaf_claims(community.id)
    units += [SupportUnit("claim", claim.id, community.id, claim_text(claim)) for claim in claims]
    if chunks:
        seen: set[str] = set()
        for claim in claims:
            for chunk in index.claim_chunks(claim):
                if chunk.id not in seen and chunk.text.strip():
                    seen.add(chunk.id)
                    units.append(SupportUnit("chunk", chunk.id, community.id, chunk.text))
    return units


def source_units(index: Index, reference: str, *, table: dict[str, SourceChunk] | None = None) -> list[SupportUnit]:
    """The unit of one source chunk named by its reference (empty when there is none);
    ``table`` is :func:`~graphrag_core.sources.source_table` of the index, when at hand."""
    chunk = (table if table is not None else source_table(index)).get(reference)
    if chunk is None or not chunk.text.strip():
        return []
    return [SupportUnit("chunk", chunk.id, reference, chunk.text)]


class UnitReader:
    """The units of the ids a run cites or read, each read from the index once."""

    def __init__(self, index: Index, unit: ReferenceKind) -> None:
        self.index, self.unit = index, unit
        self._table = source_table(index) if unit == "source" else None
        self._read: dict[tuple[str, bool], list[SupportUnit]] = {}

    def known(self, cited: str) -> bool:
        """Whether the index has what ``cited`` names."""
        if self._table is not None:
            return cited in self._table
        return self.index.has_community(cited)

    def units(self, cited: str, *, chunks: bool = True) -> list[SupportUnit]:
        key = (cited, chunks)
        if key not in self._read:
            if self._table is not None:
                self._read[key] = source_units(self.index, cited, table=self._table)
            else:
                self._read[key] = community_units(self.index, cited, chunks=chunks)
        return self._read[key]


def unit_text(index: Index, kind: EvidenceKind, unit_id: str) -> str | None:
    """The text a quote of the unit ``kind``/``unit_id`` is a span of (what a front end
    highlights it in); None when the index has no such unit."""
    if kind == "summary":
        return index.community(unit_id).summary if index.has_community(unit_id) else None
    if kind == "claim":
        try:
            return claim_text(index.claim(unit_id))
        except KeyError:
            return None
    return index.chunk(unit_id).text if index.has_chunk(unit_id) else None


def find_quote(text: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` stands in ``text``, whitespace aside (see the module docstring): the
    ``(start, end)`` of its first occurrence, or None (also for a blank quote)."""
    words = quote.split()
    if not words:
        return None
    found = re.search(r"\s*".join(re.escape(word) for word in words), text)
    return None if found is None else (found.start(), found.end())


__all__ = ["SupportUnit", "UnitReader", "claim_text", "community_units", "find_quote", "source_units", "unit_text"]
