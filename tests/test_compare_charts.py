"""The Compare and Sweeps figures and tables, on runs made with a scripted model."""

import asyncio
import json

import plotly.graph_objects as go
import pytest

from graphrag_app.compare import charts as cc
from graphrag_app.sweeps import charts as sweep_charts
from graphrag_core import (
    GlobalSearchRequest,
    RetryableModelError,
    ScriptedChatModel,
    retrieve_global,
)
from graphrag_core.errors import AllMapBatchesFailed
from graphrag_core.samples import SAMPLES
from graphrag_core.history import RunRecord
from graphrag_core.request import SearchDefaults
from graphrag_core.sweep import SweepSpec, run_sweep
from tests.factories import small_index

QUERY = "Who are the hackers?"


def usefulness_by_batch(request):
    """Map: usefulness grows with the community ids in the batch; reduce: a fixed answer."""
    if request.purpose == "reduce":
        return '{"answer": "Hackers explore <b>systems</b>."}'
    text = request.prompt_text
    score = 20 + 10 * sum(f"Community ID: {i} " in text for i in range(7))
    return json.dumps({"answer": f"Partial answer ({score}).", "usefulness": score})


def make_record(*, level="leaf", seed=1, map_budget=400, script=usefulness_by_batch, cache=None, **kwargs) -> RunRecord:
    events = []
    request = GlobalSearchRequest(query=QUERY, community_level=level, seed=seed, map_token_budget=map_budget, map_output_reserve=100, **kwargs)
    try:
        asyncio.run(retrieve_global(small_index(), request, ScriptedChatModel(script), on_event=events.append, cache=cache))
    except AllMapBatchesFailed:
        pass
    return RunRecord.from_events(events, index_name="small")


@pytest.fixture(scope="module")
def records():
    return [make_record(level="leaf", seed=1), make_record(level=1, seed=2), make_record(level=0, seed=1, map_budget=1000)]


def test_run_labels_name_position_and_id(records):
    labels = cc.run_labels(records)
    assert [label[0] for label in labels] == ["A", "B", "C"]
    assert all(label.endswith(r.run_id[:8]) for label, r in zip(labels, records))


def test_settings_table_marks_exactly_the_differing_fields(records):
    rows = {row["setting"]: row for row in cc.settings_table(records[:2])}
    assert rows["community level"]["differs"] and rows["seed"]["differs"]
    assert not rows["map token budget"]["differs"] and not rows["question"]["differs"]
    only = cc.settings_table(records[:2], only_differing=True)
    assert {row["setting"] for row in only} == {"community level", "seed"}
    assert rows["claims included"][cc.run_labels(records[:2])[0]] == "yes"  # a run is named among the runs compared


def test_metrics_table_has_every_metric_for_every_run(records):
    table = cc.metrics_table(records)
    assert [row["metric"] for row in table] == list(cc.METRIC_NAMES)
    labels = cc.run_labels(records)
    assert all(set(row) == {"metric", *labels} for row in table)
    batches = next(row for row in table if row["metric"] == "batches")
    assert batches[labels[0]] == str(records[0].result.diagnostics.batch_count)
    metrics = cc.run_metrics(records[0])
    assert metrics.model_calls == metrics.batches + 1
    assert metrics.map_prompt_tokens == sum(records[0].result.diagnostics.batch_token_estimates)


def test_metrics_name_the_cited_and_behind_sets_as_explore_does():
    def citing(request):
        if request.purpose == "reduce":
            return '{"answer": "Hackers explore systems [Communities: 4, 999]."}'
        return json.dumps({"answer": "Something.", "usefulness": 50})

    record = make_record(script=citing)
    rows = {row["metric"]: row for row in cc.metrics_table([record, record])}
    label = cc.run_labels([record, record])[0]
    assert "communities cited" in rows and "communities behind" in rows and "unsupported citations" in rows
    assert rows["communities cited"][label] == "2"  # 4 and the invented 999
    assert rows["communities behind"][label] == str(len(record.result.community_ids)) != "2"
    assert rows["unsupported citations"][label] == "1"


