"""The engine's retry loop (issue 16): what is retried, what is counted, how long it waits."""

from __future__ import annotations

import asyncio
import io
import json

import pytest

from graphrag_core import ScriptedChatModel, SummaryBatch, retrieve_global, run_global_map
from graphrag_core.cache import MemoryMapCache
from graphrag_cli.main import main
from graphrag_core.errors import AllMapBatchesFailed, RetryableModelError
from graphrag_core.events import (
    MapBatchFailed,
    MapBatchRetried,
    MapBatchSucceeded,
    ReduceRetried,
    ReduceStarted,
    RunFailed,
)
from graphrag_core.llm.base import ChatResponse, TokenUsage
from graphrag_core.retry import RetryPolicy
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.state import RunState

from . import wait_until
from .factories import small_index


def batches(n: int) -> list[SummaryBatch]:
    return [SummaryBatch(content=f"[Community ID: {i} | summary part 1]\ntext {i}", community_ids=(str(i),)) for i in range(n)]


def batch_of(request) -> int:
    return int(request.messages[-1].content.split("[Community ID: ")[1].split(" ")[0])


GOOD = '{"answer": "points", "usefulness": 50}'


class RecordingSleep:
    """An injected sleep: records each delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


def test_a_failing_event_callback_propagates_and_never_recalls_the_model():
    model = ScriptedChatModel(GOOD)

    def on_event(event):
        if isinstance(event, MapBatchSucceeded):
            raise KeyError("the caller's own bug")

    with pytest.raises(KeyError, match="the caller's own bug"):
        asyncio.run(run_global_map("q", batches(1), model, concurrency=1, on_event=on_event))
    assert model.calls == 1


def test_a_failing_cache_write_is_the_callers_error_not_a_retry():
    class BrokenCache(MemoryMapCache):
        def put(self, key: str, text: str) -> None:
            raise OSError("disk full")

    model = ScriptedChatModel(GOOD)
    with pytest.raises(OSError, match="disk full"):
        asyncio.run(run_global_map("q", batches(1), model, concurrency=1, cache=BrokenCache()))
    assert model.calls == 1


def test_every_attempts_usage_is_counted_even_when_its_reply_did_not_parse():
    replies = iter(
        [
            ChatResponse(text="not json at all", usage=TokenUsage(prompt_tokens=100, completion_tokens=7)),
            ChatResponse(text=GOOD, usage=TokenUsage(prompt_tokens=120, completion_tokens=9)),
        ]
    )
    events: list = []
    model = ScriptedChatModel(lambda r: next(replies))
    result = asyncio.run(run_global_map("q", batches(1), model, concurrency=1, on_event=events.append))
    assert result.calls == 2
    assert result.usage == TokenUsage(prompt_tokens=220, completion_tokens=16)
    retried = next(e for e in events if isinstance(e, MapBatchRetried))
    assert retried.usage == TokenUsage(prompt_tokens=100, completion_tokens=7)
    assert RunState.replay([]).usage == TokenUsage()


def test_the_last_failed_attempts_usage_is_on_the_failure_event():
    usage = TokenUsage(prompt_tokens=10, completion_tokens=3)
    model = ScriptedChatModel(lambda r: ChatResponse(text='{"nope": 1}', usage=usage))
    events: list = []
    with pytest.raises(AllMapBatchesFailed):
        asyncio.run(run_global_map("q", batches(1), model, concurrency=1, on_event=events.append))
    failed = next(e for e in events if isinstance(e, MapBatchFailed))
    assert failed.usage == usage
    assert failed.error.startswith("Global Map output must contain answer and usefulness fields. The reply began: ")


@pytest.mark.parametrize("status", [429, 500, 503])
def test_rate_limits_and_server_errors_without_retry_after_back_off_with_jitter(status: int):
    sleep = RecordingSleep()
    draws = iter([0.0, 1.0])
    policy = RetryPolicy(max_attempts=3, backoff_base_s=2.0, backoff_cap_s=3.0, sleep=sleep, random=lambda: next(draws))
    replies = iter([RetryableModelError("busy", status_code=status)] * 2 + [GOOD])
    events: list = []
    result = asyncio.run(
        run_global_map("q", batches(1), ScriptedChatModel(lambda r: next(replies)), concurrency=1, on_event=events.append, retry_policy=policy)
    )
    assert len(result.answers) == 1
    # attempt 1 -> ceiling 2 s, jitter draw 0 -> 1 s; attempt 2 -> ceiling min(3, 4) = 3 s, draw 1 -> 3 s
    assert sleep.delays == [1.0, 3.0]
    assert [e.delay_s for e in events if isinstance(e, MapBatchRetried)] == [1.0, 3.0]


def test_default_backoff_is_positive_and_capped_and_retry_after_wins():
    policy = RetryPolicy()
    delays = [policy.delay_after(n, RetryableModelError("busy", status_code=429)) for n in range(1, 12)]
    assert all(d > 0 for d in delays)
    assert max(delays) <= policy.backoff_cap_s
    assert policy.delay_after(1, RetryableModelError("busy", retry_after=7.0, status_code=429)) == 7.0
    assert policy.delay_after(1, RetryableModelError("busy", retry_after=999.0, status_code=429)) == policy.retry_after_cap_s
    assert policy.delay_after(1, ValueError("bad reply")) == 0.0


def test_a_batch_waiting_out_a_backoff_frees_its_slot():
    """Concurrency 1: while batch 0 backs off, batch 1's call goes ahead."""
    called: list[int] = []
    seen_during_sleep: list[list[int]] = []

    async def sleep(delay: float) -> None:
        for _ in range(50):  # give the other batch every chance to run
            await asyncio.sleep(0)
        seen_during_sleep.append(list(called))

    first = {"done": False}

    def reply(request):
        i = batch_of(request)
        called.append(i)
        if i == 0 and not first["done"]:
            first["done"] = True
            return RetryableModelError("busy", status_code=429)
        return GOOD

    model = ScriptedChatModel(reply)
    result = asyncio.run(run_global_map("q", batches(2), model, concurrency=1, retry_policy=RetryPolicy(sleep=sleep)))
    assert len(result.answers) == 2
    assert seen_during_sleep == [[0, 1]]
    assert model.max_in_flight == 1


