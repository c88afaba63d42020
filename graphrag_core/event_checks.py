"""Whether a list of events could be a run's (a bundle's, read back): the references its
events make to each other, as the fold (``state.RunState.apply``) reads them."""

from __future__ import annotations

from collections.abc import Iterable

from .events import BatchesPlanned, Event, MapBatchCached, MapBatchFailed, MapBatchRetried, MapBatchStarted, MapBatchSucceeded, RunFailed, RunFinished, RunStarted


class EventReferenceError(ValueError):
    """A list of events that no run could have emitted; the message names the event (from 1)."""


_MAP_EVENTS = (MapBatchStarted, MapBatchRetried, MapBatchSucceeded, MapBatchCached, MapBatchFailed)


def check_references(events: Iterable[Event]) -> None:
    """Raise :class:`EventReferenceError` unless the events could be a run's, as the fold
    (``state.RunState.apply``) reads them: the first is the one ``RunStarted``; the planned
    batches are numbered 0, 1, ... in order; every map event names a planned batch (never a
    negative one) after they were planned; nothing follows the run's end (``RunFinished`` or
    ``RunFailed``)."""
    planned: int | None = None
    ended = False
    for number, event in enumerate(events, start=1):
        where = f"event {number} ({event.kind})"
        if number == 1 and not isinstance(event, RunStarted):
            raise EventReferenceError(f"{where}: a run's events start with run_started.")
        if number > 1 and isinstance(event, RunStarted):
            raise EventReferenceError(f"{where}: a run starts once, with its first event.")
        if ended:
            raise EventReferenceError(f"{where}: it comes after the run ended.")
        if isinstance(event, BatchesPlanned):
            if planned is not None:
                raise EventReferenceError(f"{where}: a run plans its batches once.")
            if any(batch.index != position for position, batch in enumerate(event.batches)):
                raise EventReferenceError(f"{where}: the planned batches are not numbered 0, 1, 2, ... in order.")
            planned = len(event.batches)
        elif isinstance(event, _MAP_EVENTS):
            if planned is None:
                raise EventReferenceError(f"{where}: it names batch {event.batch_index} before the run planned its batches.")
            if not 0 <= event.batch_index < planned:
                numbers = f" (0-{planned - 1})" if planned else ""
                raise EventReferenceError(f"{where}: batch {event.batch_index} is not one of the run's {planned} planned batches{numbers}.")
        ended = isinstance(event, RunFinished | RunFailed)


__all__ = ["EventReferenceError", "check_references"]
