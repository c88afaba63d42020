"""A model reply is bounded, and deleting runs gives their space back (issue 16)."""

from __future__ import annotations

import asyncio

import pytest

from graphrag_core import ScriptedChatModel, retrieve_global
from graphrag_core.errors import ReplyTooLongError, describe_error
from graphrag_core.events import MapBatchFailed, MapBatchRetried
from graphrag_core.llm.base import ChatMessage, ChatRequest
from graphrag_core.llm.base import MAX_REPLY_CHARS
from graphrag_core.retry import check_reply_size
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.history import RunRecord, RunStore

from .factories import small_index

GOOD = '{"answer": "points", "usefulness": 50}'


def request(max_tokens):
    return ChatRequest(purpose="map", messages=(ChatMessage(role="user", content="q"),), max_tokens=max_tokens)


def test_a_reply_far_beyond_max_tokens_fails_with_a_readable_error():
    check_reply_size(request(100), "x" * 3200)  # 800 tokens: 8 x max_tokens is still accepted
    with pytest.raises(ReplyTooLongError) as info:
        check_reply_size(request(100), "x" * 3204)
    message = describe_error(info.value)
    assert message.startswith("The model's reply is far longer than asked (3,204 characters; max_tokens was 100), so it was refused.")
    assert "The reply began: 'xxxx" in message and len(message) < 400
    with pytest.raises(ReplyTooLongError, match="no max_tokens was set"):
        check_reply_size(request(None), "y" * (MAX_REPLY_CHARS + 1))


def test_a_huge_reply_is_refused_not_stored(tmp_path):
    huge = '{"answer": "' + "spam " * 2_000_000 + '", "usefulness": 90}'  # 10 MB
    calls = {"n": 0}

    def reply(r):
        calls["n"] += 1
        return huge if r.purpose == "map" and calls["n"] == 1 else (GOOD if r.purpose == "map" else '{"answer": "Final."}')

    events: list = []
    result = asyncio.run(
        retrieve_global(small_index(), GlobalSearchRequest(query="What?", seed=1), ScriptedChatModel(reply), on_event=events.append)
    )
    assert result.answer == "Final."
    retried = [e for e in events if isinstance(e, MapBatchRetried | MapBatchFailed)]
    assert retried and retried[0].error.startswith("The model's reply is far longer than asked")
    store = RunStore(tmp_path / "runs.sqlite")
    store.save(RunRecord.from_events(events, index_name="small"))
    size = sum(p.stat().st_size for p in tmp_path.iterdir())
    assert size < 1_000_000


def test_deleting_runs_gives_the_space_back(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    events: list = []
    asyncio.run(retrieve_global(small_index(), GlobalSearchRequest(query="What?", seed=1), ScriptedChatModel(
        lambda r: GOOD if r.purpose == "map" else '{"answer": "x"}'), on_event=events.append))
    kept = RunRecord.from_events(events, index_name="small")
    store.save(kept)
    small = sum(p.stat().st_size for p in tmp_path.iterdir())
    bulky = [
        RunRecord.from_events(events, index_name="small").model_copy(update={"run_id": f"bulky{i}", "label": "z" * 1_500_000})
        for i in range(3)
    ]
    for record in bulky:
        store.save(record)
    big = sum(p.stat().st_size for p in tmp_path.iterdir())
    assert big > small + 4_000_000
    for record in bulky:
        assert store.delete(record.run_id)
    after = sum(p.stat().st_size for p in tmp_path.iterdir())
    assert after < small + 1_200_000  # what is left is below the reclaim threshold
    assert store.get(kept.run_id) is not None
