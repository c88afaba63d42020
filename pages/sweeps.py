"""Sweeps: one question over a grid of levels, seeds and budgets, then how stable and how costly
each level is. Uses the offline model unless the configured model is chosen.

The sweep runs as a background job on the app's one job runner (``graphrag_app.jobs``), like
Explore's runs: Stop keeps the points finished so far.
"""

from __future__ import annotations

import streamlit as st

from graphrag_app.sweeps import views
from graphrag_app.navigation import ensure_app_navigation
from graphrag_app.settings import load_settings
from graphrag_app.sweeps.state import FOLDER, INDEX, SweepsState
from graphrag_app.widgets import open_picked_index
from graphrag_core.models import MAP_TEXT_TABLES

ensure_app_navigation()

st.title("Sweeps")
st.caption("Ask one question over a grid of levels, seeds and budgets: how much does the answer depend on them, and what does each level cost?")

app = load_settings()
page = SweepsState.get()
opened = open_picked_index(app, INDEX, FOLDER, tables=MAP_TEXT_TABLES)  # what its searches read
spec, problem = views.draw_form(st.container(), opened, app)
views.draw_grid_summary(st.container(), spec, problem, app)
views.draw_buttons(st.container(), page, opened, spec, problem, app)
views.follow_sweep(st.container(), page)
if page.result is not None:
    views.draw_result(st.container(), page.result, price=app.model.price)
