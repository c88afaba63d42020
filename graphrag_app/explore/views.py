"""Explore's page-level panels: the settings a URL sets, presenter mode, the cost preview (with
what the map cache would answer), the run buttons, the queued messages, the URL the page keeps,
and the run shown: followed live while it runs or replays (:mod:`~graphrag_app.explore.live_view`),
then drawn whole (:mod:`~graphrag_app.explore.run_view`).

Each takes what it draws from the session's :class:`~graphrag_app.live.ShownRun`, Explore's
:class:`~graphrag_app.explore.state.ExploreState` and the script run's one
:class:`~graphrag_app.explore.state.ExploreRequest` (and the container to draw into); the page
only lays them out. A session with no browser (``st.context.headers`` empty: a headless harness)
has nothing to tick the live view, so its script follows the run to the end instead.
"""

from __future__ import annotations

from concurrent.futures import Future
from concurrent.futures import wait as futures_wait

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.errors import GraphRAGError
from graphrag_core.figures import Price, money
from graphrag_core.levels import is_fixed, level_text
from graphrag_core.llm.base import TokenUsage, model_identity
from graphrag_core.methods import GLOBAL, VECTOR
from graphrag_core.request import GlobalSearchRequest, SearchSettings
from graphrag_core.samples import sample_question
from graphrag_core.search import draw_seed
from graphrag_core.wording import counted

from ..jobs import follow
from ..live import ShownRun, open_run, start_replay
from ..settings import build_model
from ..loaders import OpenedIndex, default_index_key, finish_warm_imports, folder_signature, sample_names
from ..previews import CostPreview, LevelCosts, cost_previews, level_sections_for, wait_for_preview
from ..panels import bundles
from ..settings import AppSettings, initial_model
from ..text import escape_markdown
from ..urls import PRESENTER_PARAM, REPLAY_PARAM, REPLAY_SPEEDS, RUN_PARAM, SPEED_PARAM, SUPPORT_PARAM, RunSettings, from_query_params, level_notice, replay_speed, to_query_params
from ..panels.evidence import index_for
from . import actions, charts, inspector, live_view, run_view
from .state import PRESENTER, REPLAY_SPEED, SUPPORT, ExploreRequest, ExploreState, Keys, checking_support, draw_again, presenting, seed_widgets

PREVIEW_POLL_S = 1.0
"""How often a preview still computing is looked at again."""

CACHE_COUNT_WAIT_S = 0.5
"""How long a page waits for the map cache's count before drawing the preview without it."""


def load_url(shown: ShownRun, app: AppSettings) -> RunSettings:
    """On this browser session's first script run the URL sets the page (its run is opened);
    then the widgets are seeded with the shown settings (overwritten when a run was opened into
    them since they were drawn). Returns those settings."""
    if shown.settings is None:
        base = RunSettings(
            index=default_index_key(), query=sample_question(default_index_key()), model=initial_model(app), search=SearchSettings.for_front_ends(seed=draw_seed())
        )
        params = st.query_params.to_dict()
        shown.settings, problems = from_query_params(params, base=base)
        shown.notices.extend(problems)
        PRESENTER.set(params.get(PRESENTER_PARAM) == "1")
        SUPPORT.set(params.get(SUPPORT_PARAM) == "1")
        if replayed := params.get(REPLAY_PARAM):
            try:
                speed = replay_speed(params.get(SPEED_PARAM))
            except ValueError as exc:
                shown.notices.append(str(exc))
                speed = 1.0
            start_replay(shown, replayed, speed=speed, app=app, set_widgets=False)
        elif run_id := params.get(RUN_PARAM):
            open_run(shown, run_id, app=app, set_widgets=False)
    seed_widgets(shown.settings, index_options=sample_names(), overwrite=shown.widgets_stale)
    shown.widgets_stale = False
    return shown.settings



PRESENTER_CSS = """<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"] { display: none; }
html { font-size: 19px; }
.stMainBlockContainer { padding-top: 1.5rem; padding-left: 2rem; padding-right: 2rem; max-width: 100%; }
</style>"""
"""Presenter mode's clean screen: no sidebar (the main area takes the full width), larger type."""


CHART_CODE_KEY = "chart-code"
"""The key of the hidden container of the chart that loads the charts' code (:func:`draw_chart_code`)."""


