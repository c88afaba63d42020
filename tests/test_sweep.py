import asyncio
import csv
import io
import json

import pytest

from graphrag_core import (
    GlobalSearchRequest,
    RequestValidationError,
    RetryableModelError,
    ScriptedChatModel,
    SearchDefaults,
)
from graphrag_core.history import RunStore
from graphrag_core.sweep import (
    ROW_FIELDS,
    SweepPoint,
    SweepResult,
    SweepSpec,
    jaccard,
    run_sweep,
)
from tests import factories

QUERY = "What shapes the town?"


TOWN = {"gamma": "The school closed last year.", "repeat": 8}
"""The factory's town with a third leaf, its summaries repeated for several batches per level."""


def reply(request):
    if request.purpose == "map":
        if "Community ID: r " in request.prompt_text:
            raise RetryableModelError("root batch: 503 Service Unavailable")
        return '{"answer": "Something relevant.", "usefulness": 70}'
    return '{"answer": "The final answer."}'


def run(spec, model=None, **kwargs):
    return asyncio.run(run_sweep(factories.make_index(**TOWN), spec, model or ScriptedChatModel(reply), **kwargs))


def test_grid_size_and_order():
    spec = SweepSpec(query=QUERY, levels=["leaf", 1], seeds=[1, 2, 3], map_token_budgets=[8000, 4000])
    assert len(spec) == 2 * 3 * 2
    grid = spec.grid()
    assert grid[0] == ("leaf", 8000, 8000, 1)
    assert grid[-1] == (1, 4000, 8000, 3)

    progress = []
    result = run(spec, on_progress=progress.append)
    assert len(result.points) == 12
    assert [p.index for p in result.points] == list(range(12))
    assert [(p.level, p.map_token_budget, p.reduce_token_budget, p.seed) for p in result.points] == grid
    assert [e.done for e in progress] == list(range(1, 13))
    assert all(e.total == 12 for e in progress)
    assert all(p.status == "completed" for p in result.points)
    point = result.points[0]
    assert point.summary_count == 3
    assert point.batch_count >= 1
    assert point.map_calls == point.batch_count
    assert point.reduce_calls == 1 and point.model_calls == point.batch_count + 1
    assert point.prompt_tokens > 0
    assert point.selected_answer_count == point.batch_count
    assert set(point.community_ids) == {"a", "b", "c"}
    assert point.run_id


def test_base_settings_reach_every_point():
    spec = SweepSpec(query=QUERY, levels=["leaf"], seeds=[5], base=SearchDefaults(map_concurrency=1, include_claims=False))
    request = spec.request_for("leaf", 8000, 8000, 5)
    assert request.map_concurrency == 1 and request.include_claims is False and request.seed == 5
    model = ScriptedChatModel(reply)
    run(spec, model)
    assert model.max_in_flight == 1


def test_failed_points_are_recorded_not_fatal():
    spec = SweepSpec(query=QUERY, levels=["leaf", 0], seeds=[1], map_token_budgets=[8000, 600, 300])
    result = run(spec)
    by_key = {(p.level, p.map_token_budget): p for p in result.points}
    assert len(result.points) == 6

    ok = by_key[("leaf", 8000)]
    assert ok.status == "completed" and ok.error is None

    all_failed = by_key[(0, 8000)]  # the root's only batch fails twice
    assert all_failed.status == "failed"
    assert all_failed.error_type == "AllMapBatchesFailed"
    assert all_failed.error == "Every Global Map batch failed."
    assert all_failed.batch_errors == ("root batch: 503 Service Unavailable",)
    assert all_failed.map_calls == 2 and all_failed.reduce_calls == 0
    assert all_failed.batch_count == 1 and all_failed.failed_batch_count == 1
    assert all_failed.community_ids == ()

    too_small = by_key[("leaf", 600)]  # 88 prompt tokens cannot hold the map prompt
    assert too_small.status == "failed" and too_small.error_type == "BudgetError"
    assert too_small.error == "Map token budget cannot fit the Map prompt."
    assert too_small.model_calls == 0

    below_reserve = by_key[("leaf", 300)]  # below the 512 output reserve
    assert below_reserve.status == "failed" and below_reserve.error_type == "BudgetError"
    assert below_reserve.error == "Token budgets must exceed their output reserves."
    assert below_reserve.run_id is None


