import asyncio
import json

import pytest

from graphrag_core import (
    NO_RESULTS_ANSWER,
    AllMapBatchesFailed,
    BudgetError,
    GlobalSearchRequest,
    RunState,
    ScriptedChatModel,
    events_from_json,
    events_to_json,
    retrieve_global,
    stream_global,
)
from graphrag_core.events import RunFailed, RunFinished
from graphrag_core.status import RunStatus

from .factories import small_index


def communities_in(request):
    data = request.messages[-1].content
    return [part.split(" ")[0] for part in data.split("[Community ID: ")[1:]]


def scripted(usefulness=None, reduce='{"answer": "The final answer."}', fail=()):
    usefulness = usefulness or {}

    def reply(request):
        if request.purpose == "reduce":
            return reduce
        ids = communities_in(request)
        if set(ids) & set(fail):
            return RuntimeError(f"model down for {ids}")
        score = max(usefulness.get(i, 50) for i in ids)
        return json.dumps({"answer": f"points from {','.join(ids)}", "usefulness": score})

    return ScriptedChatModel(reply)


def search(request, model, index=None, **kwargs):
    return asyncio.run(retrieve_global(index or small_index(), request, model, **kwargs))


def test_completed_run_reports_everything():
    model = scripted()
    events = []
    result = search(GlobalSearchRequest(query="  What are the themes?  ", seed=11, map_token_budget=400, map_output_reserve=100), model, on_event=events.append)
    assert result.status == "completed"
    assert result.answer == "The final answer."
    assert result.query == "What are the themes?"
    assert result.seed == 11
    d = result.diagnostics
    assert d.community_level == "leaf" and d.summary_count == 3
    assert d.batch_count == len(d.batch_community_ids) == len(d.batch_usefulness) >= 2
    assert sorted(i for ids in d.batch_community_ids for i in ids) == ["3", "4", "5"]
    assert d.failed_batch_count == 0
    assert d.selected_answer_count == len(result.selected_answers) == d.batch_count
    assert d.reduce_prompt_tokens and d.reduce_prompt_tokens <= 6976
    assert d.map_calls == d.batch_count and d.reduce_calls == 1
    assert sorted(result.community_ids) == ["3", "4", "5"]
    kinds = [e.kind for e in events]
    assert kinds[:3] == ["run_started", "summaries_selected", "batches_planned"]
    assert kinds[-4:] == ["reduce_selection", "reduce_started", "reduce_replied", "run_finished"]
    assert "What are the themes?" in model.calls_for("reduce")[0].messages[-1].content


def test_same_seed_same_batches_and_drawn_seed_is_reported():
    first = search(GlobalSearchRequest(query="q", seed=5, map_token_budget=400, map_output_reserve=100), scripted())
    again = search(GlobalSearchRequest(query="q", seed=5, map_token_budget=400, map_output_reserve=100), scripted())
    assert first.diagnostics.batch_community_ids == again.diagnostics.batch_community_ids
    drawn = search(GlobalSearchRequest(query="q", map_token_budget=400, map_output_reserve=100), scripted())
    assert isinstance(drawn.seed, int)
    replay = search(GlobalSearchRequest(query="q", seed=drawn.seed, map_token_budget=400, map_output_reserve=100), scripted())
    assert replay.diagnostics.batch_community_ids == drawn.diagnostics.batch_community_ids


def test_level_selection():
    result = search(GlobalSearchRequest(query="q", community_level=1, seed=1), scripted())
    assert result.diagnostics.summary_count == 2
    assert sorted(result.community_ids) == ["1", "2"]
    # the map text of a level-1 community carries its leaf claims and sources
    model = scripted()
    search(GlobalSearchRequest(query="q", community_level=0, seed=1), model)
    data = model.calls_for("map")[0].messages[-1].content
    assert "[Supporting claims]" in data and "KLUDGE: a clever programming trick" in data


def test_no_summaries_means_no_results_and_no_model_call():
    model = ScriptedChatModel([])
    result = search(GlobalSearchRequest(query="q", community_level=9), model)
    assert result.status == "no_results"
    assert result.answer == NO_RESULTS_ANSWER == "No relevant community summaries were found for this query."
    assert model.calls == 0
    assert result.diagnostics.summary_count == 0 and result.diagnostics.batch_count == 0


def test_no_positive_map_answer_means_no_results_without_reduce():
    model = scripted(usefulness={"3": 0, "4": 0, "5": 0})
    result = search(GlobalSearchRequest(query="q", seed=1), model)
    assert result.status == "no_results" and result.answer == NO_RESULTS_ANSWER
    assert model.calls_for("reduce") == []
    assert {c.fate for c in result.reduce_candidates} == {"dropped"}


