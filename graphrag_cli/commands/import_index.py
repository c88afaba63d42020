"""``graphrag-explorer import SRC DEST``: an index folder (a Microsoft GraphRAG output folder,
or any index) written to DEST in the native format."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from graphrag_core.deferred import DEFERRED_TABLES
from graphrag_core.errors import IndexValidationError
from graphrag_core.index import save_index

from ..context import EXIT_INDEX, EXIT_OK, CliContext, CliError
from ..options import add_summary_option
from ..resolve import load_index_at


def add_parser(sub: Any) -> None:
    imp = sub.add_parser("import", help="convert a Microsoft GraphRAG output folder to the native format")
    imp.add_argument("src", metavar="SRC", help="Microsoft GraphRAG output folder (or any index folder)")
    imp.add_argument("dest", metavar="DEST", type=Path, help="folder to write the native index to")
    add_summary_option(imp, help="the report text used as the community summary")
    imp.set_defaults(handler=run)


def run(args: argparse.Namespace, context: CliContext) -> int:
    loaded = load_index_at(args.src, summary=args.summary, tables=DEFERRED_TABLES)  # every table is written
    try:
        save_index(loaded.index, args.dest)
    except IndexValidationError as exc:
        raise CliError(str(exc), EXIT_INDEX) from None
    except OSError as exc:
        raise CliError(f"Cannot write {args.dest}: {exc.strerror or exc}", EXIT_INDEX) from None
    counts = ", ".join(f"{v} {k}" for k, v in loaded.index.stats().items())
    context.write(f"Imported {loaded.path} -> {args.dest}: {counts}\n")
    for warning in loaded.index.warnings:
        context.note(f"warning: {warning}")
    return EXIT_OK


__all__ = ["add_parser", "run"]
