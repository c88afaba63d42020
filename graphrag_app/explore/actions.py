"""What Explore's buttons start and open: a run (from the script run's one read of the widgets),
a replay, an answer from what a stopped run read, a stored run, a bundle; and the Recent runs
list, whose Open buttons reopen a run with no model; and the support check (issue 41) of the
run shown once it has ended (:func:`ensure_support`), kept with the run in the history so a
reopened or replayed run shows it again, and the model judge's cost in the preview.

A button's callback runs before the script, with the widgets' values of the click. Run and Run
fresh only note the click (``ExploreState.start``); the script starts the run right after it has
read the widgets, before it draws anything (:func:`start_requested`), so the run is made from
that one read and the page then draws Stop enabled. Errors are queued on the session's
:class:`~graphrag_app.live.ShownRun` and shown on the page.

The support check is the engine's (:mod:`graphrag_core.support`): the offline judge is lexical
and takes milliseconds, so it runs in the script that draws the ended run; the model judge asks
the run's model in a worker (its replies kept in the map cache) while a spinner turns. A check
that cannot be made says why once and leaves the run as it was.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.errors import GraphRAGError, PreflightError
from graphrag_core.history import RunStore, RunSummary, StoreError, is_evaluation_label
from graphrag_core.index import index_display_name
from graphrag_core.llm.settings import ModelSettings, SettingsError, resolve_model_settings
from graphrag_core.methods import VECTOR
from graphrag_core.models import Index, map_text_tables
from graphrag_core.report import record_to_markdown, settings_text
from graphrag_core.state import RunState
from graphrag_core.status import RunStatus
from graphrag_core.support import SupportCheck, check_support, forecast_support, offline_support
from graphrag_core.wording import counted

from ..jobs import JobHandle, cache_factory, check_model, start_job, start_run
from ..live import RunView, ShownRun, live_runs, open_run, start_partial_answer, start_replay, stored_run
from ..settings import build_embedder, build_model, shared_preflight
from ..loaders import IndexAccessError, IndexSource, OpenedIndex, open_index, resolve_source
from ..session import Widget
from ..settings import AppSettings, endpoint_refusal, load_settings
from ..text import escape_markdown
from ..urls import RunSettings
from .state import API_KEY, MODEL, REPLAY_SPEED, SUPPORT_JUDGE, ExploreRequest, ExploreState, Start, checking_support

SHOW_EVALUATION = Widget[bool]("recent_show_evaluation_runs", False)


# -- the model a run calls -------------------------------------------------------------------------


def model_settings(app: AppSettings, chosen: ExploreRequest) -> ModelSettings:
    """The model a run with these choices calls (with the key typed in this browser session);
    raises ``ValueError`` naming the field when the choice cannot be used, or why a shared app
    may not call the chosen endpoint (``endpoint_refusal``)."""
    return settings_model(app, chosen.settings, api_key=chosen.api_key)


def settings_model(app: AppSettings, settings: RunSettings, *, api_key: str) -> ModelSettings:
    """The model a run with ``settings`` calls with ``api_key`` (see :func:`model_settings`)."""
    chosen = resolve_model_settings(app.model, settings.model.model_copy(update={"api_key": api_key}))
    if refusal := endpoint_refusal(app, chosen):
        raise SettingsError(refusal)
    return chosen


def run_target(app: AppSettings, chosen: ExploreRequest) -> str:
    """One sentence naming the model and endpoint the next run calls, and which key it sends."""
    try:
        settings = model_settings(app, chosen)
    except ValueError as exc:
        return f"The model settings cannot be used: {exc}"
    return describe_target(settings, typed_key=bool(chosen.api_key.strip()))


def describe_target(settings: ModelSettings, *, typed_key: bool) -> str:
    """"Runs call model m at URL with the configured API key" (or the typed key, or none)."""
    if settings.provider != "openai":
        return "Runs call the offline model (no network)."
    if settings.api_key is None:
        key = "without an API key"
    elif typed_key:
        key = "with the API key typed in this session"
    else:
        key = "with the configured API key"
    return f"Runs call model {settings.model} at {settings.base_url} {key}."


# -- Run, Run fresh ----------------------------------------------------------------------------------


def _clicked(start: Start) -> None:
    page = ExploreState.get()
    if not ShownRun.get().running:
        page.start = start


def run_clicked() -> None:
    """Callback of "Run global search": the script starts the run from its read of the widgets."""
    _clicked("run")


def fresh_clicked() -> None:
    """Callback of "Run fresh": a run that reads no map answer from the cache."""
    _clicked("fresh")


def start_requested(page: ExploreState, shown: ShownRun, chosen: ExploreRequest, app: AppSettings) -> None:
    """Start the run a click on Run (or Run fresh) asked for, from ``chosen``, the script run's
    one read of the widgets; or queue why it cannot start."""
    start, page.start = page.start, None
    if start is not None and not shown.running:
        start_search(shown, chosen, app, fresh=start == "fresh")


def start_search(shown: ShownRun, chosen: ExploreRequest, app: AppSettings, *, fresh: bool = False) -> None:
    """Start the search ``chosen`` describes in its worker (``fresh``: no map answer read from the
    cache), shown live; or queue why it cannot start."""
    if chosen.problem is not None:
        shown.errors.append(chosen.problem)
        return
    try:
        request = chosen.request()
    except ValueError as exc:
        shown.errors.append(str(exc).splitlines()[0])
        return
    opened = open_index(chosen.settings.index, app, tables=map_text_tables(include_claims=request.include_claims, include_sources=request.include_sources))
    if opened.problem is not None or opened.index is None or opened.source is None:
        shown.errors.append(opened.problem or "The index could not be opened.")
        return
    try:
        model = model_settings(app, chosen)
    except ValueError as exc:
        shown.errors.append(f"The model settings cannot be used: {exc}")
        return
    try:
        check_model(build_model(model), checks=shared_preflight())
    except PreflightError as exc:
        shown.errors.append(str(exc))
        return
    handle = start_run(
        opened.index,
        request,
        lambda: build_model(model),
        store_path=app.store_path,
        index_name=index_display_name(opened.source.path, opened.index),
        index_path=str(opened.source.path),
        cache_factory=cache_factory(app.cache_path, use=chosen.use_cache, fresh=fresh),
        embedder_factory=(lambda: build_embedder(model, app.embedding)) if request.method == VECTOR else None,
    )
    shown.settings = chosen.settings
    shown.view = RunView(run_id=handle.run_id, state=RunState(), index_key=opened.source.key, handle=handle)
    live_runs().add(handle, index_key=opened.source.key)


# -- the run shown ---------------------------------------------------------------------------------


def stop_clicked() -> None:
    """Callback of "Stop": cancel the running search (the page then shows it stopped), or end a
    replay (the run is then shown whole)."""
    view = ShownRun.get().view
    if view is not None and view.handle is not None:
        view.handle.request_stop()


def replay_clicked() -> None:
    """Callback of "Replay": play the run shown back at the chosen speed."""
    shown = ShownRun.get()
    if shown.view is not None and not shown.running:
        start_replay(shown, shown.view.run_id, speed=float(REPLAY_SPEED.value or 1.0), app=load_settings())


def answer_from_read_clicked() -> None:
    """Callback of "Answer from what was read": a stopped run goes on to a reduce over the map
    answers it finished (recorded with the run, labelled partial), with the model the page shows."""
    shown = ShownRun.get()
    view = shown.view
    if view is None or shown.running or not view.state.answerable_from_read or shown.settings is None:
        return
    app = load_settings()
    record = stored_run(shown, view.run_id, app=app)
    opened = open_index(view.index_key, app)
    if record is None or opened.index is None:
        shown.errors.append(opened.problem or f"Run {view.run_id} could not be read back from the history.")
        return
    try:
        model = settings_model(app, shown.settings, api_key=str(API_KEY.value or ""))
    except ValueError as exc:
        shown.errors.append(f"The model settings cannot be used: {exc}")
        return
    handle = start_partial_answer(opened.index, record, lambda: build_model(model), store_path=app.store_path)
    shown.view = RunView(run_id=view.run_id, state=view.state, index_key=view.index_key, handle=handle)
    live_runs().add(handle, index_key=view.index_key)


def bundle_opened(shown: ShownRun, run_id: str | None, notices: list[str], errors: list[str], *, app: AppSettings) -> None:
    """A run bundle was opened and put in the history as ``run_id``: show that run, unless a run is going."""
    shown.errors.extend(errors)
    shown.notices.extend(notices)
    if run_id is not None and not shown.running:
        open_run(shown, run_id, app=app)


def open_clicked(run_id: str) -> None:
    shown = ShownRun.get()
    if not shown.running:
        open_run(shown, run_id, app=load_settings())


def close_clicked() -> None:
    shown = ShownRun.get()
    if not shown.running:
        shown.view = None


# -- Recent runs -----------------------------------------------------------------------------------


RECENT_LIMIT = 15

SCANNED_RUNS = 400
"""How many of the newest runs are looked through for the open index's."""