LIVE_VIEW_KEY = live_view.LIVE_VIEW_KEY
EXPLORE_CSS = f"""<style>
.stMainBlockContainer {{ padding-top: 3.5rem; padding-left: 3rem; padding-right: 3rem; }}
.st-key-{LIVE_VIEW_KEY} [data-stale="true"] {{ opacity: 1 !important; transition: none !important; }}
.st-key-{CHART_CODE_KEY} {{ display: none; }}
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


def draw_chart_code(place: DeltaGenerator, shown: ShownRun) -> None:
    """Have the browser load the charts' code (Streamlit's Plotly chart, 4.7 MB of script) as
    Explore opens, not when a run's first chart needs it: an empty chart in ``place``, in a
    container the page's CSS keeps out of the layout (:data:`EXPLORE_CSS`). Streamlit loads that
    code with the first chart a page draws; a click on Run before any chart was drawn left it to
    the live view's first chart, where fetching, compiling and running it (1-4.5 s on a busy
    2-core machine) held back the run's first bar. Drawn once Run is on the page, so Run is
    drawn first; not while a run with charts is shown (its charts have loaded the code, and the
    page's charts are then the run's alone)."""
    view = shown.view
    if view is not None and (view.state.batches or view.state.selection.active):
        return
    finish_warm_imports()  # a figure must not see a pandas half imported
    place.container(key=CHART_CODE_KEY).plotly_chart(charts.empty_figure(), key="chart-code-loader", config={"staticPlot": True, "displayModeBar": False})


def check_url_level(page: ExploreState, shown: ShownRun, opened: OpenedIndex) -> None:
    """Once, the URL's level against the index it opened (a level the index lacks is a notice)."""
    if not page.url_loaded and opened.index is not None:
        if notice := level_notice(st.query_params.to_dict(), list(opened.index.summary_counts())):
            shown.notices.append(notice)
    page.url_loaded = True


INTRO = "GraphRAG global search: map over community summaries, then reduce the most useful answers."


def draw_intro(place: DeltaGenerator, shown: ShownRun) -> None:
    """The page's one line under its title, into ``place`` (an ``st.empty``: the same element in
    the same place whether drawn or not, so nothing below it moves when a run ends); not while a
    run streams (the screen is the run's), nor in presenter mode."""
    if not presenting() and not shown.running:
        place.caption(INTRO)


# -- the cost preview -----------------------------------------------------------------------------


def cached_count_future(opened: OpenedIndex, chosen: ExploreRequest, app: AppSettings, request: GlobalSearchRequest) -> Future[int] | None:
    """How many map batches of ``request`` (the preview's: counted as the run counts) the map
    cache would answer (None when it is not read: no cache, "Reuse cached map answers" off,
    dynamic selection, the endpoint tokenizer, or a model that cannot be built)."""
    current = chosen.settings
    if app.cache_path is None or not chosen.use_cache or opened.index is None or opened.source is None:
        return None
    if not is_fixed(current.search.community_level) or current.dynamic or current.search.tokenizer == "endpoint":
        return None
    try:
        identity = model_identity(build_model(actions.model_settings(app, chosen)))
    except (GraphRAGError, ValueError):
        return None
    signature = folder_signature(opened.source.path)
    return cost_previews().cached_future(opened.index, opened.source.key, signature, request, identity=identity, cache_path=app.cache_path)


def cache_line(cached: int, batches: int) -> str:
    """What the map cache does to the next run, said before Run."""
    if cached == 0:
        return "Map cache: no batch of this run is in the cache; every batch calls the model."
    if cached >= batches:
        return f"Map cache: all {batches:,} batches would come from the cache, so the map would not stream. Run fresh calls the model for every batch."
    return f"Map cache: {cached:,} of {batches:,} batches would come from the cache (no model call, no streaming). Run fresh reads none."


