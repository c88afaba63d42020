"""Run history in SQLite: every run's request, events and result, so it can be listed, replayed,
compared and exported with no model.

One file holds the history (``default_store_path(environ)``: ``$XDG_DATA_HOME`` or
``~/.local/share``, then ``graphrag-explorer/runs.sqlite3``). The database runs in WAL mode and
every operation opens and closes its own connection, so Streamlit reruns on other threads and
several processes may share one file. Its schema is :mod:`.migrations`'; opening a file brings
it to :data:`SCHEMA_VERSION` and refuses a newer one.

Invariants:

- a run is one row of ``runs`` (its summary columns, request, result and latest support
  check) and its events, one row each of ``run_events``, numbered from 0 in the order they
  happened; writing a running run's row (``append``) never touches its support check;
- ``get`` returns a record whose ``events`` replay (``RunState.replay``) to the same state as
  the events saved or appended;
- ``save`` writes a whole record (replacing one with the same ``run_id``, events included);
  ``import_record`` (a run made elsewhere) never replaces one: it takes an id of its own;
  ``append`` writes a run's row and only the events the store does not hold yet, so a running
  run's writes cost what is new, not what it has done so far;
- the only model information stored is the model's *identity* string (``model_identity``),
  which by contract never holds a secret;
- listing reads only the summary columns, never event JSON;
- a run stored as ``running`` names its writer process (host, pid, start time); once that
  process is gone, ``get`` and ``list_runs`` report it as ``interrupted``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import zip_longest
from pathlib import Path

from ..errors import GraphRAGError
from ..events import Event, event_from_json, event_to_json, with_cache_hits
from ..levels import level_text, parse_level
from ..request import GlobalSearchRequest
from ..results import GlobalSearchResult
from ..sqlite import connect as sqlite_connect
from ..sqlite import enable_wal
from ..status import RunStatus
from ..support.models import SupportCheck
from .liveness import live_status, process_token
from .migrations import SCHEMA_VERSION, ForeignSchema, check_shape, file_version, upgrade
from .records import RunRecord, RunSummary

STORE_DIR_NAME = "graphrag-explorer"
STORE_FILE_NAME = "runs.sqlite3"
DEFAULT_LIST_LIMIT = 100
CONNECT_TIMEOUT_S = 10.0
"""How long an operation waits for another writer's lock before failing."""

_SUMMARY_COLUMNS = (
    "run_id, created_at, index_name, query, status, community_level, seed, model, duration_s, "
    "batch_count, failed_batch_count, selected_answer_count, label, request_json, index_path, error"
)

_ROW_COLUMNS = (
    "run_id", "created_at", "index_name", "index_path", "query", "community_level", "seed", "model", "status", "duration_s",
    "batch_count", "failed_batch_count", "selected_answer_count", "label", "error", "request_json", "result_json", "writer",
)
_UPSERT_ROW = (
    f"INSERT INTO runs ({', '.join(_ROW_COLUMNS)}) VALUES ({', '.join('?' for _ in _ROW_COLUMNS)}) "
    f"ON CONFLICT (run_id) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in _ROW_COLUMNS[1:])}"
)
_INSERT_EVENT = "INSERT INTO run_events (run_id, seq, event_json) VALUES (?, ?, ?)"
_SELECT_EVENTS = "SELECT event_json FROM run_events WHERE run_id = ? ORDER BY seq"


RECLAIM_MIN_BYTES = 1 << 20
"""Deleting runs shrinks the file once this much of it is free pages."""


class StoreError(Exception):
    """The run store file cannot be used: it was written by a newer schema, is not a run store,
    is damaged, or is busy. The message names the file (and the run, when one run is damaged)."""


def damaged_message(path: Path, problem: object, *, run_id: str | None = None) -> str:
    """The one sentence every front end shows for a damaged history (or one damaged run)."""
    what = f"run {run_id} in {path}" if run_id is not None else str(path)
    return (
        f"{what}: the run history is damaged ({problem}). Move the file aside to start a new history "
        "(or restore a copy); nothing was changed."
    )


def foreign_message(path: Path, problem: object) -> str:
    """The one sentence every front end shows for a file that is not a run history of ours."""
    return (
        f"{path}: not a run history of graphrag-explorer: {problem}. Choose another file (--store, or "
        "GRAPHRAG_EXPLORER_DB), or move this one aside; nothing was changed."
    )


def _foreign_in_upgrade(exc: sqlite3.OperationalError) -> bool:
    """An upgrade that met tables other than those of the version the file names."""
    return any(words in str(exc) for words in ("no such table", "no such column", "has no column"))


def _restore_journal(conn: sqlite3.Connection, journal: str) -> None:
    """Put back the journal mode a refused file had before it was opened in WAL mode."""
    if journal.isalpha() and journal.lower() != "wal":
        try:
            conn.execute(f"PRAGMA journal_mode = {journal}")
        except sqlite3.Error:  # another connection holds it: the mode stays WAL, the data as it was
            pass


