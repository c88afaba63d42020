"""A stored run, whole (:class:`RunRecord`) and as one line of a list (:class:`RunSummary`), and
the words lists show for them. Pure models: no SQLite here."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime, timezone
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import INTERRUPTED_ERROR_TYPE
from ..events import Event, RunFailed, RunFinished, RunStarted
from ..figures import RunFigures, RunOutcome, figures_of, run_figures
from ..request import GlobalSearchRequest
from ..results import GlobalSearchResult
from ..state import RunState
from .liveness import interrupted_message

RunStatus = RunOutcome
"""The status of a stored run: a result's status, or how an unfinished run ended.
``interrupted``: its process ended (killed, Ctrl-C) before the run did."""

def utc_now_iso() -> str:
    """The current time as an ISO 8601 UTC string with seconds precision and a ``Z``-free offset."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def level_text(level: int | str) -> str:
    return str(level)


def level_value(text: str) -> int | Literal["leaf", "dynamic"]:
    return text if text in ("leaf", "dynamic") else int(text)  # type: ignore[return-value]


class RunSummary(BaseModel):
    """One line of the run history: what a list shows, without the events or the result."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    created_at: str
    index_name: str
    query: str
    status: RunStatus
    community_level: int | Literal["leaf", "dynamic"]
    seed: int | None
    model: str
    duration_s: float
    batch_count: int
    failed_batch_count: int
    selected_answer_count: int
    label: str = ""
    request: GlobalSearchRequest | None = None
    """The run's settings (None only for a summary built by hand)."""


STATUS_WORDS: dict[str, str] = {"cancelled": "stopped"}
"""How a stored status reads: a run the user stopped is stored as ``cancelled`` (old records
keep reading) and shown as "stopped" everywhere."""


def status_word(status: str) -> str:
    """The word shown for a stored run status (``cancelled`` -> ``stopped``)."""
    return STATUS_WORDS.get(status, status)


def settings_text(request: GlobalSearchRequest | None, *, seed: int | None, level: int | str | None = None) -> str:
    """What tells two runs of one question apart: level, map and reduce budgets, seed and the
    reduce selection, plus claims or excerpts left out, e.g.
    ``level 0 · map 8,000 · reduce 6,000 · seed 7 · skip · no claims``."""
    if request is None:
        return f"level {level} · seed {seed}"
    parts = [
        f"level {request.community_level}",
        f"map {request.map_token_budget:,}",
        f"reduce {request.reduce_token_budget:,}",
        f"seed {seed if seed is not None else request.seed}",
        str(getattr(request, "selection", None) or request.reduce_strategy),
    ]
    if not request.include_claims:
        parts.append("no claims")
    if not request.include_sources:
        parts.append("no excerpts")
    return " · ".join(parts)


def run_label(run: "RunSummary | RunRecord", *, query_chars: int = 60) -> str:
    """The one label of a run in every list (Compare, History, Recent runs, ``runs list``):
    ``id · when · index · question · settings · status [label]``."""
    query = run.query if len(run.query) <= query_chars else run.query[: query_chars - 1] + "…"
    when = run.created_at.replace("T", " ")[:16]
    level = run.request.community_level if run.request is not None else getattr(run, "community_level", None)
    tag = f" [{run.label[:30]}]" if run.label else ""
    return (
        f"{run.run_id[:8]} · {when} · {run.index_name} · {query} · "
        f"{settings_text(run.request, seed=run.seed, level=level)} · {status_word(run.status)}{tag}"
    )


class RunRecord(BaseModel):
    """One run as stored: its request, every event it emitted, and its result when it finished.

    ``model`` is the model's identity string (never a secret). ``status`` is the result's status
    for a finished run, else ``failed``, ``cancelled`` or ``running`` (an event list cut short).
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
    events: list[Event] = Field(default_factory=list)
    result: GlobalSearchResult | None = None
    label: str = ""

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
        assert state.request is not None and state.run_id is not None  # set by RunStarted
        figures = figures_of(state)
        return cls(
            run_id=state.run_id,
            created_at=created_at or utc_now_iso(),
            index_name=index_name,
            index_path=None if index_path is None else os.fspath(index_path),
            query=state.request.query,
            request=state.request,
            model=state.model or "",
            seed=state.seed,
            status=figures.outcome,
            duration_s=figures.duration_s,
            error=state.error,
            events=events,
            result=state.result,
            label=label,
        )

    def ended_events(self) -> list[Event]:
        """The stored events, ending as the run ended: an interrupted run's end with a
        ``RunFailed`` saying so (its finished batches stay as they were); a record made from a
        result alone is its ``RunFinished``."""
        if not self.events:
            return [RunFinished(result=self.result)] if self.result is not None else []
        events = list(self.events)
        if self.status == "interrupted" and not isinstance(events[-1], (RunFinished, RunFailed)):
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
        )


__all__ = ["RunRecord", "RunStatus", "RunSummary", "level_text", "level_value", "run_label", "settings_text", "status_word", "STATUS_WORDS", "utc_now_iso"]
