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
