"""What model endpoints accepted, held by an object its owner shares: :class:`Endpoints`.

A call with an output schema is sent with the strongest ``response_format`` its endpoint
accepts, tried in :data:`OUTPUT_FORMS` order (``graphrag_core.llm.openai_model``). What an
endpoint settled on, and which refusals were already announced, live in an :class:`Endpoints`
object. A front end holds one for the process and hands it to every model it builds
(``build_chat_model(settings, endpoints=...)``), so each endpoint is negotiated once and each
refusal announced once; a model built without one gets its own, and negotiates for itself.
The same object watches how a local endpoint's calls overlap (:class:`SlotWatch`), to find a
server that answers one request at a time.

Given an :class:`~graphrag_core.llm.endpoint_memory.EndpointMemory` (:meth:`Endpoints.remember_in`),
what endpoints settled on and which refusals were said outlive the process: the next process
sends the remembered form from its first call, and a refusal is said once, not on every run.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Literal
from collections.abc import Callable
from pathlib import Path

from .endpoint_memory import EndpointMemory, secret_free

OutputForm = Literal["json_schema", "json_object_schema", "json_object", "none"]
OUTPUT_FORMS: tuple[OutputForm, ...] = ("json_schema", "json_object_schema", "json_object", "none")
"""The ``response_format`` forms, strongest first: ``json_schema`` (strict), ``json_object``
with a ``schema``, plain ``json_object``, then none."""


SINGLE_SLOT_PAIRS = 4
"""A local endpoint is found to answer one request at a time when this many of the last
:data:`SINGLE_SLOT_WINDOW` replies that ended while the next call was already waiting were
spaced as a single slot spaces them."""
SINGLE_SLOT_WINDOW = 5
"""How many of the latest such replies a verdict reads: one more than :data:`SINGLE_SLOT_PAIRS`,
so that one pair the client read at once (a stall of its own) does not hide a single slot."""
SINGLE_SLOT_GAP = 0.5
"""Two such replies are "spaced as a single slot spaces them" when the second ends at least this
share of the server's turn (:func:`server_turn`) after the first (a server working on both at
once ends them close together)."""
SINGLE_SLOT_CLOSE = 0.1
"""Two such replies end "close together" when the second ends within this share of the server's
turn after the first: a server served both at once, or the client read both in one stall."""
SINGLE_SLOT_MIN_CALL_S = 0.05
"""A server's turn shorter than this says nothing about slots (timing noise): no verdict is drawn."""
SLOT_WATCH_CALLS = 32


class SlotWatch:
    """How one local endpoint's calls overlap, from the client's side: when each was sent and
    when its reply ended, and how many were in flight at once.

    Invariant: :attr:`single_slot` turns true at most once (then :meth:`ended` answers True, once)
    and never back; a verdict needs at least :data:`SINGLE_SLOT_WINDOW` replies that ended while
    another call was waiting, and a server's turn of at least :data:`SINGLE_SLOT_MIN_CALL_S`;
    most of the last such replies ending close together (the server worked on several at once)
    settle that it has more slots. :meth:`found` settles it from the server's own report."""

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

    def found(self, slots: int) -> None:
        """The server itself reported ``slots`` (llama.cpp's ``/props``): the verdict, settled."""
        with self._lock:
            self._settled, self.single_slot = True, slots == 1

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


