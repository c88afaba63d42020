"""A run followed live on Explore (a run in this process, or a replay), and when it draws.

The live view is a fragment that reruns on its own every :func:`~graphrag_app.jobs.redraw_interval`
seconds (:func:`draw_live`): it folds the run's new events into the shown run's state and draws
the same elements again in the same places, so the charts stay on the page and only their data
changes, and the rest of the page is not redrawn; the tick after the one that finds the run
ended draws the whole page again.

When it draws: the browser asks for a tick every ``jobs.redraw_interval`` seconds; a request
that comes while a tick runs waits, and runs the moment that tick ends. A tick that finds a
moment due (the run's first map answer not in yet, or its reduce before the answer) draws the
run's status, then waits for the moment for a little longer than the interval
(:func:`moment_wait_s`): the browser's next request is in before the wait ends, so ticks follow
one another with no gap, and the moment is drawn as soon as the run has it, whenever it comes.
The drawing after a click waits a moment for the run's first events. The call timeline is built
anew at most once a second, and not in the tick that draws a moment; a tick that builds it draws
the usefulness chart it drew last (:func:`tick_figures`): the browser builds a Plotly chart whose
figure changed from scratch, showing nothing in its place meanwhile, while one drawn again
unchanged costs it nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.state import RunState
from graphrag_core.status import RunStatus

from ..jobs import DEFAULT_REDRAW_INTERVAL_S, redraw_interval
from ..live import RunView, ShownRun
from ..loaders import finish_warm_imports
from . import charts, run_view
from .state import ExploreState, draw_again, presenting

FIRST_EVENTS_WAIT_S = 0.3
"""How long the drawing that follows a click on Run waits for the run's first events (it plans
its batches first), so that drawing says the run is running and shows its batches."""

FIRST_EVENTS_POLL_S = 0.02
"""How often a wait here looks at the run again."""

MOMENT_OVERLAP_S = 0.2
"""How much longer than the live view's interval a tick waits for a moment: long enough for the
browser's next request to be in before the wait ends (its timer, and the message, can be late
on a busy machine)."""

MOMENT_WAIT_S = DEFAULT_REDRAW_INTERVAL_S + MOMENT_OVERLAP_S
"""How long a tick waits for a moment at the live view's usual interval (:func:`moment_wait_s`)."""

TIMELINE_REDRAW_S = 1.0
"""The call timeline is built anew at most this often (the usefulness chart on every tick):
two charts built twice a second kept a busy browser behind the run."""


def await_first_events(
    view: RunView,
    *,
    wait_s: float = FIRST_EVENTS_WAIT_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Fold the live run's events into ``view``; a run still :func:`planning` (it was started by
    the click this drawing follows) is looked at again every ``FIRST_EVENTS_POLL_S`` for up to
    ``wait_s``, so the live view's first drawing is not an idle status a tick before the run's,
    and has the planned batches' chart (whose code the browser may still have to load) before the
    first bar is due."""
    handle = view.handle
    if handle is None:
        return
    deadline = clock() + wait_s
    handle.progress(view.state)
    while planning(view.state) and not handle.done and clock() < deadline:
        sleep(FIRST_EVENTS_POLL_S)
        handle.progress(view.state)


def planning(state: RunState) -> bool:
    """Whether a run has shown nothing to draw yet: no event, or started and still planning its
    batches (a dynamic selection's walk, a lazy run's relevance tests, or a ranking of source
    chunks, is something to draw)."""
    if not state.events:
        return True
    return (
        state.status == RunStatus.RUNNING and state.phase == "selecting" and not state.selection.active and not state.relevance.active
        and state.ranking is None
    )


def moment_due(state: RunState) -> bool:
    """Whether a run is between its plan and its first map answer, or in its reduce before the
    answer: the moments :func:`await_moment` waits for."""
    if state.status != RunStatus.RUNNING:
        return False
    if state.phase == "map":
        return bool(state.batches) and state.finished_batches == 0
    return state.phase == "reduce" and state.result is None


def moment_wait_s(interval: float) -> float:
    """How long a tick of a live view ticking every ``interval`` seconds waits for a moment: past
    the browser's next request, so that request's tick follows this one at once."""
    return interval + MOMENT_OVERLAP_S


def await_moment(
    view: RunView,
    *,
    wait_s: float = MOMENT_WAIT_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Fold the live run's events into ``view``; while :func:`moment_due`, look again every
    ``FIRST_EVENTS_POLL_S`` for up to ``wait_s``, so the tick draws the first bar, or the answer,
    the moment the run has it. Returns whether it waited (the tick's status, drawn before the
    wait, is then drawn again)."""
    handle = view.handle
    if handle is None:
        return False
    deadline = clock() + wait_s
    handle.progress(view.state)
    waited = False
    while not handle.done and moment_due(view.state) and clock() < deadline:
        sleep(FIRST_EVENTS_POLL_S)
        handle.progress(view.state)
        waited = True
    return waited


