"""The Evaluate page's panels: a shared experiment reopened from ``?experiment=``, the question set
(bundled, uploaded, or generated as a background job), the experiment's form and estimate, the
experiment followed while it runs, and its result with a drill-down to each judged pair.

Everything that runs a model is a job (:mod:`graphrag_app.jobs`), followed the one way every job
is; nothing runs a coroutine on the script thread. Each panel takes the container to draw into;
the page only lays them out. Scores of the offline judge are labelled heuristic.
"""

from __future__ import annotations


import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.errors import EvaluationError, GraphRAGError
from graphrag_core.evaluation import (
    CRITERIA,
    choose,
    conditions_text as preset_text,
    paper_conditions,
    EvalProgress,
    EvaluationStore,
    ExperimentResult,
    ExperimentSpec,
    estimate_experiment,
    parse_conditions,
    parse_questions,
)
from graphrag_core.evaluation.questions import EvalQuestion, bundled_question_set, questions_to_jsonl
from graphrag_core.evaluation.report import (
    AA_NEEDS_SEEDS,
    COST_BASIS,
    HEURISTIC_NOTE,
    choice_csv,
    costs_csv,
    judge_label,
    judgments_csv,
    significance_legend,
    to_markdown,
    win_rates_csv,
)
from graphrag_core.inputs import parse_ints
from graphrag_core.evaluation.agreement import people_win_rates
from graphrag_core.evaluation.vote_report import people_markdown, votes_csv
from graphrag_core.llm.settings import resolve_model_settings
from graphrag_core.methods import VECTOR
from graphrag_core.models import Index
from graphrag_core.samples import SAMPLES

from .choice_views import draw_choice, draw_paper_costs
from . import judging as vote_views
from ..explore.sidebar import OpenedIndex
from ..explore.actions import cache_factory
from .drilldown import draw_drilldown
from ..text import escape_markdown
from ..llm import build_embedder, build_model, ranking_line
from .charts import cost_chart, cost_rows, p_value_rows, win_rate_heatmap
from .vote_charts import people_heatmap
from ..jobs import EvalJob, follow, start_evaluation, start_question_generation
from ..settings import MODEL_PICKS, AppSettings, configured_model_name, load_settings
from ..session import EvaluateState
from ..urls import EXPERIMENT_PARAM, index_param

INDEX_KEY, FOLDER_KEY = "eval_index", "eval_folder"
SOURCE_KEY, UPLOAD_KEY = "eval_source", "eval_upload"
CONDITIONS_KEY, SEEDS_KEY, CRITERIA_KEY, REPEATS_KEY = "eval_conditions", "eval_seeds", "eval_criteria", "eval_repeats"
MODEL_KEY, JUDGE_KEY, CLAIMS_KEY = "eval_model", "eval_judge", "eval_claims"
PERSONAS_KEY, TASKS_KEY, PER_TASK_KEY = "eval_personas", "eval_tasks", "eval_per_task"
DEFAULT_CONDITIONS = "C0: level=0\nleaf: level=leaf"
MAX_CALLS_FROM_PAGE = 20_000
POLL_S = 0.4
PLOTLY_CONFIG = {"displaylogo": False}
SOURCES = {"bundled": "Bundled set", "upload": "Upload JSONL or CSV", "generate": "Generate from the index"}
STAGES = ("answers", "claims", "judgments")


PRESET_KEY = "eval_preset_paper"


def conditions_text(result: ExperimentResult) -> str:
    """The experiment's conditions as the Conditions box writes them (``NAME: key=value, ...``)."""
    return "\n".join(f"{c.name}: {', '.join(f'{k}={v}' for k, v in c.overrides.items())}" for c in result.spec.conditions)


def use_paper_preset(index: Index) -> None:
    """Callback of "The paper's conditions": every level of the index, TS, SS and dynamic selection in the box."""
    st.session_state[CONDITIONS_KEY] = preset_text(paper_conditions(index))


def index_key_of(result: ExperimentResult) -> str:
    """The index key (a sample's name, else the folder) the experiment ran on, for links and the picker."""
    return index_param(result.index_path, name=str(st.session_state.get(INDEX_KEY, "")))


