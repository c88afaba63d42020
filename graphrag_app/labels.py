"""How the app names a run in its lists (Compare's pickers, the history): pure text, no streamlit."""

from __future__ import annotations

from graphrag_core.history.records import RunRecord, RunSummary
from graphrag_core.report import settings_text
from graphrag_core.status import RunStatus

QUERY_CHARS = 60
"""A question longer than this is cut (with an ellipsis) in a run's label."""


def run_label(run: RunSummary | RunRecord, *, query_chars: int = QUERY_CHARS) -> str:
    """The one label of a run in the app's lists: ``id · when · index · question · settings ·
    status [label]`` (the status as people read it: a stopped run reads ``stopped``)."""
    query = run.query if len(run.query) <= query_chars else run.query[: query_chars - 1] + "…"
    when = run.created_at.replace("T", " ")[:16]
    level = run.request.reported_level if run.request is not None else getattr(run, "community_level", None)
    tag = f" [{run.label[:30]}]" if run.label else ""
    return (
        f"{run.run_id[:8]} · {when} · {run.index_name} · {query} · "
        f"{settings_text(run.request, seed=run.seed, level=level)} · {RunStatus(run.status).word}{tag}"
    )


__all__ = ["QUERY_CHARS", "run_label"]
