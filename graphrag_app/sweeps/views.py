"""The Sweeps page's panels: the grid's form, Run and Stop, the sweep followed while it runs, and
its result (charts, a table linking each saved point's run, downloads).

The sweep runs as a background job (:func:`graphrag_app.jobs.start_sweep`, like Explore's runs):
Stop keeps the points finished so far, map answers come from the map cache when a point repeats a
request, and each point's run can be saved and opened from the table. Each panel takes the
container to draw into; the page only lays them out.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.errors import GraphRAGError, PreflightError
from graphrag_core.figures import Price, spend_line
from graphrag_core.inputs import parse_ints
from graphrag_core.levels import DYNAMIC, LEAF, Level, level_label, level_text, parse_level
from graphrag_core.llm.settings import ModelSettings, resolve_model_settings
from graphrag_core.models import Index
from graphrag_core.request import DEFAULT_MAP_TOKEN_BUDGET, DEFAULT_RATING_THRESHOLD, DEFAULT_REDUCE_TOKEN_BUDGET, MAX_RATING, SearchDefaults, check_seed
from graphrag_core.samples import is_starting_question, starting_question
from graphrag_core.status import RunStatus
from graphrag_core.sweep import SweepPoint, SweepResult, SweepSpec
from graphrag_core.tokens import ENDPOINT, TOKENIZER_NAMES
from graphrag_core.wording import counted

from ..loaders import OpenedIndex

from ..previews import level_costs_for
from ..text import escape_markdown, short_count
from ..jobs import cache_factory
from ..previews import LevelCosts
from ..panels.link_tables import link_table
from ..settings import build_model, shared_preflight
from ..jobs import check_model, follow, start_sweep
from ..settings import MODEL_PICKS, AppSettings, configured_model_name
from .state import LEVELS, MAP_BUDGETS, MODEL, QUESTION, REDUCE_BUDGETS, RUN_KEY, SAVE_RUNS, SEEDS, STOP_KEY, THRESHOLD, TOKENIZER, SweepsState
from .charts import sweep_figures
from ..urls import run_url
from ..widgets import LEVEL_HELP, TOKENIZER_HELP

POLL_S = 0.25
MAX_POINTS = 200  # a bigger grid is refused: it would hold the page for too long
PLOTLY_CONFIG = {"displaylogo": False}
TABLE_COLUMNS: dict[str, str] = {
    "point": "point",
    "level": "level",
    "seed": "seed",
    "map_token_budget": "map budget",
    "reduce_token_budget": "reduce budget",
    "status": "status",
    "run": "run",
    "batches": "batches",
    "calls_as_if_uncached": "model calls as if uncached",
    "model_calls": "model calls",
    "cache_hits": "cache hits",
    "prompt_tokens": "prompt tokens (est.)",
    "tokens_spent": "tokens spent",
    "rating_calls": "rating calls",
    "rating_tokens": "rating tokens",
    "communities_cited": "communities cited",
    "communities_behind": "communities behind",
    "unsupported_citations": "unsupported citations",
    "duration_s": "duration (s)",
    "failed_batch_count": "failed batches",
    "error": "error",
}
"""The sweep table's readable headers (the CSV and JSON keep the field names). Points compare by
their calls as if uncached; the calls spent stand beside them."""


def level_options(index: Index) -> list[str]:
    """The grid's selections: leaf, each level, and dynamic selection (the model rates communities)."""
    return [level_text(level) for level in (LEAF, *index.levels(), DYNAMIC)]