def test_metrics_of_a_failed_run_come_from_its_events():
    failed = make_record(script=lambda r: RetryableModelError("503"))
    assert failed.result is None and failed.status == "failed"
    metrics = cc.run_metrics(failed)
    assert metrics.batches >= 1 and metrics.failed_batches == metrics.batches
    assert metrics.model_calls == 2 * metrics.batches  # each batch tried twice
    assert cc.usefulness_values(failed) == []
    assert cc.run_sets([failed], "cited") == [frozenset()]


def test_usefulness_figure_one_box_per_run(records):
    fig = cc.usefulness_figure(records)
    assert isinstance(fig, go.Figure)
    assert [trace.type for trace in fig.data] == ["box"] * 3
    assert list(fig.data[0].y) == cc.usefulness_values(records[0])
    assert all(0 <= v <= 100 for trace in fig.data for v in trace.y)


def test_jaccard_matrix_and_heatmap(records):
    matrix = cc.jaccard_matrix(records)
    assert all(matrix[i][i] == 1.0 for i in range(3))
    assert all(matrix[i][j] == matrix[j][i] for i in range(3) for j in range(3))
    sets = cc.run_sets(records)
    assert matrix[0][1] == pytest.approx(len(sets[0] & sets[1]) / len(sets[0] | sets[1]))
    fig = cc.overlap_heatmap_figure(records)
    assert fig.data[0].type == "heatmap" and len(fig.data[0].z) == 3


def test_overlap_groups_place_every_community_behind_once(records):
    groups = cc.overlap_groups(records)
    placed = [cid for g in groups for cid in g.community_ids]
    assert sorted(placed) == sorted(set().union(*cc.run_sets(records)))
    for group in groups:
        for cid in group.community_ids:
            assert group.members == tuple(i for i, s in enumerate(cc.run_sets(records)) if cid in s)
    table = cc.overlap_table(records)
    assert sum(row["communities"] for row in table) == len(placed)
    assert cc.overlap_bars_figure(records).data[0].type == "bar"


def test_partial_overlap_is_counted_by_membership(records):
    def no_kludges(request):
        if request.purpose == "map" and "Community ID: 5 " in request.prompt_text:
            return '{"answer": "", "usefulness": 0}'
        return usefulness_by_batch(request)

    partial = make_record(seed=1, map_budget=400, script=no_kludges)
    assert set(partial.result.community_ids) == {"3", "4"}
    pair = [records[0], partial]
    rows = {row["runs"]: row["communities"] for row in cc.overlap_table(pair)}
    assert rows == {"all runs": 2, "only A": 1}
    assert cc.jaccard_matrix(pair)[0][1] == pytest.approx(2 / 3)


def test_overlap_of_identical_runs_is_all_runs():
    a, b = make_record(seed=3), make_record(seed=3)
    table = cc.overlap_table([a, b])
    assert len(table) == 1 and table[0]["runs"] == "all runs"
    assert cc.jaccard_matrix([a, b])[0][1] == 1.0


def test_the_overlap_compares_the_set_asked_for_cited_behind_or_read_but_unused():
    def citing_and_dropping(request):
        if request.purpose == "reduce":
            return '{"answer": "Hackers explore systems [Communities: 4, 999]."}'
        if "Community ID: 5 " in request.prompt_text:
            return '{"answer": "", "usefulness": 0}'
        return usefulness_by_batch(request)

    record, plain = make_record(script=citing_and_dropping), make_record()
    pair = [record, plain]
    assert cc.run_sets(pair, "cited") == [frozenset({"4", "999"}), frozenset()], "what the answers cite, not what is behind them"
    assert cc.run_sets(pair) == [frozenset(record.result.community_ids), frozenset(plain.result.community_ids)]
    assert cc.run_sets(pair, "read_but_unused") == [frozenset({"5"}), frozenset()]
    assert "cited by" not in cc.overlap_table(pair)[0], "the table does not call every set 'cited'"
    assert {row["runs"]: row["ids"] for row in cc.overlap_table(pair, "cited")} == {"only A": "4, 999"}
    assert {row["runs"]: row["ids"] for row in cc.overlap_table(pair, "read_but_unused")} == {"only A": "5"}
    assert cc.overlap_heatmap_figure(pair, "cited").layout.title.text.startswith("Overlap of the communities each answer cites")
    assert cc.overlap_heatmap_figure(pair).layout.title.text.startswith("Overlap of the communities behind each answer")
    rows = {row["metric"]: row for row in cc.metrics_table(pair)}
    assert rows["communities read but unused"][cc.run_labels(pair)[0]] == "1"


