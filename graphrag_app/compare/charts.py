"""Comparing runs: tables and figures as pure functions of ``RunRecord``s. No streamlit.

Every function takes the records in the order the user picked them and labels them with
:func:`run_labels` (``A · level 0 · seed 1 · 1a2b3c4d``: what sets the run apart, its id last),
so the tables, the figures and the answer columns of the Compare page name a run the same way.

Untrusted text (run labels, queries, community ids come from an index or a model) only reaches a
figure through :func:`plot_text`, which escapes the HTML-like tags Plotly would interpret.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from graphrag_app.compare.settings_table import SettingRow, settings_rows, settings_table  # noqa: F401 - also imported from here
from graphrag_app.panels.chart_parts import BATCHES_COLOR, MODEL_CALLS_COLOR, PROMPT_TOKENS_NAME, SPENT_CALLS_COLOR, add_prompt_tokens_axis
from graphrag_app.text import plot_text, run_labels  # noqa: F401 - plot_text also imported from here
from graphrag_app.urls import index_param
from graphrag_core.citations import CommunitySets, SetName, community_sets
from graphrag_core.figures import Price, RunSpend, money
from graphrag_core.history import RunRecord
from graphrag_core.status import RunStatus
from graphrag_core.sweep import jaccard

CHART_HEIGHT = 340
RUN_COLORS = ("#4c8bf5", "#f0a030", "#2ca05a", "#d63b3b", "#8e7cc3", "#17becf")
MAX_COMPARED_RUNS = 4
MIN_COMPARED_RUNS = 2
HOVER_IDS_MAX = 15

METRIC_NAMES: tuple[str, ...] = (
    "status",
    "summaries",
    "batches",
    "model calls",
    "rating calls",
    "rating tokens (reported)",
    "map cache hits",
    "model calls as if uncached",
    "map prompt tokens",
    "reduce prompt tokens",
    PROMPT_TOKENS_NAME,
    "tokens used (reported)",
    "prompt tokens from the endpoint's cache",
    "tokens as if uncached",
    "failed batches",
    "answers selected",
    "communities cited",
    "communities behind",
    "communities read but unused",
    "unsupported citations",
    "duration (s)",
)


def run_color(position: int) -> str:
    return RUN_COLORS[position % len(RUN_COLORS)]


def index_key_for(record: RunRecord) -> str:
    """The ``index`` URL value that reopens a run's index (see :func:`~graphrag_app.urls.index_param`)."""
    return index_param(record.index_path, name=record.index_name)


# -- tables ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunMetrics:
    """The cost and outcome of one run, from its result or (unfinished runs) its events."""

    status: str
    summaries: int
    batches: int
    model_calls: int
    rating_calls: int
    rating_tokens: int | None
    map_prompt_tokens: int
    reduce_prompt_tokens: int | None
    reported_tokens: int | None
    failed_batches: int
    answers_selected: int
    communities_cited: int
    """The **cited** set's size: communities the answer cites."""
    communities_behind: int
    """The **behind** set's size: communities of the map answers selected for the reduce."""
    unsupported_citations: int
    duration_s: float
    spend: RunSpend | None = None
    communities_read_but_unused: int = 0
    """The **read but unused** set's size: communities in batches whose answers did not reach the reduce."""
    cached_tokens: int | None = None
    """Prompt tokens the endpoint served from its prompt cache (as it reported them)."""
    prompt_tokens: int = 0
    """The planned prompt estimate of the whole run: map batches, the reduce and, under dynamic
    selection, the rating prompts (cached ones included), as :attr:`RunFigures.prompt_tokens`."""

    @property
    def calls_as_if_uncached(self) -> int:
        """The calls the run would have made with no cache: what compares runs by cost."""
        return self.spend.calls_as_if_uncached if self.spend else self.model_calls

    def as_row(self) -> dict[str, object]:
        values = (
            self.status,
            self.summaries,
            self.batches,
            self.model_calls,
            self.rating_calls,
            self.rating_tokens,
            self.spend.cache_hits if self.spend else None,
            self.spend.calls_as_if_uncached if self.spend else None,
            self.map_prompt_tokens,
            self.reduce_prompt_tokens,
            self.prompt_tokens,
            self.reported_tokens,
            self.cached_tokens,
            _as_if_uncached_tokens(self.spend),
            self.failed_batches,
            self.answers_selected,
            self.communities_cited,
            self.communities_behind,
            self.communities_read_but_unused,
            self.unsupported_citations,
            round(self.duration_s, 2),
        )
        return dict(zip(METRIC_NAMES, values))


