"""Local models, round 2 (issue 40): the first-byte clock of a renegotiated call, the output form
remembered across processes, the single-slot advice and the server's context before the run, and
what a user is told when a run ends without an answer."""

from __future__ import annotations

import asyncio

from graphrag_core.llm.base import ChatMessage, ChatRequest
from graphrag_core.llm.openai_model import OpenAIChatModel
from graphrag_core.llm.settings import ModelSettings
from graphrag_core.prompts import MAP_OUTPUT_SCHEMA

from .openai_server import Reply, completion_body, openai_server

MAP_ANSWER = '{"answer": "Rivers.", "usefulness": 70}'
REFUSAL = "1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}"


def refuses_json_schema(*, queued_s: float = 0.0):
    """A llama-cpp-python-like server that refuses ``json_schema`` at once (HTTP 500) and answers
    the other forms after ``queued_s`` in its queue (no byte sent before)."""

    def handle(path: str, body: dict) -> Reply:
        if body.get("response_format", {}).get("type") == "json_schema":
            return Reply(500, {"error": {"message": REFUSAL}})
        return Reply(body=completion_body(MAP_ANSWER), delay=queued_s)

    return handle


def schema_request() -> ChatRequest:
    return ChatRequest(purpose="map", messages=(ChatMessage(role="user", content="Map it."),), output_schema=MAP_OUTPUT_SCHEMA, max_tokens=64)


def test_a_request_resent_in_another_form_waits_for_its_own_first_byte_as_long_as_a_first_request_does():
    """The refusal's own first byte must not start the after-first-byte limit of the resent
    request: it waits in a local server's queue (here 1 s) with up to 4 x the timeout (0.5 s)."""
    with openai_server(refuses_json_schema(queued_s=1.0)) as server:
        model = OpenAIChatModel(ModelSettings(provider="openai", base_url=server.base_url, model="smollm2", timeout=0.5))
        response = asyncio.run(model.complete(schema_request()))
        forms = [b.get("response_format", {}).get("type") for b in server.bodies()]
    assert response.text == MAP_ANSWER and forms == ["json_schema", "json_object"]
    assert any("does not accept response_format json_schema" in n for n in response.notices)


def test_the_negotiated_form_is_remembered_across_runs_and_its_refusal_said_once(capsys, index_dir, tmp_path):
    from .cli_support import QUESTION, run_cli

    def handler(path: str, body: dict):
        if body.get("response_format", {}).get("type") == "json_schema":
            return Reply(500, {"error": {"message": REFUSAL}})
        reduce = "final answer" in body["messages"][0]["content"]
        return Reply(body=completion_body('{"answer": "The river. [Communities: a]"}' if reduce else MAP_ANSWER))

    with openai_server(handler) as server:
        environ = {"GRAPHRAG_LLM_BASE_URL": server.base_url, "GRAPHRAG_LLM_MODEL": "smollm2", "GRAPHRAG_EXPLORER_DB": str(tmp_path / "runs.sqlite3")}
        notes = []
        for _ in range(2):  # two invocations: two processes' worth of state, one memory
            sent = len(server.bodies())
            code, _, err = run_cli(capsys, "query", index_dir, QUESTION, "--level", "0", "--no-store", environ=environ)
            assert code == 0, err
            notes.append([line for line in err.splitlines() if "does not accept response_format json_schema" in line])
            forms = [b.get("response_format", {}).get("type") for b in server.bodies()[sent:]]
        assert len(notes[0]) == 1 and notes[1] == [], "the refusal is said once, not on every run"
        assert "json_schema" not in forms, "the second run sends the remembered form from its first call"
        assert (tmp_path / "endpoints.sqlite3").exists()
        code, _, err = run_cli(capsys, "query", index_dir, QUESTION, "--level", "0", "--no-store", environ={**environ, "GRAPHRAG_EXPLORER_ENDPOINTS": "off"})
        assert code == 0 and "does not accept response_format json_schema" in err, "with the memory off, each run negotiates for itself"


def test_the_endpoint_memory_keeps_no_credentials_forgets_old_entries_and_survives_a_bad_file(tmp_path):
    from graphrag_core.llm.endpoint_memory import ENDPOINT_MEMORY_DAYS, EndpointMemory
    from graphrag_core.llm.endpoints import Endpoints

    path = tmp_path / "endpoints.sqlite3"
    endpoint = "http://user:secret@127.0.0.1:8080/v1?key=secret#smollm2"
    first = Endpoints()
    first.remember_in(path)
    assert first.refused(endpoint, "json_schema", following="json_object")
    first.settle(endpoint, "json_object")
    assert b"secret" not in path.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("endpoints.sqlite3-*"))
    later = Endpoints()
    later.remember_in(path)
    assert later.accepted_form(endpoint) == "json_object" and not later.refused(endpoint, "json_schema", following="json_object")
    stale = EndpointMemory(path, clock=lambda: __import__("time").time() + (ENDPOINT_MEMORY_DAYS + 1) * 86_400)
    assert stale.load() == ({}, set()), "a week later the server is asked again"
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"not a database at all" * 100)
    said: list[str] = []
    broken = Endpoints()
    broken.remember_in(bad, on_failure=said.append)
    assert broken.refused(endpoint, "json_schema", following="json_object") and len(said) == 1 and str(bad) in said[0]


