"""Runs a page follows live: the runs this process is running (so a reload or a second tab
attaches to one), a stopped run going on to answer from what it read, and recorded runs played
back through the same live view.

No streamlit here: the app holds one :class:`LiveRuns` (``run_controls.live_runs``), and a page
follows a :class:`ReplayHandle` exactly as it follows a :class:`~graphrag_app.jobs.RunHandle`
(both are event sources with ``done``, ``progress`` and ``request_stop``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pathlib import Path

from graphrag_core.events import Event, RunStarted
from graphrag_core.history import RunRecord, RunRecorder
from graphrag_core.models import Index
from graphrag_core.search import answer_from_read
from graphrag_core.state import RunState

from .jobs import JobHandle, ModelFactory, RunHandle, fold_new, start_run_job


@dataclass(kw_only=True)
class ReplayHandle(JobHandle):
    """A recorded run played back on the live view at ``speed`` times its recorded pace: its
    events are released as the run's clock reaches their times. No model, no cache, and
    nothing is recorded. Stop ends the playback at once with every event released (the run is
    then shown whole, as recorded)."""

    run_id: str = ""
    speed: float = 1.0
    _events: list[Event] = field(default_factory=list)
    _clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.started_at = self._clock()

    def _released(self) -> int:
        if self.stop_requested:
            return len(self._events)
        now, count = self.elapsed(), 0
        while count < len(self._events) and self._events[count].at <= now:
            count += 1
        return count

    @property
    def done(self) -> bool:
        return self._released() == len(self._events)

    def request_stop(self) -> None:
        self._stop.set()

    def elapsed(self) -> float:
        """The recorded run's clock: seconds of the run played so far."""
        return (self._clock() - self.started_at) * self.speed

    def events_since(self, start: int) -> list[Event]:
        return self._events[start : self._released()]

    def progress(self, seen: RunState) -> RunState:
        return fold_new(self, seen)


def replay_run(events: list[Event], *, speed: float = 1.0, clock: Callable[[], float] = time.monotonic) -> ReplayHandle:
    """Play ``events`` (a stored run's, or a bundle's) back from now at ``speed`` (> 0)."""
    if not speed > 0:
        raise ValueError(f"The replay speed must be above 0 (got {speed:g}).")
    return ReplayHandle(run_id=next((e.run_id for e in events if isinstance(e, RunStarted)), ""), speed=speed, _events=list(events), _clock=clock)


LiveHandle = RunHandle | ReplayHandle


@dataclass(frozen=True)
class LiveRun:
    """A run in progress in this process, and the index key its page opened it with."""

    handle: LiveHandle
    index_key: str


class LiveRuns:
    """The runs this process is running, by run id, so a reload or the run's link in a second
    tab attaches to the run itself (and can stop it) instead of a snapshot of the history.
    Replays are not listed: a replay belongs to the page that plays it. A run leaves the list
    when it ends (the history then holds all of it). Thread-safe; the app holds one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, LiveRun] = {}

    def add(self, handle: RunHandle, *, index_key: str) -> None:
        with self._lock:
            self._runs = {run_id: run for run_id, run in self._runs.items() if not run.handle.done}
            self._runs[handle.run_id] = LiveRun(handle, index_key)

    def get(self, run_id: str) -> LiveRun | None:
        """The run ``run_id`` while it runs in this process, else None."""
        with self._lock:
            run = self._runs.get(run_id)
        return run if run is not None and not run.handle.done else None


def start_partial_answer(index: Index, record: RunRecord, model_factory: ModelFactory, *, store_path: Path | None) -> RunHandle:
    """Go on with a stopped run in a daemon thread: a reduce over what it read
    (:func:`~graphrag_core.search.answer_from_read`), its events appended to the same run in the
    history. The handle holds the run's earlier events too, so a page following the run picks
    up where its drawing stopped; Stop cancels the reduce (the run then ends stopped again)."""
    handle = RunHandle(run_id=record.run_id, index_name=record.index_name, index_path=record.index_path, _events=list(record.events))
    handle.started_at -= record.replay().elapsed_s  # the run's clock goes on
    handle._recorder = RunRecorder.resuming(store_path, record) if store_path is not None else None
    earlier = list(record.events)

    async def consume() -> None:
        await answer_from_read(index, earlier, model_factory(), on_event=handle._append)

    start_run_job(handle, consume, store_path, name=f"graphrag-partial-{handle.run_id[:8]}")
    return handle


__all__ = ["LiveHandle", "LiveRun", "LiveRuns", "ReplayHandle", "replay_run", "start_partial_answer"]
