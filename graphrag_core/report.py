"""A stored run as readable text: the Markdown report (:func:`record_to_markdown`) and the
one line of its settings (:func:`settings_text`). Pure: no store, no front end.

Every text the report did not write itself (names, the question, answers, errors, reasons) goes
through :mod:`graphrag_core.markdown`, so the report holds no raw HTML and no link.

Every figure comes from the run's :class:`~graphrag_core.figures.RunFigures`, so a completed,
failed or stopped run reports the same rows; sections with nothing to show say so instead of
disappearing, so two reports line up.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from .citations import SET_NAMES, UNSUPPORTED_LABELS, community_sets
from .levels import DYNAMIC, Level, level_label, level_text
from .markdown import markdown_cell, markdown_table, markdown_text
from .methods import GLOBAL, LAZY, TEXT, method_label
from .request import GlobalSearchRequest
from .results import ReduceCandidate
from .status import RunStatus
from .support.report import support_markdown

if TYPE_CHECKING:
    from .history.records import RunRecord
    from .state import RunState

EXCERPT_CHARS = 160
"""A reduce candidate's answer is cut to this many characters in the report's table."""


def settings_text(request: GlobalSearchRequest | None, *, seed: int | None, level: Level | None = None) -> str:
    """What tells two runs of one question apart: the level (``dynamic (threshold 1)`` for a run
    whose communities the model selected), map and reduce budgets, seed and the reduce strategy,
    plus claims or excerpts left out, e.g. ``level 0 · map 8,000 · reduce 6,000 · seed 7 · skip · no claims``;
    for a run over source chunks its method in place of the level (``text (TS) · map 8,000 · ...``;
    ``lazy 500 · map 8,000 · ...`` with its relevance budget).
    ``level`` stands in for the request's when there is no request (a summary built by hand)."""
    if request is None:
        return f"{_level_words(level)} · seed {seed}"
    if request.method != GLOBAL:  # a run over source chunks: its method in place of a level, no summary switches
        parts = [f"lazy {request.relevance_budget:,}" if request.method == LAZY else method_label(request.method)]
        if request.method in (TEXT, LAZY):
            parts.append(f"map {request.map_token_budget:,}")
        parts += [f"reduce {request.reduce_token_budget:,}", f"seed {seed if seed is not None else request.seed}", request.reduce_strategy]
        return " · ".join(parts)
    parts = [
        request.selection_label if request.dynamic else f"level {level_text(request.community_level)}",
        f"map {request.map_token_budget:,}",
        f"reduce {request.reduce_token_budget:,}",
        f"seed {seed if seed is not None else request.seed}",
        request.reduce_strategy,
    ]
    if not request.include_claims:
        parts.append("no claims")
    if not request.include_sources:
        parts.append("no excerpts")
    return " · ".join(parts)


def _level_words(level: Level | None) -> str:
    return "level unknown" if level is None else (level_label(level) if level == DYNAMIC else f"level {level_text(level)}")


