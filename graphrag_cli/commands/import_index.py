"""``graphrag-explorer import SRC DEST``: an index folder (a Microsoft GraphRAG output folder,
or any index) written to DEST in the native format.

DEST must be missing or empty; ``--force`` writes into a folder that holds files, replacing only
the native index's own files (the six record files and ``manifest.json``): nothing else in DEST
is touched, and nothing is deleted."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from graphrag_core.deferred import DEFERRED_TABLES
from graphrag_core.errors import IndexValidationError
from graphrag_core.index import save_index

from ..context import EXIT_INDEX, EXIT_OK, EXIT_USAGE, CliContext, CliError
from ..options import add_summary_option
from ..resolve import load_index_at


def add_parser(sub: Any) -> None:
    imp = sub.add_parser("import", help="convert a Microsoft GraphRAG output folder to the native format")
    imp.add_argument("src", metavar="SRC", help="Microsoft GraphRAG output folder (or any index folder)")
    imp.add_argument("dest", metavar="DEST", type=Path, help="folder to write the native index to (missing or empty, unless --force)")
    imp.add_argument(
        "--force", action="store_true",
        help="write into DEST even when it holds files: the index's own files there are replaced, every other file is left alone",
    )
    add_summary_option(imp, help="the report text used as the community summary")
    imp.set_defaults(handler=run)


SHOWN_FILES = 3
"""How many of DEST's files a refusal names."""


def check_dest(dest: Path, *, force: bool) -> None:
    """DEST may be written: a folder or nothing yet; a folder holding files only with ``force``."""
    if dest.exists() and not dest.is_dir():
        raise CliError(f"{dest} exists and is not a folder; DEST must be a folder to write the index to.", EXIT_USAGE)
    if force or not dest.is_dir():
        return
    try:
        held = sorted(entry.name for entry in os.scandir(dest))
    except OSError as exc:
        raise CliError(f"Cannot read {dest}: {exc.strerror or exc}", EXIT_USAGE) from None
    if held:
        shown = ", ".join(held[:SHOWN_FILES]) + (f" and {len(held) - SHOWN_FILES} more" if len(held) > SHOWN_FILES else "")
        raise CliError(
            f"{dest} is not empty (it holds {shown}); choose an empty or new folder, or pass --force to replace "
            "the index files there (every other file is left alone).",
            EXIT_USAGE,
        )


def run(args: argparse.Namespace, context: CliContext) -> int:
    check_dest(args.dest, force=args.force)
    loaded = load_index_at(args.src, summary=args.summary, tables=DEFERRED_TABLES)  # every table is written
    try:
        save_index(loaded.index, args.dest)
    except IndexValidationError as exc:
        raise CliError(str(exc), EXIT_INDEX) from None
    except OSError as exc:
        kept = "the index files that were there are kept as they were" if args.force else "no index file was written"
        raise CliError(f"Could not write the index to {args.dest}: {exc.strerror or exc}; {kept}.", EXIT_INDEX) from None
    counts = ", ".join(f"{v} {k}" for k, v in loaded.index.stats().items())
    context.write(f"Imported {loaded.path} -> {args.dest}: {counts}\n")
    for warning in loaded.index.warnings:
        context.note(f"warning: {warning}")
    return EXIT_OK


__all__ = ["add_parser", "check_dest", "run"]
