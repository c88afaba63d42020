"""Evaluate: which level, budget or selection mode gives better answers, judged head to head the
way the GraphRAG paper does (``shared/spec/evaluation.md``).

A question set (bundled, uploaded or generated) x conditions x seeds runs in a background thread
(:mod:`graphrag_app.eval_job`) with progress and Stop; the result is a win-rate heatmap per
criterion (rows beat columns), p-values, a cost table and a drill-down to each question's two
answers, the judge's reasons and the runs. Shareable: ``/evaluate?experiment=<id>`` reopens a
finished experiment from the evaluation store. Scores of the offline judge are labelled heuristic.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from graphrag_app.controls import open_picked_index
from graphrag_app.eval_charts import cost_chart, cost_rows, p_value_rows, win_rate_heatmap
from graphrag_app.eval_job import EvalJob, start_evaluation
from graphrag_app.navigation import ensure_app_navigation
from graphrag_app.settings import AppSettings, load_settings
from graphrag_app.urls import RUN_PARAM, provenance_url
from graphrag_app.views import escape_markdown
from graphrag_core.cache import SqliteMapCache
from graphrag_core.citations import SetName, community_sets
from graphrag_core.errors import EvaluationError, GraphRAGError
from graphrag_core.evaluation import (
    CRITERIA,
    Condition,
    EvaluationStore,
    ExperimentResult,
    ExperimentSpec,
    estimate_experiment,
    generate_questions,
    parse_questions,
)
from graphrag_core.evaluation.questions import EvalQuestion, bundled_question_set, questions_to_jsonl
from graphrag_core.evaluation.report import HEURISTIC_NOTE, costs_csv, judge_label, judgments_csv, to_markdown, win_rates_csv
from graphrag_core.evaluation.store import evaluation_store_path
from graphrag_core.llm.base import ChatModel
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.settings import ModelSettings, build_chat_model
from graphrag_core.samples import SAMPLES
from graphrag_core.history import RunStore

ensure_app_navigation()

EXPERIMENT_PARAM = "experiment"
INDEX_KEY, FOLDER_KEY = "eval_index", "eval_folder"
SOURCE_KEY, UPLOAD_KEY, GENERATED_KEY = "eval_source", "eval_upload", "eval_generated"
CONDITIONS_KEY, SEEDS_KEY, CRITERIA_KEY, REPEATS_KEY = "eval_conditions", "eval_seeds", "eval_criteria", "eval_repeats"
MODEL_KEY, JUDGE_KEY, CLAIMS_KEY, AA_KEY = "eval_model", "eval_judge", "eval_claims", "eval_aa"
JOB_KEY, RESULT_KEY, ESTIMATE_KEY = "eval_job", "eval_result", "eval_estimate"
PERSONAS_KEY, TASKS_KEY, PER_TASK_KEY = "eval_personas", "eval_tasks", "eval_per_task"
DEFAULT_CONDITIONS = "C0: level=0\nleaf: level=leaf"
MAX_CALLS_FROM_PAGE = 20_000
POLL_S = 0.4
PLOTLY_CONFIG = {"displaylogo": False}
SOURCES = {"bundled": "Bundled set", "upload": "Upload JSONL or CSV", "generate": "Generate from the index"}


def eval_store_path(app: AppSettings) -> Path:
    """The evaluation store lives beside the run history."""
    return evaluation_store_path(app.store_path)


def chat_model(choice: str, configured: ModelSettings) -> ChatModel:
    """Built inside the job's event loop: an OpenAI client must not outlive its loop."""
    return build_chat_model(configured) if choice == "configured" else OfflineChatModel()


def parse_conditions(text: str) -> list[Condition]:
    """One condition per line, ``NAME: key=value, key=value`` (blank lines and ``#`` comments skipped)."""
    conditions = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, rest = line.partition(":")
            conditions.append(Condition.parse(f"{name.strip()}:{rest.replace(' ', '')}"))
    return conditions


def parse_seeds(text: str) -> list[int]:
    seeds = []
    for part in text.replace(",", " ").split():
        try:
            seeds.append(int(part))
        except ValueError:
            raise EvaluationError(f"Seeds: {part[:20]!r} is not a whole number.") from None
    return seeds


def bundled_questions(index_key: str) -> list[EvalQuestion] | None:
    path = bundled_question_set(index_key)
    return parse_questions(path.read_text(encoding="utf-8"), path.name) if path is not None else None


