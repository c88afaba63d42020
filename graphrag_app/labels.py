"""How the app names things in its lists and tables: a run (Compare's pickers, the history) with
:func:`run_label`, and among the runs compared with :func:`run_labels`; a reduce candidate's
fate (:data:`FATE_LABELS`) and a community's fate in a dynamic selection (:data:`WALK_LABELS`);
a large count (:func:`short_count`). Pure text, no streamlit."""

from __future__ import annotations

import string
from collections.abc import Sequence

from graphrag_core.history.records import RunRecord, RunSummary
from graphrag_core.report import settings_text
from graphrag_core.status import RunStatus

FATE_LABELS: dict[str, str] = {
    "selected": "selected",
    "skipped": "skipped (over budget)",
    "not_tried": "not tried (after stop)",
    "dropped": "dropped (usefulness 0)",
}
"""A reduce candidate's fate as every table, chart and panel names it."""


WALK_LABELS: dict[str, str] = {
    "queued": "being rated",
    "kept": "kept (the map reads it)",
    "pruned": "pruned (rated below the threshold)",
    "superseded": "replaced by its children",
    "skipped": "skipped (blank summary)",
    "failed": "failed (kept)",
    "unreached": "never reached",
}
"""What a dynamic selection's walk did with a community, as its chart, table and panels name it."""


def short_count(n: int) -> str:
    """``449192`` -> ``449k``, ``1234567`` -> ``1.2M``, ``950`` -> ``950``."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{round(n / 1000):,}k"
    return f"{n:,}"


QUERY_CHARS = 60
"""A question longer than this is cut (with an ellipsis) in a run's label."""
ID_CHARS = 8
"""How much of a run's id its label shows (enough to tell runs apart; the whole id is in the URL)."""


def short_query(query: str, *, chars: int = QUERY_CHARS) -> str:
    """``query`` cut to ``chars`` characters, with an ellipsis when it was longer."""
    return query if len(query) <= chars else query[: chars - 1].rstrip() + "…"


def run_label(run: RunSummary | RunRecord, *, query_chars: int = QUERY_CHARS, brief: bool = False) -> str:
    """The one label of a run in the app's lists, what tells runs apart first and the id last:
    ``question · settings · status · index · when · [label] · id``. The settings say
    ``dynamic (threshold N)`` for a dynamic selection; the status is the word people read
    (a stopped run reads ``stopped``); the run's own label is shown whole. ``brief`` leaves out
    the status, index and time (for a select box beside a table that shows them)."""
    level = run.request.reported_level if run.request is not None else getattr(run, "community_level", None)
    parts = [short_query(run.query, chars=query_chars), settings_text(run.request, seed=run.seed, level=level)]
    if not brief:
        parts += [RunStatus(run.status).word, run.index_name, run.created_at.replace("T", " ")[:16]]
    if run.label:
        parts.append(f"[{run.label}]")
    parts.append(run.run_id[:ID_CHARS])
    return " · ".join(parts)


BRIEF_QUERY_CHARS = 36
"""A question is cut to this many characters in a brief label (:func:`run_label`'s ``brief``)."""
LABEL_QUERY_CHARS = 28
"""A question that sets compared runs apart is cut to this many characters in their names."""


def _label_parts(record: RunRecord) -> dict[str, str]:
    """What may set a run apart from the others compared, in the order its name lists them."""
    request = record.request
    return {
        "question": short_query(record.query, chars=LABEL_QUERY_CHARS),
        "index": record.index_name,
        "selection": request.selection_label,
        "map": f"map {request.map_token_budget:,}",
        "reduce": f"reduce {request.reduce_token_budget:,}",
        "seed": f"seed {record.seed}" if record.seed is not None else "seed drawn",
        "strategy": request.reduce_strategy,
        "claims": "claims" if request.include_claims else "no claims",
        "excerpts": "excerpts" if request.include_sources else "no excerpts",
        "tokenizer": request.tokenizer,
        "model": record.model,
    }


def run_labels(records: Sequence[RunRecord]) -> list[str]:
    """Each run's name in a comparison: a letter for its place, what sets it apart from the
    other runs (question, level or ``dynamic (threshold N)``, budgets, seed, ...; only what
    differs), then its short id, e.g. ``A · level 0 · seed 1 · e8b9041d``. Runs that differ in
    nothing are told apart by letter and id alone. The letter makes every name unique."""
    letters = string.ascii_uppercase
    parts = [_label_parts(record) for record in records]
    differing = [name for name in (parts[0] if parts else {}) if len({p[name] for p in parts}) > 1]
    return [
        " · ".join([letters[i % 26], *(p[name] for name in differing), record.run_id[:ID_CHARS]])
        for i, (record, p) in enumerate(zip(records, parts))
    ]


__all__ = ["BRIEF_QUERY_CHARS", "FATE_LABELS", "WALK_LABELS", "ID_CHARS", "LABEL_QUERY_CHARS", "QUERY_CHARS", "run_label", "run_labels", "short_count", "short_query"]
