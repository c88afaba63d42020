"""The choice of a condition as pure figures and tables (evaluation spec section 8; no streamlit).

:func:`choice_chart` plots, for one criterion, each condition's prompt tokens per answer (x, log
scale) against its overall win rate (y) with its 95% bootstrap interval; the conditions on the
cost-quality Pareto front are joined by a dashed line, the recommended one is a large star with
its name called out, and the even line (50) is drawn. Colours say what answers: community
summaries, source text (TS) or naive RAG (SS). A heuristic judge's chart says so in its title.
"""

from __future__ import annotations

import html
import math
from typing import Any

import plotly.graph_objects as go

from graphrag_core.evaluation.choice import Choice, ChoicePoint
from graphrag_core.evaluation.choice_svg import METHOD_COLORS, RECOMMENDED_COLOR
from graphrag_core.evaluation.report import paper_cost_rows, share_label
from graphrag_core.evaluation.results import ExperimentResult
from graphrag_core.methods import METHOD_WORDS, method_label

PARETO_COLOR = "#555555"


def _p(value: float | None) -> str:
    if value is None:
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _hover(point: ChoicePoint) -> str:
    lines = [
        f"<b>{html.escape(point.condition)}</b> · {html.escape(METHOD_WORDS.get(point.method, point.method))}",
        f"overall win rate {point.win_rate:.1f} (95% CI {point.ci_low:.1f}–{point.ci_high:.1f})" if point.win_rate is not None and point.ci_low is not None and point.ci_high is not None else "not judged",
        f"{point.prompt_tokens_per_answer:,.0f} prompt tokens per answer" if point.prompt_tokens_per_answer is not None else "",
        f"{point.judgments} scores against the other conditions",
    ]
    if point.best:
        lines.append("best win rate")
    elif point.p_vs_best is not None:
        lines.append(f"against the best: Holm p = {_p(point.p_vs_best)}" + (" (significantly below)" if point.below_best else ""))
    if point.pareto:
        lines.append("on the Pareto front")
    if point.recommended:
        lines.append("<b>recommended</b>")
    return "<br>".join(line for line in lines if line)


def choice_chart(choice: Choice) -> go.Figure:
    """Cost against quality on one criterion (see the module docstring)."""
    plotted = [p for p in choice.points if p.win_rate is not None and p.prompt_tokens_per_answer]
    figure = go.Figure()
    for method in METHOD_COLORS:
        points = [p for p in plotted if p.method == method and not p.recommended]
        if not points:
            continue
        figure.add_trace(
            go.Scatter(
                x=[p.prompt_tokens_per_answer for p in points],
                y=[p.win_rate for p in points],
                error_y=dict(
                    type="data", symmetric=False, thickness=1.5, width=5,
                    array=[(p.ci_high or 0) - (p.win_rate or 0) for p in points],
                    arrayminus=[(p.win_rate or 0) - (p.ci_low or 0) for p in points],
                ),
                mode="markers+text",
                text=[p.condition for p in points],
                textposition="middle right",
                marker=dict(size=13, color=METHOD_COLORS[method], line=dict(width=1, color="white")),
                name=METHOD_WORDS[method],
                hovertext=[_hover(p) for p in points],
                hovertemplate="%{hovertext}<extra></extra>",
            )
        )
    front = sorted((p for p in plotted if p.pareto), key=lambda p: p.prompt_tokens_per_answer or 0)
    if len(front) > 1:
        figure.add_trace(
            go.Scatter(
                x=[p.prompt_tokens_per_answer for p in front], y=[p.win_rate for p in front], mode="lines",
                line=dict(color=PARETO_COLOR, dash="dash", width=1.5), name="Pareto front", hoverinfo="skip",
            )
        )
    chosen = next((p for p in plotted if p.recommended), None)
    if chosen is not None:
        figure.add_trace(
            go.Scatter(
                x=[chosen.prompt_tokens_per_answer], y=[chosen.win_rate],
                error_y=dict(type="data", symmetric=False, array=[(chosen.ci_high or 0) - (chosen.win_rate or 0)],
                             arrayminus=[(chosen.win_rate or 0) - (chosen.ci_low or 0)], thickness=1.5, width=5),
                mode="markers+text", text=[chosen.condition], textposition="top right",  # above the star, not under it
                marker=dict(size=24, symbol="star", color=RECOMMENDED_COLOR, line=dict(width=1.5, color=METHOD_COLORS.get(chosen.method, "#333"))),
                name=f"recommended: {chosen.condition}",
                hovertext=[_hover(chosen)], hovertemplate="%{hovertext}<extra></extra>",
            )
        )
    figure.add_hline(y=50, line=dict(color="#999999", width=1, dash="dot"), annotation_text="even (50)", annotation_position="bottom left")
    label = f"{choice.criterion} (heuristic judge)" if choice.heuristic else choice.criterion
    figure.update_layout(
        title=dict(text=f"Which condition? {html.escape(label)}: cost against quality"),
        height=460,
        margin=dict(l=60, r=30, t=60, b=60),
        xaxis=dict(type="log", title="prompt tokens per answer (log scale)", showgrid=True, range=_x_range(plotted)),
        yaxis=dict(title="overall win rate (95% CI)", range=[-5, 105], showgrid=True),
        legend=dict(orientation="h", yanchor="top", y=-0.18, x=0),
    )
    return figure


def _x_range(points: list[ChoicePoint]) -> list[float] | None:
    """The log axis' range: every point, with room on the right for the label beside the last."""
    xs = [math.log10(p.prompt_tokens_per_answer) for p in points if p.prompt_tokens_per_answer]
    if not xs:
        return None
    span = max(max(xs) - min(xs), 0.3)
    return [min(xs) - 0.08 * span, max(xs) + LABEL_ROOM * span]


LABEL_ROOM = 0.22
"""Room after the right-most point, as a share of the axis' span: its label ("dynamic") fits."""


def choice_rows(choices: list[Choice]) -> list[dict[str, Any]]:
    """One row per criterion and condition, for a table."""
    rows = []
    for choice in choices:
        for p in choice.points:
            rows.append(
                {
                    "criterion": p.criterion,
                    "condition": p.condition,
                    "method": method_label(p.method),
                    "prompt tokens per answer": None if p.prompt_tokens_per_answer is None else round(p.prompt_tokens_per_answer),
                    "overall win rate": None if p.win_rate is None else round(p.win_rate, 1),
                    "95% CI": "–" if p.ci_low is None or p.ci_high is None else f"{p.ci_low:.1f}–{p.ci_high:.1f}",
                    "Pareto front": p.pareto,
                    "recommended": p.recommended,
                }
            )
    return rows


def paper_cost_table(result: ExperimentResult) -> list[dict[str, Any]]:
    """The cost table in the paper's form (Table 2): units read, prompt tokens per answer, share."""
    share = share_label(result.costs)
    return [
        {"condition": row[0], "method": row[1], "units read per answer": row[2], "prompt tokens per answer": row[3], share: row[4]}
        for row in paper_cost_rows(result)
    ]


__all__ = ["METHOD_COLORS", "choice_chart", "choice_rows", "paper_cost_table"]