def draw_questions(index_key: str, index, app: AppSettings) -> list[EvalQuestion] | None:  # noqa: ANN001
    bundled = bundled_questions(index_key)
    options = [s for s in SOURCES if s != "bundled" or bundled is not None]
    if st.session_state.get(SOURCE_KEY) not in options:
        st.session_state[SOURCE_KEY] = options[0]
    st.radio("Question set", options, key=SOURCE_KEY, format_func=SOURCES.__getitem__, horizontal=True)
    source = st.session_state[SOURCE_KEY]
    questions: list[EvalQuestion] | None = None
    if source == "bundled":
        questions = bundled
    elif source == "upload":
        upload = st.file_uploader("Questions", type=["jsonl", "csv"], key=UPLOAD_KEY, help='JSON Lines of {"question": ..., "id": ..., "tags": ...} or a CSV with a question column.')
        if upload is not None:
            try:
                questions = parse_questions(upload.getvalue().decode("utf-8-sig"), upload.name)
            except (EvaluationError, UnicodeDecodeError) as exc:
                st.error(escape_markdown(str(exc)), icon=":material/error:")
    else:
        c1, c2, c3, c4 = st.columns([1, 1, 1, 2], vertical_alignment="bottom")
        c1.number_input("Personas", 1, 10, 3, key=PERSONAS_KEY)
        c2.number_input("Tasks each", 1, 10, 2, key=TASKS_KEY)
        c3.number_input("Questions each", 1, 10, 2, key=PER_TASK_KEY)
        if c4.button("Generate questions", key="eval_generate", icon=":material/auto_awesome:"):
            judge = str(st.session_state.get(JUDGE_KEY, "offline"))

            async def generate() -> list[EvalQuestion]:
                return await generate_questions(
                    index, chat_model(judge, app.model), int(st.session_state[PERSONAS_KEY]), int(st.session_state[TASKS_KEY]), int(st.session_state[PER_TASK_KEY])
                )

            try:
                with st.spinner("Generating questions…"):
                    st.session_state[GENERATED_KEY] = asyncio.run(generate())
            except GraphRAGError as exc:
                st.error(f"Question generation failed: {escape_markdown(str(exc))}", icon=":material/error:")
        questions = st.session_state.get(GENERATED_KEY)
        if questions and judge_is_offline():
            st.caption("Generated by the offline heuristic from the root summaries' titles (templates, not an LLM).")
    if questions:
        with st.expander(f"{len(questions)} questions", expanded=False):
            st.dataframe(
                pd.DataFrame([{"id": q.id, "question": q.question, "tags": "; ".join(f"{k}={v}" if v else k for k, v in q.tags.items())} for q in questions]),
                hide_index=True,
                width="stretch",
                key="eval_questions_table",
            )
            st.download_button("Download JSONL", questions_to_jsonl(questions), file_name="questions.jsonl", key="eval_questions_jsonl", on_click="ignore", icon=":material/download:")
    return questions


def judge_is_offline() -> bool:
    return st.session_state.get(JUDGE_KEY, "offline") == "offline"


def draw_progress(job: EvalJob) -> None:
    snapshot = job.snapshot()
    for stage in ("answers", "claims", "judgments"):
        progress = snapshot.get(stage)
        if progress is not None:
            st.progress(progress.done / max(1, progress.total), text=f"{stage}: {progress.done} of {progress.total} · {escape_markdown(progress.label)}")
    if not snapshot:
        st.progress(0.0, text="starting…")
    st.caption(f"{job.elapsed():.0f} s" + (" · stopping after the current item…" if job.stop_requested else ""))


def follow_job(job: EvalJob) -> None:
    st.button("Stop", key="eval_stop", on_click=job.request_stop, icon=":material/stop:", disabled=job.stop_requested)
    slot = st.empty()
    while not job.done:
        with slot.container():
            draw_progress(job)
        time.sleep(POLL_S)
    st.session_state.pop(JOB_KEY, None)
    if job.result is not None:
        st.session_state[RESULT_KEY] = job.result
        if not job.result.stopped:
            st.query_params[EXPERIMENT_PARAM] = job.result.id
    elif job.error:
        st.session_state["eval_error"] = job.error
    st.rerun()


