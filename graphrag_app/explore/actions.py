"""Explore's run callbacks: start (or start fresh), stop, open a stored run or follow a running
one (a reload attaches to it), replay a run, answer a stopped run from what it read, open a
bundle, close the run shown; and the map cache a job uses."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from graphrag_core.cache import MapCache, open_map_cache
from graphrag_core.errors import PreflightError
from graphrag_core.events import RunStarted
from graphrag_core.history import RunRecord, RunStore, StoreError
from graphrag_core.index import index_display_name
from graphrag_core.methods import VECTOR
from graphrag_core.models import map_text_tables
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.state import RunState

from .. import widgets
from .sidebar import model_settings, open_index
from ..jobs import check_model, start_run
from ..live import LiveRuns, replay_run, start_partial_answer
from ..llm import build_embedder, build_model, shared_preflight
from ..loaders import sample_names
from ..settings import AppSettings, load_settings
from ..session import ExploreState, RunView
from ..urls import RunSettings, index_param
from ..widgets import Keys


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


def cache_factory(app: AppSettings, *, use: bool = True, fresh: bool = False) -> Callable[[], MapCache] | None:
    """The map cache of a job, or None when it is off (by setting, or ``use=False``); ``fresh``
    writes it without reading it."""
    path = app.cache_path
    if path is None or not use:
        return None
    if fresh:  # a file that cannot be opened: the run says so once and goes on
        return lambda: FreshCache(open_map_cache(path))
    return lambda: open_map_cache(path)


@st.cache_resource(show_spinner=False)
def live_runs() -> LiveRuns:
    """The runs this process is running (shared by every session): what a reload attaches to."""
    return LiveRuns()


def start_clicked(*, fresh: bool = False) -> None:
    """Callback of "Run global search" (and of "Run fresh", ``fresh``: no map answer read from
    the cache): start the run in its worker, or queue why not."""
    page = ExploreState.get()
    if page.running or page.settings is None:
        return
    app = load_settings()
    try:
        current = widgets.settings_from_widgets(page.settings)
        request = current.to_request()
    except ValueError as exc:
        page.errors.append(str(exc).splitlines()[0])
        return
    opened = open_index(current.index, app, tables=map_text_tables(include_claims=request.include_claims, include_sources=request.include_sources))
    if opened.problem is not None or opened.index is None or opened.source is None:
        page.errors.append(opened.problem or "The index could not be opened.")
        return
    try:
        chosen = model_settings(app, current)
    except ValueError as exc:
        page.errors.append(f"The model settings cannot be used: {exc}")
        return
    try:
        check_model(build_model(chosen), checks=shared_preflight())
    except PreflightError as exc:
        page.errors.append(str(exc))
        return
    handle = start_run(
        opened.index,
        request,
        lambda: build_model(chosen),
        store_path=app.store_path,
        index_name=index_display_name(opened.source.path, opened.index),
        index_path=str(opened.source.path),
        cache_factory=cache_factory(app, use=bool(st.session_state.get(Keys.USE_CACHE, True)), fresh=fresh),
        embedder_factory=(lambda: build_embedder(chosen, app.embedding)) if request.method == VECTOR else None,
    )
    page.settings = current
    page.view = RunView(run_id=handle.run_id, state=RunState(), index_key=opened.source.key, handle=handle)
    live_runs().add(handle, index_key=opened.source.key)


def fresh_clicked() -> None:
    """Callback of "Run fresh": a run that reads no map answer from the cache."""
    start_clicked(fresh=True)


def stop_clicked() -> None:
    """Callback of "Stop": cancel the running search (the page then shows it stopped), or end a
    replay (the run is then shown whole)."""
    view = ExploreState.get().view
    if view is not None and view.handle is not None:
        view.handle.request_stop()


def _stored(page: ExploreState, run_id: str, *, app: AppSettings) -> RunRecord | None:
    """The stored run ``run_id``, or None with the reason queued on the page."""
    try:
        record = RunStore(app.store_path).get(run_id)
    except StoreError as exc:  # its message names the file and what is wrong with it
        page.errors.append(str(exc))
        return None
    except Exception as exc:  # noqa: BLE001 - page boundary: a broken store must not break the page
        page.errors.append(f"The run history at {app.store_path} could not be read ({type(exc).__name__}): {exc}")
        return None
    if record is None:
        page.notices.append(f"Run {run_id} is not in this app's run history; the settings from the link are filled in.")
    return record


def _show_settings(page: ExploreState, request: GlobalSearchRequest, seed: int | None, key: str, *, set_widgets: bool) -> None:
    page.settings = RunSettings.from_request(request, index=key, seed=seed, base=page.settings or RunSettings())
    if set_widgets:
        widgets.seed_widgets(page.settings, index_options=sample_names(), overwrite=True)


def open_run(page: ExploreState, run_id: str, *, app: AppSettings, set_widgets: bool = True) -> bool:
    """Show a run: followed live when this process is running it (a reload, the run's link in
    another tab: Stop works there too), else the stored run replayed from its events (no model);
    its settings go into the widgets."""
    live = live_runs().get(run_id)
    if live is not None:
        page.view = RunView(run_id=run_id, state=RunState(), index_key=live.index_key, handle=live.handle)
        started = next(iter(live.handle.events_since(0)), None)
        if isinstance(started, RunStarted):
            _show_settings(page, started.request, started.seed, live.index_key, set_widgets=set_widgets)
        return True
    record = _stored(page, run_id, app=app)
    if record is None:
        return False
    key = index_param(record.index_path, name=record.index_name)
    page.view = RunView(run_id=record.run_id, state=record.replay(), index_key=key)
    _show_settings(page, record.request, record.seed, key, set_widgets=set_widgets)
    return True


def start_replay(page: ExploreState, run_id: str, *, speed: float, app: AppSettings, set_widgets: bool = True) -> bool:
    """Play a stored run back on the live view at ``speed`` times its recorded pace (no model, no
    cache, nothing recorded); False (with the reason queued) when it cannot be."""
    record = _stored(page, run_id, app=app)
    if record is None:
        return False
    try:
        handle = replay_run(record.events, speed=speed)
    except ValueError as exc:
        page.errors.append(str(exc))
        return False
    key = index_param(record.index_path, name=record.index_name)
    page.view = RunView(run_id=record.run_id, state=RunState(), index_key=key, handle=handle, replay_speed=speed)
    _show_settings(page, record.request, record.seed, key, set_widgets=set_widgets)
    return True


def replay_clicked() -> None:
    """Callback of "Replay": play the run shown back at the chosen speed."""
    page = ExploreState.get()
    if page.view is not None and not page.running:
        start_replay(page, page.view.run_id, speed=float(st.session_state.get(Keys.REPLAY_SPEED) or 1.0), app=load_settings())


def answer_from_read_clicked() -> None:
    """Callback of "Answer from what was read": a stopped run goes on to a reduce over the map
    answers it finished (recorded with the run, labelled partial)."""
    page = ExploreState.get()
    view = page.view
    if view is None or page.running or not view.state.answerable_from_read or page.settings is None:
        return
    app = load_settings()
    record = _stored(page, view.run_id, app=app)
    opened = open_index(view.index_key, app)
    if record is None or opened.index is None:
        page.errors.append(opened.problem or f"Run {view.run_id} could not be read back from the history.")
        return
    try:
        chosen = model_settings(app, page.settings)
    except ValueError as exc:
        page.errors.append(f"The model settings cannot be used: {exc}")
        return
    handle = start_partial_answer(opened.index, record, lambda: build_model(chosen), store_path=app.store_path)
    page.view = RunView(run_id=view.run_id, state=view.state, index_key=view.index_key, handle=handle)
    live_runs().add(handle, index_key=view.index_key)


def bundle_opened(page: ExploreState, run_id: str | None, notices: list[str], errors: list[str], *, app: AppSettings) -> None:
    """A run bundle was opened and put in the history as ``run_id``: show that run, unless a run is going."""
    page.errors.extend(errors)
    page.notices.extend(notices)
    if run_id is not None and not page.running:
        open_run(page, run_id, app=app)


def open_clicked(run_id: str) -> None:
    page = ExploreState.get()
    if not page.running:
        open_run(page, run_id, app=load_settings())


def close_clicked() -> None:
    page = ExploreState.get()
    if not page.running:
        page.view = None


__all__ = [
    "FreshCache",
    "answer_from_read_clicked",
    "bundle_opened",
    "cache_factory",
    "close_clicked",
    "fresh_clicked",
    "live_runs",
    "open_clicked",
    "open_run",
    "replay_clicked",
    "start_clicked",
    "start_replay",
    "stop_clicked",
]