def load_shared(container: DeltaGenerator, page: EvaluateState, app: AppSettings) -> None:
    """``?experiment=<id>`` reopens a finished experiment from the evaluation store, with the
    form set to its index and settings."""
    shared = st.query_params.get(EXPERIMENT_PARAM)
    if not shared or (page.result is not None and page.result.id == shared):
        return
    path = app.eval_store_path
    loaded = EvaluationStore(path).get_experiment(shared) if path.exists() else None
    if loaded is None:
        container.warning(f"No finished experiment {escape_markdown(shared)} in {escape_markdown(str(path))}.", icon=":material/link_off:")
        return
    page.result = loaded
    if index_key_of(loaded) in SAMPLES:  # open the form on the experiment's index and settings
        st.session_state[INDEX_KEY] = index_key_of(loaded)
    st.session_state[CONDITIONS_KEY] = conditions_text(loaded)
    st.session_state[SEEDS_KEY] = ", ".join(map(str, loaded.spec.seeds))
    st.session_state[CRITERIA_KEY] = list(loaded.spec.criteria)


def draw_models(container: DeltaGenerator, app: AppSettings) -> None:
    """The answering model and the judge: offline, or the configured model."""
    configured = configured_model_name(app)
    words = {"offline": "Offline", "configured": f"Configured ({configured})" if configured else "Configured (nothing configured: offline)"}
    m1, m2 = container.columns(2)
    m1.radio("Answering model", list(words), key=MODEL_KEY, format_func=words.__getitem__, horizontal=True)
    m2.radio("Judge", list(words), key=JUDGE_KEY, format_func=lambda v: "Offline heuristic (not an LLM)" if v == "offline" else words[v], horizontal=True)


def judge_is_offline() -> bool:
    return st.session_state.get(JUDGE_KEY, "offline") == "offline"


def _model_settings(app: AppSettings, key: str):  # noqa: ANN202 - ModelSettings
    return resolve_model_settings(app.model, MODEL_PICKS[str(st.session_state.get(key, "offline"))])


def intro_text(app: AppSettings) -> str:
    """The page's opening words, naming the judge the next experiment uses (the picker's choice,
    else its default): the offline heuristic is said to be one, not an LLM."""
    settings = _model_settings(app, JUDGE_KEY)
    if settings.provider == "offline":
        judge = "the offline **heuristic** judge (text statistics, not an LLM; choose the configured model below for an LLM judge)"
    else:
        judge = f"an LLM judge (the configured model, {escape_markdown(configured_model_name(app) or settings.provider)})"
    return (
        "Which level, budget or selection mode gives better answers? Every condition answers every question; "
        f"{judge} compares every pair of answers on the GraphRAG paper's four criteria, both ways round."
    )


def _model_factory(app: AppSettings, key: str):  # noqa: ANN202 - a model factory
    settings = _model_settings(app, key)
    return lambda: build_model(settings)


def bundled_questions(index_key: str) -> list[EvalQuestion] | None:
    path = bundled_question_set(index_key)
    return parse_questions(path.read_text(encoding="utf-8"), path.name) if path is not None else None


def generate_clicked(index: Index, app: AppSettings) -> None:
    """Callback of "Generate questions": generation runs as a job (with the judge's model)."""
    page = EvaluateState.get()
    if page.questions_job is not None:
        return
    page.questions_error = None
    page.questions_job = start_question_generation(
        index,
        _model_factory(app, JUDGE_KEY),
        personas=int(st.session_state[PERSONAS_KEY]),
        tasks=int(st.session_state[TASKS_KEY]),
        per_task=int(st.session_state[PER_TASK_KEY]),
    )


def follow_generation(container: DeltaGenerator, page: EvaluateState) -> None:
    """Wait for the question set being generated, then keep it (or why it failed)."""
    job = page.questions_job
    if job is None:
        return
    with container, st.spinner("Generating questions…"):
        follow(job, None, lambda _: None, interval=POLL_S)
    page.questions_job = None
    if job.questions is not None:
        page.generated = job.questions
    elif job.error:
        page.questions_error = job.error


