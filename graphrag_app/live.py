"""The run a browser session shows, and how a run comes to be shown: opened from the history, or
attached to live while this process runs it (a reload, the run's link in another tab, a run
link on any page, Provenance's Back), replayed from its events, or going on to answer from what
it read; and the runs this process is running.

:class:`ShownRun` is that run in this session (Explore draws it; Provenance reads it; any page
may open a run into it with :func:`open_run`, then switch to Explore), with the settings it was
shown with and what Explore says on its next drawing. A page follows a :class:`ReplayHandle`
exactly as it follows a :class:`~graphrag_app.jobs.RunHandle` (both are event sources with
``done``, ``progress`` and ``request_stop``); the handles and :class:`LiveRuns` never touch the
page, so a worker thread may hold them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pathlib import Path
from typing import ClassVar

import streamlit as st

from graphrag_core.events import Event, RunStarted
from graphrag_core.history import RunRecord, RunRecorder, RunStore, StoreError
from graphrag_core.models import Index
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.search import answer_from_read
from graphrag_core.state import RunState
from graphrag_core.support.models import SupportCheck

from .jobs import JobHandle, ModelFactory, RunHandle, fold_new, start_run_job
from .session import PageState
from .settings import AppSettings
from .urls import RunSettings, index_param


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


@st.cache_resource(show_spinner=False)
def live_runs() -> LiveRuns:
    """The runs this process is running (shared by every session): what a reload attaches to."""
    return LiveRuns()


# -- the run a session shows -----------------------------------------------------------------------


@dataclass
class RunView:
    """The run a session shows: live (``handle`` set: a run in this process, or a replay when
    ``replay_speed`` is set) or finished/reopened."""

    run_id: str
    state: RunState
    index_key: str
    handle: LiveHandle | None = None
    reveal_answer: bool = False
    """Set when a live run ends: the next drawing scrolls its answer into view, once."""
    replay_speed: float | None = None
    """The speed of the replay being played (None: a run, or a replay that ended)."""
    end_drawn: bool = False
    """The live view has drawn the run's end (its answer); the next tick draws the page whole."""
    timeline: object | None = None
    """The call timeline the live view drew last (a Plotly figure), drawn again unchanged until
    it is due (``live_view.TIMELINE_REDRAW_S``)."""
    timeline_key: tuple[float, int] | None = None
    """When that timeline was drawn (the script's clock) and at what height."""
    support: SupportCheck | None = None
    """The run's support check: the stored one of a reopened or replayed run, or the one Explore
    made once the run ended (None: none made)."""
    support_failed: str | None = None
    """The judge whose check of this run could not be made (it is not tried again for this view)."""
    usefulness: object | None = None
    """The usefulness chart the live view drew last (a Plotly figure), drawn again unchanged on
    a tick that builds the timeline anew (``live_view.live_usefulness``)."""

    @property
    def live(self) -> bool:
        return self.handle is not None


@dataclass
class ShownRun(PageState):
    """The run this session shows on Explore, the settings it was last shown with, and the
    messages queued for Explore's next drawing (callbacks run before the script, on any page,
    and leave their errors and notices here)."""

    KEY: ClassVar[str] = "graphrag_explorer"

    settings: RunSettings | None = None
    view: RunView | None = None
    notices: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    widgets_stale: bool = False
    """The settings changed under Explore's widgets (a run was opened): Explore puts them back
    into its widgets before it draws them."""

    @property
    def running(self) -> bool:
        return self.view is not None and self.view.handle is not None and not self.view.handle.done


def stored_run(shown: ShownRun, run_id: str, *, app: AppSettings) -> RunRecord | None:
    """The stored run ``run_id``, or None with the reason queued for Explore."""
    try:
        record = RunStore(app.store_path).get(run_id)
    except StoreError as exc:  # its message names the file and what is wrong with it
        shown.errors.append(str(exc))
        return None
    except Exception as exc:  # noqa: BLE001 - page boundary: a broken store must not break the page
        shown.errors.append(f"The run history at {app.store_path} could not be read ({type(exc).__name__}): {exc}")
        return None
    if record is None:
        shown.notices.append(f"Run {run_id} is not in this app's run history; the settings from the link are filled in.")
    return record


def _show_settings(shown: ShownRun, request: GlobalSearchRequest, seed: int | None, key: str, *, set_widgets: bool) -> None:
    shown.settings = RunSettings.from_request(request, index=key, seed=seed, base=shown.settings or RunSettings())
    shown.widgets_stale = shown.widgets_stale or set_widgets


def open_run(shown: ShownRun, run_id: str, *, app: AppSettings, set_widgets: bool = True) -> bool:
    """Show a run: followed live when this process is running it (a reload, the run's link in
    another tab: Stop works there too), else the stored run replayed from its events (no model);
    its settings go into Explore's widgets (``set_widgets``). False (the reason queued) when
    there is no such run."""
    live = live_runs().get(run_id)
    if live is not None:
        shown.view = RunView(run_id=run_id, state=RunState(), index_key=live.index_key, handle=live.handle)
        started = next(iter(live.handle.events_since(0)), None)
        if isinstance(started, RunStarted):
            _show_settings(shown, started.request, started.seed, live.index_key, set_widgets=set_widgets)
        return True
    record = stored_run(shown, run_id, app=app)
    if record is None:
        return False
    key = index_param(record.index_path, name=record.index_name)
    shown.view = RunView(run_id=record.run_id, state=record.replay(), index_key=key, support=record.support)
    _show_settings(shown, record.request, record.seed, key, set_widgets=set_widgets)
    return True


def start_replay(shown: ShownRun, run_id: str, *, speed: float, app: AppSettings, set_widgets: bool = True) -> bool:
    """Play a stored run back on the live view at ``speed`` times its recorded pace (no model, no
    cache, nothing recorded); False (with the reason queued) when it cannot be."""
    record = stored_run(shown, run_id, app=app)
    if record is None:
        return False
    try:
        handle = replay_run(record.events, speed=speed)
    except ValueError as exc:
        shown.errors.append(str(exc))
        return False
    key = index_param(record.index_path, name=record.index_name)
    shown.view = RunView(run_id=record.run_id, state=RunState(), index_key=key, handle=handle, replay_speed=speed, support=record.support)
    _show_settings(shown, record.request, record.seed, key, set_widgets=set_widgets)
    return True


__all__ = [
    "LiveHandle",
    "LiveRun",
    "LiveRuns",
    "ReplayHandle",
    "RunView",
    "ShownRun",
    "live_runs",
    "open_run",
    "replay_run",
    "start_partial_answer",
    "start_replay",
    "stored_run",
]