def _as_if_uncached_tokens(spend: RunSpend | None) -> str | None:
    if spend is None or not spend.tokens_as_if_uncached.total_tokens:
        return None
    return ("≈" if spend.tokens_estimated else "") + f"{spend.tokens_as_if_uncached.total_tokens:,}"


def run_metrics(record: RunRecord) -> RunMetrics:
    """The metrics of one run, read from its figures (:attr:`RunRecord.figures`): a cache hit is
    not a model call, and a failed or stopped run counts what its events show."""
    figures = record.figures
    return RunMetrics(
        status=RunStatus(record.status).word,
        summaries=figures.summaries or 0,
        batches=figures.batches,
        model_calls=figures.model_calls,
        rating_calls=figures.rating_calls,
        rating_tokens=figures.rating_usage.total_tokens or None,
        map_prompt_tokens=figures.map_prompt_tokens,
        reduce_prompt_tokens=figures.reduce_prompt_tokens,
        reported_tokens=figures.usage.total_tokens or None,
        failed_batches=figures.failed_batches,
        answers_selected=record.selected_answer_count,
        communities_cited=len(figures.communities_cited),
        communities_behind=len(figures.communities_behind),
        unsupported_citations=figures.unsupported_citations,
        duration_s=record.duration_s,
        spend=figures.spend,
        communities_read_but_unused=len(sets.read_but_unused) if (sets := _record_sets(record)) is not None else 0,
        cached_tokens=figures.usage.cached_tokens or None,
        prompt_tokens=figures.prompt_tokens,
    )


def metrics_table(records: Sequence[RunRecord], *, price: Price | None = None) -> list[dict[str, object]]:
    """One row per metric (``metric``, then one column per run label), so runs sit side by side.

    Values are text so a column mixing numbers and blanks displays the same everywhere."""
    labels = run_labels(records)
    per_run = [run_metrics(record).as_row() for record in records]
    rows = []
    for name in METRIC_NAMES:
        row: dict[str, object] = {"metric": name}
        for label, metrics in zip(labels, per_run):
            value = metrics[name]
            row[label] = "–" if value is None else (f"{value:,}" if isinstance(value, int) else str(value))
        rows.append(row)
    if price is not None:
        spends = [record.figures.spend for record in records]
        rows.append({"metric": "cost (configured price)", **{label: money(price.of(spend.tokens)) for label, spend in zip(labels, spends)}})
        rows.append(
            {
                "metric": "cost as if uncached",
                **{label: ("≈" if spend.tokens_estimated else "") + money(price.of(spend.tokens_as_if_uncached)) for label, spend in zip(labels, spends)},
            }
        )
    return rows


def _layout(fig: go.Figure, title: str, *, height: int = CHART_HEIGHT) -> go.Figure:
    fig.update_layout(
        title={"text": title, "font": {"size": 14}},
        height=height,
        margin={"l": 60, "r": 20, "t": 50, "b": 90},
        legend={"orientation": "h", "yanchor": "top", "y": -0.15, "xanchor": "left", "x": 0.0},
    )
    return fig


