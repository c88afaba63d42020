"""Nothing computed is lost: a run is in the history from its start, its events are written as
they stream (each write appends only the new ones), and a killed process leaves it there as
``interrupted``."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from graphrag_app.jobs import start_run
from graphrag_cli.context import EXIT_INTERRUPTED
from graphrag_cli.main import main
from graphrag_core.llm.base import ChatRequest
from graphrag_core.llm.scripted import ScriptedChatModel
from graphrag_core.history.recorder import RunRecorder
from graphrag_core.history.store import RunStore
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.search import retrieve_global
from graphrag_core.report import record_to_markdown
from graphrag_core.status import RunStatus

from . import APP_ROOT, wait_until
from .factories import small_index

DEADLINE_S = 120
MAP = '{"answer": "A point.", "usefulness": 50}'


def record_a_run(tmp_path: Path) -> tuple[RunStore, RunRecorder, list[tuple[int, int]]]:
    """A run recorded on a clock that advances 0.3 s an event (a write every few events), with
    each write's (events the recorder held, events it wrote)."""
    store = RunStore(tmp_path / "runs.sqlite3")
    now = [0.0]
    recorder = RunRecorder(store, index_name="small", interval=1.0, clock=lambda: now[0])
    appended: list[tuple[int, int]] = []
    original = store.append

    def spied(summary, events, **kw):  # type: ignore[no-untyped-def]
        written = original(summary, events, **kw)
        appended.append((len(events), written))
        return written

    store.append = spied  # type: ignore[method-assign]
    request = GlobalSearchRequest(query="What matters?", seed=1, map_token_budget=700, map_output_reserve=0)

    def on_event(event):  # type: ignore[no-untyped-def]
        now[0] += 0.3
        recorder(event)

    asyncio.run(retrieve_global(small_index(), request, ScriptedChatModel(MAP), on_event=on_event))
    recorder.close()
    return store, recorder, appended


def test_recorder_writes_at_start_batched_and_at_the_end(tmp_path: Path) -> None:
    store, recorder, appended = record_a_run(tmp_path)
    writes = [held for held, _ in appended]  # how many events the store holds after each write
    assert writes[0] == 1  # RunStarted is written at once
    assert len(writes) < len(recorder.events)  # batched
    assert writes[-1] == len(recorder.events)
    record = store.get(recorder.saved_run_id or "")
    assert record is not None and record.status == "completed" and len(record.events) == len(recorder.events)


def test_each_write_appends_only_the_events_not_written_yet(tmp_path: Path) -> None:
    store, recorder, appended = record_a_run(tmp_path)
    assert len(appended) > 2
    assert sum(written for _, written in appended) == len(recorder.events)  # no event is written twice
    assert [written for _, written in appended] == [held - before for (held, _), before in zip(appended, [0] + [h for h, _ in appended])]
    assert store.get(recorder.saved_run_id or "").events == recorder.events  # type: ignore[union-attr]


