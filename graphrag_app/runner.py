"""Running jobs beside the Streamlit script (a search, a sweep, next an evaluation), and
following them from the script: one runner, :func:`start_job`, for all of them.

A job lives in its own thread with its own asyncio event loop (:func:`start_job`), so a
Streamlit rerun (a click on Stop, a changed widget, leaving the page) never interrupts it:
the next script run finds the :class:`RunHandle` in the session and follows it again.
The page folds the handle's events into a ``RunState`` and redraws at most every
``interval`` seconds, plus once at the end (:func:`follow`).

Invariants:
- the model is built inside the run's own event loop, once per run (an ``AsyncOpenAI``
  client must not outlive its loop);
- the run is in the history from its first event on, and its events are written as they
  stream (batched, see ``graphrag_core.history``), so a killed server leaves it there as
  ``interrupted`` with its finished batches;
- whatever way the run ends (finished, failed, stopped), its events are saved as a
  ``RunRecord`` before ``done`` is set, and a stopped run's events end with
  ``RunFailed(cancelled=True)``.
- no streamlit import here: the worker thread never touches the page.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol
from pathlib import Path

from graphrag_core.cache import MapCache
from graphrag_core.errors import STOPPED_MESSAGE, RunCancelled
from graphrag_core.events import Event, RunFailed, RunFinished
from graphrag_core.index import index_display_name
from graphrag_core.llm.base import ChatModel, model_identity
from graphrag_core.models import Index
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.search import stream_global
from graphrag_core.state import RunState
from graphrag_core.history import RunRecorder
from graphrag_core.history import RunStore
from graphrag_core.sweep import SweepPoint, SweepProgress, SweepResult, SweepSpec, run_sweep

DEFAULT_REDRAW_INTERVAL_S = 0.3
MAX_REDRAW_INTERVAL_S = 1.0
REDRAW_S_PER_BATCH = 0.0006
DEFAULT_POLL_INTERVAL_S = 0.05


@dataclass
class JobHandle:
    """A job in its worker thread (a search, a sweep, an evaluation): how to follow it and how
    to stop it. Every job runs in its own thread with its own event loop (:func:`start_job`), so
    a Streamlit rerun never interrupts it."""

    started_at: float = field(default_factory=time.monotonic)
    error: str | None = None
    error_type: str | None = None
    _done: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _loop: asyncio.AbstractEventLoop | None = None
    _task: asyncio.Future[None] | None = None
    _thread: threading.Thread | None = None

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    @property
    def stopped(self) -> bool:
        """The job ended because Stop was pressed."""
        return self.done and self.error_type == RunCancelled.__name__

    def request_stop(self) -> None:
        """Cancel the job's task (thread-safe; a no-op once the job ended)."""
        self._stop.set()
        loop, task = self._loop, self._task
        if loop is not None and task is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop closed between the check and the call
                pass

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def elapsed(self) -> float:
        """Seconds since the job started (close to the engine's clock for a run's events)."""
        return round(time.monotonic() - self.started_at, 6)


def start_job(
    handle: JobHandle,
    work: Callable[[], Awaitable[None]],
    *,
    name: str,
    on_stopped: Callable[[], None] = lambda: None,
    on_failed: Callable[[BaseException], None] = lambda exc: None,
    on_end: Callable[[], None] = lambda: None,
) -> None:
    """Run ``work()`` in a daemon thread with its own event loop; Stop cancels it.

    Whatever way it ends, ``on_stopped`` (cancelled) or ``on_failed`` (an exception, also put in
    ``handle.error``) runs first, then ``on_end``, then ``handle.done`` becomes true."""

    async def main() -> None:
        handle._loop = asyncio.get_running_loop()
        handle._task = asyncio.ensure_future(work())
        if handle.stop_requested:
            handle._task.cancel()
        try:
            await handle._task
        except asyncio.CancelledError:
            handle.error, handle.error_type = STOPPED_MESSAGE, RunCancelled.__name__
            on_stopped()
        except Exception as exc:  # noqa: BLE001 - the app boundary: any failure becomes a shown error
            handle.error, handle.error_type = str(exc) or type(exc).__name__, type(exc).__name__
            on_failed(exc)

    def thread_main() -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(main())
        finally:
            try:
                on_end()
            finally:
                loop.close()
                handle._done.set()

    thread = threading.Thread(target=thread_main, name=name, daemon=True)
    handle._thread = thread
    thread.start()