def index_and_request(**fields):
    index = small_index()
    return index, GlobalSearchRequest(query="What matters?", seed=1, **fields)


def test_the_reduce_gets_the_same_retry_policy_events_and_usage_accounting():
    sleep = RecordingSleep()
    reduce_replies = iter(
        [
            RetryableModelError("overloaded", status_code=503),
            ChatResponse(text='{"answer": "Final."}', usage=TokenUsage(prompt_tokens=40, completion_tokens=5)),
        ]
    )

    def reply(request):
        if request.purpose == "reduce":
            return next(reduce_replies)
        return ChatResponse(text=GOOD, usage=TokenUsage(prompt_tokens=1, completion_tokens=1))

    index, request = index_and_request()
    events: list = []
    result = asyncio.run(
        retrieve_global(index, request, ScriptedChatModel(reply), on_event=events.append, retry_policy=RetryPolicy(sleep=sleep))
    )
    assert result.answer == "Final."
    assert result.diagnostics.reduce_calls == 2
    retried = [e for e in events if isinstance(e, ReduceRetried)]
    assert [(e.attempt, e.error) for e in retried] == [(2, "overloaded")]
    assert sleep.delays and sleep.delays[0] > 0  # a 503 without Retry-After backs off
    assert [e.attempt for e in events if isinstance(e, ReduceStarted)] == [1, 2]
    map_usage = sum(e.usage.total_tokens for e in events if isinstance(e, MapBatchSucceeded))
    assert result.diagnostics.usage.total_tokens == map_usage + 45
    assert RunState.replay(events).usage == result.diagnostics.usage


def test_a_failed_run_records_the_tokens_it_spent():
    def reply(request):
        if request.purpose == "reduce":
            return ChatResponse(text="no json", usage=TokenUsage(prompt_tokens=30, completion_tokens=4))
        return ChatResponse(text=GOOD, usage=TokenUsage(prompt_tokens=10, completion_tokens=2))

    index, request = index_and_request()
    events: list = []
    with pytest.raises(ValueError, match="LLM output is not valid JSON"):
        asyncio.run(retrieve_global(index, request, ScriptedChatModel(reply), on_event=events.append))
    failed = events[-1]
    assert isinstance(failed, RunFailed)
    batches_done = failed.batches_done
    assert batches_done >= 1 and failed.batches_failed == 0
    assert failed.usage == TokenUsage(prompt_tokens=10 * batches_done + 60, completion_tokens=2 * batches_done + 8)
    assert failed.model_calls == batches_done + 2


