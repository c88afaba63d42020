"""Comparing runs' settings: every request setting (and the index, the seed and the model) with
each run's value as text, and whether the runs differ on it. Pure: no streamlit.

Invariant: a setting that only dynamic selection uses shows as not used on a fixed-level run,
so two runs differ on it only when it changed what they did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphrag_app.text import run_labels
from graphrag_core.history import RunRecord

# Request fields shown in the settings table, with their display names, in display order.
REQUEST_FIELDS: tuple[tuple[str, str], ...] = (
    ("query", "question"),
    ("community_level", "community level"),
    ("map_token_budget", "map token budget"),
    ("map_output_reserve", "map output reserve"),
    ("reduce_token_budget", "reduce token budget"),
    ("reduce_output_reserve", "reduce output reserve"),
    ("map_concurrency", "map concurrency"),
    ("reduce_strategy", "reduce strategy"),
    ("include_claims", "claims included"),
    ("include_sources", "sources included"),
    ("tokenizer", "tokenizer"),
    ("community_selection", "community selection"),
    ("rating_threshold", "rating threshold"),
    ("keep_parent", "keep parents"),
    ("rating_repeats", "rating repeats"),
    ("fallback_max_level", "fallback max level"),
    ("rating_output_reserve", "rating output reserve"),
    ("question_reserve", "question reserve (prompt cache)"),
    ("spend_limit_tokens", "spending limit (tokens)"),
)
# Record fields (not part of the request) that also make two runs differ.
RECORD_FIELDS: tuple[tuple[str, str], ...] = (
    ("index_name", "index"),
    ("seed", "seed"),
    ("model", "model"),
)


DYNAMIC_FIELDS = frozenset(name for name, _ in REQUEST_FIELDS if name in ("rating_threshold", "keep_parent", "rating_repeats", "fallback_max_level", "rating_output_reserve"))
"""Settings that only a dynamic selection uses: a fixed-level run shows them as not used."""
NOT_USED = "– (fixed level)"


def _setting_value(record: RunRecord, name: str) -> object:
    if name in dict(RECORD_FIELDS):
        value = getattr(record, name)
        return "drawn" if name == "seed" and value is None else value
    if name in DYNAMIC_FIELDS and not record.request.dynamic:
        return NOT_USED
    value = record.request.reported_level if name == "community_level" else getattr(record.request, name)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None and name == "spend_limit_tokens":
        return "none"
    return value


@dataclass(frozen=True)
class SettingRow:
    """One setting across the compared runs; ``differs`` when not every run has the same value."""

    name: str
    values: tuple[str, ...]

    @property
    def differs(self) -> bool:
        return len(set(self.values)) > 1


def settings_rows(records: Sequence[RunRecord]) -> list[SettingRow]:
    """Every request setting (and the index, seed and model) with each run's value, as text."""
    rows = []
    for name, display in RECORD_FIELDS + REQUEST_FIELDS:
        rows.append(SettingRow(display, tuple(str(_setting_value(record, name)) for record in records)))
    return rows


def settings_table(records: Sequence[RunRecord], *, only_differing: bool = False) -> list[dict[str, object]]:
    """The settings as table rows: ``setting``, one column per run label, and ``differs``."""
    labels = run_labels(records)
    table = []
    for row in settings_rows(records):
        if only_differing and not row.differs:
            continue
        table.append({"setting": row.name, **dict(zip(labels, row.values)), "differs": row.differs})
    return table


__all__ = ["RECORD_FIELDS", "REQUEST_FIELDS", "SettingRow", "settings_rows", "settings_table"]