def test_spec_validation_uses_request_messages():
    with pytest.raises(RequestValidationError, match="^Global retrieval query must not be empty.$"):
        SweepSpec(query="  ", levels=["leaf"], seeds=[1])
    with pytest.raises(RequestValidationError, match='^community_level must be "leaf" or a non-negative integer.$'):
        SweepSpec(query=QUERY, levels=[-1], seeds=[1])
    with pytest.raises(RequestValidationError, match="^map_token_budget must be a positive integer.$"):
        SweepSpec(query=QUERY, levels=["leaf"], seeds=[1], map_token_budgets=[0])
    with pytest.raises(RequestValidationError, match="^seed must be an integer or None.$"):
        SweepSpec(query=QUERY, levels=["leaf"], seeds=[True])
    with pytest.raises(RequestValidationError, match="at least one level and one seed"):
        SweepSpec(query=QUERY, levels=[], seeds=[1])
    assert SweepSpec(query=f"  {QUERY} ", seeds=[1, 1, 2]).seeds == [1, 2]


def test_csv_and_json_output():
    spec = SweepSpec(query=QUERY, levels=["leaf", 0], seeds=[1, 2])
    result = run(spec)

    rows = result.to_rows()
    assert len(rows) == 4 and list(rows[0]) == list(ROW_FIELDS)

    parsed = list(csv.DictReader(io.StringIO(result.to_csv())))
    assert len(parsed) == 4
    assert parsed[0]["level"] == "leaf" and parsed[0]["status"] == "completed"
    assert set(parsed[0]["community_ids"].split(";")) == {"a", "b", "c"}
    assert parsed[2]["level"] == "0" and parsed[2]["status"] == "failed"
    assert parsed[2]["error"] == "Every Global Map batch failed."
    assert parsed[0]["error"] == ""

    document = json.loads(result.to_json())
    assert document["spec"]["query"] == QUERY
    assert document["model"] == "scripted" and document["index_name"] == "tiny"
    assert len(document["points"]) == 4
    assert document["points"][0]["community_ids"]
    assert document["stability_by_level"] == {"leaf": 1.0, "0": None}


def _point(i, level, seed, ids, status="completed", map_budget=8000):
    return SweepPoint(
        index=i, level=level, seed=seed, map_token_budget=map_budget, reduce_token_budget=8000,
        status=status, community_ids=tuple(ids),
    )


def test_stability_by_level():
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard(set(), set()) == 1.0
    spec = SweepSpec(query=QUERY, levels=["leaf", 1, 2], seeds=[1, 2, 3], map_token_budgets=[8000, 4000])
    points = [
        _point(0, "leaf", 1, "ab"),
        _point(1, "leaf", 2, "ab"),
        _point(2, "leaf", 3, "bc"),
        _point(3, "leaf", 1, "xyz", map_budget=4000),  # a different budget is never paired with the above
        _point(4, 1, 1, "a"),
        _point(5, 1, 2, "", status="failed"),  # left out
        _point(6, 2, 1, ""),
        _point(7, 2, 2, "", status="no_results"),
    ]
    result = SweepResult(sweep_id="s", spec=spec, index_name="tiny", model="m", points=points)
    stability = result.stability_by_level()
    assert stability["leaf"] == pytest.approx((1 + 1 / 3 + 1 / 3) / 3)
    assert stability[1] is None
    assert stability[2] == 1.0


