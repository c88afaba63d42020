"""Local models that answer (issue 29): a server that behaves as llama-cpp-python's does (raw
newlines inside JSON strings, replies cut at ``max_tokens``, streams without usage, one request
at a time) gets its answers read, its cut replies retried shorter, its tokens counted."""

from __future__ import annotations

import asyncio
import json

from graphrag_core import retrieve_global
from graphrag_core.events import MapBatchRetried, MapBatchSucceeded, ReduceReplied
from graphrag_core.llm.openai_model import OpenAIChatModel
from graphrag_core.llm.settings import ModelSettings
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.tokens import HeuristicTokenizer

from .factories import small_index
from .openai_server import llama_cpp_handler, openai_server

REDUCE_ANSWER = '{"answer": "Hackers explore systems.\n\nWizards know them. [Communities: 3]"}'
LONG_MAP_ANSWER = json.dumps({"answer": "a long list of points " * 40, "usefulness": 70})
SHORT_MAP_ANSWER = '{ "answer": "}\nThe main themes are:\n\n1. hacking","usefulness" : 70 }'


def is_reduce(body: dict) -> bool:
    return "final answer" in body["messages"][0]["content"]


def local_model(server, **settings: object) -> OpenAIChatModel:
    return OpenAIChatModel(ModelSettings(provider="openai", base_url=server.base_url, model="smollm2", **settings))


def test_a_cut_reply_is_told_apart_and_retried_asking_for_less_with_a_larger_reserve():
    def answer(body: dict) -> str:
        if is_reduce(body):
            return REDUCE_ANSWER
        return SHORT_MAP_ANSWER if "cut off" in body["messages"][0]["content"] else LONG_MAP_ANSWER

    events: list = []
    request = GlobalSearchRequest(query="What are the main themes?", seed=1, community_level=0, tokenizer="heuristic", map_output_reserve=64)
    with openai_server(llama_cpp_handler(answer)) as server:
        result = asyncio.run(retrieve_global(small_index(), request, local_model(server), on_event=events.append))
        maps = [b for b in server.bodies() if not is_reduce(b)]
    retried = [e for e in events if isinstance(e, MapBatchRetried)]
    assert retried and result.status == "completed"
    for event in retried:
        assert event.error.startswith("The reply was cut at the output reserve (64 tokens) before it was complete. The reply began:")
        assert "not valid JSON" not in event.error
    firsts = [b for b in maps if "cut off" not in b["messages"][0]["content"]]
    retries = [b for b in maps if "cut off" in b["messages"][0]["content"]]
    assert len(retries) == len(retried) and {b["max_tokens"] for b in firsts} == {64}
    assert {b["max_tokens"] for b in retries} == {128}  # twice the reserve: the map budget has room for it
    assert "shorter answer" in retries[0]["messages"][0]["content"] and LONG_MAP_ANSWER[:40] not in retries[0]["messages"][0]["content"]
    answers = [e.answer for e in events if isinstance(e, MapBatchSucceeded)]
    assert answers and all(a.startswith("}\nThe main themes are:") for a in answers)  # a raw newline in a string parses


def test_the_larger_reserve_of_a_retry_stays_inside_the_token_budget():
    def answer(body: dict) -> str:
        return REDUCE_ANSWER if is_reduce(body) else LONG_MAP_ANSWER

    request = GlobalSearchRequest(query="What are the main themes?", seed=1, community_level=0, tokenizer="heuristic", map_output_reserve=200, map_token_budget=700)
    with openai_server(llama_cpp_handler(answer)) as server:
        events: list = []
        try:
            asyncio.run(retrieve_global(small_index(), request, local_model(server), on_event=events.append))
        except Exception:  # noqa: BLE001 - every batch stays cut here; what was sent is the point
            pass
        retries = [b for b in server.bodies() if not is_reduce(b) and "cut off" in b["messages"][0]["content"]]
    assert retries
    tokenizer = HeuristicTokenizer()
    for body in retries:
        prompt = tokenizer.count("\n".join(m["content"] for m in body["messages"]))
        assert 200 <= body["max_tokens"] <= 400 and prompt + body["max_tokens"] <= 700


def test_a_streamed_reply_without_usage_is_counted_with_the_runs_tokenizer_and_marked_estimated():
    def answer(body: dict) -> str:
        return REDUCE_ANSWER if is_reduce(body) else SHORT_MAP_ANSWER

    events: list = []
    request = GlobalSearchRequest(query="What are the main themes?", seed=1, community_level=0, tokenizer="heuristic")
    with openai_server(llama_cpp_handler(answer)) as server:
        result = asyncio.run(retrieve_global(small_index(), request, local_model(server), on_event=events.append))
        reduce_body = next(b for b in server.bodies() if is_reduce(b))
    reduce_usage = next(e.usage for e in events if isinstance(e, ReduceReplied))
    tokenizer = HeuristicTokenizer()
    prompt = tokenizer.count("\n".join(m["content"] for m in reduce_body["messages"]))
    assert reduce_usage is not None and reduce_usage.estimated_calls == 1
    assert reduce_usage.prompt_tokens == prompt and reduce_usage.completion_tokens == tokenizer.count(REDUCE_ANSWER)
    usage = result.diagnostics.usage
    assert usage.estimated_calls == 1 and usage.prompt_tokens >= prompt
    assert json.loads(result.model_dump_json())["diagnostics"]["usage"]["estimated_calls"] == 1


