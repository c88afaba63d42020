"""Pieces that several charts draw the same way (no streamlit here)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

BATCHES_COLOR = "#4c8bf5"
MODEL_CALLS_COLOR = "#8e7cc3"
SPENT_CALLS_COLOR = "#c9bfe3"
"""Calls actually spent, drawn lighter beside the calls as if uncached (what comparisons use)."""
PROMPT_TOKENS_NAME = "prompt tokens (est.)"


def add_prompt_tokens_axis(
    fig: go.Figure,
    x: Sequence[str],
    tokens: Sequence[float],
    *,
    hovertemplate: str,
    customdata: Sequence[Sequence[object]] | None = None,
    lines: bool = False,
    size: int = 12,
    count_title: str | None = None,
) -> go.Figure:
    """Prompt tokens as dark diamonds on a right-hand axis over grouped count bars (both axes
    from zero), as the cost charts of Compare and Sweeps draw them."""
    fig.add_trace(
        go.Scatter(
            name=PROMPT_TOKENS_NAME,
            x=list(x),
            y=list(tokens),
            mode="markers+lines" if lines else "markers",
            marker={"symbol": "diamond", "size": size, "color": "#333"},
            yaxis="y2",
            customdata=None if customdata is None else [list(row) for row in customdata],
            hovertemplate=hovertemplate,
        )
    )
    count_axis: dict[str, object] = {"rangemode": "tozero"}
    if count_title is not None:
        count_axis["title"] = {"text": count_title}
    fig.update_layout(
        barmode="group",
        yaxis=count_axis,
        yaxis2={"title": {"text": "prompt tokens"}, "overlaying": "y", "side": "right", "rangemode": "tozero", "showgrid": False},
    )
    return fig
