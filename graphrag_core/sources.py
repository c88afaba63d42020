"""The source chunks the ``text`` and ``vector`` methods read in place of community summaries
(evaluation spec section 7), as *source units*.

Each chunk is named by its reference: the id a Microsoft GraphRAG report cites it by
(``Sources (12)``: its human-readable id) when every chunk of the index has a distinct one,
else its own id. Prompts head each unit with that reference, answers cite it
(``[Sources: 12, 40]``), and a run's batches, candidates and "behind" set hold it where a
``global`` run holds community ids; the provenance page's ``source=`` link resolves it.

Invariants: :func:`source_units` gives one unit per chunk with non-blank text, in index order,
each reference distinct; :func:`source_chunk` finds a chunk by that reference.
"""

from __future__ import annotations

from .errors import NoSourceChunksError
from .methods import TEXT, unit_kind
from .models import Index, SourceChunk


def _references(chunks: tuple[SourceChunk, ...]) -> list[str]:
    """Each chunk's reference: its short id when every chunk has one and they are all distinct
    (and name no other chunk by its id), else its id."""
    shorts = [c.short_id for c in chunks]
    ids = {c.id for c in chunks}
    if all(s is not None for s in shorts) and len(set(shorts)) == len(shorts):
        clashing = {s for s in shorts if s in ids} - {c.id for c in chunks if c.short_id == c.id}
        if not clashing:
            return [str(s) for s in shorts]
    return [c.id for c in chunks]


def source_units(index: Index, *, method: str = TEXT) -> list[tuple[str, SourceChunk]]:
    """``(reference, chunk)`` for every chunk with text, in index order.

    Raises :class:`~graphrag_core.errors.NoSourceChunksError` (naming ``method``) when the index
    has no chunk with text."""
    units = [(ref, chunk) for ref, chunk in zip(_references(index.chunks), index.chunks) if chunk.text.strip()]
    if not units:
        raise NoSourceChunksError(method)
    return units


def unit_ids(index: Index, method: str) -> set[str]:
    """The ids the index has for the units a run of ``method`` reads: its community ids (``global``,
    ``lazy``), or its chunks' references (what the run's citations are checked against)."""
    if unit_kind(method) == "community":
        return {c.id for c in index.communities}
    return set(_references(index.chunks))


def source_table(index: Index) -> dict[str, SourceChunk]:
    """Every chunk by its reference (what the runs of ``text`` and ``vector`` name it by)."""
    return dict(zip(_references(index.chunks), index.chunks))


def source_chunk(index: Index, reference: str) -> SourceChunk | None:
    """The chunk a run of ``text`` or ``vector`` names ``reference``, or None."""
    return source_table(index).get(reference)


__all__ = ["source_chunk", "source_table", "source_units", "unit_ids"]