def test_a_cancelled_run_records_the_tokens_it_spent():
    calls = {"n": 0}

    async def reply(request):
        calls["n"] += 1
        if calls["n"] == 1:
            return ChatResponse(text=GOOD, usage=TokenUsage(prompt_tokens=10, completion_tokens=2))
        await asyncio.sleep(30)  # the run is stopped while this call is in flight
        return GOOD

    index, request = index_and_request(map_token_budget=800, map_concurrency=4)
    events: list = []

    async def stop_after_first_answer():
        task = asyncio.ensure_future(retrieve_global(index, request, ScriptedChatModel(reply), on_event=events.append))
        while not any(isinstance(e, MapBatchSucceeded) for e in events):
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(stop_after_first_answer())
    failed = events[-1]
    assert isinstance(failed, RunFailed) and failed.cancelled
    assert failed.usage == TokenUsage(prompt_tokens=10, completion_tokens=2)
    assert failed.batches_done == 1


def test_query_json_prints_a_result_for_a_failed_run(tmp_path):
    from graphrag_core.index import save_index

    save_index(small_index(), tmp_path / "idx")
    out, err = io.StringIO(), io.StringIO()
    model = ScriptedChatModel(lambda r: ChatResponse(text="garbage", usage=TokenUsage(prompt_tokens=5, completion_tokens=1)))
    code = main(
        ["query", str(tmp_path / "idx"), "What matters?", "--json", "--no-store", "--no-cache"],
        stdout=out, stderr=err, environ={}, model=model,
    )
    assert code != 0
    payload = json.loads(out.getvalue())
    assert payload["status"] == "failed"
    assert payload["error"] == "Every Global Map batch failed."
    assert payload["failed_batches"] and payload["failed_batches"][0]["error"].startswith("LLM output is not valid JSON: garbage")
    assert payload["figures"]["model_calls"] == model.calls
    assert payload["figures"]["usage"] == {"prompt_tokens": 5 * model.calls, "completion_tokens": model.calls}
    assert "Every Global Map batch failed." in err.getvalue()


def test_a_retry_after_an_invalid_reply_says_what_was_wrong_and_the_expected_shape():
    bad = '{"answer": {"usefulness": 0.1, "descriptive_text": "tea"}}'
    replies = iter([bad, GOOD])
    model = ScriptedChatModel(lambda r: next(replies))
    result = asyncio.run(run_global_map("q", batches(1), model, concurrency=1))
    assert len(result.answers) == 1
    first, second = model.requests
    assert first != second
    assert second.messages[-1] == first.messages[-1]  # the question and data stay the last message
    system = second.messages[0].content
    assert system.startswith(first.messages[0].content)
    assert bad in system
    assert "Global Map output must contain answer and usefulness fields." in system
    assert '"required": ["answer", "usefulness"]' in system  # the expected shape, as a JSON Schema


def test_a_retry_after_a_model_error_resends_the_same_request():
    replies = iter([RetryableModelError("reset", retry_after=0.0), GOOD])
    model = ScriptedChatModel(lambda r: next(replies))
    asyncio.run(run_global_map("q", batches(1), model, concurrency=1))
    assert model.requests[0] == model.requests[1]


def test_every_invalid_output_error_quotes_the_reply_start():
    from graphrag_core.errors import describe_error
    from graphrag_core.parsing import parse_map_output, parse_reduce_output

    cases = [
        (parse_map_output, '{"answer": {"usefulness": 0.1}}', "Global Map output must contain answer and usefulness fields."),
        (parse_map_output, '{"answer": "x", "usefulness": 101}', "Global Map output contains an invalid answer or usefulness score."),
        (parse_reduce_output, '{"text": "x"}', "Global Reduce output must contain an answer field."),
        (parse_reduce_output, '{"answer": "  "}', "Global Reduce output contains an invalid answer."),
    ]
    for parse, reply, message in cases:
        with pytest.raises(ValueError) as info:
            parse(reply)
        assert str(info.value) == message  # the spec's exact message stays matchable
        assert describe_error(info.value) == f"{message} The reply began: {reply!r}"
    with pytest.raises(ValueError) as info:
        parse_map_output("x" * 500)
    assert describe_error(info.value) == f"LLM output is not valid JSON: {'x' * 200}..."


