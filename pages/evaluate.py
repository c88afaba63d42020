"""Evaluate: which level, budget or selection mode gives better answers, judged head to head the
way the GraphRAG paper does (``docs/evaluation.md``).

A question set (bundled, uploaded or generated) x conditions x seeds runs as a background job
with progress and Stop; the result is a win-rate heatmap per criterion (rows beat columns),
p-values, a cost table and a drill-down to each question's two answers, the judge's reasons and
the runs. Shareable: ``/evaluate?experiment=<id>`` reopens a finished experiment from the
evaluation store, and ``/evaluate?experiment=<id>&judge=1`` opens its blind judging screen, where
people vote on the same pairs. Scores of the offline judge are labelled heuristic.
"""

from __future__ import annotations

import streamlit as st

from graphrag_app.evaluate import judging, result, views
from graphrag_app.evaluate.state import FOLDER, INDEX, EvaluateState
from graphrag_app.text import escape_markdown
from graphrag_app.navigation import ensure_app_navigation
from graphrag_app.settings import load_settings
from graphrag_app.widgets import open_picked_index
from graphrag_core.deferred import DEFERRED_TABLES

ensure_app_navigation()
if judging.judging_requested():  # the blind judging screen: nothing else of the page, no condition named
    judging.draw_judging(st.container(), load_settings())
    st.stop()

st.title("Evaluate")
app = load_settings()
st.caption(views.intro_text(app))
page = EvaluateState.get()
views.load_shared(st.container(), page, app)

opened = open_picked_index(app, INDEX, FOLDER, tables=DEFERRED_TABLES)  # an experiment fingerprints every table
assert opened.index is not None  # open_picked_index stops the page otherwise
views.draw_models(st.container(), app)
questions = views.draw_questions(st.container(), page, opened, app)
spec, problem = views.draw_form(st.container(), questions, index=opened.index)
problem = views.draw_estimate(st.container(), page, opened.index, spec, app=app) or problem
if problem:
    st.warning(escape_markdown(problem), icon=":material/warning:")

if page.job is not None:
    views.follow_evaluation(st.container(), page)
else:
    views.draw_start(st.container(), opened, spec, problem, app)
if page.error:
    st.error(f"The evaluation failed: {escape_markdown(page.error)}", icon=":material/error:")
if page.result is not None:
    result.draw_result(st.container(), page.result, app, index_key=views.index_key_of(page.result))
