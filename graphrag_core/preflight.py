"""Checks before a run that spend no tokens: can the model be called at all?

:func:`preflight` asks the model's own ``preflight`` method (an adapter that talks to a
network offers one; offline and scripted models need none). A failed check raises
:class:`~graphrag_core.errors.PreflightError` with one message naming the endpoint, so the app
and the command line refuse up front instead of spending every batch's attempts waiting.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

from .llm.base import ChatModel, model_identity

PREFLIGHT_TIMEOUT_S = 5.0
"""How long the reachability check waits for the endpoint to accept a connection."""


PREFLIGHT_MEMORY_S = 300.0
"""An endpoint that passed is not checked again for this long (each click of Run would)."""

_passed: dict[tuple[str, bool], float] = {}


def _memory_key(model: ChatModel) -> tuple[str, bool]:
    """The model's identity, and whether a key is set where the endpoint needs one."""
    settings = getattr(model, "settings", None)
    needs_key = getattr(model, "needs_key", None)
    keyed = needs_key is not None and needs_key() and getattr(settings, "api_key", None) is not None
    return model_identity(model), keyed


async def preflight(model: ChatModel, *, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> None:
    """Raise ``PreflightError`` when ``model`` cannot be called; return quietly when it can
    (or has nothing to check). A pass is remembered for ``PREFLIGHT_MEMORY_S`` seconds per
    model identity (and key presence, where the endpoint needs a key); a failure never is."""
    check = getattr(model, "preflight", None)
    if check is None:
        return
    key = _memory_key(model)
    if time.monotonic() - _passed.get(key, -PREFLIGHT_MEMORY_S) < PREFLIGHT_MEMORY_S:
        return
    await check(timeout_s=timeout_s)
    _passed[key] = time.monotonic()


def forget_preflights() -> None:
    """Check every endpoint again next time (tests; a server that went away)."""
    _passed.clear()


def preflight_sync(model: ChatModel, *, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> None:
    """:func:`preflight` for callers without an event loop (the command line, a page script).

    It runs on a thread of its own: ``asyncio.run`` on the caller's thread would reset that
    thread's event loop (a Streamlit script thread's runs then stop working)."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphrag-preflight") as pool:
        pool.submit(asyncio.run, preflight(model, timeout_s=timeout_s)).result()


__all__ = ["PREFLIGHT_MEMORY_S", "PREFLIGHT_TIMEOUT_S", "forget_preflights", "preflight", "preflight_sync"]
