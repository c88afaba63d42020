"""An index's tables read when they are first needed: what reads them (:class:`TableReader`),
what one read gives (:class:`TableRead`), and what an opened index has not read yet
(:class:`PendingTables`). :class:`~graphrag_core.models.Index` holds the pending tables and
checks each table as it arrives.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .validation import structure_warnings

if TYPE_CHECKING:
    from .validation import RecordSource

DEFERRED_TABLES: tuple[str, ...] = ("documents", "chunks", "claims", "entities", "relationships")
"""The tables an opened index reads when they are first asked for, in the order their warnings
are listed; a table's checks may read the tables before it (chunks name documents, claims cite
chunks)."""


@dataclass(frozen=True)
class TableRead:
    """One table as a :class:`TableReader` read it: its records, where they came from (so an
    error names the file, line or row and column) and the oddities found while reading."""

    records: Sequence[Any]
    source: RecordSource | None = None
    warnings: Sequence[str] = ()


class TableReader(Protocol):
    """Reads the deferred tables of an opened index, each once, when the index first needs it."""

    def read(self, table: str, index: Any) -> TableRead:
        """The records of ``table`` (one of :data:`DEFERRED_TABLES`); may ask ``index`` (the
        :class:`~graphrag_core.models.Index` being read) for the tables before it. Raises
        :class:`~graphrag_core.errors.IndexValidationError` naming the file, row and column."""
        ...

    def final_warnings(self, index: Any) -> Sequence[str]:
        """Warnings that need every table (asked once all are read)."""
        ...


class PendingTables:
    """What an opened index has not read yet; one lock serialises its reads across threads."""

    def __init__(self, reader: TableReader, opening_warnings: Sequence[str]) -> None:
        self.reader = reader
        self.tables = set(DEFERRED_TABLES)
        self.opening_warnings = tuple(opening_warnings)
        self.table_warnings: dict[str, tuple[str, ...]] = {}
        self.lock = threading.RLock()

    def warnings(self, index: Any) -> tuple[str, ...]:
        """Every warning, each once: the opening's, each table's (in :data:`DEFERRED_TABLES`
        order), the graph's, then the reader's final ones."""
        found = [*self.opening_warnings]
        for table in DEFERRED_TABLES:
            found.extend(self.table_warnings.get(table, ()))
        found.extend(
            structure_warnings(communities=index.communities, entities=index.entities, relationships=index.relationships)
        )
        found.extend(self.reader.final_warnings(index))
        return tuple(dict.fromkeys(found))


__all__ = ["DEFERRED_TABLES", "PendingTables", "TableRead", "TableReader"]
