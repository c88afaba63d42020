"""The run charts drawn for a presenter: failures never read as scores, small runs get sane axes."""

from __future__ import annotations

from graphrag_app.explore import charts
from graphrag_core.events import BatchesPlanned, MapBatchFailed, MapBatchStarted, MapBatchSucceeded, PlannedBatch, RunStarted
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.state import RunState


def _state(outcomes: list[str]) -> RunState:
    request = GlobalSearchRequest(query="q", seed=1)
    events: list = [RunStarted(run_id="r", request=request, seed=1, model="m", tokenizer="heuristic")]
    batches = tuple(PlannedBatch(index=i, community_ids=(str(i),), token_estimate=12_345) for i in range(len(outcomes)))
    events.append(BatchesPlanned(batches=batches, map_prompt_budget=7488, concurrency=4))
    for i, outcome in enumerate(outcomes):
        events.append(MapBatchStarted(batch_index=i, attempt=1))
        if outcome == "failed":
            events.append(MapBatchFailed(batch_index=i, attempts=2, error="HTTP 503", error_type="RetryableModelError"))
        else:
            events.append(MapBatchSucceeded(batch_index=i, answer="a", usefulness=40, attempt=1, duration_s=0.1))
    return RunState.replay(events)


def test_failed_batches_are_marks_below_zero_not_full_height_bars() -> None:
    figure = charts.usefulness_figure(_state(["done", "failed", "done"]))
    failed = [trace for trace in figure.data if trace.name.startswith("failed")]
    assert len(failed) == 1 and failed[0].type == "scatter"
    assert all(y < 0 for y in failed[0].y)
    assert all(max(trace.y) <= 100 for trace in figure.data if trace.type == "bar" and trace.name == "done")
    assert 0 in figure.layout.yaxis.tickvals and min(figure.layout.yaxis.tickvals) == 0  # no tick names the lane a score


def test_one_batch_has_one_tick_not_fractions() -> None:
    figure = charts.usefulness_figure(_state(["done"]))
    assert list(figure.layout.xaxis.tickvals) == [0]


def test_big_numbers_have_thousands_separators() -> None:
    figure = charts.usefulness_figure(_state(["done"] * 3))
    assert "12,345" in str(figure.data[0].customdata[0])


def test_the_timeline_counts_calls_in_flight_without_the_cache_reads():
    # a batch answered from the map cache holds no slot: drawn on its own row, never counted as a
    # call in flight (the timeline read "at most 5 in flight (limit 4)" on a run with cache hits)
    from graphrag_app.explore.charts import timeline_figure
    from graphrag_core.state import CallSpan, RunState

    state = RunState(concurrency=4)
    state.calls = [CallSpan(batch_index=i, attempt=1, start=0.0, end=1.0, outcome="ok") for i in range(4)]
    state.calls.append(CallSpan(batch_index=4, attempt=1, start=0.5, end=0.5, outcome="cached"))
    fig = timeline_figure(state)
    assert fig.layout.title.text == "Model calls: 4, at most 4 in flight (limit 4) · 1 from the cache"
    rows = {trace.name: list(trace.y) for trace in fig.data}
    assert rows == {"map": [1, 2, 3, 4], "from the cache": [0]}
    assert list(fig.layout.yaxis.ticktext) == ["cache", "1", "2", "3", "4"]


def test_a_dynamic_runs_timeline_draws_its_rating_calls_and_counts_what_diagnostics_counts():
    """The timeline of a dynamic run read "Model calls: 28" while Diagnostics said 220: the rating
    calls (and the reduce) were not drawn, leaving the first seconds of the axis empty."""
    import asyncio

    from graphrag_app.explore.charts import timeline_figure
    from graphrag_core import GlobalSearchRequest, retrieve_global
    from graphrag_core.cache import MemoryMapCache
    from graphrag_core.figures import run_figures
    from graphrag_core.llm.offline import OfflineChatModel
    from graphrag_core.state import RunState

    from .factories import small_index

    events: list = []
    request = GlobalSearchRequest(query="Who are the wizards?", community_selection="dynamic", seed=1, map_token_budget=1000, map_output_reserve=100)
    cache = MemoryMapCache()
    asyncio.run(retrieve_global(small_index(), request, OfflineChatModel(), on_event=events.append, cache=cache))
    state, figures = RunState.replay(events), run_figures(events)
    fig = timeline_figure(state)
    assert figures.rating_calls > 0 and figures.model_calls == figures.rating_calls + figures.map_calls + figures.reduce_calls
    title = fig.layout.title.text
    assert title.startswith(f"Model calls: {figures.model_calls:,} ({figures.rating_calls:,} rating, {figures.map_calls:,} map, 1 reduce)")
    bars = {trace.name: trace for trace in fig.data}
    assert len(bars["rating"].x) == figures.rating_calls and len(bars["reduce"].x) == 1
    first_map = min(span.start for span in state.calls)
    assert min(bars["rating"].base) <= first_map  # the ratings fill the start of the axis
    rated = [e for e in state.selection.ratings.values() if e.calls]
    assert all(e.started_at is not None and e.started_at <= e.at for e in rated)

    again: list = []
    asyncio.run(retrieve_global(small_index(), request, OfflineChatModel(), on_event=again.append, cache=cache))
    cached = timeline_figure(RunState.replay(again))
    assert cached.layout.title.text.startswith("Model calls: 1 (1 reduce)") and "from the cache" in cached.layout.title.text
    assert all(y == 0 for trace in cached.data if trace.name == "from the cache" for y in trace.y)
    assert "(limit 4)" in fig.layout.title.text  # the request's limit, which bounded the ratings too


