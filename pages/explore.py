"""Explore: choose an index and settings, preview the cost, run a global search and watch it."""

from __future__ import annotations

import streamlit as st

from graphrag_app.explore import actions, sidebar, views
from graphrag_app.explore.state import Keys, ExploreState, presenting
from graphrag_app.live import ShownRun
from graphrag_app.loaders import warm_libraries
from graphrag_app.previews import SECTIONS_WAIT_S
from graphrag_app.navigation import ensure_app_navigation
from graphrag_app.settings import load_settings
from graphrag_app.text import escape_markdown

ensure_app_navigation()

app = load_settings()
shown, page = ShownRun.get(), ExploreState.get()
base = views.load_url(shown, app)
opened, chosen = sidebar.read_request(app, base)  # the widgets, read once for this whole script run
views.check_url_level(page, shown, opened)
shown.settings = chosen.settings
actions.start_requested(page, shown, chosen, app)  # a click on Run starts the run here, before anything is drawn

with st.sidebar:
    level_box = sidebar.draw_sidebar(app, page, opened, chosen)
views.draw_page_style()
title, switch = st.columns([3, 2], vertical_alignment="bottom")
title.title("Explore")
views.draw_presenter_switch(switch)
views.draw_intro(st.empty(), shown)
st.text_area("Question", key=Keys.QUESTION, height=80, placeholder="What are the main themes of this corpus?")

if opened.error:
    st.error(escape_markdown(opened.error), icon=":material/folder_off:")
preview = st.container()
views.draw_run_buttons(st.container(), shown, app, chosen)  # on the page before the preview has waited for its figures
views.draw_chart_code(st.empty(), shown)  # the browser loads the charts' code once Run is drawn, before a run needs it
# the level picker waits for each level's tokens (not while a run streams: the live view is drawn
# first, and the run's end draws the whole page again), so it is drawn into its place after Run
sidebar.draw_level_picker(level_box, page, opened, chosen, wait_s=0 if shown.running else SECTIONS_WAIT_S)
views.draw_messages(st.container(), shown, page)
views.keep_url(shown, chosen)
if not shown.running:  # while a run streams, the screen is the run's
    views.draw_cost_preview(preview, page, opened, chosen, price=app.model.price, app=app, shown_run=shown.view is not None)
    actions.draw_support_cost(preview, opened, chosen)

views.draw_run(st.container(), shown, page, app, chosen)
if not presenting():
    actions.draw_recent_runs(st.expander("Recent runs", expanded=shown.view is None, icon=":material/history:"), app=app, shown=shown)
    views.bundle_open(st.expander("Open run bundle", icon=":material/upload_file:"), shown, app)
warm_libraries()  # what the tables of a run's answer need, imported now that the page is drawn
