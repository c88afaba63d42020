"""Benchmark: what recording a 1,000-batch run costs the run history, write by write.

A scripted run over a synthetic index of ``--batches`` communities (one per map batch, each
prompt about ``--summary-chars`` long, as the events carry every prompt) is recorded by a
``RunRecorder`` the way the app and the command line record it: at its start, then once a
"second" (a clock that advances ``--event-s`` per event, so a write every few batches), and at
its end. Prints the writes, their total, mean and slowest time, a write's cost early and late in
the run, and the history's size.

Only the public recorder and store are used, so the same script measures another checkout:

    python benchmarks/bench_history_flush.py [--batches 1000] [--summary-chars 4000] [--event-s 0.05]
    PYTHONPATH=/path/to/other/checkout python benchmarks/bench_history_flush.py
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from graphrag_core import Community, GlobalSearchRequest, Index, ScriptedChatModel, retrieve_global
from graphrag_core.events import Event
from graphrag_core.history import RunRecorder, RunStore

MAP_REPLY = '{"answer": "One point of this community.", "usefulness": 40}'


def synthetic_index(batches: int, summary_chars: int) -> Index:
    words = ("mill river harbour festival levee flood jazz farmer " * (summary_chars // 48 + 1))[:summary_chars]
    communities = [Community(id="root", level=0, summary="Everything.")]
    communities += [Community(id=f"c{i}", level=1, parent_id="root", summary=f"Community {i}: {words}") for i in range(batches)]
    return Index(communities=communities, name="synthetic")


def run_events(batches: int, summary_chars: int) -> list[Event]:
    index = synthetic_index(batches, summary_chars)
    budget = summary_chars // 4 + 900  # one summary per batch with the prompt around it
    request = GlobalSearchRequest(query="What matters here?", seed=1, map_token_budget=budget, map_output_reserve=0, map_concurrency=8)
    events: list[Event] = []
    model = ScriptedChatModel(lambda r: MAP_REPLY if r.purpose == "map" else '{"answer": "The answer."}')
    asyncio.run(retrieve_global(index, request, model, on_event=events.append))
    return events


class TimedStore(RunStore):
    """The store, timing each write the recorder makes (whole saves and appends alike)."""

    writes: list[float]

    def _timed(self, write, *args, **kwargs):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return write(*args, **kwargs)
        finally:
            self.writes.append(time.perf_counter() - started)

    def save(self, record):  # type: ignore[no-untyped-def]
        return self._timed(super().save, record)

    def append(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return self._timed(super().append, *args, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=1000)
    parser.add_argument("--summary-chars", type=int, default=4000)
    parser.add_argument("--event-s", type=float, default=0.05, help="run-clock seconds per event (a write every 1 s)")
    args = parser.parse_args()
    events = run_events(args.batches, args.summary_chars)
    with tempfile.TemporaryDirectory() as folder:
        store = TimedStore(Path(folder) / "runs.sqlite3")
        store.writes = []
        now = [0.0]
        recorder = RunRecorder(store, index_name="synthetic", clock=lambda: now[0])
        started = time.perf_counter()
        for event in events:
            now[0] += args.event_s
            recorder(event)
        recorder.close()
        total = time.perf_counter() - started
        assert recorder.save_error is None, recorder.save_error
        size = sum(p.stat().st_size for p in Path(folder).iterdir())
        writes = store.writes
    batches = sum(1 for e in events if type(e).__name__ == "MapBatchSucceeded")
    print(f"run: {batches:,} map batches, {len(events):,} events")
    print(
        f"recording: {len(writes)} writes, {sum(writes):.2f} s writing ({total:.2f} s with the recorder's own work), "
        f"mean {sum(writes) / len(writes) * 1000:.1f} ms, slowest {max(writes) * 1000:.1f} ms, last {writes[-1] * 1000:.1f} ms"
    )
    tenth = max(1, len(writes) // 10)
    print(
        f"a write in the run's first tenth: {sum(writes[:tenth]) / tenth * 1000:.1f} ms, in its last tenth: "
        f"{sum(writes[-tenth:]) / tenth * 1000:.1f} ms (flat when a write costs what is new, growing when it rewrites the run)"
    )
    print(f"history file: {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