@dataclass
class RunHandle(JobHandle):
    """A run in progress in its worker thread: its events so far, and how to stop it."""

    run_id: str = ""
    index_name: str = ""
    index_path: str | None = None
    save_error: str | None = None
    _events: list[Event] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _recorder: RunRecorder | None = None

    def events_since(self, start: int) -> list[Event]:
        with self._lock:
            return self._events[start:]

    def event_count(self) -> int:
        with self._lock:
            return len(self._events)

    def _append(self, event: Event) -> None:
        with self._lock:
            self._events.append(event)
        if self._recorder is not None:  # only the run's own thread appends
            self._recorder(event)


class Followable(Protocol):
    """What :func:`follow` needs of a run: a :class:`RunHandle`, or a test double."""

    @property
    def done(self) -> bool: ...

    def events_since(self, start: int) -> list[Event]: ...

    def elapsed(self) -> float: ...


ModelFactory = Callable[[], ChatModel]


def start_run(
    index: Index,
    request: GlobalSearchRequest,
    model_factory: ModelFactory,
    *,
    store_path: Path | None,
    index_name: str,
    index_path: str | None = None,
    cache_factory: Callable[[], MapCache] | None = None,
    run_id: str | None = None,
) -> RunHandle:
    """Start a run in a daemon thread and return its handle at once."""
    handle = RunHandle(run_id=run_id or uuid.uuid4().hex, index_name=index_name, index_path=index_path)
    handle._recorder = RunRecorder(store_path, index_name=index_name, index_path=index_path) if store_path is not None else None

    async def consume() -> None:
        model = model_factory()
        cache = cache_factory() if cache_factory is not None else None
        async for event in stream_global(index, request, model, cache=cache, run_id=handle.run_id):
            handle._append(event)

    start_job(
        handle,
        consume,
        name=f"graphrag-run-{handle.run_id[:8]}",
        on_stopped=lambda: _end_stopped(handle),
        on_failed=lambda exc: _end_failed(handle, exc),
        on_end=lambda: _save(handle, store_path),
    )
    return handle


@dataclass
class SweepHandle(JobHandle):
    """A sweep in its worker thread: the points finished so far, and the result once it ends.

    A stopped sweep's ``result`` holds the points that finished before Stop (none are lost)."""

    sweep_id: str = ""
    total: int = 0
    result: SweepResult | None = None
    _points: list[SweepPoint] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def points(self) -> list[SweepPoint]:
        with self._lock:
            return list(self._points)


def start_sweep(
    index: Index,
    spec: SweepSpec,
    model_factory: ModelFactory,
    *,
    store_path: Path | None = None,
    index_path: str | None = None,
    cache_factory: Callable[[], MapCache] | None = None,
) -> SweepHandle:
    """Start a sweep in a daemon thread (like :func:`start_run`) and return its handle at once."""
    handle = SweepHandle(sweep_id=uuid.uuid4().hex, total=len(spec))
    model_name = ""

    def on_progress(progress: SweepProgress) -> None:
        with handle._lock:
            handle._points.append(progress.point)

    async def work() -> None:
        nonlocal model_name
        model = model_factory()
        model_name = model_identity(model)
        cache = cache_factory() if cache_factory is not None else None
        store = RunStore(store_path) if store_path is not None else None
        handle.result = await run_sweep(
            index, spec, model, on_progress=on_progress, cache=cache, store=store, index_path=index_path, sweep_id=handle.sweep_id
        )

    def keep_finished_points() -> None:
        points = sorted(handle.points(), key=lambda point: point.index)
        handle.result = SweepResult(
            sweep_id=handle.sweep_id,
            spec=spec,
            index_name=index_display_name(index_path, index),
            model=model_name,
            points=points,
            duration_s=handle.elapsed(),
        )

    start_job(handle, work, name=f"graphrag-sweep-{handle.sweep_id[:8]}", on_stopped=keep_finished_points)
    return handle


