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
from graphrag_core.evaluation import CRITERIA as ALL_CRITERIA, conditions_text as preset_text, preset_conditions, EvalProgress, EvaluationStore, ExperimentResult, ExperimentSpec, estimate_experiment, parse_conditions, parse_questions
from graphrag_core.evaluation.questions import EvalQuestion, bundled_question_set, questions_to_jsonl
from graphrag_core.evaluation.presets import LAZY_PRESET, PAPER
from graphrag_core.inputs import parse_ints
from graphrag_core.llm.settings import ModelSettings, resolve_model_settings
from graphrag_core.request import check_seed
from graphrag_core.methods import VECTOR
from graphrag_core.models import Index
from graphrag_core.samples import SAMPLES

from ..loaders import OpenedIndex
from ..jobs import cache_factory
from ..text import escape_markdown
from ..settings import build_embedder, build_model, ranking_line
from ..jobs import EvalJob, ModelFactory, follow, start_evaluation, start_question_generation
from ..session import Widget
from ..settings import MODEL_PICKS, AppSettings, configured_model_name, load_settings
from .state import CLAIMS, CONDITIONS, CRITERIA, INDEX, JUDGE, MODEL, LAZY_PRESET_KEY, PER_TASK, PERSONAS, PRESET_KEY, REPEATS, SEEDS, SOURCE, TASKS, UPLOAD, EvaluateState
from ..urls import EXPERIMENT_PARAM, index_param

DEFAULT_CONDITIONS = "C0: level=0\nleaf: level=leaf"
MAX_CALLS_FROM_PAGE = 20_000
POLL_S = 0.4
PLOTLY_CONFIG = {"displaylogo": False}
SOURCES = {"bundled": "Bundled set", "upload": "Upload JSONL or CSV", "generate": "Generate from the index"}
STAGES = ("answers", "claims", "judgments")


def conditions_text(result: ExperimentResult) -> str:
    """The experiment's conditions as the Conditions box writes them (``NAME: key=value, ...``)."""
    return "\n".join(f"{c.name}: {', '.join(f'{k}={v}' for k, v in c.overrides.items())}" for c in result.spec.conditions)


def use_preset(name: str, index: Index) -> None:
    """Callback of a preset's button: the preset's conditions on the index in the box (``paper``:
    every level, TS, SS and dynamic selection; ``lazy``: those, then LZ100, LZ500 and LZ1500)."""
    CONDITIONS.set(preset_text(preset_conditions(name, index)))


def index_key_of(result: ExperimentResult) -> str:
    """The index key (a sample's name, else the folder) the experiment ran on, for links and the picker."""
    return index_param(result.index_path, name=str(INDEX.value or ""))


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
        INDEX.set(index_key_of(loaded))
    CONDITIONS.set(conditions_text(loaded))
    SEEDS.set(", ".join(map(str, loaded.spec.seeds)))
    CRITERIA.set(list(loaded.spec.criteria))


def draw_models(container: DeltaGenerator, app: AppSettings) -> None:
    """The answering model and the judge: offline, or the configured model."""
    configured = configured_model_name(app)
    words = {"offline": "Offline", "configured": f"Configured ({configured})" if configured else "Configured (nothing configured: offline)"}
    m1, m2 = container.columns(2)
    m1.radio("Answering model", list(words), key=MODEL.key, format_func=words.__getitem__, horizontal=True)
    m2.radio("Judge", list(words), key=JUDGE.key, format_func=lambda v: "Offline heuristic (not an LLM)" if v == "offline" else words[v], horizontal=True)


def judge_is_offline() -> bool:
    return JUDGE.value == "offline"


def _model_settings(app: AppSettings, picker: Widget[str]) -> ModelSettings:
    """The model a picker (the answering model's, the judge's) chose, through the one resolver."""
    return resolve_model_settings(app.model, MODEL_PICKS[str(picker.value or "offline")])


def intro_text(app: AppSettings) -> str:
    """The page's opening words, naming the judge the next experiment uses (the picker's choice,
    else its default): the offline heuristic is said to be one, not an LLM."""
    settings = _model_settings(app, JUDGE)
    if settings.provider == "offline":
        judge = "the offline **heuristic** judge (text statistics, not an LLM; choose the configured model below for an LLM judge)"
    else:
        judge = f"an LLM judge (the configured model, {escape_markdown(configured_model_name(app) or settings.provider)})"
    return (
        "Which level, budget or selection mode gives better answers? Every condition answers every question; "
        f"{judge} compares every pair of answers on the GraphRAG paper's four criteria, both ways round."
    )


