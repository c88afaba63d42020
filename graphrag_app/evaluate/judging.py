"""People judge too: the Evaluate page's blind judging screen (``?experiment=<id>&judge=1``) and
the panels that put people's votes beside the LLM judge's (evaluation spec section 9).

The judging screen shows one pair at a time: the criterion and its definition, the question,
"Answer 1" and "Answer 2" in an order seeded per judge and pair, three choices (keys 1, 2 and 0
for a tie), a progress count and "Skip". Nothing on it names a condition, a seed, a score or the
LLM judge's choice. Each vote is written to the experiment's store in the button's callback,
before the next pair is drawn; where the judge is comes from the store, so leaving and coming
back (or another browser) resumes at the first pair not yet voted on or skipped.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.errors import EvaluationError
from graphrag_core.evaluation import CRITERIA, EvaluationStore, ExperimentResult
from graphrag_core.evaluation.agreement import people_and_judge, people_with_each_other, vote_counts
from graphrag_core.evaluation.judge import Order
from graphrag_core.evaluation.vote_report import AGREEMENT_HEADER, agreement_rows
from graphrag_core.evaluation.votes import CHOICE_WORDS, Choice, Vote, VoteStore, VoteTask, next_task, order_shown, validate_judge_name, vote_tasks

from ..text import escape_markdown, safe_markdown
from .charts import agreement_chart
from ..settings import AppSettings
from .state import JUDGE_NAME, JudgingState
from ..urls import EXPERIMENT_PARAM

JUDGE_PARAM = "judge"
"""``evaluate?experiment=<id>&judge=1``: the judging screen (the link handed to people)."""
JUDGE_NAME_PARAM = "judge_name"
"""The name a person judges under, kept in the URL so that a reload resumes as them."""
ANSWER_HEIGHT_PX = 300
SHORTCUTS: dict[int, str] = {1: "1", 2: "2", 0: "0"}
SKIP_SHORTCUT = "S"
PLOTLY_CONFIG = {"displaylogo": False}


def judging_url(experiment_id: str) -> str:
    """A relative link to an experiment's blind judging screen: ``evaluate?experiment=<id>&judge=1``."""
    return f"evaluate?{urlencode({EXPERIMENT_PARAM: experiment_id, JUDGE_PARAM: '1'})}"


def judging_requested() -> bool:
    """Whether the URL asks for the judging screen (``judge=1``, or another yes-word)."""
    return str(st.query_params.get(JUDGE_PARAM) or "").strip().lower() in ("1", "true", "yes", "on")


def criterion_prompt(criterion: str) -> str:
    """The question a judge answers for ``criterion``: which answer ``{definition}``?"""
    return f"Which answer {CRITERIA[criterion]}?"


def load_experiment(app: AppSettings, page: JudgingState, experiment_id: str) -> ExperimentResult | None:
    """The experiment to judge (read from the store once per session and id), or None."""
    if page.experiment is not None and page.experiment.id == experiment_id:
        return page.experiment
    path = app.eval_store_path
    page.experiment = EvaluationStore(path).get_experiment(experiment_id) if path.exists() else None
    return page.experiment


def _adopt_name(page: JudgingState) -> None:
    """A name in the URL (a reload, or a link someone kept) is the session's name."""
    if page.name is None and (raw := st.query_params.get(JUDGE_NAME_PARAM)):
        try:
            page.name = validate_judge_name(raw)
        except EvaluationError:
            del st.query_params[JUDGE_NAME_PARAM]


def start_judging() -> None:
    """Callback of "Start judging": the name typed becomes the session's (and the URL's)."""
    page = JudgingState.get()
    try:
        page.name = validate_judge_name(str(JUDGE_NAME.value or ""))
    except EvaluationError as exc:
        page.notice = str(exc)
        return
    st.query_params[JUDGE_NAME_PARAM] = page.name


def change_name() -> None:
    page = JudgingState.get()
    page.name = None
    st.query_params.pop(JUDGE_NAME_PARAM, None)


