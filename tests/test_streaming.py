"""The reduce streams its answer as it is written (issue 16): events carry the pieces, a stored
run replays them, the command line prints them as they come."""

from __future__ import annotations

import asyncio
import io
import json

import pytest

from graphrag_core import retrieve_global
from graphrag_cli.progress import ProgressPrinter
from graphrag_core.events import ReduceAnswerDelta, ReduceRetried, events_from_json, events_to_json
from graphrag_core.llm.base import ChatResponse, TokenUsage
from graphrag_core.llm.openai_model import OpenAIChatModel
from graphrag_core.llm.settings import ModelSettings
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.state import RunState

from .factories import small_index
from .openai_server import completion_body, openai_server

FINAL = 'Hackers explore systems; wizards know them. "Kludges" are ugly fixes.\n[Communities: 3, 4]'


def chunk(content=None, usage=None):
    body = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": []}
    if content is not None:
        body["choices"] = [{"index": 0, "delta": {"content": content}, "finish_reason": None}]
    if usage is not None:
        body["usage"] = usage
    return body


def split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def handler(path, body):
    if body.get("stream"):
        reply = json.dumps({"answer": FINAL})
        return 200, [chunk(p) for p in split(reply, 5)] + [chunk(usage={"prompt_tokens": 300, "completion_tokens": 25, "total_tokens": 325})]
    return 200, completion_body('{"answer": "points", "usefulness": 60}', prompt_tokens=100, completion_tokens=10)


def test_the_reduce_streams_pieces_that_replay_to_the_answer():
    events: list = []
    with openai_server(handler) as server:
        model = OpenAIChatModel(ModelSettings(provider="openai", base_url=server.base_url, model="m"))
        result = asyncio.run(retrieve_global(small_index(), GlobalSearchRequest(query="Who?", seed=1), model, on_event=events.append))
        streamed = [b for b in server.bodies() if b.get("stream")]
    assert result.answer == FINAL.strip()
    assert len(streamed) == 1 and streamed[0]["stream_options"] == {"include_usage": True} and streamed[0]["messages"]
    deltas = [e for e in events if isinstance(e, ReduceAnswerDelta)]
    assert len(deltas) > 5 and "".join(d.text for d in deltas) == FINAL
    map_calls = result.diagnostics.map_calls
    assert result.diagnostics.usage == TokenUsage(prompt_tokens=100 * map_calls + 300, completion_tokens=10 * map_calls + 25)
    # a stored run replays the same way: the draft is rebuilt from the stored pieces
    replayed = events_from_json(events_to_json(events))
    partial = RunState.replay(replayed[: replayed.index(deltas[3]) + 1])
    assert partial.answer_draft == "".join(d.text for d in deltas[:4])
    assert RunState.replay(replayed).answer_draft == FINAL


class StreamingFake:
    """A streaming model whose reduce replies are scripted per attempt."""

    identity = "streaming-fake"

    def __init__(self, reduce_replies):
        self.reduce_replies = list(reduce_replies)
        self.reduce_calls = 0

    async def complete(self, request):
        return ChatResponse(text='{"answer": "points", "usefulness": 60}')

    async def complete_streaming(self, request, on_text):
        self.reduce_calls += 1
        reply = self.reduce_replies.pop(0)
        for piece in split(reply, 4):
            on_text(piece)
            await asyncio.sleep(0)
        return ChatResponse(text=reply)


def test_a_retried_streaming_reduce_starts_its_draft_over():
    events: list = []
    model = StreamingFake(['{"answer": 42, "broken": "yes"}', json.dumps({"answer": "Second try."})])
    result = asyncio.run(retrieve_global(small_index(), GlobalSearchRequest(query="Who?", seed=1), model, on_event=events.append))
    assert result.answer == "Second try." and model.reduce_calls == 2
    assert any(isinstance(e, ReduceRetried) for e in events)
    assert RunState.replay(events).answer_draft == "Second try."


def test_a_failing_callback_during_the_stream_propagates_and_is_not_retried():
    model = StreamingFake([json.dumps({"answer": "Streamed."})] * 2)

    def on_event(event):
        if isinstance(event, ReduceAnswerDelta):
            raise RuntimeError("the page went away")

    with pytest.raises(RuntimeError, match="the page went away"):
        asyncio.run(retrieve_global(small_index(), GlobalSearchRequest(query="Who?", seed=1), model, on_event=on_event))
    assert model.reduce_calls == 1


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_command_line_prints_the_answer_as_it_comes_on_a_terminal():
    events: list = []
    asyncio.run(
        retrieve_global(small_index(), GlobalSearchRequest(query="Who?", seed=1), StreamingFake([json.dumps({"answer": FINAL})]), on_event=events.append)
    )
    out, err = Terminal(), io.StringIO()
    printer = ProgressPrinter(err, enabled=True, answer_stream=out)
    seen = []
    for event in events:
        printer(event)
        if isinstance(event, ReduceAnswerDelta):
            seen.append(out.getvalue())
    assert seen[0] != seen[-1] and seen[-1] == FINAL  # it grew piece by piece
    assert printer.streamed_answer == FINAL


