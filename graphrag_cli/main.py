"""The ``graphrag-explorer`` command line: the parser, built from each command's module, and
:func:`main`, which dispatches to the command and turns every failure into a message on stderr
and an exit code (:mod:`graphrag_cli.context`).

Commands: ``query`` (one global question), ``sweep`` (a grid of levels, seeds and budgets),
``eval`` and ``eval-questions`` (conditions judged head to head; a question set), ``eval-votes``
(people's votes on an experiment: their agreement with the LLM judge), ``inspect``
(what an index holds, level by level), ``import`` (a Microsoft GraphRAG output folder to the
native format), ``runs`` (the run history; ``runs export --bundle`` writes a run bundle) and
``replay`` (a run bundle's status, answer and community sets, with no model).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator
from collections.abc import Mapping, Sequence
from typing import TextIO

from graphrag_core.errors import (
    NoSourceChunksError,
    BudgetError,
    GraphRAGError,
    IndexValidationError,
    RequestValidationError,
)
from graphrag_core.history import StoreError
from graphrag_core.llm.base import ChatModel
from graphrag_core.llm.embeddings import EmbeddingModel

from .commands import eval as eval_command
from .commands import eval_votes
from .commands import import_index, inspect, query, replay, runs, sweep
from .context import (
    EXIT_INDEX,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RUN,
    EXIT_USAGE,
    PROG,
    CliContext,
    CliError,
)
from .loop import ctrl_c_interrupts
from .options import CliParser
from .resolve import store_failure

COMMANDS = (query, sweep, eval_command, eval_votes, inspect, import_index, runs, replay)
"""The command modules, in the order ``--help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    """The whole parser: each command module adds its own subcommand(s)."""
    parser = CliParser(prog=PROG, description="GraphRAG global search (map-reduce over community summaries) from the command line.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CliParser)
    sub.required = True
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


class _NoteHandler(logging.Handler):
    """The engine's warnings (an endpoint's refused output form, its single slot) as notes."""

    def __init__(self, context: CliContext) -> None:
        super().__init__(logging.WARNING)
        self.context = context

    def emit(self, record: logging.LogRecord) -> None:
        self.context.note_once(record.getMessage())


@contextlib.contextmanager
def engine_notes(context: CliContext) -> Iterator[None]:
    """Within the block, what the engine logs at WARNING is printed once as ``note: ...``
    (never a second time by Python's last-resort handler, never cut)."""
    engine = logging.getLogger("graphrag_core")
    handler = _NoteHandler(context)
    engine.addHandler(handler)
    try:
        yield
    finally:
        engine.removeHandler(handler)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
    model: ChatModel | None = None,
    embedder: EmbeddingModel | None = None,
) -> int:
    """Run the command line; returns the exit code.

    ``model``, when given, replaces every model the options would build (the seam tests use to
    script replies), ``embedder`` the embedding model of ``vector`` runs; ``environ`` replaces
    the process environment, ``stdout``/``stderr`` its streams."""
    context = CliContext.create(stdout=stdout, stderr=stderr, environ=environ, model=model, embedder=embedder)
    parser = build_parser()
    try:
        try:
            args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
        except SystemExit as exc:  # --help exits through argparse
            return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_USAGE
        with ctrl_c_interrupts(), engine_notes(context):
            return int(args.handler(args, context))
    except CliError as exc:
        if exc.usage:
            context.note(exc.usage)
        context.note(f"error: {exc}")
        for detail in exc.details:
            context.note(f"  {detail}")
        return exc.code
    except (RequestValidationError, BudgetError, NoSourceChunksError) as exc:
        context.note(f"error: {exc}")
        return EXIT_USAGE
    except StoreError as exc:  # a damaged or busy run history, the same message from every command
        context.note(f"error: {store_failure(exc)}")
        return EXIT_USAGE
    except IndexValidationError as exc:
        context.note(f"error: {exc}")
        return EXIT_INDEX
    except GraphRAGError as exc:
        context.note(f"error: {exc}")
        return EXIT_RUN
    except KeyboardInterrupt:
        context.note("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (``graphrag-explorer runs list | head -1``): not an error
        context.silence_stdout()
        return EXIT_OK


__all__ = ["COMMANDS", "build_parser", "main"]
