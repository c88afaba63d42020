"""Compare's panels: the runs chosen (kept in step with ``?runs=``), their settings, metrics,
community overlap, answers side by side and two of them point by point, and the run history
(export, delete).

Each panel takes the container to draw into; the page only lays them out. Everything is drawn
from the stored records; no model is called.
"""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.figures import Price
from graphrag_core.history import RunRecord, RunStore, RunSummary
from graphrag_core.report import record_to_markdown, settings_text
from graphrag_core.status import RunStatus
from graphrag_core.wording import counted

from ..panels import bundles, evidence, side_by_side
from . import charts as cc
from ..text import BRIEF_QUERY_CHARS, escape_markdown, run_label
from ..settings import AppSettings
from .state import HISTORY_RUN, ONLY_DIFFERING, OVERLAP_SET, POINTS_LEFT, POINTS_RIGHT, SELECTED, CompareState
from ..urls import RUNS_PARAM, provenance_url, run_ids_param

OVERLAP_HEADINGS = {
    "cited": "Communities cited by the answers",
    "behind": "Communities behind the answers",
    "read_but_unused": "Communities read but unused",
}
LIST_LIMIT = 200
QUERY_CHARS = 60
CITATIONS_SHOWN = 40
DIFF_COLOR = "background-color: rgba(240, 160, 48, 0.25)"
ROW_PX = 35
PLOTLY_CONFIG = {"displaylogo": False}


def table_height(rows: int) -> int:
    """Tall enough to show every row without an inner scrollbar."""
    return ROW_PX * (rows + 1) + 3


def run_option_label(summary: RunSummary) -> str:
    return run_label(summary, query_chars=QUERY_CHARS)


def url_run_ids() -> list[str]:
    return run_ids_param(st.query_params.get(RUNS_PARAM, ""))


def known_runs(store: RunStore, runs: list[RunSummary]) -> dict[str, RunSummary]:
    """The listed runs, and any older run a shared link names."""
    summaries = {s.run_id: s for s in runs}
    for run_id in url_run_ids():
        if run_id not in summaries and (record := store.get(run_id)) is not None:
            summaries[run_id] = record.summary()
    return summaries


def sync_selection_from_url(page: CompareState, known: list[str]) -> None:
    """Seed the multiselect from ``?runs=`` on first load, or when the URL was changed by hand;
    drop runs deleted elsewhere (no longer an option)."""
    from_url = url_run_ids()
    if page.url_runs != from_url or not SELECTED.present:
        page.url_runs = from_url
        unknown = [run_id for run_id in from_url if run_id not in known]
        if unknown:
            page.notice = "Not in the run history (deleted, or another store): " + ", ".join(unknown[:6])
        if from_url or not SELECTED.present:
            SELECTED.set([run_id for run_id in from_url if run_id in known][: cc.MAX_COMPARED_RUNS])
    SELECTED.set([r for r in SELECTED.value if r in known][: cc.MAX_COMPARED_RUNS])


def sync_url_from_selection(page: CompareState, selected: list[str]) -> None:
    value = ",".join(selected)
    if value:
        if st.query_params.get(RUNS_PARAM) != value:
            st.query_params[RUNS_PARAM] = value
    elif RUNS_PARAM in st.query_params:
        del st.query_params[RUNS_PARAM]
    page.url_runs = selected


def draw_notice(container: DeltaGenerator, page: CompareState) -> None:
    """The notice left by the last action (a deletion, an opened bundle, an unknown run), once."""
    if page.notice:
        container.info(escape_markdown(page.notice), icon=":material/info:")
        page.notice = None


def pick_runs(container: DeltaGenerator, page: CompareState, summaries: dict[str, RunSummary]) -> list[str]:
    """The "Runs to compare" multiselect; the URL follows the choice."""
    selected = container.multiselect(
        "Runs to compare",
        list(summaries),
        key=SELECTED.key,
        max_selections=cc.MAX_COMPARED_RUNS,
        format_func=lambda r: run_option_label(summaries[r]),
        placeholder="Choose 2 to 4 runs",
    )
    sync_url_from_selection(page, selected)
    return selected


def delete_clicked(store_path: str, run_id: str) -> None:
    """Runs before the script: delete, and drop the run from the comparison and the URL."""
    page = CompareState.get()
    deleted = RunStore(store_path).delete(run_id)
    SELECTED.set([r for r in SELECTED.value if r != run_id])
    page.url_runs = url_run_ids()  # not a hand-edited URL: the script rewrites it
    HISTORY_RUN.pop()
    page.notice = f"Deleted run {run_id[:8]}." if deleted else f"Run {run_id[:8]} was already gone."


def highlight_differences(table: pd.DataFrame) -> "pd.io.formats.style.Styler":
    def row_style(row: pd.Series) -> list[str]:
        return [DIFF_COLOR if row["differs"] else ""] * len(row)

    return table.style.apply(row_style, axis=1)


