"""The walk of a dynamic community selection, drawn on the hierarchy (pure: state in, figure out).

A sunburst of every community (roots in the middle, each ring a level), coloured by what the
walk did with it so far: queued for rating, kept, pruned, superseded by a relevant child,
skipped (blank summary), failed, or never reached. Drawn from ``RunState.selection`` alone, so
a live run and a replayed one look the same. Sector sizes count descendant leaves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from graphrag_core.levels import level_label
from graphrag_core.state import RunState, SelectionState

from ..text import hover_paragraph, plot_text

if TYPE_CHECKING:
    import pandas as pd  # imported where a table is built: a page that draws none does not load it

WALK_COLORS: dict[str, str] = {
    "queued": "#f5c04a",
    "kept": "#2ca05a",
    "pruned": "#b9bec8",
    "superseded": "#8fb8f0",
    "skipped": "#eceef2",
    "failed": "#d63b3b",
    "unreached": "#ffffff",
}
WALK_LABELS: dict[str, str] = {
    "queued": "being rated",
    "kept": "kept (the map reads it)",
    "pruned": "pruned (rated below the threshold)",
    "superseded": "replaced by its children",
    "skipped": "skipped (blank summary)",
    "failed": "failed (kept)",
    "unreached": "never reached",
}
HIERARCHY_HEIGHT = 520
TITLE_CHARS = 40


def _rating_text(selection: SelectionState, community_id: str) -> str:
    event = selection.ratings.get(community_id)
    if event is None:
        return "not rated"
    if event.failed:
        errors = "; ".join(event.errors) or "every repeat failed"
        return f"rating failed: {hover_paragraph(errors, limit=200)}"
    repeats = ", ".join("failed" if r is None else str(r) for r in event.repeat_ratings)
    text = f"rating {event.rating}" + (f" (repeats: {repeats})" if len(event.repeat_ratings) > 1 else "")
    text += f" · round {event.round}"
    if event.reason:
        text += f"<br>reason: {hover_paragraph(event.reason, limit=240)}"
    return text


def walk_line(state: RunState, community_id: str) -> str | None:
    """One community's part in a run's dynamic selection, as a plain line (None for a fixed level)."""
    selection = state.selection
    if not selection.active:
        return None
    fate = selection.fate_of(community_id)
    event = selection.ratings.get(community_id)
    if event is None:
        return WALK_LABELS[fate]
    rating = "every rating call failed" if event.failed else f"rated {event.rating} of 5"
    repeats = f" (repeats: {', '.join('failed' if r is None else str(r) for r in event.repeat_ratings)})" if len(event.repeat_ratings) > 1 else ""
    return f"{WALK_LABELS[fate]}: {rating}{repeats} in round {event.round}, threshold {selection.rating_threshold}"


def walk_table(state: RunState) -> pd.DataFrame:
    """One row per community of the hierarchy: id, level, title, fate, rating, round, reason."""
    import pandas as pd

    selection = state.selection
    rows = []
    for node in selection.hierarchy:
        event = selection.ratings.get(node.id)
        rows.append(
            {
                "community": node.id,
                "level": node.level,
                "title": node.title,
                "fate": selection.fate_of(node.id),
                "rating": None if event is None or event.failed else event.rating,
                "repeats": "" if event is None else ", ".join("failed" if r is None else str(r) for r in event.repeat_ratings),
                "round": None if event is None else event.round,
                "reason": "" if event is None or not event.reason else event.reason,
            }
        )
    return pd.DataFrame(rows, columns=["community", "level", "title", "fate", "rating", "repeats", "round", "reason"])


def hierarchy_figure(state: RunState) -> go.Figure:
    """The sunburst of the walk so far (an empty figure before the selection starts)."""
    selection = state.selection
    nodes = selection.hierarchy
    fig = go.Figure()
    if not nodes:
        return fig
    fates = [selection.fate_of(node.id) for node in nodes]
    hover = []
    for node, fate in zip(nodes, fates):
        title = f" · {hover_paragraph(node.title, limit=TITLE_CHARS)}" if node.title else ""
        hover.append(
            f"<b>community {plot_text(node.id)}</b>{title}<br>{level_label(node.level)} · {WALK_LABELS[fate]}<br>{_rating_text(selection, node.id)}"
        )
    fig.add_trace(
        go.Sunburst(
            ids=[node.id for node in nodes],
            parents=[node.parent_id or "" for node in nodes],
            labels=[plot_text(node.id) for node in nodes],
            marker={"colors": [WALK_COLORS[f] for f in fates], "line": {"color": "#5f6570", "width": 0.6}},
            hovertext=hover,
            hoverinfo="text",
            insidetextorientation="radial",
            maxdepth=-1,
        )
    )
    # A legend: one invisible marker per fate present (sunbursts have no legend of their own).
    for fate in WALK_COLORS:
        count = fates.count(fate)
        if count:
            fig.add_trace(
                go.Scatter(
                    x=[None],
                    y=[None],
                    mode="markers",
                    marker={"size": 11, "color": WALK_COLORS[fate], "line": {"color": "#5f6570", "width": 1}},
                    name=f"{WALK_LABELS[fate]}: {count}",
                    showlegend=True,
                )
            )
    round_text = f" · round {selection.round}" if selection.round is not None else ""
    done = "" if selection.finished else " (rating…)"
    fig.update_layout(
        title={"text": f"Dynamic selection: {selection.rated_count} rated, {len(selection.kept_ids) if selection.finished else fates.count('kept') + fates.count('failed')} kept{round_text}{done}", "font": {"size": 14}},
        height=HIERARCHY_HEIGHT,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        xaxis={"visible": False},
        yaxis={"visible": False},
        plot_bgcolor="rgba(0,0,0,0)",
        legend={"orientation": "v", "x": 1.0, "xanchor": "right", "y": 0.5},
        uirevision="keep",
    )
    return fig


__all__ = ["WALK_COLORS", "WALK_LABELS", "hierarchy_figure", "walk_line", "walk_table"]