def test_bounded_point_concurrency_and_store(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite3")
    spec = SweepSpec(query=QUERY, levels=["leaf", 0], seeds=[1, 2, 3], point_concurrency=2, base=SearchDefaults(map_concurrency=1))
    model = ScriptedChatModel(reply, latency=0.01)
    result = run(spec, model, store=store)
    assert model.max_in_flight == 2
    assert [p.index for p in result.points] == list(range(6))
    stored = store.list_runs()
    assert len(stored) == 6
    assert {s.status for s in stored} == {"completed", "failed"}
    assert all(s.label.startswith(f"sweep {result.sweep_id[:8]}") for s in stored)
    assert {p.run_id for p in result.points} == {s.run_id for s in stored}


def test_a_bug_in_the_progress_callback_is_not_swallowed():
    def broken(progress):
        raise KeyError("a bug, not a run failure")

    with pytest.raises(KeyError):
        run(SweepSpec(query=QUERY, seeds=[1, 2]), on_progress=broken)


def test_request_for_matches_a_plain_request():
    spec = SweepSpec(query=QUERY, seeds=[9])
    assert spec.request_for("leaf", 8000, 8000, 9) == GlobalSearchRequest(query=QUERY, seed=9)


def test_sweep_figures_are_pure_and_complete():
    from graphrag_app.sweeps import charts

    spec = SweepSpec(query=QUERY, levels=["leaf", 0, 1], seeds=[1, 2], map_token_budgets=[8000, 4000])
    result = run(spec)
    figures = charts.sweep_figures(result)
    assert list(figures) == ["stability", "cost", "status", "points", "communities", "tokens"]
    stability = figures["stability"].data[0]
    assert list(stability.x) == ["leaf", "level 0", "level 1"]
    assert stability.text[1] == "n/a"  # level 0 only failed
    status = {trace.name: list(trace.y) for trace in figures["status"].data}
    assert status["failed"] == [0, 4, 0] and status["completed"] == [4, 0, 4]
    assert len(figures["tokens"].data) == 2  # one trace per budget pair
    assert all(v > 0 for trace in figures["tokens"].data for v in trace.y)
    for figure in figures.values():
        figure.to_json()  # serializable, so Streamlit can draw it


def test_a_rerun_over_the_map_cache_counts_cache_hits_and_no_map_calls(tmp_path):
    from graphrag_core.cache import SqliteMapCache

    cache = SqliteMapCache(tmp_path / "cache.sqlite3")
    spec = SweepSpec(query="What shapes the town?", levels=["leaf"], seeds=[1])
    first = run(spec, cache=cache).to_rows()[0]
    second = run(spec, cache=cache).to_rows()[0]
    assert first["cache_hits"] == 0 and first["map_calls"] == first["batch_count"] > 0
    assert second["cache_hits"] == second["batch_count"] and second["map_calls"] == 0


def test_the_status_grid_fills_every_cell_and_says_what_each_point_did():
    from graphrag_app.sweeps import charts
    result = run(SweepSpec(query=QUERY, levels=["leaf", 0], seeds=[1, 2, 3]))
    (grid,) = charts.points_figure(result).data
    assert grid.type == "heatmap"
    assert len(grid.z) == 2 and all(len(row) == 3 and None not in row for row in grid.z)
    texts = [cell for row in grid.text for cell in row]
    assert all(cell for cell in texts)
    assert any("behind" in cell and "calls" in cell for cell in texts)
    assert any(cell.startswith("failed<br>") for cell in texts)  # level 0 fails in this index


def test_a_sweep_reports_its_spend_and_as_if_uncached(tmp_path):
    from graphrag_core.cache import SqliteMapCache

    cache = SqliteMapCache(tmp_path / "cache.sqlite3")
    spec = SweepSpec(query="What shapes the town?", levels=["leaf"], seeds=[1, 2])
    first = run(spec, cache=cache).spend()
    again = run(spec, cache=cache).spend()
    assert first.cache_hits == 0 and again.cache_hits > 0
    assert again.calls < first.calls and again.calls_as_if_uncached == first.calls


def test_points_keep_the_cited_and_behind_sets_apart():
    def citing(request):
        if request.purpose == "map":
            return '{"answer": "Something relevant.", "usefulness": 70}'
        return '{"answer": "The final answer [Communities: a, zz]."}'

    result = run(SweepSpec(query=QUERY, levels=["leaf"], seeds=[1]), ScriptedChatModel(citing))
    (point,) = result.points
    assert set(point.community_ids) == {"a", "b", "c"}  # behind: the selected map answers' communities
    assert point.cited_community_ids == ("a", "zz")  # cited: what the answer text cites
    assert point.unsupported_citation_count == 1  # zz is not in the index
    (row,) = result.to_rows()
    assert row["cited_community_ids"] == ["a", "zz"] and row["unsupported_citation_count"] == 1
    (parsed,) = csv.DictReader(io.StringIO(result.to_csv()))
    assert parsed["cited_community_ids"] == "a;zz"


def test_a_point_that_fails_in_its_reduce_reads_its_figures_from_its_run(tmp_path):
    """No call counter of its own: a point's calls and tokens are its run's figures."""
    from graphrag_core.llm.base import ChatResponse, TokenUsage

    def reduce_down(request):
        if request.purpose == "reduce":
            return ChatResponse(text="not json", usage=TokenUsage(prompt_tokens=50, completion_tokens=5))
        return ChatResponse(text='{"answer": "Something relevant.", "usefulness": 70}', usage=TokenUsage(prompt_tokens=10, completion_tokens=2))

    store = RunStore(tmp_path / "runs.sqlite3")
    result = run(SweepSpec(query=QUERY, levels=["leaf"], seeds=[1]), ScriptedChatModel(reduce_down), store=store)
    (point,) = result.points
    assert point.status == "failed" and point.reduce_calls == 2  # both reduce attempts
    figures = store.get(point.run_id).figures
    assert (point.map_calls, point.reduce_calls, point.model_calls) == (figures.map_calls, figures.reduce_calls, figures.model_calls)
    assert point.tokens_spent == figures.usage.total_tokens == 12 * point.map_calls + 2 * 55
    assert result.spend().calls == figures.spend.calls
