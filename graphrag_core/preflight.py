"""Checks before a run that spend no tokens: can the model be called at all?

:func:`preflight` asks the model's own ``preflight`` method (an adapter that talks to a
network offers one; offline and scripted models need none). A failed check raises
:class:`~graphrag_core.errors.PreflightError` with one message naming the endpoint, so the app
and the command line refuse up front instead of spending every batch's attempts waiting.
"""

from __future__ import annotations

import asyncio

from .llm.base import ChatModel

PREFLIGHT_TIMEOUT_S = 5.0
"""How long the reachability check waits for the endpoint to accept a connection."""


async def preflight(model: ChatModel, *, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> None:
    """Raise ``PreflightError`` when ``model`` cannot be called; return quietly when it can
    (or has nothing to check)."""
    check = getattr(model, "preflight", None)
    if check is not None:
        await check(timeout_s=timeout_s)


def preflight_sync(model: ChatModel, *, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> None:
    """:func:`preflight` for callers without an event loop (the command line, a page script)."""
    asyncio.run(preflight(model, timeout_s=timeout_s))


__all__ = ["PREFLIGHT_TIMEOUT_S", "preflight", "preflight_sync"]
