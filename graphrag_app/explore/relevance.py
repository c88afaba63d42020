"""A lazy run's relevance tests as a chart (pure: no streamlit here), from
``RunState.relevance`` alone, so a live run, a reopened run and a replay draw the same.

The chart has one bar per community tested, split by what its tests found: tests that found a
relevant chunk, tests that found none, tests that failed. Its title names what the budget
allows and what is spent ("relevance tests: 37 of 100") and what was found. Communities are
ordered as the walk met them (top level first); past :data:`MAX_COMMUNITY_BARS` the rest are
one bar, so a budget of 1,500 tests stays one chart a browser redraws twice a second.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from graphrag_core.events import RelevanceTested
from graphrag_core.lazy.state import RelevanceState
from graphrag_core.levels import level_label

from ..text import hover_paragraph, plot_text

MAX_COMMUNITY_BARS = 14
"""Communities drawn as bars of their own; the rest share the last bar."""

RELEVANCE_HEIGHT = 290
TITLE_CHARS = 40

OUTCOMES: tuple[tuple[str, str, str], ...] = (
    ("relevant", "found relevant", "#2ca05a"),
    ("nothing", "nothing relevant", "#b8bdc7"),
    ("failed", "failed", "#d63b3b"),
)
"""Each kind of test outcome: its key, its legend label, its colour (the legend and the hover name
it too: the colour is never the only signal)."""

NEXT_LABELS: dict[str, str] = {
    "opened": "relevant: its sub-communities are tested next",
    "again": "tested again with its next candidates",
    "left": "left: nothing relevant after its tries",
    "exhausted": "no untested candidate left",
    "stopped": "the budget ran out",
}
"""What the walk did with a community after its last test (events.TestNext)."""

OTHERS = "others"


@dataclass(frozen=True)
class CommunityBar:
    """One bar: a community (or the rest of them) and its tests by outcome."""

    label: str
    hover: str
    relevant: int
    nothing: int
    failed: int

    @property
    def tests(self) -> int:
        return self.relevant + self.nothing + self.failed


def _outcome(test: RelevanceTested) -> str:
    if test.failed:
        return "failed"
    return "relevant" if test.relevant_ids else "nothing"


def community_bars(relevance: RelevanceState, *, limit: int = MAX_COMMUNITY_BARS) -> list[CommunityBar]:
    """The bars of :func:`relevance_figure`: each community tested, in the order of its first
    test, its tests counted by outcome (a test is one call's worth of the budget); past ``limit``
    communities, one bar for the rest."""
    counts: dict[str, dict[str, int]] = {}
    for test in relevance.tests:
        counts.setdefault(test.community_id, {"relevant": 0, "nothing": 0, "failed": 0})[_outcome(test)] += 1
    bars = []
    ids = list(counts)
    shown, rest = (ids, []) if len(ids) <= limit else (ids[: limit - 1], ids[limit - 1 :])
    for cid in shown:
        tested = relevance.by_community.get(cid)
        known = relevance.communities.get(cid)
        title = (tested.title if tested is not None else "") or (known.title if known is not None else "")
        level = tested.level if tested is not None else (known.level if known is not None else 0)
        lines = [f"<b>community {plot_text(cid)}</b>" + (f" · {hover_paragraph(title, limit=TITLE_CHARS)}" if title else ""), level_label(level)]
        if tested is not None:
            lines.append(f"{tested.tested:,} chunks tested, {tested.relevant:,} relevant")
            if tested.last:
                lines.append(plot_text(NEXT_LABELS.get(tested.last, tested.last)))
        c = counts[cid]
        bars.append(CommunityBar(plot_text(cid), "<br>".join(lines), c["relevant"], c["nothing"], c["failed"]))
    if rest:
        total = {key: sum(counts[cid][key] for cid in rest) for key, _label, _colour in OUTCOMES}
        hover = f"<b>{len(rest):,} more communities</b><br>" + ", ".join(plot_text(cid) for cid in rest[:12]) + (" …" if len(rest) > 12 else "")
        bars.append(CommunityBar(f"{len(rest):,} {OTHERS}", hover, total["relevant"], total["nothing"], total["failed"]))
    return bars


def relevance_title(relevance: RelevanceState) -> str:
    """``Relevance tests: 37 of 100 · 12 relevant chunks in 5 communities`` (and why they ended)."""
    found = relevance.relevant_count
    places = sum(1 for tests in relevance.by_community.values() if tests.relevant)
    line = relevance.label[0].upper() + relevance.label[1:]
    line += f" · {found:,} relevant chunk{'s' if found != 1 else ''} in {places:,} communit{'ies' if places != 1 else 'y'}"
    if relevance.finished:
        line += " · budget spent" if relevance.reason == "budget" else " · nothing left to test"
    return line


def _whole_ticks(most: int) -> dict[str, object]:
    """Ticks on whole tests only, about six of them (one test must not draw 0, 0, 0, 1, 1, 1)."""
    return {"tick0": 0, "dtick": max(1, math.ceil(most / 6)), "tickformat": ",d"}


def relevance_figure(relevance: RelevanceState, *, height: int = RELEVANCE_HEIGHT) -> go.Figure:
    """The relevance tests so far, one horizontal bar per community (see the module's docstring),
    built in one constructor call (it is redrawn on every tick of a live run)."""
    bars = community_bars(relevance)
    labels = [bar.label for bar in bars]
    traces: list[go.Bar] = []
    for key, name, colour in OUTCOMES:
        values = [getattr(bar, key) for bar in bars]
        if not any(values) and key == "failed":
            continue
        traces.append(
            go.Bar(
                y=labels,
                x=values,
                orientation="h",
                name=name,
                marker={"color": colour},
                hovertext=[f"{bar.hover}<br>{name}: {value:,} of {bar.tests:,} tests" for bar, value in zip(bars, values)],
                hoverinfo="text",
            )
        )
    return go.Figure(
        data=traces,
        layout={
            "title": {"text": plot_text(relevance_title(relevance)), "font": {"size": 14}, "x": 0.0, "xanchor": "left"},
            "barmode": "stack",
            "height": height,
            "margin": {"l": 90, "r": 10, "t": 40, "b": 70},
            "xaxis": {"title": {"text": "relevance tests"}, "rangemode": "tozero", **_whole_ticks(max((bar.tests for bar in bars), default=0))},
            "yaxis": {"autorange": "reversed", "type": "category", "title": {"text": "community"}},
            "legend": {"orientation": "h", "y": -0.25, "x": 0.0, "traceorder": "normal"},
            "uirevision": "keep",
        },
    )


def subqueries_line(subqueries: Sequence[str]) -> str:
    """The subqueries the tests asked, numbered, on one line (plain text)."""
    return " · ".join(f"{n}. {q}" for n, q in enumerate(subqueries, start=1))


__all__ = ["CommunityBar", "MAX_COMMUNITY_BARS", "NEXT_LABELS", "OUTCOMES", "RELEVANCE_HEIGHT", "community_bars", "relevance_figure", "relevance_title", "subqueries_line"]
