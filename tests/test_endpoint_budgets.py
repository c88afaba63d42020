"""No prompt sent to a real endpoint is over its budget in the endpoint's own count.

Two fake servers count every prompt they receive as the real ones do: an OpenAI-style server with
o200k_base (each message's text plus 3 per message and 3 for the reply), and a server that
behaves as llama-cpp-python's does (no ``/tokenize``; ``/extras/tokenize`` with ``{"input": ...}``;
a ChatML chat template whose markers are special tokens; a BOS token). The summaries are
digit-heavy and Chinese, where the spec's estimate counts far fewer tokens than an encoder.
"""

from __future__ import annotations

import asyncio
import json
import random

from graphrag_core import GlobalSearchRequest, retrieve_global
from graphrag_core.events import RunStarted
from graphrag_core.llm.endpoint_tokenizer import is_local_endpoint
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.openai_model import OpenAIChatModel
from graphrag_core.llm.settings import ModelSettings
from graphrag_core.models import Community, Index
from graphrag_core.tokens import HeuristicTokenizer, get_tokenizer, tokenizer_for

from .openai_server import completion_body, openai_server

O200K = get_tokenizer("o200k_base")
CHINESE = "长江流域每年夏季发生洪水，茶叶贸易沿着古道传到西域与草原。"
ANSWER = '{"answer": "Ledger 2024-03-17: 4,318.27 units, 9,876,543 rows; 洪水与茶叶贸易 [Communities: 1]", "usefulness": 60}'


def digits_and_chinese_index(communities: int = 60, *, seed: int = 3) -> Index:
    """One level of summaries, half of them ledgers of figures and half Chinese prose."""
    rng = random.Random(seed)
    made = []
    for i in range(communities):
        if i % 2:
            summary = " ".join(f"{rng.randint(0, 99_999_999)}.{rng.randint(0, 99):02d}" for _ in range(rng.randint(20, 90)))
        else:
            summary = CHINESE * rng.randint(2, 9)
        made.append(Community(id=i, level=0, title=f"Community {i}", summary=summary))
    return Index(communities=made, name="figures")


def ledger_question(*, seed: int, map_budget: int, reduce_budget: int, tokenizer: str = "auto") -> GlobalSearchRequest:
    """The question asked in every run here, with budgets whose output reserves are 300."""
    return GlobalSearchRequest(
        query="What do the ledgers record?", community_level=0, seed=seed, tokenizer=tokenizer,
        map_token_budget=map_budget, map_output_reserve=300, reduce_token_budget=reduce_budget, reduce_output_reserve=300,
    )


def model_at(url: str) -> OpenAIChatModel:
    return OpenAIChatModel(ModelSettings(provider="openai", base_url=url, model="m", json_mode=False, structured_output=False))


def run(index: Index, request: GlobalSearchRequest, model: OpenAIChatModel, **kwargs) -> list:
    events: list = []
    asyncio.run(retrieve_global(index, request, model, on_event=events.append, **kwargs))
    return events


# -- an OpenAI-style endpoint, counting with o200k_base -----------------------------------------


def openai_style(counted: list[int]):
    def handler(path: str, body: dict):
        if not path.endswith("/chat/completions"):
            return 404, {"detail": "Not Found"}
        messages = body["messages"]
        tokens = sum(O200K.count(m["content"]) for m in messages) + 3 * len(messages) + 3
        counted.append(tokens)
        return 200, completion_body(ANSWER, prompt_tokens=tokens)

    return handler


def test_a_real_endpoint_is_counted_exactly_by_default_and_no_prompt_is_over_budget() -> None:
    request = ledger_question(seed=5, map_budget=1500, reduce_budget=900)
    counted: list[int] = []
    with openai_server(openai_style(counted)) as server:
        events = run(digits_and_chinese_index(), request, model_at(server.base_url))
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.tokenizer == "o200k_base"  # the default ("auto") for a real endpoint with no count of its own
    map_calls, reduce_call = counted[:-1], counted[-1]
    assert len(map_calls) > 5
    assert max(map_calls) <= request.map_prompt_budget
    assert max(map_calls) > 0.9 * request.map_prompt_budget  # the batches are packed up to the budget
    assert reduce_call <= request.reduce_prompt_budget


def test_the_estimate_would_have_sent_prompts_over_budget() -> None:
    """The same run counted with the spec's estimate: the server counts more than was budgeted."""
    request = ledger_question(seed=5, map_budget=1500, reduce_budget=900, tokenizer="heuristic")
    counted: list[int] = []
    with openai_server(openai_style(counted)) as server:
        run(digits_and_chinese_index(), request, model_at(server.base_url))
    assert max(counted[:-1]) > request.map_prompt_budget


# -- a llama-cpp-python server ------------------------------------------------------------------

SPECIALS = ("<|im_start|>", "<|im_end|>")


