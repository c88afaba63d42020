"""Explore's page-level panels: the settings a URL sets, the cost preview (with what the map
cache would answer), the run buttons, the queued messages, the URL the page keeps, and the run
shown: followed live while it runs or replays, then drawn whole.

Each takes :class:`~graphrag_app.state.ExploreState` (and the container to draw into, where it
draws); the page only lays them out.

The live view is a fragment that reruns on its own every :func:`~graphrag_app.jobs.redraw_interval`
seconds: it folds the run's new events into the page's state and draws the same elements again
in the same places, so the charts stay on the page and only their data changes, and the rest of
the page is not redrawn. A session with no browser (``st.context.headers`` empty: a headless
harness) has nothing to tick the fragment, so its script follows the run to the end instead.
"""

from __future__ import annotations

from concurrent.futures import Future
from concurrent.futures import wait as futures_wait
from typing import NoReturn

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.errors import GraphRAGError
from graphrag_core.figures import Price
from graphrag_core.levels import is_fixed, level_text
from graphrag_core.llm.base import model_identity
from graphrag_core.methods import GLOBAL, VECTOR
from graphrag_core.request import GlobalSearchRequest, SearchSettings
from graphrag_core.samples import is_starting_question, sample_question, starting_question
from graphrag_core.search import draw_seed
from graphrag_core.tokens import planning_tokenizer_name

from ..panels import bundles, evidence
from . import charts, sidebar as controls, actions as run_controls, scrolling, run_view as views
from .chart_code import CHART_CODE_CSS
from .sidebar import OpenedIndex
from ..text import escape_markdown
from ..jobs import follow, redraw_interval
from .live_view import await_first_events, await_moment, live_timeline, moment_due, moment_wait_s, moments
from ..llm import build_model
from ..loaders import CostPreview, LevelCosts, cost_previews, finish_warm_imports, default_index_key, folder_signature, sample_names, wait_for_preview
from ..settings import AppSettings, initial_model
from ..session import ExploreState
from ..urls import PRESENTER_PARAM, REPLAY_PARAM, REPLAY_SPEEDS, RUN_PARAM, SPEED_PARAM, RunSettings, from_query_params, level_notice, replay_speed, to_query_params
from ..widgets import Keys, seed_widgets

PREVIEW_POLL_S = 1.0
"""How often a preview still computing is looked at again."""
CACHE_COUNT_WAIT_S = 0.5
"""How long a page waits for the map cache's count before drawing the preview without it."""


def load_url(page: ExploreState, app: AppSettings) -> RunSettings:
    """On this browser session's first script run the URL sets the page (its run is opened);
    then the widgets are seeded with the page's settings. Returns them."""
    if page.settings is None:
        base = RunSettings(
            index=default_index_key(), query=sample_question(default_index_key()), model=initial_model(app), search=SearchSettings.for_front_ends(seed=draw_seed())
        )
        params = st.query_params.to_dict()
        page.settings, problems = from_query_params(params, base=base)
        page.notices.extend(problems)
        st.session_state[Keys.PRESENTER] = params.get(PRESENTER_PARAM) == "1"
        if replayed := params.get(REPLAY_PARAM):
            try:
                speed = replay_speed(params.get(SPEED_PARAM))
            except ValueError as exc:
                page.notices.append(str(exc))
                speed = 1.0
            run_controls.start_replay(page, replayed, speed=speed, app=app, set_widgets=False)
        elif run_id := params.get(RUN_PARAM):
            run_controls.open_run(page, run_id, app=app, set_widgets=False)
    seed_widgets(page.settings, index_options=sample_names())
    return page.settings


def presenting() -> bool:
    """Whether Explore is in presenter mode (its switch, or ``?presenter=1``)."""
    return bool(st.session_state.get(Keys.PRESENTER))


PRESENTER_CSS = """<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"] { display: none; }
html { font-size: 19px; }
.stMainBlockContainer { padding-top: 1.5rem; padding-left: 2rem; padding-right: 2rem; max-width: 100%; }
</style>"""
"""Presenter mode's clean screen: no sidebar (the main area takes the full width), larger type."""


LIVE_VIEW_KEY = "live-view"
"""The key of the live view's container (its elements are under ``.st-key-live-view``)."""

