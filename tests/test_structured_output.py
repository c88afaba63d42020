"""Structured output: each call's JSON Schema is sent in the strongest form the
endpoint accepts, against local servers that each accept only one form."""

from __future__ import annotations

import asyncio
import logging

import pytest

from graphrag_core import SummaryBatch, run_global_map
from graphrag_core.errors import RetryableModelError
from graphrag_core.events import ModelNotice
from graphrag_core.llm.base import ChatMessage, ChatRequest, OutputSchema
from graphrag_core.llm.openai_model import OpenAIChatModel
from graphrag_core.llm.settings import ModelSettings
from graphrag_core.map import map_request
from graphrag_core.prompts import MAP_OUTPUT_SCHEMA

from .openai_server import completion_body, openai_server

ANSWER = '{"answer": "Tea is grown on hills.", "usefulness": 70}'


def form_of(body: dict) -> str:
    fmt = body.get("response_format")
    if fmt is None:
        return "none"
    if fmt.get("type") == "json_schema":
        return "json_schema"
    return "json_object_schema" if "schema" in fmt else "json_object"


def only(accepted: str, refusal_status: int = 400, answer: str = ANSWER):
    """A handler that answers only requests in the ``accepted`` form, with ``answer``."""

    def handler(path: str, body: dict):
        form = form_of(body)
        if form == accepted:
            return 200, completion_body(answer)
        if refusal_status == 500:  # llama-cpp-python: a pydantic validation message with HTTP 500
            return 500, {"error": {"message": f"1 validation error for CreateChatCompletionRequest\nresponse_format.type: Input should be 'text' or 'json_object' (got {form})"}}
        return 400, {"error": {"message": f"Invalid parameter: response_format of type {form} is not supported.", "type": "invalid_request_error"}}

    return handler


def model_for(base_url: str, **fields) -> OpenAIChatModel:
    return OpenAIChatModel(ModelSettings(provider="openai", base_url=base_url, model="tiny", timeout=5, **fields))


def batches(n: int) -> list[SummaryBatch]:
    return [SummaryBatch(content=f"[Community ID: {i} | summary part 1]\ntea {i}", community_ids=(str(i),)) for i in range(n)]


@pytest.mark.parametrize(
    ("accepted", "status"),
    [("json_schema", 400), ("json_object_schema", 500), ("json_object", 400), ("none", 400)],
)
def test_each_endpoint_gets_the_strongest_form_it_accepts_and_it_is_remembered(accepted, status, caplog):
    caplog.set_level(logging.WARNING, logger="graphrag_core.llm.openai_model")
    with openai_server(only(accepted, status)) as server:
        model = model_for(server.base_url)
        events: list = []
        result = asyncio.run(run_global_map("Where is tea grown?", batches(3), model, concurrency=1, on_event=events.append))
        assert [a.answer for a in result.answers] == ["Tea is grown on hills."] * 3
        forms = [form_of(b) for b in server.bodies()]
    order = ["json_schema", "json_object_schema", "json_object", "none"]
    refused = order[: order.index(accepted)]
    assert forms == [*refused, accepted, accepted, accepted]  # negotiated once, then remembered
    assert model.output_form == accepted
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == len(refused)  # said once per refused form, not once per call
    for form, text in zip(refused, warnings):
        assert f"does not accept response_format {form}" in text
    # the run's events say it too, once per refused form, so a stored run shows it
    notices = [e.message for e in events if isinstance(e, ModelNotice)]
    assert notices == warnings


