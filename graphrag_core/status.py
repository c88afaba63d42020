"""How a run stands or ended, as one type with its words.

The run's fold (:mod:`graphrag_core.state`), its figures, the run history, bundles, the command
line and the app all use :class:`RunStatus`; nothing compares status strings of its own, and
every screen shows :attr:`RunStatus.word`. The values are the ones stored in run histories and
bundles (``"cancelled"`` for a run the user stopped, read as "stopped").
"""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    """A run's status. ``RUNNING`` while it streams; the others once it ended (spec section 8 for
    ``COMPLETED``, ``PARTIAL`` and ``NO_RESULTS``)."""

    RUNNING = "running"
    COMPLETED = "completed"
    PARTIAL = "partial"
    NO_RESULTS = "no_results"
    FAILED = "failed"
    CANCELLED = "cancelled"
    """Stopped by the user (Stop, Ctrl-C, a spending limit)."""
    INTERRUPTED = "interrupted"
    """Its process ended before the run did (read from the run history, never emitted)."""

    @property
    def word(self) -> str:
        """The word people read for this status, the same on every page and in every command."""
        return _WORDS[self]

    @property
    def why_heading(self) -> str:
        """The heading over the reasons a run has no (full) answer, in the same words:
        ``Why the run stopped``, ``Why the run found no results``."""
        return _WHY[self]

    @property
    def ended(self) -> bool:
        return self is not RunStatus.RUNNING

    @property
    def finished(self) -> bool:
        """Whether a run with this status ended with a result (``COMPLETED``, ``PARTIAL``,
        ``NO_RESULTS``): the statuses a ``RunFinished`` event carries."""
        return self in (RunStatus.COMPLETED, RunStatus.PARTIAL, RunStatus.NO_RESULTS)

    @property
    def answered(self) -> bool:
        """Whether a run with this status has an answer from the reduce (``PARTIAL`` included)."""
        return self in (RunStatus.COMPLETED, RunStatus.PARTIAL)


_WORDS: dict[RunStatus, str] = {
    RunStatus.RUNNING: "running",
    RunStatus.COMPLETED: "completed",
    RunStatus.PARTIAL: "partial",
    RunStatus.NO_RESULTS: "no results",
    RunStatus.FAILED: "failed",
    RunStatus.CANCELLED: "stopped",
    RunStatus.INTERRUPTED: "interrupted",
}


_WHY: dict[RunStatus, str] = {
    RunStatus.RUNNING: "Why the run has no answer yet",
    RunStatus.COMPLETED: "How the run ended",
    RunStatus.PARTIAL: "Why the answer is partial",
    RunStatus.NO_RESULTS: "Why the run found no results",
    RunStatus.FAILED: "Why the run failed",
    RunStatus.CANCELLED: "Why the run stopped",
    RunStatus.INTERRUPTED: "Why the run was interrupted",
}


def status_word(status: str) -> str:
    """The word for a status value as stored (an unknown value is shown as it is)."""
    try:
        return RunStatus(status).word
    except ValueError:
        return status


__all__ = ["RunStatus", "status_word"]