def _reduce_state(fates: list[str], *, budget: int = 900) -> RunState:
    from graphrag_core.events import ReduceSelection
    from graphrag_core.results import MapAnswer, ReduceCandidate

    state = _state(["done"] * len(fates))
    candidates = tuple(
        ReduceCandidate(
            rank=i + 1,
            answer=MapAnswer(batch_index=i, community_ids=(str(i),), answer=f"point {i}", usefulness=90 - 10 * i),
            fate=fate,  # type: ignore[arg-type]
            tokens=None if fate in ("dropped", "not_tried") else 300 * (i + 1),
        )
        for i, fate in enumerate(fates)
    )
    state.apply(ReduceSelection(candidates=candidates, reduce_prompt_budget=budget, strategy="skip"))
    return state


def test_the_reduce_chart_shares_the_candidate_axis_between_its_two_rows() -> None:
    figure = charts.reduce_figure(_reduce_state(["selected", "selected", "skipped", "dropped"]))
    layout = figure.layout
    assert layout.title.text == "Reduce candidates: 2 of 4 selected"
    assert [(t.type, t.xaxis, t.yaxis) for t in figure.data] == [
        ("bar", "x", "y"), ("scatter", "x2", "y2"),  # selected: its usefulness above, its running total below
        ("bar", "x", "y"), ("scatter", "x2", "y2"),  # skipped: what it would have cost
        ("bar", "x", "y"),  # dropped: no tokens
        ("scatter", "x2", "y2"),  # the reduce prompt filling up
    ]
    assert layout.xaxis.matches == "x2" and layout.xaxis.showticklabels is False  # one axis read under both rows
    assert layout.yaxis.domain[0] > layout.yaxis2.domain[1]  # the rows do not overlap
    assert (layout.yaxis.title.text, layout.yaxis2.title.text, layout.xaxis2.title.text) == ("usefulness", "reduce tokens", "candidate (rank order)")
    assert list(layout.xaxis2.tickvals) == [1, 2, 3, 4]
    (budget,) = layout.shapes
    assert (budget.yref, budget.y0, budget.y1, budget.xref) == ("y2", 900, 900, "x2 domain")
    assert layout.annotations[0].text == "budget 900" and layout.annotations[0].yref == "y2"


def test_the_live_charts_keep_their_margins() -> None:
    # drawn again twice a second while a run streams: an axis that moved the margins to fit its
    # labels made Plotly lay the chart out twice on every drawing (a third of the browser's time
    # in Plotly); the margins are fixed instead, with room for the axis titles and the legend
    state = _state(["done", "failed", "running"])
    for figure in (charts.usefulness_figure(state), charts.timeline_figure(state)):
        layout = figure.layout
        assert layout.xaxis.automargin is False and layout.yaxis.automargin is False
        assert layout.margin.l >= 50 and layout.margin.b >= 90  # the y axis title; the x axis title and the legend under it


def test_a_long_timeline_title_takes_a_second_line_and_the_chart_beside_it_keeps_its_level() -> None:
    # "Model calls: 1 (1 reduce), at most 1 in flight (limit 4) · 85 from the cache" was cut at
    # 1280x800 ("… · 85 from th"); each line now fits, and the usefulness chart beside it
    # starts its plot at the same height (the browser test checks the page itself)
    from graphrag_app.explore.charts import TITLE_LINE_CHARS, TITLE_LINE_PX, TITLE_TOP_PX, timeline_figure, title_top, usefulness_figure, wrapped_title
    from graphrag_core.state import CallSpan, RunState

    state = RunState(concurrency=4)
    state.calls = [CallSpan(batch_index=i, attempt=1, start=0.1, end=0.2, outcome="cached") for i in range(1085)]
    state.calls += [CallSpan(batch_index=1085 + i, attempt=1, start=0.2 + i // 4 * 0.1, end=0.3 + i // 4 * 0.1, outcome="ok") for i in range(12)]
    timeline = timeline_figure(state)
    lines = timeline.layout.title.text.split("<br>")
    assert lines == ["Model calls: 12, at most 4 in flight (limit 4)", "1,085 from the cache"]
    assert all(len(line) <= TITLE_LINE_CHARS for line in lines)
    assert timeline.layout.margin.t == TITLE_TOP_PX + TITLE_LINE_PX
    assert usefulness_figure(RunState(), top=timeline.layout.margin.t).layout.margin.t == timeline.layout.margin.t
    short = wrapped_title("Model calls: 4", (", ", "at most 4 in flight (limit 4)"), (" · ", "1 from the cache"))
    assert short == "Model calls: 4, at most 4 in flight (limit 4) · 1 from the cache"  # one line when it fits
    assert title_top(short) == TITLE_TOP_PX