# -- the spending limit ----------------------------------------------------------------------------


def test_the_stop_says_what_the_next_call_needed_and_what_was_held_back_for_the_reduce():
    from graphrag_core.errors import SpendLimitReached
    from graphrag_core.spending import SpendingLimit

    limit = SpendingLimit(7_000, spent=3_465)

    async def reserve():
        await limit.reserve(2_012, keep=2_500)

    try:
        asyncio.run(reserve())
    except SpendLimitReached as exc:
        message = str(exc)
    assert message == (
        "The run stopped at its spending limit of 7,000 tokens (3,465 spent): the next model call could cost up to 2,012 tokens "
        "and 2,500 are held back for the reduce that answers from what was read (its token budget), which together would pass "
        "the limit, so it was not sent."
    )


def test_the_forecast_says_what_is_held_back_for_the_reduce_and_when_no_batch_fits_beside_it():
    from graphrag_core.spending import forecast_limit

    some = forecast_limit(7_000, [1_500] * 6, map_output_reserve=512, reduce_token_budget=2_500)
    assert some.verdict == "will_reach" and some.held_back == 2_500
    assert "2,500 tokens are held back for the reduce that answers from what was read (the reduce token budget)" in some.text()
    none = forecast_limit(3_000, [1_500] * 6, map_output_reserve=512, reduce_token_budget=2_500)
    assert none.batches_sent == (0, 0)
    assert none.text() == (
        "The spending limit of 3,000 tokens will stop the run before it reads anything: the first batch needs up to 2,012 tokens "
        "and 2,500 are held back for the reduce (the reduce token budget), so there will be no answer. "
        "Raise the limit to at least 4,512 tokens, or lower the reduce token budget."
    )


def test_a_limit_stop_with_nothing_usable_is_stopped_with_one_exit_code_and_a_reason(capsys, tmp_path):
    import json

    from graphrag_cli.context import EXIT_STOPPED
    from graphrag_core.history import RunStore

    from .cli_support import run_cli

    store = tmp_path / "runs.sqlite3"
    args = ("query", "jargon", "What are the main themes?", "--level", "1", "--seed", "3", "--spend-limit-tokens", "8500", "--no-cache")
    code, out, err = run_cli(capsys, *args, "--store", store)
    assert code == EXIT_STOPPED and not out
    assert "will stop the run before it reads anything" in err and "answers from what it read" not in err, "the preview promises no answer"
    assert "stopped: The run stopped at its spending limit of 8,500 tokens" in err
    assert "why there is no answer: " in err and "held back for the reduce" in err
    assert RunStore(store).list_runs()[0].status.word == "stopped"
    code, out, err = run_cli(capsys, *args, "--no-store", "--json")
    document = json.loads(out)
    assert code == EXIT_STOPPED and document["status"] == "cancelled" and document["status_word"] == "stopped"
    (why,) = document["why_no_answer"]
    assert why["reason"] == "stopped_at_limit" and why["message"].startswith("The run stopped at its spending limit of 8,500 tokens")
    assert "nothing was read, so there is no answer" in why["message"]


# -- what the server says about itself, before the run --------------------------------------------


def _answer(body: dict) -> str:
    return '{"answer": "The river. [Communities: a]"}' if "final answer" in body["messages"][0]["content"] else MAP_ANSWER