QUERY_SHOWN_CHARS = 90


def _line(summary: RunSummary) -> str:
    query = summary.query if len(summary.query) <= QUERY_SHOWN_CHARS else summary.query[:QUERY_SHOWN_CHARS] + "…"
    when = summary.created_at.replace("T", " ")[:19]
    settings = settings_text(summary.request, seed=summary.seed, level=summary.community_level)
    evaluation = " · *evaluation run*" if is_evaluation_label(summary.label) else ""
    return (
        f"**{escape_markdown(query)}**{evaluation}  \n"
        f"{escape_markdown(when)} · {escape_markdown(summary.index_name)} · {escape_markdown(settings)} · "
        f"{counted(summary.batch_count, 'batch')} · {summary.duration_s:.1f}s · status: {RunStatus(summary.status).word}"
    )


def _resolved(path: str | os.PathLike[str]) -> Path:
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError):
        return Path(path)


def of_index(summary: RunSummary, source: IndexSource | None, name: str) -> bool:
    """Whether the run was made on the open index: the same folder, or (a run recorded without
    its folder) the same name."""
    if source is None:
        return True
    if summary.index_path:
        return _resolved(summary.index_path) == _resolved(source.path)
    return summary.index_name == name


@dataclass(frozen=True)


class RecentRuns:
    """The newest runs on the open index, and what the list leaves out."""

    shown: list[RunSummary]
    evaluation_hidden: int
    """Runs an evaluation made on this index, hidden unless asked for."""
    other_indexes: int
    """Runs on other indexes (Compare lists every run)."""


