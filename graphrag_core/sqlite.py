"""The one way the engine opens its SQLite files (run history, map cache): a short-lived
connection per operation, in WAL mode, so Streamlit's script threads and several processes can
share a file."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from os import PathLike

WAL_SWITCH_ATTEMPTS = 20
WAL_SWITCH_PAUSE_S = 0.01


@contextmanager
def connect(path: str | PathLike[str], *, timeout: float, pragmas: Sequence[str] = ()) -> Iterator[sqlite3.Connection]:
    """One connection for one operation: runs ``pragmas``, commits on success, rolls back on
    error, always closes. ``timeout`` is how long it waits for another writer's lock."""
    connection = sqlite3.connect(path, timeout=timeout)
    try:
        for pragma in pragmas:
            connection.execute(f"PRAGMA {pragma}")
        with connection:
            yield connection
    finally:
        connection.close()


def enable_wal(connection: sqlite3.Connection) -> None:
    """Switch the file to WAL once; a concurrent opener may hold the lock, so retry briefly.

    Changing the journal mode does not wait on the busy timeout, hence the loop."""
    for attempt in range(WAL_SWITCH_ATTEMPTS):
        try:
            if connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                return
            connection.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            time.sleep(WAL_SWITCH_PAUSE_S * (attempt + 1))
    connection.execute("PRAGMA journal_mode = WAL")


__all__ = ["connect", "enable_wal"]