def draw_settings(container: DeltaGenerator, records: list[RunRecord]) -> None:
    with container:
        st.subheader("Settings")
        only = st.toggle("Show only the settings that differ", key=ONLY_DIFFERING.key)
        table = pd.DataFrame(cc.settings_table(records, only_differing=only))
        if table.empty:
            st.caption("Every setting is the same in these runs.")
            return
        differing = int(table["differs"].sum())
        st.caption(f"{counted(differing, 'setting')} {'differs' if differing == 1 else 'differ'}; {'it is' if differing == 1 else 'they are'} highlighted.")
        st.dataframe(
            highlight_differences(table),
            hide_index=True,
            width="stretch",
            height=table_height(len(table)),
            column_config={"differs": st.column_config.CheckboxColumn("differs", width="small")},
        )


def draw_metrics(container: DeltaGenerator, records: list[RunRecord], *, price: Price | None) -> None:
    with container:
        st.subheader("Metrics")
        metrics = pd.DataFrame(cc.metrics_table(records, price=price))
        st.dataframe(metrics, hide_index=True, width="stretch", height=table_height(len(metrics)), key="compare_metrics")
        left, right = st.columns(2)
        left.plotly_chart(cc.cost_figure(records), key="compare_cost", config=PLOTLY_CONFIG)
        right.plotly_chart(cc.usefulness_figure(records), key="compare_usefulness", config=PLOTLY_CONFIG)


def draw_overlap(container: DeltaGenerator, records: list[RunRecord]) -> None:
    """The overlap of one of the three community sets across the runs (the set is chosen here)."""
    with container:
        heading = st.empty()
        which = st.segmented_control(
            "Community set",
            list(evidence.SET_NAMES),
            key=OVERLAP_SET.key,
            default="behind",
            format_func=lambda name: evidence.SET_NAMES[name],
            help=" · ".join(f"{evidence.SET_NAMES[k]}: {v}" for k, v in evidence.SET_HELP.items()),
        ) or "behind"
        heading.subheader(OVERLAP_HEADINGS[which])
        st.caption(escape_markdown(evidence.SET_HELP[which]))
        left, right = st.columns(2)
        left.plotly_chart(cc.overlap_heatmap_figure(records, which), key="compare_overlap", config=PLOTLY_CONFIG)
        right.plotly_chart(cc.overlap_bars_figure(records, which), key="compare_overlap_bars", config=PLOTLY_CONFIG)
        rows = cc.overlap_table(records, which)
        if rows:
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", height=table_height(min(len(rows), 12)), key="compare_overlap_table")
        else:
            st.caption(f"No community is {evidence.SET_NAMES[which].lower()} in these runs.")


def citation_links(record: RunRecord) -> str:
    """The answer's communities as Markdown links to the provenance page (ids escaped)."""
    if record.result is None or not record.result.community_ids:
        return ""
    key = cc.index_key_for(record)
    ids = record.result.community_ids
    links = [f"[{escape_markdown(cid)}]({provenance_url(key, cid, record.run_id)})" for cid in ids[:CITATIONS_SHOWN]]
    more = f" … and {len(ids) - CITATIONS_SHOWN} more" if len(ids) > CITATIONS_SHOWN else ""
    return f"{evidence.SET_NAMES['behind']}: " + " · ".join(links) + more


def draw_answers(container: DeltaGenerator, records: list[RunRecord]) -> None:
    with container:
        st.subheader("Answers")
        labels = cc.run_labels(records)
        for column, label, record in zip(st.columns(len(records)), labels, records):
            with column.container(border=True):
                st.markdown(f"**{escape_markdown(label)}** · {escape_markdown(RunStatus(record.status).word)}")
                st.caption(escape_markdown(record.query))
                if record.result is None:
                    st.text(record.error or "This run produced no answer.")
                    continue
                state = record.replay()
                key = cc.index_key_for(record)
                index = evidence.index_for(key)
                sets = evidence.sets_of(state, index)
                # model output as safe Markdown (no HTML); its citations link to provenance
                st.markdown(evidence.answer_markdown(record.result.answer, sets, index=index, index_key=key, run_id=record.run_id))
                if sets is not None:
                    st.caption(evidence.sets_caption(sets))
                links = citation_links(record)
                if links:
                    st.markdown(links)


def _points_side(record: RunRecord, label: str) -> tuple[str, str, side_by_side.Render]:
    """A run's answer for the point-by-point panel: its label, its text, and how a point of it is
    drawn (its citations linked to this run's provenance, unsupported ones flagged)."""
    key = cc.index_key_for(record)
    index = evidence.index_for(key)
    sets = evidence.sets_of(record.replay(), index)
    answer = record.result.answer if record.result is not None else ""
    return label, answer, lambda text: evidence.answer_markdown(text, sets, index=index, index_key=key, run_id=record.run_id)


