import asyncio

import pytest

from graphrag_core import (
    AllMapBatchesFailed,
    FatalModelError,
    MapOutputError,
    RetryableModelError,
    ScriptedChatModel,
    SummaryBatch,
    run_global_map,
)
from graphrag_core.events import MapBatchFailed, MapBatchRetried, MapBatchSucceeded


def batches(n):
    return [SummaryBatch(content=f"[Community ID: {i} | summary part 1]\ntext {i}", community_ids=(str(i),)) for i in range(n)]


def batch_of(request):
    data = request.messages[-1].content
    return int(data.split("[Community ID: ")[1].split(" ")[0])


def run(coro):
    return asyncio.run(coro)


def test_never_more_calls_in_flight_than_the_concurrency():
    model = ScriptedChatModel(lambda r: '{"answer": "a", "usefulness": 10}', latency=lambda r: 0.001 * (batch_of(r) % 5))
    result = run(run_global_map("q", batches(40), model, concurrency=3))
    assert model.max_in_flight == 3
    assert model.calls == 40
    assert len(result.answers) == 40


def test_concurrency_capped_by_batch_count():
    model = ScriptedChatModel('{"answer": "a", "usefulness": 10}', latency=0.01)
    run(run_global_map("q", batches(2), model, concurrency=16))
    assert model.max_in_flight == 2


def test_answers_come_back_in_batch_order_whatever_the_completion_order():
    # later batches finish first: each call waits until the next batch's call has returned
    # (no timing involved)
    finished: dict[int, asyncio.Event] = {}
    order: list[int] = []

    async def reply(request):  # type: ignore[no-untyped-def]
        i = batch_of(request)
        finished.setdefault(i, asyncio.Event())
        if i < 7:
            await finished.setdefault(i + 1, asyncio.Event()).wait()
        order.append(i)
        finished[i].set()
        return f'{{"answer": "b{i}", "usefulness": {i + 1}}}'

    model = ScriptedChatModel(reply)
    result = run(run_global_map("q", batches(8), model, concurrency=8))
    assert order == list(range(7, -1, -1))
    assert [a.answer for a in result.answers] == [f"b{i}" for i in range(8)]
    assert [a.community_ids for a in result.answers] == [(str(i),) for i in range(8)]
    assert [a.batch_index for a in result.answers] == list(range(8))


def test_one_retry_then_success():
    seen: dict[int, int] = {}

    def reply(request):
        i = batch_of(request)
        seen[i] = seen.get(i, 0) + 1
        if i == 1 and seen[i] == 1:
            return RuntimeError("connection reset")
        return '{"answer": "ok", "usefulness": 50}'

    events = []
    result = run(run_global_map("q", batches(3), ScriptedChatModel(reply), concurrency=2, on_event=events.append))
    assert seen == {0: 1, 1: 2, 2: 1}
    assert result.errors == [] and result.failures == []
    retried = [e for e in events if isinstance(e, MapBatchRetried)]
    assert [(e.batch_index, e.attempt, e.error) for e in retried] == [(1, 2, "connection reset")]
    succeeded = {e.batch_index: e.attempt for e in events if isinstance(e, MapBatchSucceeded)}
    assert succeeded == {0: 1, 1: 2, 2: 1}


def test_invalid_output_counts_as_a_failed_attempt():
    replies = iter(["garbage", '{"answer": "fixed", "usefulness": 70}'])
    model = ScriptedChatModel(lambda r: next(replies))
    result = run(run_global_map("q", batches(1), model, concurrency=1))
    assert model.calls == 2
    assert result.answers[0].answer == "fixed"


def test_a_batch_failing_twice_is_kept_as_an_error():
    def reply(request):
        if batch_of(request) == 2:
            return '{"answer": "x", "usefulness": "high"}'
        return '{"answer": "fine", "usefulness": 60}'

    events = []
    model = ScriptedChatModel(reply)
    result = run(run_global_map("q", batches(4), model, concurrency=2, on_event=events.append))
    assert model.calls == 5  # 3 successes + 2 attempts of batch 2
    assert [a.batch_index for a in result.answers] == [0, 1, 3]
    assert len(result.errors) == 1 and isinstance(result.errors[0], MapOutputError)
    failure = result.failures[0]
    assert (failure.batch_index, failure.community_ids, failure.attempts) == (2, ("2",), 2)
    # issue 16: the error a person reads quotes the reply's start after the spec's exact message
    assert failure.error == (
        "Global Map output contains an invalid answer or usefulness score. "
        """The reply began: '{"answer": "x", "usefulness": "high"}'"""
    )
    assert str(result.errors[0]) == "Global Map output contains an invalid answer or usefulness score."
    assert result.usefulness == [60, 60, None, 60]
    assert [e.batch_index for e in events if isinstance(e, MapBatchFailed)] == [2]


def test_every_batch_failing_raises_with_each_last_error():
    def reply(request):
        return ValueError(f"boom {batch_of(request)}")

    model = ScriptedChatModel(reply)
    with pytest.raises(AllMapBatchesFailed) as info:
        run(run_global_map("q", batches(3), model, concurrency=2))
    group = info.value
    assert isinstance(group, ExceptionGroup)
    assert group.message == "Every Global Map batch failed."
    assert [str(e) for e in group.exceptions] == ["boom 0", "boom 1", "boom 2"]
    assert model.calls == 6


