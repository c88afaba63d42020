"""How the app names a run: in its lists (Compare's pickers, the history) with :func:`run_label`,
and among the runs compared with :func:`run_labels`. Pure text, no streamlit."""

from __future__ import annotations

import string
from collections.abc import Sequence

from graphrag_core.history.records import RunRecord, RunSummary
from graphrag_core.report import settings_text
from graphrag_core.status import RunStatus

QUERY_CHARS = 60
"""A question longer than this is cut (with an ellipsis) in a run's label."""
ID_CHARS = 8
"""How much of a run's id its label shows (enough to tell runs apart; the whole id is in the URL)."""


def short_query(query: str, *, chars: int = QUERY_CHARS) -> str:
    """``query`` cut to ``chars`` characters, with an ellipsis when it was longer."""
    return query if len(query) <= chars else query[: chars - 1].rstrip() + "…"


def run_label(run: RunSummary | RunRecord, *, query_chars: int = QUERY_CHARS) -> str:
    """The one label of a run in the app's lists, what tells runs apart first and the id last:
    ``question · settings · status · index · when · [label] · id``. The settings say
    ``dynamic (threshold N)`` for a dynamic selection; the status is the word people read
    (a stopped run reads ``stopped``); the run's own label is shown whole."""
    when = run.created_at.replace("T", " ")[:16]
    level = run.request.reported_level if run.request is not None else getattr(run, "community_level", None)
    parts = [
        short_query(run.query, chars=query_chars),
        settings_text(run.request, seed=run.seed, level=level),
        RunStatus(run.status).word,
        run.index_name,
        when,
    ]
    if run.label:
        parts.append(f"[{run.label}]")
    parts.append(run.run_id[:ID_CHARS])
    return " · ".join(parts)


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


__all__ = ["ID_CHARS", "LABEL_QUERY_CHARS", "QUERY_CHARS", "run_label", "run_labels", "short_query"]