def draw_drilldown(result: ExperimentResult, app: AppSettings) -> None:
    st.subheader("Drill down")
    names = [c.name for c in result.spec.conditions]
    c1, c2, c3, c4 = st.columns([1, 1, 2, 1])
    row = c1.selectbox("Row", names, key="eval_dd_row")
    col = c2.selectbox("Column", names, index=min(1, len(names) - 1), key="eval_dd_col")
    pairs = result.judgments_between(row, col)
    if not pairs:
        st.caption("Nothing was judged between these two." + (" (A/A needs two seeds.)" if row == col else ""))
        return
    labels = {i: f"{j.question_id} · seeds {j.seed_a}/{j.seed_b}" for i, (j, _) in enumerate(pairs)}
    pick = c3.selectbox("Question", list(labels), format_func=lambda i: labels[i] + f" · {(result.question(pairs[i][0].question_id) or EvalQuestion(id='', question='')).question[:60]}", key="eval_dd_question")
    criterion = c4.selectbox("Criterion", list(result.spec.criteria), key="eval_dd_criterion")
    record, flipped = pairs[pick]
    question = result.question(record.question_id)
    st.markdown(f"**Question:** {escape_markdown(question.question if question else record.question_id)}")
    left_name, right_name = (record.col, record.row) if flipped else (record.row, record.col)
    left_seed, right_seed = (record.seed_b, record.seed_a) if flipped else (record.seed_a, record.seed_b)
    answers = [result.answer(record.row, record.question_id, record.seed_a), result.answer(record.col, record.question_id, record.seed_b)]
    if flipped:
        answers.reverse()
    if record.skipped:
        st.warning(escape_markdown(record.skipped), icon=":material/warning:")
    judgment = record.judgment
    score_a = judgment.scores.get(criterion) if judgment else None
    score_row = None if score_a is None else (100 - score_a if flipped else score_a)
    cols = st.columns(2)
    run_ids = []
    for column, name, seed, answer, score in zip(cols, (row, col), (left_seed, right_seed), answers, (score_row, None if score_row is None else 100 - score_row)):
        with column:
            st.markdown(f"**{escape_markdown(name)}** · seed {seed}" + ("" if score is None else f" · {criterion} score {score:.0f}"))
            if answer is None:
                st.caption("No answer.")
                continue
            with st.container(border=True, height=320):
                st.markdown(answer.answer if answer.status != "failed" else f"Failed: {escape_markdown(answer.error or '')}")
            if answer.run_id:
                run_ids.append(answer.run_id)
                links = [f"[:material/travel_explore: Open the run](./?{urlencode({RUN_PARAM: answer.run_id})})"]
                first = first_cited_community(app, answer.run_id)
                if first is not None:
                    community, which = first
                    links.append(
                        f"[:material/account_tree: Provenance of community {escape_markdown(community)} ({'cited' if which == 'cited' else 'behind the answer'})]"
                        f"({provenance_url(index_key_of(result), community, answer.run_id)})"
                    )
                st.markdown(" · ".join(links))
    if len(run_ids) == 2 and run_ids[0] != run_ids[1]:
        st.markdown(f"[:material/compare_arrows: Compare the two runs](compare?{urlencode({'runs': ','.join(run_ids)})})")
    if judgment:
        calls = [c for c in judgment.calls if c.criterion == criterion]
        st.markdown("**Judge calls**" + (" (heuristic)" if result.heuristic_judge else ""))
        shown_first = {"AB": record.row, "BA": record.col}
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "repeat": c.repeat + 1,
                        "shown first": shown_first[c.order],
                        "winner": {1: shown_first[c.order], 2: record.col if c.order == "AB" else record.row, 0: "tie"}.get(c.winner, "failed") if c.winner is not None else "failed",
                        "reason": c.reason or c.error or "",
                        "attempts": c.attempts,
                    }
                    for c in calls
                ]
            ),
            hide_index=True,
            width="stretch",
            key="eval_dd_calls",
        )


def index_key_of(result: ExperimentResult) -> str:
    """The index key (a sample's name, else the folder) the experiment ran on, for links and the picker."""
    if result.index_path:
        for name, path in SAMPLES.items():
            if Path(result.index_path).resolve() == Path(path).resolve():
                return name
        return result.index_path
    return str(st.session_state.get(INDEX_KEY, ""))


def first_cited_community(app: AppSettings, run_id: str) -> tuple[str, SetName] | None:
    """The community the Evaluate page links for a run (``CommunitySets.first_followable``)."""
    try:
        record = RunStore(app.store_path).get(run_id)
    except Exception:  # noqa: BLE001 - a link is optional; a store problem must not break the page
        return None
    if record is None or record.result is None:
        return None
    return community_sets(record.result).first_followable()


