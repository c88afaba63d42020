"""Whether the process writing a running run is still there, so a run whose writer died reads
``interrupted`` instead of ``running`` for good.

A running run stores its writer as ``host:pid:start`` (:func:`process_token`); on this host the
process is asked, on another the age of the run's last event decides (:data:`STALE_RUN_S`).
"""

from __future__ import annotations

import os
import socket
from datetime import datetime, timedelta, timezone

from ..state import RunState
from ..status import RunStatus


def _process_start(pid: int) -> str:
    """The start time of a process (Linux ``/proc``), so a reused pid is not taken for it; ''
    when unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def process_token() -> str:
    """This process, as the writer of a running run: ``host:pid:start``."""
    return f"{socket.gethostname()}:{os.getpid()}:{_process_start(os.getpid())}"


STALE_RUN_S = 900.0
"""A running run written by another host whose last event is older than this is taken as
interrupted (a live run writes as its batches finish; its process cannot be asked)."""


def writer_alive(token: str, *, last_event_at: datetime | None = None) -> bool:
    """Whether the process a token names may still run: on this host, whether that process
    (same pid and start time) exists; on another host, whether its last event is recent."""
    host, _, rest = token.partition(":")
    pid_text, _, start = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        if last_event_at is None:
            return True
        return (datetime.now(timezone.utc) - last_event_at).total_seconds() < STALE_RUN_S
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return not start or _process_start(pid) in ("", start)


def live_status(status: str, writer: object, created_at: object = None, duration_s: object = None) -> RunStatus:
    """A stored status; ``running`` becomes ``interrupted`` when its writer process is gone."""
    stored = RunStatus(status)
    if stored is not RunStatus.RUNNING or not isinstance(writer, str) or not writer:
        return stored
    last_event_at = None
    if isinstance(created_at, str) and isinstance(duration_s, (int, float)):
        try:
            started = datetime.fromisoformat(created_at)
        except ValueError:
            started = None
        if started is not None and started.tzinfo is not None:
            last_event_at = started + timedelta(seconds=float(duration_s))
    return stored if writer_alive(writer, last_event_at=last_event_at) else RunStatus.INTERRUPTED


def interrupted_message(state: RunState) -> str:
    """The error of an interrupted run's closing ``RunFailed``: how far its map got."""
    done, total = state.finished_batches, len(state.batches)
    return f"The run was interrupted: its process ended before it finished ({done} of {total} map batches were done)."


__all__ = ["STALE_RUN_S", "interrupted_message", "live_status", "process_token", "writer_alive"]
