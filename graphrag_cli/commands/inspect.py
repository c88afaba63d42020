"""``graphrag-explorer inspect INDEX``: what an index holds, level by level (communities,
summaries, their tokens, the map texts' tokens, claims), as a table or ``--json``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from graphrag_core.deferred import DEFERRED_TABLES
from graphrag_core.request import SearchSettings
from graphrag_core.statistics import index_statistics

from ..context import EXIT_OK, CliContext
from ..options import add_setting_options, add_summary_option, setting_dest
from ..output import format_statistics
from ..resolve import load_index_at, tokenizer


def add_parser(sub: Any) -> None:
    inspect = sub.add_parser("inspect", help="statistics of an index, level by level")
    inspect.add_argument("index", metavar="INDEX", help="an index folder or a bundled sample name")
    add_setting_options(inspect, ["tokenizer", "include_claims", "include_sources"])  # the map texts a search would read
    add_summary_option(inspect, help="which GraphRAG report text is the summary")
    inspect.add_argument("--json", action="store_true", help="print the statistics as JSON")
    inspect.set_defaults(handler=run)


def run(args: argparse.Namespace, context: CliContext) -> int:
    counter = tokenizer(getattr(args, setting_dest("tokenizer")) or SearchSettings().tokenizer)
    loaded = load_index_at(args.index, summary=args.summary, tables=DEFERRED_TABLES)  # counts and warnings need every table
    stats = index_statistics(
        loaded.index,
        tokenizer=counter,
        include_claims=not getattr(args, setting_dest("include_claims")),
        include_sources=not getattr(args, setting_dest("include_sources")),
    )
    stats["path"] = str(loaded.path)
    if args.json:
        context.write(json.dumps(stats, indent=2, ensure_ascii=False) + "\n")
    else:
        context.write(format_statistics(stats, name=loaded.name, path=loaded.path, tokenizer=counter.name))
    return EXIT_OK


__all__ = ["add_parser", "run"]
