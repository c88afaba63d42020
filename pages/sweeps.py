"""Sweeps: one question over a grid of levels, seeds and budgets, then how stable and how costly
each level is. Uses the offline model unless the configured model is chosen.

The sweep runs in the script (one ``asyncio.run``, the model built inside it), with the progress
bar updated as each point finishes; the result stays in the session for the charts and downloads.
"""

from __future__ import annotations

import asyncio

import pandas as pd
import streamlit as st

from graphrag_app.controls import pick_index
from graphrag_app.navigation import ensure_app_navigation
from graphrag_app.settings import load_settings
from graphrag_app.sweep_charts import sweep_figures
from graphrag_app.views import escape_markdown
from graphrag_core.errors import GraphRAGError
from graphrag_core.llm.base import ChatModel
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.settings import ModelSettings, build_chat_model
from graphrag_core.models import LEAF, Index
from graphrag_core.request import DEFAULT_MAP_TOKEN_BUDGET, DEFAULT_RATING_THRESHOLD, DEFAULT_REDUCE_TOKEN_BUDGET, DYNAMIC, MAX_RATING, SearchDefaults
from graphrag_core.store import RunStore
from graphrag_core.sweep import SweepProgress, SweepResult, SweepSpec, run_sweep

ensure_app_navigation()

INDEX_KEY = "sweep_index"
FOLDER_KEY = "sweep_folder"
QUESTION_KEY = "sweep_question"
LEVELS_KEY = "sweep_levels"
SEEDS_KEY = "sweep_seeds"
MAP_BUDGETS_KEY = "sweep_map_budgets"
REDUCE_BUDGETS_KEY = "sweep_reduce_budgets"
MODEL_KEY = "sweep_model"
SAVE_KEY = "sweep_save_runs"
RUN_KEY = "sweep_run"
RESULT_KEY = "sweep_result"
THRESHOLD_KEY = "sweep_rating_threshold"
MAX_POINTS = 200  # a bigger grid is refused: it would hold the page for too long
DEFAULT_QUESTION = "What are the main themes of this corpus?"
PLOTLY_CONFIG = {"displaylogo": False}


def parse_ints(text: str, *, name: str, minimum: int) -> list[int]:
    """``"1, 2 3"`` -> ``[1, 2, 3]``; ``ValueError`` naming the box for anything else."""
    values = []
    for part in text.replace(",", " ").split():
        try:
            value = int(part)
        except ValueError:
            raise ValueError(f"{name}: {part[:20]!r} is not a whole number.") from None
        if value < minimum:
            raise ValueError(f"{name}: {value} is below {minimum}.")
        values.append(value)
    return values


def level_options(index: Index) -> list[str]:
    """The grid's selections: leaf, each level, and dynamic selection (the model rates communities)."""
    return [LEAF, *(str(level) for level in index.levels()), DYNAMIC]


def level_label(value: str, counts: dict[int | str, int]) -> str:
    if value == DYNAMIC:
        return "dynamic (rated from the roots down)"
    return f"{'leaf' if value == LEAF else 'level ' + value} ({counts.get(value if value == LEAF else int(value), 0)} summaries)"


def sweep_model(choice: str, configured: ModelSettings) -> ChatModel:
    """Built inside the sweep's event loop: an OpenAI client must not outlive its loop."""
    if choice == "configured":
        return build_chat_model(configured)
    return OfflineChatModel()


def run_grid(index: Index, spec: SweepSpec, *, model_choice: str, configured: ModelSettings, store: RunStore | None, index_path: str) -> SweepResult:
    bar = st.progress(0.0, text=f"0 of {len(spec)} points")

    def on_progress(progress: SweepProgress) -> None:
        point = progress.point
        bar.progress(
            progress.done / progress.total,
            text=f"{progress.done} of {progress.total} points · last: level {point.level}, seed {point.seed}: {point.status}",
        )

    async def main() -> SweepResult:
        model = sweep_model(model_choice, configured)
        return await run_sweep(index, spec, model, on_progress=on_progress, store=store, index_path=index_path)

    return asyncio.run(main())


def draw_result(result: SweepResult) -> None:
    failed = sum(1 for p in result.points if p.failed)
    st.subheader("Results")
    st.caption(
        f"{len(result.points)} points in {result.duration_s:.1f}s with {escape_markdown(result.model)}"
        + (f" · {failed} failed" if failed else "")
    )
    figures = sweep_figures(result)
    left, right = st.columns(2)
    left.plotly_chart(figures["stability"], key="sweep_stability", config=PLOTLY_CONFIG)
    right.plotly_chart(figures["cost"], key="sweep_cost", config=PLOTLY_CONFIG)
    st.plotly_chart(figures["points"], key="sweep_points_status", config=PLOTLY_CONFIG)
    left, right = st.columns(2)
    left.plotly_chart(figures["communities"], key="sweep_communities", config=PLOTLY_CONFIG)
    right.plotly_chart(figures["tokens"], key="sweep_tokens", config=PLOTLY_CONFIG)
    rows = result.to_rows()
    for row in rows:
        row["community_ids"] = ", ".join(row["community_ids"])
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="sweep_points")
    cols = st.columns([1, 1, 4])
    cols[0].download_button(
        "Download CSV", result.to_csv(), file_name=f"sweep-{result.sweep_id[:8]}.csv", mime="text/csv", key="sweep_csv", on_click="ignore", icon=":material/download:"
    )
    cols[1].download_button(
        "Download JSON", result.to_json(), file_name=f"sweep-{result.sweep_id[:8]}.json", mime="application/json", key="sweep_json", on_click="ignore", icon=":material/download:"
    )