def moments(state: RunState) -> tuple[bool, bool]:
    """Which moments ``state`` has reached: its first bar (a finished map batch), its answer."""
    return state.finished_batches > 0, state.result is not None


def live_timeline(
    view: RunView, *, height: int, fresh: bool = False, hold: bool = False, clock: Callable[[], float] = time.monotonic
) -> go.Figure:
    """The call timeline for this tick of the live view: the one drawn last while it is younger
    than ``TIMELINE_REDRAW_S``, or whatever its age when the tick ``hold``s it (a tick drawing a
    moment: the browser's work goes to the moment), at the same height and unless ``fresh``;
    else one drawn from the run now."""
    now = clock()
    kept = view.timeline_key
    due = kept is None or (now - kept[0] >= TIMELINE_REDRAW_S and not hold)
    if fresh or view.timeline is None or kept is None or kept[1] != height or due:
        view.timeline, view.timeline_key = charts.timeline_figure(view.state, height=height), (now, height)
    return view.timeline  # type: ignore[return-value]


def live_usefulness(view: RunView, *, height: int, top: int | None, keep: bool = False) -> go.Figure:
    """The usefulness chart for this tick of the live view: the one drawn last when the tick
    ``keep``s it (it builds the timeline anew), else one drawn from the run now. The browser
    builds a chart whose figure changed from scratch, and shows nothing in its place for a
    moment; one tick building both charts left the usefulness chart's place blank often enough
    for an audience to see it blink, so a tick builds one of them at most."""
    kept = view.usefulness
    if keep and kept is not None and kept.layout.height == height:  # type: ignore[attr-defined]
        return kept  # type: ignore[return-value]
    view.usefulness = charts.usefulness_figure(view.state, height=height, top=top)
    return view.usefulness  # type: ignore[return-value]


def tick_figures(
    view: RunView, *, height: int, moment: bool = False, ended: bool = False, clock: Callable[[], float] = time.monotonic
) -> tuple[go.Figure, go.Figure]:
    """The call timeline and the usefulness chart a tick draws: a tick that builds the timeline
    anew draws the usefulness chart it drew last again (the browser builds one chart at most per
    tick), unless it draws a moment or the run's end, which show the run as it is."""
    drawn = view.timeline
    timeline = live_timeline(view, height=height, fresh=ended and not moment, hold=moment, clock=clock)
    keep = timeline is not drawn and drawn is not None and not moment and not ended
    return timeline, live_usefulness(view, height=height, top=timeline.layout.margin.t, keep=keep)


# -- the live view --------------------------------------------------------------------------------


LIVE_VIEW_KEY = "live-view"
"""The key of the live view's container (its elements are under ``.st-key-live-view``)."""


def _replay_note(speed: float | None) -> str | None:
    return None if speed is None else f"replay of a recorded run at {speed:g}× (no model, no cache)"


def end_live(shown: ShownRun) -> None:
    """The run shown stopped streaming: keep what it made, say what could not be saved, and
    bring its answer into view on the next drawing."""
    view = shown.view
    if view is None or view.handle is None:
        return
    save_error = getattr(view.handle, "save_error", None)
    if save_error:
        shown.errors.append(save_error)
    view.handle, view.replay_speed, view.end_drawn = None, None, False
    view.reveal_answer = view.state.result is not None


