"""The OpenAI-compatible adapter against a real chat-completions server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from graphrag_core.errors import (
    FatalModelError,
    MapOutputError,
    ModelError,
    RetryableModelError,
)
from graphrag_core.llm.base import ChatModel, ChatRequest
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.openai_model import OpenAIChatModel
from graphrag_core.llm.openai_replies import parse_retry_after
from graphrag_core.llm.settings import ModelSettings, SettingsError
from graphrag_core.llm.factory import build_chat_model
from graphrag_core.prompts import render_map_messages

from .openai_server import Reply, Server, completion_body, openai_server

SECRET = "sk-test-SECRET-0123456789abcdef"



@pytest.fixture
def server() -> Iterator[Server]:
    """A scripted server (``server.script(Reply(...))``)."""
    with openai_server() as fake:
        yield fake


def make_model(server: Server, **overrides: object) -> OpenAIChatModel:
    values = {
        "GRAPHRAG_LLM_BASE_URL": server.base_url,
        "GRAPHRAG_LLM_API_KEY": SECRET,
        "GRAPHRAG_LLM_MODEL": "test-model",
        "GRAPHRAG_LLM_TIMEOUT": "5",
        **overrides,
    }
    model = build_chat_model(ModelSettings.from_mapping(values))
    assert isinstance(model, OpenAIChatModel)
    return model


def map_request(max_tokens: int | None = 256) -> ChatRequest:
    return ChatRequest(purpose="map", messages=render_map_messages("What floods?", "[Community ID: 1 | summary part 1]\nRivers flood."), max_tokens=max_tokens)


def run(model: ChatModel, request: ChatRequest | None = None):
    return asyncio.run(model.complete(request or map_request()))


def test_success_sends_the_request_and_records_usage(server: Server) -> None:
    server.script(Reply(body=completion_body()))
    model = make_model(server, GRAPHRAG_LLM_TEMPERATURE="0.3")
    response = run(model)
    assert response.text == '{"answer": "Floods.", "usefulness": 80}'
    assert response.usage is not None
    assert (response.usage.prompt_tokens, response.usage.completion_tokens, response.usage.total_tokens) == (11, 7, 18)
    sent = server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["authorization"] == f"Bearer {SECRET}"
    assert sent["json"]["model"] == "test-model"
    assert sent["json"]["max_tokens"] == 256
    assert sent["json"]["temperature"] == 0.3
    assert sent["json"]["response_format"] == {"type": "json_object"}
    assert [m["role"] for m in sent["json"]["messages"]] == ["system", "user"]


def test_json_mode_off_and_no_max_tokens(server: Server) -> None:
    server.script(Reply(body=completion_body()))
    run(make_model(server, GRAPHRAG_LLM_JSON_MODE="false"), map_request(max_tokens=None))
    sent = server.requests[0]["json"]
    assert "response_format" not in sent and "max_tokens" not in sent


def test_usage_missing_is_none(server: Server) -> None:
    body = completion_body()
    del body["usage"]
    server.script(Reply(body=body))
    assert run(make_model(server)).usage is None


def test_client_survives_separate_event_loops(server: Server) -> None:
    server.script(Reply(body=completion_body("one")), Reply(body=completion_body("two")))
    model = make_model(server)
    assert run(model).text == "one"
    assert run(model).text == "two"  # a second asyncio.run: no "Event loop is closed"


def test_429_with_retry_after_then_success(server: Server) -> None:
    server.script(
        Reply(429, {"error": {"message": "Rate limit reached", "type": "requests"}}, {"retry-after": "2"}),
        Reply(body=completion_body()),
    )
    model = make_model(server)
    with pytest.raises(RetryableModelError) as caught:
        run(model)
    error = caught.value
    assert error.retryable and error.status_code == 429 and error.retry_after == 2.0
    assert "Rate limit reached" in str(error)
    assert run(model).text.startswith('{"answer"')
    assert len(server.requests) == 2  # the SDK did not retry on its own


def test_retry_after_http_date_and_ms() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    later = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after({"Retry-After": later}, now=now.timestamp()) == pytest.approx(30.0)
    assert parse_retry_after({"Retry-After": format_datetime(now - timedelta(seconds=5), usegmt=True)}, now=now.timestamp()) == 0.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None


def test_500_twice_is_retryable_each_time(server: Server) -> None:
    server.script(Reply(500, {"error": {"message": "boom"}}), Reply(503, "upstream down"))
    model = make_model(server)
    for status in (500, 503):
        with pytest.raises(RetryableModelError) as caught:
            run(model)
        assert caught.value.status_code == status and caught.value.retry_after is None
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_4xx_are_fatal(server: Server, status: int) -> None:
    server.script(Reply(status, {"error": {"message": f"Incorrect API key provided: {SECRET}"}}))
    with pytest.raises(FatalModelError) as caught:
        run(make_model(server))
    assert not caught.value.retryable and caught.value.status_code == status
    assert SECRET not in str(caught.value)
    assert len(server.requests) == 1


def test_timeout_is_retryable(server: Server) -> None:
    # The reply would come only when the test ends, so only the client's own timeout can end
    # the call (without it the valid reply would arrive and nothing would be raised).
    server.script(Reply(body=completion_body(), delay=600))
    with pytest.raises(RetryableModelError, match="timed out"):
        run(make_model(server, GRAPHRAG_LLM_TIMEOUT="0.3"))
    assert len(server.requests) == 1


def test_connection_refused_is_retryable() -> None:
    with openai_server() as fake:  # closed when the block ends: nothing listens on the port then
        base_url = fake.base_url
    model = build_chat_model(ModelSettings(provider="openai", base_url=base_url, api_key=SECRET, model="m", timeout=2))
    with pytest.raises(RetryableModelError, match="Could not reach"):
        run(model)


@pytest.mark.parametrize(
    "body",
    [
        {"id": "x", "object": "chat.completion", "choices": []},
        {"id": "x"},
        completion_body(content=None),
        "<html>Bad gateway page</html>",
    ],
    ids=["empty-choices", "no-choices", "no-content", "not-json"],
)
def test_malformed_body_is_retryable(server: Server, body: dict | str) -> None:
    server.script(Reply(body=body))
    with pytest.raises(RetryableModelError, match="malformed") as caught:
        run(make_model(server))
    assert caught.value.retryable


def test_non_json_answer_is_returned_and_rejected_by_the_parser(server: Server) -> None:
    server.script(Reply(body=completion_body("Sure! Floods happen in spring.")))
    response = run(make_model(server))
    assert response.text == "Sure! Floods happen in spring."
    from graphrag_core.parsing import parse_map_output

    with pytest.raises(MapOutputError, match="LLM output is not valid JSON"):
        parse_map_output(response.text)


def test_azure_api_version(server: Server) -> None:
    server.script(Reply(body=completion_body()))
    azure_base = server.base_url.removesuffix("/v1")
    model = make_model(server, GRAPHRAG_LLM_BASE_URL=azure_base, GRAPHRAG_LLM_API_VERSION="2024-06-01", GRAPHRAG_LLM_MODEL="my-deployment")
    assert model.identity.startswith("azure:my-deployment@127.0.0.1:")
    run(model)
    sent = server.requests[0]
    assert sent["path"] == "/openai/deployments/my-deployment/chat/completions?api-version=2024-06-01"
    assert sent["headers"]["api-key"] == SECRET


def test_no_key_sends_a_placeholder_not_the_environment(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    server.script(Reply(body=completion_body()))
    model = build_chat_model(ModelSettings(provider="openai", base_url=server.base_url, model="llama3"))
    run(model)
    assert "sk-from-the-environment" not in server.requests[0]["headers"].get("authorization", "")


def test_key_never_recorded(server: Server, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_LOG", "debug")
    caplog.set_level(logging.DEBUG)
    server.script(
        Reply(body=completion_body()),
        Reply(401, {"error": {"message": f"Incorrect API key provided: {SECRET}."}}),
        Reply(500, {"error": {"message": f"echo {SECRET}"}}),
    )
    settings = ModelSettings.from_mapping({"GRAPHRAG_LLM_BASE_URL": server.base_url, "OPENAI_API_KEY": SECRET, "GRAPHRAG_LLM_MODEL": "m"})
    model = build_chat_model(settings)
    run(model)
    errors: list[ModelError] = []
    for _ in range(2):
        with pytest.raises(ModelError) as caught:
            run(model)
        errors.append(caught.value)
    recorded = [
        repr(model),
        str(model.identity),
        repr(settings),
        str(settings),
        settings.model_dump_json(),
        json.dumps(settings.describe()),
        str(settings.model_dump()),
        *(str(e) for e in errors),
        *(r.getMessage() for r in caplog.records),
        caplog.text,
    ]
    for text in recorded:
        assert SECRET not in text
    assert model.identity == f"openai:m@{settings.host}"
    assert settings.api_key is not None and settings.api_key.get_secret_value() == SECRET


def test_settings_defaults_and_errors() -> None:
    offline = ModelSettings.from_mapping({})
    assert offline.provider == "offline" and isinstance(build_chat_model(offline), OfflineChatModel)
    configured = ModelSettings.from_mapping({"OPENAI_API_KEY": SECRET})
    assert configured.provider == "openai" and configured.base_url == "https://api.openai.com/v1"
    assert ModelSettings.from_mapping({"GRAPHRAG_LLM_PROVIDER": "offline", "OPENAI_API_KEY": SECRET}).provider == "offline"
    latency = ModelSettings.from_mapping({"GRAPHRAG_LLM_OFFLINE_LATENCY": "0.1, 0.4", "GRAPHRAG_LLM_OFFLINE_SEED": 3})
    model = build_chat_model(latency)
    assert isinstance(model, OfflineChatModel) and model.latency == (0.1, 0.4) and model.seed == 3
    typed = ModelSettings.from_mapping({"GRAPHRAG_LLM_JSON_MODE": False, "GRAPHRAG_LLM_TIMEOUT": 12, "GRAPHRAG_LLM_BASE_URL": "http://localhost:11434/v1"})
    assert typed.provider == "openai" and typed.json_mode is False and typed.timeout == 12.0 and typed.api_key is None
    for bad in (
        {"GRAPHRAG_LLM_PROVIDER": "anthropic"},
        {"GRAPHRAG_LLM_TEMPERATURE": "hot"},
        {"GRAPHRAG_LLM_TIMEOUT": "0", "GRAPHRAG_LLM_API_KEY": SECRET},
        {"GRAPHRAG_LLM_BASE_URL": "localhost:8000", "GRAPHRAG_LLM_API_KEY": SECRET},
        {"GRAPHRAG_LLM_JSON_MODE": "perhaps"},
        {"GRAPHRAG_LLM_OFFLINE_LATENCY": "2,1"},
    ):
        with pytest.raises(SettingsError) as caught:
            ModelSettings.from_mapping(bad)
        assert SECRET not in str(caught.value)


def test_settings_read_an_environment_with_pydantic_settings(monkeypatch) -> None:
    from graphrag_core.llm.settings import ModelEnvironment

    environ = {
        "GRAPHRAG_LLM_API_KEY": "",
        "OPENAI_API_KEY": SECRET,
        "GRAPHRAG_LLM_MODEL": "local-model",
        "GRAPHRAG_LLM_JSON_MODE": "off",
        "GRAPHRAG_LLM_OFFLINE_LATENCY": "0.1;0.3",
    }
    from_env = ModelSettings.from_mapping(environ)
    assert from_env.provider == "openai" and from_env.model == "local-model" and from_env.json_mode is False
    assert from_env.api_key is not None and from_env.api_key.get_secret_value() == SECRET
    assert from_env.offline_latency == (0.1, 0.3)
    assert ModelEnvironment.model_fields["api_key"].validation_alias.choices == ["GRAPHRAG_LLM_API_KEY", "OPENAI_API_KEY"]
    with pytest.raises(SettingsError, match="^GRAPHRAG_LLM_TEMPERATURE must be a number, not 'hot'.$"):
        ModelSettings.from_mapping({**environ, "GRAPHRAG_LLM_TEMPERATURE": "hot"})


def test_the_engine_never_reads_the_process_environment(monkeypatch) -> None:
    """The front ends pass their environment; a mapping is read alone, and the settings class
    built with no mapping reads nothing either (its only source is what it is given)."""
    from graphrag_core.llm.settings import ModelEnvironment

    monkeypatch.setenv("GRAPHRAG_LLM_MODEL", "from-the-environment")
    monkeypatch.setenv("GRAPHRAG_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    assert ModelSettings.from_mapping({}).provider == "offline"
    assert ModelEnvironment().model is None and ModelEnvironment().base_url is None


def test_an_http_200_whose_body_is_an_error_shows_the_servers_message(server: Server) -> None:
    server.script(Reply(body={"error": {"message": "model 'test-model' is loading, try later", "type": "server_error"}}))
    with pytest.raises(RetryableModelError) as caught:
        run(make_model(server))
    assert "model 'test-model' is loading, try later" in str(caught.value)
    assert "no choices" not in str(caught.value)


@pytest.mark.parametrize(("prompt", "completion"), [(-1014, 7), (11, -3), (25_000_000_000_000, 7)], ids=["negative-prompt", "negative-completion", "absurd"])
def test_negative_or_absurd_usage_is_recorded_as_unknown_with_a_warning(server: Server, prompt: int, completion: int) -> None:
    server.script(Reply(body=completion_body(prompt_tokens=prompt, completion_tokens=completion)), Reply(body=completion_body(prompt_tokens=-5)))
    model = make_model(server)
    response = run(model)
    assert response.usage is None and response.usage_unreported
    assert len(response.notices) == 1 and "implausible token usage" in response.notices[0] and f"{prompt:,}" in response.notices[0]
    again = run(model)
    assert again.usage is None and again.notices == ()  # said once per model


def test_the_finish_reason_is_kept_and_a_missing_usage_is_flagged(server: Server) -> None:
    body = completion_body('{"answer": "cut', prompt_tokens=5, completion_tokens=256)
    body["choices"][0]["finish_reason"] = "length"
    server.script(Reply(body=body), Reply(body={k: v for k, v in completion_body().items() if k != "usage"}))
    model = make_model(server)
    cut = run(model)
    assert cut.cut and cut.finish_reason == "length" and not cut.usage_unreported
    plain = run(model)
    assert not plain.cut and plain.usage is None and plain.usage_unreported