st.title("Sweeps")
st.caption("Ask one question over a grid of levels, seeds and budgets: how much does the answer depend on them, and what does each level cost?")

app = load_settings()
pick, folder = st.columns([1, 2], vertical_alignment="bottom")
opened = pick_index(app, index_key=INDEX_KEY, folder_key=FOLDER_KEY, choice=pick, folder=folder)
if opened.error or opened.index is None or opened.source is None:
    st.error(escape_markdown(opened.error or "The index could not be opened."), icon=":material/folder_off:")
    st.stop()
index = opened.index

options = level_options(index)
if QUESTION_KEY not in st.session_state:
    st.session_state[QUESTION_KEY] = DEFAULT_QUESTION
st.session_state[LEVELS_KEY] = [v for v in st.session_state.get(LEVELS_KEY, options[:2]) if v in options]
st.session_state.setdefault(SEEDS_KEY, "0, 1, 2")
st.session_state.setdefault(MAP_BUDGETS_KEY, str(DEFAULT_MAP_TOKEN_BUDGET))
st.session_state.setdefault(REDUCE_BUDGETS_KEY, str(DEFAULT_REDUCE_TOKEN_BUDGET))

counts = index.summary_counts()
st.text_input("Question", key=QUESTION_KEY)
c1, c2 = st.columns(2)
c1.multiselect(
    "Levels",
    options,
    key=LEVELS_KEY,
    format_func=lambda v: level_label(v, counts),
    help="Pick dynamic too to compare dynamic selection with fixed levels in one sweep.",
)
c2.text_input("Seeds", key=SEEDS_KEY, help="Whole numbers separated by commas or spaces.")
c3, c4 = st.columns(2)
c3.text_input("Map token budgets", key=MAP_BUDGETS_KEY, help="One or more, separated by commas.")
c4.text_input("Reduce token budgets", key=REDUCE_BUDGETS_KEY, help="One or more, separated by commas.")
configured_name = app.model.describe().get("model", app.model.provider) if app.model.provider == "openai" else None
model_labels = {"offline": "Offline (no network)", "configured": f"Configured model ({configured_name})" if configured_name else "Configured model (offline: nothing configured)"}
if DYNAMIC in st.session_state[LEVELS_KEY]:
    st.session_state.setdefault(THRESHOLD_KEY, DEFAULT_RATING_THRESHOLD)
    st.slider("Rating threshold (dynamic)", min_value=0, max_value=MAX_RATING, step=1, key=THRESHOLD_KEY, help="A community rated at least this (0-5) is kept.")
m1, m2 = st.columns(2)
m1.radio("Model", list(model_labels), key=MODEL_KEY, format_func=model_labels.__getitem__, horizontal=True)
m2.checkbox("Save each point's run to the history (to open it on Compare)", key=SAVE_KEY)

spec: SweepSpec | None = None
problem: str | None = None
try:
    levels = [v if v in (LEAF, DYNAMIC) else int(v) for v in st.session_state[LEVELS_KEY]]
    spec = SweepSpec(
        base=SearchDefaults(rating_threshold=int(st.session_state.get(THRESHOLD_KEY, DEFAULT_RATING_THRESHOLD))),
        query=st.session_state[QUESTION_KEY],
        levels=levels,
        seeds=parse_ints(st.session_state[SEEDS_KEY], name="Seeds", minimum=0),
        map_token_budgets=parse_ints(st.session_state[MAP_BUDGETS_KEY], name="Map token budgets", minimum=1),
        reduce_token_budgets=parse_ints(st.session_state[REDUCE_BUDGETS_KEY], name="Reduce token budgets", minimum=1),
    )
    if len(spec) > MAX_POINTS:
        problem = f"This grid has {len(spec)} points; at most {MAX_POINTS} run from this page (use the command line for more)."
except (GraphRAGError, ValueError) as exc:
    problem = str(exc).splitlines()[0]

if problem:
    st.warning(escape_markdown(problem), icon=":material/warning:")
elif spec is not None:
    st.caption(f"{len(spec)} points: {len(spec.levels)} level(s) × {len(spec.seeds)} seed(s) × {len(spec.map_token_budgets) or 1} map budget(s) × {len(spec.reduce_token_budgets) or 1} reduce budget(s).")
if app.model_error and st.session_state.get(MODEL_KEY) == "configured":
    st.warning(f"Model settings ignored: {escape_markdown(app.model_error)}", icon=":material/warning:")

if st.button("Run sweep", key=RUN_KEY, type="primary", disabled=spec is None or problem is not None, icon=":material/play_arrow:") and spec is not None:
    store = RunStore(app.store_path) if st.session_state.get(SAVE_KEY) else None
    try:
        st.session_state[RESULT_KEY] = run_grid(
            index, spec, model_choice=str(st.session_state.get(MODEL_KEY, "offline")), configured=app.model, store=store, index_path=str(opened.source.path)
        )
    except GraphRAGError as exc:  # a failed point is recorded by the sweep; this is a failure of the whole sweep
        st.error(f"The sweep stopped ({type(exc).__name__}): {escape_markdown(str(exc))}", icon=":material/error:")

result = st.session_state.get(RESULT_KEY)
if isinstance(result, SweepResult):
    draw_result(result)
