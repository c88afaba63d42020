"""Cached tokens (issue 26, part 1): the prompt tokens an endpoint served from its prompt cache are
recorded from every reply's usage and shown beside the tokens spent, priced at
``GRAPHRAG_LLM_PRICE_CACHED``."""

from __future__ import annotations

import asyncio
import json

import pytest

from graphrag_cli.context import EXIT_OK
from graphrag_core.figures import Price, RunSpend, run_figures, spend_line
from graphrag_core.history import RunStore
from graphrag_core.llm.base import ChatRequest, TokenUsage
from graphrag_core.llm.factory import build_chat_model
from graphrag_core.llm.settings import ModelSettings
from graphrag_core.prompts import render_map_messages
from graphrag_core.report import record_to_markdown

from .cli_support import run_cli
from .openai_server import Reply, completion_body, openai_server, prefix_cache_handler, stream_chunks

FIRST = "What are the main themes?"
SECOND = "Which people and machines does the glossary describe, and how?"


def answer(body: dict) -> str:
    """A map, rating or reduce reply, by what the system message asks for."""
    system = body["messages"][0]["content"]
    if "intermediate answer" in system:
        return json.dumps({"answer": "Hackers value clever tools [Communities: 1].", "usefulness": 70})
    if "rate how relevant" in system.lower() or '"rating"' in system:
        return json.dumps({"reason": "relevant", "rating": 4})
    return json.dumps({"answer": "Clever tools and the people who build them [Communities: 1]."})


def _model(base_url: str):
    return build_chat_model(ModelSettings.from_mapping({"GRAPHRAG_LLM_BASE_URL": base_url, "GRAPHRAG_LLM_MODEL": "m", "GRAPHRAG_LLM_TIMEOUT": "5"}))


def _request() -> ChatRequest:
    return ChatRequest(purpose="map", messages=render_map_messages("q", "[Community ID: 1 | summary part 1]\nx"))


def test_the_adapter_records_cached_tokens_from_openai_llama_cpp_and_streams():
    openai_body = completion_body(prompt_tokens=2000, completion_tokens=10)
    openai_body["usage"]["prompt_tokens_details"] = {"cached_tokens": 1536}
    llama_body = completion_body(prompt_tokens=900, completion_tokens=10)
    llama_body["timings"] = {"cache_n": 850, "prompt_n": 50}
    usage = {"prompt_tokens": 1200, "completion_tokens": 5, "total_tokens": 1205, "prompt_tokens_details": {"cached_tokens": 1024}}
    with openai_server() as server:
        server.script(Reply(body=openai_body), Reply(body=llama_body), Reply(body=stream_chunks('{"answer": "x"}', usage=usage)))
        model = _model(server.base_url)
        first = asyncio.run(model.complete(_request()))
        second = asyncio.run(model.complete(_request()))
        third = asyncio.run(model.complete_streaming(_request(), lambda piece: None))
    assert first.usage == TokenUsage(prompt_tokens=2000, completion_tokens=10, cached_tokens=1536)
    assert second.usage == TokenUsage(prompt_tokens=900, completion_tokens=10, cached_tokens=850)
    assert third.usage == TokenUsage(prompt_tokens=1200, completion_tokens=5, cached_tokens=1024)
    assert (first.usage + second.usage).cached_tokens == 2386
    assert json.loads(TokenUsage(prompt_tokens=1).model_dump_json()) == {"prompt_tokens": 1, "completion_tokens": 0}


def test_cached_tokens_are_priced_at_the_cached_price_and_said_beside_the_tokens_spent():
    usage = TokenUsage(prompt_tokens=10_000, completion_tokens=500, cached_tokens=7_000)
    price = Price(2.5, 10.0, 1.25)
    assert price.of(usage) == pytest.approx((3_000 * 2.5 + 7_000 * 1.25 + 500 * 10.0) / 1e6)
    assert Price(2.5, 10.0).of(usage) == pytest.approx((10_000 * 2.5 + 500 * 10.0) / 1e6), "no cached price: the prompt price"
    line = spend_line(RunSpend(calls=3, cache_hits=0, tokens=usage, tokens_as_if_uncached=usage, tokens_estimated=False), price)
    assert "tokens 10,500 (7,000 prompt tokens from the endpoint's prompt cache, 70%)" in line
    assert "cost 0.0213 (0.03 without the prompt cache)" in line
    settings = ModelSettings.from_mapping(
        {"GRAPHRAG_LLM_PRICE_PROMPT": "2.5", "GRAPHRAG_LLM_PRICE_COMPLETION": "10", "GRAPHRAG_LLM_PRICE_CACHED": "1.25"}
    )
    assert settings.price == price


@pytest.mark.parametrize("reserve", ["256", "0"])
def test_a_second_question_at_the_same_level_and_seed_reads_its_map_prompts_from_the_cache(capsys, tmp_path, reserve):
    store = tmp_path / "runs.sqlite3"
    environ = {
        "GRAPHRAG_LLM_MODEL": "m",
        "GRAPHRAG_LLM_PRICE_PROMPT": "2",
        "GRAPHRAG_LLM_PRICE_COMPLETION": "8",
        "GRAPHRAG_LLM_PRICE_CACHED": "0.5",
    }
    with openai_server(prefix_cache_handler(answer)) as server:
        environ["GRAPHRAG_LLM_BASE_URL"] = server.base_url
        common = ("--level", "1", "--seed", "7", "--tokenizer", "heuristic", "--question-reserve", reserve, "--store", store, "--no-cache")
        for question in (FIRST, SECOND):
            code, _, err = run_cli(capsys, "query", "jargon", question, *common, "--model", "openai", environ=environ)
            assert code == EXIT_OK, err
    runs = RunStore(store)
    second = next(r for r in runs.list_runs() if r.query == SECOND)
    record = runs.get(second.run_id)
    figures = run_figures(record.events)
    map_usage = record.result.diagnostics.map_usage
    share = map_usage.cached_tokens / map_usage.prompt_tokens
    if reserve == "256":
        assert share > 0.9, f"the data of every batch was read before: {share:.0%} from the cache"
        assert "prompt tokens from the endpoint's prompt cache" in err and "without the prompt cache)" in err
        assert f"| prompt tokens from the endpoint's prompt cache (reported) | {figures.usage.cached_tokens} |" in record_to_markdown(record)
    else:
        assert share < 0.5, "with the question first, only the instructions are a shared prefix"
