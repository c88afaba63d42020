"""Charts of a run as pure functions ``figure(state) -> go.Figure`` (no streamlit here).

Each figure is drawn from a :class:`~graphrag_core.state.RunState` alone, so a live run, a
reopened run and a test draw the same thing. One trace per category (not per bar) keeps a
1,000-batch run cheap to redraw, and the live charts (:func:`usefulness_figure`,
:func:`timeline_figure`, and :func:`reduce_figure` while the reduce runs) are built in one
constructor call from plain data (no per-redraw ``update_layout`` or subplot grid): they are
redrawn twice a second while a run streams. The live charts' margins are fixed (no axis
``automargin``): a chart whose margins move to fit its labels is laid out twice by Plotly, on
every drawing. Legends sit under the plot, clear of the title and of the chart's toolbar.

The walk of a dynamic community selection is drawn on the hierarchy (:func:`hierarchy_figure`): a
sunburst of every community (roots in the middle, each ring a level), coloured by what the walk
did with it so far (queued for rating, kept, pruned, superseded by a relevant child, skipped for
a blank summary, failed, or never reached), from ``RunState.selection`` alone, so a live run and
a replayed one look the same. Sector sizes count descendant leaves.

Why this module is long: every figure of a run, live and finished, shares one layout (title
lines, fixed margins, the legend under the plot) and one palette of states; apart, the live
view's charts and the finished run's would drift from each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from graphrag_core.events import ReduceReplied, ReduceStarted
from graphrag_core.levels import level_label
from graphrag_core.state import BatchState, BatchStatus, CallOutcome, CallSpan, RunState, SelectionState

from ..text import FATE_LABELS, WALK_LABELS, hover_paragraph, plot_text

if TYPE_CHECKING:
    import pandas as pd  # imported where a table is built: a page that draws none does not load it

BATCH_COLORS: dict[str, str] = {
    "pending": "#d0d4dc",
    "running": "#4c8bf5",
    "done": "#2ca05a",
    "retried": "#f0a030",
    "failed": "#d63b3b",
    "cancelled": "#7a7f8a",
}
CALL_COLORS: dict[str, str] = {
    "running": "#4c8bf5",
    "ok": "#2ca05a",
    "cached": "#8e7cc3",
    "error": "#d63b3b",
    "cancelled": "#7a7f8a",
}
FATE_COLORS: dict[str, str] = {
    "selected": "#2ca05a",
    "skipped": "#f0a030",
    "not_tried": "#9aa0aa",
    "dropped": "#e8a0a0",
}
HOVER_IDS_MAX = 12
ZERO_SCORE_HEIGHT = 1.5
CHART_HEIGHT = 300


def short_ids(ids: Sequence[str], limit: int = HOVER_IDS_MAX) -> str:
    """``"1, 2, 3"``, cut to ``limit`` ids with a count of the rest (raw text: escape it for
    the place it is shown)."""
    shown = ", ".join(ids[:limit])
    return shown if len(ids) <= limit else f"{shown}, … (+{len(ids) - limit})"


LEGEND_BELOW = {"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.0, "xanchor": "left", "x": 0.0, "font": {"size": 11}}
"""A horizontal legend at the foot of the figure, under the x axis title: never over the chart's
title, its axis titles or its toolbar."""


TITLE_LINE_CHARS = 66
"""The most characters a chart's title puts on one line: a live chart is half of a 1280 px
page (about 385 px for its title), where a 14 px title line of about 70 characters (5.5 px
each) is cut by its chart."""
TITLE_TOP_PX = 36
"""The top margin that holds a one-line title."""
TITLE_LINE_PX = 18
"""The top margin each further line of a title adds (a 14 px line)."""
TITLE_FIRST_LINE_PX = 15
"""How far below the figure's top a title's first line is centred."""


def wrapped_title(first: str, *rest: tuple[str, str]) -> str:
    """``first``, then each ``(separator, part)`` of ``rest`` on the same line while the line
    stays within :data:`TITLE_LINE_CHARS`, else on a line of its own (``<br>``, the separator
    dropped). Each part stays whole."""
    lines = [first]
    for separator, part in rest:
        if len(lines[-1]) + len(separator) + len(part) <= TITLE_LINE_CHARS:
            lines[-1] += separator + part
        else:
            lines.append(part)
    return "<br>".join(lines)


def title_top(title: str) -> int:
    """The top margin a chart needs for ``title`` (a line break is ``<br>``)."""
    return TITLE_TOP_PX + TITLE_LINE_PX * title.count("<br>")


def _title_place(title: str, height: int) -> dict[str, object]:
    """Where a title goes: a line at the top of the figure; a wrapped one (which Plotly, anchored
    at its top, moves up out of the figure) centred so that its first line is where a one-line
    title's is."""
    breaks = title.count("<br>")
    if not breaks:
        return {"y": 0.98, "yanchor": "top"}
    centre = TITLE_FIRST_LINE_PX + TITLE_LINE_PX * breaks / 2
    return {"y": 1 - centre / height, "yanchor": "middle"}