def draw_points(container: DeltaGenerator, records: list[RunRecord]) -> None:
    """Two of the runs' answers aligned point by point, the points only one makes marked."""
    with container:
        st.subheader("Point by point")
        labels = dict(zip((r.run_id for r in records), cc.run_labels(records)))
        answered = [r for r in records if r.result is not None and r.result.answer.strip()]
        if len(answered) < 2:
            st.caption("Two of the runs need an answer to be set side by side.")
            return
        ids = [r.run_id for r in answered]
        pick_left, pick_right = (st.columns(2) if len(answered) > 2 else (None, None))
        left = pick_left.selectbox("Left", ids, key=POINTS_LEFT.key, format_func=labels.__getitem__) if pick_left else ids[0]
        right = pick_right.selectbox("Right", ids, index=1, key=POINTS_RIGHT.key, format_func=labels.__getitem__) if pick_right else ids[1]
        if left == right:
            st.caption("Choose two different runs.")
            return
        by_id = {r.run_id: r for r in answered}
        side_by_side.draw_points(st.container(), left=_points_side(by_id[left], labels[left]), right=_points_side(by_id[right], labels[right]), key="compare_points")


def markdown_report(store: RunStore, run_id: str) -> str:
    """The run's Markdown report, its citations checked against its index when it opens here."""
    record = store.get(run_id)
    if record is None:
        raise KeyError(f"No run {run_id!r} in {store.path}.")
    index = evidence.index_for(cc.index_key_for(record))
    return record_to_markdown(record, index_ids={c.id for c in index.communities} if index is not None else None)


def draw_history(container: DeltaGenerator, store: RunStore, runs: list[RunSummary], *, app: AppSettings) -> None:
    with container:
        st.subheader("History")
        if not runs:
            st.caption(f"No runs yet. Runs are kept in {escape_markdown(str(store.path))}.")
            return
        table = pd.DataFrame(
            [
                {
                    "run": s.run_id[:8],
                    "created": s.created_at.replace("T", " ")[:19],
                    "index": s.index_name,
                    "question": s.query,
                    "settings": settings_text(s.request, seed=s.seed, level=s.community_level),
                    "status": RunStatus(s.status).word,
                    "batches": s.batch_count,
                    "failed": s.failed_batch_count,
                    "duration (s)": round(s.duration_s, 2),
                    "label": s.label,
                }
                for s in runs
            ]
        )
        st.dataframe(table, hide_index=True, width="stretch", height=min(38 + 35 * len(runs), 320), key="compare_history_table")
        by_id = {s.run_id: s for s in runs}
        selected = SELECTED.value or []
        if HISTORY_RUN.value not in by_id:
            HISTORY_RUN.set(selected[0] if selected else runs[0].run_id)
        run_id = st.selectbox(  # the table above shows each run's status, index and time: the choice fits its box
            "Run to export or delete", list(by_id), key=HISTORY_RUN.key, format_func=lambda r: run_label(by_id[r], query_chars=BRIEF_QUERY_CHARS, brief=True)
        )
        row = st.container(horizontal=True, vertical_alignment="bottom")  # buttons as wide as their labels
        cols = [row, row, row, st.container()]
        cols[0].download_button(
            "Download JSON",
            partial(store.export_json, run_id),
            file_name=f"run-{run_id}.json",
            mime="application/json",
            key="compare_export_json",
            on_click="ignore",
            icon=":material/download:",
        )
        cols[1].download_button(
            "Download Markdown",
            partial(markdown_report, store, run_id),
            file_name=f"run-{run_id}.md",
            mime="text/markdown",
            key="compare_export_md",
            on_click="ignore",
            icon=":material/download:",
        )
        record = store.get(run_id)
        if record is not None:
            bundles.draw_bundle_download(cols[3], record.replay(), index_key=cc.index_key_for(record), app=app, key="compare")
        with cols[2].popover("Delete run", icon=":material/delete:"):
            st.markdown(f"Delete run **{escape_markdown(run_id[:8])}** from the history? This cannot be undone.")
            st.button("Delete", key="compare_delete", type="primary", on_click=delete_clicked, args=(str(store.path), run_id))


def bundle_opened(run_id: str | None, notices: list[str], errors: list[str]) -> None:
    """An opened run bundle joins the comparison (it is in the history now, as ``run_id``)."""
    CompareState.get().notice = " ".join([*errors, *notices])
    if run_id is not None:
        chosen = [r for r in SELECTED.value if r != run_id]
        SELECTED.set([*chosen, run_id][-cc.MAX_COMPARED_RUNS :])


def bundle_open(container: DeltaGenerator, *, app: AppSettings) -> None:
    bundles.draw_bundle_open(container, app=app, key="compare_bundle", on_open=bundle_opened)


__all__ = [
    "bundle_open",
    "citation_links",
    "draw_answers",
    "draw_history",
    "draw_metrics",
    "draw_notice",
    "draw_overlap",
    "draw_points",
    "draw_settings",
    "known_runs",
    "markdown_report",
    "pick_runs",
    "sync_selection_from_url",
]
