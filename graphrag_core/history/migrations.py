"""The run history's schema, as numbered migrations applied in order.

A file at version ``n`` holds what migrations 1 to ``n`` made; ``schema_version`` gets one row
per migration applied, and the file's version is the largest. :func:`upgrade` applies the
missing ones inside the caller's transaction, so a file is either at its old version or at the
new one, never in between, and two processes opening one file agree.

1. the first schema: ``runs`` (one row per run, its events as one JSON array) and ``schema_version``;
2. ``runs.writer``, the process writing a running run (files written while the version stayed 1
   may already have it: the migration adds it only when missing);
3. events in a table of their own, ``run_events`` (run id, number, one event's JSON), so a
   running run's new events are appended instead of its whole list rewritten; ``runs`` keeps
   the summary columns and loses ``events_json``;
4. ``runs.support_json``: the run's latest support check (:class:`~graphrag_core.support.SupportCheck`
   as JSON), null until one is made.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

_RUN_COLUMNS = """
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
    result_json           TEXT"""

_RUN_INDEXES = (
    "CREATE INDEX IF NOT EXISTS runs_by_index ON runs (index_name, created_at)",
    "CREATE INDEX IF NOT EXISTS runs_by_time ON runs (created_at)",
)


def _first_schema(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    conn.execute(f"CREATE TABLE IF NOT EXISTS runs ({_RUN_COLUMNS},\n    events_json TEXT NOT NULL\n)")
    for statement in _RUN_INDEXES:
        conn.execute(statement)


def _writer_column(conn: sqlite3.Connection) -> None:
    if "writer" not in _columns(conn, "runs"):
        conn.execute("ALTER TABLE runs ADD COLUMN writer TEXT")


def _events_table(conn: sqlite3.Connection) -> None:
    """Rebuild ``runs`` without ``events_json`` (keeping every rowid, which orders runs created
    in the same second) and move each run's events into ``run_events``, numbered from 0."""
    kept = ", ".join(c for c in _columns(conn, "runs") if c != "events_json")
    conn.execute(f"CREATE TABLE runs_v3 ({_RUN_COLUMNS},\n    writer TEXT\n)")
    conn.execute(f"INSERT INTO runs_v3 (rowid, {kept}) SELECT rowid, {kept} FROM runs")
    conn.execute(
        "CREATE TABLE run_events ("
        " run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,"
        " seq INTEGER NOT NULL,"
        " event_json TEXT NOT NULL,"
        " PRIMARY KEY (run_id, seq))"
    )
    for run_id, events_json in conn.execute("SELECT run_id, events_json FROM runs").fetchall():
        events = json.loads(events_json)
        conn.executemany(
            "INSERT INTO run_events (run_id, seq, event_json) VALUES (?, ?, ?)",
            ((run_id, seq, json.dumps(event, ensure_ascii=False, separators=(",", ":"))) for seq, event in enumerate(events)),
        )
    conn.execute("DROP TABLE runs")
    conn.execute("ALTER TABLE runs_v3 RENAME TO runs")
    for statement in _RUN_INDEXES:
        conn.execute(statement)


def _support_column(conn: sqlite3.Connection) -> None:
    if "support_json" not in _columns(conn, "runs"):
        conn.execute("ALTER TABLE runs ADD COLUMN support_json TEXT")


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [info[1] for info in conn.execute(f"PRAGMA table_info({table})")]


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    apply: Callable[[sqlite3.Connection], None]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "runs and schema_version", _first_schema),
    Migration(2, "runs.writer: the process writing a running run", _writer_column),
    Migration(3, "run_events: each run's events, appended as they come", _events_table),
    Migration(4, "runs.support_json: the run's latest support check", _support_column),
)
"""Every migration, in order; the versions are 1, 2, 3, ... with no gap."""

SCHEMA_VERSION = MIGRATIONS[-1].version
"""The newest schema this program writes and reads."""


class ForeignSchema(Exception):
    """The open file is not a run history this program wrote: the message says what it holds
    instead (a clause, e.g. ``it has no table runs``)."""


_BASE_RUN_COLUMNS: tuple[str, ...] = tuple(line.split()[0] for line in _RUN_COLUMNS.strip().splitlines())


def required_columns(version: int) -> dict[str, tuple[str, ...]]:
    """The tables and columns a file at schema ``version`` (>= 1) has, as the migrations up to
    it made them (a migration that adds a table or a column adds it here too)."""
    runs = list(_BASE_RUN_COLUMNS)
    if version < 3:
        runs.append("events_json")
    if version >= 2:  # a version 1 file may have it too (added while the version stayed 1)
        runs.append("writer")
    if version >= 4:
        runs.append("support_json")
    tables = {"runs": tuple(runs)}
    if version >= 3:
        tables["run_events"] = ("run_id", "seq", "event_json")
    return tables


REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = required_columns(SCHEMA_VERSION)
"""The tables and columns a file at :data:`SCHEMA_VERSION` has (what the store reads and writes)."""


def _tables(conn: sqlite3.Connection) -> list[str]:
    return [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]


def _listed(names: list[str], noun: str) -> str:
    return f"the {noun} {names[0]}" if len(names) == 1 else f"the {noun}s {', '.join(names)}"


def file_version(conn: sqlite3.Connection) -> int:
    """The schema version of the open file: 0 for a file no migration has touched (a new, empty
    file). Raises :class:`ForeignSchema` for a file that holds tables but no version, or a
    version that is not a whole number."""
    tables = _tables(conn)
    if "schema_version" not in tables:
        if tables:
            raise ForeignSchema(f"it holds {_listed(tables, 'table')} and none of a run history's")
        return 0
    if "version" not in _columns(conn, "schema_version"):
        raise ForeignSchema("its table schema_version has no column version")
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    value = row[0] if row else None
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool):
        raise ForeignSchema(f"its schema version is {value!r}, not a whole number")
    return value


def check_shape(conn: sqlite3.Connection, version: int = SCHEMA_VERSION) -> None:
    """Raise :class:`ForeignSchema` unless the open file has every table and column a file at
    ``version`` has (:func:`required_columns`): a file that names a version but was made otherwise."""
    tables = set(_tables(conn))
    for table, wanted in required_columns(version).items():
        if table not in tables:
            raise ForeignSchema(f"it has no table {table}")
        missing = [c for c in wanted if c not in _columns(conn, table)]
        if missing:
            raise ForeignSchema(f"its table {table} lacks {_listed(missing, 'column')}")


def upgrade(conn: sqlite3.Connection, *, from_version: int) -> int:
    """Apply every migration after ``from_version``, in order, recording each; returns the
    version reached. Runs inside the caller's transaction (a failure leaves it to roll back)."""
    version = from_version
    for migration in MIGRATIONS:
        if migration.version > version:
            migration.apply(conn)
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (migration.version,))
            version = migration.version
    return version


__all__ = ["MIGRATIONS", "REQUIRED_COLUMNS", "SCHEMA_VERSION", "ForeignSchema", "Migration", "check_shape", "file_version", "required_columns", "upgrade"]
