"""Untrusted text reaches a run's charts only escaped, through the one plot_text."""

from graphrag_app.explore import charts
from graphrag_app.compare import charts as compare_charts
from graphrag_app.index_browser import charts as index_charts
from graphrag_app.text import escape_markdown, plot_text
from graphrag_app.explore import run_view as views
from graphrag_core.events import BatchesPlanned, MapBatchSucceeded, PlannedBatch, ReduceSelection, RunStarted
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.results import MapAnswer, ReduceCandidate
from graphrag_core.state import RunState

HOSTILE = '<a href="javascript:alert(1)">x</a>'


def test_one_escaping_helper_for_every_chart_module():
    assert compare_charts.plot_text is plot_text and index_charts.plot_text is plot_text
    assert views.escape_markdown is escape_markdown


def test_run_charts_escape_community_ids_from_the_index():
    state = RunState.replay(
        [
            RunStarted(run_id="r", request=GlobalSearchRequest(query="q"), seed=1, model="m", tokenizer="heuristic"),
            BatchesPlanned(batches=(PlannedBatch(index=0, community_ids=(HOSTILE,), token_estimate=10),), map_prompt_budget=100, concurrency=1),
            MapBatchSucceeded(batch_index=0, answer="a", usefulness=50, attempt=1, duration_s=0.1),
            ReduceSelection(
                candidates=(ReduceCandidate(rank=1, answer=MapAnswer(answer="a", usefulness=50, community_ids=(HOSTILE,), batch_index=0), fate="selected", tokens=5),),
                reduce_prompt_budget=100,
                strategy="skip",
            ),
        ]
    )
    for figure in (charts.usefulness_figure(state), charts.reduce_figure(state)):
        custom = [str(row) for trace in figure.data if trace.customdata is not None for row in trace.customdata]
        assert custom and not any("<a href" in row for row in custom)
        assert any("&lt;a href" in row for row in custom)