def _number(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _candidate_row(candidate: ReduceCandidate) -> list[object]:
    answer = candidate.answer
    cut = EXCERPT_CHARS - 3
    excerpt = answer.answer if len(answer.answer) <= EXCERPT_CHARS else answer.answer[:cut] + "..."
    return [
        "" if candidate.rank is None else candidate.rank,
        _number(answer.usefulness),
        candidate.fate,
        "" if candidate.tokens is None else candidate.tokens,
        ", ".join(answer.community_ids),
        excerpt,
    ]


def _selection_markdown(state: RunState) -> list[str]:
    """The walk of a dynamic selection: its cost and every rated community's rating and fate."""
    selection = state.selection
    lines = ["## Dynamic selection", ""]
    counts = ", ".join(f"{fate} {count}" for fate, count in sorted(selection.counts().items()))
    lines += markdown_table(
        ["figure", "value"],
        [
            ("communities rated", selection.rated_count),
            ("rating calls", selection.calls),
            ("rating cache hits", selection.cache_hits),
            ("rating prompt tokens (reported)", selection.usage.prompt_tokens),
            ("rating completion tokens (reported)", selection.usage.completion_tokens),
            ("fates", counts or "-"),
        ],
    ) + [""]
    rows = [
        (e.community_id, e.level, e.round, "failed" if e.failed else e.rating, selection.fate_of(e.community_id),
         ", ".join("failed" if r is None else str(r) for r in e.repeat_ratings), e.reason or "")
        for e in selection.ratings.values()
    ]
    if rows:
        lines += markdown_table(["community", "level", "round", "rating", "fate", "repeats", "reason"], rows) + [""]
    return lines


def _community_sets_markdown(record: RunRecord, *, index_ids: Collection[str] | None) -> list[str]:
    """The three community sets (cited, behind, read but unused with best score), each cited id
    checked: an unsupported citation is flagged in the cited table and counted."""
    sets = community_sets(record.result, index_ids=index_ids) if record.result is not None else None
    if sets is None:
        return [f"## Communities {heading}\n\n_None: the run produced no answer._\n" for heading in _SET_HEADINGS.values()]
    lines = [
        f"**Communities:** {len(sets.cited)} {SET_NAMES['cited']} · {len(sets.behind)} {SET_NAMES['behind']} · "
        f"{len(sets.read_but_unused)} {SET_NAMES['read_but_unused']} · {sets.unsupported_count} unsupported citation(s)"
        + ("" if index_ids is not None else " (checked against the map answers; the index was not at hand)"),
        "",
        f"## Communities {_SET_HEADINGS['cited']}",
        "",
    ]
    unsupported = {u.community_id: u for u in sets.unsupported}
    if sets.cited:
        rows = [
            (cid, f"⚠ unsupported: {UNSUPPORTED_LABELS[unsupported[cid].reason]}" if cid in unsupported else "supported",
             unsupported[cid].count if cid in unsupported else "")
            for cid in sets.cited
        ]
        lines += markdown_table(["community", "check", "times cited (unsupported)"], rows) + [""]
    else:
        lines += ["_None: the answer cites no community._", ""]
    lines += [f"## Communities {_SET_HEADINGS['behind']}", ""]
    lines += [markdown_text(", ".join(sets.behind)) if sets.behind else "_None._", ""]
    lines += [f"## Communities {_SET_HEADINGS['read_but_unused']}", ""]
    if sets.read_but_unused:
        lines += markdown_table(
            ["community", "best score", "fate", "batches"],
            [(u.community_id, _number(u.best_score), u.fate.replace("_", " "), ", ".join(map(str, u.batch_indexes))) for u in sets.read_but_unused],
        ) + [""]
    else:
        lines += ["_None: every community the map read is behind the answer._", ""]
    return lines


_SET_HEADINGS = {"cited": "cited by the answer", "behind": "behind the answer", "read_but_unused": "read but unused"}


def record_to_markdown(record: RunRecord, *, index_ids: Collection[str] | None = None) -> str:
    """A Markdown report of one run: question, settings, status, answer, the three community sets
    (cited, behind, read but unused; citations checked against ``index_ids`` when given, else
    against the map answers only), its support check (or that it has none), its figures, the map batches, the reduce candidates and the
    failed batches."""
    lines: list[str] = [f"# Global search run {markdown_text(record.run_id)}", ""]
    if record.label:
        lines += [f"**Label:** {markdown_cell(record.label)}", ""]
    lines += ["## Question", "", markdown_text(record.request.query), ""]
    lines += _settings_markdown(record)
    lines += _status_markdown(record)
    lines += ["## Answer", ""]
    lines += [markdown_text(record.result.answer) if record.result is not None else "_The run produced no answer._", ""]
    lines += _community_sets_markdown(record, index_ids=index_ids)
    lines += support_markdown(record.support)
    lines += _diagnostics_markdown(record)
    lines += _map_batches_markdown(record)
    if record.request.dynamic:
        lines += _selection_markdown(record.replay())
    lines += _candidates_markdown(record)
    lines += _failures_markdown(record)
    return "\n".join(lines)


def _settings_markdown(record: RunRecord) -> list[str]:
    """Every setting of the run, the dynamic selection's when it selected dynamically."""
    request = record.request
    settings: list[tuple[str, object]] = [
        ("index", record.index_name + (f" ({record.index_path})" if record.index_path else "")),
        ("model", record.model),
        ("created at", record.created_at),
        ("community level", request.reported_level),
        ("seed", record.seed if record.seed is not None else "drawn"),
        ("map token budget", request.map_token_budget),
        ("map output reserve", request.map_output_reserve),
        ("reduce token budget", request.reduce_token_budget),
        ("reduce output reserve", request.reduce_output_reserve),
        ("map concurrency", request.map_concurrency),
        ("reduce strategy", request.reduce_strategy),
        ("claims included", "yes" if request.include_claims else "no"),
        ("sources included", "yes" if request.include_sources else "no"),
        ("tokenizer", request.tokenizer),
    ]
    if request.dynamic:
        settings += [
            ("rating threshold", request.rating_threshold),
            ("keep parent", "yes" if request.keep_parent else "no"),
            ("rating repeats", request.rating_repeats),
            ("fallback max level", request.fallback_max_level),
            ("rating output reserve", request.rating_output_reserve),
        ]
    return ["## Settings", "", *markdown_table(["setting", "value"], settings), ""]


def _status_markdown(record: RunRecord) -> list[str]:
    """The status word and duration, then the stopped note or the error."""
    result = record.result
    lines = ["## Status", "", f"**{RunStatus(record.status).word}** in {record.duration_s:.2f} s", ""]
    if result is not None and result.diagnostics.stopped_note:
        lines += [result.diagnostics.stopped_note, ""]
    elif record.error:
        lines += [f"Error: {markdown_text(record.error)}", ""]
    return lines


def _diagnostics_markdown(record: RunRecord) -> list[str]:
    """The run's figures: batches, budgets, calls, cache hits and the tokens reported."""
    request = record.request
    figures = record.figures
    rows: list[tuple[str, object]] = [
        ("summaries selected", "" if figures.summaries is None else figures.summaries),
        ("map batches", figures.batches),
    ]
    if figures.finished_batches != figures.batches:
        rows.append(("finished batches", figures.finished_batches))
    rows += [
        ("failed batches", figures.failed_batches),
        ("answers selected for the reduce", record.selected_answer_count),
        ("map prompt budget", request.map_prompt_budget),
        ("reduce prompt budget", request.reduce_prompt_budget),
        ("reduce prompt tokens", "" if figures.reduce_prompt_tokens is None else figures.reduce_prompt_tokens),
        ("map calls", figures.map_calls),
        ("reduce calls", figures.reduce_calls),
        ("cache hits", figures.cache_hits),
        ("unsupported citations (checked when the run finished)", figures.unsupported_citations),
        ("prompt tokens (reported)", figures.usage.prompt_tokens),
        ("prompt tokens from the endpoint's prompt cache (reported)", figures.usage.cached_tokens),
        ("completion tokens (reported)", figures.usage.completion_tokens),
    ]
    if figures.usage.estimated:
        rows.append(("calls whose tokens the run counted (the endpoint reported none)", figures.usage.estimated_calls))
    return ["## Diagnostics", "", *markdown_table(["figure", "value"], rows), ""]


def _map_batches_markdown(record: RunRecord) -> list[str]:
    """Each map batch: its communities, tokens and usefulness (nothing for a run with no batch)."""
    figures = record.figures
    if not figures.batch_community_ids:
        return []
    usefulness = record.result.diagnostics.batch_usefulness if record.result is not None else []
    batch_rows = [
        [i, ", ".join(ids), figures.batch_token_estimates[i] if i < len(figures.batch_token_estimates) else "",
         _number(usefulness[i]) if i < len(usefulness) else ""]
        for i, ids in enumerate(figures.batch_community_ids)
    ]
    return ["### Map batches", "", *markdown_table(["batch", "communities", "tokens", "usefulness"], batch_rows), ""]


def _candidates_markdown(record: RunRecord) -> list[str]:
    candidates = record.figures.candidates
    if not candidates:
        return ["## Reduce candidates", "", "_None._", ""]
    return ["## Reduce candidates", "", *markdown_table(["rank", "usefulness", "fate", "tokens", "communities", "answer"],
                                                        (_candidate_row(c) for c in candidates)), ""]


def _failures_markdown(record: RunRecord) -> list[str]:
    failures = [(f.batch_index, ", ".join(f.community_ids), f.attempts, f.error_type, f.error) for f in record.figures.failures]
    if not failures:
        return ["## Failed batches", "", "_None._", ""]
    return ["## Failed batches", "", *markdown_table(["batch", "communities", "attempts", "error type", "error"], failures), ""]


__all__ = ["record_to_markdown", "settings_text"]