def cast(store_path: str, experiment_id: str, judge: str, task: VoteTask, order: Order, choice: Choice) -> None:
    """Callback of a choice: the vote is in the store before the next pair is drawn."""
    VoteStore(store_path).record(
        Vote(
            judge=judge, experiment_id=experiment_id, question_id=task.question_id, condition_a=task.row, condition_b=task.col,
            seed_a=task.seed_a, seed_b=task.seed_b, criterion=task.criterion, order_shown=order, choice=choice,
        )
    )


def skip(store_path: str, experiment_id: str, judge: str, task: VoteTask, order: Order) -> None:
    VoteStore(store_path).skip(judge, experiment_id, task, order)


def again(store_path: str, experiment_id: str, judge: str) -> None:
    """Callback of "Go through the skipped pairs again"."""
    cleared = VoteStore(store_path).clear_skips(judge, experiment_id)
    JudgingState.get().notice = f"{cleared} skipped {'pair comes' if cleared == 1 else 'pairs come'} round again."


def draw_name(container: DeltaGenerator, page: JudgingState, result: ExperimentResult, total: int) -> None:
    """Who is judging: a name, so that each person's votes are kept apart and resume."""
    with container:
        st.markdown(
            f"You are asked to compare answers to questions about **{escape_markdown(result.index_name)}**: "
            f"{total} comparisons, one at a time. Each shows a question, two answers in a random order and a criterion; "
            "choose the better answer on that criterion, or a tie. Nothing tells you where an answer came from. "
            "Your votes are saved as you go: you can stop at any time and come back to this link to go on."
        )
        with st.form("judge_name_form", border=False):
            st.text_input("Your name", key=JUDGE_NAME.key, max_chars=80, placeholder="e.g. Ada Lovelace", help="Your votes are kept under this name; use the same name to go on later.")
            st.form_submit_button("Start judging", type="primary", icon=":material/how_to_vote:", on_click=start_judging)


def draw_judging(container: DeltaGenerator, app: AppSettings) -> None:
    """The whole judging screen for ``?experiment=<id>&judge=1``."""
    page = JudgingState.get()
    experiment_id = str(st.query_params.get(EXPERIMENT_PARAM) or "")
    with container:
        st.title("Judge answers")
        if not experiment_id:
            st.error("This judging link names no experiment: it needs ?experiment=<id>&judge=1.", icon=":material/link_off:")
            return
        result = load_experiment(app, page, experiment_id)
        if result is None:
            st.error(f"No finished experiment {escape_markdown(experiment_id)} in {escape_markdown(str(app.eval_store_path))}.", icon=":material/link_off:")
            return
        tasks = vote_tasks(result)
        if page.notice:
            st.info(escape_markdown(page.notice), icon=":material/info:")
            page.notice = None
        if not tasks:
            st.info("This experiment has no judged pairs to compare.", icon=":material/info:")
            return
        _adopt_name(page)
        if page.name is None:
            draw_name(st.container(), page, result, len(tasks))
            return
        draw_pair(st.container(), page.name, result, tasks, str(app.eval_store_path))