def draw_form(container: DeltaGenerator, opened: OpenedIndex, app: AppSettings) -> tuple[SweepSpec | None, str | None]:
    """The grid's form; the sweep it describes, or why there is none."""
    index = opened.index
    assert index is not None and opened.source is not None  # the page stops on an index it cannot open
    options = level_options(index)
    if not QUESTION.present or is_starting_question(str(QUESTION.value)):  # an untouched question follows the index
        QUESTION.set(starting_question(opened.source.key))
    SAVE_RUNS.setdefault(True)
    LEVELS.set([v for v in (LEVELS.value if LEVELS.present else options[:2]) if v in options])
    SEEDS.setdefault("0, 1, 2")
    MAP_BUDGETS.setdefault(str(DEFAULT_MAP_TOKEN_BUDGET))
    REDUCE_BUDGETS.setdefault(str(DEFAULT_REDUCE_TOKEN_BUDGET))
    TOKENIZER.setdefault(SearchDefaults().tokenizer)
    counts = index.summary_counts()
    costs = first_point_costs(opened, app)

    def label(option: str) -> str:
        """``leaf · ≈515k tokens · 262 summaries``: each level's map prompt tokens at the grid's
        first budgets and seed (the estimate Explore's preview shows for those settings)."""
        level = parse_level(option)
        if level == DYNAMIC:
            return f"{level_label(level)} (rated from the roots down)"
        cost = costs.get(option) if costs else None
        tokens = f" · ≈{short_count(cost.map_prompt_tokens)} tokens" if cost is not None and cost.map_prompt_tokens is not None else ""
        return f"{level_label(level)}{tokens} · {counts.get(level, 0):,} summaries"

    configured = configured_model_name(app)
    model_words = {"offline": "Offline (no network)", "configured": f"Configured model ({configured})" if configured else "Configured model (offline: nothing configured)"}
    with container:
        st.text_input("Question", key=QUESTION.key)
        st.multiselect(  # across the page: each level's tag is long (its tokens and summaries)
            "Levels", options, key=LEVELS.key, format_func=label, help=LEVEL_HELP + " Pick dynamic too to compare dynamic selection with fixed levels in one sweep."
        )
        c2, c3, c4 = st.columns(3)
        c2.text_input("Seeds", key=SEEDS.key, help="Whole numbers separated by commas or spaces.")
        c3.text_input("Map token budgets", key=MAP_BUDGETS.key, help="One or more, separated by commas.")
        c4.text_input("Reduce token budgets", key=REDUCE_BUDGETS.key, help="One or more, separated by commas.")
        if DYNAMIC in LEVELS.value:
            THRESHOLD.setdefault(DEFAULT_RATING_THRESHOLD)
            st.slider("Rating threshold (dynamic)", min_value=0, max_value=MAX_RATING, step=1, key=THRESHOLD.key, help="A community rated at least this (0-5) is kept.")
        m1, m2 = st.columns([2, 1])
        m1.radio("Model", list(model_words), key=MODEL.key, format_func=model_words.__getitem__, horizontal=True)
        m2.selectbox("Tokenizer", list(TOKENIZER_NAMES), key=TOKENIZER.key, help=TOKENIZER_HELP + " endpoint: the configured model server's own count (its /tokenize).")
        st.checkbox("Save each point's run to the history", key=SAVE_RUNS.key, help="To open each point's run from the results table, or on Compare.")
    return grid_spec(app)


def first_point_costs(opened: OpenedIndex, app: AppSettings) -> LevelCosts | None:
    """Each level's cost at the grid's first map and reduce budgets and first seed, with its
    question and tokenizer (None while computed, or when the form describes no sweep)."""
    spec, _problem = grid_spec(app)
    if spec is None:
        return None
    map_budget, reduce_budget = (spec.map_token_budgets or [spec.base.map_token_budget])[0], (spec.reduce_token_budgets or [spec.base.reduce_token_budget])[0]
    try:
        request = spec.request_for(LEAF, map_budget, reduce_budget, spec.seeds[0])
    except (GraphRAGError, ValueError):
        return None
    return level_costs_for(opened, request)


def grid_spec(app: AppSettings) -> tuple[SweepSpec | None, str | None]:
    """The sweep the form's widgets describe, or why it cannot run from this page."""
    try:
        levels: list[Level] = [parse_level(value) for value in LEVELS.value]
        threshold = THRESHOLD.value
        spec = SweepSpec(
            base=SearchDefaults.for_front_ends(rating_threshold=int(DEFAULT_RATING_THRESHOLD if threshold is None else threshold), tokenizer=TOKENIZER.value),
            query=QUESTION.value,
            levels=levels,
            seeds=[check_seed(seed) for seed in parse_ints(SEEDS.value, what="Seeds", minimum=0)],
            map_token_budgets=parse_ints(MAP_BUDGETS.value, what="Map token budgets", minimum=1),
            reduce_token_budgets=parse_ints(REDUCE_BUDGETS.value, what="Reduce token budgets", minimum=1),
        )
    except (GraphRAGError, ValueError) as exc:
        return None, str(exc).splitlines()[0]
    if len(spec) > MAX_POINTS:
        return spec, f"This grid has {len(spec)} points; at most {MAX_POINTS} run from this page (use the command line for more)."
    if spec.base.tokenizer == ENDPOINT and (MODEL.value != "configured" or app.model.provider != "openai"):
        return spec, (
            "The endpoint tokenizer counts with the model server's own /tokenize, and the offline model has no server: "
            "choose the configured model, or another tokenizer."
        )
    return spec, None


