"""``graphrag-explorer runs ACTION``: the stored run history.

``list`` (the newest runs, one line each), ``show RUN_ID`` (a run as Markdown, or ``--json``,
its support check included when it has one), ``check RUN_ID`` (the support check of a stored
run, made now and kept with it), ``export RUN_ID`` (a run bundle with ``--bundle FILE``,
replayable with no model, and/or the Markdown report with ``--markdown FILE``) and ``delete
RUN_ID``. A run's citations are checked against its index when that index can be read here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from graphrag_core.bundle import bundle_to_json, make_bundle
from graphrag_core.history import RunRecord, RunStore
from graphrag_core.report import record_to_markdown
from graphrag_core.support import marked_answer, support_lines

from ..context import EXIT_OK, EXIT_RUN, EXIT_USAGE, CliContext, CliError
from ..options import CliParser, ModelOptions, add_cache_options, add_model_options, add_quiet_option, add_store_options
from ..files import write_out
from ..output import format_run_line
from ..resolve import build_model, load_index_at, open_cache, resolve_index_path, run_store, tokenizer
from ..support_check import add_support_options, chosen_judge, keep_support, run_support_check


def add_parser(sub: Any) -> None:
    runs = sub.add_parser("runs", help="the stored run history")
    add_store_options(runs, no_store_help=None)
    actions = runs.add_subparsers(dest="runs_command", metavar="ACTION", parser_class=CliParser)
    actions.required = True

    listing = actions.add_parser("list", help="the newest runs")
    listing.add_argument("--limit", type=int, default=20)
    listing.add_argument("--index-name", default=None)
    listing.set_defaults(handler=run_list)

    show = actions.add_parser("show", help="one run as Markdown (or --json)")
    show.add_argument("run_id", metavar="RUN_ID")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=run_show)

    check = actions.add_parser(
        "check", help="check whether each point of a stored run's answer is backed by what it cites, and keep the verdicts with the run"
    )
    check.add_argument("run_id", metavar="RUN_ID")
    check.add_argument("--index", default=None, metavar="INDEX", help="the run's index (default: the run's own path)")
    check.add_argument("--json", action="store_true", help="print the check as JSON (the support document of query --json)")
    add_support_options(check, switch=False)
    add_model_options(check.add_argument_group("model (the model judge)"))
    add_cache_options(check)
    add_quiet_option(check)
    check.set_defaults(handler=run_check)

    export = actions.add_parser("export", help="write one run as a run bundle (one JSON file, replayable with no model) and/or a Markdown report")
    export.add_argument("run_id", metavar="RUN_ID")
    export.add_argument("--bundle", type=Path, default=None, metavar="FILE", help="the bundle file to write")
    export.add_argument("--markdown", type=Path, default=None, metavar="FILE", help="the Markdown report to write (the three community sets, citations checked against the index)")
    export.add_argument("--index", default=None, metavar="INDEX", help="fingerprint this index folder (default: the run's own)")
    export.set_defaults(handler=run_export)

    delete = actions.add_parser("delete", help="remove one run")
    delete.add_argument("run_id", metavar="RUN_ID")
    delete.set_defaults(handler=run_delete)


def _no_run(run_id: str, store: RunStore) -> CliError:
    return CliError(f"No run {run_id!r} in {store.path}.", EXIT_USAGE)


def _record(store: RunStore, run_id: str) -> RunRecord:
    record = store.get(run_id)
    if record is None:
        raise _no_run(run_id, store)
    return record


def _index_ids(record: RunRecord, index: str | None) -> set[str] | None:
    """The community ids of INDEX (else the run's own index), to check the run's citations
    against; None when that index cannot be read here."""
    text = index or record.index_path or record.index_name
    if not text:
        return None
    try:
        return {c.id for c in load_index_at(text).index.communities}
    except CliError:
        return None


def run_list(args: argparse.Namespace, context: CliContext) -> int:
    store = run_store(context, args.store, read_only=True)
    for summary in store.list_runs(args.limit, index_name=args.index_name):
        context.write(format_run_line(summary) + "\n")
    return EXIT_OK


def run_show(args: argparse.Namespace, context: CliContext) -> int:
    store = run_store(context, args.store, read_only=True)
    if args.json:
        try:
            text = store.export_json(args.run_id)
        except KeyError:
            raise _no_run(args.run_id, store) from None
    else:
        record = _record(store, args.run_id)
        text = record_to_markdown(record, index_ids=_index_ids(record, None))
    context.write(text.rstrip() + "\n")
    return EXIT_OK


def run_check(args: argparse.Namespace, context: CliContext) -> int:
    store = run_store(context, args.store)
    record = _record(store, args.run_id)
    if record.result is None:
        raise CliError(f"Run {record.run_id} has no answer to check ({record.status}).", EXIT_USAGE)
    loaded = load_index_at(args.index or record.index_path or record.index_name)
    model = build_model(context, ModelOptions.from_args(args))
    cache = open_cache(context, args.cache, off=args.no_cache)
    check, failure = run_support_check(
        context, loaded.index, record.result, chosen_judge(args, model), model, cache=cache,
        tokenizer=tokenizer(record.request.tokenizer, model), quiet=args.quiet,
    )
    if check is None:
        raise CliError(f"Run {record.run_id}: {failure}", EXIT_RUN)
    keep_support(context, store, record.run_id, check)
    if args.json:
        context.write(json.dumps(check.to_json_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        context.write(marked_answer(record.result.answer, check).rstrip() + "\n\n" + "\n".join(support_lines(check)) + "\n")
    return EXIT_OK


def run_export(args: argparse.Namespace, context: CliContext) -> int:
    if args.bundle is None and args.markdown is None:
        raise CliError("runs export: say what to write: --bundle FILE, --markdown FILE, or both.", EXIT_USAGE)
    store = run_store(context, args.store, read_only=True)
    record = _record(store, args.run_id)
    where = record.index_path or record.index_name
    if args.markdown is not None:
        index_ids = _index_ids(record, args.index)
        if index_ids is None:
            context.note(f"warning: the run's index ({where}) was not found; citations are checked against the map answers only")
        write_out({args.markdown: record_to_markdown(record, index_ids=index_ids).rstrip() + "\n"}, what="the report")
        context.write(f"Wrote the report of run {record.run_id} ({record.status}) to {args.markdown}\n")
    if args.bundle is None:
        return EXIT_OK
    bundle = make_bundle(record, index_path=resolve_index_path(args.index) if args.index else None)
    write_out({args.bundle: bundle_to_json(bundle)}, what="the bundle")
    if bundle.index.fingerprint is None:
        context.note(f"warning: the run's index ({where}) was not found; the bundle has no index fingerprint")
    context.write(f"Wrote run {record.run_id} ({record.status}, {len(record.events)} events) to {args.bundle}\n")
    return EXIT_OK


def run_delete(args: argparse.Namespace, context: CliContext) -> int:
    store = run_store(context, args.store)
    if not store.delete(args.run_id):
        raise _no_run(args.run_id, store)
    context.write(f"Deleted run {args.run_id}.\n")
    return EXIT_OK


__all__ = ["add_parser", "run_check", "run_delete", "run_export", "run_list", "run_show"]
