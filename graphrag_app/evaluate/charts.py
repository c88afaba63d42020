"""Charts and tables of an evaluation as pure functions of the result (no streamlit here).

The win-rate heatmap follows the GraphRAG paper's figure 2: rows beat columns, the cell is the
row's mean score (100 = it always won), the colour centred on 50 (an even match), significant
cells (Holm-corrected p < 0.05) marked with a star unless the judge is a heuristic, the diagonal
the A/A check (which says in its cells that it needs two seeds when there is one).
"""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go

from graphrag_core.evaluation.results import ExperimentResult
from graphrag_core.evaluation.report import share_label, significance_mark, win_rate_matrix

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


__all__ = ["AA_CELL", "AA_NEEDS_SEEDS_HOVER", "cost_chart", "cost_rows", "p_value_rows", "win_rate_heatmap"]
