"""An experiment's result on the Evaluate page: the win rates per criterion (with people's votes
beside the judge's when people judged), the p-values, the answer to "which condition should I
use?" (evaluation spec section 8) with its cost table in the paper's form, the costs in detail,
the drill-down to each judged pair, and the exports; beside the win rates, each condition's
supported share when its answers were support-checked (issue 41). One draw function per panel, each taking
its container.

The choice is a pure function of the finished experiment (:func:`graphrag_core.evaluation.choose`),
so a shared experiment reopened from its link shows the same choice. Scores of the offline judge
are labelled heuristic.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.evaluation import Choice, ExperimentResult, choose
from graphrag_core.evaluation.agreement import people_win_rates
from graphrag_core.evaluation.report import (
    AA_NEEDS_SEEDS,
    COST_BASIS,
    HEURISTIC_NOTE,
    choice_csv,
    costs_csv,
    judge_label,
    judgments_csv,
    significance_legend,
    support_csv,
    to_markdown,
    win_rates_csv,
)
from graphrag_core.evaluation.vote_report import people_markdown, votes_csv

from ..settings import AppSettings
from ..text import escape_markdown
from . import judging
from .charts import choice_chart, choice_rows, cost_chart, cost_rows, p_value_rows, paper_cost_table, people_heatmap, win_rate_heatmap
from .drilldown import draw_drilldown

PLOTLY_CONFIG = {"displaylogo": False}

CHOICE_HELP = (
    "Each condition's overall win rate (its mean score against every other condition, with a 95% bootstrap interval over "
    "questions) against its prompt tokens per answer. The dashed line joins the Pareto front (no condition is as cheap and as "
    "good); the star is the cheapest condition whose win rate is not significantly below the best's (Holm-corrected p ≥ 0.05)."
)


def draw_choice(container: DeltaGenerator, result: ExperimentResult, choices: list[Choice] | None = None) -> None:
    """Per criterion, cost against quality with the recommendation, and the choice as a table."""
    choices = choose(result) if choices is None else choices
    with container:
        st.subheader("Which condition to use?")
        st.caption(CHOICE_HELP)
        tabs = st.tabs([f"{c.criterion} (heuristic)" if c.heuristic else c.criterion for c in choices])
        for tab, choice in zip(tabs, choices):
            with tab:
                (st.info if choice.recommended else st.warning)(escape_markdown(choice.sentence), icon=":material/recommend:")
                st.plotly_chart(choice_chart(choice), key=f"eval_choice_{choice.criterion}", config=PLOTLY_CONFIG)
        with st.expander("The choice as a table (also the choice CSV)"):
            st.dataframe(pd.DataFrame(choice_rows(choices)), hide_index=True, width="stretch", key="eval_choice_table")


SUPPORT_SHARE_HELP = (
    "The share of a condition's cited points that what they cite supports, the points of all its answers pooled "
    "(see docs/support-check.md). {judge}"
)
SUPPORT_JUDGES = {
    "offline": "Checked by the offline judge, by the words: it cannot see a paraphrase or a negation.",
    "model": "Checked by the model judge.",
}


def support_share_text(share: float | None) -> str:
    """A supported share as the page shows it: ``87.5%`` (``–`` when no point cites anything)."""
    return "–" if share is None else f"{100 * share:.1f}%"


def draw_support_shares(container: DeltaGenerator, result: ExperimentResult) -> None:
    """Each condition's supported share as a figure (with its counts), when the answers were
    support-checked; nothing otherwise."""
    if not result.supported_shares:
        return
    help_text = SUPPORT_SHARE_HELP.format(judge=SUPPORT_JUDGES.get(result.support_judge or "", ""))
    with container:
        st.markdown("**Supported share** per condition")
        cols = st.columns(min(len(result.supported_shares), 6))
        for n, share in enumerate(result.supported_shares):
            cols[n % len(cols)].metric(
                share.condition, support_share_text(share.share), help=help_text,
            )
            cols[n % len(cols)].caption(
                f"{share.supported:,} of {share.points:,} points supported · {share.partial:,} partly · {share.unsupported:,} not, "
                f"over {share.answers:,} answers"
            )


def draw_paper_costs(container: DeltaGenerator, result: ExperimentResult) -> None:
    """Per condition: the units it read (summaries or source chunks), its prompt tokens per answer
    and their share of TS (or of the most expensive condition), as the paper's Table 2."""
    with container:
        st.caption("In the paper's form (its Table 2): what each condition read per answer, its prompt tokens, and their share.")
        st.dataframe(pd.DataFrame(paper_cost_table(result)), hide_index=True, width="stretch", key="eval_paper_costs")


def draw_result(container: DeltaGenerator, result: ExperimentResult, app: AppSettings, *, index_key: str) -> None:
    """The finished experiment's result (``index_key``: the index its runs link to)."""
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
        votes = judging.experiment_votes(app, result)
        judging.draw_invite(st.container(), result, votes)
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
        draw_support_shares(st.container(), result)
        heuristic = " of the heuristic judge's scores" if result.heuristic_judge else ""
        with st.expander(f"p-values{heuristic} (two-sided Wilcoxon signed-rank of per-question scores against 50, Holm-corrected per criterion)"):
            st.dataframe(pd.DataFrame(p_value_rows(result)), hide_index=True, width="stretch", key="eval_pvalues")
        judging.draw_agreement(st.container(), result, votes)
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
    draw_drilldown(container.container(), result, app, index_key=index_key)
    with container:
        st.subheader("Export")
        cols = st.columns(6 if votes else 5)
        stem = f"evaluation-{result.id}"
        if result.supported_shares:
            st.download_button(
                "Supported share CSV", support_csv(result), file_name=f"{stem}.support.csv", mime="text/csv", key="eval_support_csv", on_click="ignore", icon=":material/download:"
            )
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


__all__ = ["CHOICE_HELP", "SUPPORT_SHARE_HELP", "draw_choice", "draw_paper_costs", "draw_result", "draw_support_shares", "support_share_text"]
