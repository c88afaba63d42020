"""Run history in SQLite: every run's request, events and result, so it can be listed, replayed,
compared and exported with no model.

One file holds the history (``default_store_path()``: ``$XDG_DATA_HOME`` or
``~/.local/share``, then ``graphrag-explorer/runs.sqlite3``). The database runs in WAL mode and
every operation opens and closes its own connection, so Streamlit reruns on other threads and
several processes may share one file.

Invariants:

- a run is stored under its ``run_id``; ``save`` replaces an earlier record with the same id;
- the events are stored as the JSON text of ``events_to_json``, so ``get`` returns a record
  whose ``events`` replay (``RunState.replay``) to the same state as before it was saved;
- the only model information stored is the model's *identity* string (``model_identity``),
  which by contract never holds a secret;
- the columns shown by ``list_runs`` are derived from the record when it is saved, so listing
  never parses event JSON;
- a run saved as ``running`` names its writer process (host, pid, start time); once that
  process is gone, ``get`` and ``list_runs`` report it as ``interrupted``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from ..errors import GraphRAGError
from ..events import events_from_json, events_to_json
from ..report import record_to_markdown
from ..request import GlobalSearchRequest
from ..results import GlobalSearchResult
from ..sqlite import connect as sqlite_connect
from ..sqlite import enable_wal
from .liveness import live_status, process_token
from .records import RunRecord, RunSummary, level_text, level_value

SCHEMA_VERSION = 1
"""The newest schema this module writes and reads."""

STORE_DIR_NAME = "graphrag-explorer"
STORE_FILE_NAME = "runs.sqlite3"
DEFAULT_LIST_LIMIT = 100
CONNECT_TIMEOUT_S = 10.0
"""How long an operation waits for another writer's lock before failing."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    run_id                TEXT PRIMARY KEY,
    created_at            TEXT NOT NULL,
    index_name            TEXT NOT NULL,
    index_path            TEXT,
    query                 TEXT NOT NULL,
    community_level       TEXT NOT NULL,
    seed                  INTEGER,
    model                 TEXT NOT NULL,
    status                TEXT NOT NULL,
    duration_s            REAL NOT NULL,
    batch_count           INTEGER NOT NULL,
    failed_batch_count    INTEGER NOT NULL,
    selected_answer_count INTEGER NOT NULL,
    label                 TEXT NOT NULL DEFAULT '',
    error                 TEXT,
    request_json          TEXT NOT NULL,
    result_json           TEXT,
    events_json           TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_index ON runs (index_name, created_at);
