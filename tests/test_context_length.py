"""A prompt longer than the model's context becomes advice on what to change."""

from __future__ import annotations

import asyncio

import pytest

from graphrag_core import SummaryBatch, run_global_map
from graphrag_core.errors import AllMapBatchesFailed, ContextLengthError, describe_error
from graphrag_core.llm.openai_model import OpenAIChatModel
from graphrag_core.llm.settings import ModelSettings

from .openai_server import openai_server

VLLM = {"object": "error", "message": "This model's maximum context length is 8192 tokens. However, you requested 13210 tokens (12698 in the messages, 512 in the completion). Please reduce the length of the messages or completion.", "type": "BadRequestError", "code": 400}
LLAMA_CPP = {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error"}}
OPENAI = {"error": {"message": "Your input is too long.", "type": "invalid_request_error", "code": "context_length_exceeded"}}


@pytest.mark.parametrize("body", [VLLM, LLAMA_CPP, OPENAI], ids=["vllm", "llama.cpp", "openai"])
def test_a_context_overflow_is_not_retried_and_says_what_to_change(body):
    with openai_server(lambda path, sent: (400, body)) as server:
        model = OpenAIChatModel(ModelSettings(provider="openai", base_url=server.base_url, model="m", structured_output=False))
        batches = [SummaryBatch(content="[Community ID: 1 | summary part 1]\n茶" * 10, community_ids=("1",))]
        with pytest.raises(AllMapBatchesFailed) as info:
            asyncio.run(run_global_map("q", batches, model, concurrency=1))
        assert len(server.bodies()) == 1  # the same prompt again cannot fit: no retry
    error = info.value.exceptions[0]
    assert isinstance(error, ContextLengthError)
    text = describe_error(error)
    assert "HTTP 400" in text
    assert "longer than the model's context window" in text
    assert "Lower the map and reduce token budgets" in text and "tokenizer" in text