def draw_grid_summary(container: DeltaGenerator, spec: SweepSpec | None, problem: str | None, app: AppSettings) -> None:
    """What the grid holds, or why it cannot run."""
    with container:
        if problem:
            st.warning(escape_markdown(problem), icon=":material/warning:")
        elif spec is not None:
            st.caption(
                f"{counted(len(spec), 'point')}: {counted(len(spec.levels), 'level')} × {counted(len(spec.seeds), 'seed')} × "
                f"{counted(len(spec.map_token_budgets) or 1, 'map budget')} × {counted(len(spec.reduce_token_budgets) or 1, 'reduce budget')}."
            )
        if app.model_error and MODEL.value == "configured":
            st.warning(f"Model settings ignored: {escape_markdown(app.model_error)}", icon=":material/warning:")


def chosen_model(app: AppSettings) -> ModelSettings:
    """The model the form chose, through the one resolver every front end uses."""
    return resolve_model_settings(app.model, MODEL_PICKS[str(MODEL.value or "offline")])


def start_clicked(index: Index, spec: SweepSpec, *, app: AppSettings, index_path: str) -> None:
    """Callback of "Run sweep": start the sweep as a background job (the page then follows it),
    unless the model cannot be called: then nothing starts and the page says why, naming the
    endpoint (the check spends no tokens; the offline model has nothing to check)."""
    page = SweepsState.get()
    if page.running:
        return
    settings = chosen_model(app)
    try:
        check_model(build_model(settings), checks=shared_preflight())
    except PreflightError as exc:
        page.refused = str(exc)
        return
    page.result = None
    page.job = start_sweep(
        index,
        spec,
        lambda: build_model(settings),
        store_path=app.store_path if SAVE_RUNS.value else None,
        index_path=index_path,
        cache_factory=cache_factory(app.cache_path),
    )


def stop_clicked() -> None:
    job = SweepsState.get().job
    if job is not None:
        job.request_stop()


def draw_buttons(container: DeltaGenerator, page: SweepsState, opened: OpenedIndex, spec: SweepSpec | None, problem: str | None, app: AppSettings) -> None:
    """Run sweep and Stop, and why the last click started nothing or why the last sweep ended early."""
    with container:
        run_col = stop_col = st.container(horizontal=True, vertical_alignment="center")  # buttons as wide as their labels
        run_col.button(
            "Run sweep",
            key=RUN_KEY,
            type="primary",
            disabled=page.running or spec is None or problem is not None,
            icon=":material/play_arrow:",
            on_click=start_clicked,
            args=(opened.index, spec),
            kwargs={"app": app, "index_path": str(opened.source.path) if opened.source else None},
        )
        stop_col.button("Stop", key=STOP_KEY, disabled=not page.running, on_click=stop_clicked, icon=":material/stop:")
        if page.refused:
            st.error(escape_markdown(page.refused), icon=":material/cloud_off:")
            page.refused = None
        if page.ended_early:
            st.warning(escape_markdown(page.ended_early), icon=":material/stop_circle:")
            page.ended_early = None


def _progress_text(points: list[SweepPoint], total: int, elapsed: float) -> str:
    last = points[-1] if points else None
    detail = f" · last: {level_label(last.level)}, seed {last.seed}: {RunStatus(last.status).word}" if last else ""
    return f"{len(points):,} of {total:,} points · {elapsed:.0f}s{detail}"


