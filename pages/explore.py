"""Explore: choose an index and settings, preview the cost, run a global search and watch it."""

from __future__ import annotations

import itertools
from concurrent import futures
from functools import partial

import streamlit as st

from graphrag_app import bundles, controls, views
from graphrag_app.loaders import (
    PREVIEW_WAIT_S,
    default_index_key,
    folder_signature,
    preview_future,
    sample_names,
)
from graphrag_app.navigation import ensure_app_navigation
from graphrag_app.recent import draw_recent_runs
from graphrag_app.runner import follow
from graphrag_app.session import Keys, get_session, seed_widgets, settings_from_widgets
from graphrag_app.settings import load_settings, offline_latency_s
from graphrag_app.urls import RUN_PARAM, RunSettings, from_query_params, level_notice, to_query_params
from graphrag_core.errors import GraphRAGError
from graphrag_core.samples import SAMPLE_QUESTIONS, sample_question
from graphrag_core.search import draw_seed

ensure_app_navigation()

app = load_settings()
session = get_session()

if session.settings is None:  # first script run of this browser session: the URL sets the page
    configured = app.model
    base = RunSettings(
        index=default_index_key(),
        seed=draw_seed(),
        model=configured.provider,
        model_name=configured.model if configured.provider == "openai" else "",
        base_url=(configured.base_url or "") if configured.provider == "openai" else "",
        latency_s=offline_latency_s(app),
        query=sample_question(default_index_key()),
    )
    session.settings, problems = from_query_params(st.query_params.to_dict(), base=base)
    session.notices.extend(problems)
    if run_id := st.query_params.get(RUN_PARAM):
        controls.open_run(session, run_id, app=app, set_widgets=False)
seed_widgets(session.settings, index_options=sample_names())

with st.sidebar:
    opened = controls.draw_settings(app)
if not session.url_loaded and opened.index is not None:  # the URL's level against the index it opened
    if notice := level_notice(st.query_params.to_dict(), list(opened.index.summary_counts())):
        session.notices.append(notice)
session.url_loaded = True

# An untouched sample question follows the index: switching to the Chinese sample asks its question.
asked = str(st.session_state.get(Keys.QUESTION) or "")
if opened.source is not None and asked in SAMPLE_QUESTIONS.values():
    st.session_state[Keys.QUESTION] = sample_question(opened.source.key) or asked

st.title("Explore")
st.caption("GraphRAG global search: map over community summaries, then reduce the most useful answers.")
st.text_area("Question", key=Keys.QUESTION, height=80, placeholder="What are the main themes of this corpus?")
current = settings_from_widgets(session.settings)
session.settings = current

if opened.error:
    st.error(views.escape_markdown(opened.error), icon=":material/folder_off:")

# The cost of these settings, before any model call (computed off the script thread: a huge
# index says "still computing" and the preview appears when it is ready).
request_error: str | None = None
pending = None
request = None
try:
    request = current.to_request(query=current.query if current.query.strip() else "?")
    if opened.index is not None and opened.source is not None:
        pending = preview_future(opened.index, opened.source.key, folder_signature(opened.source.path), request.model_dump_json(), current.seed)
        futures.wait([pending], timeout=PREVIEW_WAIT_S)
except (GraphRAGError, ValueError) as exc:
    request_error = str(exc)


def draw_preview(first: bool) -> None:
    if pending is None or request_error:
        views.render_cost_preview(st.container(), None, request_error)
    elif not pending.done():
        st.caption("Cost preview: still computing for this index and these settings…")
    else:
        sections = controls.level_sections_for(opened)
        try:
            views.render_cost_preview(
                st.container(),
                pending.result(),
                None,
                sections=sections.get(current.community_level) if sections else None,
                request=request,
                price=app.model.price,
            )
        except (GraphRAGError, ValueError) as exc:
            views.render_cost_preview(st.container(), None, str(exc))
        if not first:
            st.rerun()  # the whole page once, which also stops this polling


if pending is not None and not pending.done():
    st.fragment(lambda: draw_preview(False), run_every=1.0)()
else:
    draw_preview(True)

running = session.running
left, mid, _ = st.columns([2, 1, 5], vertical_alignment="center")
left.button(
    "Run global search",
    key=Keys.RUN,
    type="primary",
    disabled=running,
    on_click=controls.start_clicked,
    icon=":material/play_arrow:",
)
mid.button("Stop", key=Keys.STOP, disabled=not running, on_click=controls.stop_clicked, icon=":material/stop:")
st.caption(views.escape_markdown(controls.run_target(app, current)))

for message in session.errors:
    st.error(views.escape_markdown(message), icon=":material/error:")
for message in session.notices:
    st.info(views.escape_markdown(message), icon=":material/info:")
session.errors.clear()
session.notices.clear()

# The URL carries the settings (and the run shown), so a link reproduces the run.
view = session.view
params = to_query_params(current, run_id=view.run_id if view else None)
if st.query_params.to_dict() != params:
    st.query_params.from_dict(params)

draw_recent_runs(st.expander("Recent runs", expanded=view is None, icon=":material/history:"), app=app, session=session)
bundles.render_bundle_open(
    st.expander("Open run bundle", icon=":material/upload_file:"), app=app, key="explore_bundle", on_open=partial(controls.bundle_opened, session, app=app)
)

bundle_slot = st.empty()  # always drawn, so the run area keeps its place while a new run streams in
if view is not None and view.handle is None:
    bundles.render_bundle_download(bundle_slot.container(), view.state, index_key=view.index_key, app=app, key="run")
run_area = st.empty()
if view is not None and view.handle is not None:
    ticks = itertools.count()
    follow(
        view.handle,
        view.state,
        lambda state: views.render_run(
            run_area.container(), state, index_key=view.index_key, key=f"live{next(ticks)}", price=app.model.price, interactive=False
        ),
    )
    if view.handle.save_error:
        session.errors.append(view.handle.save_error)
    view.handle = None
    view.reveal_answer = view.state.result is not None
    st.rerun()
elif view is not None:
    views.render_run(run_area.container(), view.state, index_key=view.index_key, key="run", price=app.model.price)
    if view.reveal_answer:
        view.reveal_answer = False
        views.scroll_to_answer(st.container())