def test_models_built_with_one_endpoints_object_negotiate_once_and_announce_once(caplog):
    from graphrag_core.llm.endpoints import Endpoints
    from graphrag_core.llm.factory import build_chat_model

    caplog.set_level(logging.WARNING, logger="graphrag_core.llm.openai_model")
    shared = Endpoints()
    with openai_server(only("json_object")) as server:
        settings = ModelSettings(provider="openai", base_url=server.base_url, model="tiny", timeout=5)
        first, second = build_chat_model(settings, endpoints=shared), build_chat_model(settings, endpoints=shared)
        replies = [asyncio.run(model.complete(map_request("q", "x"))) for model in (first, second)]
        negotiated = [form_of(b) for b in server.bodies()]
        alone = OpenAIChatModel(settings)  # its own Endpoints: it knows nothing yet
        asyncio.run(alone.complete(map_request("q", "x")))
        again = [form_of(b) for b in server.bodies()][len(negotiated):]
    assert negotiated == ["json_schema", "json_object_schema", "json_object", "json_object"]  # the second model knew
    assert first.output_form == second.output_form == "json_object" and shared.accepted_form(first.endpoint) == "json_object"
    assert len(replies[0].notices) == 2 and replies[1].notices == ()  # each refusal said once, by the model that met it
    assert again == ["json_schema", "json_object_schema", "json_object"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 4  # two for the shared object, two for the model on its own


def test_the_schema_sent_is_the_calls_own():
    with openai_server(only("json_schema")) as server:
        model = model_for(server.base_url)
        asyncio.run(model.complete(map_request("q", "[Community ID: 1 | summary part 1]\nx")))
        rating = OutputSchema(name="rating", schema={"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"], "additionalProperties": False})
        asyncio.run(
            model.complete(ChatRequest(purpose="rate", messages=(ChatMessage(role="user", content="rate"),), output_schema=rating))
        )
        first, second = server.bodies()
    assert first["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "global_map_answer", "schema": MAP_OUTPUT_SCHEMA.schema_, "strict": True},
    }
    assert second["response_format"]["json_schema"]["name"] == "rating"
    assert second["response_format"]["json_schema"]["schema"]["required"] == ["score"]


def test_structured_output_can_be_turned_off():
    with openai_server(only("json_object")) as server:
        model = model_for(server.base_url, structured_output=False)
        asyncio.run(model.complete(map_request("q", "x")))
        assert [form_of(b) for b in server.bodies()] == ["json_object"]
    settings = ModelSettings.from_mapping({"GRAPHRAG_LLM_BASE_URL": "http://127.0.0.1:9/v1", "GRAPHRAG_LLM_STRUCTURED_OUTPUT": "false"})
    assert settings.structured_output is False


def test_a_server_error_that_is_not_about_the_format_is_not_a_refusal():
    def handler(path, body):
        return 500, {"error": {"message": "CUDA out of memory"}}

    with openai_server(handler) as server:
        model = model_for(server.base_url)
        with pytest.raises(RetryableModelError, match="HTTP 500: CUDA out of memory"):
            asyncio.run(model.complete(map_request("q", "x")))
        assert len(server.bodies()) == 1
    assert model.output_form is None


def test_an_injected_http_client_carries_the_calls_and_one_sdk_client_serves_a_loop():
    httpx = pytest.importorskip("httpx2")  # the HTTP library the installed openai SDK is built on
    import json

    seen: list[str] = []

    def transport(request):
        seen.append(str(request.url))
        return httpx.Response(200, json=completion_body(json.dumps({"answer": "via the seam", "usefulness": 5})))

    http_client = httpx.AsyncClient(transport=httpx.MockTransport(transport))
    model = OpenAIChatModel(ModelSettings(provider="openai", base_url="http://models.invalid/v1", model="m"), http_client=http_client)

    async def two_calls():
        first = model._client()
        replies = [await model.complete(map_request("q", "x")) for _ in range(2)]
        assert model._client() is first  # reused within the loop
        return replies

    replies = asyncio.run(two_calls())
    assert [r.text for r in replies] == ['{"answer": "via the seam", "usefulness": 5}'] * 2
    assert seen == ["http://models.invalid/v1/chat/completions"] * 2


REPLIES = {
    "map": {"answer": "Tea is grown on hills.", "usefulness": 70},
    "reduce": {"answer": "Tea is grown on hills [Data: Reports (3)]."},
    "rate": {"reason": "It is about the question.", "rating": 4},
    "judge": {"winner": 1, "reason": "More complete."},
    "claims": {"claims": ["Tea is grown on hills."]},
    "summary": {"title": "Tea", "summary": "About tea."},
}


