"""``graphrag-explorer sweep INDEX QUESTION``: one question over a grid of levels, seeds and
budgets.

The points go to stdout as CSV, or to ``--out FILE.csv``/``FILE.json``; progress (a line per
finished point), the stability of each level and the spend go to stderr. Interrupted by Ctrl-C,
the points that finished are written as a shorter sweep before the command exits with 130.
"""

from __future__ import annotations

import argparse
import time
import uuid
from pathlib import Path
from typing import Any

from graphrag_core.figures import spend_line
from graphrag_core.history import RunStore, StoreError
from graphrag_core.levels import DYNAMIC, LEAF, Level, level_text
from graphrag_core.llm.base import model_identity
from graphrag_core.preflight import preflight
from graphrag_core.request import check_seed, check_spend_limit
from graphrag_core.status import RunStatus
from graphrag_core.sweep import (
    SweepPoint,
    SweepProgress,
    SweepResult,
    SweepSpec,
    run_sweep,
)

from ..context import EXIT_OK, EXIT_RUN, EXIT_USAGE, CliContext, CliError
from ..files import write_out
from ..loop import run_async
from ..options import (
    ModelOptions,
    add_run_options,
    int_or_text,
    level_or_text,
    list_of,
    search_defaults,
    setting_dest,
)
from ..progress import ProgressPrinter
from ..resolve import (
    build_model,
    check_levels,
    configured_price,
    load_index_at,
    search_tables,
    open_cache,
    open_store,
    shared_cache,
    store_failure,
    tokenizer,
)

SWEEP_FORMATS = {".csv": "csv", ".json": "json"}
"""``--out``'s suffix -> the format written."""


def add_parser(sub: Any) -> None:
    sweep = sub.add_parser("sweep", help="run a question over a grid of levels, seeds and budgets")
    add_run_options(sweep, sweep=True)
    grid = sweep.add_argument_group("grid")
    grid.add_argument("--levels", type=list_of(level_or_text), default=None, help='comma-separated levels, e.g. "leaf,0,1,dynamic" (default leaf)')
    grid.add_argument("--seeds", type=list_of(int_or_text), default=[0], help='comma-separated seeds, e.g. "1,2,3"')
    grid.add_argument("--map-budgets", type=list_of(int_or_text), default=[], help="comma-separated map token budgets")
    grid.add_argument("--reduce-budgets", type=list_of(int_or_text), default=[], help="comma-separated reduce token budgets")
    grid.add_argument("--point-concurrency", type=int_or_text, default=1, help="grid points run at once (default 1)")
    sweep.add_argument("--out", type=Path, default=None, metavar="FILE", help="write FILE.csv or FILE.json (default: CSV on stdout)")
    sweep.set_defaults(handler=run)


def _grid_levels(args: argparse.Namespace) -> list[Level]:
    """``--levels`` (default leaf), with dynamic selection added by ``--selection dynamic``."""
    dynamic = getattr(args, setting_dest("community_selection")) == DYNAMIC
    levels = args.levels if args.levels is not None else ([] if dynamic else [LEAF])
    return [*levels, DYNAMIC] if dynamic and DYNAMIC not in levels else levels


def run(args: argparse.Namespace, context: CliContext) -> int:
    fmt = "csv"
    if args.out is not None:
        fmt = SWEEP_FORMATS.get(args.out.suffix.lower(), "")
        if not fmt:
            raise CliError(f"--out must end in .csv or .json, not {args.out.name!r}.", EXIT_USAGE)
    limit = check_spend_limit(args.spend_limit_tokens)
    spec = SweepSpec(
        query=args.question,
        levels=_grid_levels(args),
        seeds=[check_seed(seed) for seed in args.seeds],
        map_token_budgets=args.map_budgets,
        reduce_token_budgets=args.reduce_budgets,
        base=search_defaults(args),
        point_concurrency=args.point_concurrency,
    )
    model = build_model(context, ModelOptions.from_args(args))
    tokenizer(spec.base.tokenizer, model)
    loaded = load_index_at(args.index, tables=search_tables(spec.base))
    check_levels(loaded, spec.levels, option="--levels")
    run_async(preflight(model))  # PreflightError: main reports it with the run exit code
    store = open_store(context, args.store, off=args.no_store)
    cache = shared_cache(context, open_cache(context, args.cache, off=args.no_cache))

    finished: list[SweepPoint] = []
    started = time.monotonic()
    printer = ProgressPrinter(context.err, enabled=not args.quiet, on_notice=context.note_once)

    def on_progress(progress: SweepProgress) -> None:
        finished.append(progress.point)
        printer(progress)

    try:
        result = run_async(
            run_sweep(loaded.index, spec, model, on_progress=on_progress, cache=cache, store=store, index_path=str(loaded.path), spend_limit_tokens=limit)
        )
    except KeyboardInterrupt:
        partial = SweepResult(
            sweep_id=uuid.uuid4().hex,
            spec=spec,
            index_name=loaded.name,
            model=model_identity(model),
            points=sorted(finished, key=lambda p: p.index),
            duration_s=time.monotonic() - started,
        )
        _write(partial, fmt, args.out, context)
        context.note(f"interrupted after {len(finished)} of {len(spec)} sweep points")
        raise
    _write(result, fmt, args.out, context)
    if store is not None:
        _check_recorded(result, store, context)
    if not args.quiet:
        _summarise(result, context)
    stopped = [p for p in result.points if p.stopped_early or p.status == RunStatus.CANCELLED]
    if stopped and limit is not None:
        context.note(
            f"stopped at the spending limit of {limit:,} tokens: {len(stopped)} of {len(result.points)} points not finished "
            f"({sum(p.stopped_early for p in stopped)} answered from what they read, {sum(not p.stopped_early for p in stopped)} not run)"
        )
    failed = sum(1 for p in result.points if p.failed)
    if failed == len(result.points):
        causes = dict.fromkeys(p.batch_errors[0] if p.batch_errors else (p.error or "") for p in result.points)
        raise CliError(f"Every one of the {failed} sweep points failed.", EXIT_RUN, details=[c for c in causes if c])
    return EXIT_OK


def _check_recorded(result: SweepResult, store: RunStore, context: CliContext) -> None:
    """A warning when the points' runs did not reach the run history (as ``query`` says it)."""
    try:
        missing = sum(1 for point in result.points if point.run_id and point.run_id not in store)
    except StoreError as exc:
        context.note(f"warning: the sweep's runs were not recorded: {store_failure(exc)}")
        return
    if missing:
        context.note(f"warning: {missing} of the sweep's runs were not recorded in {store.path}")


def _summarise(result: SweepResult, context: CliContext) -> None:
    """The model, each level's stability across seeds and the spend, on stderr."""
    context.note(f"answered by {result.model}")
    for level, value in result.stability_by_level().items():
        shown = "n/a (fewer than two comparable points)" if value is None else f"{value:.3f}"
        context.note(f"stability at level {level_text(level)}: {shown}")
    context.note(spend_line(result.spend(), configured_price(context)))


def _write(result: SweepResult, fmt: str, out: Path | None, context: CliContext) -> None:
    """The sweep's points as CSV or JSON, to ``out`` or stdout."""
    text = result.to_json() + "\n" if fmt == "json" else result.to_csv()
    if out is None:
        context.write(text)
        context.out.flush()
        return
    write_out({out: text}, what="the sweep's points")
    context.note(f"wrote {len(result.points)} points to {out}")


__all__ = ["SWEEP_FORMATS", "add_parser", "run"]
