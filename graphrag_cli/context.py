"""What one invocation of the command line works with: its streams, its environment and, for
tests, the model to use instead of the one the options would build (:class:`CliContext`); the
one error it reports without a traceback (:class:`CliError`); and its exit codes.

Results go to ``out`` (the answer, or JSON with ``--json``); progress, warnings and errors go to
``err``, so ``graphrag-explorer query ... > answer.txt`` keeps only the answer.

Exit codes: :data:`EXIT_OK` on success (``no_results`` included: it is an answer),
:data:`EXIT_USAGE` for a usage or validation error (the spec's message, no traceback),
:data:`EXIT_INDEX` for an index that cannot be read, :data:`EXIT_RUN` for a model or run
failure, :data:`EXIT_STOPPED` for a run its spending limit stopped before it read anything
usable (status ``stopped``; no answer, ``why_no_answer`` says why; a limit stop with something
read answers from it and exits 0), :data:`EXIT_INTERRUPTED` when Ctrl-C ended the command.

This is the command line's one reader of the process environment (``os.environ``); everything
else receives :attr:`CliContext.environ`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from graphrag_core.llm.base import ChatModel
from graphrag_core.llm.embeddings import EmbeddingModel
from graphrag_core.llm.endpoints import Endpoints

PROG = "graphrag-explorer"

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_INDEX = 3
EXIT_RUN = 4
EXIT_STOPPED = 5
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A failure reported as one message (``error: ...`` on stderr, then each of ``details``
    indented, after ``usage`` when given) and the exit code ``code``, with no traceback."""

    def __init__(self, message: str, code: int, *, details: Sequence[str] = (), usage: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.details = tuple(details)
        self.usage = usage


@dataclass(frozen=True)
class CliContext:
    """The streams, environment and (optionally) injected models of one invocation.

    ``model``, when set, is used for every model the command would otherwise build from its
    options and the environment (the seam tests use to script replies); ``embedder`` likewise
    for the embedding model that ranks a ``vector`` run's chunks."""

    out: TextIO
    err: TextIO
    environ: Mapping[str, str]
    model: ChatModel | None = None
    endpoints: Endpoints = field(default_factory=Endpoints)
    embedder: EmbeddingModel | None = None
    """What each endpoint accepted, learned once for every model this invocation builds."""
    said: set[str] = field(default_factory=set)
    """The notes already printed by :meth:`note_once`."""

    @classmethod
    def create(
        cls,
        *,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        environ: Mapping[str, str] | None = None,
        model: ChatModel | None = None,
        embedder: EmbeddingModel | None = None,
    ) -> CliContext:
        """A context over the given streams and environment, the process's own where not given."""
        return cls(
            out=stdout if stdout is not None else sys.stdout,
            err=stderr if stderr is not None else sys.stderr,
            environ=os.environ if environ is None else environ,
            model=model,
            embedder=embedder,
        )

    def note(self, text: str) -> None:
        """One line on stderr (progress, warnings, errors), flushed at once."""
        print(text, file=self.err, flush=True)

    def note_once(self, message: str) -> None:
        """``note: {message}`` on stderr, whole, the first time this invocation is told it (the
        engine's log and a run's events may both carry one notice)."""
        if message not in self.said:
            self.said.add(message)
            self.note(f"note: {message}")

    def write(self, text: str) -> None:
        """Text on stdout, as it is (the command's result)."""
        self.out.write(text)

    def silence_stdout(self) -> None:
        """Point stdout's file descriptor at the null device, once its reader went away
        (``graphrag-explorer runs list | head -1``), so the interpreter's last flush cannot fail
        again. A stream with no file descriptor (tests pass ``StringIO``) is left alone."""
        try:
            fileno = self.out.fileno()
        except (AttributeError, OSError, ValueError):
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fileno)
        finally:
            os.close(devnull)


__all__ = ["EXIT_INDEX", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_RUN", "EXIT_STOPPED", "EXIT_USAGE", "PROG", "CliContext", "CliError"]
