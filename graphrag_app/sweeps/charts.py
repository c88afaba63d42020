"""Charts of a sweep as pure functions ``figure(result) -> go.Figure`` (no streamlit here).

Each figure reads a :class:`~graphrag_core.sweep.SweepResult` alone. Levels are drawn as
categories in the sweep's own order ("leaf" first when it was listed first), so a level axis
never interpolates between levels. Failed points are left out of the measures and counted in
their own chart, so a failure never reads as "zero tokens" or "zero communities".
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

import plotly.graph_objects as go

from graphrag_core.levels import Level, level_label
from graphrag_core.status import RunStatus
from graphrag_core.sweep import SweepPoint, SweepResult

from ..panels.chart_parts import BATCHES_COLOR, MODEL_CALLS_COLOR, SPENT_CALLS_COLOR, add_prompt_tokens_axis

STATUS_COLORS: dict[RunStatus, str] = {
    RunStatus.COMPLETED: "#2ca05a",
    RunStatus.PARTIAL: "#f0a030",
    RunStatus.NO_RESULTS: "#9aa0aa",
    RunStatus.FAILED: "#d63b3b",
}
CHART_HEIGHT = 320


def _budget_label(point: SweepPoint) -> str:
    return f"map {point.map_token_budget} / reduce {point.reduce_token_budget}"


def _layout(figure: go.Figure, title: str, *, y_title: str, height: int = CHART_HEIGHT) -> go.Figure:
    figure.update_layout(
        title=title,
        height=height,
        margin=dict(l=40, r=20, t=50, b=40),
        yaxis_title=y_title,
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1),
    )
    return figure


def level_name(result: SweepResult, level: Level) -> str:
    """A level of the sweep as people read it; its dynamic points say their rating threshold
    (``dynamic (threshold 1)``), which every dynamic point of a sweep shares."""
    return level_label(level, threshold=result.spec.base.rating_threshold)


def _categories(result: SweepResult) -> list[str]:
    return [level_name(result, level) for level in result.spec.levels]


def stability_figure(result: SweepResult) -> go.Figure:
    """Mean pairwise Jaccard similarity of the communities behind the answer across seeds, per level
    (1 = every seed had the same communities behind its answer). Levels with fewer than two comparable points
    show no bar and say so in the hover text."""
    stability = result.stability_by_level()
    levels = list(result.spec.levels)
    values = [stability.get(level) for level in levels]
    figure = go.Figure(
        go.Bar(
            x=[level_name(result, level) for level in levels],
            y=[v if v is not None else 0 for v in values],
            text=[f"{v:.2f}" if v is not None else "n/a" for v in values],
            textposition="outside",
            marker_color=["#4c8bf5" if v is not None else "#d0d4dc" for v in values],
            hovertext=[
                f"{level_name(result, level)}: {v:.3f}" if v is not None else f"{level_name(result, level)}: fewer than two comparable points"
                for level, v in zip(levels, values)
            ],
            hoverinfo="text",
            name="stability",
        )
    )
    figure.update_yaxes(range=[0, 1.1])
    return _layout(figure, "Stability of the communities behind the answer across seeds", y_title="mean Jaccard similarity")


def _by_budget(points: Sequence[SweepPoint]) -> dict[str, list[SweepPoint]]:
    groups: dict[str, list[SweepPoint]] = {}
    for point in points:
        groups.setdefault(_budget_label(point), []).append(point)
    return groups


def _strip_figure(result: SweepResult, value: Callable[[SweepPoint], float], title: str, y_title: str) -> go.Figure:
    """One marker per successful point, x = level, one box trace per budget pair."""
    figure = go.Figure()
    succeeded = [p for p in result.points if not p.failed]
    for label, points in _by_budget(succeeded).items():
        figure.add_trace(
            go.Box(
                x=[level_name(result, p.level) for p in points],
                y=[value(p) for p in points],
                name=label,
                boxpoints="all",
                jitter=0.3,
                pointpos=0,
                hovertext=[f"seed {p.seed}: {value(p):g}" for p in points],
                hoverinfo="text",
            )
        )
    figure.update_layout(boxmode="group")
    figure.update_xaxes(categoryorder="array", categoryarray=_categories(result))
    return _layout(figure, title, y_title=y_title)


def tokens_figure(result: SweepResult) -> go.Figure:
    """Planned prompt tokens (every map batch's prompt once, plus the reduce prompt) per level."""
    return _strip_figure(result, lambda p: p.prompt_tokens, "Prompt tokens per run", "prompt tokens (estimate)")


def cited_communities_figure(result: SweepResult) -> go.Figure:
    """How many communities stand behind each answer, per level."""
    return _strip_figure(result, lambda p: len(p.community_ids), "Communities behind the answer", "communities behind")


def status_figure(result: SweepResult) -> go.Figure:
    """How each level's points ended: completed, partial, no_results or failed (stacked counts)."""
    categories = _categories(result)
    figure = go.Figure()
    for status, color in STATUS_COLORS.items():
        counts = [sum(1 for p in result.points_at(level) if p.status == status) for level in result.spec.levels]
        if any(counts):
            figure.add_trace(go.Bar(x=categories, y=counts, name=status.word, marker_color=color))
    figure.update_layout(barmode="stack")
    return _layout(figure, "Outcome of each grid point", y_title="points")


def cost_figure(result: SweepResult) -> go.Figure:
    """Mean batches and model calls per point for each level, and mean prompt tokens (right axis).

    Levels are compared by what a point costs, not by what an earlier point left in the cache:
    the calls are those the point would have made with no cache (``calls_as_if_uncached``), with
    the calls actually spent drawn lighter beside them; the prompt tokens are the planned
    estimate, cached batches and ratings included."""
    levels = list(dict.fromkeys(point.level for point in result.points))
    names = [level_name(result, level) for level in levels]

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    by_level = {level: result.points_at(level) for level in levels}
    fig = go.Figure()
    bars: tuple[tuple[str, Callable[[SweepPoint], float], str, str], ...] = (
        ("batches", lambda p: p.batch_count, BATCHES_COLOR, "batches per point"),
        ("model calls as if uncached", lambda p: p.calls_as_if_uncached, MODEL_CALLS_COLOR, "model calls per point with no cache"),
        ("model calls spent", lambda p: p.model_calls, SPENT_CALLS_COLOR, "model calls spent per point (the cache answered the rest)"),
    )
    for name, value, color, hover in bars:
        fig.add_trace(
            go.Bar(
                name=name,
                x=names,
                y=[mean([value(p) for p in by_level[lv]]) for lv in levels],
                marker={"color": color},
                hovertemplate="%{x}: %{y:,.0f} " + hover + "<extra></extra>",
            )
        )
    add_prompt_tokens_axis(
        fig,
        names,
        [mean([p.prompt_tokens for p in by_level[lv]]) for lv in levels],
        hovertemplate="%{x}: %{y:,.0f} prompt tokens per point<extra></extra>",
        lines=True,
        size=11,
    )
    fig = _layout(fig, "Cost per level", y_title="per point (mean)")
    # four series: the legend goes under the axis, where it does not run into the title
    fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.18, "xanchor": "left", "x": 0.0}, margin={"b": 80})
    return fig


