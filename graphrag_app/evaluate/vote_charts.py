"""People's votes as charts (pure functions, no streamlit): their win-rate heatmap, drawn as the
LLM judge's is, and Cohen's kappa per criterion."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from graphrag_core.evaluation.agreement import ALL_CRITERIA, Agreement
from graphrag_core.evaluation.results import ExperimentResult, WinRate

from .charts import win_rate_heatmap


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


__all__ = ["agreement_chart", "people_heatmap"]