def server_turn(calls: list[tuple[float, float]]) -> float:
    """How long the server takes over one call, as a single slot would have it: each call's
    duration shared among the replies it waited behind and its own (a reply that ended while it
    was in flight was served before it), the median of those shares. Unlike the shortest call,
    this does not grow with what the client adds to every call (its connection, its own stalls)
    while all but the first call of a burst wait in the server's queue."""
    ends = sorted(end for _, end in calls)
    shares = sorted((end - sent) / (1 + sum(1 for other in ends if sent < other < end)) for sent, end in calls)
    return shares[len(shares) // 2]


def _single_slot_verdict(calls: list[tuple[float, float]]) -> bool | None:
    """True or False once the calls say whether their server has one slot, else ``None``.

    Of the last :data:`SINGLE_SLOT_WINDOW` replies that ended while the next call waited: True
    when at least :data:`SINGLE_SLOT_PAIRS` were each spaced from the one before by at least
    :data:`SINGLE_SLOT_GAP` of the server's turn (a slot answers one call per turn); False when
    most ended within :data:`SINGLE_SLOT_CLOSE` of it (the server worked on them at once). One
    close pair decides nothing: it is also what a client that read two replies in one stall sees."""
    by_end = sorted(calls, key=lambda call: call[1])
    waited = [after[1] - before[1] for before, after in zip(by_end, by_end[1:]) if after[0] < before[1]]
    if len(waited) < SINGLE_SLOT_WINDOW:
        return None
    turn = server_turn(calls)
    if turn < SINGLE_SLOT_MIN_CALL_S:
        return None
    last = waited[-SINGLE_SLOT_WINDOW:]
    if 2 * sum(1 for gap in last if gap < SINGLE_SLOT_CLOSE * turn) > len(last):
        return False
    return True if sum(1 for gap in last if gap >= SINGLE_SLOT_GAP * turn) >= SINGLE_SLOT_PAIRS else None


class Endpoints:
    """Per endpoint (a secret-free name of a base URL and model): the output form it accepts,
    and the refused forms already announced.

    Invariant: :meth:`refused` answers True once per endpoint and form, whichever model asks
    and from whichever thread (and, with a memory, whichever process within its days).
    """

    def __init__(self) -> None:
        self._forms: dict[str, OutputForm] = {}
        self._announced: set[tuple[str, OutputForm]] = set()
        self._slots: dict[str, SlotWatch] = {}
        self._lock = threading.Lock()
        self.memory: EndpointMemory | None = None
        self._written: set[str] = set()

    def remember_in(self, path: Path | None, *, on_failure: Callable[[str], None] | None = None) -> None:
        """Keep what endpoints accepted in the file at ``path`` (None: in this process only),
        starting from what it already holds; what this object learned before is kept too."""
        if path is None or (self.memory is not None and self.memory.path == Path(path).expanduser()):
            return
        memory = EndpointMemory(path, on_failure=on_failure)
        forms, said = memory.load()
        with self._lock:
            self.memory = memory
            for endpoint, form in forms.items():
                if form in OUTPUT_FORMS:
                    self._forms.setdefault(endpoint, form)  # type: ignore[arg-type]
            self._announced |= {(endpoint, form) for endpoint, form in said if form in OUTPUT_FORMS}  # type: ignore[misc]

    def __repr__(self) -> str:
        with self._lock:
            return f"Endpoints({dict(self._forms)!r})"

    def accepted_form(self, endpoint: str) -> OutputForm | None:
        """The form ``endpoint`` is known to accept; ``None`` before its first schema call."""
        with self._lock:
            return self._forms.get(secret_free(endpoint))

    def settle(self, endpoint: str, form: OutputForm) -> None:
        """Remember that a schema call to ``endpoint`` succeeded with ``form``."""
        key = secret_free(endpoint)
        with self._lock:
            changed = self._forms.get(key) != form or key not in self._written
            self._forms[key] = form
            if changed and self.memory is not None:
                self._written.add(key)
                self.memory.settled(key, form)

    def slots(self, endpoint: str) -> SlotWatch:
        """How ``endpoint``'s calls overlap (one watch per endpoint, shared by its models)."""
        with self._lock:
            return self._slots.setdefault(endpoint, SlotWatch())

    def refused(self, endpoint: str, form: OutputForm, *, following: OutputForm) -> bool:
        """Remember that ``endpoint`` refused ``form``, so ``following`` is tried from now on.

        True the first time this endpoint's refusal of ``form`` is recorded: the caller says so
        then, and never again."""
        key = secret_free(endpoint)
        with self._lock:
            self._forms[key] = following
            self._written.discard(key)
            if (key, form) in self._announced:
                return False
            self._announced.add((key, form))
            if self.memory is not None:
                self.memory.said(key, form)
            return True


__all__ = ["OUTPUT_FORMS", "Endpoints", "OutputForm", "SlotWatch", "server_turn"]
