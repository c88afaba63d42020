"""The support check as the commands run it (``query --check-support``, ``runs check``): the
judge chosen, the model judge's cost said before its calls, the check kept with the run.

The judge is ``--support-judge`` when given, else the offline judge with the offline model and
the model judge with any other (as the issue asks: the offline judge is the default with the
offline model). The model judge's calls count against the run's spending limit, when it has one,
after what the run spent.
"""

from __future__ import annotations

import argparse
from typing import Any

from graphrag_core.cache import MapCache
from graphrag_core.errors import GraphRAGError, describe_error
from graphrag_core.history import RunStore, StoreError
from graphrag_core.llm.base import ChatModel, model_identity
from graphrag_core.models import Index
from graphrag_core.results import GlobalSearchResult
from graphrag_core.spending import SpendingLimit
from graphrag_core.support import JUDGES, JudgeName, SupportCheck, check_support, estimate_support
from graphrag_core.tokens import Tokenizer

from .context import CliContext
from .loop import run_async

SUPPORT_JUDGE_HELP = (
    "who judges each point against what it cites: offline (deterministic, by the words; the default with the offline model) "
    "or model (the run's model, one structured call per point, batched; the default with any other model)"
)


def add_support_options(parser: Any, *, switch: bool) -> None:
    """``--check-support`` (when ``switch``) and ``--support-judge offline|model``."""
    if switch:
        parser.add_argument(
            "--check-support",
            action="store_true",
            help="once the run has answered, check whether each point of the answer is backed by the communities (or chunks) "
            "it cites, their claims and source chunks; the verdicts are kept with the run",
        )
    parser.add_argument("--support-judge", choices=JUDGES, default=None, help=SUPPORT_JUDGE_HELP + (" (implies --check-support)" if switch else ""))


def chosen_judge(args: argparse.Namespace, model: ChatModel) -> JudgeName:
    """``--support-judge``, else the default for ``model`` (see the module docstring)."""
    if args.support_judge:
        return args.support_judge
    return "offline" if model_identity(model).startswith("offline") else "model"


def run_support_check(
    context: CliContext,
    index: Index,
    result: GlobalSearchResult,
    judge: JudgeName,
    model: ChatModel,
    *,
    cache: MapCache | None,
    tokenizer: Tokenizer,
    quiet: bool,
    spend_limit: int | None = None,
    spent: int = 0,
) -> tuple[SupportCheck | None, str | None]:
    """The check, or None and why it could not be made (a sentence). The model judge's cost is
    said first (unless ``quiet``)."""
    spending = SpendingLimit(spend_limit, spent=min(spent, spend_limit), what="support check") if spend_limit is not None else None
    try:
        if judge == "model" and not quiet:
            context.note(estimate_support(index, result, model=model, cache=cache, tokenizer=tokenizer).text())
        return run_async(check_support(index, result, judge, model=model, cache=cache, spending=spending, tokenizer=tokenizer)), None
    except GraphRAGError as exc:
        return None, f"the support check failed: {describe_error(exc)}"


def keep_support(context: CliContext, store: RunStore | None, run_id: str | None, check: SupportCheck) -> None:
    """Store ``check`` with the run (a failed write is a warning: the check is printed anyway)."""
    if store is None or run_id is None:
        return
    try:
        store.set_support(run_id, check)
    except (StoreError, OSError) as exc:
        context.note(f"warning: the support check was not kept with run {run_id}: {exc}")


__all__ = ["SUPPORT_JUDGE_HELP", "add_support_options", "chosen_judge", "keep_support", "run_support_check"]