def draw_result(result: ExperimentResult, app: AppSettings) -> None:
    st.subheader(f"Experiment {result.id}")
    if result.heuristic_judge:
        st.info(HEURISTIC_NOTE, icon=":material/science:")
    if result.stopped:
        st.warning("Stopped before it finished: the figures cover only what was judged. Start again to resume.", icon=":material/pause:")
    st.caption(
        f"{escape_markdown(result.index_name)} · answers by {escape_markdown(result.model)} · judge {escape_markdown(judge_label(result))} · "
        f"{len(result.spec.questions)} questions × {len(result.spec.conditions)} conditions × {len(result.spec.seeds)} seeds · "
        f"{result.judge_calls} judge calls ({result.judge_calls_failed} failed) · {result.duration_s:.1f} s"
    )
    tabs = st.tabs([f"{c} (heuristic)" if result.heuristic_judge else c for c in result.spec.criteria])
    for tab, criterion in zip(tabs, result.spec.criteria):
        tab.plotly_chart(win_rate_heatmap(result, criterion), key=f"eval_heatmap_{criterion}", config=PLOTLY_CONFIG)
    st.caption("Rows beat columns: a cell is the row's mean score against the column (100 = always won, 50 = even). * Holm-corrected p < 0.05. The diagonal is the A/A check across seeds.")
    with st.expander("p-values (two-sided Wilcoxon signed-rank of per-question scores against 50, Holm-corrected per criterion)"):
        st.dataframe(pd.DataFrame(p_value_rows(result)), hide_index=True, width="stretch", key="eval_pvalues")
    st.subheader("Cost per answer")
    left, right = st.columns([3, 2])
    left.dataframe(pd.DataFrame(cost_rows(result)), hide_index=True, width="stretch", key="eval_costs")
    right.plotly_chart(cost_chart(result), key="eval_cost_chart", config=PLOTLY_CONFIG)
    if result.claims:
        st.subheader("Claims")
        st.dataframe(pd.DataFrame([c.model_dump() for c in result.claims]), hide_index=True, key="eval_claims_table")
    draw_drilldown(result, app)
    st.subheader("Export")
    cols = st.columns(4)
    stem = f"evaluation-{result.id}"
    cols[0].download_button("Markdown report", to_markdown(result), file_name=f"{stem}.md", mime="text/markdown", key="eval_md", on_click="ignore", icon=":material/download:")
    cols[1].download_button("Win rates CSV", win_rates_csv(result), file_name=f"{stem}.win-rates.csv", mime="text/csv", key="eval_csv", on_click="ignore", icon=":material/download:")
    cols[2].download_button("Costs CSV", costs_csv(result), file_name=f"{stem}.costs.csv", mime="text/csv", key="eval_costs_csv", on_click="ignore", icon=":material/download:")
    cols[3].download_button("Judgments CSV", judgments_csv(result), file_name=f"{stem}.judgments.csv", mime="text/csv", key="eval_judgments_csv", on_click="ignore", icon=":material/download:")


st.title("Evaluate")
st.caption(
    "Which level, budget or selection mode gives better answers? Every condition answers every question; an LLM judge compares "
    "every pair of answers on the GraphRAG paper's four criteria, both ways round."
)
app = load_settings()

shared = st.query_params.get(EXPERIMENT_PARAM)
kept = st.session_state.get(RESULT_KEY)
if shared and (not isinstance(kept, ExperimentResult) or kept.id != shared):
    loaded = EvaluationStore(eval_store_path(app)).get_experiment(shared) if eval_store_path(app).exists() else None
    if loaded is None:
        st.warning(f"No finished experiment {escape_markdown(shared)} in {escape_markdown(str(eval_store_path(app)))}.", icon=":material/link_off:")
    else:
        st.session_state[RESULT_KEY] = loaded
        if index_key_of(loaded) in SAMPLES:  # open the form on the experiment's index and settings
            st.session_state[INDEX_KEY] = index_key_of(loaded)
        st.session_state[CONDITIONS_KEY] = "\n".join(f"{c.name}: {', '.join(f'{k}={v}' for k, v in c.overrides.items())}" for c in loaded.spec.conditions)
        st.session_state[SEEDS_KEY] = ", ".join(map(str, loaded.spec.seeds))
        st.session_state[CRITERIA_KEY] = list(loaded.spec.criteria)

opened = open_picked_index(app, index_key=INDEX_KEY, folder_key=FOLDER_KEY)
index = opened.index