def _model_factory(app: AppSettings, picker: Widget[str]) -> ModelFactory:
    settings = _model_settings(app, picker)
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
        _model_factory(app, JUDGE),
        personas=int(PERSONAS.value),
        tasks=int(TASKS.value),
        per_task=int(PER_TASK.value),
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
    index_key = str(INDEX.value or "")
    bundled = bundled_questions(index_key)
    options = [s for s in SOURCES if s != "bundled" or bundled is not None]
    if SOURCE.value not in options:
        SOURCE.set(options[0])
    questions: list[EvalQuestion] | None = None
    with container:
        st.radio("Question set", options, key=SOURCE.key, format_func=SOURCES.__getitem__, horizontal=True)
        source = SOURCE.value
        if source == "bundled":
            questions = bundled
        elif source == "upload":
            upload = st.file_uploader(
                "Questions", type=["jsonl", "csv"], key=UPLOAD.key, help='JSON Lines of {"question": ..., "id": ..., "tags": ...} or a CSV with a question column.'
            )
            if upload is not None:
                try:
                    questions = parse_questions(upload.getvalue().decode("utf-8-sig"), upload.name)
                except (EvaluationError, UnicodeDecodeError) as exc:
                    st.error(escape_markdown(str(exc)), icon=":material/error:")
        else:
            c1, c2, c3, c4 = st.columns([1, 1, 1, 2], vertical_alignment="bottom")
            c1.number_input("Personas", 1, 10, 3, key=PERSONAS.key)
            c2.number_input("Tasks each", 1, 10, 2, key=TASKS.key)
            c3.number_input("Questions each", 1, 10, 2, key=PER_TASK.key)
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
    CONDITIONS.setdefault(DEFAULT_CONDITIONS)
    SEEDS.setdefault("1, 2")
    CRITERIA.setdefault(list(ALL_CRITERIA))
    with container:
        left, right = st.columns([3, 2])
        left.text_area(
            "Conditions",
            key=CONDITIONS.key,
            height=170,
            help="One per line: NAME: key=value, key=value. Keys: level (0, 1, … or leaf), method (global, text for the paper's TS, "
            "vector for its SS, lazy for lazy search with relevance_budget), map_budget, reduce_budget, map_reserve, reduce_reserve, strategy (skip/stop), claims, sources "
            "(true/false), or any request field such as community_selection.",
        )
        left.button(
            "The paper's conditions",
            key=PRESET_KEY,
            icon=":material/science:",
            on_click=use_preset,
            args=(PAPER, index),
            disabled=index is None,
            help="Fill in the GraphRAG paper's setup for this index: every community level (C0, C1, …; summaries only), TS "
            "(map-reduce over the source text), SS (naive RAG over the source chunks) and dynamic selection.",
        )
        left.button(
            "… and lazy search (LZ)",
            key=LAZY_PRESET_KEY,
            icon=":material/speed:",
            on_click=use_preset,
            args=(LAZY_PRESET, index),
            disabled=index is None,
            help="The paper's conditions, and lazy search (relevance tests of the source text under a budget, then map-reduce "
            "over what they found) at relevance budgets 100, 500 and 1,500: LZ100, LZ500, LZ1500.",
        )
        with right:
            st.text_input("Seeds", key=SEEDS.key, help="Two or more add the A/A check (each condition against itself across seeds).")
            r1, r2 = st.columns(2)
            r1.number_input("Repeats", 1, 10, 1, key=REPEATS.key)
            r2.checkbox("Claim metrics", key=CLAIMS.key, help="Also list each answer's claims: comprehensiveness = distinct claims, diversity = claim clusters.")
        st.multiselect("Criteria", list(ALL_CRITERIA), key=CRITERIA.key)  # across the page: every criterion's tag whole
    try:
        if not questions:
            raise EvaluationError("Choose, upload or generate a question set.")
        spec = ExperimentSpec(
            questions=questions,
            conditions=parse_conditions(CONDITIONS.value),
            seeds=[check_seed(seed) for seed in parse_ints(SEEDS.value, what="Seeds")],
            criteria=CRITERIA.value,
            repeats=int(REPEATS.value),
            claims=bool(CLAIMS.value),
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
    key = (str(INDEX.value), spec.model_dump_json())
    if page.estimate is None or page.estimate[0] != key:
        try:
            page.estimate = (key, estimate_experiment(index, spec, every_question=False))
        except GraphRAGError as exc:  # e.g. TS or SS on an index without source chunks
            return str(exc)
    estimate = page.estimate[1]
    if any(c.method == VECTOR for c in spec.conditions):
        app = app or load_settings()
        container.caption(escape_markdown(ranking_line(_model_settings(app, MODEL), app.embedding, error=app.embedding_error)))
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
    answering = _model_settings(app, MODEL)
    ranks = any(c.method == VECTOR for c in spec.conditions)
    page.job = start_evaluation(
        index,
        spec,
        _model_factory(app, MODEL),
        _model_factory(app, JUDGE),
        eval_store_path=app.eval_store_path,
        run_store_path=app.store_path,
        cache_factory=cache_factory(app.cache_path),
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


__all__ = [
    "conditions_text",
    "draw_estimate",
    "draw_form",
    "draw_models",
    "draw_questions",
    "draw_start",
    "follow_evaluation",
    "index_key_of",
    "intro_text",
    "load_shared",
]