def test_a_server_reporting_one_slot_is_advised_before_the_run_with_the_concurrency_set_and_its_context_weighed(capsys, index_dir):
    import json

    from .cli_support import QUESTION, run_cli
    from .openai_server import llama_cpp_handler, llama_server_props

    handler = llama_server_props(llama_cpp_handler(_answer), slots=1, n_ctx=8192)
    with openai_server(handler, one_at_a_time=True) as server:
        environ = {"GRAPHRAG_LLM_BASE_URL": server.base_url, "GRAPHRAG_LLM_MODEL": "smollm2"}
        code, out, err = run_cli(capsys, "query", index_dir, QUESTION, "--level", "0", "--no-store", "--no-cache", "--json", environ=environ)
        maps = [b for b in server.bodies() if "final answer" not in b["messages"][0]["content"]]
    assert code == 0, err
    lines = err.splitlines()
    slot = next(i for i, line in enumerate(lines) if "answers one request at a time (llama.cpp's /props)" in line)
    assert "the concurrency is set to 1 (it was 4)" in lines[slot] and "GRAPHRAG_LLM_TIMEOUT, now 60s" in lines[slot]
    assert slot < next(i for i, line in enumerate(lines) if "batch" in line.lower()), "said before the run, not after its timeouts"
    assert any("The map token budget (8,000 tokens) leaves 192 of the server's context of 8,192 tokens per request" in line for line in lines)
    assert json.loads(out)["request"]["map_concurrency"] == 1
    assert maps and all(b.get("stream") for b in maps), "a server known to have one slot is streamed from the first call"
    assert sum("answers one request at a time" in line for line in lines) == 1


def test_a_budget_past_the_servers_context_is_lowered_to_it_unless_it_was_given(capsys, index_dir):
    import json

    from .cli_support import QUESTION, run_cli
    from .openai_server import llama_cpp_handler, llama_server_props

    with openai_server(llama_server_props(llama_cpp_handler(_answer), slots=4, n_ctx=4096)) as server:
        environ = {"GRAPHRAG_LLM_BASE_URL": server.base_url, "GRAPHRAG_LLM_MODEL": "smollm2"}
        code, out, err = run_cli(capsys, "query", index_dir, QUESTION, "--level", "0", "--no-store", "--no-cache", "--json", environ=environ)
        assert code == 0, err
        request = json.loads(out)["request"]
        assert request["map_token_budget"] == 4096 and request["reduce_token_budget"] == 4096 and request["map_concurrency"] == 4
        assert "The map token budget (8,000 tokens) does not fit the server's context of 4,096 tokens per request (llama.cpp's /props): it is lowered to 4,096." in err
        code, out, err = run_cli(
            capsys, "query", index_dir, QUESTION, "--level", "0", "--map-budget", "8000", "--no-store", "--no-cache", "--json", environ=environ
        )
    assert json.loads(out)["request"]["map_token_budget"] == 8000, "a budget the user gave is advised, not changed"
    assert "Lower it to at most 4,096 (--map-budget 4096)" in err


def test_server_facts_are_read_where_each_server_says_them():
    import json

    from graphrag_core.llm.server_facts import read_server_facts

    def vllm(path: str, body: dict):
        if path == "/v1/models":
            return Reply(body={"object": "list", "data": [{"id": "smollm2", "max_model_len": 2048}]})
        return Reply(404, {"error": "not found"})

    def ollama(path: str, body: dict):
        if path == "/api/ps":
            return Reply(body={"models": [{"name": "smollm2:135m", "model": "smollm2:135m", "context_length": 4096}]})
        return Reply(404, "404 page not found")

    def slots(path: str, body: dict):
        if path == "/slots":
            return Reply(body=json.dumps([{"id": 0, "n_ctx": 1024}, {"id": 1, "n_ctx": 1024}]).encode())
        return Reply(404, {"error": "not found"})

    with openai_server(vllm) as a, openai_server(ollama) as b, openai_server(slots) as c:
        assert read_server_facts(a.base_url, model="smollm2").context_tokens == 2048
        facts = read_server_facts(b.base_url, model="smollm2:135m")
        assert (facts.slots, facts.context_tokens, facts.source) == (None, 4096, "Ollama's /api/ps")
        facts = read_server_facts(c.base_url, model="m")
        assert (facts.slots, facts.context_tokens) == (2, 1024)
    assert not read_server_facts("https://api.openai.com/v1", model="gpt-4o-mini").known, "asked of local servers only"


# -- the level picker's figures ----------------------------------------------------------------------


def test_the_level_pickers_figures_say_when_they_are_an_estimate_of_the_runs_count():
    from graphrag_core.cost import counting_note, level_costs
    from graphrag_core.tokens import get_tokenizer

    from .factories import small_index

    request = __import__("graphrag_core").GlobalSearchRequest(query="q", tokenizer="endpoint")
    planned = level_costs(small_index(), request, seed=1, tokenizer=get_tokenizer("o200k_base"), run_tokenizer="endpoint")
    assert planned and all(c.tokenizer == "o200k_base" and c.estimate for c in planned)
    assert counting_note(planned) == (
        "≈ estimated with o200k_base: the run counts with the model server's own tokenizer, which may count several times more "
        "(a small model's tokenizer, or Chinese text)."
    )

    class ServerCount:  # the model server's own count, as the endpoint tokenizer gives it
        name = "endpoint"

        def count(self, text: str) -> int:
            return len(text.encode()) // 2

    counted = level_costs(small_index(), request, seed=1, tokenizer=ServerCount(), run_tokenizer="endpoint")
    assert all(not c.estimate for c in counted) and counting_note(counted) is None
    heuristic = level_costs(small_index(), request.model_copy(update={"tokenizer": "heuristic"}), seed=1, run_tokenizer="heuristic")
    assert counting_note(heuristic) is None, "the spec's estimate is the run's own count when the run uses it"


