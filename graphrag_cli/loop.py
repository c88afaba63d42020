"""The one way a command runs a coroutine, so Ctrl-C behaves the same in every command.

:func:`ctrl_c_interrupts` (installed by :func:`graphrag_cli.main.main` around every command)
makes the first Ctrl-C raise ``KeyboardInterrupt`` at once, wherever the command is;
:func:`run_async` runs a command's coroutine on an event loop of its own and, on that
interrupt, cancels the coroutine's task and lets it finish reporting the cancellation (the
engine records a stopped run as ``cancelled``, an experiment keeps what it stored), then lets
the interrupt go on. A command that keeps finished work (a sweep's finished points) catches
``KeyboardInterrupt`` around :func:`run_async`, writes it and re-raises; :func:`main` reports
``interrupted`` and exits with code 130.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """The coroutine's result, run on a new event loop that is closed afterwards.

    On ``KeyboardInterrupt`` a task still running is cancelled and run until it has handled the
    cancellation, a task the interrupt ended has its exception retrieved (no "exception was
    never retrieved" noise), every other task is cancelled, and the interrupt is raised again."""
    loop = asyncio.new_event_loop()

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if not isinstance(context.get("exception"), KeyboardInterrupt):
            loop.default_exception_handler(context)

    loop.set_exception_handler(handle)
    task = loop.create_task(coroutine)
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                loop.run_until_complete(task)
        elif not task.cancelled():
            task.exception()
        raise
    finally:
        try:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


@contextlib.contextmanager
def ctrl_c_interrupts() -> Iterator[None]:
    """Within the block, Ctrl-C raises ``KeyboardInterrupt`` at once.

    Left to itself, asyncio answers the first Ctrl-C by cancelling its task, which only takes
    effect at the task's next ``await``: CPU-bound work (planning the batches of a huge index)
    would ignore it. A handler other than Python's default keeps asyncio from installing its
    own. Nothing changes off the main thread or when someone else already handles SIGINT; the
    previous handler is restored afterwards."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


__all__ = ["ctrl_c_interrupts", "run_async"]
