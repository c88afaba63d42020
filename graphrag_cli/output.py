"""What the commands print, as pure functions of what the engine returned: a run's JSON, the
one JSON document of a failed or stopped run, the statistics table, a line of the run history
and a replayed bundle. Nothing here writes; the commands do.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from graphrag_core.bundle import RunBundle
from graphrag_core.calls import why_no_answer
from graphrag_core.citations import CommunitySets, community_sets
from graphrag_core.errors import GraphRAGError, PreflightError
from graphrag_core.events import Event, RunFailed
from graphrag_core.history import RunSummary
from graphrag_core.report import settings_text
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.results import GlobalSearchResult
from graphrag_core.state import BatchStatus, RunState
from graphrag_core.status import RunStatus, status_word
from graphrag_core.support import SupportCheck, marked_answer, support_lines

RUN_QUERY_CHARS = 60
"""How much of a run's question a line of the run history shows."""
FAILED_BATCH = BatchStatus.FAILED
"""A batch that failed every attempt, or was in flight when its run failed."""


def _json(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)


def format_result_json(
    result: GlobalSearchResult,
    *,
    model: str,
    index_ids: Collection[str],
    run_id: str | None = None,
    recorded_in: str | None = None,
    events: Sequence[Event] = (),
    support: SupportCheck | None = None,
    support_error: str | None = None,
) -> str:
    """A finished run as JSON: the run's id (``run_id``, what ``runs show``, ``runs export`` and
    Compare's ``?runs=`` take) and the run history that recorded it (``recorded_in``, null when
    the run was not stored), the model that answered, the whole result, and its three community
    sets (``community_sets``) checked against ``index_ids``; ``status_word`` is the word every page
    and command shows for its ``status``. A run without a full answer also
    says why (``why_no_answer``: each reason's ``reason``, ``message`` and ``batch_indexes``,
    read from its ``events``, as the app's "why no answer" panel). With a support check, its
    ``support`` document (:meth:`~graphrag_core.support.SupportCheck.to_json_dict`: ``judge``,
    ``points`` of ``text``, ``communities``, ``verdict``, ``evidence``...), or, when the check
    could not be made, ``support`` null and ``support_error`` saying why."""
    document = {"run_id": run_id, "recorded_in": recorded_in, "model": model, **result.model_dump(mode="json")}
    document["status_word"] = RunStatus(result.status).word
    document["community_sets"] = community_sets(result, index_ids=index_ids).to_json_dict()
    if events:
        document["why_no_answer"] = [item.model_dump(mode="json", exclude={"texts"}) for item in why_no_answer(events)]
    if support is not None or support_error is not None:
        document["support"] = support.to_json_dict() if support is not None else None
    if support_error is not None:
        document["support_error"] = support_error
    return _json(document)


def format_failure_json(
    events: Sequence[Event],
    *,
    run_id: str | None = None,
    request: GlobalSearchRequest | None = None,
    error: GraphRAGError | None = None,
) -> str:
    """A failed or stopped run as JSON, the one failure document of the command line.

    Keys: ``status`` (``failed``, or ``cancelled`` for a stopped run: the stored value),
    ``status_word`` (the word every page and command shows for it: ``failed``, ``stopped``), ``error``,
    ``error_type``, ``endpoint`` (the endpoint a refused run could not call, else null),
    ``run_id``, ``query``, ``seed``, ``failed_batches`` (each batch that failed, with its last
    error) and ``figures`` (what the run did and spent before it ended, from its ``RunFailed``
    event). ``events`` are the run's. A run refused before its first event (by the preflight)
    has none: ``error`` and ``request`` then say why and for which question."""
    state = RunState.replay(events)
    failed = next((e for e in reversed(events) if isinstance(e, RunFailed)), None)
    request = state.request or request
    figures = {
        "summary_count": state.summary_count or 0,
        "batch_count": len(state.batches),
        "batches_done": failed.batches_done if failed else 0,
        "batches_failed": failed.batches_failed if failed else 0,
        "model_calls": failed.model_calls if failed else state.model_calls,
        "usage": (failed.usage if failed and failed.usage else state.usage).model_dump(),
        "duration_s": state.elapsed_s,
    }
    status = RunStatus.CANCELLED if failed is not None and failed.cancelled else RunStatus.FAILED
    document = {
        "status": status,
        "status_word": status.word,
        "error": str(error) if error is not None else state.error,
        "error_type": type(error).__name__ if error is not None else state.error_type,
        "endpoint": error.endpoint if isinstance(error, PreflightError) else None,
        "run_id": run_id or state.run_id,
        "query": request.query if request else None,
        "seed": state.seed if state.seed is not None else (request.seed if request else None),
        "failed_batches": [
            {"batch_index": b.index, "community_ids": list(b.community_ids), "attempts": b.attempts, "error": b.errors[-1] if b.errors else None}
            for b in state.batches
            if b.status == FAILED_BATCH
        ],
        "figures": figures,
        "why_no_answer": [item.model_dump(mode="json", exclude={"texts"}) for item in why_no_answer(events)] if events else [],
    }
    return _json(document)


