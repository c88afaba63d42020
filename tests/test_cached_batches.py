"""A map batch answered from the cache is its own event (``MapBatchCached``): the fold, the
figures, the call records and the timeline count it as a cache hit, never as a call taken back;
runs recorded with the old pair of events (a start, then a cached success) read the same."""

from __future__ import annotations

import asyncio
import json

from graphrag_core.bundle import bundle_to_json, make_bundle, read_bundle
from graphrag_core.cache import MemoryMapCache
from graphrag_core.calls import batch_calls, why_no_answer
from graphrag_core.events import (
    Event,
    MapBatchCached,
    MapBatchStarted,
    MapBatchSucceeded,
    events_from_json,
    events_to_json,
    with_cache_hits,
)
from graphrag_core.figures import run_figures
from graphrag_core.history.records import RunRecord
from graphrag_core.llm.scripted import ScriptedChatModel
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.search import retrieve_global
from graphrag_core.state import RunState

from .factories import make_index

REQUEST = GlobalSearchRequest(query="What matters?", seed=3, map_token_budget=600, map_output_reserve=0)


def several_batches():  # type: ignore[no-untyped-def]
    return make_index(gamma="The harbour.", repeat=40)  # three batches at this budget


def reply(request):  # type: ignore[no-untyped-def]
    if request.purpose == "map":
        return '{"answer": "A point.", "usefulness": 50}'
    return '{"answer": "The answer."}'


def first_and_cached_rerun() -> tuple[list[Event], list[Event]]:
    cache = MemoryMapCache()
    first: list[Event] = []
    rerun: list[Event] = []
    asyncio.run(retrieve_global(several_batches(), REQUEST, ScriptedChatModel(reply), cache=cache, on_event=first.append))
    asyncio.run(retrieve_global(several_batches(), REQUEST, ScriptedChatModel(reply), cache=cache, on_event=rerun.append))
    return first, rerun


def as_recorded_before(events: list[Event]) -> list[Event]:
    """The events as this engine recorded them before ``MapBatchCached``: a start, then a
    success marked ``cached``."""
    old: list[Event] = []
    for event in events:
        if isinstance(event, MapBatchCached):
            old.append(MapBatchStarted(at=event.at - event.duration_s, batch_index=event.batch_index, attempt=1, messages=event.messages))
            old.append(
                MapBatchSucceeded(
                    at=event.at, batch_index=event.batch_index, answer=event.answer, usefulness=event.usefulness, attempt=1,
                    duration_s=event.duration_s, cached=True, raw_reply=event.raw_reply,
                )
            )
        else:
            old.append(event)
    return old


def test_a_cache_hit_is_one_cached_event_and_no_call() -> None:
    first, rerun = first_and_cached_rerun()
    batches = run_figures(first).batches
    assert batches > 1
    cached = [e for e in rerun if isinstance(e, MapBatchCached)]
    assert len(cached) == batches and {e.batch_index for e in cached} == set(range(batches))
    assert not any(isinstance(e, (MapBatchStarted, MapBatchSucceeded)) for e in rerun)
    assert all(e.messages and e.raw_reply and e.duration_s >= 0 for e in cached)  # what it answered, and with what


def test_the_fold_of_a_cached_rerun_never_counts_a_call_it_takes_back() -> None:
    _, rerun = first_and_cached_rerun()
    state = RunState()
    seen = []
    for event in rerun:
        state.apply(event)
        seen.append(state.map_calls)
    assert seen == [0] * len(rerun)  # never up then down: nothing to compensate
    assert all(b.cached and b.status == "done" and b.attempts == 1 and b.usage is None for b in state.batches)
    assert [span.outcome for span in state.calls] == ["cached"] * len(state.batches)
    assert all(span.end is not None and span.end >= span.start for span in state.calls)


def test_a_cached_rerun_has_the_figures_of_its_first_run_less_the_map_calls() -> None:
    first, rerun = first_and_cached_rerun()
    before, after = run_figures(first), run_figures(rerun)
    assert (after.map_calls, after.cache_hits) == (0, before.batches)
    assert after.model_calls == before.reduce_calls == after.reduce_calls == 1
    assert after.calls_if_uncached == before.model_calls
    assert after.cached_prompt_tokens == sum(before.batch_token_estimates)
    assert after.spend.cache_hits == before.batches and after.spend.tokens_estimated
    assert (after.outcome, after.succeeded_batches, after.candidates) == (before.outcome, before.succeeded_batches, before.candidates)


def test_the_call_records_show_a_cached_batch_with_its_messages_and_reply() -> None:
    _, rerun = first_and_cached_rerun()
    calls = batch_calls(rerun)
    assert calls and all(c.status == "cached" and c.messages and len(c.attempts) == 1 for c in calls)
    attempt = calls[0].attempts[0]
    assert (attempt.outcome, attempt.answer, attempt.usefulness, attempt.usage) == ("cached", "A point.", 50, None)
    assert attempt.raw_reply == '{"answer": "A point.", "usefulness": 50}'
    assert why_no_answer(rerun) == []


def test_old_event_lists_read_as_cached_events_and_replay_to_the_same_figures() -> None:
    _, rerun = first_and_cached_rerun()
    old = as_recorded_before(rerun)
    assert len(old) > len(rerun)
    assert with_cache_hits(old) == rerun  # the pair becomes the event it stands for, in place
    assert with_cache_hits(rerun) == rerun
    assert events_from_json(events_to_json(old)) == rerun
    assert run_figures(old) == run_figures(rerun)
    assert RunState.replay(old).map_calls == 0
    assert batch_calls(old) == batch_calls(rerun)


def test_a_stored_record_and_a_bundle_with_old_events_read_the_same() -> None:
    _, rerun = first_and_cached_rerun()
    old = as_recorded_before(rerun)
    record = RunRecord.from_events(rerun, index_name="small")
    old_json = record.model_dump_json().replace(events_to_json(rerun), events_to_json(old))
    assert events_to_json(old) in old_json
    from_old = RunRecord.model_validate_json(old_json)
    assert from_old.events == rerun and from_old.figures == record.figures
    document = json.loads(bundle_to_json(make_bundle(record)))
    document["events"] = json.loads(events_to_json(old))
    reread = read_bundle(json.dumps(document), source="old.bundle.json")
    assert reread.events == rerun and reread.to_record().figures == record.figures
