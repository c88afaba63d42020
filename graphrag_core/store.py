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
import socket
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta, timezone
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .errors import INTERRUPTED_ERROR_TYPE
from .errors import GraphRAGError
from .events import Event, RunFailed, RunFinished, RunStarted, events_from_json, events_to_json
from .figures import RunFigures, RunOutcome, figures_of, run_figures
from .report import record_to_markdown
from .request import GlobalSearchRequest
from .results import GlobalSearchResult
from .sqlite import connect as sqlite_connect
from .sqlite import enable_wal
from .state import RunState

RunStatus = RunOutcome
"""The status of a stored run: a result's status, or how an unfinished run ended.
``interrupted``: its process ended (killed, Ctrl-C) before the run did."""

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


def _process_start(pid: int) -> str:
    """The start time of a process (Linux ``/proc``), so a reused pid is not taken for it; ''
    when unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def process_token() -> str:
    """This process, as the writer of a running run: ``host:pid:start``."""
    return f"{socket.gethostname()}:{os.getpid()}:{_process_start(os.getpid())}"


STALE_RUN_S = 900.0
"""A running run written by another host whose last event is older than this is taken as
interrupted (a live run writes as its batches finish; its process cannot be asked)."""


def writer_alive(token: str, *, last_event_at: datetime | None = None) -> bool:
    """Whether the process a token names may still run: on this host, whether that process
    (same pid and start time) exists; on another host, whether its last event is recent."""
    host, _, rest = token.partition(":")
    pid_text, _, start = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        if last_event_at is None:
            return True
        return (datetime.now(timezone.utc) - last_event_at).total_seconds() < STALE_RUN_S
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return not start or _process_start(pid) in ("", start)


def _live_status(status: str, writer: object, created_at: object = None, duration_s: object = None) -> str:
    """A stored ``running`` status, or ``interrupted`` when its writer process is gone."""
    if status != "running" or not isinstance(writer, str) or not writer:
        return status
    last_event_at = None
    if isinstance(created_at, str) and isinstance(duration_s, (int, float)):
        try:
            started = datetime.fromisoformat(created_at)
        except ValueError:
            started = None
        if started is not None and started.tzinfo is not None:
            last_event_at = started + timedelta(seconds=float(duration_s))
    return status if writer_alive(writer, last_event_at=last_event_at) else "interrupted"


def interrupted_message(state: RunState) -> str:
    done, total = state.finished_batches, len(state.batches)
    return f"The run was interrupted: its process ended before it finished ({done} of {total} map batches were done)."


def utc_now_iso() -> str:
    """The current time as an ISO 8601 UTC string with seconds precision and a ``Z``-free offset."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _level_text(level: int | str) -> str:
    return str(level)


def _level_value(text: str) -> int | Literal["leaf", "dynamic"]:
    return text if text in ("leaf", "dynamic") else int(text)  # type: ignore[return-value]


class RunSummary(BaseModel):
    """One line of the run history: what a list shows, without the events or the result."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    created_at: str
    index_name: str
    query: str
    status: RunStatus
    community_level: int | Literal["leaf", "dynamic"]
    seed: int | None
    model: str
    duration_s: float
    batch_count: int
    failed_batch_count: int
    selected_answer_count: int
    label: str = ""
    request: GlobalSearchRequest | None = None
    """The run's settings (None only for a summary built by hand)."""


STATUS_WORDS: dict[str, str] = {"cancelled": "stopped"}
"""How a stored status reads: a run the user stopped is stored as ``cancelled`` (old records
keep reading) and shown as "stopped" everywhere."""


def status_word(status: str) -> str:
    """The word shown for a stored run status (``cancelled`` -> ``stopped``)."""
    return STATUS_WORDS.get(status, status)


def settings_text(request: GlobalSearchRequest | None, *, seed: int | None, level: int | str | None = None) -> str:
    """What tells two runs of one question apart: level, map and reduce budgets, seed and the
    reduce selection, plus claims or excerpts left out, e.g.
    ``level 0 · map 8,000 · reduce 6,000 · seed 7 · skip · no claims``."""
    if request is None:
        return f"level {level} · seed {seed}"
    parts = [
        f"level {request.community_level}",
        f"map {request.map_token_budget:,}",
        f"reduce {request.reduce_token_budget:,}",
        f"seed {seed if seed is not None else request.seed}",
        str(getattr(request, "selection", None) or request.reduce_strategy),
    ]
    if not request.include_claims:
        parts.append("no claims")
    if not request.include_sources:
        parts.append("no excerpts")
    return " · ".join(parts)