def test_the_command_line_marks_tokens_the_run_counted_itself(capsys, index_dir):
    from .cli_support import QUESTION, run_cli

    def answer(body: dict) -> str:
        return '{"answer": "The river.\n[Communities: a]"}' if is_reduce(body) else SHORT_MAP_ANSWER

    with openai_server(llama_cpp_handler(answer)) as server:
        environ = {"GRAPHRAG_LLM_BASE_URL": server.base_url, "GRAPHRAG_LLM_MODEL": "smollm2"}
        code, _, err = run_cli(capsys, "query", index_dir, QUESTION, "--level", "0", "--no-store", "--no-cache", environ=environ)
        assert code == 0, err
        assert "tokens ≈" in err and "(1 call's usage estimated: the endpoint reported none)" in err
        code, out, err = run_cli(capsys, "query", index_dir, QUESTION, "--level", "0", "--no-store", "--no-cache", "--json", environ=environ)
    assert code == 0, err
    assert json.loads(out)["diagnostics"]["usage"]["estimated_calls"] == 1


def test_the_structured_output_fallback_notice_is_printed_once_and_whole(capsys, index_dir):
    from .cli_support import QUESTION, run_cli
    from .openai_server import Reply

    refusal = (
        "Unsupported response_format json_schema: this server accepts json_object with an optional schema "
        "(llama-cpp-python), so send that form instead of a strict JSON Schema, please, thank you"
    )
    plain = llama_cpp_handler(lambda body: '{"answer": "The river. [Communities: a]"}' if is_reduce(body) else SHORT_MAP_ANSWER)

    def handler(path: str, body: dict):
        if body.get("response_format", {}).get("type") == "json_schema":
            return Reply(500, {"error": {"message": refusal}})
        return plain(path, body)

    with openai_server(handler) as server:
        environ = {"GRAPHRAG_LLM_BASE_URL": server.base_url, "GRAPHRAG_LLM_MODEL": "smollm2"}
        code, _, err = run_cli(capsys, "query", index_dir, QUESTION, "--level", "0", "--no-store", "--no-cache", environ=environ)
    assert code == 0, err
    lines = [line for line in err.splitlines() if "does not accept response_format json_schema" in line]
    assert len(lines) == 1, err
    assert lines[0].startswith("note: ") and refusal in lines[0]


def eight_topics():
    from graphrag_core.models import Community, Index

    return Index(name="eight", communities=[Community(id=i, level=0, title=f"T{i}", summary=f"Topic {i} is about rivers and mills number {i}.") for i in range(8)])


def test_a_server_that_answers_one_request_at_a_time_is_found_and_advised_and_its_calls_then_stream():
    from graphrag_core.events import ModelNotice

    def answer(body: dict) -> str:
        return '{"answer": "Rivers. [Communities: 1]"}' if is_reduce(body) else SHORT_MAP_ANSWER

    events: list = []
    request = GlobalSearchRequest(query="What are the main themes?", seed=1, community_level=0, tokenizer="heuristic", map_token_budget=740, map_concurrency=4)
    # 16 batches; each reply takes 0.2 s; the fourth call of a burst waits 0.6 s in the queue: more than the
    # timeout, which counts from the reply's first byte at a local server
    with openai_server(llama_cpp_handler(answer, delay=0.2), one_at_a_time=True) as server:
        result = asyncio.run(retrieve_global(eight_topics(), request, local_model(server, timeout=0.5), on_event=events.append))
        maps = [b for b in server.bodies() if not is_reduce(b)]
    assert result.status == "completed" and not result.failed_batches
    notices = [e.message for e in events if isinstance(e, ModelNotice)]
    assert len(notices) == 1 and "answers one request at a time" in notices[0]
    assert "--concurrency 1" in notices[0] and "GRAPHRAG_LLM_TIMEOUT" in notices[0]
    assert not maps[0].get("stream") and maps[-1].get("stream")  # once found, calls stream (cancellable)


def test_a_server_with_several_slots_is_not_called_single_slot():
    from graphrag_core.events import ModelNotice

    def answer(body: dict) -> str:
        return '{"answer": "Rivers. [Communities: 1]"}' if is_reduce(body) else SHORT_MAP_ANSWER

    events: list = []
    request = GlobalSearchRequest(query="What are the main themes?", seed=1, community_level=0, tokenizer="heuristic", map_token_budget=755, map_concurrency=4)
    with openai_server(llama_cpp_handler(answer, delay=0.2)) as server:
        asyncio.run(retrieve_global(eight_topics(), request, local_model(server, timeout=5), on_event=events.append))
        assert not any(b.get("stream") for b in server.bodies() if not is_reduce(b))
    assert not [e for e in events if isinstance(e, ModelNotice)]


def test_the_app_remembers_what_an_endpoint_accepted_across_a_restart(tmp_path):
    """The app's process-wide endpoints now keep the negotiated form in the endpoint memory the
    settings name (the command line did; the app negotiated again after every restart)."""
    from graphrag_app.settings import app_endpoints
    from graphrag_app.settings import settings_from_mapping

    app = settings_from_mapping({"GRAPHRAG_EXPLORER_DB": str(tmp_path / "runs.sqlite3")})
    assert app.endpoints_path == tmp_path / "endpoints.sqlite3"
    first = app_endpoints(app)
    first.settle("http://127.0.0.1:8080/v1", "json_object")
    after_restart = app_endpoints(app)
    assert after_restart.accepted_form("http://127.0.0.1:8080/v1") == "json_object"
    off = settings_from_mapping({"GRAPHRAG_EXPLORER_DB": str(tmp_path / "runs.sqlite3"), "GRAPHRAG_EXPLORER_ENDPOINTS": "off"})
    assert off.endpoints_path is None and app_endpoints(off).accepted_form("http://127.0.0.1:8080/v1") is None