def recent_runs(runs: list[RunSummary], source: IndexSource | None, name: str, *, show_evaluation: bool, limit: int = RECENT_LIMIT) -> RecentRuns:
    """The runs Recent runs lists: the open index's, newest first, evaluation runs only when
    ``show_evaluation``, at most ``limit``."""
    here = [s for s in runs if of_index(s, source, name)]
    evaluation = [s for s in here if is_evaluation_label(s.label)]
    shown = here if show_evaluation else [s for s in here if not is_evaluation_label(s.label)]
    return RecentRuns(shown=shown[:limit], evaluation_hidden=0 if show_evaluation else len(evaluation), other_indexes=len(runs) - len(here))


def _markdown(store: RunStore, run_id: str) -> str:
    """The run's Markdown report; raises ``KeyError`` when the run is gone."""
    record = store.get(run_id)
    if record is None:
        raise KeyError(f"No run {run_id!r} in {store.path}.")
    return record_to_markdown(record)


def draw_recent_runs(container: DeltaGenerator, *, app: AppSettings, shown: ShownRun) -> None:
    """The newest runs on the open index with an Open button each (runs an evaluation made are
    hidden unless asked for, and marked when shown); the shown run can be closed or exported."""
    with container:
        try:
            store = RunStore(app.store_path)
            everything = store.list_runs(SCANNED_RUNS)
            shown_is_stored = shown.view is not None and shown.view.run_id in store
        except StoreError as exc:  # its message names the file and what is wrong with it
            st.error(escape_markdown(str(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - page boundary: a broken history must not break the page
            st.error(f"The run history at {escape_markdown(str(app.store_path))} could not be read ({type(exc).__name__}): {escape_markdown(str(exc))}")
            return
        view = shown.view
        if view is not None and not shown.running and shown_is_stored:
            cols = [st.container(horizontal=True, vertical_alignment="center")] * 3  # each button as wide as its label
            cols[0].button("Close run", key="close_run", on_click=close_clicked, icon=":material/close:")
            cols[1].download_button(
                "Export JSON", partial(store.export_json, view.run_id), file_name=f"run-{view.run_id}.json", mime="application/json", key="export_json", on_click="ignore"
            )
            cols[2].download_button(
                "Export Markdown", partial(_markdown, store, view.run_id), file_name=f"run-{view.run_id}.md", mime="text/markdown", key="export_md", on_click="ignore"
            )
        if not everything:
            st.caption("No runs yet. Runs are kept in " + escape_markdown(str(app.store_path)) + ".")
            return
        key = shown.settings.index if shown.settings is not None else ""
        try:
            source: IndexSource | None = resolve_source(key, app) if key else None
        except IndexAccessError:
            source = None
        name = key if source is None or source.is_sample else source.path.name
        listing = recent_runs(everything, source, name, show_evaluation=bool(SHOW_EVALUATION.value))
        notes = []
        if listing.other_indexes:
            notes.append(f"{counted(listing.other_indexes, 'run')} on other indexes {'is' if listing.other_indexes == 1 else 'are'} not listed (Compare lists every run)")
        if listing.evaluation_hidden:
            notes.append(f"{counted(listing.evaluation_hidden, 'evaluation run')} hidden")
        st.caption(f"Runs on {escape_markdown(source.label if source else key)}" + (": " + "; ".join(notes) + "." if notes else "."))
        if listing.evaluation_hidden or SHOW_EVALUATION.value:
            st.toggle("Show the runs evaluations made", key=SHOW_EVALUATION.key)
        if not listing.shown:
            st.caption("No run on this index yet.")
            return
        for summary in listing.shown:
            text_col, button_col = st.columns([6, 1], vertical_alignment="center")
            is_shown = view is not None and view.run_id == summary.run_id
            text_col.markdown(_line(summary) + (" · *shown*" if is_shown else ""))
            button_col.button(
                "Open",
                key=f"open-{summary.run_id}",
                on_click=open_clicked,
                args=(summary.run_id,),
                disabled=shown.running or is_shown,
            )


# -- the support check of the run shown ------------------------------------------------------------


def model_judge_available() -> bool:
    """Whether a model is configured to judge (the OpenAI-compatible endpoint is chosen)."""
    return MODEL.value == "openai"


def judge() -> str:
    """The judge the next check uses: the model only when it is chosen and available."""
    return "model" if SUPPORT_JUDGE.value == "model" and model_judge_available() else "offline"


def checkable(view: RunView | None) -> bool:
    """Whether the run shown has an answer to check (it has ended with one)."""
    return view is not None and view.handle is None and view.state.result is not None and RunStatus(view.state.result.status).answered


def _model_check(index: Index, view: RunView, app: AppSettings, chosen: ExploreRequest) -> SupportCheck:
    settings = model_settings(app, chosen)
    caches = cache_factory(app.cache_path, use=chosen.use_cache)
    result = view.state.result
    assert result is not None

    made: list[SupportCheck] = []

    async def judged() -> None:  # in a worker's event loop: the model is built inside the loop that uses it
        made.append(await check_support(index, result, "model", model=build_model(settings), cache=caches() if caches else None))

    job = JobHandle()
    with st.spinner("Checking the answer's support with the model…"):
        start_job(job, judged, name="graphrag-support-check")
        job.wait()
    if job.failure is not None:
        raise job.failure
    return made[0]


def make_check(index: Index, view: RunView, app: AppSettings, chosen: ExploreRequest) -> SupportCheck:
    """The check of the ended run ``view`` by the chosen judge; raises the engine's errors."""
    result = view.state.result
    assert result is not None
    return _model_check(index, view, app, chosen) if judge() == "model" else offline_support(index, result)


def keep_support(app: AppSettings, run_id: str, check: SupportCheck) -> str | None:
    """Keep ``check`` with the run in the history; why it could not be, or None."""
    if app.store_path is None:
        return None
    try:
        RunStore(app.store_path).set_support(run_id, check)
    except (StoreError, OSError) as exc:
        return f"The support check was made but could not be kept with run {run_id}: {exc}"
    return None


def ensure_support(shown: ShownRun, index: Index | None, app: AppSettings, chosen: ExploreRequest) -> SupportCheck | None:
    """The support check to draw with the run shown: the one it has (stored, or made earlier in
    this session), else, with the switch on, one made now and kept with the run. A check that
    cannot be made says why (once: the view keeps the failed attempt) and the run is drawn without it."""
    view = shown.view
    if view is None or not checkable(view):
        return None
    wanted = judge()
    if view.support is not None and (not checking_support() or view.support.judge == wanted):
        return view.support
    if not checking_support() or index is None or view.support_failed == wanted:
        return view.support
    try:
        check = make_check(index, view, app, chosen)
    except (GraphRAGError, ValueError, OSError) as exc:
        view.support_failed = wanted
        st.error(escape_markdown(f"The support check could not be made: {exc}"), icon=":material/error:")
        return view.support
    view.support = check
    if problem := keep_support(app, view.run_id, check):
        st.warning(escape_markdown(problem), icon=":material/warning:")
    return check


def draw_support_cost(container: DeltaGenerator, opened: OpenedIndex, chosen: ExploreRequest) -> None:
    """With the model judge chosen, what its check of the next run would cost (a forecast)."""
    if not checking_support() or judge() != "model" or opened.index is None or chosen.problem is not None:
        return
    try:
        cost = forecast_support(opened.index, chosen.previewed())
    except (GraphRAGError, ValueError) as exc:
        container.caption(escape_markdown(f"Support check: its cost could not be forecast ({exc})."))
        return
    container.caption(escape_markdown(f"Then the {cost.text()}."))


__all__ = [
    "RecentRuns",
    "answer_from_read_clicked",
    "bundle_opened",
    "checkable",
    "close_clicked",
    "describe_target",
    "draw_recent_runs",
    "draw_support_cost",
    "ensure_support",
    "fresh_clicked",
    "judge",
    "keep_support",
    "make_check",
    "model_judge_available",
    "model_settings",
    "of_index",
    "open_clicked",
    "recent_runs",
    "replay_clicked",
    "run_clicked",
    "run_target",
    "settings_model",
    "start_requested",
    "start_search",
    "stop_clicked",
]