configured_name = app.model.describe().get("model", app.model.provider) if app.model.provider == "openai" else None
model_labels = {"offline": "Offline", "configured": f"Configured ({configured_name})" if configured_name else "Configured (nothing configured: offline)"}
m1, m2 = st.columns(2)
m1.radio("Answering model", list(model_labels), key=MODEL_KEY, format_func=model_labels.__getitem__, horizontal=True)
m2.radio("Judge", list(model_labels), key=JUDGE_KEY, format_func=lambda v: "Offline heuristic (not an LLM)" if v == "offline" else model_labels[v], horizontal=True)

questions = draw_questions(str(st.session_state.get(INDEX_KEY, "")), index, app)

st.session_state.setdefault(CONDITIONS_KEY, DEFAULT_CONDITIONS)
st.session_state.setdefault(SEEDS_KEY, "1, 2")
st.session_state.setdefault(CRITERIA_KEY, list(CRITERIA))
left, right = st.columns([3, 2])
left.text_area(
    "Conditions",
    key=CONDITIONS_KEY,
    height=130,
    help="One per line: NAME: key=value, key=value. Keys: level (0, 1, … or leaf), map_budget, reduce_budget, map_reserve, "
    "reduce_reserve, strategy (skip/stop), claims, sources (true/false), or any request field such as community_selection.",
)
with right:
    st.text_input("Seeds", key=SEEDS_KEY, help="Two or more add the A/A check (each condition against itself across seeds).")
    st.multiselect("Criteria", list(CRITERIA), key=CRITERIA_KEY)
    r1, r2 = st.columns(2)
    r1.number_input("Repeats", 1, 10, 1, key=REPEATS_KEY)
    r2.checkbox("Claim metrics", key=CLAIMS_KEY, help="Also list each answer's claims: comprehensiveness = distinct claims, diversity = claim clusters.")

spec: ExperimentSpec | None = None
problem: str | None = None
try:
    if not questions:
        raise EvaluationError("Choose, upload or generate a question set.")
    spec = ExperimentSpec(
        questions=questions,
        conditions=parse_conditions(st.session_state[CONDITIONS_KEY]),
        seeds=parse_seeds(st.session_state[SEEDS_KEY]),
        criteria=st.session_state[CRITERIA_KEY],
        repeats=int(st.session_state[REPEATS_KEY]),
        claims=bool(st.session_state.get(CLAIMS_KEY)),
    )
except GraphRAGError as exc:
    problem = str(exc)

estimate = None
if spec is not None:
    estimate_key = (str(st.session_state.get(INDEX_KEY)), spec.model_dump_json())
    cached = st.session_state.get(ESTIMATE_KEY)
    if not cached or cached[0] != estimate_key:
        st.session_state[ESTIMATE_KEY] = (estimate_key, estimate_experiment(index, spec, every_question=False))
    estimate = st.session_state[ESTIMATE_KEY][1]
    st.caption(
        f"About **{estimate.total:,}** model calls at most: {estimate.answer_calls:,} to answer ({estimate.answers} answers), "
        f"{estimate.judge_calls:,} to judge ({estimate.judgments} judgments)"
        + (f", {estimate.claims_calls:,} to list claims" if estimate.claims_calls else "")
        + ". Answers and judgments kept from earlier runs are not asked again."
    )
    if estimate.total > MAX_CALLS_FROM_PAGE:
        problem = f"That is more than {MAX_CALLS_FROM_PAGE:,} calls: use the command line (graphrag-explorer eval) for an experiment this size."
if problem:
    st.warning(escape_markdown(problem), icon=":material/warning:")

job = st.session_state.get(JOB_KEY)
if isinstance(job, EvalJob):
    follow_job(job)
elif st.button("Start evaluation", key="eval_start", type="primary", disabled=spec is None or problem is not None, icon=":material/play_arrow:") and spec is not None:
    model_choice, judge_choice = str(st.session_state.get(MODEL_KEY, "offline")), str(st.session_state.get(JUDGE_KEY, "offline"))
    cache_path = app.cache_path
    st.session_state.pop("eval_error", None)
    st.session_state[JOB_KEY] = start_evaluation(
        index,
        spec,
        lambda: chat_model(model_choice, app.model),
        lambda: chat_model(judge_choice, app.model),
        eval_store_path=eval_store_path(app),
        run_store_path=app.store_path,
        cache_factory=(lambda: SqliteMapCache(cache_path)) if cache_path is not None else None,
        index_path=str(opened.source.path),
    )
    st.rerun()

if error := st.session_state.get("eval_error"):
    st.error(f"The evaluation failed: {escape_markdown(error)}", icon=":material/error:")
result = st.session_state.get(RESULT_KEY)
if isinstance(result, ExperimentResult):
    draw_result(result, app)
