"""A stored run, whole (:class:`RunRecord`) and as one line of a list (:class:`RunSummary`).
Pure models: no SQLite and no display text here (the front ends name runs their own way)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime, timezone
from functools import cached_property

from pydantic import BaseModel, ConfigDict, Field

from ..errors import INTERRUPTED_ERROR_TYPE
from ..events import Event, EventList, RunFailed, RunFinished, RunStarted
from ..figures import RunFigures, figures_of, run_figures
from ..levels import Level
from ..request import GlobalSearchRequest
from ..results import GlobalSearchResult
from ..state import RunState
from ..status import RunStatus
from ..support.models import SupportCheck
from .liveness import interrupted_message


SWEEP_LABEL_PREFIX = "sweep "
"""The label of a run a sweep recorded starts so: ``sweep 1a2b3c4d · point 3 of 12``."""
EVALUATION_LABEL_PREFIX = "eval "
"""The label of a run an evaluation recorded starts so: ``eval 1a2b3c4d · C1 · q3 · seed 1``."""


def is_evaluation_label(label: str) -> bool:
    """Whether a run with this label answered a question of an evaluation (not a person's search)."""
    return label.startswith(EVALUATION_LABEL_PREFIX)


def utc_now_iso() -> str:
    """The current time as an ISO 8601 UTC string with seconds precision and a ``Z``-free offset."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class RunSummary(BaseModel):
    """One line of the run history: what a list shows, without the events or the result.

    The figures (``batch_count``, ``failed_batch_count``, ``selected_answer_count``,
    ``duration_s``) are those of :class:`~graphrag_core.figures.RunFigures` for the run's events."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    created_at: str
    index_name: str
    query: str
    status: RunStatus
    community_level: Level
    seed: int | None
    model: str
    duration_s: float
    batch_count: int
    failed_batch_count: int
    selected_answer_count: int
    label: str = ""
    request: GlobalSearchRequest | None = None
    """The run's settings (None only for a summary built by hand)."""
    index_path: str | None = None
    error: str | None = None

    @classmethod
    def of_state(
        cls,
        state: RunState,
        *,
        index_name: str,
        index_path: str | os.PathLike[str] | None = None,
        label: str = "",
        created_at: str,
    ) -> "RunSummary":
        """The summary of the run ``state`` has folded so far (it must have seen ``RunStarted``)."""
        if state.request is None or state.run_id is None:
            raise ValueError("A run summary needs the run's events, starting with run_started.")
        figures = figures_of(state)
        return cls(
            run_id=state.run_id,
            created_at=created_at,
            index_name=index_name,
            index_path=None if index_path is None else os.fspath(index_path),
            query=state.request.query,
            status=figures.outcome,
            community_level=state.request.reported_level,
            seed=state.seed,
            model=state.model or "",
            duration_s=figures.duration_s,
            batch_count=figures.batches,
            failed_batch_count=figures.failed_batches,
            selected_answer_count=figures.selected_answers if state.result is not None else 0,
            label=label,
            request=state.request,
            error=state.error,
        )


class RunRecord(BaseModel):
    """One run as stored: its request, every event it emitted, and its result when it finished.

    ``model`` is the model's identity string (never a secret). ``status`` is the result's status
    for a finished run, else ``failed``, ``cancelled``, ``interrupted`` or ``running`` (an event
    list cut short). ``events`` read from JSON hold each cache hit as one ``MapBatchCached``
    (see :mod:`graphrag_core.events`).
    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    created_at: str = Field(default_factory=utc_now_iso)
    index_name: str
    index_path: str | None = None
    query: str
    request: GlobalSearchRequest
    model: str
    seed: int | None = None
    status: RunStatus
    duration_s: float = 0.0
    error: str | None = None
    events: EventList = Field(default_factory=list)
    result: GlobalSearchResult | None = None
    label: str = ""
    support: SupportCheck | None = None
    """The run's latest support check (:func:`graphrag_core.support.check_support`), None until one is made."""

    @classmethod
    def from_events(
        cls,
        events: Iterable[Event],
        *,
        index_name: str,
        index_path: str | os.PathLike[str] | None = None,
        label: str = "",
        created_at: str | None = None,
    ) -> "RunRecord":
        """A record of the run those events describe, finished or not.

        The events must start with ``RunStarted`` (it carries the run id, request, seed and model);
        a list cut short (a failed or cancelled run, or one still running) is fine.
        """
        events = list(events)
        if not events or not isinstance(events[0], RunStarted):
            raise ValueError("A run record needs the run's events, starting with run_started.")
        state = RunState.replay(events)
        summary = RunSummary.of_state(state, index_name=index_name, index_path=index_path, label=label, created_at=created_at or utc_now_iso())
        assert summary.request is not None  # set by RunStarted
        return cls(
            run_id=summary.run_id,
            created_at=summary.created_at,
            index_name=index_name,
            index_path=summary.index_path,
            query=summary.query,
            request=summary.request,
            model=summary.model,
            seed=summary.seed,
            status=summary.status,
            duration_s=summary.duration_s,
            error=summary.error,
            events=events,
            result=state.result,
            label=label,
        )

    def with_run_id(self, run_id: str) -> "RunRecord":
        """The same run under another id: the record's and its ``RunStarted``'s (so its replay
        names the id it is stored under)."""
        events = list(self.events)
        if events and isinstance(events[0], RunStarted):
            events[0] = events[0].model_copy(update={"run_id": run_id})
        return self.model_copy(update={"run_id": run_id, "events": events})

    def ended_events(self) -> list[Event]:
        """The stored events, ending as the run ended: an interrupted run's end with a
        ``RunFailed`` saying so (its finished batches stay as they were); a record made from a
        result alone is its ``RunFinished``."""
        if not self.events:
            return [RunFinished(result=self.result)] if self.result is not None else []
        events = list(self.events)
        if self.status == RunStatus.INTERRUPTED and not isinstance(events[-1], (RunFinished, RunFailed)):
            state = RunState.replay(events)
            events.append(state.failure(at=events[-1].at, error=interrupted_message(state), error_type=INTERRUPTED_ERROR_TYPE))
        return events

    def replay(self) -> RunState:
        """The run's state, folded from its stored events (no model needed); see :meth:`ended_events`."""
        return RunState.replay(self.ended_events() if self.events else [])

    @cached_property
    def figures(self) -> RunFigures:
        """The run's figures (:func:`~graphrag_core.figures.run_figures` of :meth:`ended_events`)."""
        return run_figures(self.ended_events())

    @property
    def batch_count(self) -> int:
        return self.figures.batches

    @property
    def failed_batch_count(self) -> int:
        return self.figures.failed_batches

    @property
    def selected_answer_count(self) -> int:
        return self.figures.selected_answers if self.result is not None else 0

    def summary(self) -> RunSummary:
        return RunSummary(
            run_id=self.run_id,
            created_at=self.created_at,
            index_name=self.index_name,
            query=self.query,
            status=self.status,
            community_level=self.request.reported_level,
            seed=self.seed,
            model=self.model,
            duration_s=self.duration_s,
            batch_count=self.batch_count,
            failed_batch_count=self.failed_batch_count,
            selected_answer_count=self.selected_answer_count,
            request=self.request,
            label=self.label,
            index_path=self.index_path,
            error=self.error,
        )


__all__ = ["EVALUATION_LABEL_PREFIX", "SWEEP_LABEL_PREFIX", "RunRecord", "RunSummary", "is_evaluation_label", "utc_now_iso"]
