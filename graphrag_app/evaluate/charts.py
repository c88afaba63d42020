"""Charts and tables of an evaluation as pure functions of the result (no streamlit here): the
LLM judge's win rates and costs, the choice of a condition (evaluation spec section 8), and
people's votes beside the judge's (section 9).

The win-rate heatmap follows the GraphRAG paper's figure 2: rows beat columns, the cell is the
row's mean score (100 = it always won), the colour centred on 50 (an even match), significant
cells (Holm-corrected p < 0.05) marked with a star unless the judge is a heuristic, the diagonal
the A/A check (which says in its cells that it needs two seeds when there is one). People's
heatmap is drawn as the judge's is.

:func:`choice_chart` plots, for one criterion, each condition's prompt tokens per answer (x, log
scale) against its overall win rate (y) with its 95% bootstrap interval; the conditions on the
cost-quality Pareto front are joined by a dashed line, the recommended one is a large star with
its name called out, and the even line (50) is drawn. Colours say what answers: community
summaries, source text (TS) or naive RAG (SS). A heuristic judge's chart says so in its title.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from graphrag_core.evaluation.agreement import ALL_CRITERIA, Agreement
from graphrag_core.evaluation.choice import Choice, ChoicePoint
from graphrag_core.evaluation.choice_svg import METHOD_COLORS, RECOMMENDED_COLOR
from graphrag_core.evaluation.report import paper_cost_rows, share_label, significance_mark, win_rate_matrix
from graphrag_core.evaluation.results import ExperimentResult, WinRate
from graphrag_core.methods import METHOD_WORDS, method_label

HEATMAP_COLORS = [[0.0, "#b2182b"], [0.5, "#f7f7f7"], [1.0, "#2166ac"]]


def _p(value: float | None) -> str:
    if value is None:
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def win_rate_heatmap(result: ExperimentResult, criterion: str) -> go.Figure:
    """Rows beat columns on ``criterion``; hover shows judgments, questions and p-values."""
    names, matrix = win_rate_matrix(result, criterion)
    heuristic = result.heuristic_judge
    one_seed = len(result.spec.seeds) < 2
    p_label = " (heuristic)" if heuristic else ""
    z: list[list[float | None]] = []
    text: list[list[str]] = []
    hover: list[list[str]] = []

    def unjudged(row: str, col: str) -> tuple[str, str]:
        if row == col and one_seed:
            return AA_CELL, f"{html.escape(row)} vs itself (A/A): {AA_NEEDS_SEEDS_HOVER}"
        return "", f"{html.escape(row)} vs {html.escape(col)}: not judged"

    for row, cells in zip(names, matrix):
        z.append([w.win_rate if w is not None else None for w in cells])
        text.append(
            [
                f"{w.win_rate:.0f}{significance_mark(w, heuristic=heuristic).replace('**', '*')}" if w is not None and w.win_rate is not None else unjudged(row, col)[0]
                for col, w in zip(names, cells)
            ]
        )
        hover.append(
            [
                (
                    f"<b>{html.escape(row)}</b> vs <b>{html.escape(col)}</b>{' (A/A)' if row == col else ''}<br>"
                    f"win rate {w.win_rate:.1f}<br>{w.judgments} judgments over {w.questions} questions<br>"
                    f"p{p_label} = {_p(w.p_value)}, Holm {_p(w.p_holm)}"
                )
                if w is not None and w.win_rate is not None
                else unjudged(row, col)[1]
                for col, w in zip(names, cells)
            ]
        )
    figure = go.Figure(
        go.Heatmap(
            z=z,
            x=names,
            y=names,
            text=text,
            texttemplate="%{text}",
            hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>",
            zmin=0,
            zmax=100,
            zmid=50,
            colorscale=HEATMAP_COLORS,
            colorbar=dict(title="win %"),
            xgap=2,
            ygap=2,
        )
    )
    label = f"{criterion} (heuristic)" if result.heuristic_judge else criterion
    figure.update_layout(
        title=f"{label}: row beats column",
        height=max(260, 90 + 60 * len(names)),
        margin=dict(l=40, r=20, t=50, b=40),
        xaxis=dict(title="column", type="category", side="bottom"),
        yaxis=dict(title="row", type="category", autorange="reversed"),
    )
    return figure


AA_CELL = "A/A needs<br>2 seeds"
"""What an A/A cell says when the experiment has one seed."""
AA_NEEDS_SEEDS_HOVER = "each condition is judged against itself with answers from two different seeds, and this experiment has one; run it with seeds 1, 2 (or more) to fill the diagonal."


def p_value_rows(result: ExperimentResult) -> list[dict[str, Any]]:
    """One row per criterion and unordered pair (and A/A), for a table. With a heuristic judge
    the p-values are labelled heuristic and no pair is called significant (there is no
    ``significant`` column): text statistics say nothing of which answer is better."""
    names = [c.name for c in result.spec.conditions]
    order = {n: i for i, n in enumerate(names)}
    rows = []
    for w in result.win_rates:
        if order[w.row] > order[w.col]:
            continue
        row: dict[str, Any] = {
            "criterion": w.criterion,
            "row": w.row,
            "column": w.col,
            "row win rate": None if w.win_rate is None else round(w.win_rate, 1),
            "judgments": w.judgments,
            "questions": w.questions,
        }
        if result.heuristic_judge:
            row.update({"p (heuristic)": w.p_value, "p (Holm, heuristic)": w.p_holm})
        else:
            row.update({"p": w.p_value, "p (Holm)": w.p_holm, "significant": bool(w.p_holm is not None and w.p_holm < 0.05 and w.row != w.col)})
        rows.append(row)
    return rows


def cost_rows(result: ExperimentResult) -> list[dict[str, Any]]:
    """One row per condition; a purpose a condition makes no call for (naive RAG has no map) is 0.
    The share is of TS's prompt tokens when the experiment has a ``text`` condition, else of the
    most expensive condition's."""
    purposes = list(dict.fromkeys(p for c in result.costs for p in c.calls))
    share = share_label(result.costs)
    if not share.startswith("share of") or share.endswith("(most expensive)"):
        share = "share of most expensive"
    rows = []
    for c in result.costs:
        row: dict[str, Any] = {
            "condition": c.condition, "answers": c.answers, "failed": c.failed, "unanswered": c.unanswered,
            "summaries": c.summaries, "map batches": c.batches,
        }
        for purpose in purposes:
            row[f"{purpose} calls"] = c.calls.get(purpose, 0.0)
        for purpose in purposes:
            row[f"{purpose} prompt tokens (planned)"] = round(c.prompt_tokens.get(purpose, 0.0))
        row["prompt tokens (planned)"] = round(c.total_prompt_tokens)
        row[share] = None if c.share is None else round(100 * c.share, 1)
        row["reported tokens"] = round(c.reported_tokens)
        row["cached prompt tokens (reported)"] = round(c.cached_tokens)
        rows.append(row)
    return rows


