"""Sweeps: one question over a grid of levels, seeds and budgets, then how stable and how costly
each level is. Uses the offline model unless the configured model is chosen.

The sweep runs as a background job on the app's one runner (``graphrag_app.runner.start_sweep``,
like Explore's runs): Stop keeps the points finished so far, map answers come from the map cache
when a point repeats a request, and each point's run can be saved and opened from the table.
"""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from graphrag_app.controls import HELP, level_sections_for, open_picked_index, short_count
from graphrag_app.navigation import ensure_app_navigation
from graphrag_app.runner import SweepHandle, start_sweep
from graphrag_app.settings import load_settings
from graphrag_app.sweep_charts import sweep_figures
from graphrag_app.views import escape_markdown
from graphrag_core.cache import SqliteMapCache
from graphrag_core.errors import GraphRAGError, PreflightError
from graphrag_core.llm.base import ChatModel
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.settings import ModelSettings, build_chat_model
from graphrag_core.models import LEAF, Index
from graphrag_core.preflight import preflight_sync
from graphrag_core.request import DEFAULT_MAP_TOKEN_BUDGET, DEFAULT_RATING_THRESHOLD, DEFAULT_REDUCE_TOKEN_BUDGET, DYNAMIC, MAX_RATING, SearchDefaults
from graphrag_core.samples import sample_question
from graphrag_core.figures import spend_line
from graphrag_core.sweep import SweepResult, SweepSpec
from graphrag_core.tokens import ENDPOINT, TOKENIZER_NAMES

ensure_app_navigation()

INDEX_KEY = "sweep_index"
FOLDER_KEY = "sweep_folder"
QUESTION_KEY = "sweep_question"
LEVELS_KEY = "sweep_levels"
SEEDS_KEY = "sweep_seeds"
MAP_BUDGETS_KEY = "sweep_map_budgets"
REDUCE_BUDGETS_KEY = "sweep_reduce_budgets"
MODEL_KEY = "sweep_model"
TOKENIZER_KEY = "sweep_tokenizer"
SAVE_KEY = "sweep_save_runs"
RUN_KEY = "sweep_run"
STOP_KEY = "sweep_stop"
RESULT_KEY = "sweep_result"
THRESHOLD_KEY = "sweep_rating_threshold"
JOB_KEY = "sweep_job"
REFUSED_KEY = "sweep_refused"  # why the last click of "Run sweep" started nothing (e.g. an unreachable endpoint)
POLL_S = 0.25
MAX_POINTS = 200  # a bigger grid is refused: it would hold the page for too long
DEFAULT_QUESTION = "What are the main themes of this corpus?"
PLOTLY_CONFIG = {"displaylogo": False}
EXPLORE_URL = "./"
TABLE_COLUMNS: dict[str, str] = {
    "index": "point",
    "level": "level",
    "seed": "seed",
    "map_token_budget": "map budget",
    "reduce_token_budget": "reduce budget",
    "status": "status",
    "run": "run",
    "batches": "batches",
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
}  # the sweep table's readable headers (the CSV and JSON keep the field names)


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


def start_clicked(index: Index, spec: SweepSpec, *, model_choice: str, configured: ModelSettings, store_path, cache_path, index_path: str) -> None:
    """Callback of "Run sweep": start the sweep as a background job (the page then follows it),
    unless the model cannot be called: then nothing starts and the page says why, naming the
    endpoint (the check spends no tokens; the offline model has nothing to check)."""
    job = st.session_state.get(JOB_KEY)
    if isinstance(job, SweepHandle) and not job.done:
        return
    try:
        preflight_sync(sweep_model(model_choice, configured))
    except PreflightError as exc:
        st.session_state[REFUSED_KEY] = str(exc)
        return
    st.session_state.pop(RESULT_KEY, None)
    st.session_state[JOB_KEY] = start_sweep(
        index,
        spec,
        lambda: sweep_model(model_choice, configured),
        store_path=store_path,
        index_path=index_path,
        cache_factory=(lambda: SqliteMapCache(cache_path)) if cache_path is not None else None,
    )


def stop_clicked() -> None:
    job = st.session_state.get(JOB_KEY)
    if isinstance(job, SweepHandle):
        job.request_stop()