def draw_questions(container: DeltaGenerator, page: EvaluateState, opened: OpenedIndex, app: AppSettings) -> list[EvalQuestion] | None:
    """The question set: bundled with the sample, uploaded, or generated from the index."""
    index_key = str(st.session_state.get(INDEX_KEY, ""))
    bundled = bundled_questions(index_key)
    options = [s for s in SOURCES if s != "bundled" or bundled is not None]
    if st.session_state.get(SOURCE_KEY) not in options:
        st.session_state[SOURCE_KEY] = options[0]
    questions: list[EvalQuestion] | None = None
    with container:
        st.radio("Question set", options, key=SOURCE_KEY, format_func=SOURCES.__getitem__, horizontal=True)
        source = st.session_state[SOURCE_KEY]
        if source == "bundled":
            questions = bundled
        elif source == "upload":
            upload = st.file_uploader(
                "Questions", type=["jsonl", "csv"], key=UPLOAD_KEY, help='JSON Lines of {"question": ..., "id": ..., "tags": ...} or a CSV with a question column.'
            )
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
            c4.button(
                "Generate questions", key="eval_generate", icon=":material/auto_awesome:", on_click=generate_clicked, args=(opened.index, app), disabled=opened.index is None
            )
            follow_generation(st.container(), page)
            if page.questions_error:
                st.error(f"Question generation failed: {escape_markdown(page.questions_error)}", icon=":material/error:")
            questions = page.generated
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
                st.download_button(
                    "Download JSONL", questions_to_jsonl(questions), file_name="questions.jsonl", key="eval_questions_jsonl", on_click="ignore", icon=":material/download:"
                )
    return questions


def draw_form(
    container: DeltaGenerator, questions: list[EvalQuestion] | None, *, index: Index | None = None
) -> tuple[ExperimentSpec | None, str | None]:
    """Conditions (with the paper's preset for ``index``), seeds, criteria, repeats and claims;
    the experiment they describe, or why none."""
    state = st.session_state
    state.setdefault(CONDITIONS_KEY, DEFAULT_CONDITIONS)
    state.setdefault(SEEDS_KEY, "1, 2")
    state.setdefault(CRITERIA_KEY, list(CRITERIA))
    with container:
        left, right = st.columns([3, 2])
        left.text_area(
            "Conditions",
            key=CONDITIONS_KEY,
            height=170,
            help="One per line: NAME: key=value, key=value. Keys: level (0, 1, … or leaf), method (global, text for the paper's TS, "
            "vector for its SS), map_budget, reduce_budget, map_reserve, reduce_reserve, strategy (skip/stop), claims, sources "
            "(true/false), or any request field such as community_selection.",
        )
        left.button(
            "The paper's conditions",
            key=PRESET_KEY,
            icon=":material/science:",
            on_click=use_paper_preset,
            args=(index,),
            disabled=index is None,
            help="Fill in the GraphRAG paper's setup for this index: every community level (C0, C1, …; summaries only), TS "
            "(map-reduce over the source text), SS (naive RAG over the source chunks) and dynamic selection.",
        )
        with right:
            st.text_input("Seeds", key=SEEDS_KEY, help="Two or more add the A/A check (each condition against itself across seeds).")
            r1, r2 = st.columns(2)
            r1.number_input("Repeats", 1, 10, 1, key=REPEATS_KEY)
            r2.checkbox("Claim metrics", key=CLAIMS_KEY, help="Also list each answer's claims: comprehensiveness = distinct claims, diversity = claim clusters.")
        st.multiselect("Criteria", list(CRITERIA), key=CRITERIA_KEY)  # across the page: every criterion's tag whole
    try:
        if not questions:
            raise EvaluationError("Choose, upload or generate a question set.")
        spec = ExperimentSpec(
            questions=questions,
            conditions=parse_conditions(state[CONDITIONS_KEY]),
            seeds=parse_ints(state[SEEDS_KEY], what="Seeds"),
            criteria=state[CRITERIA_KEY],
            repeats=int(state[REPEATS_KEY]),
            claims=bool(state.get(CLAIMS_KEY)),
        )
    except GraphRAGError as exc:
        return None, str(exc)
    return spec, None


