"""One typed state per page, each under one session key: what a page remembers between script
runs that is not a widget's value (a widget's value lives under the widget's own key).

A page reads its state with ``ExploreState.get()`` (``SweepsState.get()``, ...): the state of
this browser session, made on first use. A job in flight is a typed field (a
:class:`~graphrag_app.jobs.RunHandle` or :class:`~graphrag_app.live.ReplayHandle`,
:class:`~graphrag_app.jobs.SweepHandle`, ...), set when the job starts and cleared when the page
has followed it to its end.

Streamlit keeps a widget's value only while the widget is drawn; leaving Explore drops them.
:class:`ExploreState` keeps the last :class:`~graphrag_app.urls.RunSettings`, and
:func:`graphrag_app.widgets.seed_widgets` puts them back before the widgets are drawn again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import streamlit as st

from graphrag_core.evaluation import ExperimentResult
from graphrag_core.evaluation.questions import EvalQuestion
from graphrag_core.state import RunState
from graphrag_core.sweep import SweepResult

from .jobs import EvalJob, QuestionsJob, SweepHandle
from .live import LiveHandle
from .urls import RunSettings

S = TypeVar("S", bound="PageState")


class PageState:
    """A page's state in this browser session, under the session key ``KEY``."""

    KEY: ClassVar[str]

    @classmethod
    def get(cls: type[S]) -> S:
        """This session's state of the page (a fresh one on first use, or after a code reload)."""
        state = st.session_state.get(cls.KEY)
        if not isinstance(state, cls):
            state = cls()
            st.session_state[cls.KEY] = state
        return state


@dataclass
class RunView:
    """The run the Explore page shows: live (``handle`` set: a run in this process, or a replay
    when ``replay_speed`` is set) or finished/reopened."""

    run_id: str
    state: RunState
    index_key: str
    handle: LiveHandle | None = None
    reveal_answer: bool = False
    """Set when a live run ends: the next drawing scrolls its answer into view, once."""
    replay_speed: float | None = None
    """The speed of the replay being played (None: a run, or a replay that ended)."""
    end_drawn: bool = False
    """The live view has drawn the run's end (its answer); the next tick draws the page whole."""
    timeline: object | None = None
    """The call timeline the live view drew last (a Plotly figure), drawn again unchanged until
    it is due (``live_pace.TIMELINE_REDRAW_S``)."""
    timeline_key: tuple[float, int] | None = None
    """When that timeline was drawn (the script's clock) and at what height."""

    @property
    def live(self) -> bool:
        return self.handle is not None


@dataclass
class ExploreState(PageState):
    """Explore: the settings, the run shown, and the messages queued for the next drawing (the
    run's callbacks run before the script and leave their errors here)."""

    KEY: ClassVar[str] = "graphrag_explorer"

    settings: RunSettings | None = None
    url_loaded: bool = False
    view: RunView | None = None
    notices: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    shown_notices: list[str] = field(default_factory=list)
    shown_errors: list[str] = field(default_factory=list)
    """The messages the last drawing showed: a drawing the page asks for itself (``drawn_again``)
    shows them again, since the reader has not acted since."""
    drawn_again: bool = False
    """The next drawing is the page's own (``explore_views.draw_again``), not the reader's."""
    levels_unpriced: bool = False
    """The level picker was drawn before each level's tokens were counted: the page is drawn
    again once they are (see ``explore_views.draw_cost_preview``)."""

    @property
    def running(self) -> bool:
        return self.view is not None and self.view.handle is not None and not self.view.handle.done


@dataclass
class CompareState(PageState):
    """Compare: the runs the URL named when the page last read or wrote it, and a notice for the
    next drawing."""

    KEY: ClassVar[str] = "compare_page"

    url_runs: list[str] | None = None
    notice: str | None = None


@dataclass
class SweepsState(PageState):
    """Sweeps: the sweep in flight, the last result, and why the last start or run ended early."""

    KEY: ClassVar[str] = "sweeps_page"

    job: SweepHandle | None = None
    result: SweepResult | None = None
    ended_early: str | None = None
    """Why the last sweep ended before its last point (stopped, or failed)."""
    refused: str | None = None
    """Why the last click of "Run sweep" started nothing (e.g. an unreachable endpoint)."""

    @property
    def running(self) -> bool:
        return self.job is not None and not self.job.done


@dataclass
class EvaluateState(PageState):
    """Evaluate: the experiment and the question generation in flight, the result shown, the
    generated questions, the cached estimate, and the last failures."""

    KEY: ClassVar[str] = "evaluate_page"

    job: EvalJob | None = None
    questions_job: QuestionsJob | None = None
    result: ExperimentResult | None = None
    generated: list[EvalQuestion] | None = None
    estimate: tuple[tuple[str, str], Any] | None = None
    """The estimate of the last spec, keyed by (index, spec as JSON)."""
    error: str | None = None
    questions_error: str | None = None


@dataclass
class JudgingState(PageState):
    """Evaluate's judging screen: the experiment being judged (read once from the store) and the
    name this browser session judges under (None until it is given)."""

    KEY: ClassVar[str] = "judging_page"

    experiment: ExperimentResult | None = None
    name: str | None = None
    notice: str | None = None
    """What the last action left to say (a refused name, skipped pairs brought back), once."""


@dataclass
class BrowseState(PageState):
    """Index browser: the index the entity graph's community box was set for (another index
    resets it: its community ids mean other communities)."""

    KEY: ClassVar[str] = "index_browser_page"

    graph_index: str | None = None


@dataclass
class ProvenanceState(PageState):
    """Provenance: the (index, community) of the URL as the page last read or wrote it, and the
    run Back to Explore was clicked for (None when it was not)."""

    KEY: ClassVar[str] = "provenance_page"

    url_community: tuple[str, str | None] | None = None
    back_to: str | None = None


__all__ = ["BrowseState", "CompareState", "EvaluateState", "ExploreState", "JudgingState", "PageState", "ProvenanceState", "RunView", "SweepsState"]