EXPLORE_CSS = f"""<style>
.stMainBlockContainer {{ padding-top: 3.5rem; padding-left: 3rem; padding-right: 3rem; }}
.st-key-live-view [data-stale="true"] {{ opacity: 1 !important; transition: none !important; }}
{CHART_CODE_CSS}
</style>"""
"""Explore's page: less empty margin, so a streaming run's progress and both charts fit on a
1280x800 screen under the question; and the live view never fades its charts while a tick is
drawing them again (Streamlit greys an element until its new copy arrives, which on a busy
machine made the charts blink grey on every tick); the chart code's loader takes no room."""


def draw_page_style() -> None:
    st.html(EXPLORE_CSS)


def draw_presenter_switch(container: DeltaGenerator) -> None:
    """The presenter mode switch (on the page itself, since presenter mode hides the sidebar)."""
    container.toggle(
        "Presenter mode",
        width="stretch",
        key=Keys.PRESENTER,
        help="A clean screen for an audience: no sidebar, larger type, charts across the page, no developer detail. "
        "The URL keeps it (presenter=1).",
    )
    if presenting():
        st.html(PRESENTER_CSS)


def check_url_level(page: ExploreState, opened: OpenedIndex) -> None:
    """Once, the URL's level against the index it opened (a level the index lacks is a notice)."""
    if not page.url_loaded and opened.index is not None:
        if notice := level_notice(st.query_params.to_dict(), list(opened.index.summary_counts())):
            page.notices.append(notice)
    page.url_loaded = True


def follow_sample_question(opened: OpenedIndex) -> None:
    """An untouched starting question follows the index: switching to the Chinese sample asks its
    question, and switching to a folder asks the generic one (not the Jargon File's)."""
    asked = str(st.session_state.get(Keys.QUESTION) or "")
    if opened.source is not None and is_starting_question(asked):
        st.session_state[Keys.QUESTION] = starting_question(opened.source.key)


def cached_count_future(opened: OpenedIndex, current: RunSettings, app: AppSettings, request_json: str) -> Future[int] | None:
    """How many map batches of these settings the map cache would answer (None when it is not
    read: no cache, "Reuse cached map answers" off, dynamic selection, the endpoint tokenizer, or
    a model that cannot be built)."""
    if app.cache_path is None or not st.session_state.get(Keys.USE_CACHE, True) or opened.index is None or opened.source is None:
        return None
    if not is_fixed(current.search.community_level) or current.dynamic or current.search.tokenizer == "endpoint":
        return None
    try:
        identity = model_identity(build_model(controls.model_settings(app, current)))
    except (GraphRAGError, ValueError):
        return None
    signature = folder_signature(opened.source.path)
    return cost_previews().cached_future(opened.index, opened.source.key, signature, request_json, current.seed, identity=identity, cache_path=app.cache_path)


def cache_line(cached: int, batches: int) -> str:
    """What the map cache does to the next run, said before Run."""
    if cached == 0:
        return "Map cache: no batch of this run is in the cache; every batch calls the model."
    if cached >= batches:
        return f"Map cache: all {batches:,} batches would come from the cache, so the map would not stream. Run fresh calls the model for every batch."
    return f"Map cache: {cached:,} of {batches:,} batches would come from the cache (no model call, no streaming). Run fresh reads none."


