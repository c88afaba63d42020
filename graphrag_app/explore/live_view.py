"""When Explore's live view draws what a run makes: its first drawing after a click on Run, the
moments the audience watches for (the first bar, the answer), and the call timeline's pace.

The browser asks for a tick of the live view every ``jobs.redraw_interval`` seconds; a request
that comes while a tick runs waits, and runs the moment that tick ends. A tick that finds a
moment due (the run's first map answer not in yet, or its reduce before the answer) draws the
run's status, then waits for the moment for a little longer than the interval
(:func:`moment_wait_s`): the browser's next request is in before the wait ends, so ticks follow
one another with no gap, and the moment is drawn as soon as the run has it, whenever it comes.
The drawing after a click waits a moment for the run's first events. The call timeline is built
anew at most once a second, and not in the tick that draws a moment: the browser builds a Plotly
chart whose figure changed from scratch, while one drawn again unchanged costs it nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import plotly.graph_objects as go

from graphrag_core.state import RunState
from graphrag_core.status import RunStatus

from . import charts
from ..jobs import DEFAULT_REDRAW_INTERVAL_S
from ..session import RunView

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
    batches (a dynamic selection's walk, or a ranking of source chunks, is something to draw)."""
    if not state.events:
        return True
    return state.status == RunStatus.RUNNING and state.phase == "selecting" and not state.selection.active and state.ranking is None


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


__all__ = [
    "FIRST_EVENTS_WAIT_S",
    "MOMENT_OVERLAP_S",
    "MOMENT_WAIT_S",
    "TIMELINE_REDRAW_S",
    "await_first_events",
    "await_moment",
    "live_timeline",
    "moment_due",
    "moments",
    "moment_wait_s",
    "planning",
]
