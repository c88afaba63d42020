"""When Explore's live view draws what a run makes: its first drawing after a click on Run, the
moments the audience watches for (the first bar, the answer), and the call timeline's pace.

The live view ticks every ``jobs.redraw_interval`` seconds. A tick due before a run's first map
answer, or in its reduce before its answer, waits a moment for it; the drawing that follows a
click waits a moment for the run's first events; each wait is shorter than a tick. The call
timeline is built anew at most once a second: the browser builds a Plotly chart whose figure
changed from scratch, while one drawn again unchanged costs it nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import plotly.graph_objects as go

from graphrag_core.state import RunState
from graphrag_core.status import RunStatus

from . import charts
from .state import RunView

FIRST_EVENTS_WAIT_S = 0.3
"""How long the drawing that follows a click on Run waits for the run's first events (it plans
its batches first), so that drawing says the run is running and shows its batches."""
FIRST_EVENTS_POLL_S = 0.02
"""How often a wait here looks at the run again."""
MOMENT_WAIT_S = 0.3
"""How long a tick of the live view waits, when it is due, for a moment the audience watches
for: the run's first map answer (its first bar) and its answer."""
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
    """Fold the live run's events into ``view``; a run with none yet (it was started by the
    click this drawing follows) is looked at again every ``FIRST_EVENTS_POLL_S`` for up to
    ``wait_s``, so the live view's first drawing is not an idle status a tick before the run's
    (the live view ticks only after this drawing)."""
    handle = view.handle
    if handle is None:
        return
    deadline = clock() + wait_s
    handle.progress(view.state)
    while not view.state.events and not handle.done and clock() < deadline:
        sleep(FIRST_EVENTS_POLL_S)
        handle.progress(view.state)


def moment_due(state: RunState) -> bool:
    """Whether a run is between its plan and its first map answer, or in its reduce before the
    answer: the moments :func:`await_moment` waits for."""
    if state.status != RunStatus.RUNNING:
        return False
    if state.phase == "map":
        return bool(state.batches) and state.finished_batches == 0
    return state.phase == "reduce" and state.result is None


def await_moment(
    view: RunView,
    *,
    wait_s: float = MOMENT_WAIT_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Fold the live run's events into ``view``; while :func:`moment_due`, look again every
    ``FIRST_EVENTS_POLL_S`` for up to ``wait_s``, so the tick draws the first bar, or the answer,
    the moment the run has it."""
    handle = view.handle
    if handle is None:
        return
    deadline = clock() + wait_s
    handle.progress(view.state)
    while not handle.done and moment_due(view.state) and clock() < deadline:
        sleep(FIRST_EVENTS_POLL_S)
        handle.progress(view.state)


def live_timeline(view: RunView, *, height: int, fresh: bool = False, clock: Callable[[], float] = time.monotonic) -> go.Figure:
    """The call timeline for this tick of the live view: the one drawn last while it is younger
    than ``TIMELINE_REDRAW_S`` (same height, not ``fresh``), else one drawn from the run now."""
    now = clock()
    kept = view.timeline_key
    if fresh or view.timeline is None or kept is None or kept[1] != height or now - kept[0] >= TIMELINE_REDRAW_S:
        view.timeline, view.timeline_key = charts.timeline_figure(view.state, height=height), (now, height)
    return view.timeline  # type: ignore[return-value]


__all__ = ["FIRST_EVENTS_WAIT_S", "MOMENT_WAIT_S", "TIMELINE_REDRAW_S", "await_first_events", "await_moment", "live_timeline", "moment_due"]
