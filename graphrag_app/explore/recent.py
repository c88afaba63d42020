"""The "Recent runs" panel: the run history (SQLite), to reopen a run with no model."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.history import RunStore, RunSummary, StoreError, is_evaluation_label
from graphrag_core.report import record_to_markdown, settings_text
from graphrag_core.status import RunStatus
from graphrag_core.wording import counted

from . import actions as run_controls
from ..session import ExploreState
from ..settings import AppSettings
from ..text import escape_markdown
from ..loaders import IndexAccessError, IndexSource, resolve_source

RECENT_LIMIT = 15
SCANNED_RUNS = 400
"""How many of the newest runs are looked through for the open index's."""
QUERY_SHOWN_CHARS = 90
SHOW_EVALUATION_KEY = "recent_show_evaluation_runs"


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


def draw_recent_runs(container: DeltaGenerator, *, app: AppSettings, page: ExploreState) -> None:
    """The newest runs on the open index with an Open button each (runs an evaluation made are
    hidden unless asked for, and marked when shown); the shown run can be closed or exported."""
    with container:
        try:
            store = RunStore(app.store_path)
            everything = store.list_runs(SCANNED_RUNS)
            shown_is_stored = page.view is not None and page.view.run_id in store
        except StoreError as exc:  # its message names the file and what is wrong with it
            st.error(escape_markdown(str(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - page boundary: a broken history must not break the page
            st.error(f"The run history at {escape_markdown(str(app.store_path))} could not be read ({type(exc).__name__}): {escape_markdown(str(exc))}")
            return
        view = page.view
        if view is not None and not page.running and shown_is_stored:
            cols = [st.container(horizontal=True, vertical_alignment="center")] * 3  # each button as wide as its label
            cols[0].button("Close run", key="close_run", on_click=run_controls.close_clicked, icon=":material/close:")
            cols[1].download_button(
                "Export JSON", partial(store.export_json, view.run_id), file_name=f"run-{view.run_id}.json", mime="application/json", key="export_json", on_click="ignore"
            )
            cols[2].download_button(
                "Export Markdown", partial(_markdown, store, view.run_id), file_name=f"run-{view.run_id}.md", mime="text/markdown", key="export_md", on_click="ignore"
            )
        if not everything:
            st.caption("No runs yet. Runs are kept in " + escape_markdown(str(app.store_path)) + ".")
            return
        key = page.settings.index if page.settings is not None else ""
        try:
            source: IndexSource | None = resolve_source(key, app) if key else None
        except IndexAccessError:
            source = None
        name = key if source is None or source.is_sample else source.path.name
        listing = recent_runs(everything, source, name, show_evaluation=bool(st.session_state.get(SHOW_EVALUATION_KEY)))
        notes = []
        if listing.other_indexes:
            notes.append(f"{counted(listing.other_indexes, 'run')} on other indexes {'is' if listing.other_indexes == 1 else 'are'} not listed (Compare lists every run)")
        if listing.evaluation_hidden:
            notes.append(f"{counted(listing.evaluation_hidden, 'evaluation run')} hidden")
        st.caption(f"Runs on {escape_markdown(source.label if source else key)}" + (": " + "; ".join(notes) + "." if notes else "."))
        if listing.evaluation_hidden or st.session_state.get(SHOW_EVALUATION_KEY):
            st.toggle("Show the runs evaluations made", key=SHOW_EVALUATION_KEY)
        if not listing.shown:
            st.caption("No run on this index yet.")
            return
        for summary in listing.shown:
            text_col, button_col = st.columns([6, 1], vertical_alignment="center")
            shown = view is not None and view.run_id == summary.run_id
            text_col.markdown(_line(summary) + (" · *shown*" if shown else ""))
            button_col.button(
                "Open",
                key=f"open-{summary.run_id}",
                on_click=run_controls.open_clicked,
                args=(summary.run_id,),
                disabled=page.running or shown,
            )