def cost_chart(result: ExperimentResult) -> go.Figure:
    """Prompt tokens per answer, by purpose, stacked per condition."""
    names = [c.condition for c in result.costs]
    purposes = list(dict.fromkeys(p for c in result.costs for p in c.prompt_tokens))
    figure = go.Figure([go.Bar(name=p, x=names, y=[c.prompt_tokens.get(p, 0.0) for c in result.costs]) for p in purposes])
    figure.update_layout(barmode="stack", title="Prompt tokens per answer", height=300, margin=dict(l=40, r=20, t=50, b=40), xaxis=dict(type="category"))
    return figure


# -- the choice of a condition ------------------------------------------------------------------


PARETO_COLOR = "#555555"


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


# -- people beside the judge ---------------------------------------------------------------------


def people_heatmap(result: ExperimentResult, people: Sequence[WinRate], criterion: str) -> go.Figure:
    """People's win rates on ``criterion`` (:func:`~graphrag_core.evaluation.agreement.people_win_rates`)
    as the LLM judge's heatmap draws its own: rows beat columns, the same colours and scale."""
    theirs = result.model_copy(update={"win_rates": list(people), "heuristic_judge": False})
    figure = win_rate_heatmap(theirs, criterion)
    figure.update_layout(title=f"{criterion}: row beats column, by people")
    return figure


def agreement_chart(rows: Sequence[Agreement]) -> go.Figure:
    """Cohen's kappa per criterion: people against the LLM judge, and people with each other
    (a bar per comparison; undefined kappas left out; the pooled row last)."""
    criteria = list(dict.fromkeys(a.criterion for a in rows))
    figure = go.Figure(
        [
            go.Bar(
                name=between,
                x=criteria,
                y=[next((a.kappa for a in rows if a.criterion == c and a.between == between), None) for c in criteria],
                text=[next((f"{a.kappa:.2f}" for a in rows if a.criterion == c and a.between == between and a.kappa is not None), "") for c in criteria],
                customdata=[next((a.items for a in rows if a.criterion == c and a.between == between), 0) for c in criteria],
                hovertemplate="%{x}: kappa %{y:.2f} over %{customdata} pairs<extra>%{fullData.name}</extra>",
                textposition="outside",
                cliponaxis=False,
            )
            for between in dict.fromkeys(a.between for a in rows)
        ]
    )
    figure.add_hline(y=0, line_width=1, line_color="#888")
    figure.update_layout(
        title="Cohen's kappa (1 = always agree)",
        barmode="group",
        height=300,
        margin=dict(l=40, r=20, t=50, b=40),
        yaxis=dict(range=[-1, 1], title="kappa"),
        xaxis=dict(type="category", categoryorder="array", categoryarray=[c for c in criteria if c != ALL_CRITERIA] + [ALL_CRITERIA]),
        legend=dict(orientation="h", y=-0.2),
    )
    return figure