def default_store_path(environ: Mapping[str, str]) -> Path:
    """Where the run history lives by default, given the environment: ``$XDG_DATA_HOME`` (else
    ``~/.local/share``), then ``graphrag-explorer/runs.sqlite3``."""
    base = environ.get("XDG_DATA_HOME") or ""
    root = Path(base).expanduser() if base.strip() else Path.home() / ".local" / "share"
    return root / STORE_DIR_NAME / STORE_FILE_NAME


class RunStore:
    """The run history in one SQLite file. Thread- and process-safe: each call opens its own
    connection (WAL mode, a busy timeout), and nothing is held between calls."""

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        """Open the history at ``path``, made (with its folder) or brought to
        :data:`SCHEMA_VERSION` as needed. With ``read_only`` nothing is written: the file is
        read where it lies, needing no space (a full disk still lists and shows runs); a missing
        file reads as an empty history, and only a file of an older schema is upgraded first.
        A file that is not a run history raises :class:`StoreError` (:func:`foreign_message`)."""
        self.path = Path(path).expanduser()
        self.read_only = read_only
        if not (read_only and self._at_current_version()):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._migrate()

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r})"

    def _at_current_version(self) -> bool:
        """For a read-only store: True when the file is missing or at :data:`SCHEMA_VERSION`
        (nothing to write before reading it); False when it needs an upgrade."""
        if not self.path.exists():
            return True
        with self._connect() as conn:
            version = self._version(conn)
            if version > SCHEMA_VERSION:
                raise StoreError(self._newer_message(version))
            if version == SCHEMA_VERSION:
                self._check_shape(conn)
                return True
        return False

    def _version(self, conn: sqlite3.Connection) -> int:
        try:
            return file_version(conn)
        except ForeignSchema as exc:
            raise StoreError(foreign_message(self.path, exc)) from None

    def _check_shape(self, conn: sqlite3.Connection, version: int = SCHEMA_VERSION) -> None:
        try:
            check_shape(conn, version)
        except ForeignSchema as exc:
            raise StoreError(foreign_message(self.path, exc)) from None

    def _newer_message(self, version: int) -> str:
        return (
            f"{self.path}: the run store has schema version {version}, newer than this "
            f"program's {SCHEMA_VERSION}; upgrade graphrag-explorer to read it."
        )

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """One connection for one operation (see :func:`graphrag_core.sqlite.connect`; read-only
        for a read-only store, and an empty history in memory while its file is missing); a
        file SQLite cannot read, or cannot lock in time, raises :class:`StoreError` naming it."""
        try:
            if self.read_only and not self.path.exists():
                with sqlite_connect(":memory:", timeout=CONNECT_TIMEOUT_S) as connection:
                    upgrade(connection, from_version=0)
                    yield connection
                return
            with sqlite_connect(self.path, timeout=CONNECT_TIMEOUT_S, pragmas=("foreign_keys = ON",), read_only=self.read_only) as connection:
                yield connection
        except sqlite3.OperationalError as exc:
            if "malformed" in str(exc) or "not a database" in str(exc):
                raise StoreError(damaged_message(self.path, exc)) from exc
            raise StoreError(f"{self.path}: the run history cannot be used now ({exc}).") from exc
        except sqlite3.DatabaseError as exc:
            raise StoreError(damaged_message(self.path, exc)) from exc

    def _migrate(self) -> None:
        """Bring the file to :data:`SCHEMA_VERSION` (:func:`.migrations.upgrade`) in one
        immediate transaction, so that several threads or processes opening a file at once
        agree; a file of a newer schema is refused and left as it is. An upgraded file that was
        not new gives back the pages its old tables held (:meth:`reclaim`)."""
        try:
            conn = sqlite3.connect(self.path, timeout=CONNECT_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open the run store: {exc}") from exc
        journal = "wal"  # nothing to put back until the file is switched to WAL mode
        try:
            if 0 < (found := self._version(conn)) <= SCHEMA_VERSION:  # a foreign file is refused before WAL mode changes its header
                self._check_shape(conn, found)
            journal = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
            enable_wal(conn)
            conn.execute("BEGIN IMMEDIATE")
            try:
                version = self._version(conn)
                if version > SCHEMA_VERSION:
                    raise StoreError(self._newer_message(version))
                try:
                    upgrade(conn, from_version=version)
                except ValueError as exc:  # a stored value the migration cannot read (e.g. broken event JSON)
                    raise StoreError(
                        f"{self.path}: cannot upgrade the run store from schema version {version} to "
                        f"{SCHEMA_VERSION}: {exc}; the file is left as it was."
                    ) from exc
                except sqlite3.OperationalError as exc:
                    if not _foreign_in_upgrade(exc):
                        raise
                    raise StoreError(foreign_message(self.path, f"its tables are not those of the schema version {version} it names")) from None
                self._check_shape(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except StoreError:
            _restore_journal(conn, journal)  # refused: the file keeps its journal mode too, byte for byte
            raise
        except sqlite3.OperationalError as exc:
            if "malformed" in str(exc):
                raise StoreError(damaged_message(self.path, exc)) from exc
            raise StoreError(f"{self.path}: cannot open the run store: {exc}.") from exc
        except sqlite3.DatabaseError as exc:
            if "malformed" in str(exc):
                raise StoreError(damaged_message(self.path, exc)) from exc
            raise StoreError(f"{self.path}: not a run store ({exc}).") from exc
        finally:
            conn.close()
        if 0 < version < SCHEMA_VERSION:
            try:
                self.reclaim(min_bytes=RECLAIM_MIN_BYTES)
            except sqlite3.OperationalError:  # another connection is busy: a later delete reclaims the space
                pass

    @property
    def schema_version(self) -> int:
        with self._connect() as conn:
            return file_version(conn)

    # -- writing ------------------------------------------------------------------------------

    def save(self, record: RunRecord) -> None:
        """Insert the record, or replace the one stored under the same ``run_id`` (its events too)."""
        with self._connect() as conn:
            _write_row(conn, record.summary(), record.result)
            _write_support(conn, record.run_id, record.support)
            conn.execute("DELETE FROM run_events WHERE run_id = ?", (record.run_id,))
            conn.executemany(_INSERT_EVENT, ((record.run_id, seq, event_to_json(e)) for seq, e in enumerate(record.events)))

    def import_record(self, record: RunRecord) -> str:
        """Add a run that was made elsewhere (a run bundle) and return the id it is stored under.

        Invariant: a stored run is never replaced. A record whose id is free is stored under it;
        one whose id holds the same events is that run, already here (nothing is written); one
        whose id holds another run is stored under an id derived from its own id and events, so
        importing it again finds it there. Checked and written in one transaction."""
        candidate = record.run_id
        for attempt in range(IMPORT_ID_ATTEMPTS):
            stored = record if candidate == record.run_id else record.with_run_id(candidate)
            with self._connect() as conn:
                conn.execute("BEGIN IMMEDIATE")
                if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (candidate,)).fetchone() is None:
                    _write_row(conn, stored.summary(), stored.result)
                    _write_support(conn, candidate, stored.support)
                    conn.executemany(_INSERT_EVENT, ((candidate, seq, event_to_json(e)) for seq, e in enumerate(stored.events)))
                    return candidate
                held = (text for (text,) in conn.execute(_SELECT_EVENTS, (candidate,)))
                if all(a == b for a, b in zip_longest(held, map(event_to_json, stored.events))):
                    return candidate  # this very run is here already
            candidate = _imported_id(record, attempt)
        raise StoreError(f"{self.path}: run {record.run_id} could not be given an id of its own.")

    def append(self, summary: RunSummary, events: Sequence[Event], *, since: int, result: GlobalSearchResult | None = None) -> int:
        """Bring a run up to date: its row from ``summary`` (and ``result`` once it finished),
        and its events, of which the first ``since`` are stored already: only ``events[since:]``
        are written. When the store holds another number of them (the run was deleted
        meanwhile), every event is written again. Returns how many events were written."""
        run_id = summary.run_id
        with self._connect() as conn:
            _write_row(conn, summary, result)
            last = conn.execute("SELECT MAX(seq) FROM run_events WHERE run_id = ?", (run_id,)).fetchone()[0]
            stored = 0 if last is None else int(last) + 1
            if stored != since:
                conn.execute("DELETE FROM run_events WHERE run_id = ?", (run_id,))
                since = 0
            conn.executemany(_INSERT_EVENT, ((run_id, seq, event_to_json(events[seq])) for seq in range(since, len(events))))
        return len(events) - since

    def set_support(self, run_id: str, check: SupportCheck | None) -> bool:
        """Keep ``check`` as the run's support check (replacing an earlier one; None removes
        it); False when there is no such run."""
        with self._connect() as conn:
            return _write_support(conn, run_id, check)

    def delete(self, run_id: str) -> bool:
        """Remove a run and its events; True when it existed. The space it took is given back to
        the file system once the free pages amount to ``RECLAIM_MIN_BYTES`` (see :meth:`reclaim`)."""
        with self._connect() as conn:
            conn.execute("DELETE FROM run_events WHERE run_id = ?", (run_id,))
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
                "duration_s, label, error, request_json, result_json, writer, support_json FROM runs WHERE run_id = ?",
                (run_id,),
            ).fetchone()
            if row is None:
                return None
            try:  # one row at a time: a run's events are never held twice, as text and as models
                events = with_cache_hits(event_from_json(text) for (text,) in conn.execute(_SELECT_EVENTS, (run_id,)))
            except ValueError as exc:  # pydantic's ValidationError
                raise StoreError(damaged_message(self.path, _first_problem(exc), run_id=run_id)) from exc
        (rid, created_at, index_name, index_path, query, seed, model, status, duration_s, label, error,
         request_json, result_json, writer, support_json) = row
        try:
            return RunRecord(
                run_id=rid,
                created_at=created_at,
                index_name=index_name,
                index_path=index_path,
                query=query,
                request=GlobalSearchRequest(**json.loads(request_json)),
                model=model,
                seed=seed,
                status=live_status(status, writer, created_at, duration_s),
                duration_s=duration_s,
                error=error,
                events=events,
                result=None if result_json is None else GlobalSearchResult.model_validate_json(result_json),
                label=label,
                support=None if support_json is None else SupportCheck.model_validate_json(support_json),
            )
        except (ValueError, TypeError, GraphRAGError) as exc:  # pydantic's ValidationError and JSON errors are ValueErrors
            raise StoreError(damaged_message(self.path, _first_problem(exc), run_id=run_id)) from exc

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
        summaries = []
        for row in rows:
            try:
                summaries.append(_summary_from_row(row))
            except (ValueError, TypeError, GraphRAGError) as exc:
                raise StoreError(damaged_message(self.path, _first_problem(exc), run_id=str(row[0]))) from exc
        return summaries

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
        """The whole record as JSON (``RunRecord.model_validate_json`` reads it back); raises
        ``KeyError`` naming the run and the file when there is no such run."""
        record = self.get(run_id)
        if record is None:
            raise KeyError(f"No run {run_id!r} in {self.path}.")
        return record.model_dump_json(indent=2)


