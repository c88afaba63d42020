"""Explore's page-level panels: the settings a URL sets, the cost preview, the Run and Stop
buttons, the queued messages, the URL the page keeps, and the run shown (followed while it runs).

Each takes :class:`~graphrag_app.state.ExploreState` (and the container to draw into, where it
draws); the page only lays them out.
"""

from __future__ import annotations

import itertools
from concurrent.futures import Future
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.errors import GraphRAGError
from graphrag_core.figures import Price
from graphrag_core.levels import level_text
from graphrag_core.samples import SAMPLE_QUESTIONS, sample_question
from graphrag_core.search import draw_seed
from graphrag_core.tokens import planning_tokenizer_name

from . import bundles, controls, views
from .controls import OpenedIndex
from .escaping import escape_markdown
from .jobs import follow, redraw_interval
from .loaders import CostPreview, cost_previews, default_index_key, folder_signature, sample_names, wait_for_preview
from .settings import AppSettings, initial_model
from .state import ExploreState
from .urls import RUN_PARAM, RunSettings, from_query_params, level_notice, to_query_params
from .widgets import Keys, seed_widgets

PREVIEW_POLL_S = 1.0
"""How often a preview still computing is looked at again."""


def load_url(page: ExploreState, app: AppSettings) -> RunSettings:
    """On this browser session's first script run the URL sets the page (its run is opened);
    then the widgets are seeded with the page's settings. Returns them."""
    if page.settings is None:
        base = RunSettings(index=default_index_key(), query=sample_question(default_index_key()), seed=draw_seed(), model=initial_model(app))
        page.settings, problems = from_query_params(st.query_params.to_dict(), base=base)
        page.notices.extend(problems)
        if run_id := st.query_params.get(RUN_PARAM):
            controls.open_run(page, run_id, app=app, set_widgets=False)
    seed_widgets(page.settings, index_options=sample_names())
    return page.settings


def check_url_level(page: ExploreState, opened: OpenedIndex) -> None:
    """Once, the URL's level against the index it opened (a level the index lacks is a notice)."""
    if not page.url_loaded and opened.index is not None:
        if notice := level_notice(st.query_params.to_dict(), list(opened.index.summary_counts())):
            page.notices.append(notice)
    page.url_loaded = True


def follow_sample_question(opened: OpenedIndex) -> None:
    """An untouched sample question follows the index: switching to the Chinese sample asks its question."""
    asked = str(st.session_state.get(Keys.QUESTION) or "")
    if opened.source is not None and asked in SAMPLE_QUESTIONS.values():
        st.session_state[Keys.QUESTION] = sample_question(opened.source.key) or asked


def draw_cost_preview(
    container: DeltaGenerator, opened: OpenedIndex, current: RunSettings, problem: str | None, *, price: Price | None, provider: str | None = None
) -> None:
    """The cost of these settings before any model call, computed off the script thread: a huge
    index says "still computing" and the preview appears when it is ready (the whole page is
    drawn again then). ``provider`` is the model's: with ``"openai"`` the "auto" tokenizer is
    previewed with the exact count a run against a real endpoint uses."""
    request = None
    pending: Future[CostPreview] | None = None
    if problem is None:
        try:
            request = current.to_request(query=current.query if current.query.strip() else "?")
            counted_with = planning_tokenizer_name(request.tokenizer, real_endpoint=provider == "openai")
            request = request.model_copy(update={"tokenizer": counted_with})
            if opened.index is not None and opened.source is not None:
                signature = folder_signature(opened.source.path)
                request_json = request.model_dump_json(exclude={"spend_limit_tokens"})  # the limit's forecast is drawn from the preview
                pending = cost_previews().preview_future(opened.index, opened.source.key, signature, request_json, current.seed)
                wait_for_preview(pending)
        except (GraphRAGError, ValueError) as exc:
            problem = str(exc)

    def draw(first: bool) -> None:
        if pending is None or problem:
            views.render_cost_preview(st.container(), None, problem)
        elif not pending.done():
            st.caption("Cost preview: still computing for this index and these settings…")
        else:
            sections = controls.level_sections_for(opened, tokenizer=current.search.tokenizer)
            level = level_text(current.search.community_level)
            try:
                views.render_cost_preview(st.container(), pending.result(), None, sections=sections.get(level) if sections else None, request=request, price=price)
            except (GraphRAGError, ValueError) as exc:
                views.render_cost_preview(st.container(), None, str(exc))
            if not first:
                st.rerun()  # the whole page once, which also stops this polling

    with container:
        if pending is not None and not pending.done():
            st.fragment(lambda: draw(False), run_every=PREVIEW_POLL_S)()
        else:
            draw(True)


def draw_run_buttons(container: DeltaGenerator, page: ExploreState, app: AppSettings, current: RunSettings) -> None:
    """Run and Stop, and which model and endpoint the next run calls."""
    with container:
        left, mid, _ = st.columns([2, 1, 5], vertical_alignment="center")
        left.button(
            "Run global search", key=Keys.RUN, type="primary", disabled=page.running, on_click=controls.start_clicked, icon=":material/play_arrow:"
        )
        mid.button("Stop", key=Keys.STOP, disabled=not page.running, on_click=controls.stop_clicked, icon=":material/stop:")
        st.caption(escape_markdown(controls.run_target(app, current)))


def draw_messages(container: DeltaGenerator, page: ExploreState) -> None:
    """The errors and notices queued since the last drawing, shown once."""
    with container:
        for message in page.errors:
            st.error(escape_markdown(message), icon=":material/error:")
        for message in page.notices:
            st.info(escape_markdown(message), icon=":material/info:")
    page.errors.clear()
    page.notices.clear()


def keep_url(page: ExploreState, current: RunSettings) -> None:
    """The URL carries the settings (and the run shown), so a link reproduces the run."""
    params = to_query_params(current, run_id=page.view.run_id if page.view else None)
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)


def bundle_open(container: DeltaGenerator, page: ExploreState, app: AppSettings) -> None:
    bundles.render_bundle_open(container, app=app, key="explore_bundle", on_open=lambda run_id, notices, errors: controls.bundle_opened(page, run_id, notices, errors, app=app))


def draw_run(bundle_slot: DeltaGenerator, run_area: DeltaGenerator, page: ExploreState, app: AppSettings) -> None:
    """The run shown: followed while it runs (redrawn as its events come), then drawn whole,
    its answer scrolled into view once when it arrives."""
    view = page.view
    if view is None:
        return
    price = app.model.price
    if view.handle is None:
        bundles.render_bundle_download(bundle_slot.container(), view.state, index_key=view.index_key, app=app, key="run")
        views.render_run(run_area.container(), view.state, index_key=view.index_key, key="run", price=price)
        if view.reveal_answer:
            view.reveal_answer = False
            views.scroll_to_answer(st.container())
        return
    ticks = itertools.count()
    follow(
        view.handle,
        view.state,
        lambda state: views.render_run(run_area.container(), state, index_key=view.index_key, key=f"live{next(ticks)}", price=price, interactive=False),
        interval=redraw_interval,
    )
    if view.handle.save_error:
        page.errors.append(view.handle.save_error)
    view.handle = None
    view.reveal_answer = view.state.result is not None
    st.rerun()


__all__ = [
    "bundle_open",
    "check_url_level",
    "draw_cost_preview",
    "draw_messages",
    "draw_run",
    "draw_run_buttons",
    "follow_sample_question",
    "keep_url",
    "load_url",
]