def _elapsed(handle: JobHandle) -> float:
    return handle.elapsed()


def _terminal(events: list[Event]) -> bool:
    return bool(events) and isinstance(events[-1], (RunFinished, RunFailed))


def _end_stopped(handle: RunHandle) -> None:
    """A stopped run ends with ``RunFailed(cancelled=True)`` (stream_global's consumer may not see the engine's)."""
    events = handle.events_since(0)
    if events and not _terminal(events):
        at = max(_elapsed(handle), events[-1].at)
        handle._append(RunState.replay(events).stopped(at=at))
    handle.error, handle.error_type = STOPPED_MESSAGE, RunCancelled.__name__


def _end_failed(handle: RunHandle, exc: BaseException) -> None:
    """A run that failed before the engine could report it (e.g. the model could not be built)."""
    events = handle.events_since(0)
    if events and not _terminal(events):
        at = max(_elapsed(handle), events[-1].at)
        handle._append(RunState.replay(events).failure(at=at, error=str(exc) or type(exc).__name__, error_type=type(exc).__name__))


def _save(handle: RunHandle, store_path: Path | None) -> None:
    """The run's final write (its earlier ones happened as its events streamed)."""
    recorder = handle._recorder
    if store_path is None or recorder is None:
        return
    try:
        recorder.close()
    except Exception as exc:  # noqa: BLE001 - a run must end even when its record cannot be written
        recorder.save_error = f"The run could not be saved to {store_path}: {type(exc).__name__}: {exc}"
    handle.save_error = recorder.save_error


class Throttle:
    """``due()`` is true at most once per ``interval`` seconds (and the first time it is asked)."""

    def __init__(self, interval: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self._clock = clock
        self._last: float | None = None

    def due(self) -> bool:
        now = self._clock()
        if self._last is None or now - self._last >= self.interval:
            self._last = now
            return True
        return False


def redraw_interval(state: RunState) -> float:
    """Seconds between live redraws: 0.3 s, longer for big runs (a browser needs longer to draw
    1,000 bars than to receive them), never more than 1 s. While a dynamic selection rates, the
    hierarchy sunburst needs the full second to draw before it is replaced."""
    if state.phase == "selecting" and state.selection.active:
        return MAX_REDRAW_INTERVAL_S
    return min(MAX_REDRAW_INTERVAL_S, max(DEFAULT_REDRAW_INTERVAL_S, REDRAW_S_PER_BATCH * len(state.batches)))


def follow(
    handle: Followable,
    state: RunState,
    render: Callable[[RunState], None],
    *,
    interval: float | Callable[[RunState], float] = redraw_interval,
    poll: float = DEFAULT_POLL_INTERVAL_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> RunState:
    """Fold the handle's new events into ``state`` until the run ends, redrawing at most every
    ``interval`` seconds (a number, or a function of the state) and once more at the end. ``state`` may already hold a prefix of the
    events (a rerun picks up where the last script run stopped following)."""
    throttle = Throttle(interval if isinstance(interval, (int, float)) else DEFAULT_REDRAW_INTERVAL_S, clock=clock)
    while True:
        if not isinstance(interval, (int, float)):
            throttle.interval = interval(state)
        ended = handle.done  # read before draining, so the last events are never missed
        new = handle.events_since(len(state.events))
        for event in new:
            state.apply(event)
        if ended:
            break
        if state.status == "running" and state.phase != "done":
            state.elapsed_s = max(state.elapsed_s, handle.elapsed())
        if throttle.due():
            render(state)
        sleep(poll)
    render(state)
    return state


def run_blocking(
    index: Index,
    request: GlobalSearchRequest,
    model: ChatModel,
    *,
    store_path: Path | None = None,
    index_name: str = "",
    timeout: float | None = None,
) -> tuple[RunHandle, RunState]:
    """Start a run and follow it to the end with no drawing (scripts and tests)."""
    handle = start_run(index, request, lambda: model, store_path=store_path, index_name=index_name)
    if not handle.wait(timeout):
        handle.request_stop()
    state = follow(handle, RunState(), lambda _state: None)
    return handle, state
