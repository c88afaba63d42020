"""What model endpoints accepted, kept across processes: :class:`EndpointMemory`, one SQLite file
(where it lives: :func:`graphrag_core.locations.endpoints_path_from`).

It holds, per endpoint (a base URL without credentials or query, and a model), the output form
its schema calls settled on and the refused forms already said to the user, each with when it was
learned. An entry older than :data:`ENDPOINT_MEMORY_DAYS` is not read (the server may have been
upgraded or replaced since: it is negotiated again). A file that cannot be read or written is no
error: the memory says so once (``failure``) and the process goes on with what it holds itself.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from ..sqlite import connect, enable_wal

ENDPOINT_MEMORY_DAYS = 7
"""How long what an endpoint accepted is believed without asking it again."""
BUSY_TIMEOUT_S = 2.0

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS accepted_forms (endpoint TEXT PRIMARY KEY, form TEXT NOT NULL, learned_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS said_refusals (endpoint TEXT NOT NULL, form TEXT NOT NULL, said_at REAL NOT NULL, PRIMARY KEY (endpoint, form))",
)


def secret_free(endpoint: str) -> str:
    """``endpoint`` (``{base_url}#{model}``) without the user name, password or query a base URL
    may carry: what is written to the file."""
    base, _, model = endpoint.partition("#")
    parts = urlsplit(base)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")) + "#" + model


class EndpointMemory:
    """The SQLite file at ``path`` (module docstring). ``clock`` is wall time (entries outlive a
    process); ``on_failure`` hears, once, why the file could not be used."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time, on_failure: Callable[[str], None] | None = None) -> None:
        self.path = Path(path).expanduser()
        self._clock = clock
        self._on_failure = on_failure
        self.failed: str | None = None
        self._ready = False

    def __repr__(self) -> str:
        return f"EndpointMemory({str(self.path)!r})"

    def load(self) -> tuple[dict[str, str], set[tuple[str, str]]]:
        """The forms endpoints settled on and the refusals already said, learned within
        :data:`ENDPOINT_MEMORY_DAYS` (nothing when the file cannot be read)."""
        since = self._clock() - ENDPOINT_MEMORY_DAYS * 86_400
        rows = self._run(
            lambda db: (
                db.execute("SELECT endpoint, form FROM accepted_forms WHERE learned_at >= ?", (since,)).fetchall(),
                db.execute("SELECT endpoint, form FROM said_refusals WHERE said_at >= ?", (since,)).fetchall(),
            )
        )
        if rows is None:
            return {}, set()
        forms, said = rows
        return dict(forms), {(endpoint, form) for endpoint, form in said}

    def settled(self, endpoint: str, form: str) -> None:
        now = self._clock()
        self._run(lambda db: db.execute("INSERT OR REPLACE INTO accepted_forms VALUES (?, ?, ?)", (secret_free(endpoint), form, now)))

    def said(self, endpoint: str, form: str) -> None:
        now = self._clock()
        self._run(lambda db: db.execute("INSERT OR REPLACE INTO said_refusals VALUES (?, ?, ?)", (secret_free(endpoint), form, now)))

    def _run(self, work: Callable[[sqlite3.Connection], object]) -> object | None:
        if self.failed is not None:
            return None
        try:
            if not self._ready:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            with connect(self.path, timeout=BUSY_TIMEOUT_S) as db:
                if not self._ready:
                    enable_wal(db)
                    for statement in _SCHEMA:
                        db.execute(statement)
                    self._ready = True
                return work(db)
        except (sqlite3.Error, OSError) as exc:
            self.failed = f"The endpoint memory {self.path} cannot be used ({exc}); what endpoints accept is learned again by each run."
            if self._on_failure is not None:
                self._on_failure(self.failed)
            return None


__all__ = ["ENDPOINT_MEMORY_DAYS", "EndpointMemory", "secret_free"]