def draw_cost_preview(
    container: DeltaGenerator,
    opened: OpenedIndex,
    current: RunSettings,
    problem: str | None,
    *,
    price: Price | None,
    provider: str | None = None,
    app: AppSettings | None = None,
    shown_run: bool = False,
) -> None:
    """The cost of these settings before any model call, computed off the script thread: a huge
    index says "still computing" and the preview appears when it is ready (the whole page is
    drawn again then). ``provider`` is the model's: with ``"openai"`` the "auto" tokenizer is
    previewed with the exact count a run against a real endpoint uses. With ``app``, it also
    says how many batches the map cache would answer. Until a run is shown (``shown_run``) it
    draws the planned batches too, which loads the charts' code while the reader types, before
    a run needs it."""
    request = None
    pending: Future[CostPreview] | None = None
    levels: Future[LevelCosts] | None = None
    cached: Future[int] | None = None
    if problem is None:
        try:
            request = current.to_request(query=current.query if current.query.strip() else "?")
            counted_with = planning_tokenizer_name(request.tokenizer, real_endpoint=provider == "openai")
            request = request.model_copy(update={"tokenizer": counted_with})
            if opened.index is not None and opened.source is not None:
                signature = folder_signature(opened.source.path)
                request_json = request.model_dump_json(exclude={"spend_limit_tokens"})  # the limit's forecast is drawn from the preview
                pending = cost_previews().preview_future(opened.index, opened.source.key, signature, request_json, current.seed)
                if ExploreState.get().levels_unpriced:  # the picker is drawn again once its tokens are counted
                    levels = cost_previews().levels_future(opened.index, opened.source.key, signature, request_json, current.seed)
                wait_for_preview(pending)
                if app is not None and current.query.strip():
                    cached = cached_count_future(opened, current, app, request.model_dump_json())  # its tokenizer as the run counts
        except (GraphRAGError, ValueError) as exc:
            problem = str(exc)

    def ready() -> bool:
        return all(future is None or future.done() for future in (pending, levels, cached))

    def draw(first: bool) -> None:
        if pending is None or problem:
            views.render_cost_preview(st.container(), None, problem)
        elif not pending.done():
            st.caption("Cost preview: still computing for this index and these settings…")
        elif request is not None and request.method != GLOBAL:
            try:
                render_source_preview(st.container(), pending.result(), request)
            except (GraphRAGError, ValueError) as exc:
                views.render_cost_preview(st.container(), None, str(exc))
        else:
            sections = controls.level_sections_for(opened, tokenizer=current.search.tokenizer)
            level = level_text(current.search.community_level)
            try:
                preview = pending.result()
                views.render_cost_preview(st.container(), preview, None, sections=sections.get(level) if sections else None, request=request, price=price)
            except (GraphRAGError, ValueError) as exc:
                views.render_cost_preview(st.container(), None, str(exc))
            else:
                if cached is not None and cached.done() and cached.exception() is None and preview.batches:
                    st.caption(escape_markdown(cache_line(cached.result(), preview.batches)))
                if preview.batch_tokens and request is not None and preview.rating is None and not shown_run:
                    finish_warm_imports()
                    st.plotly_chart(
                        charts.planned_batches_figure(preview.batch_tokens, request.map_prompt_budget), key="planned-batches", config=views.CHART_CONFIG
                    )
        if not first and ready():
            draw_again(ExploreState.get())  # the whole page once (the picker with its tokens), which also stops this polling

    if cached is not None:
        futures_wait([cached], timeout=CACHE_COUNT_WAIT_S)
    with container:
        if not ready():
            st.fragment(lambda: draw(False), run_every=PREVIEW_POLL_S)()
        else:
            draw(True)
            if levels is not None:  # counted since the picker was drawn: draw it again with them
                draw_again(ExploreState.get())

def render_source_preview(container: DeltaGenerator, preview: CostPreview, request: GlobalSearchRequest) -> None:
    """The cost of a run over source chunks before it runs: ``text`` maps every chunk; ``vector``
    makes one call with at most the reduce budget's prompt."""
    with container:
        cols = st.columns(4)
        cols[0].metric("Source chunks", f"{preview.summaries:,}")
        if request.method == VECTOR:
            cols[1].metric("Batches", "0", help="Naive RAG has no map: the most relevant chunks go straight into one call.")
            cols[2].metric("Est. prompt tokens", f"≤ {request.reduce_prompt_budget:,}", help="The chunks most relevant to the question, packed into the reduce budget (less its output reserve).")
            cols[3].metric("Model calls", "1", help="One call writes the answer; a failed call is retried once.")
            return
        cols[1].metric("Batches", f"{preview.batches:,}")
        cols[2].metric("Est. map prompt tokens", f"{preview.map_prompt_tokens:,}")
        cols[3].metric("Model calls", f"{preview.model_calls:,}", help="One per map batch plus the reduce; a failed call is retried once.")


