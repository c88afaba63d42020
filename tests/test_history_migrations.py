"""The run history's numbered migrations: a file written before them (schema version 1, with
or without the ``writer`` column added while the version stayed 1) opens, keeps its runs and is
at the newest version; a failed upgrade leaves the file as it was; a newer file is refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from graphrag_core.events import MapBatchCached, events_to_json
from graphrag_core.history.migrations import MIGRATIONS, SCHEMA_VERSION, file_version
from graphrag_core.history.records import RunRecord
from graphrag_core.history.store import RunStore, StoreError
from graphrag_core.levels import level_text

from .test_cached_batches import as_recorded_before, first_and_cached_rerun
from .test_history_store import failed_events, run_events

VERSION_1_SCHEMA = """
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
"""The schema the run history had before numbered migrations (its version row said 1)."""


def write_version_1_file(path: Path, records: list[RunRecord], *, writer_column: bool, events_json: dict[str, str] | None = None) -> None:
    """A run history as the program wrote it before migrations: every run's events as one JSON
    array in ``runs.events_json`` (``events_json`` overrides a run's text)."""
    with sqlite3.connect(path) as conn:
        conn.executescript(VERSION_1_SCHEMA)
        conn.execute("INSERT INTO schema_version (version) VALUES (1)")
        if writer_column:
            conn.execute("ALTER TABLE runs ADD COLUMN writer TEXT")
        for r in records:
            conn.execute(
                "INSERT OR REPLACE INTO runs (run_id, created_at, index_name, index_path, query, community_level, seed, model, "
                "status, duration_s, batch_count, failed_batch_count, selected_answer_count, label, error, request_json, "
                "result_json, events_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    r.run_id, r.created_at, r.index_name, r.index_path, r.query, level_text(r.request.reported_level), r.seed,
                    r.model, str(r.status), r.duration_s, r.batch_count, r.failed_batch_count, r.selected_answer_count, r.label,
                    r.error, r.request.model_dump_json(), None if r.result is None else r.result.model_dump_json(),
                    (events_json or {}).get(r.run_id, events_to_json(r.events)),
                ),
            )


def old_runs() -> list[RunRecord]:
    same_second = "2024-01-01T00:00:00+00:00"
    return [
        RunRecord.from_events(run_events(), index_name="tiny", created_at=same_second, label="first"),
        RunRecord.from_events(run_events(community_level=0), index_name="tiny", created_at=same_second),
        RunRecord.from_events(failed_events(), index_name="other", created_at="2024-01-02T00:00:00+00:00"),
    ]


def test_the_migrations_are_numbered_from_one_with_no_gap() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert SCHEMA_VERSION == MIGRATIONS[-1].version >= 3


@pytest.mark.parametrize("writer_column", [True, False], ids=["with-writer", "before-writer"])
def test_a_version_1_file_opens_keeps_its_runs_and_is_at_the_new_version(tmp_path: Path, writer_column: bool) -> None:
    path = tmp_path / "runs.sqlite3"
    runs = old_runs()
    write_version_1_file(path, runs, writer_column=writer_column)
    with sqlite3.connect(path) as conn:
        listed_before = [row[0] for row in conn.execute("SELECT run_id FROM runs ORDER BY created_at DESC, rowid DESC")]

    store = RunStore(path)
    assert store.schema_version == SCHEMA_VERSION
    for record in runs:
        assert store.get(record.run_id) == record
    assert [s.run_id for s in store.list_runs()] == listed_before  # runs of the same second keep their order
    assert store.list_runs()[0].status == "failed" and {s.label for s in store.list_runs()} == {"first", ""}
    with sqlite3.connect(path) as conn:
        assert [row[0] for row in conn.execute("SELECT version FROM schema_version ORDER BY version")] == list(range(1, SCHEMA_VERSION + 1))
        columns = {info[1] for info in conn.execute("PRAGMA table_info(runs)")}
        assert "events_json" not in columns and "writer" in columns
        assert conn.execute("SELECT COUNT(*) FROM run_events").fetchone()[0] == sum(len(r.events) for r in runs)

    RunStore(path)  # opening it again changes nothing
    assert RunStore(path).schema_version == SCHEMA_VERSION and len(RunStore(path)) == len(runs)
    extra = RunRecord.from_events(run_events(), index_name="new")
    store.save(extra)
    assert store.get(extra.run_id) == extra and store.delete(runs[0].run_id) and store.get(runs[0].run_id) is None


def test_a_new_file_is_made_by_the_same_migrations(tmp_path: Path) -> None:
    fresh, upgraded = tmp_path / "fresh.sqlite3", tmp_path / "old.sqlite3"
    RunStore(fresh)
    write_version_1_file(upgraded, [], writer_column=False)
    RunStore(upgraded)

    def schema(path: Path) -> dict[str, object]:
        """Every table's columns and foreign keys, and every index's columns."""
        with sqlite3.connect(path) as conn:
            objects = conn.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall()
            return {
                name: (
                    kind,
                    conn.execute(f"PRAGMA table_info({name})").fetchall() if kind == "table" else conn.execute(f"PRAGMA index_info({name})").fetchall(),
                    conn.execute(f"PRAGMA foreign_key_list({name})").fetchall() if kind == "table" else [],
                )
                for kind, name in objects
            }

    assert schema(fresh) == schema(upgraded)


def test_a_cache_hit_stored_the_old_way_reads_as_a_cached_batch(tmp_path: Path) -> None:
    _, rerun = first_and_cached_rerun()
    record = RunRecord.from_events(rerun, index_name="tiny")
    path = tmp_path / "runs.sqlite3"
    write_version_1_file(path, [record], writer_column=True, events_json={record.run_id: events_to_json(as_recorded_before(rerun))})
    got = RunStore(path).get(record.run_id)
    assert got is not None and got.events == rerun and any(isinstance(e, MapBatchCached) for e in got.events)
    assert got.figures == record.figures and got.figures.map_calls == 0 and got.figures.cache_hits > 1


def test_a_failed_upgrade_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    runs = old_runs()
    write_version_1_file(path, runs, writer_column=True, events_json={runs[1].run_id: "[{not json"})
    with pytest.raises(StoreError, match=r"cannot upgrade the run store from schema version 1 to \d+.*left as it was"):
        RunStore(path)
    with sqlite3.connect(path) as conn:
        assert file_version(conn) == 1
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == len(runs)
        assert "events_json" in {info[1] for info in conn.execute("PRAGMA table_info(runs)")}
        assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'run_events'").fetchone()


def test_a_file_of_a_newer_schema_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    RunStore(path).save(old_runs()[0])
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1}, newer than this program's {SCHEMA_VERSION}"):
        RunStore(path)
    with sqlite3.connect(path) as conn:
        assert file_version(conn) == SCHEMA_VERSION + 1 and conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1


def test_an_upgraded_file_gives_back_the_space_of_its_old_tables(tmp_path: Path) -> None:
    events = run_events()
    runs = [
        RunRecord.from_events([events[0].model_copy(update={"run_id": f"run-{n:03d}"}), *events[1:]], index_name="tiny")
        for n in range(200)
    ]
    path = tmp_path / "runs.sqlite3"
    write_version_1_file(path, runs, writer_column=True)
    before = path.stat().st_size
    store = RunStore(path)
    assert len(store) == 200 and store.get("run-007") == runs[7]
    with sqlite3.connect(path) as conn:
        free_pages = conn.execute("PRAGMA freelist_count").fetchone()[0]
    assert free_pages == 0 and path.stat().st_size < 1.5 * before  # the copy's old pages were given back
