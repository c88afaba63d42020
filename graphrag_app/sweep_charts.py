"""Charts of a sweep as pure functions ``figure(result) -> go.Figure`` (no streamlit here).

Each figure reads a :class:`~graphrag_core.sweep.SweepResult` alone. Levels are drawn as
categories in the sweep's own order ("leaf" first when it was listed first), so a level axis
never interpolates between levels. Failed points are left out of the measures and counted in
their own chart, so a failure never reads as "zero tokens" or "zero communities".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import plotly.graph_objects as go

from graphrag_core.sweep import Level, SweepPoint, SweepResult

STATUS_COLORS: dict[str, str] = {
    "completed": "#2ca05a",
    "partial": "#f0a030",
    "no_results": "#9aa0aa",
    "failed": "#d63b3b",
}
CHART_HEIGHT = 320


def _level_label(level: Level) -> str:
    return str(level) if level == "leaf" else f"level {level}"


def _budget_label(point: SweepPoint) -> str:
    return f"map {point.map_token_budget} / reduce {point.reduce_token_budget}"


def _layout(figure: go.Figure, title: str, *, y_title: str) -> go.Figure:
    figure.update_layout(
        title=title,
        height=CHART_HEIGHT,
        margin=dict(l=40, r=20, t=50, b=40),
        yaxis_title=y_title,
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1),
    )
    return figure


def _categories(result: SweepResult) -> list[str]:
    return [_level_label(level) for level in result.spec.levels]


def stability_figure(result: SweepResult) -> go.Figure:
    """Mean pairwise Jaccard similarity of the cited communities across seeds, per level
    (1 = every seed cited the same communities). Levels with fewer than two comparable points
    show no bar and say so in the hover text."""
    stability = result.stability_by_level()
    levels = list(result.spec.levels)
    values = [stability.get(level) for level in levels]
    figure = go.Figure(
        go.Bar(
            x=[_level_label(level) for level in levels],
            y=[v if v is not None else 0 for v in values],
            text=[f"{v:.2f}" if v is not None else "n/a" for v in values],
            textposition="outside",
            marker_color=["#4c8bf5" if v is not None else "#d0d4dc" for v in values],
            hovertext=[
                f"{_level_label(level)}: {v:.3f}" if v is not None else f"{_level_label(level)}: fewer than two comparable points"
                for level, v in zip(levels, values)
            ],
            hoverinfo="text",
            name="stability",
        )
    )
    figure.update_yaxes(range=[0, 1.1])
    return _layout(figure, "Stability of the cited communities across seeds", y_title="mean Jaccard similarity")


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
                x=[_level_label(p.level) for p in points],
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
    return _strip_figure(result, lambda p: len(p.community_ids), "Communities behind the answer", "communities cited")


def status_figure(result: SweepResult) -> go.Figure:
    """How each level's points ended: completed, partial, no_results or failed (stacked counts)."""
    categories = _categories(result)
    figure = go.Figure()
    for status, color in STATUS_COLORS.items():
        counts = [sum(1 for p in result.points_at(level) if p.status == status) for level in result.spec.levels]
        if any(counts):
            figure.add_trace(go.Bar(x=categories, y=counts, name=status, marker_color=color))
    figure.update_layout(barmode="stack")
    return _layout(figure, "Outcome of each grid point", y_title="points")


def sweep_figures(result: SweepResult) -> dict[str, go.Figure]:
    """Every sweep chart by a stable key, in the order a page shows them."""
    return {
        "stability": stability_figure(result),
        "status": status_figure(result),
        "communities": cited_communities_figure(result),
        "tokens": tokens_figure(result),
    }


__all__ = [
    "STATUS_COLORS",
    "cited_communities_figure",
    "stability_figure",
    "status_figure",
    "sweep_figures",
    "tokens_figure",
]