IMPORT_ID_ATTEMPTS = 8
"""How many ids :meth:`RunStore.import_record` tries before giving up (each taken by another run)."""


def _imported_id(record: RunRecord, attempt: int) -> str:
    """The id an imported run takes when its own is another run's: a hash of its id, events and
    ``attempt``, so the same bundle imported twice lands on the same id."""
    digest = hashlib.sha256(f"imported\x00{record.run_id}\x00{attempt}\x00".encode("utf-8", "surrogatepass"))
    for event in record.events:
        digest.update(event_to_json(event).encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()[:32]


def _write_row(conn: sqlite3.Connection, summary: RunSummary, result: GlobalSearchResult | None) -> None:
    """Insert or update a run's row (never its events: updating keeps them and the rowid)."""
    if summary.request is None:
        raise ValueError(f"Run {summary.run_id}: a stored run needs its request.")
    running = summary.status == RunStatus.RUNNING
    conn.execute(
        _UPSERT_ROW,
        (
            summary.run_id,
            summary.created_at,
            summary.index_name,
            summary.index_path,
            summary.query,
            level_text(summary.community_level),
            summary.seed,
            summary.model,
            str(summary.status),
            summary.duration_s,
            summary.batch_count,
            summary.failed_batch_count,
            summary.selected_answer_count,
            summary.label,
            summary.error,
            summary.request.model_dump_json(),
            None if result is None else result.model_dump_json(),
            process_token() if running else None,
        ),
    )


def _write_support(conn: sqlite3.Connection, run_id: str, check: SupportCheck | None) -> bool:
    """Set a run's support check (None: none); whether the run is there."""
    text = None if check is None else check.model_dump_json()
    return conn.execute("UPDATE runs SET support_json = ? WHERE run_id = ?", (text, run_id)).rowcount > 0


def _first_problem(exc: Exception) -> str:
    """A short description of why a stored value could not be read (pydantic's first error)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors(include_url=False)[0]
            return str(first.get("msg", exc))
        except (IndexError, TypeError):
            pass
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _summary_from_row(row: Sequence[object]) -> RunSummary:
    names = [name.strip() for name in _SUMMARY_COLUMNS.split(",")]
    data = dict(zip(names, row))
    data["community_level"] = parse_level(str(data["community_level"]))
    writer = row[len(names)] if len(row) > len(names) else None
    data["status"] = live_status(str(data["status"]), writer, data["created_at"], data["duration_s"])
    request_json = data.pop("request_json", None)
    try:
        data["request"] = GlobalSearchRequest(**json.loads(str(request_json))) if request_json else None
    except (ValueError, TypeError, GraphRAGError):  # a request this version cannot read: the summary still lists
        data["request"] = None
    return RunSummary.model_validate(data)


__all__ = ["DEFAULT_LIST_LIMIT", "SCHEMA_VERSION", "RunStore", "StoreError", "damaged_message", "default_store_path", "foreign_message"]