def _layout_dict(title: str, *, height: int = CHART_HEIGHT, top: int | None = None) -> dict[str, object]:
    return {
        "title": {"text": title, "font": {"size": 14}, "x": 0.0, "xanchor": "left", **_title_place(title, height)},
        "height": height,
        "margin": {"l": 50, "r": 20, "t": max(title_top(title), top or 0), "b": 92},
        "legend": LEGEND_BELOW,
        "bargap": 0.1,
        "uirevision": "keep",  # keeps zoom and legend toggles across live redraws
    }


NO_SCORE_Y = -8.0
"""Where failed and cancelled batches are drawn: a lane below 0, so they never read as a score."""


def _integer_axis(count: int) -> dict[str, object]:
    """Ticks on whole positions only (one batch must not draw an axis of -0.4 ... 0.4)."""
    if count <= 12:
        return {"tickmode": "array", "tickvals": list(range(count))}
    return {"tickformat": "d"}


def usefulness_figure(state: RunState, *, height: int = CHART_HEIGHT, top: int | None = None) -> go.Figure:
    """Per-batch usefulness, coloured by state. Pending and running batches are faint slots;
    failed and cancelled batches are marks in a "no score" lane below 0, never bars. ``top``:
    a top margin to share with the chart beside it (whose title may take two lines)."""
    by_status: dict[str, list[BatchState]] = {status: [] for status in BATCH_COLORS}
    for batch in state.batches:
        by_status[batch.status].append(batch)
    traces: list[dict[str, object]] = []
    for status, batches in by_status.items():
        if not batches:
            continue
        scored = BatchStatus(status).succeeded
        unscored_end = status in (BatchStatus.FAILED, BatchStatus.CANCELLED)
        customdata = [
            [plot_text(short_ids(b.community_ids)), b.attempts, "-" if b.usefulness is None else f"{b.usefulness:g}", f"{b.token_estimate:,}", plot_text((b.errors[-1] if b.errors else "")[:160])]
            for b in batches
        ]
        hover = (
            "Batch %{x} (" + BatchStatus(status).word + ")<br>Usefulness: %{customdata[2]}<br>Attempts: %{customdata[1]}"
            "<br>Prompt tokens: %{customdata[3]}<br>Communities: %{customdata[0]}"
            + ("<br>Error: %{customdata[4]}" if status == BatchStatus.FAILED else "")
            + "<extra></extra>"
        )
        x = [b.index for b in batches]
        if unscored_end:
            marker = {"color": BATCH_COLORS[status], "symbol": "x" if status == BatchStatus.FAILED else "square", "size": 9}
            traces.append({"type": "scatter", "name": f"{BatchStatus(status).word} (no score)", "x": x, "y": [NO_SCORE_Y] * len(batches), "mode": "markers", "marker": marker, "customdata": customdata, "hovertemplate": hover})
            continue
        # a score of 0 still shows as a sliver; the hover gives the true score
        y = [max(b.usefulness or 0.0, ZERO_SCORE_HEIGHT) if scored else 100.0 for b in batches]
        marker = {"color": BATCH_COLORS[status], "opacity": 1.0 if scored else 0.25}
        traces.append({"type": "bar", "name": BatchStatus(status).word, "x": x, "y": y, "marker": marker, "customdata": customdata, "hovertemplate": hover})
    count = len(state.batches)
    layout = _layout_dict(f"Map batches: {state.finished_batches:,} of {count:,} finished", height=height, top=top)
    layout["xaxis"] = {"automargin": False, "title": {"text": "map batch"}, "range": [-0.5, max(count, 1) - 0.5], **_integer_axis(count)}
    layout["yaxis"] = {"automargin": False, "title": {"text": "usefulness"}, "range": [NO_SCORE_Y - 6, 100], "tickvals": [0, 20, 40, 60, 80, 100]}
    if any(b.status in (BatchStatus.FAILED, BatchStatus.CANCELLED) for b in state.batches):
        layout["shapes"] = [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": 0, "y1": 0, "line": {"color": "#9aa0aa", "width": 1}}]
    return go.Figure(data=traces, layout=layout)


def call_lanes(calls: Sequence[CallSpan], now: float, *, limit: int | None = None) -> list[int]:
    """A lane for each call such that calls in one lane never overlap (greedy interval colouring).

    The number of lanes used is the peak number of calls in flight. With ``limit`` (the run's
    concurrency, which the engine never exceeds) a call that finds every lane taken takes the lane
    of the running call that started first: that call's end has not been folded yet (a slot goes
    to the next call a moment before the end of the last is reported), so it never reads as more
    calls in flight than the limit.
    """
    order = sorted(range(len(calls)), key=lambda i: (calls[i].start, calls[i].batch_index))
    lane_free: list[float] = []
    occupant: list[int] = []
    lanes = [0] * len(calls)
    for i in order:
        span = calls[i]
        end = span.end if span.end is not None else now
        free = next((lane for lane, free_at in enumerate(lane_free) if free_at <= span.start), None)
        if free is None and limit is not None and len(lane_free) >= limit:
            running = [lane for lane in range(len(lane_free)) if calls[occupant[lane]].end is None]
            free = min(running, key=lambda lane: calls[occupant[lane]].start, default=None)
        if free is None:
            free = len(lane_free)
            lane_free.append(end)
            occupant.append(i)
        lanes[i], lane_free[free], occupant[free] = free, end, i
    return lanes


CALL_WORDS: dict[str, str] = {"ok": "map", "error": "map (failed)", "cached": "from the cache", "cancelled": "stopped"}
"""What the timeline's legend calls each kind of bar: a map call by its outcome (a stopped one
reads "stopped", as a stopped run does), a rating or the reduce by its name."""
RATING_COLOR = "#17becf"
REDUCE_COLOR = "#1f5f99"
UNTIMED_S = 0.002
"""The width of a call whose start a run recorded before calls were timed (a tick at its end)."""


@dataclass(frozen=True)
class _Drawn:
    """A call on the timeline: what it was (``kind``), its trace, its hover text and its span."""

    kind: str
    trace: str
    hover: str
    span: CallSpan


def _rating_calls(state: RunState) -> list[_Drawn]:
    """Dynamic selection's rating calls, one bar per community rated by the model (its repeats
    together), and a cache mark per community the cache answered."""
    drawn = []
    for position, event in enumerate(state.selection.ratings.values()):
        where = f"community {plot_text(event.community_id)}"
        if event.calls:
            start = event.started_at if event.started_at is not None else event.at - UNTIMED_S
            outcome = CallOutcome.ERROR if event.failed else CallOutcome.OK
            rating = "failed" if event.failed else f"rated {event.rating}"
            hover = f"Rating of {where}: {rating}, {event.calls} call{'s' if event.calls != 1 else ''}"
            drawn.append(_Drawn("rating", "rating failed" if event.failed else "rating", hover, CallSpan(-1 - position, 1, start, event.at, outcome)))
        elif event.cache_hits:
            hover = f"Rating of {where}: rated {event.rating}, from the cache"
            drawn.append(_Drawn("rating", "cached", hover, CallSpan(-1 - position, 1, event.at, event.at, CallOutcome.CACHED)))
    return drawn


def _reduce_calls(state: RunState) -> list[_Drawn]:
    """The reduce's attempts, from each start to its reply (or to now while it runs)."""
    drawn: list[_Drawn] = []
    starts: dict[int, float] = {}
    for event in state.events:
        if isinstance(event, ReduceStarted):
            starts[event.attempt] = event.at
        elif isinstance(event, ReduceReplied) and event.attempt in starts:
            outcome = CallOutcome.ERROR if event.error else CallOutcome.OK
            span = CallSpan(10**9 + event.attempt, event.attempt, starts.pop(event.attempt), event.at, outcome)
            drawn.append(_Drawn("reduce", "reduce", f"Reduce, attempt {event.attempt}" + (" (did not parse)" if event.error else ""), span))
    running = state.status is None or not state.status.ended
    for attempt, start in starts.items():  # still running, or cut short when the run stopped
        outcome = CallOutcome.RUNNING if running else CallOutcome.CANCELLED
        span = CallSpan(10**9 + attempt, attempt, start, None if running else state.elapsed_s, outcome)
        drawn.append(_Drawn("reduce", "reduce", f"Reduce, attempt {attempt}" + ("" if running else " (stopped)"), span))
    return drawn


def _drawn_ends(calls: Sequence[CallSpan], lanes: Sequence[int], now: float) -> list[float]:
    """Where each call's bar ends: its end, else now, else (a running call whose lane a later call
    took, see :func:`call_lanes`) where that call starts."""
    ends = [span.end if span.end is not None else now for span in calls]
    by_lane: dict[int, list[int]] = {}
    for i in sorted(range(len(calls)), key=lambda i: calls[i].start):
        by_lane.setdefault(lanes[i], []).append(i)
    for members in by_lane.values():
        for here, after in zip(members, members[1:]):
            if calls[here].end is None:
                ends[here] = min(ends[here], calls[after].start)
    return ends


def timeline_figure(state: RunState, *, height: int = CHART_HEIGHT) -> go.Figure:
    """Each model call of the run as a bar on the run's clock, one row per call in flight: the
    ratings of a dynamic selection, the map batches' attempts and the reduce, so the title's
    count is the run's model calls (what Diagnostics counts).

    Batches and ratings answered from the map cache are no calls: they hold no slot, so they are
    drawn in a row of their own (``cache``) and not counted in flight. A title too long for one
    line of a half-page chart goes on in a second (:func:`wrapped_title`)."""
    now = state.elapsed_s
    drawn = _rating_calls(state)
    drawn += [_Drawn("map", span.outcome, f"Batch {span.batch_index}, attempt {span.attempt}", span) for span in state.calls]
    drawn += _reduce_calls(state)
    calls = [d for d in drawn if d.span.outcome != CallOutcome.CACHED]
    cached = [d for d in drawn if d.span.outcome == CallOutcome.CACHED]
    # the request's limit bounds the ratings and the map alike (the map plans at most one slot per batch)
    limit = state.request.map_concurrency if state.request is not None else state.concurrency
    lanes = call_lanes([d.span for d in calls], now, limit=limit)
    ends = _drawn_ends([d.span for d in calls], lanes, now) + [d.span.end if d.span.end is not None else now for d in cached]
    rows = [(d, lane + 1, end) for d, lane, end in zip(calls + cached, lanes + [-1] * len(cached), ends)]
    colors = {**CALL_COLORS, "rating": RATING_COLOR, "rating failed": CALL_COLORS["error"], "reduce": REDUCE_COLOR}
    traces: list[dict[str, object]] = []
    for trace, color in colors.items():
        picked = [(d, row, end) for d, row, end in rows if d.trace == trace]
        if not picked:
            continue
        word = CALL_WORDS.get(trace, trace)
        traces.append(
            {
                "type": "bar",
                "name": word,
                "orientation": "h",
                "y": [row for _, row, _ in picked],
                "base": [d.span.start for d, _, _ in picked],
                "x": [max(end - d.span.start, UNTIMED_S) for d, _, end in picked],
                "marker": {"color": color},
                "customdata": [[d.hover] for d, _, _ in picked],
                "hovertemplate": "%{customdata[0]}<br>start %{base:.2f}s, %{x:.2f}s long<extra>" + word + "</extra>",
            }
        )
    peak = max(lanes, default=-1) + 1
    limit = limit or peak
    top = max(limit, peak, 1)
    bottom = 0 if cached else 1
    kinds = {kind: sum(1 for d in calls if d.kind == kind) for kind in ("rating", "map", "reduce")}
    parts = f" ({', '.join(f'{n:,} {kind}' for kind, n in kinds.items() if n)})" if kinds["rating"] or kinds["reduce"] else ""
    from_cache = [(" · ", f"{len(cached):,} from the cache")] if cached else []
    title = wrapped_title(f"Model calls: {len(calls):,}{parts}", (", ", f"at most {peak} in flight (limit {limit})"), *from_cache)
    layout = _layout_dict(title, height=height)
    layout["barmode"] = "overlay"
    layout["xaxis"] = {"automargin": False, "title": {"text": "seconds since start"}, "rangemode": "tozero"}
    layout["yaxis"] = {
        "automargin": False,
        "title": {"text": "call slot"},
        "range": [bottom - 0.5, top + 0.5],
        "tickvals": list(range(bottom, top + 1)),
        "ticktext": (["cache"] if cached else []) + [str(n) for n in range(1, top + 1)],
    }
    return go.Figure(data=traces, layout=layout)


REDUCE_ROWS_GAP = 0.08
REDUCE_TOP_SHARE = 0.55
"""The reduce chart's two rows: the gap between them and the top row's share of the rest (of
the plot's height)."""


def reduce_figure(state: RunState) -> go.Figure:
    """The reduce candidates in rank order: usefulness coloured by fate (top), and the reduce
    prompt tokens with each candidate added against the budget (bottom). Two rows sharing the
    candidate axis, built in one constructor call like the live charts (it is drawn live while
    the reduce runs, and again when the answer arrives)."""
    candidates = state.candidates
    traces: list[dict[str, object]] = []
    for fate, color in FATE_COLORS.items():
        picked = [(i, c) for i, c in enumerate(candidates) if c.fate == fate]
        if not picked:
            continue
        custom = [
            [plot_text(short_ids(c.answer.community_ids)), "-" if c.answer.batch_index is None else c.answer.batch_index, "-" if c.tokens is None else c.tokens]
            for _, c in picked
        ]
        hover = (
            "Candidate %{x} (" + FATE_LABELS[fate] + ")<br>Usefulness: %{y}<br>Batch: %{customdata[1]}"
            "<br>Reduce tokens: %{customdata[2]}<br>Communities: %{customdata[0]}<extra></extra>"
        )
        traces.append(
            {
                "type": "bar", "name": FATE_LABELS[fate], "legendgroup": fate, "xaxis": "x", "yaxis": "y",
                "x": [i + 1 for i, _ in picked], "y": [c.answer.usefulness for _, c in picked],
                "marker": {"color": color}, "customdata": custom, "hovertemplate": hover,
            }
        )
        with_tokens = [(i, c) for i, c in picked if c.tokens is not None]
        if with_tokens:
            traces.append(
                {
                    "type": "scatter", "name": FATE_LABELS[fate], "legendgroup": fate, "showlegend": False, "mode": "markers",
                    "xaxis": "x2", "yaxis": "y2", "x": [i + 1 for i, _ in with_tokens], "y": [c.tokens for _, c in with_tokens],
                    "marker": {"color": color, "size": 8, "symbol": "circle" if fate == "selected" else "x"},
                    "hovertemplate": "Candidate %{x}: %{y} reduce prompt tokens if added<extra>" + FATE_LABELS[fate] + "</extra>",
                }
            )
    running: list[tuple[int, int]] = [(i + 1, c.tokens) for i, c in enumerate(candidates) if c.fate == "selected" and c.tokens is not None]
    if running:
        traces.append(
            {
                "type": "scatter", "name": "reduce prompt filling up", "mode": "lines", "xaxis": "x2", "yaxis": "y2",
                "line": {"shape": "hv", "color": FATE_COLORS["selected"], "width": 1},
                "x": [x for x, _ in running], "y": [y for _, y in running], "hoverinfo": "skip", "showlegend": False,
            }
        )
    selected = sum(1 for c in candidates if c.fate == "selected")
    layout = _layout_dict(f"Reduce candidates: {selected:,} of {len(candidates):,} selected", height=CHART_HEIGHT + 120)
    top = REDUCE_TOP_SHARE * (1 - REDUCE_ROWS_GAP)
    ticks = {"tickmode": "array", "tickvals": list(range(1, len(candidates) + 1))} if len(candidates) <= 12 else {}
    layout["xaxis"] = {"anchor": "y", "domain": [0.0, 1.0], "matches": "x2", "showticklabels": False, **ticks}
    layout["yaxis"] = {"anchor": "x", "domain": [1 - top, 1.0], "title": {"text": "usefulness"}, "range": [0, 100]}
    layout["xaxis2"] = {"anchor": "y2", "domain": [0.0, 1.0], "title": {"text": "candidate (rank order)"}, **ticks}
    layout["yaxis2"] = {"anchor": "x2", "domain": [0.0, 1 - top - REDUCE_ROWS_GAP], "title": {"text": "reduce tokens"}, "rangemode": "tozero"}
    budget = state.reduce_prompt_budget
    if budget is not None:
        line = {"xref": "x2 domain", "yref": "y2", "x0": 0, "x1": 1, "y0": budget, "y1": budget}
        layout["shapes"] = [{"type": "line", **line, "line": {"dash": "dash", "color": "#d63b3b"}}]
        layout["annotations"] = [
            {"text": f"budget {budget:,}", "showarrow": False, "xref": "x2 domain", "yref": "y2", "x": 1, "y": budget, "xanchor": "right", "yanchor": "bottom"}
        ]
    return go.Figure(data=traces, layout=layout)


def empty_figure() -> go.Figure:
    """A figure with nothing in it: drawn hidden as Explore opens, so the browser loads the charts'
    code before a run's first chart needs it."""
    return go.Figure(layout={"height": 10, "margin": {"l": 0, "r": 0, "t": 0, "b": 0}})


PLANNED_HEIGHT = 150


def planned_batches_figure(batch_tokens: Sequence[int], budget: int, *, height: int = PLANNED_HEIGHT) -> go.Figure:
    """The batches a run would send, before it runs: each batch's map prompt estimate against the
    map prompt budget (how full the packing is)."""
    count = len(batch_tokens)
    layout = _layout_dict(f"Planned map batches: {count:,}, prompt tokens of each (budget {budget:,})", height=height)
    layout.update(
        margin={"l": 50, "r": 20, "t": 30, "b": 30},
        showlegend=False,
        xaxis={"range": [-0.5, max(count, 1) - 0.5], "showticklabels": count <= 12, **_integer_axis(count)},
        yaxis={"range": [0, max(budget, max(batch_tokens, default=0)) * 1.05], "title": {"text": "tokens"}},
        shapes=[{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": budget, "y1": budget, "line": {"dash": "dash", "color": "#d63b3b", "width": 1}}],
    )
    bars = {
        "type": "bar",
        "x": list(range(count)),
        "y": list(batch_tokens),
        "marker": {"color": BATCH_COLORS["pending"]},
        "hovertemplate": "Batch %{x}: %{y:,} prompt tokens (estimate)<extra></extra>",
    }
    return go.Figure(data=[bars], layout=layout)


# -- a dynamic selection's walk ---------------------------------------------------------------------


WALK_COLORS: dict[str, str] = {
    "queued": "#f5c04a",
    "kept": "#2ca05a",
    "pruned": "#b9bec8",
    "superseded": "#8fb8f0",
    "skipped": "#eceef2",
    "failed": "#d63b3b",
    "unreached": "#ffffff",
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