def draw_cost_preview(
    container: DeltaGenerator,
    page: ExploreState,
    opened: OpenedIndex,
    chosen: ExploreRequest,
    *,
    price: Price | None,
    app: AppSettings | None = None,
    shown_run: bool = False,
) -> None:
    """The cost of the chosen settings before any model call, computed off the script thread: a
    huge index says "still computing" and the preview appears when it is ready (the whole page is
    drawn again then). The "auto" tokenizer is previewed as the chosen model's run counts (the
    exact count for a real endpoint: ``chosen.counted_with``). With ``app``, it also says how
    many batches the map cache would answer. Until a run is shown (``shown_run``) it draws the
    planned batches too."""
    problem = chosen.problem
    request = None
    pending: Future[CostPreview] | None = None
    levels: Future[LevelCosts] | None = None
    cached: Future[int] | None = None
    if problem is None:
        try:
            request = chosen.previewed()
            if opened.index is not None and opened.source is not None:
                signature = folder_signature(opened.source.path)
                keyed = request.model_copy(update={"spend_limit_tokens": None})  # the limit's forecast is drawn from the preview
                pending = cost_previews().preview_future(opened.index, opened.source.key, signature, keyed)
                if page.levels_unpriced:  # the picker is drawn again once its tokens are counted (the picker's own request)
                    levels = cost_previews().levels_future(opened.index, opened.source.key, signature, chosen.priced())
                wait_for_preview(pending)
                if app is not None and chosen.settings.query.strip():
                    cached = cached_count_future(opened, chosen, app, keyed)
        except (GraphRAGError, ValueError) as exc:
            problem = str(exc)

    def ready() -> bool:
        return all(future is None or future.done() for future in (pending, levels, cached))

    def draw(first: bool) -> None:
        draw_preview_figures(chosen, opened, request, pending, cached, problem, price=price, shown_run=shown_run)
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
                draw_again(page)


def draw_preview_figures(
    chosen: ExploreRequest,
    opened: OpenedIndex,
    request: GlobalSearchRequest | None,
    pending: Future[CostPreview] | None,
    cached: Future[int] | None,
    problem: str | None,
    *,
    price: Price | None,
    shown_run: bool,
) -> None:
    """The preview as far as it is computed: its error, "still computing", a run over source
    chunks' figures, or the summaries' figures with where their tokens come from, what the map
    cache would answer and the planned batches."""
    if pending is None or problem:
        draw_cost_figures(st.container(), None, problem)
    elif not pending.done():
        st.caption("Cost preview: still computing for this index and these settings…")
    elif request is not None and request.method != GLOBAL:
        try:
            draw_source_preview(st.container(), pending.result(), request)
        except (GraphRAGError, ValueError) as exc:
            draw_cost_figures(st.container(), None, str(exc))
    else:
        current = chosen.settings
        sections = level_sections_for(opened, tokenizer=current.search.tokenizer)
        level = level_text(current.search.community_level)
        try:
            preview = pending.result()
            draw_cost_figures(st.container(), preview, None, sections=sections.get(level) if sections else None, request=request, price=price)
        except (GraphRAGError, ValueError) as exc:
            draw_cost_figures(st.container(), None, str(exc))
        else:
            if cached is not None and cached.done() and cached.exception() is None and preview.batches:
                st.caption(escape_markdown(cache_line(cached.result(), preview.batches)))
            if preview.batch_tokens and request is not None and preview.rating is None and not shown_run:
                finish_warm_imports()
                st.plotly_chart(charts.planned_batches_figure(preview.batch_tokens, request.map_prompt_budget), key="planned-batches", config=run_view.CHART_CONFIG)


def draw_source_preview(container: DeltaGenerator, preview: CostPreview, request: GlobalSearchRequest) -> None:
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