def test_cost_figure(records):
    fig = cc.cost_figure(records)
    assert {trace.name for trace in fig.data} >= {"batches", "model calls as if uncached", "model calls spent", "prompt tokens (est.)"}


def test_plot_text_escapes_markup():
    assert cc.plot_text('<a href="javascript:x">hi</a>') == '&lt;a href="javascript:x"&gt;hi&lt;/a&gt;'


def test_index_key_for_maps_sample_paths_to_their_name(records, tmp_path):
    sample = records[0].model_copy(update={"index_name": "The Jargon File", "index_path": str(SAMPLES["jargon"])})
    assert cc.index_key_for(sample) == "jargon"
    folder = records[0].model_copy(update={"index_path": str(tmp_path)})
    assert cc.index_key_for(folder) == str(tmp_path)
    assert cc.index_key_for(records[0]) == "small"


@pytest.fixture(scope="module")
def sweep():
    spec = SweepSpec(query=QUERY, levels=["leaf", 1, 0], seeds=[1, 2], map_token_budgets=[300, 600])
    return asyncio.run(run_sweep(small_index(), spec, ScriptedChatModel(usefulness_by_batch)))


def test_sweep_figures(sweep):
    stability = sweep_charts.stability_figure(sweep)
    assert list(stability.data[0].x) == ["leaf", "level 1", "level 0"]
    assert all(0 <= y <= 1 for y in stability.data[0].y)
    cost = sweep_charts.cost_figure(sweep)
    assert [t.name for t in cost.data] == ["batches", "model calls as if uncached", "model calls spent", "prompt tokens (est.)"]
    (status,) = sweep_charts.points_figure(sweep).data  # a heatmap now: one filled cell per point
    assert sum(v is not None for row in status.z for v in row) == len(sweep.points)


def test_a_cached_rerun_shows_calls_and_tokens_spent_and_as_if_uncached():
    from graphrag_core.figures import Price, run_figures, spend_line

    def run_spend(events):  # type: ignore[no-untyped-def]
        return run_figures(events).spend

    class DictCache:
        def __init__(self) -> None:
            self.data: dict[str, str] = {}

        def get(self, key: str) -> str | None:
            return self.data.get(key)

        def put(self, key: str, value: str) -> None:
            self.data[key] = value

    cache = DictCache()
    first = make_record(cache=cache)
    second = make_record(cache=cache)
    spend = run_spend(second.events)
    batches = second.result.diagnostics.batch_count
    assert spend.cache_hits == batches and spend.calls == 1 and spend.calls_as_if_uncached == batches + 1
    assert spend.tokens.total_tokens < spend.tokens_as_if_uncached.total_tokens
    assert run_spend(first.events).calls == batches + 1 and run_spend(first.events).cache_hits == 0
    table = {row["metric"]: row for row in cc.metrics_table([first, second], price=Price(1.0, 2.0))}
    label = cc.run_labels([first, second])[1]
    assert table["model calls"][label] == "1"
    assert table["map cache hits"][label] == str(batches)
    assert table["model calls as if uncached"][label] == str(batches + 1)
    assert table["tokens as if uncached"][label].startswith("≈")
    assert "cost (configured price)" in table and "cost as if uncached" in table
    assert f"{batches:,} cache hits" in spend_line(spend)


def rating_and_map(request):
    """Dynamic selection: every community rated 3 (with reported tokens); map and reduce as above."""
    from graphrag_core.llm.base import ChatResponse, TokenUsage

    if request.purpose == "rate":
        return ChatResponse(text='{"rating": 3}', usage=TokenUsage(prompt_tokens=1000, completion_tokens=5))
    return usefulness_by_batch(request)