def draw_run_buttons(container: DeltaGenerator, page: ExploreState, app: AppSettings, current: RunSettings) -> None:
    """Run, Run fresh (no map answer read from the cache) and Stop; Replay (at a chosen speed) for
    the finished run shown; and which model and endpoint the next run calls."""
    shown = page.view is not None and not page.running and bool(page.view.state.events)
    with container:
        row = st.container(horizontal=True, vertical_alignment="bottom", gap="small")
        row.button(
            "Run global search", key=Keys.RUN, type="primary", disabled=page.running, on_click=run_controls.start_clicked, icon=":material/play_arrow:"
        )
        if app.cache_path is not None:
            row.button(
                "Run fresh",
                key=Keys.RUN_FRESH,
                disabled=page.running,
                on_click=run_controls.fresh_clicked,
                icon=":material/autorenew:",
                help="Run once without reading the map cache: every batch calls the model and streams (its answers still go into the cache).",
            )
        row.button("Stop", key=Keys.STOP, disabled=not page.running, on_click=run_controls.stop_clicked, icon=":material/stop:")
        if shown:
            row.button(
                "Replay",
                key=Keys.REPLAY,
                on_click=run_controls.replay_clicked,
                icon=":material/replay:",
                help="Play the run shown back through the live view at its recorded pace (or the speed beside): no model, no cache.",
            )
            if st.session_state.get(Keys.REPLAY_SPEED) not in REPLAY_SPEEDS:
                st.session_state[Keys.REPLAY_SPEED] = 1.0
            row.selectbox("Replay speed", REPLAY_SPEEDS, key=Keys.REPLAY_SPEED, format_func=lambda v: f"{v:g}× speed", width=130, label_visibility="collapsed")
        if not presenting() and not page.running:
            st.caption(escape_markdown(controls.run_target(app, current)))


def draw_messages(container: DeltaGenerator, page: ExploreState) -> None:
    """The errors and notices queued since the reader last acted: shown until the reader acts
    again (the page drawing itself again, :func:`draw_again`, keeps them), and while a run
    streams (the live view redraws only itself) until the page is drawn whole after it."""
    errors, notices = page.errors, page.notices
    if page.drawn_again:
        errors = list(dict.fromkeys([*page.shown_errors, *errors]))
        notices = list(dict.fromkeys([*page.shown_notices, *notices]))
    page.drawn_again = False
    page.shown_errors, page.shown_notices = list(errors), list(notices)
    with container:
        for message in errors:
            st.error(escape_markdown(message), icon=":material/error:")
        for message in notices:
            st.info(escape_markdown(message), icon=":material/info:")
    if not page.running:
        page.errors.clear()
        page.notices.clear()


def draw_again(page: ExploreState) -> NoReturn:
    """The whole page drawn again by the page itself (its figures are counted, a run ended), not
    for the reader: what it said stays on it."""
    page.drawn_again = True
    st.rerun()


def keep_url(page: ExploreState, current: RunSettings) -> None:
    """The URL carries the settings, the run shown (a replay while it plays) and presenter mode,
    so a link reproduces the run, or the replay."""
    view = page.view
    speed = view.replay_speed if view is not None and view.live else None
    params = to_query_params(current, run_id=view.run_id if view else None, replay_speed=speed, presenter=presenting())
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)


def bundle_open(container: DeltaGenerator, page: ExploreState, app: AppSettings) -> None:
    bundles.render_bundle_open(container, app=app, key="explore_bundle", on_open=lambda run_id, notices, errors: run_controls.bundle_opened(page, run_id, notices, errors, app=app))


def _replay_note(speed: float | None) -> str | None:
    return None if speed is None else f"replay of a recorded run at {speed:g}× (no model, no cache)"


def _end_live(page: ExploreState) -> None:
    """The run shown stopped streaming: keep what it made, say what could not be saved, and
    bring its answer into view on the next drawing."""
    view = page.view
    if view is None or view.handle is None:
        return
    save_error = getattr(view.handle, "save_error", None)
    if save_error:
        page.errors.append(save_error)
    view.handle, view.replay_speed, view.end_drawn = None, None, False
    view.reveal_answer = view.state.result is not None


