"""Checks before a run that spend no tokens: can the model be called at all?

A model that can check (:class:`~graphrag_core.llm.base.CheckableChatModel`: an adapter that
talks to a network; offline and scripted models have nothing to check) is asked to; a failed
check raises :class:`~graphrag_core.errors.PreflightError` with one message naming the
endpoint, so the app and the command line refuse up front instead of spending every batch's
attempts waiting.

:func:`preflight` checks now. A :class:`Preflight` object remembers passes: a front end holds
one for the process and awaits ``check`` on its own event loop, so each click of Run does not
check a reachable endpoint again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from .llm.base import ChatModel, CheckableChatModel

PREFLIGHT_TIMEOUT_S = 5.0
"""How long the reachability check waits for the endpoint to accept a connection."""

PREFLIGHT_MEMORY_S = 300.0
"""How long a :class:`Preflight` trusts a pass before it checks that endpoint again."""


async def preflight(model: ChatModel, *, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> None:
    """Raise ``PreflightError`` when ``model`` cannot be called; return quietly when it can
    (or has nothing to check). Nothing is remembered: see :class:`Preflight`."""
    if isinstance(model, CheckableChatModel):
        await model.preflight(timeout_s=timeout_s)


class Preflight:
    """Checks models before runs and remembers which passed, for its owner.

    Invariants: a pass is remembered for ``memory_s`` seconds (by ``clock``) per
    ``preflight_key`` (the endpoint and model, and whether a key is set where one is needed), so
    a model with another key presence is checked anew; a failure is never remembered. Safe to
    share between threads (each session of the app checks through the same object).
    """

    def __init__(self, *, memory_s: float = PREFLIGHT_MEMORY_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.memory_s = memory_s
        self._clock = clock
        self._passed: dict[str, float] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Preflight(memory_s={self.memory_s!r}, passed={len(self._passed)})"

    async def check(self, model: ChatModel, *, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> None:
        """:func:`preflight`, skipped for a model whose ``preflight_key`` passed within
        ``memory_s`` seconds."""
        if not isinstance(model, CheckableChatModel):
            return
        key = model.preflight_key
        with self._lock:
            passed_at = self._passed.get(key)
        if passed_at is not None and self._clock() - passed_at < self.memory_s:
            return
        await model.preflight(timeout_s=timeout_s)
        with self._lock:
            self._passed[key] = self._clock()



__all__ = ["PREFLIGHT_MEMORY_S", "PREFLIGHT_TIMEOUT_S", "Preflight", "preflight"]