def test_fatal_model_error_is_not_retried_and_retry_after_is_honoured():
    calls = {"fatal": 0, "limited": 0}

    def reply(request):
        if batch_of(request) == 0:
            calls["fatal"] += 1
            return FatalModelError("401 unauthorized", status_code=401)
        calls["limited"] += 1
        if calls["limited"] == 1:
            return RetryableModelError("429 rate limited", retry_after=0.05, status_code=429)
        return '{"answer": "ok", "usefulness": 5}'

    events = []
    result = run(run_global_map("q", batches(2), ScriptedChatModel(reply), concurrency=1, on_event=events.append))
    assert calls == {"fatal": 1, "limited": 2}
    assert result.failures[0].attempts == 1
    retry = next(e for e in events if isinstance(e, MapBatchRetried))
    assert retry.delay_s == pytest.approx(0.05)
    success = next(e for e in events if isinstance(e, MapBatchSucceeded))
    assert success.at - retry.at >= 0.04


def test_map_requests_carry_the_query_and_the_output_reserve():
    model = ScriptedChatModel('{"answer": "a", "usefulness": 1}')
    run(run_global_map("What is a hack?", batches(1), model, concurrency=1, output_reserve=300))
    request = model.requests[0]
    assert request.purpose == "map"
    assert request.max_tokens == 300
    assert "What is a hack?" in request.messages[-1].content
    assert "text 0" in request.messages[-1].content


def test_no_batches_no_calls():
    model = ScriptedChatModel([])
    result = run(run_global_map("q", [], model, concurrency=4))
    assert result.answers == [] and model.calls == 0


def test_plain_batches_with_integer_ids_and_dict_replies():
    class Batch:
        def __init__(self, content, community_ids):
            self.content, self.community_ids = content, community_ids

    model = ScriptedChatModel(lambda r: {"answer": "from a dict", "usefulness": 30})
    result = run(run_global_map("q", [Batch("[Community ID: 7 | summary part 1]\nx", [7, 8])], model, concurrency=1))
    assert result.answers[0].community_ids == ("7", "8")
    assert result.answers[0].answer == "from a dict"


def test_the_events_never_show_more_calls_in_flight_than_the_limit():
    # issue 16: the call timeline read "at most 5 in flight (limit 4)" because a call was marked
    # done when its event was emitted, after its slot had gone to the next call. The events carry
    # the call's own end, read before the slot is released. A counting clock makes every read a
    # distinct, ordered instant, so the check does not depend on timing.
    from graphrag_app.explore.charts import call_lanes
    from graphrag_core.events import BatchesPlanned, PlannedBatch
    from graphrag_core.state import RunState

    ticks = iter(range(1_000_000))
    events = []
    model = ScriptedChatModel(
        lambda r: '{"answer": "a", "usefulness": 10}' if batch_of(r) % 7 else "not json",
        latency=lambda r: 0.001 * (batch_of(r) % 3),
    )
    result = run(run_global_map("q", batches(30), model, concurrency=4, on_event=events.append, clock=lambda: float(next(ticks))))
    assert result.failures  # failed attempts (retried, then failed) close their spans too
    state = RunState()
    state.apply(BatchesPlanned(batches=tuple(PlannedBatch(index=i, community_ids=(str(i),), token_estimate=1) for i in range(30)), concurrency=4, map_prompt_budget=1))
    for event in events:
        state.apply(event)
    assert all(span.end is not None and span.end > span.start for span in state.calls)
    assert max(call_lanes(state.calls, state.elapsed_s)) + 1 == 4


def test_freed_slots_go_to_the_waiting_calls_before_any_finished_reply_is_read():
    # the map stays near ceil(batches/concurrency) x latency only if a freed slot is handed on at
    # once: when several calls return together, every waiting call starts before the first of
    # their replies is parsed and reported (before, each hand-off waited for the previous
    # call's parsing, events and next request, ~1 ms per round at concurrency 16).
    from graphrag_core.events import MapBatchStarted

    events = []
    model = ScriptedChatModel('{"answer": "a", "usefulness": 10}')  # no latency: calls started together return together
    run(run_global_map("q", batches(4), model, concurrency=2, on_event=events.append))
    order = [(type(e).__name__, e.batch_index) for e in events]
    first_reply = min(i for i, (kind, _) in enumerate(order) if kind == "MapBatchSucceeded")
    started_before = {index for kind, index in order[:first_reply] if kind == MapBatchStarted.__name__}
    assert started_before == {0, 1, 2, 3}, order


def test_a_retried_attempt_names_its_error_class_so_the_call_list_can_say_why():
    """``MapBatchRetried.error_type`` was never set by the retry loop: the call list then read a
    retried attempt's reason from its wording alone."""
    seen: dict[int, int] = {}

    def reply(request):
        i = batch_of(request)
        seen[i] = seen.get(i, 0) + 1
        if seen[i] == 1:
            return RetryableModelError("connection reset") if i == 0 else "not json at all"
        return '{"answer": "ok", "usefulness": 50}'

    events = []
    run(run_global_map("q", batches(2), ScriptedChatModel(reply), concurrency=1, on_event=events.append))
    retried = {e.batch_index: e.error_type for e in events if isinstance(e, MapBatchRetried)}
    assert retried == {0: "RetryableModelError", 1: "MapOutputError"}
