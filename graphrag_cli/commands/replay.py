"""``graphrag-explorer replay FILE``: a run bundle redrawn with no model or key: its status,
answer (or error) and three community sets, checked against the index when it is the run's.

What the index check found is said first, before the run. An index known to be another one
than the run's (a different fingerprint) is an error (exit 2) unless ``--force``, which draws
the run anyway; an index that is absent or cannot be compared is a warning.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from graphrag_core.bundle import BundleError, check_index, read_bundle
from graphrag_core.citations import community_sets
from graphrag_core.state import RunState

from ..context import EXIT_OK, EXIT_USAGE, CliContext, CliError
from ..output import format_replay, format_replay_json
from ..resolve import load_index_at, resolve_index_path


def add_parser(sub: Any) -> None:
    replay = sub.add_parser("replay", help="redraw a run bundle with no model: status, answer, community sets")
    replay.add_argument("bundle", type=Path, metavar="FILE", help="a run bundle (from runs export --bundle or the app)")
    replay.add_argument("--index", default=None, metavar="INDEX", help="check the bundle against this index (default: the run's own path)")
    replay.add_argument("--json", action="store_true", help="print the status, answer and community sets as JSON")
    replay.add_argument("--force", action="store_true", help="draw the run even against an index that is not the run's")
    replay.set_defaults(handler=run)


def run(args: argparse.Namespace, context: CliContext) -> int:
    try:
        with args.bundle.open("rb") as handle:  # read as a stream: refused early when too big
            bundle = read_bundle(handle, source=str(args.bundle))
    except OSError as exc:
        raise CliError(f"Could not read {args.bundle}: {exc.strerror or exc}", EXIT_USAGE) from None
    except BundleError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    if args.index:
        index_path: Path | None = resolve_index_path(args.index)
    else:
        index_path = Path(bundle.index.path) if bundle.index.path else None
    found, mismatch = check_index(bundle, index_path)
    if found == "different" and not args.force:
        raise CliError(f"{mismatch} Pass --force to draw it against this index anyway.", EXIT_USAGE)
    if mismatch:
        context.note(f"warning: {mismatch}")
    index_ids = None
    if mismatch is None and index_path is not None:
        index_ids = {c.id for c in load_index_at(str(index_path)).index.communities}
    state = RunState.replay(bundle.events)
    sets = community_sets(state.result, index_ids=index_ids) if state.result is not None else None
    if args.json:
        context.write(format_replay_json(bundle, state, sets, index_mismatch=mismatch) + "\n")
    else:
        context.write(format_replay(bundle, state, sets))
    return EXIT_OK


__all__ = ["add_parser", "run"]