def draw_cost_figures(
    container: DeltaGenerator,
    preview: CostPreview | None,
    error: str | None,
    *,
    sections: tuple[int, int, int] | None = None,
    request: GlobalSearchRequest | None = None,
    price: Price | None = None,
) -> None:
    """The run's cost before it runs, and where its tokens come from: the level's summaries,
    claims and source excerpts (``sections``), with what switching claims or excerpts off saves;
    with a spending limit, whether the run will reach it."""
    with container:
        if error:
            st.error(f"Cost preview: {escape_markdown(error)}", icon=":material/error:")
            return
        if preview is None:
            return
        forecast = preview.forecast(request) if request is not None else None
        if forecast is not None:
            if forecast.verdict == "will_reach":
                st.warning(escape_markdown(forecast.text()), icon=":material/savings:")
            else:
                st.caption(escape_markdown(forecast.text()))
        rating = preview.rating
        if rating is not None:  # dynamic selection: a range, from every root rated to every community rated
            cols = st.columns(4)
            cols[0].metric("Est. rating calls", f"{rating.min_calls:,}–{rating.max_calls:,}", help="At least every root is rated; at most every community with a summary (times the repeats).")
            cols[1].metric("Est. rating prompt tokens", f"{rating.min_prompt_tokens:,}–{rating.max_prompt_tokens:,}")
            cols[2].metric("Est. map prompt tokens", f"0–{preview.map_prompt_tokens:,}", help=f"Depends on what the ratings keep; at most the {preview.summaries} summaries of {preview.bound_label}.")
            cols[3].metric("Model calls", f"{rating.min_calls:,}–{rating.max_calls + preview.model_calls:,}", help="Rating calls, then one per map batch plus the reduce; a failed call is retried once.")
            return
        cols = st.columns(4)
        cols[0].metric("Summaries", f"{preview.summaries:,}")
        cols[1].metric("Batches", f"{preview.batches:,}")
        cols[2].metric("Est. map prompt tokens", f"{preview.map_prompt_tokens:,}")
        cols[3].metric("Model calls", f"{preview.model_calls:,}", help="One per map batch plus the reduce; a failed call is retried once.")
        lines = []
        if sections is not None and request is not None:
            summaries, claims, sources = sections
            parts = [f"summaries {summaries:,}"]
            parts.append(f"claims {claims:,}" if request.include_claims else f"claims off (would add {claims:,})")
            parts.append(f"source excerpts {sources:,}" if request.include_sources else f"source excerpts off (would add {sources:,})")
            texts = summaries + (claims if request.include_claims else 0) + (sources if request.include_sources else 0)
            if preview.map_prompt_tokens > texts:  # the rest of the estimate: each batch's prompt and part headers
                parts.append(f"the map prompt and part headers of {counted(preview.batches, 'batch')} {preview.map_prompt_tokens - texts:,}")
            lines.append("Where the map tokens come from at this level: " + " · ".join(parts) + ".")
        if price is not None and request is not None:
            completion = preview.batches * request.map_output_reserve + request.reduce_output_reserve
            prompt = preview.map_prompt_tokens + request.reduce_token_budget
            lines.append(
                f"Cost at the configured price: about {money(price.of(TokenUsage(prompt_tokens=preview.map_prompt_tokens)))} "
                f"for the map prompts, at most {money(price.of(TokenUsage(prompt_tokens=prompt, completion_tokens=completion)))} "
                "with every answer and the reduce at their budgets."
            )
        for line in lines:
            st.caption(escape_markdown(line))


# -- the run buttons, the messages, the URL, the run shown ---------------------------------------


def draw_run_buttons(container: DeltaGenerator, shown: ShownRun, app: AppSettings, chosen: ExploreRequest) -> None:
    """Run, Run fresh (no map answer read from the cache) and Stop; Replay (at a chosen speed) for
    the finished run shown; and which model and endpoint the next run calls."""
    replayable = shown.view is not None and not shown.running and bool(shown.view.state.events)
    with container:
        row = st.container(horizontal=True, vertical_alignment="bottom", gap="small")
        row.button("Run global search", key=Keys.RUN, type="primary", disabled=shown.running, on_click=actions.run_clicked, icon=":material/play_arrow:")
        if app.cache_path is not None:
            row.button(
                "Run fresh",
                key=Keys.RUN_FRESH,
                disabled=shown.running,
                on_click=actions.fresh_clicked,
                icon=":material/autorenew:",
                help="Run once without reading the map cache: every batch calls the model and streams (its answers still go into the cache).",
            )
        row.button("Stop", key=Keys.STOP, disabled=not shown.running, on_click=actions.stop_clicked, icon=":material/stop:")
        if replayable:
            row.button(
                "Replay",
                key=Keys.REPLAY,
                on_click=actions.replay_clicked,
                icon=":material/replay:",
                help="Play the run shown back through the live view at its recorded pace (or the speed beside): no model, no cache.",
            )
            if not REPLAY_SPEED.present or REPLAY_SPEED.value not in REPLAY_SPEEDS:  # a selectbox with no value shows its first option
                REPLAY_SPEED.set(1.0)
            row.selectbox("Replay speed", REPLAY_SPEEDS, key=REPLAY_SPEED.key, format_func=lambda v: f"{v:g}× speed", width=130, label_visibility="collapsed")
        if not presenting() and not shown.running:
            st.caption(escape_markdown(actions.run_target(app, chosen)))