def follow_sweep(container: DeltaGenerator, page: SweepsState) -> None:
    """Show the sweep's progress until it ends, then keep its result for the charts."""
    job = page.job
    if job is None:
        return
    bar = container.progress(0.0, text=f"0 of {job.total:,} points")
    follow(job, [], lambda points: bar.progress(len(points) / max(job.total, 1), text=_progress_text(points, job.total, job.elapsed())), interval=POLL_S)
    page.result, page.job = job.result, None
    if job.stopped:
        done = len(job.result.points) if job.result else 0
        page.ended_early = f"Stopped after {done:,} of {job.total:,} points; the finished points are shown."
    elif job.error:
        page.ended_early = f"The sweep stopped ({job.error_type}): {job.error}"
    st.rerun()


def points_table(result: SweepResult) -> pd.DataFrame:
    """One row per point with readable headers and a link to each saved run."""
    rows = []
    for row in result.to_rows():
        row["communities_behind"] = len(row.pop("community_ids"))
        row["communities_cited"] = len(row.pop("cited_community_ids"))
        row["unsupported_citations"] = row.pop("unsupported_citation_count")
        row["run"] = run_url(row["run_id"]) if row.get("run_id") else None
        row["duration_s"] = round(row["duration_s"], 2)
        row["batches"] = row["batch_count"]
        row["level"] = level_text(row["level"])  # leaf, 1, dynamic: one column type
        rows.append({header: row.get(name) for name, header in TABLE_COLUMNS.items()})
    table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS.values()))
    if not any(point.failed or point.failed_batch_count for point in result.points):
        table = table.drop(columns=["failed batches", "error"])  # narrow enough to read without scrolling
    if not any(point.rating_calls for point in result.points):
        table = table.drop(columns=["rating calls", "rating tokens"])  # no dynamic point
    if not any(point.unsupported_citation_count for point in result.points):
        table = table.drop(columns=["unsupported citations"])
    return table


def draw_result(container: DeltaGenerator, result: SweepResult, *, price: Price | None) -> None:
    failed = sum(1 for p in result.points if p.failed)
    with container:
        st.subheader("Results")
        st.caption(
            f"{len(result.points):,} points in {result.duration_s:.1f}s with {escape_markdown(result.model or '-')}"
            + (f" · {failed:,} failed" if failed else "")
            + f" · {escape_markdown(spend_line(result.spend(), price))}"
        )
        if not result.points:
            return
        figures = sweep_figures(result)
        left, right = st.columns(2)
        left.plotly_chart(figures["stability"], key="sweep_stability", config=PLOTLY_CONFIG)
        right.plotly_chart(figures["cost"], key="sweep_cost", config=PLOTLY_CONFIG)
        st.plotly_chart(figures["points"], key="sweep_points_status", config=PLOTLY_CONFIG)
        left, right = st.columns(2)
        left.plotly_chart(figures["communities"], key="sweep_communities", config=PLOTLY_CONFIG)
        right.plotly_chart(figures["tokens"], key="sweep_tokens", config=PLOTLY_CONFIG)
        link_table(
            st.container(),
            points_table(result),
            link_column="run",
            key="sweep_points",
            open_column="open run",
            open_help="Open this point's run on Explore (saved runs only).",
            hide_index=True,
            width="stretch",
            column_config={
                "error": st.column_config.TextColumn("error", width="medium"),
                "prompt tokens (est.)": st.column_config.NumberColumn(format="localized"),  # 523,132
                "tokens spent": st.column_config.NumberColumn(format="localized"),
            },
        )
        if not any(p.run_id for p in result.points):
            st.caption("Tick “Save each point's run to the history” to open each point's run from this table.")
        stem = f"sweep-{result.sweep_id[:8]}"
        cols = [st.container(horizontal=True)] * 2  # buttons as wide as their labels
        cols[0].download_button("Download CSV", result.to_csv(), file_name=f"{stem}.csv", mime="text/csv", key="sweep_csv", on_click="ignore", icon=":material/download:")
        cols[1].download_button(
            "Download JSON", result.to_json(), file_name=f"{stem}.json", mime="application/json", key="sweep_json", on_click="ignore", icon=":material/download:"
        )


__all__ = [
    "draw_buttons",
    "draw_form",
    "draw_grid_summary",
    "draw_result",
    "follow_sweep",
    "grid_spec",
    "level_options",
    "points_table",
]