def points_figure(result: SweepResult) -> go.Figure:
    """Every grid point as a filled cell: seed across, (level, budgets) down, coloured by status,
    each saying how many communities stood behind its answer and what it cost, so the grid reads without hovering."""
    seeds = list(dict.fromkeys(point.seed for point in result.points))
    rows = list(dict.fromkeys((p.level, p.map_token_budget, p.reduce_token_budget) for p in result.points))
    row_names = [f"{level_name(result, level)} · map {m:,} · reduce {r:,}" for level, m, r in rows]
    statuses = list(STATUS_COLORS)
    z: list[list[float | None]] = [[None] * len(seeds) for _ in rows]
    text: list[list[str]] = [[""] * len(seeds) for _ in rows]
    hover: list[list[str]] = [[""] * len(seeds) for _ in rows]
    for p in result.points:
        r, c = rows.index((p.level, p.map_token_budget, p.reduce_token_budget)), seeds.index(p.seed)
        z[r][c] = statuses.index(p.status) if p.status in statuses else None
        if p.failed:
            text[r][c] = f"{RunStatus.FAILED.word}<br>{html.escape(p.error_type or 'error')}"
        else:
            text[r][c] = f"{RunStatus(p.status).word}<br>{len(p.community_ids):,} behind · {calls_text(p)}"
        hover[r][c] = html.escape(_short_error(p.error)) or (
            f"{p.calls_as_if_uncached:,} model calls as if uncached, {p.model_calls:,} spent, {p.cache_hits:,} from the cache"
            f" · {p.prompt_tokens:,} prompt tokens (est.)"
        )
    n = max(len(statuses) - 1, 1)
    colorscale = []
    for i, status in enumerate(statuses):
        colorscale += [[i / len(statuses), STATUS_COLORS[status]], [(i + 1) / len(statuses), STATUS_COLORS[status]]]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[f"seed {s}" for s in seeds],
            y=row_names,
            zmin=-0.5,
            zmax=n + 0.5,
            colorscale=colorscale,
            showscale=False,
            xgap=3,
            ygap=3,
            text=text,
            texttemplate="%{text}",
            textfont={"color": "white", "size": 12},
            customdata=hover,
            hovertemplate="%{y}, %{x}<br>%{text}<br>%{customdata}<extra></extra>",
        )
    )
    fig.update_xaxes(type="category", side="top")
    fig.update_yaxes(type="category", autorange="reversed")
    height = 90 + 56 * len(rows)
    shown = sorted({p.status for p in result.points}, key=statuses.index) if result.points else []
    legend = " · ".join(f"<span style='color:{STATUS_COLORS[s]}'>■</span> {s.word}" for s in shown if s in STATUS_COLORS)
    figure = _layout(fig, f"Status of each point ({len(result.points):,} points)  {legend}", y_title="", height=height)
    figure.update_layout(margin=dict(l=40, r=20, t=80, b=20))
    return figure


def calls_text(point: SweepPoint) -> str:
    """A point's calls as it costs them, the calls spent beside when the cache answered some:
    ``142 calls`` or ``142 calls (1 spent)``."""
    calls = f"{point.calls_as_if_uncached:,} call{'s' if point.calls_as_if_uncached != 1 else ''}"
    return f"{calls} ({point.model_calls:,} spent)" if point.cache_hits else calls


def _short_error(error: str | None) -> str:
    return "" if not error else (error if len(error) <= 120 else error[:119] + "…")


def sweep_figures(result: SweepResult) -> dict[str, go.Figure]:
    """Every sweep chart by a stable key, in the order a page shows them."""
    return {
        "stability": stability_figure(result),
        "cost": cost_figure(result),
        "status": status_figure(result),
        "points": points_figure(result),
        "communities": cited_communities_figure(result),
        "tokens": tokens_figure(result),
    }


__all__ = [
    "STATUS_COLORS",
    "calls_text",
    "cited_communities_figure",
    "cost_figure",
    "level_name",
    "points_figure",
    "stability_figure",
    "status_figure",
    "sweep_figures",
    "tokens_figure",
]