def follow_sweep(job: SweepHandle) -> None:
    """Show the sweep's progress until it ends, then keep its result for the charts."""
    bar = st.progress(0.0, text=f"0 of {job.total:,} points")
    while not job.done:
        points = job.points()
        last = points[-1] if points else None
        detail = f" · last: {_level_text(last.level)}, seed {last.seed}: {last.status}" if last else ""
        bar.progress(len(points) / max(job.total, 1), text=f"{len(points):,} of {job.total:,} points · {job.elapsed():.0f}s{detail}")
        time.sleep(POLL_S)
    st.session_state[RESULT_KEY] = job.result
    st.session_state[JOB_KEY] = None
    if job.error and not job.stopped:
        st.session_state[f"{JOB_KEY}_error"] = f"The sweep stopped ({job.error_type}): {job.error}"
    elif job.stopped:
        done = len(job.result.points) if job.result else 0
        st.session_state[f"{JOB_KEY}_error"] = f"Stopped after {done:,} of {job.total:,} points; the finished points are shown."
    st.rerun()


def _level_text(level: object) -> str:
    return "leaf" if level == LEAF else f"level {level}"


def points_table(result: SweepResult) -> pd.DataFrame:
    """One row per point with readable headers and a link to each saved run."""
    rows = []
    for row in result.to_rows():
        row["communities_behind"] = len(row.pop("community_ids"))
        row["communities_cited"] = len(row.pop("cited_community_ids"))
        row["unsupported_citations"] = row.pop("unsupported_citation_count")
        row["run"] = f"{EXPLORE_URL}?run={row['run_id']}" if row.get("run_id") else None
        row["duration_s"] = round(row["duration_s"], 2)
        row["batches"] = row["batch_count"]
        row["level"] = str(row["level"])  # leaf, 1, dynamic: one column type
        rows.append({header: row.get(name) for name, header in TABLE_COLUMNS.items()})
    table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS.values()))
    if not any(point.failed or point.failed_batch_count for point in result.points):
        table = table.drop(columns=["failed batches", "error"])  # narrow enough to read without scrolling
    if not any(point.rating_calls for point in result.points):
        table = table.drop(columns=["rating calls", "rating tokens"])  # no dynamic point
    if not any(point.unsupported_citation_count for point in result.points):
        table = table.drop(columns=["unsupported citations"])
    return table


def draw_result(result: SweepResult) -> None:
    failed = sum(1 for p in result.points if p.failed)
    st.subheader("Results")
    price = load_settings().model.price
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
    st.dataframe(
        points_table(result),
        hide_index=True,
        width="stretch",
        key="sweep_points",
        column_config={
            "run": st.column_config.LinkColumn("run", display_text="open run", help="Open this point's run on Explore (saved runs only)."),
            "error": st.column_config.TextColumn("error", width="medium"),
            "prompt tokens (est.)": st.column_config.NumberColumn(format="localized"),  # 523,132
            "tokens spent": st.column_config.NumberColumn(format="localized"),
        },
    )
    if not any(p.run_id for p in result.points):
        st.caption("Tick “Save each point's run to the history” to open each point's run from this table.")
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
opened = open_picked_index(app, index_key=INDEX_KEY, folder_key=FOLDER_KEY)
index = opened.index

options = level_options(index)
if QUESTION_KEY not in st.session_state:
    st.session_state[QUESTION_KEY] = sample_question(opened.source.key) or DEFAULT_QUESTION
st.session_state.setdefault(SAVE_KEY, True)
st.session_state[LEVELS_KEY] = [v for v in st.session_state.get(LEVELS_KEY, options[:2]) if v in options]
st.session_state.setdefault(SEEDS_KEY, "0, 1, 2")
st.session_state.setdefault(MAP_BUDGETS_KEY, str(DEFAULT_MAP_TOKEN_BUDGET))
st.session_state.setdefault(REDUCE_BUDGETS_KEY, str(DEFAULT_REDUCE_TOKEN_BUDGET))

counts = index.summary_counts()
st.text_input("Question", key=QUESTION_KEY)
c1, c2 = st.columns(2)
sections = level_sections_for(opened)


def sweep_level_label(value: str) -> str:
    """``leaf · ≈496k tokens · 262 summaries``: what each level costs with claims and excerpts in."""
    if value == DYNAMIC:
        return level_label(value, counts)
    name = "leaf" if value == LEAF else f"level {value}"
    summaries = counts.get(value if value == LEAF else int(value), 0)
    tokens = f" · ≈{short_count(sum(sections[value]))} tokens" if sections and value in sections else ""
    return f"{name}{tokens} · {summaries:,} summaries"