def cost_figure(records: Sequence[RunRecord]) -> go.Figure:
    """Batches, model calls as if uncached (what the run costs, whatever the cache held) beside
    the calls spent, failed batches and answers selected per run (grouped bars), and the
    planned prompt tokens (map + reduce + rating) on a second axis as diamonds."""
    labels = run_labels(records)
    metrics = [run_metrics(record) for record in records]
    fig = go.Figure()
    for name, values, color in (
        ("batches", [m.batches for m in metrics], BATCHES_COLOR),
        ("model calls as if uncached", [m.calls_as_if_uncached for m in metrics], MODEL_CALLS_COLOR),
        ("model calls spent", [m.model_calls for m in metrics], SPENT_CALLS_COLOR),
        ("failed batches", [m.failed_batches for m in metrics], "#d63b3b"),
        ("answers selected", [m.answers_selected for m in metrics], "#2ca05a"),
    ):
        fig.add_trace(go.Bar(name=name, x=labels, y=values, marker={"color": color}, hovertemplate="%{x}: %{y:,} " + name + "<extra></extra>"))
    add_prompt_tokens_axis(
        fig,
        labels,
        [m.prompt_tokens for m in metrics],
        customdata=[[f.map_prompt_tokens, f.sent_reduce_prompt_tokens, f.rating_prompt_tokens] for f in (r.figures for r in records)],
        hovertemplate="%{x}: %{y:,} prompt tokens<br>map %{customdata[0]:,} · reduce %{customdata[1]:,} · rating %{customdata[2]:,}<extra></extra>",
        count_title="count",
    )
    return _layout(fig, "Cost per run")


# -- usefulness -----------------------------------------------------------------------------


def usefulness_values(record: RunRecord) -> list[float]:
    """The usefulness score of each map batch that answered (failed batches have none)."""
    return [b.usefulness for b in record.replay().batches if b.usefulness is not None]


def usefulness_figure(records: Sequence[RunRecord]) -> go.Figure:
    """One box per run over its batches' usefulness (0-100), with every batch drawn as a point."""
    labels = run_labels(records)
    fig = go.Figure()
    for i, (label, record) in enumerate(zip(labels, records)):
        values = usefulness_values(record)
        fig.add_trace(
            go.Box(
                name=label,
                y=values,
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                marker={"color": run_color(i), "size": 6, "opacity": 0.7},
                line={"color": run_color(i)},
                boxmean=True,
                hovertemplate=label + ": usefulness %{y}<extra></extra>",
            )
        )
    fig.update_yaxes(title_text="usefulness", range=[-3, 103])
    fig.update_layout(showlegend=False)
    return _layout(fig, "Usefulness of the map answers (one point per batch)")


# -- overlap of the three community sets across runs -----------------------------------------


def _record_sets(record: RunRecord) -> CommunitySets | None:
    return community_sets(record.result) if record.result is not None else None


def run_sets(records: Sequence[RunRecord], which: SetName = "behind") -> list[frozenset[str]]:
    """One of the three community sets of each run (``cited`` by the answer, ``behind`` it,
    ``read_but_unused``), empty for a run without an answer."""
    return [frozenset(found.ids(which)) if (found := _record_sets(r)) is not None else frozenset() for r in records]


def set_title(which: SetName) -> str:
    """``communities behind each answer`` and the like, for titles and captions."""
    return {
        "cited": "communities each answer cites",
        "behind": "communities behind each answer",
        "read_but_unused": "communities each run read but did not use",
    }[which]


def jaccard_matrix(records: Sequence[RunRecord], which: SetName = "behind") -> list[list[float]]:
    """Pairwise Jaccard similarity of one community set of each run (two empty sets count as 1)."""
    sets = run_sets(records, which)
    return [[jaccard(a, b) for b in sets] for a in sets]


def overlap_heatmap_figure(records: Sequence[RunRecord], which: SetName = "behind") -> go.Figure:
    """The Jaccard matrix as a heatmap, each cell written out with its shared/union counts."""
    labels = run_labels(records)
    sets = run_sets(records, which)
    matrix = jaccard_matrix(records, which)
    text = [[f"{matrix[i][j]:.2f}<br>{len(a & b)} / {len(a | b)}" for j, b in enumerate(sets)] for i, a in enumerate(sets)]
    fig = go.Figure(
        go.Heatmap(
            z=matrix,
            x=labels,
            y=labels,
            zmin=0,
            zmax=1,
            colorscale="Blues",
            text=text,
            texttemplate="%{text}",
            hovertemplate="%{y} vs %{x}<br>Jaccard %{z:.2f}<extra></extra>",
            colorbar={"title": {"text": "Jaccard"}},
        )
    )
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, f"Overlap of the {set_title(which)} (shared / union)", height=CHART_HEIGHT)


