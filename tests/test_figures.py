"""One function of a run's events gives its figures, however the run ended."""

import asyncio
import json

import pytest

from graphrag_app.compare import charts as cc
from graphrag_core import GlobalSearchRequest, RetryableModelError, ScriptedChatModel, retrieve_global
from graphrag_core.cache import MemoryMapCache
from graphrag_core.errors import GraphRAGError
from graphrag_core.events import RunFailed
from graphrag_core.figures import STOPPED_MESSAGE, RunFigures, run_figures
from graphrag_core.llm.base import ChatResponse, TokenUsage
from graphrag_core.history import RunRecord
from graphrag_core.report import record_to_markdown
from tests.factories import small_index

QUERY = "Who are the hackers?"


def answer(request):
    if request.purpose == "reduce":
        return '{"answer": "Hackers explore systems."}'
    return json.dumps({"answer": "Something.", "usefulness": 50})


class UsageModel(ScriptedChatModel):
    """Reports 10 prompt and 2 completion tokens per call."""

    async def complete(self, request):
        response = await super().complete(request)
        return ChatResponse(text=response.text, usage=TokenUsage(prompt_tokens=10, completion_tokens=2))


def run(script=answer, *, cache=None, model=None, **fields):
    events = []
    request = GlobalSearchRequest(query=QUERY, seed=1, map_token_budget=400, map_output_reserve=100, **fields)
    try:
        asyncio.run(retrieve_global(small_index(), request, model or ScriptedChatModel(script), on_event=events.append, cache=cache))
    except GraphRAGError:
        pass
    return events


def citing(request):
    """The reduce cites community 4 and an invented 999 (not in the index)."""
    if request.purpose == "reduce":
        return '{"answer": "Hackers explore systems [Communities: 4, 999]."}'
    return json.dumps({"answer": "Something.", "usefulness": 50})


def test_figures_name_the_cited_and_behind_sets_apart():
    events = run(citing)
    result = events[-1].result
    figures = run_figures(events)
    assert figures.communities_behind == tuple(result.community_ids) and "4" in figures.communities_behind
    assert figures.communities_cited == ("4", "999")  # what the answer cites, not what stood behind it
    assert figures.unsupported_citations == result.diagnostics.unsupported_citation_count == 1
    assert "999" not in figures.communities_behind


def test_completed_run_figures_match_its_diagnostics():
    events = run(model=UsageModel(answer))
    figures = run_figures(events)
    d = events[-1].result.diagnostics
    assert isinstance(figures, RunFigures) and figures.outcome == "completed"
    assert figures.summaries == d.summary_count and figures.batches == d.batch_count > 1
    assert figures.map_calls == d.map_calls and figures.reduce_calls == d.reduce_calls == 1
    assert figures.model_calls == d.batch_count + 1 and figures.cache_hits == 0
    assert figures.usage == d.usage == TokenUsage(prompt_tokens=10 * figures.model_calls, completion_tokens=2 * figures.model_calls)
    assert figures.succeeded_batches == figures.finished_batches == figures.batches
    assert figures.selected_answers == d.selected_answer_count
    assert figures.map_prompt_tokens == sum(d.batch_token_estimates)
    assert figures.communities_behind == tuple(events[-1].result.community_ids)


def test_cache_hits_are_not_model_calls():
    cache = MemoryMapCache()
    run(cache=cache)
    figures = run_figures(run(cache=cache))
    assert figures.map_calls == 0 and figures.cache_hits == figures.batches > 0
    assert figures.model_calls == 1 and figures.calls_if_uncached == figures.batches + 1
    assert figures.cached_prompt_tokens == figures.map_prompt_tokens
    assert figures.tokens_if_uncached.prompt_tokens == figures.map_prompt_tokens


def test_failed_run_counts_its_map_attempts_and_failures():
    events = run(lambda r: RetryableModelError("503 from the server"))
    figures = run_figures(events)
    assert figures.outcome == "failed" and figures.error == "Every Global Map batch failed."
    assert figures.failed_batches == figures.batches == len(figures.failures) > 0
    assert figures.map_calls == 2 * figures.batches and figures.reduce_calls == 0
    assert figures.retried_batches == figures.batches
    assert {f.error for f in figures.failures} == {"503 from the server"}
    assert [f.batch_index for f in figures.failures] == list(range(figures.batches))


def test_partial_and_cut_short_runs():
    events = run()
    cut = events[: next(i for i, e in enumerate(events) if e.kind == "map_batch_succeeded") + 1]
    figures = run_figures(cut)
    assert figures.outcome == "running" and figures.succeeded_batches == 1 and figures.finished_batches == 1
    stopped = run_figures([*cut, RunFailed(at=1.0, error=STOPPED_MESSAGE, error_type="RunCancelled", cancelled=True)])
    assert stopped.outcome == "cancelled" and stopped.stopped and stopped.duration_s == 1.0
    started = {e.batch_index for e in cut if e.kind == "map_batch_started"}
    in_flight = len(started) - 1
    assert stopped.cancelled_batches == in_flight and stopped.finished_batches == 1 + in_flight


