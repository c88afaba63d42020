"""A cache of map replies, so a rerun that changes only reduce settings makes no map calls.

The key (:func:`cache_key`) is a sha256 over the model's identity and the exact
:class:`~graphrag_core.llm.base.ChatRequest`: the same batch, question, prompt, output reserve
and JSON mode against the same model give the same key; anything else gives another. Only
replies that already parsed are stored (the engine calls ``put`` after parsing succeeds), so a
hit is a reply the engine has accepted before. Model identities never carry secrets, so
neither do keys.

The cache is an optimisation: a run never fails through it. The engine uses every cache through
:class:`GuardedCache`, which turns a failed read or write (a full disk, a file another process
holds locked, a damaged file) into one warning, and leaves the cache alone for the rest of the run.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
import weakref
from contextlib import AbstractContextManager
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from .llm.base import ChatRequest, model_identity
from .sqlite import connect, enable_wal

CACHE_BUSY_TIMEOUT_S = 5.0
"""How long a read or write waits for another process's lock on the file before it fails (and
the run goes on without the cache: see :class:`GuardedCache`)."""
CACHE_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, OSError, UnicodeError)
"""What a failed cache read or write raises: SQLite's errors (locked, full, damaged), the file
system's, and text SQLite cannot encode."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS map_cache (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""


@runtime_checkable
class MapCache(Protocol):
    """What the map phase needs from a cache: text by key, and storing text under a key."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, text: str) -> None: ...


def cache_key(model: object, request: ChatRequest) -> str:
    """sha256 hex of the model's identity and the request's JSON (a pure function of both)."""
    digest = hashlib.sha256()
    digest.update(model_identity(model).encode("utf-8"))
    digest.update(b"\x00")
    digest.update(request.model_dump_json().encode("utf-8"))
    return digest.hexdigest()


class SqliteMapCache:
    """A :class:`MapCache` in one SQLite file (WAL mode), shared by threads and processes.

    Each operation opens its own short-lived connection, so instances are safe to share between
    Streamlit's script threads; writes also hold a per-instance lock. ``put`` on an existing key
    replaces its text. ``hits``/``misses`` count this instance's ``get`` calls.
    """

    def __init__(self, path: str | Path, *, timeout: float | None = None) -> None:
        self.path = Path(path)
        self.timeout = CACHE_BUSY_TIMEOUT_S if timeout is None else timeout
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        with self._connect() as connection:
            enable_wal(connection)
            connection.execute(_SCHEMA)
        # Held open while the instance lives, so closing an operation's connection is never
        # closing the file's last one, which would checkpoint the WAL and wait for the disk on
        # every put (about 20 ms each: half a minute for a 1,000-batch run).
        self._keeper = sqlite3.connect(self.path, check_same_thread=False)
        self._keeper.execute("SELECT 1 FROM map_cache LIMIT 1").fetchone()  # opens the WAL, reads no table
        self._closer = weakref.finalize(self, self._keeper.close)

    def close(self) -> None:
        """Close the connection this instance keeps open (also done when it is collected)."""
        self._closer()

    def __repr__(self) -> str:
        return f"SqliteMapCache({str(self.path)!r})"

    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        # WAL with synchronous=NORMAL: a commit does not wait for the disk (fsync), only a
        # checkpoint does. The file stays consistent; a power cut may lose the last entries,
        # which a cache can afford.
        return connect(self.path, timeout=self.timeout, pragmas=("synchronous = NORMAL",))

    def get(self, key: str) -> str | None:
        with self._connect() as connection:
            row = connection.execute("SELECT text FROM map_cache WHERE key = ?", (key,)).fetchone()
        with self._lock:
            if row is None:
                self.misses += 1
            else:
                self.hits += 1
        return None if row is None else str(row[0])

    def put(self, key: str, text: str) -> None:
        with self._lock, self._connect() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO map_cache (key, text, created_at) VALUES (?, ?, ?)", (key, text, time.time())
            )

    def clear(self) -> int:
        """Remove every entry; returns how many there were."""
        with self._lock, self._connect() as connection:
            return connection.execute("DELETE FROM map_cache").rowcount

    def __len__(self) -> int:
        with self._connect() as connection:
            return int(connection.execute("SELECT COUNT(*) FROM map_cache").fetchone()[0])

    def stats(self) -> dict[str, int]:
        """Entries and total stored characters in the file; hits and misses of this instance."""
        with self._connect() as connection:
            entries, characters = connection.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(text)), 0) FROM map_cache").fetchone()
        return {"entries": int(entries), "characters": int(characters), "hits": self.hits, "misses": self.misses}


class GuardedCache:
    """A :class:`MapCache` a run cannot fail through: ``cache``, until its first failed read or
    write (any of :data:`CACHE_ERRORS`). That failure is reported once, as a sentence naming
    the cache and the error, through ``on_failure`` (called on the thread of the failed call);
    from then on every ``get`` misses and every ``put`` does nothing. Thread-safe."""

    def __init__(self, cache: MapCache, *, on_failure: Callable[[str], None]) -> None:
        self.cache = cache
        self._on_failure = on_failure
        self._lock = threading.Lock()
        self.failure: str | None = None

    def __repr__(self) -> str:
        return f"GuardedCache({self.cache!r})"

    def _fail(self, doing: str, exc: Exception) -> None:
        with self._lock:
            if self.failure is not None:
                return
            where = getattr(self.cache, "path", None)
            self.failure = (
                f"The map cache{f' {where}' if where is not None else ''} could not be {doing} ({exc}); "
                "this run goes on without it (nothing is read from it or written to it)."
            )
        self._on_failure(self.failure)

    def get(self, key: str) -> str | None:
        if self.failure is not None:
            return None
        try:
            return self.cache.get(key)
        except CACHE_ERRORS as exc:
            self._fail("read", exc)
            return None

    def put(self, key: str, text: str) -> None:
        if self.failure is not None:
            return
        try:
            self.cache.put(key, text)
        except CACHE_ERRORS as exc:
            self._fail("written", exc)


class UnusableCache:
    """A :class:`MapCache` whose file could not be opened: every read and write raises the error
    of the opening, so a run using it (through :class:`GuardedCache`) says so once and goes on."""

    def __init__(self, path: str | Path, error: Exception) -> None:
        self.path, self.error = Path(path), error

    def __repr__(self) -> str:
        return f"UnusableCache({str(self.path)!r})"

    def get(self, key: str) -> str | None:
        raise self.error

    def put(self, key: str, text: str) -> None:
        raise self.error


def open_map_cache(path: str | Path) -> SqliteMapCache | UnusableCache:
    """The SQLite map cache at ``path``; an :class:`UnusableCache` carrying the error when the
    file cannot be opened (locked, full, damaged, not writable): never an exception."""
    try:
        return SqliteMapCache(path)
    except CACHE_ERRORS as exc:
        return UnusableCache(path, exc)


class MemoryMapCache:
    """A :class:`MapCache` in a dict, for tests and one-off runs (thread-safe)."""

    def __init__(self) -> None:
        self._entries: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: str, text: str) -> None:
        with self._lock:
            self._entries[key] = text

    def clear(self) -> int:
        with self._lock:
            count = len(self._entries)
            self._entries.clear()
            return count

    def __len__(self) -> int:
        return len(self._entries)


__all__ = [
    "CACHE_BUSY_TIMEOUT_S",
    "CACHE_ERRORS",
    "GuardedCache",
    "MapCache",
    "MemoryMapCache",
    "SqliteMapCache",
    "UnusableCache",
    "cache_key",
    "open_map_cache",
]
