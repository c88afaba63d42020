"""Background jobs beside the Streamlit script (a search, a sweep, an evaluation, a question set,
a model check), and the one way a page follows one: :func:`follow`.

Every job lives in its own daemon thread with its own asyncio event loop (:func:`start_job`), so
a Streamlit rerun (a click on Stop, a changed widget, leaving the page) never interrupts it: the
next script run finds the handle in the page's state and follows it again. A handle says whether
it is ``done`` and what it has made so far (``progress``); :func:`follow` polls that, redraws at
most every ``interval`` seconds, and once more at the end.

Invariants:
- models are built inside the job's own event loop, once per job (an ``AsyncOpenAI`` client must
  not outlive its loop), and no coroutine runs on the script thread;
- a run is in the history from its first event on, and its events are written as they stream
  (see ``graphrag_core.history``), so a killed server leaves it there as ``interrupted`` with its
  finished batches; whatever way a run ends (finished, failed, stopped), its events are saved
  before ``done`` is set, and a stopped run's events end with ``RunFailed(cancelled=True)``;
- no streamlit import here: a worker thread never touches the page.

A job reads the map cache through :func:`cache_factory` (one opened per job, in its worker), or
writes it without reading it for a fresh run (:class:`FreshCache`).

Why this module is long: every kind of job (a run, a sweep, an evaluation, a question set, a
model check) starts the one way (:func:`start_job`) and is followed the one way
(:func:`follow`); keeping each kind's handle beside that one contract keeps it one contract.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from graphrag_core.cache import MapCache, open_map_cache
from graphrag_core.errors import STOPPED_MESSAGE, RunCancelled
from graphrag_core.evaluation import EvalProgress, EvaluationStore, ExperimentResult, ExperimentSpec, generate_questions, run_experiment
from graphrag_core.evaluation.questions import EvalQuestion
from graphrag_core.events import Event, RunFailed, RunFinished
from graphrag_core.history import RunRecorder, RunStore
from graphrag_core.index import index_display_name
from graphrag_core.llm.base import ChatModel, model_identity
from graphrag_core.llm.embeddings import EmbeddingModel
from graphrag_core.models import Index
from graphrag_core.preflight import Preflight
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.search import stream_global
from graphrag_core.state import RunState
from graphrag_core.status import RunStatus
from graphrag_core.sweep import SweepPoint, SweepProgress, SweepResult, SweepSpec, run_sweep

DEFAULT_REDRAW_INTERVAL_S = 0.5
MAX_REDRAW_INTERVAL_S = 1.0
REDRAW_S_PER_BATCH = 0.0006
DEFAULT_POLL_INTERVAL_S = 0.05

P = TypeVar("P")
ModelFactory = Callable[[], ChatModel]


# -- the one job -------------------------------------------------------------------------------


@dataclass(kw_only=True)
class JobHandle:
    """A job in its worker thread: whether it ended, how (``cancelled``, ``error``), and how to
    stop it. Subclasses add what the job makes and how a page reads it so far (``progress``)."""

    started_at: float = field(default_factory=time.monotonic)
    error: str | None = None
    error_type: str | None = None
    failure: BaseException | None = None  # the exception it ended with (None: finished or stopped)
    cancelled: bool = False  # it ended because Stop was pressed
    _done: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _loop: asyncio.AbstractEventLoop | None = None
    _task: asyncio.Future[None] | None = None

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    @property
    def stopped(self) -> bool:
        """The job ended because Stop was pressed."""
        return self.done and self.cancelled

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
            handle.cancelled = True
            handle.error, handle.error_type = STOPPED_MESSAGE, RunCancelled.__name__
            on_stopped()
        except Exception as exc:  # noqa: BLE001 - the app boundary: any failure becomes a shown error
            handle.failure = exc
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

    threading.Thread(target=thread_main, name=name, daemon=True).start()


class Followable(Protocol[P]):
    """What :func:`follow` needs of a job: whether it ended, and what it has made so far given
    what the page has already seen (a run folds its new events into the page's state)."""

    @property
    def done(self) -> bool: ...
    def progress(self, seen: P) -> P: ...


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


def follow(
    job: Followable[P],
    seen: P,
    render: Callable[[P], None],
    *,
    interval: float | Callable[[P], float] = DEFAULT_REDRAW_INTERVAL_S,
    poll: float = DEFAULT_POLL_INTERVAL_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> P:
    """Follow ``job`` until it ends: read its progress every ``poll`` seconds, ``render`` it at
    most every ``interval`` seconds (a number, or a function of the progress) and once more at
    the end; return the last progress. ``seen`` is what the page already has (a rerun picks up
    where the last script run stopped following)."""
    throttle = Throttle(interval if isinstance(interval, (int, float)) else DEFAULT_REDRAW_INTERVAL_S, clock=clock)
    while True:
        if not isinstance(interval, (int, float)):
            throttle.interval = interval(seen)
        ended = job.done  # read before catching up, so the last of its work is never missed
        seen = job.progress(seen)
        if ended:
            break
        if throttle.due():
            render(seen)
        sleep(poll)
    render(seen)
    return seen


# -- a run -------------------------------------------------------------------------------------


class EventSource(Protocol):
    """A run's events as they come (a :class:`RunHandle`, or a test double)."""

    def events_since(self, start: int) -> list[Event]: ...
    def elapsed(self) -> float: ...


def fold_new(source: EventSource, state: RunState) -> RunState:
    """Fold the events ``state`` has not seen into it, and keep its clock running while it runs."""
    for event in source.events_since(len(state.events)):
        state.apply(event)
    if state.status == RunStatus.RUNNING and state.phase != "done":
        state.elapsed_s = max(state.elapsed_s, source.elapsed())
    return state


@dataclass(kw_only=True)
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

    def progress(self, seen: RunState) -> RunState:
        return fold_new(self, seen)

    def _append(self, event: Event) -> None:
        with self._lock:
            self._events.append(event)
        if self._recorder is not None:  # only the run's own thread appends
            self._recorder(event)


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
    embedder_factory: Callable[[], EmbeddingModel | None] | None = None,
) -> RunHandle:
    """Start a run in a daemon thread and return its handle at once (``embedder_factory`` builds
    the embedding model a ``vector`` run ranks chunks with, inside the job)."""
    handle = RunHandle(run_id=run_id or uuid.uuid4().hex, index_name=index_name, index_path=index_path)
    handle._recorder = RunRecorder(store_path, index_name=index_name, index_path=index_path) if store_path is not None else None

    async def consume() -> None:
        model = model_factory()
        cache = cache_factory() if cache_factory is not None else None
        embedder = embedder_factory() if embedder_factory is not None else None
        async for event in stream_global(index, request, model, cache=cache, run_id=handle.run_id, embedder=embedder):
            handle._append(event)

    start_run_job(handle, consume, store_path, name=f"graphrag-run-{handle.run_id[:8]}")
    return handle


def start_run_job(handle: RunHandle, work: Callable[[], Awaitable[None]], store_path: Path | None, *, name: str) -> None:
    """Run ``work`` as the run's job: however it ends, its events end the run, then it is saved."""
    start_job(
        handle,
        work,
        name=name,
        on_stopped=lambda: _end(handle, lambda state, at: state.stopped(at=at)),
        on_failed=lambda exc: _end(handle, lambda state, at: state.failure(at=at, error=str(exc) or type(exc).__name__, error_type=type(exc).__name__)),
        on_end=lambda: _save(handle, store_path),
    )


def _end(handle: RunHandle, ending: Callable[[RunState, float], RunFailed]) -> None:
    """End the run's events with the ``RunFailed`` that ``ending`` makes of its state, when the
    engine could not (the consumer of ``stream_global`` may not see the engine's own, and a model
    that cannot be built raises first)."""
    events = handle.events_since(0)
    if events and not isinstance(events[-1], (RunFinished, RunFailed)):
        handle._append(ending(RunState.replay(events), max(handle.elapsed(), events[-1].at)))


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


def redraw_interval(state: RunState) -> float:
    """Seconds between a live run's redraws: 0.5 s (two drawings a second keep up with the calls
    without asking a busy browser for more), longer for big runs (a browser needs longer to draw
    1,000 bars than to receive them), never more than 1 s. While a dynamic selection rates,
    the hierarchy sunburst needs the full second to draw before it is replaced."""
    if state.phase == "selecting" and state.selection.active:
        return MAX_REDRAW_INTERVAL_S
    return min(MAX_REDRAW_INTERVAL_S, max(DEFAULT_REDRAW_INTERVAL_S, REDRAW_S_PER_BATCH * len(state.batches)))


def run_blocking(
    index: Index, request: GlobalSearchRequest, model: ChatModel, *, store_path: Path | None = None, index_name: str = "", timeout: float | None = None
) -> tuple[RunHandle, RunState]:
    """Start a run and follow it to the end with no drawing (scripts and tests)."""
    handle = start_run(index, request, lambda: model, store_path=store_path, index_name=index_name)
    if not handle.wait(timeout):
        handle.request_stop()
    state = follow(handle, RunState(), lambda _state: None)
    return handle, state


# -- a sweep -----------------------------------------------------------------------------------


@dataclass(kw_only=True)
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

    def progress(self, seen: list[SweepPoint]) -> list[SweepPoint]:
        return self.points()


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
        handle.result = SweepResult(
            sweep_id=handle.sweep_id,
            spec=spec,
            index_name=index_display_name(index_path, index),
            model=model_name,
            points=sorted(handle.points(), key=lambda point: point.index),
            duration_s=handle.elapsed(),
        )

    start_job(handle, work, name=f"graphrag-sweep-{handle.sweep_id[:8]}", on_stopped=keep_finished_points)
    return handle


# -- an evaluation, and a question set for one --------------------------------------------------


@dataclass(kw_only=True)
class EvalJob(JobHandle):
    """An experiment in progress: its latest progress per stage, its result or error, and a
    graceful Stop. Everything it makes is in the evaluation store as it comes, so starting the
    same experiment again resumes it."""

    spec: ExperimentSpec
    result: ExperimentResult | None = None
    _progress: dict[str, EvalProgress] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def request_stop(self) -> None:
        """Ask the experiment to end after the item in hand (it keeps what it made: no cancel)."""
        self._stop.set()

    def snapshot(self) -> dict[str, EvalProgress]:
        with self._lock:
            return dict(self._progress)

    def progress(self, seen: dict[str, EvalProgress]) -> dict[str, EvalProgress]:
        return self.snapshot()

    def _on_progress(self, progress: EvalProgress) -> None:
        with self._lock:
            self._progress[progress.stage] = progress


def start_evaluation(
    index: Index,
    spec: ExperimentSpec,
    model_factory: ModelFactory,
    judge_factory: ModelFactory,
    *,
    eval_store_path: Path,
    run_store_path: Path | None,
    cache_factory: Callable[[], MapCache] | None = None,
    index_path: str | None = None,
    embedder_factory: Callable[[], EmbeddingModel | None] | None = None,
) -> EvalJob:
    """Start an experiment in a daemon thread and return its job at once."""
    job = EvalJob(spec=spec)

    async def work() -> None:
        model, judge = model_factory(), judge_factory()
        embedder = embedder_factory() if embedder_factory is not None else None
        job.result = await run_experiment(
            index,
            spec,
            model,
            judge,
            store=EvaluationStore(eval_store_path),
            cache=cache_factory() if cache_factory is not None else None,
            run_store=RunStore(run_store_path) if run_store_path is not None else None,
            index_path=index_path,
            on_progress=job._on_progress,
            should_stop=lambda: job.stop_requested,
            embedder=embedder,
        )

    def failed(exc: BaseException) -> None:
        job.error = f"{type(exc).__name__}: {exc}"

    start_job(job, work, name="graphrag-eval", on_failed=failed)
    return job


@dataclass(kw_only=True)
class QuestionsJob(JobHandle):
    """A question set being generated from an index (personas, their tasks, questions per task)."""

    questions: list[EvalQuestion] | None = None

    def progress(self, seen: None) -> None:
        return None


def start_question_generation(index: Index, model_factory: ModelFactory, *, personas: int, tasks: int, per_task: int) -> QuestionsJob:
    """Start generating a question set in a daemon thread and return its job at once."""
    job = QuestionsJob()

    async def work() -> None:
        job.questions = await generate_questions(index, model_factory(), personas, tasks, per_task)

    start_job(job, work, name="graphrag-questions")
    return job


# -- the map cache a job reads ---------------------------------------------------------------


class FreshCache:
    """A map cache that is written but never read: a fresh run calls the model for every batch
    (a rehearsed question streams again) and leaves its answers for the next run."""

    def __init__(self, inner: MapCache) -> None:
        self.inner = inner
        self.path = getattr(inner, "path", None)  # named when the cache fails

    def get(self, key: str) -> str | None:
        return None

    def put(self, key: str, text: str) -> None:
        self.inner.put(key, text)


def cache_factory(path: Path | None, *, use: bool = True, fresh: bool = False) -> Callable[[], MapCache] | None:
    """The map cache at ``path`` a job opens in its worker, or None when it is off (no path:
    off by setting; or ``use=False``); ``fresh`` writes it without reading it."""
    if path is None or not use:
        return None
    if fresh:  # a file that cannot be opened: the run says so once and goes on
        return lambda: FreshCache(open_map_cache(path))
    return lambda: open_map_cache(path)


# -- a model's check ---------------------------------------------------------------------------


def check_model(model: ChatModel, *, checks: Preflight) -> None:
    """The engine's preflight of ``model`` through ``checks`` (no tokens spent; skipped when the
    endpoint passed lately), run as a job and waited for: raises its ``PreflightError`` naming
    the endpoint when the model cannot be called."""
    job = JobHandle()

    async def work() -> None:
        await checks.check(model)

    start_job(job, work, name="graphrag-preflight")
    job.wait()
    if job.failure is not None:
        raise job.failure


__all__ = [
    "DEFAULT_POLL_INTERVAL_S", "DEFAULT_REDRAW_INTERVAL_S", "MAX_REDRAW_INTERVAL_S", "EvalJob", "EventSource", "Followable",
    "FreshCache", "JobHandle", "QuestionsJob", "RunHandle", "SweepHandle", "Throttle", "cache_factory", "check_model", "fold_new", "follow", "redraw_interval",
    "run_blocking", "start_evaluation", "start_job", "start_question_generation", "start_run", "start_run_job", "start_sweep",
]
