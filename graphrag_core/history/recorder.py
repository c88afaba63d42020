"""Recording a run while it streams, so a killed process leaves it in the history.

A :class:`RunRecorder` receives a run's events as they happen, folds each into a
:class:`~graphrag_core.state.RunState` (once), and writes the run to a
:class:`~graphrag_core.history.store.RunStore`: as soon as ``RunStarted`` arrives, then at most
every ``interval`` seconds, and once more at its end. Each write appends the events not written
yet and updates the run's row (status, figures, result) from the folded state, so a run of a
thousand batches makes a few dozen small writes, none of which rewrites what came before.

Invariants:
- after the first event, the store holds the run; until the run ends it is stored as
  ``running`` with this process as its writer, and reads of it after this process died say
  ``interrupted`` (see ``RunStore``), with every event written so far, redrawable like any run;
- after the final write the store holds every event, and ``close(interrupted=True)`` stores
  ``interrupted``;
- ``created_at`` is fixed at the first write, so the run keeps its place in the history;
- a failed write never stops the run: it is kept in ``save_error`` and tried again later (the
  events it did not write are written by the next one).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from ..events import Event, PartialAnswerStarted, RunFailed, RunFinished, RunStarted
from ..state import RunState
from ..status import RunStatus
from .records import RunRecord, RunSummary, utc_now_iso
from .store import RunStore, StoreError

FLUSH_INTERVAL_S = 1.0
"""Seconds between two writes of a running run (its start and end are written at once)."""


class RunRecorder:
    """Collects one run's events and writes them to ``store`` (None: collect only)."""

    def __init__(
        self,
        store: RunStore | Path | str | None,
        *,
        index_name: str,
        index_path: str | os.PathLike[str] | None = None,
        label: str = "",
        interval: float = FLUSH_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store_arg = store
        self._store: RunStore | None = store if isinstance(store, RunStore) else None
        self.index_name, self.index_path, self.label = index_name, index_path, label
        self.interval = interval
        self._clock = clock
        self._state = RunState()
        self.events: list[Event] = self._state.events
        """Every event so far, in order (the folded state's own list)."""
        self.created_at: str | None = None
        self.save_error: str | None = None
        self.saved_run_id: str | None = None
        self._last_write: float | None = None
        self._written = 0

    @classmethod
    def resuming(cls, store: RunStore | Path | str, record: RunRecord, *, interval: float = FLUSH_INTERVAL_S) -> "RunRecorder":
        """A recorder that goes on with a stored run (a stopped run answering from what it read):
        its events are held as written, and what it records next is appended to the same run,
        which keeps its place in the history."""
        recorder = cls(store, index_name=record.index_name, index_path=record.index_path, label=record.label, interval=interval)
        for event in record.events:
            recorder._state.apply(event)
        recorder.created_at, recorder.saved_run_id = record.created_at, record.run_id
        recorder._written = len(record.events)
        return recorder

    @property
    def store_path(self) -> Path | None:
        if self._store is not None:
            return self._store.path
        return None if self._store_arg is None else Path(self._store_arg)  # type: ignore[arg-type]

    def __call__(self, event: Event) -> None:
        """Add an event; write now when it starts or ends the run, or when a write is due."""
        self._state.apply(event)
        if isinstance(event, (RunStarted, RunFinished, RunFailed, PartialAnswerStarted)):
            self.flush()
        elif self._last_write is not None and self._clock() - self._last_write >= self.interval:
            self.flush()

    def flush(self, *, interrupted: bool = False) -> None:
        """Write the events not written yet and the run's row (nothing before ``RunStarted``)."""
        if self._store_arg is None or not self.events or not isinstance(self.events[0], RunStarted):
            return
        if self._written == len(self.events) and not interrupted:
            return
        self.created_at = self.created_at or utc_now_iso()
        try:
            if self._store is None:
                self._store = RunStore(self._store_arg)  # type: ignore[arg-type]
            summary = RunSummary.of_state(
                self._state, index_name=self.index_name, index_path=self.index_path, label=self.label, created_at=self.created_at
            )
            if interrupted and summary.status == RunStatus.RUNNING:
                summary = summary.model_copy(update={"status": RunStatus.INTERRUPTED})
            self._store.append(summary, self.events, since=self._written, result=self._state.result)
        except StoreError as exc:  # its message names the file and what is wrong with it
            self.save_error = f"The run could not be saved: {exc}"
        except (OSError, ValueError, sqlite3.Error) as exc:
            self.save_error = f"The run could not be saved to {self.store_path}: {type(exc).__name__}: {exc}"
        else:
            self.save_error, self.saved_run_id = None, summary.run_id
            self._written = len(self.events)
        self._last_write = self._clock()

    def close(self, *, interrupted: bool = False) -> str | None:
        """The final write; ``interrupted`` marks a run cut short (Ctrl-C) that has no end
        event. Returns the stored run id, or None when nothing was stored."""
        self.flush(interrupted=interrupted)
        return self.saved_run_id if self.save_error is None else None


__all__ = ["FLUSH_INTERVAL_S", "RunRecorder"]