# -- why there is no answer --------------------------------------------------------------------------


def test_why_no_answer_counts_cut_replies_apart_from_unparsed_ones_and_counts_timeouts():
    import pytest

    from graphrag_core import retrieve_global
    from graphrag_core.calls import batch_calls, why_no_answer
    from graphrag_core.errors import AllMapBatchesFailed
    from graphrag_core.models import Community, Index
    from graphrag_core.request import GlobalSearchRequest

    from .openai_server import llama_cpp_handler

    index = Index(name="three", communities=[Community(id=str(i), level=0, title=f"T{i}", summary=f"Topic {i} is about " + "rivers and mills " * 40) for i in range(3)])
    long_reply = '{"answer": "' + "a long list of points, " * 200 + '", "usefulness": 60}'

    def answer(body: dict) -> str:
        data = body["messages"][-1]["content"]
        return long_reply if "Topic 0" in data else "Sure! The themes are rivers."

    plain = llama_cpp_handler(answer)

    def handler(path: str, body: dict):
        if "Topic 2" in body["messages"][-1]["content"]:
            return Reply(body=completion_body(MAP_ANSWER), delay=5)  # never within 4 x 0.25 s
        return plain(path, body)

    request = GlobalSearchRequest(query="What are the main themes?", seed=1, community_level=0, tokenizer="heuristic", map_token_budget=600, map_output_reserve=64)
    events: list = []
    with openai_server(handler) as server:
        model = OpenAIChatModel(ModelSettings(provider="openai", base_url=server.base_url, model="smollm2", timeout=0.25))
        with pytest.raises(AllMapBatchesFailed):
            asyncio.run(retrieve_global(index, request, model, on_event=events.append))
    calls = batch_calls(events)
    assert len(calls) == 3
    kinds = sorted({a.kind for c in calls for a in c.attempts})
    assert kinds == ["cut", "rejected", "timed_out"]
    reasons = {item.reason: item for item in why_no_answer(events)}
    attempts = {kind: sum(a.kind == kind for c in calls for a in c.attempts) for kind in kinds}
    assert reasons["cut_reply"].message == f"{attempts['cut']} replies were cut at the output reserve before they were complete (each was retried asking for a shorter answer)."
    assert reasons["unparsed_reply"].message == f"{attempts['rejected']} replies did not parse as a map answer."
    assert reasons["timed_out"].message.startswith(f"{attempts['timed_out']} calls timed out: ")
    assert "failed_batch" in reasons and reasons["cut_reply"].batch_indexes != reasons["unparsed_reply"].batch_indexes


# -- a reply one token over its reserve --------------------------------------------------------------


def test_a_reply_reporting_one_token_more_than_its_reserve_is_used_and_said_once():
    from graphrag_core import retrieve_global
    from graphrag_core.events import MapBatchSucceeded, ModelNotice
    from graphrag_core.request import GlobalSearchRequest

    from .factories import small_index

    def handler(path: str, body: dict):
        reduce = "final answer" in body["messages"][0]["content"]
        text = '{"answer": "The river. [Communities: 1]"}' if reduce else MAP_ANSWER
        limit = body.get("max_tokens") or 0
        return Reply(body=completion_body(text, completion_tokens=limit + 1, finish_reason="length"))  # llama.cpp counts the end of generation

    events: list = []
    request = GlobalSearchRequest(query="What are the main themes?", seed=1, community_level=0, tokenizer="heuristic", map_output_reserve=512)
    with openai_server(handler) as server:
        model = OpenAIChatModel(ModelSettings(provider="openai", base_url=server.base_url, model="smollm2"))
        result = asyncio.run(retrieve_global(small_index(), request, model, on_event=events.append))
    assert result.status == "completed"
    used = [e for e in events if isinstance(e, MapBatchSucceeded)]
    assert used and all(e.usage.completion_tokens == 513 for e in used), "counted as reported"
    notes = [e.message for e in events if isinstance(e, ModelNotice) and "more completion tokens" in e.message]
    assert len(notes) == 1 and "reported 513 completion tokens for a call limited to 512 (max_tokens)" in notes[0]
