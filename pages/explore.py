"""Explore: choose an index and settings, preview the cost, run a global search and watch it."""

from __future__ import annotations

import streamlit as st

from graphrag_app.explore import sidebar as controls, views as explore_views
from graphrag_app.explore.chart_code import load_chart_code
from graphrag_app.text import escape_markdown
from graphrag_app.loaders import SECTIONS_WAIT_S, warm_libraries
from graphrag_app.navigation import ensure_app_navigation
from graphrag_app.explore.recent import draw_recent_runs
from graphrag_app.settings import load_settings
from graphrag_app.session import ExploreState
from graphrag_app.widgets import Keys, read_widgets

ensure_app_navigation()

app = load_settings()
page = ExploreState.get()
base = explore_views.load_url(page, app)

with st.sidebar:
    opened, draw_level_picker = controls.draw_settings_but_levels(app, base)
explore_views.check_url_level(page, opened)
explore_views.follow_sample_question(opened)

explore_views.draw_page_style()
title, switch = st.columns([3, 2], vertical_alignment="bottom")
title.title("Explore")
explore_views.draw_presenter_switch(switch)
presenting = explore_views.presenting()
intro = st.empty()  # a place kept while a run streams, so nothing below it moves when the run ends
if not presenting and not page.running:  # while a run streams, the screen is the run's
    intro.caption("GraphRAG global search: map over community summaries, then reduce the most useful answers.")
st.text_area("Question", key=Keys.QUESTION, height=80, placeholder="What are the main themes of this corpus?")
current, problem = read_widgets(base)
page.settings = current

if opened.error:
    st.error(escape_markdown(opened.error), icon=":material/folder_off:")
preview = st.container()
explore_views.draw_run_buttons(st.container(), page, app, current)  # on the page before the preview has waited for its figures
load_chart_code()  # the browser loads the charts' code once Run is drawn, before a run needs it
# in its place in the sidebar, after Run: it waits for each level's tokens, but not while a run
# streams (the live view is drawn first; the run's end draws the whole page again)
draw_level_picker(wait_s=0 if page.running else SECTIONS_WAIT_S)
explore_views.draw_messages(st.container(), page)
explore_views.keep_url(page, current)
if not page.running:  # while a run streams, the screen is the run's
    explore_views.draw_cost_preview(
        preview, opened, current, problem, price=app.model.price, provider=current.model.provider or app.model.provider, app=app, shown_run=page.view is not None
    )

if page.view is not None and page.view.live:
    # A run followed live is drawn one place further down than a run drawn whole: the drawing
    # after Run replaces the previous run's panels at once (an element where their block was),
    # instead of leaving them on the screen, beside the new run, until that drawing ends.
    st.empty()
explore_views.draw_run(st.container(), page, app)
if not presenting:
    draw_recent_runs(st.expander("Recent runs", expanded=page.view is None, icon=":material/history:"), app=app, page=page)
    explore_views.bundle_open(st.expander("Open run bundle", icon=":material/upload_file:"), page, app)
warm_libraries()  # what the tables of a run's answer need, imported now that the page is drawn
