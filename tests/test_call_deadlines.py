"""Every model call has a total deadline, and a reply is read only up to its size bound,
compressed or not (issue 27, findings 1 and 7)."""

from __future__ import annotations

import asyncio
import gzip
import json
import time
import tracemalloc

import pytest

from graphrag_core.errors import ReplyTooLongError, RetryableModelError
from graphrag_core.llm.base import ChatMessage, ChatRequest
from graphrag_core.llm.openai_model import OpenAIChatModel
from graphrag_core.llm.openai_replies import MAX_REPLY_BODY_BYTES
from graphrag_core.llm.settings import ModelSettings

from .cli_support import QUESTION, run_cli
from .openai_server import MAP_ANSWER, Reply, completion_body, openai_server, stream_chunks

REQUEST = ChatRequest(purpose="map", messages=(ChatMessage(role="user", content="q"),), max_tokens=64)


def model_for(server, *, timeout: float) -> OpenAIChatModel:
    return OpenAIChatModel(ModelSettings(provider="openai", base_url=server.base_url, model="m", timeout=timeout))


def test_a_body_sent_one_byte_at_a_time_ends_at_the_calls_deadline():
    with openai_server(lambda path, body: Reply(body=completion_body(), pace=0.2)) as server:
        started = time.monotonic()
        with pytest.raises(RetryableModelError, match=r"timed out: its reply did not end within 1s of its first byte"):
            asyncio.run(model_for(server, timeout=1).complete(REQUEST))
        assert time.monotonic() - started < 5  # the body alone would take over a minute


def test_a_streamed_reply_sent_one_piece_at_a_time_ends_at_the_calls_deadline_and_is_cancelled_on_the_wire():
    pieces = stream_chunks('{"answer": "' + "slow words " * 40 + '"}', size=4)
    with openai_server(lambda path, body: Reply(body=pieces, pace=0.3)) as server:
        seen: list[str] = []
        started = time.monotonic()
        with pytest.raises(RetryableModelError, match="timed out"):
            asyncio.run(model_for(server, timeout=1).complete_streaming(REQUEST.model_copy(update={"purpose": "reduce"}), seen.append))
        assert time.monotonic() - started < 5 and seen  # pieces came, the whole did not
        deadline = time.monotonic() + 5
        while not server.abandoned and time.monotonic() < deadline:
            time.sleep(0.05)  # the server notices the closed connection at its next write
        assert server.abandoned == 1


def test_a_reply_that_never_begins_ends_too():
    with openai_server(lambda path, body: Reply(body=completion_body(), delay=600)) as server:
        started = time.monotonic()
        with pytest.raises(RetryableModelError, match=r"no reply began within 2s \(4 x GRAPHRAG_LLM_TIMEOUT"):
            asyncio.run(model_for(server, timeout=0.5).complete(REQUEST))
        assert time.monotonic() - started < 6


def test_query_sweep_and_eval_end_with_a_clear_timeout_when_the_endpoint_drips(capsys, index_dir, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "What shapes the town?"}\n')
    with openai_server(lambda path, body: Reply(body=completion_body(), pace=0.2)) as server:
        environ = {"GRAPHRAG_LLM_BASE_URL": server.base_url, "GRAPHRAG_LLM_TIMEOUT": "0.5"}
        fast = ("--no-store", "--no-cache")
        started = time.monotonic()
        code, _, err = run_cli(capsys, "query", index_dir, QUESTION, "--level", "0", *fast, environ=environ)
        assert code == 4 and "Every Global Map batch failed." in err and "timed out" in err, err
        code, out, err = run_cli(capsys, "sweep", index_dir, QUESTION, "--levels", "0", "--seeds", "1", "--no-cache", environ=environ)
        assert "timed out" in out + err, out + err
        code, out, err = run_cli(
            capsys, "eval", questions, "--index", index_dir, "--condition", "C0:level=0", "--seeds", "1,2", "--judge", "offline", "--no-cache",
            "--store", tmp_path / "e.sqlite", environ=environ,
        )
        assert "timed out" in out + err, out + err
        assert time.monotonic() - started < 60


def test_a_gzip_bomb_is_refused_before_it_is_inflated_past_the_bound():
    bomb = gzip.compress(b" " * (80 * 1024 * 1024), compresslevel=9)  # 80 MB of spaces in about 80 kB
    assert len(bomb) < 200_000
    with openai_server(lambda path, body: Reply(body=bomb, headers={"content-encoding": "gzip"})) as server:
        tracemalloc.start()
        try:
            with pytest.raises(ReplyTooLongError, match=rf"passed {MAX_REPLY_BODY_BYTES:,} bytes once inflated \(gzip\)"):
                asyncio.run(model_for(server, timeout=10).complete(REQUEST))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 3 * MAX_REPLY_BODY_BYTES  # never the 80 MB


def test_a_plain_reply_past_the_bound_is_refused_and_a_gzip_reply_within_it_is_read():
    with openai_server(lambda path, body: Reply(body=b"x" * (MAX_REPLY_BODY_BYTES + 10))) as server:
        with pytest.raises(ReplyTooLongError, match=rf"passed {MAX_REPLY_BODY_BYTES:,} bytes, so it was refused"):
            asyncio.run(model_for(server, timeout=10).complete(REQUEST))
    good = gzip.compress(json.dumps(completion_body(MAP_ANSWER)).encode())
    with openai_server(lambda path, body: Reply(body=good, headers={"content-encoding": "gzip"})) as server:
        assert asyncio.run(model_for(server, timeout=10).complete(REQUEST)).text == MAP_ANSWER
        assert server.requests[0]["headers"]["accept-encoding"] == "gzip, deflate"