def llama_tokens(text: str) -> int:
    """The fake model's tokenizer: a BOS, each special marker one token, any other code point one."""
    count = 1
    for special in SPECIALS:
        count += text.count(special) * (1 - len(special))
    return count + len(text)


def chatml(messages: list[dict]) -> str:
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"


def llama_cpp_python(counted: list[int]):
    def handler(path: str, body: dict):
        if path == "/extras/tokenize":
            return 200, {"tokens": list(range(llama_tokens(body["input"])))}
        if path != "/v1/chat/completions":
            return 404, {"detail": "Not Found"}
        tokens = llama_tokens(chatml(body["messages"]))
        counted.append(tokens)
        if body.get("stream"):  # llama-cpp-python streams without usage
            return 200, [{"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [{"index": 0, "delta": {"content": ANSWER}}]}]
        return 200, completion_body(ANSWER, prompt_tokens=tokens)

    return handler


def test_llama_cpp_python_counts_at_extras_tokenize_by_default_and_its_template_is_budgeted() -> None:
    request = ledger_question(seed=2, map_budget=2300, reduce_budget=1900)
    counted: list[int] = []
    with openai_server(llama_cpp_python(counted)) as server:
        events = run(digits_and_chinese_index(communities=40), request, model_at(server.base_url))
        paths = {r["path"] for r in server.requests}
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.tokenizer == "endpoint"  # a local server that counts: its own count by default
    assert "/extras/tokenize" in paths
    assert len(counted) > 5
    assert max(counted[:-1]) <= request.map_prompt_budget
    assert max(counted[:-1]) > request.map_prompt_budget - 60  # packed up to the budget
    assert counted[-1] <= request.reduce_prompt_budget


def test_without_the_template_share_a_prompt_would_be_over_budget() -> None:
    """Counting only the messages' text (the template left out) sends prompts the server counts over budget."""

    class TextOnly:
        name = "endpoint"

        def __init__(self, inner) -> None:
            self.inner = inner

        def count(self, text: str) -> int:
            return self.inner.count(text)

    request = ledger_question(seed=2, map_budget=2300, reduce_budget=1900, tokenizer="endpoint")
    counted: list[int] = []
    with openai_server(llama_cpp_python(counted)) as server:
        model = model_at(server.base_url)
        run(digits_and_chinese_index(communities=40), request, model, tokenizer=TextOnly(model.endpoint_tokenizer()))
    assert max(counted[:-1]) > request.map_prompt_budget


def test_the_template_share_is_measured_on_the_server_once() -> None:
    counted: list[int] = []
    with openai_server(llama_cpp_python(counted)) as server:
        tokenizer = model_at(server.base_url).endpoint_tokenizer()
        share = tokenizer.prompt_overhead(2)
        assert share == llama_tokens(chatml([{"role": "system", "content": ""}, {"role": "user", "content": ""}]))
        assert tokenizer.prompt_overhead(2) == share
        asked = [json.dumps(r["json"]) for r in server.requests if r["path"] == "/extras/tokenize"]
    assert len(asked) == 1


# -- which tokenizer "auto" means -------------------------------------------------------------


def test_auto_is_the_spec_estimate_for_the_offline_model() -> None:
    assert isinstance(tokenizer_for("auto", OfflineChatModel()), HeuristicTokenizer)
    assert isinstance(tokenizer_for("auto", None), HeuristicTokenizer)
    assert GlobalSearchRequest(query="q").tokenizer == "auto"


def test_local_endpoints_are_told_apart() -> None:
    for url in ("http://localhost:8000/v1", "http://127.0.0.1:8080", "http://192.168.1.20:11434/v1", "http://[::1]:8000/v1", "http://gpu.local:8000/v1"):
        assert is_local_endpoint(url), url
    for url in ("https://api.openai.com/v1", "https://example.openai.azure.com", "http://8.8.8.8/v1", ""):
        assert not is_local_endpoint(url), url


def test_a_count_that_drips_ends_within_the_timeout():
    """A server that sends its count a byte at a time cannot hold the planning for longer than the
    timeout (the socket's own timeout bounds each read, not the reply)."""
    import time

    import pytest

    from graphrag_core.errors import RequestValidationError
    from graphrag_core.llm.endpoint_tokenizer import EndpointTokenizer

    from .openai_server import Reply

    with openai_server(lambda path, body: Reply(body={"tokens": list(range(200))}, pace=0.05)) as server:
        tokenizer = EndpointTokenizer(server.base_url.removesuffix("/v1"), model="m", timeout=0.5)
        started = time.monotonic()
        with pytest.raises(RequestValidationError, match=r"Could not count tokens at .*/tokenize \(TimeoutError\)"):
            tokenizer.count("a text to count")
        assert time.monotonic() - started < 5  # a bound against a hang, not a measurement