def draw_messages(container: DeltaGenerator, shown: ShownRun, page: ExploreState) -> None:
    """The errors and notices queued since the reader last acted: shown until the reader acts
    again (the page drawing itself again, :func:`~graphrag_app.explore.state.draw_again`, keeps
    them), and while a run streams (the live view redraws only itself) until the page is drawn
    whole after it."""
    errors, notices = shown.errors, shown.notices
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
    if not shown.running:
        shown.errors.clear()
        shown.notices.clear()


def keep_url(shown: ShownRun, chosen: ExploreRequest) -> None:
    """The URL carries the chosen settings, the run shown (a replay while it plays), presenter
    mode and the support check, so a link reproduces the run, or the replay."""
    view = shown.view
    speed = view.replay_speed if view is not None and view.live else None
    params = to_query_params(chosen.settings, run_id=view.run_id if view else None, replay_speed=speed, presenter=presenting(), support=checking_support())
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)


def bundle_open(container: DeltaGenerator, shown: ShownRun, app: AppSettings) -> None:
    """"Open run bundle": the bundle's run is put in the history and shown."""
    bundles.draw_bundle_open(container, app=app, key="explore_bundle", on_open=lambda run_id, notices, errors: actions.bundle_opened(shown, run_id, notices, errors, app=app))


def draw_answer_offer(container: DeltaGenerator, shown: ShownRun) -> None:
    """After Stop: offer an answer from what was read (a reduce over the finished map answers)."""
    view = shown.view
    if view is None or view.live or not view.state.answerable_from_read:
        return
    answers = sum(1 for b in view.state.batches if b.status.succeeded and (b.usefulness or 0) > 0)
    with container:
        row = st.container(horizontal=True, vertical_alignment="center")
        row.button(
            "Answer from what was read",
            key=Keys.ANSWER_FROM_READ,
            type="primary",
            on_click=actions.answer_from_read_clicked,
            icon=":material/summarize:",
            help="One reduce call over the map answers finished before the stop; the run is kept with it, labelled partial.",
        )
        row.caption(f"{answers:,} useful map answers were finished before the stop: a reduce over them gives a partial answer.")


def draw_run(container: DeltaGenerator, shown: ShownRun, page: ExploreState, app: AppSettings, chosen: ExploreRequest) -> None:
    """The run shown: followed live while it runs or replays (the live view), then drawn whole
    (with its support check: :func:`~graphrag_app.explore.actions.ensure_support`), its
    answer scrolled into view once when it arrives.

    ``container`` holds two places: the first for a run drawn whole, the second for a run
    followed live; the one not in use holds an empty element. So the drawing after Run replaces
    the previous run's panels at once, and the drawing after the run's end replaces the live
    view at once (Streamlit keeps the children of a block drawn again in the same place until the
    script run ends, but an element drawn where a block was replaces it), instead of leaving the
    one on the screen beside the other until that drawing ends."""
    view = shown.view
    if view is None:
        return
    if view.handle is not None and not st.context.headers:  # no browser to tick the live view
        follow(view.handle, view.state, lambda state: None)
        live_view.end_live(shown)
        draw_again(page)  # the whole page again: Run enabled, the run drawn whole
    whole, live = container.empty(), container.empty()
    if view.handle is not None:
        live_view.draw_live(live.container(), shown)
        return
    presenter = presenting()
    finish_warm_imports()
    with whole.container():
        draw_answer_offer(st.container(), shown)
        if not presenter:
            bundles.draw_bundle_download(st.container(), view.state, index_key=view.index_key, app=app, key="run")
        support = actions.ensure_support(shown, index_for(view.index_key), app, chosen)
        run_view.draw_run(st.container(), view.state, index_key=view.index_key, key="run", price=app.model.price, presenter=presenter, support=support)
        if view.reveal_answer:
            view.reveal_answer = False
            inspector.scroll_to_answer(st.container())


__all__ = [
    "bundle_open",
    "cache_line",
    "check_url_level",
    "draw_answer_offer",
    "draw_chart_code",
    "draw_cost_figures",
    "draw_cost_preview",
    "draw_intro",
    "draw_messages",
    "draw_page_style",
    "draw_presenter_switch",
    "draw_run",
    "draw_run_buttons",
    "draw_source_preview",
    "keep_url",
    "load_url",
]
