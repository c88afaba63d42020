"""Explore's view of a lazy run's relevance tests (issue 42: "relevance tests: N of B", by
community, live): the chart's bars and title from the run's events, the status line while the
tests run, and the same drawing for a replay as for the run."""

from __future__ import annotations

import asyncio

from graphrag_app.explore.relevance import MAX_COMMUNITY_BARS, community_bars, relevance_figure, relevance_title
from graphrag_app.explore.run_view import phase_label
from graphrag_core.events import RelevanceFinished, RelevanceStarted, RelevanceTested
from graphrag_core.index import load_index
from graphrag_core.lazy.state import RelevanceState
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.samples import sample_path
from graphrag_core.search import retrieve_global
from graphrag_core.state import RunState


def _lazy_events(budget: int) -> list:
    index = load_index(sample_path("jargon"))
    request = GlobalSearchRequest(query="What is a kludge and who writes one?", method="lazy", relevance_budget=budget, seed=1)
    events: list = []
    asyncio.run(retrieve_global(index, request, OfflineChatModel(), on_event=events.append))
    return events


def test_the_chart_counts_every_test_by_community_and_outcome_and_names_the_budget() -> None:
    events = _lazy_events(12)
    tests = [e for e in events if isinstance(e, RelevanceTested)]
    state = RunState.replay(events)
    relevance = state.relevance
    bars = community_bars(relevance)
    assert sum(bar.tests for bar in bars) == len(tests) == relevance.used <= 12
    assert sum(bar.relevant for bar in bars) == sum(1 for t in tests if t.relevant_ids and not t.failed)
    assert [bar.label for bar in bars] == list(dict.fromkeys(t.community_id for t in tests))  # the walk's order
    title = relevance_title(relevance)
    assert title.startswith(f"Relevance tests: {len(tests)} of 12 · {relevance.relevant_count} relevant chunk")
    figure = relevance_figure(relevance)
    assert figure.layout.title.text == title
    assert [trace.name for trace in figure.data][:2] == ["found relevant", "nothing relevant"]  # named in the legend, not by colour alone
    assert sum(sum(trace.x) for trace in figure.data) == len(tests)


def test_past_the_bar_limit_the_rest_of_the_communities_share_one_bar() -> None:
    relevance = RelevanceState()
    relevance.apply(RelevanceStarted(relevance_budget=100, subqueries=("q",), ranker="bm25"))
    for n in range(MAX_COMMUNITY_BARS + 5):
        relevance.apply(RelevanceTested(community_id=f"c{n}", level=0, round=0, subquery=0, source_ids=("k",), relevant_ids=("k",) if n % 2 else (), calls=1))
    relevance.apply(RelevanceTested(community_id="c0", level=0, round=1, subquery=0, source_ids=("k2",), failed=True, errors=("boom",), calls=1))
    bars = community_bars(relevance)
    assert len(bars) == MAX_COMMUNITY_BARS
    assert bars[0].label == "c0" and (bars[0].nothing, bars[0].failed) == (1, 1)
    assert bars[-1].label == "6 others" and bars[-1].tests == 6
    assert sum(bar.tests for bar in bars) == MAX_COMMUNITY_BARS + 6
    assert [trace.name for trace in relevance_figure(relevance).data] == ["found relevant", "nothing relevant", "failed"]


def test_while_the_tests_run_the_status_says_how_many_of_the_budget_are_used() -> None:
    events = _lazy_events(10)
    finished_at = next(n for n, e in enumerate(events) if isinstance(e, RelevanceFinished))
    first_test = next(n for n, e in enumerate(events) if isinstance(e, RelevanceTested))
    state = RunState.replay(events[: first_test + 1])
    assert phase_label(state) == "relevance tests: 1 of 10"
    middle = RunState.replay(events[:finished_at])
    used = sum(e.tests for e in events[:finished_at] if isinstance(e, RelevanceTested))
    assert phase_label(middle) == f"relevance tests: {used} of 10"
    assert not middle.relevance.finished and not relevance_title(middle.relevance).endswith(("budget spent", "nothing left to test"))
    done = RunState.replay(events)
    assert not phase_label(done).startswith("relevance") and relevance_title(done.relevance).endswith(("budget spent", "nothing left to test"))


def test_the_axis_ticks_whole_tests_only() -> None:
    relevance = RelevanceState()
    relevance.apply(RelevanceStarted(relevance_budget=5, subqueries=("q",), ranker="bm25"))
    relevance.apply(RelevanceTested(community_id="c", level=0, round=0, subquery=0, source_ids=("k",), calls=1))
    axis = relevance_figure(relevance).layout.xaxis
    assert (axis.tick0, axis.dtick) == (0, 1)  # one test drew ticks 0, 0, 0, 1, 1, 1


def test_a_lazy_run_s_bundle_draws_the_same_relevance_chart(tmp_path) -> None:
    """Issue 42, item 5: a lazy run written to a bundle and read back (another machine's app
    opening it) folds into the same relevance tests and draws the same chart."""
    from graphrag_app.jobs import run_blocking
    from graphrag_core.bundle import bundle_to_json, make_bundle, read_bundle
    from graphrag_core.history import RunStore

    index = load_index(sample_path("jargon"))
    request = GlobalSearchRequest(query="What is a kludge?", method="lazy", relevance_budget=9, seed=2)
    handle, state = run_blocking(index, request, OfflineChatModel(), store_path=tmp_path / "runs.db", index_name="jargon")
    record = RunStore(tmp_path / "runs.db").get(handle.run_id)
    assert record is not None
    opened = read_bundle(bundle_to_json(make_bundle(record)))
    again = RunState.replay(list(opened.events))
    assert opened.request.relevance_budget == 9 and again.relevance.used == state.relevance.used > 0
    assert relevance_figure(again.relevance).to_dict() == relevance_figure(state.relevance).to_dict()