def test_every_kind_of_call_sends_its_own_schema_and_the_schema_fits_its_parser():
    # every kind of call (map, reduce, rating, judging, claims, question generation and
    # model-written summaries) sends its own output JSON Schema
    from graphrag_core import retrieve_global
    from graphrag_core.evaluation.claims import extract_claims
    from graphrag_core.evaluation.judge import judge_pair
    from graphrag_core.evaluation.questions import generate_questions
    from graphrag_core.llm.scripted import ScriptedChatModel
    from graphrag_core.request import GlobalSearchRequest
    from graphrag_core.samples.summarize import CommunityDigest, MemberDigest, model_summaries

    from .factories import small_index

    def reply(request: ChatRequest) -> dict:
        if request.purpose == "questions":
            step = request.output_schema.schema_["required"][0] if request.output_schema else "personas"
            return {step: [f"a {step[:-1]}"]}
        return REPLIES[request.purpose]

    model = ScriptedChatModel(reply)

    async def every_kind() -> None:
        await retrieve_global(small_index(), GlobalSearchRequest(query="Where is tea grown?", community_selection="dynamic"), model)
        await judge_pair("Where?", "On hills.", "Nowhere.", model, criteria=["comprehensiveness"])
        await extract_claims("Tea is grown on hills.", model)
        await generate_questions(small_index(), model, personas=1, tasks=1, per_task=1)
        await model_summaries([("7", CommunityDigest(size=1, level=0, members=(MemberDigest("tea", "a drink"),)))], model, language="en", concurrency=1)

    asyncio.run(every_kind())
    purposes = {r.purpose for r in model.requests}
    assert purposes == {"map", "reduce", "rate", "judge", "claims", "questions", "summary"}
    for request in model.requests:
        schema = request.output_schema
        assert schema is not None, f"the {request.purpose} call sends no schema"
        body = schema.schema_
        # strict mode: every property required, nothing else allowed; and the reply the parser
        # accepted has exactly the schema's keys
        assert body["type"] == "object" and body["additionalProperties"] is False
        assert set(body["required"]) == set(body["properties"]) == set(reply(request)), request.purpose


def test_a_refusal_is_said_in_one_sentence_with_the_servers_words_behind_an_expander():
    """Issue 40, item 7: Explore showed the refusal as the raw validation dump under the status.
    The notice a run gets reads back into one sentence, and the page shows that sentence with the
    server's message in a details expander."""
    from streamlit.testing.v1 import AppTest

    from graphrag_app.text import escape_markdown
    from graphrag_core.llm.openai_replies import FormRefusal

    with openai_server(only("json_object_schema", 500)) as server:
        model = model_for(server.base_url)
        events: list = []
        asyncio.run(run_global_map("Where is tea grown?", batches(1), model, concurrency=1, on_event=events.append))
    notice = next(e.message for e in events if isinstance(e, ModelNotice))
    refusal = FormRefusal.read(notice)
    assert refusal is not None and (refusal.form, refusal.following) == ("json_schema", "json_object_schema")
    assert refusal.detail.startswith("1 validation error for CreateChatCompletionRequest")
    assert refusal.sentence == f"This server ({model.identity}) does not take json_schema output: it takes json_object, and the reply's schema now goes in the prompt."
    assert FormRefusal.read("Model endpoint x answered slowly.") is None

    def status(notice: str) -> None:
        from graphrag_app.explore.run_view import draw_status
        from graphrag_core.events import ModelNotice as Notice
        from graphrag_core.state import RunState

        state = RunState()
        state.apply(Notice(at=0.0, message=notice))
        draw_status(__import__("streamlit").container(), state)

    at = AppTest.from_function(status, args=(notice,)).run()
    assert not at.exception
    captions = [c.value for c in at.caption]
    assert captions == [f"Model: {escape_markdown(refusal.sentence)}"], captions
    assert not any("validation error" in c for c in captions)  # the dump is not on the main screen
    assert [e.label for e in at.expander] == ["What the server said"]
    assert any(t.value.startswith("1 validation error for CreateChatCompletionRequest") for t in at.expander[0].text)