def _live_tick(interval: float, *, await_moments: bool = True) -> None:
    """One tick of the live view: fold what the run did since the last tick and draw it in
    place. A tick that finds a moment due (:func:`moment_due`) draws the run as it is, then waits for
    the moment and draws what it brought in its place: the status, and the usefulness chart with
    its first bar, or the answer (the charts are left as they are). The answer is drawn under the
    charts on the first tick that has it (the run may still be saving), before them when the tick
    starts with it; the tick after the one that finds the run ended draws the whole page again
    (its answer, its diagnostics, Run). Without ``await_moments`` (the live view drawn with the
    whole page) it waits for none: that drawing would last until the moment, with what it does
    not draw again while a run streams (the cost preview's chart) greyed out until it ends."""
    page, shown = ExploreState.get(), ShownRun.get()
    view = shown.view
    if view is None or view.handle is None:
        draw_again(page)
    drawn = moments(view.state)  # what the ticks before this one drew
    ended = view.handle.done  # read before catching up, so the run's last events are never missed
    view.handle.progress(view.state)
    if ended and view.end_drawn:
        end_live(shown)
        draw_again(page)
    if not ended and redraw_interval(view.state) != interval:
        draw_again(page)  # a new pace (the selection ended, the run grew): the live view ticks at it from now on
    state, note = view.state, _replay_note(view.replay_speed)
    live = st.container(key=LIVE_VIEW_KEY)
    status, body, draft, answer = live.empty(), live.container(), live.empty(), live.container()
    run_view.draw_status(status.container(), state, note=note)
    finish_warm_imports()  # the figures below must not see a pandas half imported
    if state.result is not None:  # the answer at once; its evidence and anchor come with the whole page
        run_view.draw_answer(answer, state, index_key=view.index_key)
    height = run_view.PRESENTER_CHART_HEIGHT if presenting() else run_view.LIVE_CHART_HEIGHT
    moment = moments(state) != drawn
    timeline, figure = tick_figures(view, height=height, moment=moment, ended=ended)
    top = timeline.layout.margin.t
    usefulness = run_view.draw_live_body(body, state, key="run", chart_height=height, timeline=timeline, usefulness=figure)
    run_view.draw_answer_draft(draft.container(), state)
    if await_moments and not ended and moment_due(state):
        before = moments(state)
        await_moment(view, wait_s=moment_wait_s(interval))
        ended = view.handle.done
        view.handle.progress(state)
        run_view.draw_status(status.container(), state, note=note)
        (bars, answered), (had_bars, had_answer) = moments(state), before
        if bars and not had_bars and usefulness is not None:
            run_view.draw_usefulness(usefulness, state, key="run", height=height, figure=live_usefulness(view, height=height, top=top))
        if answered and not had_answer:
            draft.empty()
            run_view.draw_answer(answer, state, index_key=view.index_key)
    view.end_drawn = ended


def draw_live(container: DeltaGenerator, shown: ShownRun) -> None:
    """The run shown, followed live in ``container``: a fragment that ticks at the run's pace
    (its first call is part of this script run's drawing, which waits for no moment)."""
    view = shown.view
    assert view is not None and view.handle is not None
    await_first_events(view)
    interval = redraw_interval(view.state)  # the planned batches' pace, when they are in
    with container:
        whole_page = [True]  # the fragment's first call is part of this drawing; its ticks are not

        def tick() -> None:
            _live_tick(interval, await_moments=not whole_page[0])
            whole_page[0] = False

        st.fragment(tick, run_every=interval)()


__all__ = [
    "FIRST_EVENTS_POLL_S",
    "FIRST_EVENTS_WAIT_S",
    "LIVE_VIEW_KEY",
    "MOMENT_OVERLAP_S",
    "MOMENT_WAIT_S",
    "TIMELINE_REDRAW_S",
    "await_first_events",
    "await_moment",
    "draw_live",
    "end_live",
    "live_timeline",
    "live_usefulness",
    "moment_due",
    "moment_wait_s",
    "moments",
    "tick_figures",
    "planning",
]