def test_compare_prompt_tokens_count_a_dynamic_runs_rating_prompts():
    from graphrag_core.cache import MemoryMapCache

    cache = MemoryMapCache()
    dynamic = make_record(script=rating_and_map, community_selection="dynamic", cache=cache, map_budget=1000)
    level = make_record(level=0)
    figures = dynamic.figures
    assert figures.rating_calls and figures.rating_prompt_tokens == 1000 * figures.rating_calls
    assert cc.run_metrics(dynamic).prompt_tokens == figures.map_prompt_tokens + figures.sent_reduce_prompt_tokens + figures.rating_prompt_tokens
    diamonds = next(t for t in cc.cost_figure([level, dynamic]).data if t.name == "prompt tokens (est.)")
    assert list(diamonds.y) == [level.figures.map_prompt_tokens + level.figures.sent_reduce_prompt_tokens, cc.run_metrics(dynamic).prompt_tokens]
    row = next(r for r in cc.metrics_table([level, dynamic]) if r["metric"] == "prompt tokens (est.)")
    assert row[cc.run_labels([level, dynamic])[1]] == f"{cc.run_metrics(dynamic).prompt_tokens:,}"
    cached = make_record(script=rating_and_map, community_selection="dynamic", cache=cache, map_budget=1000)  # every rating from the cache
    assert cached.figures.rating_calls == 0 and cached.figures.prompt_tokens >= figures.prompt_tokens - figures.rating_usage.prompt_tokens
    assert cached.figures.rating_prompt_tokens > 0  # as planned: a cached rerun costs what its first run did


def test_compare_cost_chart_compares_calls_as_if_uncached_and_shows_the_calls_spent():
    from graphrag_core.cache import MemoryMapCache

    cache = MemoryMapCache()
    first, rerun = make_record(level="leaf", cache=cache), make_record(level="leaf", cache=cache)
    assert rerun.figures.model_calls == 1 and rerun.figures.cache_hits == first.figures.batches
    bars = {t.name: list(t.y) for t in cc.cost_figure([first, rerun]).data if t.type == "bar"}
    assert bars["model calls as if uncached"] == [first.figures.model_calls] * 2
    assert bars["model calls spent"] == [first.figures.model_calls, 1]


def test_sweep_costs_compare_points_as_if_uncached_with_the_calls_spent_beside():
    from graphrag_core.cache import MemoryMapCache

    cache = MemoryMapCache()
    spec = SweepSpec(query=QUERY, levels=["leaf", 0], seeds=[1, 2], map_token_budgets=[1000], base=SearchDefaults(map_output_reserve=100))
    first = asyncio.run(run_sweep(small_index(), spec, ScriptedChatModel(usefulness_by_batch), cache=cache))
    again = asyncio.run(run_sweep(small_index(), spec, ScriptedChatModel(usefulness_by_batch), cache=cache))
    assert all(p.model_calls == 1 and p.cache_hits == p.batch_count for p in again.points)
    assert [p.calls_as_if_uncached for p in again.points] == [p.calls_as_if_uncached for p in first.points]
    seed2 = first.points[3]  # level 0, seed 2: the same batches as seed 1, from the cache
    assert seed2.model_calls == 1 and seed2.calls_as_if_uncached == first.points[2].model_calls

    def calls(result, name):  # type: ignore[no-untyped-def]
        return next(list(t.y) for t in sweep_charts.cost_figure(result).data if t.name == name)

    uncached = calls(first, "model calls as if uncached")
    assert calls(again, "model calls as if uncached") == uncached == [first.points[0].model_calls, first.points[2].model_calls]
    assert calls(again, "model calls spent") == [1.0, 1.0] and calls(first, "model calls spent")[1] < uncached[1]
    (grid,) = sweep_charts.points_figure(again).data
    cells = [cell for row in grid.text for cell in row]
    leaf = again.points[0]
    assert f"{leaf.calls_as_if_uncached:,} calls (1 spent)" in cells[0]
    assert all(" 1 calls" not in cell for cell in cells)
    (row,) = [r for r in again.to_rows() if r["point"] == 0]
    assert row["calls_as_if_uncached"] == leaf.calls_as_if_uncached and row["model_calls"] == 1


def test_the_sweep_csv_names_its_point_number_point_not_index():
    import csv
    import io

    result = asyncio.run(run_sweep(small_index(), SweepSpec(query=QUERY, levels=[0], seeds=[1, 2]), ScriptedChatModel(usefulness_by_batch)))
    header, *rows = list(csv.reader(io.StringIO(result.to_csv())))
    assert header[0] == "point" and "index" not in header and [r[0] for r in rows] == ["0", "1"]
    assert json.loads(result.to_json())["points"][1]["point"] == 1