def test_a_failed_reduce_reports_the_reply_start_in_its_events():
    from graphrag_core.events import ReduceFailed

    def reply(request):
        return GOOD if request.purpose == "map" else '{"answer": "   "}'

    index, request = index_and_request()
    events: list = []
    with pytest.raises(ValueError) as info:
        asyncio.run(retrieve_global(index, request, ScriptedChatModel(reply), on_event=events.append))
    assert str(info.value) == "Global Reduce output contains an invalid answer."
    expected = """Global Reduce output contains an invalid answer. The reply began: '{"answer": "   "}'"""
    failed = next(e for e in events if isinstance(e, ReduceFailed))
    assert failed.error == expected and failed.attempts == 2
    assert events[-1].error == expected


def test_a_run_stopped_in_the_app_records_the_tokens_it_spent(tmp_path):

    from graphrag_app.jobs import start_run
    from graphrag_core.history import RunStore

    calls = {"n": 0}

    async def reply(request):
        calls["n"] += 1
        if calls["n"] == 1:
            return ChatResponse(text=GOOD, usage=TokenUsage(prompt_tokens=21, completion_tokens=4))
        await asyncio.sleep(30)
        return GOOD

    index, request = index_and_request(map_token_budget=800, map_concurrency=2)
    handle = start_run(index, request, lambda: ScriptedChatModel(reply), store_path=tmp_path / "runs.sqlite3", index_name="small")
    wait_until(lambda: any(isinstance(e, MapBatchSucceeded) for e in handle.events_since(0)), "a finished batch")
    handle.request_stop()
    assert handle.wait(20)
    failed = handle.events_since(0)[-1]
    assert isinstance(failed, RunFailed) and failed.cancelled
    assert failed.usage == TokenUsage(prompt_tokens=21, completion_tokens=4) and failed.batches_done == 1
    record = RunStore(tmp_path / "runs.sqlite3").get(handle.run_id)
    assert record is not None and record.status == "cancelled" and record.events[-1] == failed


def test_run_figures_count_the_tokens_of_failed_attempts_too():
    from graphrag_core.figures import run_figures

    replies = iter(
        [ChatResponse(text="garbage", usage=TokenUsage(prompt_tokens=9, completion_tokens=1))]
        + [ChatResponse(text=GOOD, usage=TokenUsage(prompt_tokens=10, completion_tokens=2))] * 20
    )

    def reply(request):
        return next(replies) if request.purpose == "map" else ChatResponse(text='{"answer": "x"}', usage=TokenUsage(prompt_tokens=5, completion_tokens=1))

    index, request = index_and_request()
    events: list = []
    result = asyncio.run(retrieve_global(index, request, ScriptedChatModel(reply), on_event=events.append))
    figures = run_figures(events)
    assert figures.usage == result.diagnostics.usage
    assert run_figures(events[:-1]).usage.prompt_tokens >= 9  # before the result arrives, the failed attempt counts


def test_a_batch_reading_the_cache_holds_no_slot():
    """Concurrency 1: while batch 0's cache read is still going on, batch 1's call goes ahead."""
    import threading

    called = threading.Event()

    class SlowCache(MemoryMapCache):
        reads = 0
        lock = threading.Lock()

        def get(self, key: str):
            with self.lock:
                self.reads += 1
                first = self.reads == 1
            if first:  # the first read waits until the other batch has called the model
                assert called.wait(10), "no call could start while a cache read was going on"
            return super().get(key)

    def reply(request):
        called.set()
        return GOOD

    model = ScriptedChatModel(reply)
    result = asyncio.run(run_global_map("q", batches(2), model, concurrency=1, cache=SlowCache()))
    assert len(result.answers) == 2 and model.calls == 2