def draw_estimate(
    container: DeltaGenerator, page: EvaluateState, index: Index, spec: ExperimentSpec | None, *, app: AppSettings | None = None
) -> str | None:
    """The most model calls the experiment makes (computed once per spec); why it is too big
    for this page, if it is."""
    if spec is None:
        return None
    key = (str(st.session_state.get(INDEX_KEY)), spec.model_dump_json())
    if page.estimate is None or page.estimate[0] != key:
        try:
            page.estimate = (key, estimate_experiment(index, spec, every_question=False))
        except GraphRAGError as exc:  # e.g. TS or SS on an index without source chunks
            return str(exc)
    estimate = page.estimate[1]
    if any(c.method == VECTOR for c in spec.conditions):
        app = app or load_settings()
        container.caption(escape_markdown(ranking_line(_model_settings(app, MODEL_KEY), app.embedding, error=app.embedding_error)))
    container.caption(
        f"About **{estimate.total:,}** model calls at most: {estimate.answer_calls:,} to answer ({estimate.answers} answers), "
        f"{estimate.judge_calls:,} to judge ({estimate.judgments} judgments)"
        + (f", {estimate.claims_calls:,} to list claims" if estimate.claims_calls else "")
        + ". Answers and judgments kept from earlier runs are not asked again."
    )
    if estimate.total > MAX_CALLS_FROM_PAGE:
        return f"That is more than {MAX_CALLS_FROM_PAGE:,} calls: use the command line (graphrag-explorer eval) for an experiment this size."
    return None


def start_clicked(index: Index, spec: ExperimentSpec, *, app: AppSettings, index_path: str) -> None:
    """Callback of "Start evaluation": the experiment runs as a job the page then follows."""
    page = EvaluateState.get()
    if page.job is not None:
        return
    page.error = None
    answering = _model_settings(app, MODEL_KEY)
    ranks = any(c.method == VECTOR for c in spec.conditions)
    page.job = start_evaluation(
        index,
        spec,
        _model_factory(app, MODEL_KEY),
        _model_factory(app, JUDGE_KEY),
        eval_store_path=app.eval_store_path,
        run_store_path=app.store_path,
        cache_factory=cache_factory(app),
        index_path=index_path,
        embedder_factory=(lambda: build_embedder(answering, app.embedding)) if ranks else None,
    )


def draw_start(container: DeltaGenerator, opened: OpenedIndex, spec: ExperimentSpec | None, problem: str | None, app: AppSettings) -> None:
    container.button(
        "Start evaluation",
        key="eval_start",
        type="primary",
        disabled=spec is None or problem is not None,
        icon=":material/play_arrow:",
        on_click=start_clicked,
        args=(opened.index, spec),
        kwargs={"app": app, "index_path": str(opened.source.path) if opened.source else None},
    )


def draw_progress(container: DeltaGenerator, job: EvalJob, snapshot: dict[str, EvalProgress]) -> None:
    with container:
        for stage in STAGES:
            progress = snapshot.get(stage)
            if progress is not None:
                st.progress(progress.done / max(1, progress.total), text=f"{stage}: {progress.done} of {progress.total} · {escape_markdown(progress.label)}")
        if not snapshot:
            st.progress(0.0, text="starting…")
        st.caption(f"{job.elapsed():.0f} s" + (" · stopping after the current item…" if job.stop_requested else ""))


def follow_evaluation(container: DeltaGenerator, page: EvaluateState) -> None:
    """Stop, and the experiment's progress until it ends; then its result (shared by URL) or error."""
    job = page.job
    if job is None:
        return
    container.button("Stop", key="eval_stop", on_click=job.request_stop, icon=":material/stop:", disabled=job.stop_requested)
    slot = container.empty()
    follow(job, {}, lambda snapshot: draw_progress(slot.container(), job, snapshot), interval=POLL_S)
    page.job = None
    if job.result is not None:
        page.result = job.result
        if not job.result.stopped:
            st.query_params[EXPERIMENT_PARAM] = job.result.id
    elif job.error:
        page.error = job.error
    st.rerun()


