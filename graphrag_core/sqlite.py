"""The one way the engine opens its SQLite files (run history, map cache): a short-lived
connection per operation, in WAL mode, so Streamlit's script threads and several processes can
share a file.

A connection that only reads (``read_only=True``) needs no space and no write access: it opens
the file read-only, and where even that cannot start (SQLite makes the write-ahead log's two
side files first, which a full disk refuses), it reads the file as immutable: exact while no
write-ahead log holds changes the file has not taken in yet, which is when it is tried."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from os import PathLike
from pathlib import Path

WAL_SWITCH_ATTEMPTS = 20
WAL_SWITCH_PAUSE_S = 0.01


def _log_is_empty(path: Path) -> bool:
    """True when ``path``'s write-ahead log is missing or empty: the file alone holds every change."""
    try:
        return Path(f"{path}-wal").stat().st_size == 0
    except FileNotFoundError:
        return True


def open_for_reading(path: str | PathLike[str], *, timeout: float) -> sqlite3.Connection:
    """A connection that reads ``path`` and can write nothing (see the module): read-only, else
    immutable when the write-ahead log holds nothing; raises ``sqlite3.Error`` as opening would."""
    uri = Path(path).resolve().as_uri()
    connection = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=timeout)
    try:
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # SQLite opens the file at its first read
        return connection
    except sqlite3.OperationalError:
        connection.close()
        if not _log_is_empty(Path(path)):
            raise
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, timeout=timeout)


@contextmanager
def connect(
    path: str | PathLike[str], *, timeout: float, pragmas: Sequence[str] = (), read_only: bool = False
) -> Iterator[sqlite3.Connection]:
    """One connection for one operation: runs ``pragmas``, commits on success, rolls back on
    error, always closes. ``timeout`` is how long it waits for another writer's lock;
    ``read_only`` opens it with :func:`open_for_reading`."""
    connection = open_for_reading(path, timeout=timeout) if read_only else sqlite3.connect(path, timeout=timeout)
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


__all__ = ["connect", "enable_wal", "open_for_reading"]