def run_label(run: "RunSummary | RunRecord", *, query_chars: int = 60) -> str:
    """The one label of a run in every list (Compare, History, Recent runs, ``runs list``):
    ``id · when · index · question · settings · status [label]``."""
    query = run.query if len(run.query) <= query_chars else run.query[: query_chars - 1] + "…"
    when = run.created_at.replace("T", " ")[:16]
    level = run.request.community_level if run.request is not None else getattr(run, "community_level", None)
    tag = f" [{run.label[:30]}]" if run.label else ""
    return (
        f"{run.run_id[:8]} · {when} · {run.index_name} · {query} · "
        f"{settings_text(run.request, seed=run.seed, level=level)} · {status_word(run.status)}{tag}"
    )


class RunRecord(BaseModel):
    """One run as stored: its request, every event it emitted, and its result when it finished.

    ``model`` is the model's identity string (never a secret). ``status`` is the result's status
    for a finished run, else ``failed``, ``cancelled`` or ``running`` (an event list cut short).
    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    created_at: str = Field(default_factory=utc_now_iso)
    index_name: str
    index_path: str | None = None
    query: str
    request: GlobalSearchRequest
    model: str
    seed: int | None = None
    status: RunStatus
    duration_s: float = 0.0
    error: str | None = None
    events: list[Event] = Field(default_factory=list)
    result: GlobalSearchResult | None = None
    label: str = ""

    @classmethod
    def from_events(
        cls,
        events: Iterable[Event],
        *,
        index_name: str,
        index_path: str | os.PathLike[str] | None = None,
        label: str = "",
        created_at: str | None = None,
    ) -> "RunRecord":
        """A record of the run those events describe, finished or not.

        The events must start with ``RunStarted`` (it carries the run id, request, seed and model);
        a list cut short (a failed or cancelled run, or one still running) is fine.
        """
        events = list(events)
        if not events or not isinstance(events[0], RunStarted):
            raise ValueError("A run record needs the run's events, starting with run_started.")
        state = RunState.replay(events)
        assert state.request is not None and state.run_id is not None  # set by RunStarted
        figures = figures_of(state)
        return cls(
            run_id=state.run_id,
            created_at=created_at or utc_now_iso(),
            index_name=index_name,
            index_path=None if index_path is None else os.fspath(index_path),
            query=state.request.query,
            request=state.request,
            model=state.model or "",
            seed=state.seed,
            status=figures.outcome,
            duration_s=figures.duration_s,
            error=state.error,
            events=events,
            result=state.result,
            label=label,
        )

    def ended_events(self) -> list[Event]:
        """The stored events, ending as the run ended: an interrupted run's end with a
        ``RunFailed`` saying so (its finished batches stay as they were); a record made from a
        result alone is its ``RunFinished``."""
        if not self.events:
            return [RunFinished(result=self.result)] if self.result is not None else []
        events = list(self.events)
        if self.status == "interrupted" and not isinstance(events[-1], (RunFinished, RunFailed)):
            state = RunState.replay(events)
            events.append(state.failure(at=events[-1].at, error=interrupted_message(state), error_type=INTERRUPTED_ERROR_TYPE))
        return events

    def replay(self) -> RunState:
        """The run's state, folded from its stored events (no model needed); see :meth:`ended_events`."""
        return RunState.replay(self.ended_events() if self.events else [])

    @cached_property
    def figures(self) -> RunFigures:
        """The run's figures (:func:`~graphrag_core.figures.run_figures` of :meth:`ended_events`)."""
        return run_figures(self.ended_events())

    @property
    def batch_count(self) -> int:
        return self.figures.batches

    @property
    def failed_batch_count(self) -> int:
        return self.figures.failed_batches

    @property
    def selected_answer_count(self) -> int:
        return self.figures.selected_answers if self.result is not None else 0

    def summary(self) -> RunSummary:
        return RunSummary(
            run_id=self.run_id,
            created_at=self.created_at,
            index_name=self.index_name,
            query=self.query,
            status=self.status,
            community_level=self.request.reported_level,
            seed=self.seed,
            model=self.model,
            duration_s=self.duration_s,
            batch_count=self.batch_count,
            failed_batch_count=self.failed_batch_count,
            selected_answer_count=self.selected_answer_count,
            request=self.request,
            label=self.label,
        )


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
            _level_text(record.request.reported_level),
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
        status = _live_status(status, writer, created_at, duration_s)
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
    data["community_level"] = _level_value(str(data["community_level"]))
    writer = row[len(names)] if len(row) > len(names) else None
    data["status"] = _live_status(str(data["status"]), writer, data["created_at"], data["duration_s"])
    request_json = data.pop("request_json", None)
    try:
        data["request"] = GlobalSearchRequest(**json.loads(str(request_json))) if request_json else None
    except (ValueError, TypeError, GraphRAGError):  # a request this version cannot read: the summary still lists
        data["request"] = None
    return RunSummary.model_validate(data)


__all__ = [
    "DEFAULT_LIST_LIMIT",
    "SCHEMA_VERSION",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "RunSummary",
    "StoreError",
    "STATUS_WORDS",
    "default_store_path",
    "interrupted_message",
    "process_token",
    "record_to_markdown",
    "run_label",
    "settings_text",
    "status_word",
    "writer_alive",
]