def _live_tick(interval: float, *, await_moments: bool = True) -> None:
    """One tick of the live view: fold what the run did since the last tick and draw it in
    place. A tick that finds a moment due (``live_pace``) draws the run as it is, then waits for
    the moment and draws what it brought in its place: the status, and the usefulness chart with
    its first bar, or the answer (the charts are left as they are). The answer is drawn under the
    charts on the first tick that has it (the run may still be saving), before them when the tick
    starts with it; the tick after the one that finds the run ended draws the whole page again
    (its answer, its diagnostics, Run). Without ``await_moments`` (the live view drawn with the
    whole page) it waits for none: that drawing would last until the moment, with what it does
    not draw again while a run streams (the cost preview's chart) greyed out until it ends."""
    page = ExploreState.get()
    view = page.view
    if view is None or view.handle is None:
        draw_again(page)
    drawn = moments(view.state)  # what the ticks before this one drew
    ended = view.handle.done  # read before catching up, so the run's last events are never missed
    view.handle.progress(view.state)
    if ended and view.end_drawn:
        _end_live(page)
        draw_again(page)
    if not ended and redraw_interval(view.state) != interval:
        draw_again(page)  # a new pace (the selection ended, the run grew): the live view ticks at it from now on
    state, note = view.state, _replay_note(view.replay_speed)
    live = st.container(key=LIVE_VIEW_KEY)
    status, body, draft, answer = live.empty(), live.container(), live.empty(), live.container()
    views.render_status(status.container(), state, note=note)
    finish_warm_imports()  # the figures below must not see a pandas half imported
    if state.result is not None:  # the answer at once; its evidence and anchor come with the whole page
        evidence.render_answer(answer, state, index_key=view.index_key)
    height = views.PRESENTER_CHART_HEIGHT if presenting() else views.LIVE_CHART_HEIGHT
    moment = moments(state) != drawn
    timeline = live_timeline(view, height=height, fresh=ended and not moment, hold=moment)
    usefulness = views.render_live_body(body, state, key="run", chart_height=height, timeline=timeline)
    views.render_answer_draft(draft.container(), state)
    if await_moments and not ended and moment_due(state):
        before = moments(state)
        await_moment(view, wait_s=moment_wait_s(interval))
        ended = view.handle.done
        view.handle.progress(state)
        views.render_status(status.container(), state, note=note)
        (bars, answered), (had_bars, had_answer) = moments(state), before
        if bars and not had_bars and usefulness is not None:
            views.render_usefulness(usefulness, state, key="run", height=height, top=timeline.layout.margin.t)
        if answered and not had_answer:
            draft.empty()
            evidence.render_answer(answer, state, index_key=view.index_key)
    view.end_drawn = ended


def draw_answer_offer(container: DeltaGenerator, page: ExploreState) -> None:
    """After Stop: offer an answer from what was read (a reduce over the finished map answers)."""
    view = page.view
    if view is None or view.live or not view.state.answerable_from_read:
        return
    answers = sum(1 for b in view.state.batches if b.status.succeeded and (b.usefulness or 0) > 0)
    with container:
        row = st.container(horizontal=True, vertical_alignment="center")
        row.button(
            "Answer from what was read",
            key=Keys.ANSWER_FROM_READ,
            type="primary",
            on_click=run_controls.answer_from_read_clicked,
            icon=":material/summarize:",
            help="One reduce call over the map answers finished before the stop; the run is kept with it, labelled partial.",
        )
        row.caption(f"{answers:,} useful map answers were finished before the stop: a reduce over them gives a partial answer.")


def draw_run(container: DeltaGenerator, page: ExploreState, app: AppSettings) -> None:
    """The run shown: followed live while it runs or replays (the live view), then drawn whole,
    its answer scrolled into view once when it arrives."""
    view = page.view
    if view is None:
        return
    if view.handle is not None and not st.context.headers:  # no browser to tick the live view
        follow(view.handle, view.state, lambda state: None)
        _end_live(page)
        draw_again(page)  # the whole page again: Run enabled, the run drawn whole
    if view.handle is not None:
        await_first_events(view)
        interval = redraw_interval(view.state)  # the planned batches' pace, when they are in
        with container:
            whole_page = [True]  # the fragment's first call is part of this drawing; its ticks are not

            def tick() -> None:
                _live_tick(interval, await_moments=not whole_page[0])
                whole_page[0] = False

            st.fragment(tick, run_every=interval)()
        return
    presenter = presenting()
    finish_warm_imports()
    with container:
        draw_answer_offer(st.container(), page)
        if not presenter:
            bundles.render_bundle_download(st.container(), view.state, index_key=view.index_key, app=app, key="run")
        views.render_run(st.container(), view.state, index_key=view.index_key, key="run", price=app.model.price, presenter=presenter)
        if view.reveal_answer:
            view.reveal_answer = False
            scrolling.scroll_to_answer(st.container())


__all__ = [
    "bundle_open",
    "check_url_level",
    "draw_cost_preview",
    "draw_again",
    "draw_messages",
    "draw_run",
    "draw_answer_offer",
    "draw_presenter_switch",
    "draw_run_buttons",
    "follow_sample_question",
    "keep_url",
    "load_url",
    "render_source_preview",
    "presenting",
]