def test_the_explore_page_shows_the_answer_as_it_is_written():
    from streamlit.testing.v1 import AppTest

    def page():
        import asyncio
        import json

        import streamlit as st

        from graphrag_app.explore import run_view as views
        from graphrag_core import retrieve_global
        from graphrag_core.events import ReduceAnswerDelta
        from graphrag_core.request import GlobalSearchRequest
        from graphrag_core.state import RunState
        from tests.factories import small_index
        from tests.test_streaming import StreamingFake

        events: list = []
        asyncio.run(
            retrieve_global(small_index(), GlobalSearchRequest(query="Who?", seed=1), StreamingFake([json.dumps({"answer": "Hackers explore."})]), on_event=events.append)
        )
        cut = max(i for i, e in enumerate(events) if isinstance(e, ReduceAnswerDelta)) - 1  # mid-answer, still running
        state = RunState.replay(events[: cut + 1])
        st.session_state["draft"] = state.answer_draft
        views.draw_run(st.container(), state, index_key="small", key="live")

    at = AppTest.from_function(page, default_timeout=60).run()
    assert not at.exception
    draft = at.session_state["draft"]
    assert draft and "Hackers explore.".startswith(draft) and draft != "Hackers explore."
    assert draft in [t.value for t in at.text]
    assert "Being written by the model…" in [c.value for c in at.caption]


def test_a_runaway_stream_is_cut_off_with_a_readable_error():
    from graphrag_core.errors import ReplyTooLongError
    from graphrag_core.llm.base import ChatMessage, ChatRequest

    def endless(path, body):
        return 200, [chunk('{"answer": "')] + [chunk("blah " * 220) for _ in range(1000)]

    seen: list[str] = []
    with openai_server(endless) as server:
        model = OpenAIChatModel(ModelSettings(provider="openai", base_url=server.base_url, model="m"))
        request = ChatRequest(purpose="reduce", messages=(ChatMessage(role="user", content="q"),), max_tokens=100)
        with pytest.raises(ReplyTooLongError, match=r"^The model's streamed reply passed 1,000,000 characters"):
            asyncio.run(model.complete_streaming(request, seen.append))
    assert sum(map(len, seen)) <= 1_000_000


def test_explore_runs_against_a_local_openai_compatible_server_and_stores_the_streamed_answer(run_db):
    from graphrag_core.history import RunStore

    from .apptest_support import page

    with openai_server(handler) as server:
        at = page(timeout=120)
        at.query_params.update({"q": "What is a hacker?", "model": "openai", "base_url": server.base_url, "llm": "tiny", "level": "0"})
        at.run()
        at.button(key="run_global_search").click().run()
        assert not at.exception
        shown = [t.value for t in at.text]
        assert "Status: completed" in shown
        # the answer is drawn as Markdown with its citations as provenance links (issue 11)
        answer = "\n".join(m.value for m in at.markdown)
        assert "Hackers explore systems; wizards know them." in answer and "provenance" in answer
        schema_calls = [b for b in server.bodies() if b.get("response_format", {}).get("type") == "json_schema"]
        assert schema_calls  # the map and reduce schemas were sent
    record = RunStore(run_db).get(at.query_params["run"])
    assert record is not None and record.status == "completed"
    assert "".join(e.text for e in record.events if isinstance(e, ReduceAnswerDelta)) == FINAL


def test_the_offline_demo_model_streams_its_answer_when_it_simulates_latency():
    from graphrag_core.llm.base import StreamingChatModel
    from graphrag_core.llm.offline import OfflineChatModel
    from graphrag_core.llm.settings import ModelSettings
    from graphrag_core.llm.factory import build_chat_model

    assert not isinstance(OfflineChatModel(), StreamingChatModel)  # nothing to watch without latency
    model = build_chat_model(ModelSettings(offline_latency=(0.0, 0.02)))
    assert isinstance(model, StreamingChatModel)
    events: list = []
    result = asyncio.run(retrieve_global(small_index(), GlobalSearchRequest(query="What is a hacker?", seed=1), model, on_event=events.append))
    deltas = [e.text for e in events if isinstance(e, ReduceAnswerDelta)]
    assert len(deltas) > 5
    assert "".join(deltas).strip() == result.answer
    plain = asyncio.run(retrieve_global(small_index(), GlobalSearchRequest(query="What is a hacker?", seed=1), OfflineChatModel()))
    assert plain.answer == result.answer  # streaming changes how the answer arrives, never what it is


def test_a_streamed_reply_that_echoes_the_key_is_redacted_before_any_piece_leaves():
    from graphrag_core.llm.base import ChatMessage, ChatRequest

    secret = "sk-stream-SECRET-0123456789"
    reply = json.dumps({"answer": f"the key is {secret}, twice: {secret}"})

    def echo(path, body):
        return 200, [chunk(p) for p in split(reply, 3)]

    seen: list[str] = []
    with openai_server(echo) as server:
        model = OpenAIChatModel(ModelSettings(provider="openai", base_url=server.base_url, model="m", api_key=secret))
        request = ChatRequest(purpose="reduce", messages=(ChatMessage(role="user", content="q"),))
        response = asyncio.run(model.complete_streaming(request, seen.append))
    assert secret not in response.text and "".join(seen) == response.text
    assert secret not in "".join(seen) and response.text.count("[redacted]") == 2


def test_an_endpoint_that_does_not_stream_is_read_as_one_piece():
    from graphrag_core.llm.base import ChatMessage, ChatRequest

    with openai_server(lambda path, body: (200, completion_body('{"answer": "whole"}', prompt_tokens=3, completion_tokens=2))) as server:
        model = OpenAIChatModel(ModelSettings(provider="openai", base_url=server.base_url, model="m"))
        seen: list[str] = []
        request = ChatRequest(purpose="reduce", messages=(ChatMessage(role="user", content="q"),))
        response = asyncio.run(model.complete_streaming(request, seen.append))
    assert seen == ['{"answer": "whole"}'] and response.usage == TokenUsage(prompt_tokens=3, completion_tokens=2)