def test_a_running_run_is_in_the_history_before_it_ends(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    gate = threading.Event()

    async def slow(request: ChatRequest) -> str:
        while not gate.is_set():
            await asyncio.sleep(0.01)
        return MAP

    request = GlobalSearchRequest(query="What matters?", seed=1)
    handle = start_run(small_index(), request, lambda: ScriptedChatModel(slow), store_path=db, index_name="small")
    try:
        record = wait_until(lambda: RunStore(db).get(handle.run_id), "the run to be stored", pause_s=0.05)
        assert record.status == "running" and RunStore(db).list_runs()[0].status == "running"
    finally:
        gate.set()
    assert handle.wait(DEADLINE_S)
    assert RunStore(db).get(handle.run_id).status == "completed"  # type: ignore[union-attr]


def test_a_killed_process_leaves_an_interrupted_run_with_its_finished_batches(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    env = {
        **os.environ,
        "PYTHONPATH": str(APP_ROOT),
        "GRAPHRAG_EXPLORER_DB": str(db),
        "GRAPHRAG_EXPLORER_CACHE": "off",
        "GRAPHRAG_LLM_PROVIDER": "offline",
        "GRAPHRAG_LLM_OFFLINE_LATENCY": "0.2,0.3",
    }
    command = [sys.executable, "-m", "graphrag_core", "query", "jargon", "What do hackers think?", "--map-budget", "900", "--map-reserve", "0", "--concurrency", "2", "--seed", "4"]
    process = subprocess.Popen(command, cwd=APP_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:

        def progressed():  # type: ignore[no-untyped-def]
            if not db.exists():
                return None
            runs = RunStore(db).list_runs()
            if not runs:
                return None
            record = RunStore(db).get(runs[0].run_id)
            return record if record is not None and record.replay().finished_batches >= 2 else None

        wait_until(progressed, "finished batches in the history", pause_s=0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(30)
    store = RunStore(db)
    [summary] = store.list_runs()
    assert summary.status == "interrupted"
    record = store.get(summary.run_id)
    assert record is not None and record.status == "interrupted"
    state = record.replay()
    assert 2 <= state.finished_batches < len(state.batches)
    assert state.status is RunStatus.INTERRUPTED and state.error_type == "RunInterrupted"
    assert "interrupted" in (state.error or "")
    assert "**interrupted**" in record_to_markdown(record)


def test_ctrl_c_records_the_run_as_interrupted(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    calls = []

    def script(request: ChatRequest):  # type: ignore[no-untyped-def]
        calls.append(request)
        return KeyboardInterrupt() if len(calls) > 2 else MAP

    db = tmp_path / "runs.sqlite3"
    code = main(
        ["query", "jargon", "What?", "--store", str(db), "--no-cache", "--map-budget", "900", "--map-reserve", "0", "--concurrency", "1"],
        model=ScriptedChatModel(script),
        environ={},
    )
    err = capsys.readouterr().err
    assert code == EXIT_INTERRUPTED and "recorded with its finished batches" in err
    [summary] = RunStore(db).list_runs()
    assert summary.status == "cancelled"  # the engine saw the interruption and said so
    record = RunStore(db).get(summary.run_id)
    assert record is not None and sum(b.status == "done" for b in record.replay().batches) == 2


@pytest.mark.parametrize("out_name", ["points.csv", "points.json", None])
def test_sweep_ctrl_c_writes_the_finished_points_then_exits_130(capsys: pytest.CaptureFixture[str], tmp_path: Path, out_name: str | None) -> None:
    calls = []

    def script(request: ChatRequest):  # type: ignore[no-untyped-def]
        calls.append(request)
        if request.purpose == "reduce" and sum(r.purpose == "reduce" for r in calls) == 3:
            return KeyboardInterrupt()
        return MAP

    argv = ["sweep", "jargon", "What?", "--seeds", "1,2,3,4", "--no-store", "--no-cache", "-q"]
    out = tmp_path / out_name if out_name else None
    if out is not None:
        argv += ["--out", str(out)]
    code = main(argv, model=ScriptedChatModel(script), environ={})
    captured = capsys.readouterr()
    assert code == EXIT_INTERRUPTED
    text = out.read_text(encoding="utf-8") if out is not None else captured.out
    if out_name and out_name.endswith(".json"):
        import json

        document = json.loads(text)
        assert [p["seed"] for p in document["points"]] == [1, 2]
    else:
        lines = text.strip().splitlines()
        assert len(lines) == 3 and lines[0].startswith("point,")  # the header and two points
    assert "interrupted after 2 of 4 sweep points" in captured.err


BUSY_SCRIPT = """
import sys, time
from graphrag_cli.main import main
from graphrag_core.llm.scripted import ScriptedChatModel

def busy(request):
    print("started", file=sys.stderr, flush=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # CPU-bound, never awaits
        pass
    print("BUSY-DONE", file=sys.stderr, flush=True)
    return '{"answer": "A point.", "usefulness": 50}'

sys.exit(main(["query", "jargon", "What?", "--store", sys.argv[1], "--no-cache"], model=ScriptedChatModel(busy), environ={}))
"""


def test_ctrl_c_interrupts_cpu_bound_work_at_once(tmp_path: Path) -> None:
    """The first Ctrl-C stops the command even while it computes without awaiting (as when
    planning the batches of a huge index); asyncio's own handling would wait for an await."""
    db = tmp_path / "runs.sqlite3"
    process = subprocess.Popen(
        [sys.executable, "-c", BUSY_SCRIPT, str(db)], cwd=APP_ROOT, env={**os.environ, "PYTHONPATH": str(APP_ROOT)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        lines.append(line)
        if line.strip() == "started":
            process.send_signal(signal.SIGINT)
            break
    rest = process.stderr.read()
    assert process.wait(120) == EXIT_INTERRUPTED
    assert "BUSY-DONE" not in rest and "interrupted" in rest
    assert "Traceback" not in rest and "never retrieved" not in rest
    [summary] = RunStore(db).list_runs()
    assert summary.status in ("cancelled", "interrupted")


def test_a_run_left_running_by_another_host_is_interrupted_once_stale(tmp_path: Path) -> None:
    from datetime import datetime, timedelta, timezone

    from graphrag_core.history import liveness as store_module

    events: list = []
    asyncio.run(retrieve_global(small_index(), GlobalSearchRequest(query="q", seed=1), ScriptedChatModel(MAP), on_event=events.append))
    store = RunStore(tmp_path / "runs.sqlite3")
    running = events[:3]
    fresh = RunRecorder(store, index_name="small")
    for event in running:
        fresh(event)
    assert store.list_runs()[0].status == "running"  # this process is alive
    with store._connect() as conn:
        conn.execute("UPDATE runs SET writer = 'another-host:1:1'")
    assert store.list_runs()[0].status == "running"  # recent: it may still be running there
    old = (datetime.now(timezone.utc) - timedelta(seconds=store_module.STALE_RUN_S + 60)).isoformat(timespec="seconds")
    with store._connect() as conn:
        conn.execute("UPDATE runs SET created_at = ?", (old,))
    assert store.list_runs()[0].status == "interrupted"
    assert store.get(fresh.saved_run_id or "").status == "interrupted"  # type: ignore[union-attr]