def draw_pair(container: DeltaGenerator, judge: str, result: ExperimentResult, tasks: list[VoteTask], store_path: str) -> None:
    """The next pair for ``judge`` (or the end), with the three choices and Skip."""
    store = VoteStore(store_path)
    done = {v.key for v in store.votes(result.id, judge=judge)}
    skipped = store.skipped(judge, result.id)
    position = next_task(tasks, done, skipped)
    voted = sum(1 for t in tasks if t.key in done)
    with container:
        top = st.columns([4, 1], vertical_alignment="center")
        top[0].progress(voted / len(tasks), text=f"**{voted} of {len(tasks)}** judged" + (f" · {len(skipped)} skipped" if skipped else "") + f" · judging as **{escape_markdown(judge)}**")
        top[1].button("Not you?", key="judge_change_name", on_click=change_name, icon=":material/person:", type="tertiary")
        if position is None:
            st.success(f"Thank you: you have judged every comparison you did not skip ({voted} of {len(tasks)}).", icon=":material/task_alt:")
            if skipped:
                st.button(f"Go through the {len(skipped)} skipped again", key="judge_again", on_click=again, args=(store_path, result.id, judge), icon=":material/replay:")
            return
        task = tasks[position]
        order = order_shown(judge, result.id, task)
        question = result.question(task.question_id)
        a, b = result.answer(task.row, task.question_id, task.seed_a), result.answer(task.col, task.question_id, task.seed_b)
        first, second = (a, b) if order == "AB" else (b, a)
        with st.container(border=True):
            st.markdown(f"**Criterion: {task.criterion}.** {escape_markdown(criterion_prompt(task.criterion))}")
            st.markdown(f"**Question:** {safe_markdown(question.question if question else task.question_id)}")
        left, right = st.columns(2)
        for column, position, answer in ((left, 1, first), (right, 2, second)):
            with column:
                st.markdown(f"**Answer {position}**")
                with st.container(border=True, height=ANSWER_HEIGHT_PX, key=f"judge_answer_{position}"):
                    st.markdown(safe_markdown(answer.answer) if answer is not None else "*(no answer)*")
        buttons = st.container(horizontal=True, vertical_alignment="center")  # each button as wide as its label
        args = (store_path, result.id, judge, task, order)
        for choice in (1, 0, 2):
            buttons.button(
                CHOICE_WORDS[choice], key=f"judge_choice_{choice}", on_click=cast, args=(*args, choice), shortcut=SHORTCUTS[choice],
                type="primary" if choice else "secondary", icon=":material/thumb_up:" if choice else ":material/balance:",
            )
        buttons.button("Skip", key="judge_skip", on_click=skip, args=args, shortcut=SKIP_SHORTCUT, icon=":material/skip_next:")
        buttons.caption("Keys: 1 and 2 choose an answer, 0 is a tie, S skips.")


# -- people beside the LLM judge on the results --------------------------------------------------


def experiment_votes(app: AppSettings, result: ExperimentResult) -> list[Vote]:
    """The votes people cast on ``result``'s pairs (none when the store is not there)."""
    path = app.eval_store_path
    return VoteStore(path).votes(result.id) if path.exists() else []


def draw_invite(container: DeltaGenerator, result: ExperimentResult, votes: list[Vote]) -> None:
    """The link that lets people judge this experiment's pairs blind."""
    counts = vote_counts(votes)
    said = f"{len(votes)} votes by {len(counts)} {'person' if len(counts) == 1 else 'people'} so far. " if votes else "Nobody has judged these pairs yet. "
    container.markdown(
        f":material/how_to_vote: {said}[Judge these answers yourself, blind]({judging_url(result.id)}), or hand the link to colleagues: "
        "each sees one pair at a time, in a random order, with nothing to say which condition wrote which answer."
    )


def draw_agreement(container: DeltaGenerator, result: ExperimentResult, votes: list[Vote]) -> None:
    """How far people agree with the LLM judge and with each other, per criterion."""
    if not votes:
        return
    rows = [*people_and_judge(result, votes), *people_with_each_other(result, votes)]
    with container:
        st.subheader("Agreement with people")
        counts = vote_counts(votes)
        st.caption(
            f"{len(votes)} votes by {escape_markdown(', '.join(f'{name} ({n})' for name, n in counts.items()))}. "
            "Over the pairs both sides judged, choices compared as one answer, the other or a tie, whatever the order shown: "
            "the share of identical choices, and Cohen's kappa (1 = always agree, 0 = no better than chance, – = undefined)."
            + (" The LLM judge here is the offline heuristic." if result.heuristic_judge else "")
        )
        left, right = st.columns([3, 2])
        left.dataframe(pd.DataFrame(agreement_rows(rows), columns=list(AGREEMENT_HEADER)), hide_index=True, width="stretch", key="eval_agreement")
        right.plotly_chart(agreement_chart(rows), key="eval_agreement_chart", config=PLOTLY_CONFIG)


__all__ = ["JUDGE_NAME_PARAM", "JUDGE_PARAM", "criterion_prompt", "draw_agreement", "draw_invite", "draw_judging", "experiment_votes", "judging_requested", "judging_url"]
