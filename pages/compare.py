"""Compare: two to four stored runs side by side, and the run history (export, delete).

Shareable: ``/compare?runs=<id1>,<id2>`` opens with those runs chosen, and the URL follows the
selection. Everything is drawn from the stored records; no model is called.
"""

from __future__ import annotations

import streamlit as st

from graphrag_app.compare import charts as cc
from graphrag_app.compare import views
from graphrag_app.text import escape_markdown
from graphrag_app.navigation import ensure_app_navigation
from graphrag_app.settings import load_settings
from graphrag_app.compare.state import CompareState
from graphrag_core.history import RunStore, StoreError

ensure_app_navigation()

st.title("Compare runs")
st.caption("Pick two to four runs from the history: their settings, costs, usefulness, the communities cited and behind, and answers side by side.")

app = load_settings()
page = CompareState.get()
try:
    store = RunStore(app.store_path)
    runs = store.list_runs(views.LIST_LIMIT)
except StoreError as exc:  # its message names the file and what is wrong with it
    st.error(escape_markdown(str(exc)))
    st.stop()
except OSError as exc:
    st.error(f"The run history at {escape_markdown(str(app.store_path))} could not be opened: {escape_markdown(str(exc))}")
    st.stop()

summaries = views.known_runs(store, runs)
views.sync_selection_from_url(page, list(summaries))
views.draw_notice(st.container(), page)
selected = views.pick_runs(st.container(), page, summaries)

records = [record for run_id in selected if (record := store.get(run_id)) is not None]
if len(records) < cc.MIN_COMPARED_RUNS:
    if not runs:
        st.info("The run history is empty: run a search on the Explore page (or a sweep) first.", icon=":material/info:")
    else:
        st.info("Choose at least two runs to compare.", icon=":material/info:")
else:
    st.caption("Share this comparison: the page URL names the chosen runs (`?runs=…`).")
    views.draw_settings(st.container(), records)
    views.draw_metrics(st.container(), records, price=app.model.price)
    views.draw_overlap(st.container(), records)
    views.draw_answers(st.container(), records)
    views.draw_points(st.container(), records)

st.divider()
views.draw_history(st.container(), store, runs, app=app)
views.bundle_open(st.container(), app=app)