def test_nothing_fitting_the_reduce_budget_means_no_results():
    model = scripted()
    result = search(GlobalSearchRequest(query="q", seed=1, reduce_token_budget=1200, reduce_output_reserve=1024), model)
    assert result.status == "no_results"
    assert model.calls_for("reduce") == []
    assert {c.fate for c in result.reduce_candidates} == {"skipped"}
    assert result.diagnostics.selected_answer_count == 0


def test_some_batches_failing_twice_gives_partial():
    model = scripted(fail={"4"})
    result = search(GlobalSearchRequest(query="q", seed=3, map_token_budget=400, map_output_reserve=100), model)
    assert result.status == "partial"
    assert result.diagnostics.failed_batch_count == 1
    failure = result.failed_batches[0]
    assert "4" in failure.community_ids and failure.attempts == 2 and "model down" in failure.error
    assert None in result.diagnostics.batch_usefulness
    assert "4" not in result.community_ids


def test_every_batch_failing_raises_the_group_and_reports_a_failed_run():
    model = scripted(fail={"3", "4", "5"})
    events = []
    with pytest.raises(AllMapBatchesFailed) as info:
        search(GlobalSearchRequest(query="q", seed=1, map_token_budget=400, map_output_reserve=100), model, on_event=events.append)
    assert len(info.value.exceptions) == len([e for e in events if e.kind == "batches_planned"][0].batches)
    assert isinstance(events[-1], RunFailed) and events[-1].error_type == "AllMapBatchesFailed"
    assert events[-1].error == "Every Global Map batch failed."
    state = RunState.replay(events)
    assert state.status == "failed" and all(b.status == "failed" for b in state.batches)


def test_invalid_reduce_output_is_retried_once_then_raised():
    model = scripted(reduce='{"answer": ""}')
    with pytest.raises(ValueError, match="Global Reduce output contains an invalid answer."):
        search(GlobalSearchRequest(query="q", seed=1), model)
    assert len(model.calls_for("reduce")) == 2


def test_budget_errors_surface_before_any_model_call():
    model = ScriptedChatModel([])
    with pytest.raises(BudgetError, match="Map token budget cannot fit the Map prompt."):
        search(GlobalSearchRequest(query="q", map_token_budget=150, map_output_reserve=0), model)
    assert model.calls == 0


def test_stream_yields_the_same_events_and_ends_with_the_result():
    async def collect():
        return [e async for e in stream_global(small_index(), GlobalSearchRequest(query="q", seed=2), scripted())]

    events = asyncio.run(collect())
    assert isinstance(events[-1], RunFinished)
    assert events[-1].result.status == "completed"


def test_closing_the_stream_cancels_the_run():
    model = ScriptedChatModel('{"answer": "a", "usefulness": 5}', latency=5.0)

    async def first_events():
        stream = stream_global(small_index(), GlobalSearchRequest(query="q", seed=2), model)
        seen = []
        async for event in stream:
            seen.append(event.kind)
            if event.kind == "map_batch_started":
                break
        await stream.aclose()
        return seen

    seen = asyncio.run(asyncio.wait_for(first_events(), timeout=3))
    assert seen[-1] == "map_batch_started"


def test_saved_events_redraw_a_run_with_no_model():
    events = []
    result = search(GlobalSearchRequest(query="q", seed=4, map_token_budget=400, map_output_reserve=100), scripted(fail={"5"}), on_event=events.append)
    restored = events_from_json(events_to_json(events))
    assert restored == events
    state = RunState.replay(restored)
    assert state.result == result
    assert state.status is RunStatus.PARTIAL and state.status.finished and state.progress == 1.0  # batch 5 failed
    assert [b.usefulness for b in state.batches] == result.diagnostics.batch_usefulness
    assert {b.status for b in state.batches} == {"done", "failed"}
    assert len(state.candidates) == len(result.reduce_candidates)
    assert all(span.end is not None for span in state.calls)


def test_a_stopped_run_closes_its_calls_in_flight():
    model = ScriptedChatModel('{"answer": "a", "usefulness": 5}', latency=5.0)
    events = []

    async def stop_after_first_call():
        task = asyncio.ensure_future(
            retrieve_global(small_index(), GlobalSearchRequest(query="q", seed=2, map_token_budget=400, map_output_reserve=100), model, on_event=events.append)
        )
        while not any(e.kind == "map_batch_started" for e in events):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(stop_after_first_call(), timeout=3))
    assert events[-1].kind == "run_failed" and events[-1].cancelled
    state = RunState.replay(events)
    assert state.status == "cancelled"
    assert state.calls and all(span.end is not None and span.outcome == "cancelled" for span in state.calls)
    assert {b.status for b in state.batches} <= {"pending", "cancelled"} and "cancelled" in {b.status for b in state.batches}
