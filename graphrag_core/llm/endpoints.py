"""What model endpoints accepted, held by an object its owner shares: :class:`Endpoints`.

A call with an output schema is sent with the strongest ``response_format`` its endpoint
accepts, tried in :data:`OUTPUT_FORMS` order (``graphrag_core.llm.openai_model``). What an
endpoint settled on, and which refusals were already announced, live in an :class:`Endpoints`
object. A front end holds one for the process and hands it to every model it builds
(``build_chat_model(settings, endpoints=...)``), so each endpoint is negotiated once and each
refusal announced once; a model built without one gets its own, and negotiates for itself.
The same object watches how a local endpoint's calls overlap (:class:`SlotWatch`), to find a
server that answers one request at a time.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Literal
from collections.abc import Callable

OutputForm = Literal["json_schema", "json_object_schema", "json_object", "none"]
OUTPUT_FORMS: tuple[OutputForm, ...] = ("json_schema", "json_object_schema", "json_object", "none")
"""The ``response_format`` forms, strongest first: ``json_schema`` (strict), ``json_object``
with a ``schema``, plain ``json_object``, then none."""


SINGLE_SLOT_PAIRS = 4
"""A local endpoint is found to answer one request at a time after this many consecutive
replies, each ending while the next call was already waiting, all spaced as a single slot spaces them."""
SINGLE_SLOT_GAP = 0.5
"""Two such replies are "spaced as a single slot spaces them" when the second ends at least this
share of the shortest call's duration after the first (a server working on both at once ends
them close together)."""
SINGLE_SLOT_MIN_CALL_S = 0.05
"""Calls shorter than this say nothing about slots (timing noise): no verdict is drawn from them."""
SLOT_WATCH_CALLS = 32


class SlotWatch:
    """How one local endpoint's calls overlap, from the client's side: when each was sent and
    when its reply ended, and how many were in flight at once.

    Invariant: :attr:`single_slot` turns true at most once (then :meth:`ended` answers True, once)
    and never back; a verdict needs at least :data:`SINGLE_SLOT_PAIRS` replies that ended while
    another call was waiting, and calls of at least :data:`SINGLE_SLOT_MIN_CALL_S`; two such
    replies ending close together (the server worked on both) settle that it has more slots."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._calls: deque[tuple[float, float]] = deque(maxlen=SLOT_WATCH_CALLS)
        self.in_flight = 0
        self.most_in_flight = 0
        self.single_slot = False
        self._settled = False

    @property
    def observed(self) -> int:
        return len(self._calls)

    def started(self) -> None:
        """A call begins."""
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)

    def ended(self, sent: float, *, answered: bool) -> bool:
        """The call whose request went on the wire at ``sent`` (on this watch's clock) ended
        (``answered``: with a reply). True the one time this finds the endpoint answering one
        request at a time."""
        with self._lock:
            self.in_flight -= 1
            if not answered:
                return False
            self._calls.append((sent, self._clock()))
            if self._settled:
                return False
            verdict = _single_slot_verdict(list(self._calls))
            if verdict is None:
                return False
            self._settled, self.single_slot = True, verdict
            return verdict


def _single_slot_verdict(calls: list[tuple[float, float]]) -> bool | None:
    """True or False once the calls say whether their server has one slot, else ``None``:
    True when the last :data:`SINGLE_SLOT_PAIRS` replies that ended while the next call waited
    are each spaced by at least :data:`SINGLE_SLOT_GAP` of the shortest call; False when two
    such replies ended within a tenth of it (the server worked on both at once)."""
    by_end = sorted(calls, key=lambda call: call[1])
    waited = [after[1] - before[1] for before, after in zip(by_end, by_end[1:]) if after[0] < before[1]]
    shortest = min(end - sent for sent, end in calls)
    if len(waited) < SINGLE_SLOT_PAIRS or shortest < SINGLE_SLOT_MIN_CALL_S:
        return None
    if min(waited) < SINGLE_SLOT_GAP / 5 * shortest:
        return False
    return True if all(gap >= SINGLE_SLOT_GAP * shortest for gap in waited[-SINGLE_SLOT_PAIRS:]) else None


class Endpoints:
    """Per endpoint (a secret-free name of a base URL and model): the output form it accepts,
    and the refused forms already announced.

    Invariant: :meth:`refused` answers True once per endpoint and form, whichever model asks
    and from whichever thread.
    """

    def __init__(self) -> None:
        self._forms: dict[str, OutputForm] = {}
        self._announced: set[tuple[str, OutputForm]] = set()
        self._slots: dict[str, SlotWatch] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        with self._lock:
            return f"Endpoints({dict(self._forms)!r})"

    def accepted_form(self, endpoint: str) -> OutputForm | None:
        """The form ``endpoint`` is known to accept; ``None`` before its first schema call."""
        with self._lock:
            return self._forms.get(endpoint)

    def settle(self, endpoint: str, form: OutputForm) -> None:
        """Remember that a schema call to ``endpoint`` succeeded with ``form``."""
        with self._lock:
            self._forms[endpoint] = form

    def slots(self, endpoint: str) -> SlotWatch:
        """How ``endpoint``'s calls overlap (one watch per endpoint, shared by its models)."""
        with self._lock:
            return self._slots.setdefault(endpoint, SlotWatch())

    def refused(self, endpoint: str, form: OutputForm, *, following: OutputForm) -> bool:
        """Remember that ``endpoint`` refused ``form``, so ``following`` is tried from now on.

        True the first time this endpoint's refusal of ``form`` is recorded: the caller says so
        then, and never again."""
        with self._lock:
            self._forms[endpoint] = following
            if (endpoint, form) in self._announced:
                return False
            self._announced.add((endpoint, form))
            return True


__all__ = ["OUTPUT_FORMS", "Endpoints", "OutputForm", "SlotWatch"]