def aligned_table(header: Sequence[str], rows: Sequence[Sequence[object]], *, left: int = 0) -> list[str]:
    """The lines of a plain-text table: every column as wide as its widest cell, the first
    ``left`` columns left-aligned (names), the rest right-aligned (figures)."""
    cells = [[str(h) for h in header], *([str(v) for v in row] for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return ["  ".join(v.ljust(w) if i < left else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths, strict=True))).rstrip() for row in cells]


def format_statistics(stats: dict[str, Any], *, name: str, path: Path, tokenizer: str) -> str:
    """``inspect``'s text: the index, one right-aligned row per level, the totals, the warnings."""
    lines = [f"Index {name} ({path})", f"tokens counted with {tokenizer}", ""]
    header = ("level", "communities", "summaries", "summary_tokens", "map_text_tokens", "claims")
    lines += aligned_table(header, [[r[h] for h in header] for r in stats["levels"]])
    lines += ["", "totals: " + ", ".join(f"{k} {v}" for k, v in stats["totals"].items())]
    if stats["warnings"]:
        lines += ["", "warnings:", *(f"- {w}" for w in stats["warnings"])]
    return "\n".join(lines) + "\n"


def format_run_line(run: RunSummary) -> str:
    """A run as ``runs list`` shows it: its whole id (what ``runs show`` takes), then ``when ·
    index · question · settings · status [label]``. The settings say ``dynamic (threshold N)``
    for a dynamic selection, the status is in the words of :attr:`RunStatus.word`, and the
    run's label is shown whole."""
    query = run.query if len(run.query) <= RUN_QUERY_CHARS else run.query[: RUN_QUERY_CHARS - 1] + "…"
    when = run.created_at.replace("T", " ")[:16]
    tag = f" [{run.label}]" if run.label else ""
    settings = settings_text(run.request, seed=run.seed, level=run.community_level)
    return f"{run.run_id}  {when} · {run.index_name} · {query} · {settings} · {status_word(run.status)}{tag}"


def format_replay(bundle: RunBundle, state: RunState, sets: CommunitySets | None) -> str:
    """``replay``'s text: the run, its question and status, the answer (or the error; each point
    marked with its verdict when the bundle carries a support check, then its summary), then the
    three community sets and the unsupported citations."""
    result = state.result
    lines = [
        f"Run {bundle.run_id} · {bundle.model} · index {bundle.index.name}",
        f"Question: {bundle.request.query}",
        f"Status: {status_word(result.status if result is not None else bundle.status)}",
    ]
    if result is not None and bundle.support is not None:
        lines += ["", marked_answer(result.answer, bundle.support).rstrip(), "", *support_lines(bundle.support), ""]
    elif result is not None:
        lines += ["", result.answer.rstrip(), ""]
    elif state.error:
        lines.append(f"Error: {state.error}")
    if sets is not None:
        unused = ", ".join(f"{u.community_id} ({u.best_score:g})" for u in sets.read_but_unused)
        lines.append(f"Cited ({len(sets.cited)}): {', '.join(sets.cited) or '-'}")
        lines.append(f"Behind ({len(sets.behind)}): {', '.join(sets.behind) or '-'}")
        lines.append(f"Read but unused ({len(sets.read_but_unused)}, best score): {unused or '-'}")
        if sets.unsupported:
            flagged = ", ".join(f"{u.community_id} ({u.reason.replace('_', ' ')})" for u in sets.unsupported)
            lines.append(f"Unsupported citations ({sets.unsupported_count}): {flagged}")
    return "\n".join(lines) + "\n"


def format_replay_json(bundle: RunBundle, state: RunState, sets: CommunitySets | None, *, index_mismatch: str | None) -> str:
    """``replay --json``: the run's id, status, answer, error, community sets, whether the
    index at hand is not the run's (``index_mismatch``) and the support check the bundle carries
    (``support``, null when none)."""
    result = state.result
    document = {
        "run_id": bundle.run_id,
        "status": result.status if result is not None else bundle.status,
        "answer": result.answer if result is not None else None,
        "error": state.error,
        "community_sets": sets.to_json_dict() if sets is not None else None,
        "index_mismatch": index_mismatch,
        "support": bundle.support.to_json_dict() if bundle.support is not None else None,
    }
    return _json(document)


__all__ = [
    "aligned_table",
    "format_failure_json",
    "format_replay",
    "format_replay_json",
    "format_result_json",
    "format_run_line",
    "format_statistics",
]
