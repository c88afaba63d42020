"""The run history's SQLite file: records in and out, lists, labels, deletion, schema checks.
Migrations are in test_history_migrations.py, the recorder in test_history_recorder.py."""

import asyncio
import json
import sqlite3
import threading

import pytest

from graphrag_core import (
    AllMapBatchesFailed,
    GlobalSearchRequest,
    RetryableModelError,
    RunState,
    ScriptedChatModel,
    retrieve_global,
)
from graphrag_core.events import RunFailed
from graphrag_core.history.migrations import SCHEMA_VERSION
from graphrag_core.history.records import RunRecord, RunSummary
from graphrag_core.history.store import RunStore, StoreError, default_store_path
from graphrag_core.report import record_to_markdown
from graphrag_core.status import RunStatus
from tests import factories

SECRET = "sk-test-THIS-MUST-NOT-BE-STORED-0123456789"


TOWN = {"root": "Everything about the town.", "river": "The river floods | every spring."}
"""The factory's town as these runs read it (its words as when this file built its own index)."""


def reply(request):
    if request.purpose == "map":
        return '{"answer": "The mill matters.", "usefulness": 60}'
    return '{"answer": "The mill and the river shape the town."}'


class KeyedModel(ScriptedChatModel):
    """A model that holds a secret, as a real client would; only its identity may be stored."""

    def __init__(self, script):
        super().__init__(script, identity="openai:gpt-test@https://api.example.test/v1")
        self.api_key = SECRET


def run_events(model=None, **request_fields):
    events = []
    request = GlobalSearchRequest(query="What shapes the town?", seed=7, **request_fields)
    asyncio.run(retrieve_global(factories.make_index(**TOWN), request, model or ScriptedChatModel(reply), on_event=events.append))
    return events


def failed_events():
    events = []
    request = GlobalSearchRequest(query="What shapes the town?", seed=7)
    model = ScriptedChatModel(lambda r: RetryableModelError("boom 503"))
    with pytest.raises(AllMapBatchesFailed):
        asyncio.run(retrieve_global(factories.make_index(**TOWN), request, model, on_event=events.append))
    return events