def test_compare_metrics_do_not_count_cache_hits_as_model_calls():
    cache = MemoryMapCache()
    run(cache=cache)

    def failing_reduce(request):
        if request.purpose == "reduce":
            raise RetryableModelError("reduce down")
        return answer(request)

    record = RunRecord.from_events(run(failing_reduce, cache=cache), index_name="small")
    assert record.result is None and record.status == "failed"
    metrics = cc.run_metrics(record)
    # the reduce's two attempts (issue 16: each attempt is a model call with its own event);
    # every map answer came from the cache
    assert metrics.model_calls == 2 and record.figures.map_calls == 0
    assert "| cache hits | %d |" % record.figures.batches in record_to_markdown(record)


def test_record_figures_without_events_come_from_the_result():
    events = run()
    record = RunRecord.from_events(events, index_name="small")
    bare = record.model_copy(update={"events": []})
    assert bare.figures.model_calls == record.figures.model_calls
    assert bare.batch_count == record.batch_count and bare.failed_batch_count == record.failed_batch_count


@pytest.mark.parametrize("kind", ["completed", "failed"])
def test_record_counts_read_the_figures(kind):
    script = answer if kind == "completed" else (lambda r: RetryableModelError("503"))
    record = RunRecord.from_events(run(script), index_name="small")
    assert record.status == record.figures.outcome == kind
    assert record.summary().batch_count == record.figures.batches
    assert record.summary().failed_batch_count == record.figures.failed_batches


# -- the live state and the figures are one fold ------------------------------------------------


def _batch_of(request):
    return int(request.messages[-1].content.split("[Community ID: ")[1].split(" ")[0])


def _recorded(kind):
    """The events of a recorded run that ended as ``kind``."""
    from graphrag_core.llm.offline import OfflineChatModel

    if kind == "completed":
        return run(model=UsageModel(answer))
    if kind == "cached":
        cache = MemoryMapCache()
        run(model=UsageModel(answer), cache=cache)
        return run(model=UsageModel(answer), cache=cache)
    if kind == "dynamic":
        events = []
        request = GlobalSearchRequest(query=QUERY, seed=1, community_selection="dynamic")
        asyncio.run(retrieve_global(small_index(), request, OfflineChatModel(), on_event=events.append))
        return events
    if kind == "partial":
        first = {}

        def one_fails(request):
            if request.purpose == "map":
                first.setdefault("batch", _batch_of(request))
                if _batch_of(request) == first["batch"]:
                    return RetryableModelError("503 for this batch")
            return answer(request)

        return run(one_fails)
    if kind == "failed":
        return run(lambda r: RetryableModelError("503 from the server") if r.purpose == "reduce" else answer(r))
    assert kind == "stopped"
    events = []

    async def stop_after_two_answers():
        model = UsageModel(answer, latency=0.01)
        request = GlobalSearchRequest(query=QUERY, seed=1, map_token_budget=400, map_output_reserve=100, map_concurrency=2)

        def on_event(event):
            events.append(event)
            if sum(e.kind == "map_batch_succeeded" for e in events) == 2 and event.kind == "map_batch_succeeded":
                task.cancel()

        task = asyncio.ensure_future(retrieve_global(small_index(), request, model, on_event=on_event))
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(stop_after_two_answers())
    return events


@pytest.mark.parametrize("kind", ["completed", "cached", "dynamic", "partial", "failed", "stopped"])
def test_the_live_state_and_the_run_figures_agree_at_every_event(kind):
    from graphrag_core.state import RunState

    events = _recorded(kind)
    live = RunState()
    for n, event in enumerate(events, start=1):
        live.apply(event)
        figures = run_figures(events[:n])
        assert (live.model_calls, live.usage) == (figures.model_calls, figures.usage), (kind, n, event.kind)
        assert live.finished_batches == figures.finished_batches and len(live.batches) == figures.batches
        assert sum(b.status == "failed" for b in live.batches) == figures.failed_batches
        assert sum(b.cached for b in live.batches) == figures.cache_hits
        assert (live.selection.calls, live.selection.usage) == (figures.rating_calls, figures.rating_usage)
        assert live.error == figures.error and live.summary_count == figures.summaries
    figures = run_figures(events)
    expected = {"cached": "completed", "dynamic": "completed", "stopped": "cancelled"}.get(kind, kind)
    assert figures.outcome == expected
    assert figures.spend.calls == figures.model_calls and figures.spend.calls_as_if_uncached == figures.calls_if_uncached
    if kind == "cached":
        assert figures.cache_hits == figures.batches > 0 and figures.spend.tokens_estimated
    if kind == "dynamic":
        assert figures.rating_calls > 0 and figures.model_calls == figures.rating_calls + figures.map_calls + figures.reduce_calls
    if kind == "partial":
        assert figures.failed_batches == 1 and figures.retried_batches == 1 and figures.failures[0].error == "503 for this batch"
    if kind in ("failed", "stopped"):  # the engine's RunFailed carries the same figures, from the same fold
        failed = events[-1]
        assert isinstance(failed, RunFailed) and failed.cancelled == (kind == "stopped")
        before = run_figures(events[:-1])
        assert (failed.model_calls, failed.usage) == (before.model_calls, before.usage)
        assert failed.batches_done == before.succeeded_batches and failed.batches_failed == before.failed_batches
    if kind == "stopped":
        assert figures.succeeded_batches == 2 and figures.cancelled_batches > 0
