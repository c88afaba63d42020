"""The "Recent runs" panel: the run history (SQLite), to reopen a run with no model."""

from __future__ import annotations

from functools import partial

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.history import RunStore, RunSummary
from graphrag_core.report import record_to_markdown, settings_text
from graphrag_core.status import RunStatus

from . import controls
from .state import ExploreState
from .settings import AppSettings
from .escaping import escape_markdown

RECENT_LIMIT = 15
QUERY_SHOWN_CHARS = 90


def _line(summary: RunSummary) -> str:
    query = summary.query if len(summary.query) <= QUERY_SHOWN_CHARS else summary.query[:QUERY_SHOWN_CHARS] + "…"
    when = summary.created_at.replace("T", " ")[:19]
    settings = settings_text(summary.request, seed=summary.seed, level=summary.community_level)
    return (
        f"**{escape_markdown(query)}**  \n"
        f"{escape_markdown(when)} · {escape_markdown(summary.index_name)} · {escape_markdown(settings)} · "
        f"{summary.batch_count:,} batches · {summary.duration_s:.1f}s · status: {RunStatus(summary.status).word}"
    )


def _markdown(store: RunStore, run_id: str) -> str:
    """The run's Markdown report; raises ``KeyError`` when the run is gone."""
    record = store.get(run_id)
    if record is None:
        raise KeyError(f"No run {run_id!r} in {store.path}.")
    return record_to_markdown(record)


def draw_recent_runs(container: DeltaGenerator, *, app: AppSettings, page: ExploreState) -> None:
    """The newest runs with an Open button each; the shown run can be closed or exported."""
    with container:
        try:
            store = RunStore(app.store_path)
            runs = store.list_runs(RECENT_LIMIT)
        except Exception as exc:  # noqa: BLE001 - page boundary: a broken history must not break the page
            st.error(f"The run history at {escape_markdown(str(app.store_path))} could not be read ({type(exc).__name__}): {escape_markdown(str(exc))}")
            return
        view = page.view
        if view is not None and not page.running and view.run_id in store:
            cols = [st.container(horizontal=True, vertical_alignment="center")] * 3  # each button as wide as its label
            cols[0].button("Close run", key="close_run", on_click=controls.close_clicked, icon=":material/close:")
            cols[1].download_button(
                "Export JSON", partial(store.export_json, view.run_id), file_name=f"run-{view.run_id}.json", mime="application/json", key="export_json", on_click="ignore"
            )
            cols[2].download_button(
                "Export Markdown", partial(_markdown, store, view.run_id), file_name=f"run-{view.run_id}.md", mime="text/markdown", key="export_md", on_click="ignore"
            )
        if not runs:
            st.caption("No runs yet. Runs are kept in " + escape_markdown(str(app.store_path)) + ".")
            return
        for summary in runs:
            text_col, button_col = st.columns([6, 1], vertical_alignment="center")
            shown = view is not None and view.run_id == summary.run_id
            text_col.markdown(_line(summary) + (" · *shown*" if shown else ""))
            button_col.button(
                "Open",
                key=f"open-{summary.run_id}",
                on_click=controls.open_clicked,
                args=(summary.run_id,),
                disabled=page.running or shown,
            )