def test_default_store_path_uses_xdg_then_home(tmp_path):
    assert default_store_path({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "graphrag-explorer" / "runs.sqlite3"
    home_path = default_store_path({})
    assert home_path.parts[-4:] == (".local", "share", "graphrag-explorer", "runs.sqlite3")


def test_record_from_completed_events():
    events = run_events()
    record = RunRecord.from_events(events, index_name="tiny", index_path="/data/tiny", label="first")
    assert record.status == "completed"
    assert record.query == "What shapes the town?"
    assert record.seed == 7
    assert record.model == "scripted"
    assert record.result is not None and record.result.answer == "The mill and the river shape the town."
    assert record.error is None
    assert record.index_path == "/data/tiny"
    assert record.created_at.endswith("+00:00")
    summary = record.summary()
    assert (summary.batch_count, summary.failed_batch_count, summary.selected_answer_count) == (1, 0, 1)


def test_record_from_failed_and_cut_short_events():
    events = failed_events()
    record = RunRecord.from_events(events, index_name="tiny")
    assert record.status == "failed"
    assert record.error.startswith("Every Global Map batch failed.")
    assert record.result is None
    assert record.failed_batch_count == 1

    running = RunRecord.from_events(run_events()[:3], index_name="tiny")
    assert running.status == "running"

    cancelled = RunRecord.from_events(
        [*run_events()[:3], RunFailed(error="stopped", error_type="RunCancelled", cancelled=True)], index_name="tiny"
    )
    assert cancelled.status == "cancelled"


def test_record_needs_run_started():
    with pytest.raises(ValueError, match="run_started"):
        RunRecord.from_events([], index_name="tiny")


def test_save_get_list_delete(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite3")
    first = RunRecord.from_events(run_events(), index_name="tiny", created_at="2024-01-01T00:00:00+00:00")
    second = RunRecord.from_events(
        run_events(community_level=0), index_name="other", created_at="2024-01-02T00:00:00+00:00", label="lvl 0"
    )
    store.save(first)
    store.save(second)

    got = store.get(first.run_id)
    assert got == first
    assert RunState.replay(got.events).result == first.result
    assert store.get("nope") is None

    listed = store.list_runs()
    assert [s.run_id for s in listed] == [second.run_id, first.run_id]  # newest first
    assert all(isinstance(s, RunSummary) for s in listed)
    assert listed[0].community_level == 0 and listed[0].label == "lvl 0"
    assert listed[1].community_level == "leaf"
    assert [s.run_id for s in store.list_runs(index_name="tiny")] == [first.run_id]
    assert len(store.list_runs(limit=1)) == 1

    assert store.delete(first.run_id) is True
    assert store.delete(first.run_id) is False
    assert store.get(first.run_id) is None
    assert len(store) == 1


def test_save_is_an_upsert(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite3")
    record = RunRecord.from_events(run_events(), index_name="tiny")
    store.save(record)
    store.save(record.model_copy(update={"label": "renamed"}))
    assert len(store) == 1
    assert store.get(record.run_id).label == "renamed"


def test_failed_run_round_trips(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite3")
    record = RunRecord.from_events(failed_events(), index_name="tiny")
    store.save(record)
    got = store.get(record.run_id)
    assert got == record
    assert got.replay().status == "failed"
    assert store.list_runs()[0].status == "failed"


def test_survives_reopen(tmp_path):
    path = tmp_path / "nested" / "runs.sqlite3"
    record = RunRecord.from_events(run_events(), index_name="tiny")
    RunStore(path).save(record)
    reopened = RunStore(path)
    assert reopened.get(record.run_id) == record
    assert reopened.schema_version == SCHEMA_VERSION
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "runs.sqlite3"
    RunStore(path)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="newer"):
        RunStore(path)


def test_not_a_store_file(tmp_path):
    path = tmp_path / "runs.sqlite3"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError):
        RunStore(path)


def test_no_secret_is_stored(tmp_path):
    path = tmp_path / "runs.sqlite3"
    store = RunStore(path)
    record = RunRecord.from_events(run_events(KeyedModel(reply)), index_name="tiny")
    assert record.model == "openai:gpt-test@https://api.example.test/v1"
    store.save(record)
    assert store.list_runs()[0].model == record.model
    blobs = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert SECRET.encode() not in blobs
    assert SECRET not in store.export_json(record.run_id)
    assert SECRET not in record_to_markdown(store.get(record.run_id))


def test_export_json_and_markdown(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite3")
    record = RunRecord.from_events(run_events(), index_name="tiny", label="baseline")
    store.save(record)

    exported = store.export_json(record.run_id)
    assert RunRecord.model_validate_json(exported) == record
    assert json.loads(exported)["events"][0]["kind"] == "run_started"

    report = record_to_markdown(store.get(record.run_id))
    assert report.startswith(f"# Global search run {record.run_id}")
    for heading in ("## Question", "## Settings", "## Status", "## Answer", "## Communities behind the answer",
                    "## Diagnostics", "## Reduce candidates", "## Failed batches"):
        assert heading in report
    assert "What shapes the town?" in report
    assert "The mill and the river shape the town." in report
    assert "| map token budget | 8000 |" in report
    assert "| 1 | 60 | selected |" in report
    assert "**completed**" in report
    assert store.get("missing") is None
    with pytest.raises(KeyError, match="missing"):
        store.export_json("missing")


def test_markdown_of_failed_run_lists_batch_errors(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite3")
    record = RunRecord.from_events(failed_events(), index_name="tiny")
    store.save(record)
    report = record_to_markdown(store.get(record.run_id))
    assert "**failed**" in report
    assert "Every Global Map batch failed." in report
    assert "boom 503" in report
    assert "_The run produced no answer._" in report


def test_concurrent_threads_share_one_file(tmp_path):
    path = tmp_path / "runs.sqlite3"
    records = [RunRecord.from_events(run_events(), index_name=f"i{n}") for n in range(8)]
    errors: list[BaseException] = []

    def save(record):
        try:
            RunStore(path).save(record)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(r,)) for r in records]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(RunStore(path)) == 8


def stopped_run(store: RunStore) -> RunSummary:
    """A run its user stopped after three events, as stored and listed."""
    store.save(RunRecord.from_events([*run_events()[:3], RunFailed(error="stopped", error_type="RunCancelled", cancelled=True)], index_name="tiny"))
    (summary,) = store.list_runs()
    return summary


def test_a_stopped_run_is_stored_cancelled_and_reads_stopped(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite3")
    summary = stopped_run(store)
    assert summary.status == "cancelled" and summary.status is RunStatus.CANCELLED and summary.status.word == "stopped"
    with store._connect() as conn:
        assert conn.execute("SELECT status FROM runs").fetchone()[0] == "cancelled"  # old records keep reading


def test_runs_show_names_the_error_type_of_each_failed_batch(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite3")
    record = RunRecord.from_events(failed_events(), index_name="tiny")
    store.save(record)
    report = record_to_markdown(store.get(record.run_id))
    section = report.split("## Failed batches", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "boom 503" in line]
    assert rows and all("| RetryableModelError |" in row for row in rows)


def test_append_writes_only_the_new_events_and_keeps_the_stored_ones(tmp_path):
    from graphrag_core.history.records import RunSummary as Summary

    store = RunStore(tmp_path / "runs.sqlite3")
    events = run_events()
    created = "2024-01-01T00:00:00+00:00"

    def summary_of(prefix):
        return Summary.of_state(RunState.replay(prefix), index_name="tiny", created_at=created)

    def stored_rows():
        with store._connect() as conn:
            return conn.execute("SELECT seq, rowid, event_json FROM run_events ORDER BY seq").fetchall()

    cuts = [1, 3, len(events) - 1, len(events)]
    since, rows = 0, []
    for cut in cuts:
        written = store.append(summary_of(events[:cut]), events[:cut], since=since)
        assert written == cut - since  # only what is new
        now = stored_rows()
        assert now[: len(rows)] == rows  # the rows written before are the same rows, untouched
        assert store.list_runs()[0].status == ("running" if cut < len(events) else "completed")
        since, rows = cut, now
    state = RunState.replay(events)
    assert store.append(summary_of(events), events, since=len(events), result=state.result) == 0
    assert store.get(state.run_id) == RunRecord.from_events(events, index_name="tiny", created_at=created)


def test_append_after_the_run_was_deleted_writes_it_whole_again(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite3")
    events = run_events()
    summary = RunSummary.of_state(RunState.replay(events[:3]), index_name="tiny", created_at="2024-01-01T00:00:00+00:00")
    store.append(summary, events[:3], since=0)
    assert store.delete(summary.run_id)
    assert store.append(summary, events[:4], since=3) == 4
    assert store.get(summary.run_id).events == events[:4]