CREATE INDEX IF NOT EXISTS runs_by_time ON runs (created_at);
"""

_SUMMARY_COLUMNS = (
    "run_id, created_at, index_name, query, status, community_level, seed, model, duration_s, "
    "batch_count, failed_batch_count, selected_answer_count, label, request_json"
)


RECLAIM_MIN_BYTES = 1 << 20
"""Deleting runs shrinks the file once this much of it is free pages."""


class StoreError(Exception):
    """The run store file cannot be used: it was written by a newer schema, or is not a run store."""


def default_store_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the run history lives by default: ``$XDG_DATA_HOME`` (else ``~/.local/share``),
    then ``graphrag-explorer/runs.sqlite3``. The only place the store looks at the environment."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME") or ""
    root = Path(base).expanduser() if base.strip() else Path.home() / ".local" / "share"
    return root / STORE_DIR_NAME / STORE_FILE_NAME


class RunStore:
    """The run history in one SQLite file. Thread- and process-safe: each call opens its own
    connection (WAL mode, a busy timeout), and nothing is held between calls."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._migrate()

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r})"

    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        """One connection for one operation (see :func:`graphrag_core.sqlite.connect`)."""
        return sqlite_connect(self.path, timeout=CONNECT_TIMEOUT_S, pragmas=("foreign_keys = ON",))

    def _migrate(self) -> None:
        """Create the tables when missing and check the schema version, in one immediate
        transaction, so that several threads or processes opening a new file at once agree."""
        try:
            conn = sqlite3.connect(self.path, timeout=CONNECT_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open the run store: {exc}") from exc
        try:
            enable_wal(conn)
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                columns = {info[1] for info in conn.execute("PRAGMA table_info(runs)")}
                if "writer" not in columns:  # added for interrupted runs; older readers ignore it
                    conn.execute("ALTER TABLE runs ADD COLUMN writer TEXT")
                row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
                version = row[0] if row else None
                if version is None:
                    conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
                elif version > SCHEMA_VERSION:
                    raise StoreError(
                        f"{self.path}: the run store has schema version {version}, newer than this "
                        f"program's {SCHEMA_VERSION}; upgrade graphrag-explorer to read it."
                    )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as exc:
            raise StoreError(f"{self.path}: cannot open the run store: {exc}.") from exc
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a run store ({exc}).") from exc
        finally:
            conn.close()

    @property
    def schema_version(self) -> int:
        with self._connect() as conn:
            return int(conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0])

    # -- writing ------------------------------------------------------------------------------

    def save(self, record: RunRecord) -> None:
        """Insert the record, or replace the one stored under the same ``run_id``."""
        row = (
            record.run_id,
            record.created_at,
            record.index_name,
            record.index_path,
            record.query,
            level_text(record.request.reported_level),
            record.seed,
            record.model,
            record.status,
            record.duration_s,
            record.batch_count,
            record.failed_batch_count,
            record.selected_answer_count,
            record.label,
            record.error,
            record.request.model_dump_json(),
            None if record.result is None else record.result.model_dump_json(),
            events_to_json(record.events),
            process_token() if record.status == "running" else None,
        )
        with self._connect() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO runs (run_id, created_at, index_name, index_path, query, "
                "community_level, seed, model, status, duration_s, batch_count, failed_batch_count, "
                "selected_answer_count, label, error, request_json, result_json, events_json, writer) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )

    def set_label(self, run_id: str, label: str) -> bool:
        """Change a stored run's label; False when there is no such run."""
        record = self.get(run_id)
        if record is None:
            return False
        self.save(record.model_copy(update={"label": label}))
        return True

    def delete(self, run_id: str) -> bool:
        """Remove a run; True when it existed. The space it took is given back to the file
        system once the free pages amount to ``RECLAIM_MIN_BYTES`` (see :meth:`reclaim`)."""
        with self._connect() as conn:
            deleted = conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,)).rowcount > 0
        if deleted:
            self.reclaim(min_bytes=RECLAIM_MIN_BYTES)
        return deleted

    def reclaim(self, *, min_bytes: int = 0) -> int:
        """Shrink the file when its free pages hold at least ``min_bytes``: VACUUM, then truncate
        the write-ahead log. Returns the bytes the free pages held (0 when nothing was done)."""
        conn = sqlite3.connect(self.path, timeout=CONNECT_TIMEOUT_S, isolation_level=None)
        try:
            free = conn.execute("PRAGMA freelist_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]
            if free == 0 or free < min_bytes:
                return 0
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return int(free)
        finally:
            conn.close()

    # -- reading ------------------------------------------------------------------------------

    def get(self, run_id: str) -> RunRecord | None:
        """The full record of a run (events and result included), or None."""
        with self._connect() as conn:
            row = conn.execute(
                "SELECT run_id, created_at, index_name, index_path, query, seed, model, status, "
                "duration_s, label, error, request_json, result_json, events_json, writer FROM runs WHERE run_id = ?",
                (run_id,),
            ).fetchone()
        if row is None:
            return None
        (rid, created_at, index_name, index_path, query, seed, model, status, duration_s, label, error,
         request_json, result_json, events_json, writer) = row
        status = live_status(status, writer, created_at, duration_s)
        return RunRecord(
            run_id=rid,
            created_at=created_at,
            index_name=index_name,
            index_path=index_path,
            query=query,
            request=GlobalSearchRequest(**json.loads(request_json)),
            model=model,
            seed=seed,
            status=status,
            duration_s=duration_s,
            error=error,
            events=events_from_json(events_json),
            result=None if result_json is None else GlobalSearchResult.model_validate_json(result_json),
            label=label,
        )

    def list_runs(self, limit: int = DEFAULT_LIST_LIMIT, *, index_name: str | None = None) -> list[RunSummary]:
        """The newest runs first (at most ``limit``), optionally only those of one index."""
        sql = f"SELECT {_SUMMARY_COLUMNS}, writer FROM runs"
        params: list[object] = []
        if index_name is not None:
            sql += " WHERE index_name = ?"
            params.append(index_name)
        sql += " ORDER BY created_at DESC, rowid DESC LIMIT ?"
        params.append(int(limit))
        with self._connect() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [_summary_from_row(row) for row in rows]

    def __len__(self) -> int:
        with self._connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])

    def __contains__(self, run_id: object) -> bool:
        if not isinstance(run_id, str):
            return False
        with self._connect() as conn:
            return conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is not None

    # -- export -------------------------------------------------------------------------------

    def export_json(self, run_id: str) -> str:
        """The whole record as JSON (``RunRecord.model_validate_json`` reads it back)."""
        return self._require(run_id).model_dump_json(indent=2)

    def export_markdown(self, run_id: str) -> str:
        """A readable report of the run: see :func:`record_to_markdown`."""
        return record_to_markdown(self._require(run_id))

    def _require(self, run_id: str) -> RunRecord:
        record = self.get(run_id)
        if record is None:
            raise KeyError(f"No run {run_id!r} in {self.path}.")
        return record


def _summary_from_row(row: Sequence[object]) -> RunSummary:
    names = [name.strip() for name in _SUMMARY_COLUMNS.split(",")]
    data = dict(zip(names, row))
    data["community_level"] = level_value(str(data["community_level"]))
    writer = row[len(names)] if len(row) > len(names) else None
    data["status"] = live_status(str(data["status"]), writer, data["created_at"], data["duration_s"])
    request_json = data.pop("request_json", None)
    try:
        data["request"] = GlobalSearchRequest(**json.loads(str(request_json))) if request_json else None
    except (ValueError, TypeError, GraphRAGError):  # a request this version cannot read: the summary still lists
        data["request"] = None
    return RunSummary.model_validate(data)


__all__ = ["DEFAULT_LIST_LIMIT", "SCHEMA_VERSION", "RunStore", "StoreError", "default_store_path"]