def draw_result(container: DeltaGenerator, result: ExperimentResult, app: AppSettings) -> None:
    with container:
        st.subheader(f"Experiment {result.id}")
        if result.heuristic_judge:
            st.info(HEURISTIC_NOTE, icon=":material/science:")
        if result.stopped:
            why = f" {escape_markdown(result.stop_reason)}" if result.stop_reason else ""
            st.warning(f"Stopped before it finished: the figures cover only what was judged.{why} Start again to resume.", icon=":material/pause:")
        st.caption(
            f"{escape_markdown(result.index_name)} · answers by {escape_markdown(result.model)} · judge {escape_markdown(judge_label(result))} · "
            f"{len(result.spec.questions)} questions × {len(result.spec.conditions)} conditions × {len(result.spec.seeds)} seeds · "
            f"{result.judge_calls} judge calls ({result.judge_calls_failed} failed) · {result.duration_s:.1f} s"
        )
        votes = vote_views.experiment_votes(app, result)
        vote_views.draw_invite(st.container(), result, votes)
        people = people_win_rates(result, votes) if votes else None
        tabs = st.tabs([f"{c} (heuristic)" if result.heuristic_judge else c for c in result.spec.criteria])
        for tab, criterion in zip(tabs, result.spec.criteria):
            llm, theirs = tab.columns(2) if people is not None else (tab, None)
            llm.plotly_chart(win_rate_heatmap(result, criterion), key=f"eval_heatmap_{criterion}", config=PLOTLY_CONFIG)
            if theirs is not None:
                theirs.plotly_chart(people_heatmap(result, people, criterion), key=f"eval_people_heatmap_{criterion}", config=PLOTLY_CONFIG)
                theirs.caption("People's votes, scored as the judge's calls are (100 won, 50 tie, 0 lost).")
        st.caption(
            "Rows beat columns: a cell is the row's mean score against the column (100 = always won, 50 = even). "
            f"{significance_legend(result)} "
            + ("The diagonal is the A/A check across seeds: it should be near 50." if len(result.spec.seeds) > 1 else AA_NEEDS_SEEDS)
        )
        heuristic = " of the heuristic judge's scores" if result.heuristic_judge else ""
        with st.expander(f"p-values{heuristic} (two-sided Wilcoxon signed-rank of per-question scores against 50, Holm-corrected per criterion)"):
            st.dataframe(pd.DataFrame(p_value_rows(result)), hide_index=True, width="stretch", key="eval_pvalues")
        vote_views.draw_agreement(st.container(), result, votes)
    choices = choose(result)
    draw_choice(container.container(), result, choices)
    with container:
        st.subheader("Cost per answer")
        draw_paper_costs(st.container(), result)
        st.caption(
            "In detail. Prompt tokens are the engine's planned estimates (" + COST_BASIS + "); reported tokens are what the "
            "endpoint reported for the calls made, which a model's own tokenizer may count several times higher."
        )
        left, right = st.columns([3, 2])
        left.dataframe(pd.DataFrame(cost_rows(result)), hide_index=True, width="stretch", key="eval_costs")
        right.plotly_chart(cost_chart(result), key="eval_cost_chart", config=PLOTLY_CONFIG)
        if result.claims:
            st.subheader("Claims")
            st.dataframe(pd.DataFrame([c.model_dump() for c in result.claims]), hide_index=True, key="eval_claims_table")
    draw_drilldown(container.container(), result, app, index_key=index_key_of(result))
    with container:
        st.subheader("Export")
        cols = st.columns(6 if votes else 5)
        stem = f"evaluation-{result.id}"
        report = to_markdown(result) + ("\n" + people_markdown(result, votes) if votes else "")
        if votes:
            cols[5].download_button("Votes CSV", votes_csv(votes), file_name=f"{stem}.votes.csv", mime="text/csv", key="eval_votes_csv", on_click="ignore", icon=":material/download:")
        cols[0].download_button("Markdown report", report, file_name=f"{stem}.md", mime="text/markdown", key="eval_md", on_click="ignore", icon=":material/download:")
        cols[1].download_button("Win rates CSV", win_rates_csv(result), file_name=f"{stem}.win-rates.csv", mime="text/csv", key="eval_csv", on_click="ignore", icon=":material/download:")
        cols[2].download_button("Costs CSV", costs_csv(result), file_name=f"{stem}.costs.csv", mime="text/csv", key="eval_costs_csv", on_click="ignore", icon=":material/download:")
        cols[3].download_button(
            "Judgments CSV", judgments_csv(result), file_name=f"{stem}.judgments.csv", mime="text/csv", key="eval_judgments_csv", on_click="ignore", icon=":material/download:"
        )
        cols[4].download_button(
            "Choice CSV", choice_csv(result, choices), file_name=f"{stem}.choice.csv", mime="text/csv", key="eval_choice_csv", on_click="ignore", icon=":material/download:"
        )


__all__ = [
    "FOLDER_KEY",
    "INDEX_KEY",
    "conditions_text",
    "draw_estimate",
    "draw_form",
    "draw_models",
    "draw_questions",
    "draw_result",
    "draw_start",
    "follow_evaluation",
    "index_key_of",
    "intro_text",
    "load_shared",
]
