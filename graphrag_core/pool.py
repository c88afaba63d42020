"""A fixed pool of workers over numbered jobs: the engine's one shared-counter loop.

Invariants of :func:`run_pool`: each of ``count`` jobs runs exactly once, in increasing start
order; at most ``workers`` run at once; the first error a job raises (or a cancellation) stops
the other workers and propagates to the caller.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


async def run_pool(count: int, workers: int, job: Callable[[int], Awaitable[None]]) -> None:
    """Run ``job(0) ... job(count - 1)`` on ``min(workers, count)`` workers sharing one counter."""
    next_index = 0

    async def worker() -> None:
        nonlocal next_index
        while next_index < count:
            index = next_index
            next_index += 1
            await job(index)

    tasks = [asyncio.ensure_future(worker()) for _ in range(max(0, min(workers, count)))]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()


__all__ = ["run_pool"]