@dataclass(frozen=True)
class OverlapGroup:
    """The communities that exactly the runs in ``members`` (positions in the comparison) hold in the set compared."""

    members: tuple[int, ...]
    community_ids: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.community_ids)


def overlap_groups(records: Sequence[RunRecord], which: SetName = "behind") -> list[OverlapGroup]:
    """Every non-empty membership pattern (UpSet's "exclusive intersections"): each community of
    the compared set lands in exactly one group. Largest groups first, then more members first."""
    ordered = [found.ids(which) if (found := _record_sets(r)) is not None else () for r in records]
    sets = [frozenset(ids) for ids in ordered]
    by_members: dict[tuple[int, ...], list[str]] = {}
    for community_id in dict.fromkeys(cid for ids in ordered for cid in ids):  # first-seen order
        members = tuple(i for i, s in enumerate(sets) if community_id in s)
        by_members.setdefault(members, []).append(community_id)
    groups = [OverlapGroup(members, tuple(ids)) for members, ids in by_members.items()]
    return sorted(groups, key=lambda g: (-g.count, -len(g.members), g.members))


def _group_name(members: Sequence[int], count: int, letters: Sequence[str]) -> str:
    if len(members) == count and count > 1:
        return "all runs"
    if len(members) == 1:
        return f"only {letters[members[0]]}"
    return " ∩ ".join(letters[m] for m in members) + " only"


OVERLAP_RUNS_COLUMN = "runs"
"""The overlap table's first column: which runs hold the row's communities in the compared set."""


def overlap_table(records: Sequence[RunRecord], which: SetName = "behind") -> list[dict[str, object]]:
    """The UpSet-like count table: one row per membership pattern, a ✓ column per run."""
    labels = run_labels(records)
    letters = [label.split(" ")[0] for label in labels]
    rows = []
    for group in overlap_groups(records, which):
        row: dict[str, object] = {OVERLAP_RUNS_COLUMN: _group_name(group.members, len(records), letters)}
        for i, label in enumerate(labels):
            row[label] = "✓" if i in group.members else ""
        row["communities"] = group.count
        row["ids"] = ", ".join(group.community_ids[:HOVER_IDS_MAX]) + (" …" if group.count > HOVER_IDS_MAX else "")
        rows.append(row)
    return rows


def overlap_bars_figure(records: Sequence[RunRecord], which: SetName = "behind") -> go.Figure:
    """UpSet-style bars: how many communities each membership pattern holds."""
    labels = run_labels(records)
    letters = [label.split(" ")[0] for label in labels]
    groups = overlap_groups(records, which)
    names = [_group_name(g.members, len(records), letters) for g in groups]
    fig = go.Figure(
        go.Bar(
            x=names,
            y=[g.count for g in groups],
            marker={"color": [run_color(g.members[0]) if len(g.members) == 1 else "#555" for g in groups]},
            customdata=[[plot_text(", ".join(g.community_ids[:HOVER_IDS_MAX]) + (" …" if g.count > HOVER_IDS_MAX else ""))] for g in groups],
            hovertemplate="%{x}: %{y} communities<br>%{customdata[0]}<extra></extra>",
        )
    )
    fig.update_yaxes(title_text="communities", rangemode="tozero")
    return _layout(fig, BARS_TITLES[which])


BARS_TITLES: dict[SetName, str] = {
    "cited": "Communities by the runs whose answers cite them",
    "behind": "Communities by the runs whose answers they are behind",
    "read_but_unused": "Communities by the runs that read them but did not use them",
}


__all__ = [
    "METRIC_NAMES",
    "OverlapGroup",
    "OVERLAP_RUNS_COLUMN",
    "RunMetrics",
    "SettingRow",
    "cost_figure",
    "index_key_for",
    "jaccard_matrix",
    "metrics_table",
    "overlap_bars_figure",
    "overlap_groups",
    "overlap_heatmap_figure",
    "overlap_table",
    "plot_text",
    "run_labels",
    "run_metrics",
    "run_sets",
    "set_title",
    "settings_rows",
    "settings_table",
    "usefulness_figure",
    "usefulness_values",
]
