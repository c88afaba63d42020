"""The Evaluate page's answer to "which condition should I use?" (evaluation spec section 8) and
its cost table in the paper's form: one render function per panel, each taking its container.

The choice is a pure function of the finished experiment (:func:`graphrag_core.evaluation.choose`),
so a shared experiment reopened from its link shows the same choice.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.evaluation import Choice, ExperimentResult, choose

from .choice_charts import choice_chart, choice_rows, paper_cost_table
from ..text import escape_markdown

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


def draw_paper_costs(container: DeltaGenerator, result: ExperimentResult) -> None:
    """Per condition: the units it read (summaries or source chunks), its prompt tokens per answer
    and their share of TS (or of the most expensive condition), as the paper's Table 2."""
    with container:
        st.caption("In the paper's form (its Table 2): what each condition read per answer, its prompt tokens, and their share.")
        st.dataframe(pd.DataFrame(paper_cost_table(result)), hide_index=True, width="stretch", key="eval_paper_costs")


__all__ = ["draw_choice", "draw_paper_costs"]