c1.multiselect(
    "Levels",
    options,
    key=LEVELS_KEY,
    format_func=sweep_level_label,
    help=HELP["level"] + " Pick dynamic too to compare dynamic selection with fixed levels in one sweep.",
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
m1, m2, m3 = st.columns([2, 1, 2])
m1.radio("Model", list(model_labels), key=MODEL_KEY, format_func=model_labels.__getitem__, horizontal=True)
st.session_state.setdefault(TOKENIZER_KEY, SearchDefaults().tokenizer)
m2.selectbox("Tokenizer", list(TOKENIZER_NAMES), key=TOKENIZER_KEY, help=HELP["tokenizer"] + " endpoint: the configured model server's own count (its /tokenize).")
m3.checkbox("Save each point's run to the history (to open it from the table or on Compare)", key=SAVE_KEY)

spec: SweepSpec | None = None
problem: str | None = None
try:
    levels = [v if v in (LEAF, DYNAMIC) else int(v) for v in st.session_state[LEVELS_KEY]]
    spec = SweepSpec(
        base=SearchDefaults(
            rating_threshold=int(st.session_state.get(THRESHOLD_KEY, DEFAULT_RATING_THRESHOLD)), tokenizer=st.session_state[TOKENIZER_KEY]
        ),
        query=st.session_state[QUESTION_KEY],
        levels=levels,
        seeds=parse_ints(st.session_state[SEEDS_KEY], name="Seeds", minimum=0),
        map_token_budgets=parse_ints(st.session_state[MAP_BUDGETS_KEY], name="Map token budgets", minimum=1),
        reduce_token_budgets=parse_ints(st.session_state[REDUCE_BUDGETS_KEY], name="Reduce token budgets", minimum=1),
    )
    if len(spec) > MAX_POINTS:
        problem = f"This grid has {len(spec)} points; at most {MAX_POINTS} run from this page (use the command line for more)."
    elif spec.base.tokenizer == ENDPOINT and (st.session_state.get(MODEL_KEY) != "configured" or app.model.provider != "openai"):
        problem = (
            "The endpoint tokenizer counts with the model server's own /tokenize, and the offline model has no server: "
            "choose the configured model, or another tokenizer."
        )
except (GraphRAGError, ValueError) as exc:
    problem = str(exc).splitlines()[0]

if problem:
    st.warning(escape_markdown(problem), icon=":material/warning:")
elif spec is not None:
    st.caption(f"{len(spec)} points: {len(spec.levels)} level(s) × {len(spec.seeds)} seed(s) × {len(spec.map_token_budgets) or 1} map budget(s) × {len(spec.reduce_token_budgets) or 1} reduce budget(s).")
if app.model_error and st.session_state.get(MODEL_KEY) == "configured":
    st.warning(f"Model settings ignored: {escape_markdown(app.model_error)}", icon=":material/warning:")

job = st.session_state.get(JOB_KEY)
running = isinstance(job, SweepHandle) and not job.done
run_col, stop_col, _ = st.columns([1, 1, 5], vertical_alignment="center")
run_col.button(
    "Run sweep",
    key=RUN_KEY,
    type="primary",
    disabled=running or spec is None or problem is not None,
    icon=":material/play_arrow:",
    on_click=start_clicked,
    args=(index, spec),
    kwargs={
        "model_choice": str(st.session_state.get(MODEL_KEY, "offline")),
        "configured": app.model,
        "store_path": app.store_path if st.session_state.get(SAVE_KEY) else None,
        "cache_path": app.cache_path,
        "index_path": str(opened.source.path),
    },
)
stop_col.button("Stop", key=STOP_KEY, disabled=not running, on_click=stop_clicked, icon=":material/stop:")
if refused := st.session_state.pop(REFUSED_KEY, None):
    st.error(escape_markdown(refused), icon=":material/cloud_off:")
if message := st.session_state.pop(f"{JOB_KEY}_error", None):
    st.warning(escape_markdown(message), icon=":material/stop_circle:")
if isinstance(job, SweepHandle):
    follow_sweep(job)

result = st.session_state.get(RESULT_KEY)
if isinstance(result, SweepResult):
    draw_result(result)
