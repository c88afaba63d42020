"""Issue 10: a configured key reaches only its endpoint, echoed keys are redacted, bad model
replies name the endpoint and model."""

from __future__ import annotations

import asyncio

import pytest

from graphrag_app.settings import settings_from_mapping
from graphrag_core.errors import RetryableModelError
from graphrag_core.llm.settings import ModelChoice, ModelSettings, resolve_model_settings
from graphrag_core.llm.factory import build_chat_model
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.search import retrieve_global
from graphrag_core.history import RunRecord, RunStore
from graphrag_core.report import record_to_markdown

from .factories import small_index
from .openai_server import Reply, Server, completion_body
from .test_openai_model import SECRET, map_request, run


def configured(base_url: str, **extra: str):  # type: ignore[no-untyped-def]
    return settings_from_mapping({"GRAPHRAG_LLM_BASE_URL": base_url, "GRAPHRAG_LLM_API_KEY": SECRET, "GRAPHRAG_LLM_MODEL": "m", **extra})


def authorization(server: Server) -> str:
    return server.requests[-1]["headers"].get("authorization", "")


def test_configured_key_goes_only_to_the_configured_endpoint(two_servers: tuple[Server, Server]) -> None:
    home, other = two_servers
    app = configured(home.base_url)
    for server, base_url in ((home, ""), (home, home.base_url + "/"), (other, other.base_url)):
        server.script(Reply(body=completion_body()))
        run(build_chat_model(resolve_model_settings(app.model, ModelChoice(provider="openai", base_url=base_url, model="x"))))
    assert [authorization(home)] * 2 == [r["headers"]["authorization"] for r in home.requests] == [f"Bearer {SECRET}"] * 2
    assert SECRET not in authorization(other)
    assert all(SECRET not in str(r) for r in other.requests)


def test_a_key_typed_for_another_endpoint_is_sent_there(two_servers: tuple[Server, Server]) -> None:
    home, other = two_servers
    other.script(Reply(body=completion_body()))
    run(build_chat_model(resolve_model_settings(configured(home.base_url).model, ModelChoice(provider="openai", base_url=other.base_url, api_key="sk-typed"))))
    assert authorization(other) == "Bearer sk-typed"


def test_allow_listed_endpoints_receive_the_configured_key(two_servers: tuple[Server, Server]) -> None:
    home, other = two_servers
    app = configured(home.base_url, GRAPHRAG_LLM_ALLOWED_BASE_URLS=f"https://example.org/v1, {other.base_url}")
    other.script(Reply(body=completion_body()))
    run(build_chat_model(resolve_model_settings(app.model, ModelChoice(provider="openai", base_url=other.base_url))))
    assert authorization(other) == f"Bearer {SECRET}"
    assert app.model.key_may_go_to("https://example.org:443/v1/")
    assert not app.model.key_may_go_to("https://example.org/v2")
    assert not app.model.key_may_go_to("http://example.org/v1")


def test_an_echoed_key_is_redacted_in_events_result_and_history(two_servers: tuple[Server, Server], tmp_path) -> None:  # type: ignore[no-untyped-def]
    home, _ = two_servers
    echo = f'{{"answer": "Your key is {SECRET}.", "usefulness": 80}}'
    home.script(*[Reply(body=completion_body(echo)) for _ in range(40)])
    model = build_chat_model(ModelSettings.from_mapping({"GRAPHRAG_LLM_BASE_URL": home.base_url, "GRAPHRAG_LLM_API_KEY": SECRET}))
    events: list = []
    request = GlobalSearchRequest(query="What is the key?", seed=1)
    result = asyncio.run(retrieve_global(small_index(), request, model, on_event=events.append))
    assert "[redacted]" in result.answer
    store = RunStore(tmp_path / "runs.sqlite3")
    record = RunRecord.from_events(events, index_name="small")
    store.save(record)
    for text in (result.model_dump_json(), *(e.model_dump_json() for e in events), store.export_json(record.run_id), record_to_markdown(store.get(record.run_id))):
        assert SECRET not in text


def test_a_200_reply_that_is_not_json_names_the_endpoint_and_model(two_servers: tuple[Server, Server]) -> None:
    home, _ = two_servers
    home.script(Reply(body=b"<html>oops</html>", headers={"content-type": "application/json"}))
    model = build_chat_model(ModelSettings.from_mapping({"GRAPHRAG_LLM_BASE_URL": home.base_url, "GRAPHRAG_LLM_MODEL": "tiny-model"}))
    with pytest.raises(RetryableModelError) as caught:
        run(model, map_request())
    message = str(caught.value)
    assert "tiny-model" in message and home.base_url.split("//")[1].split("/")[0] in message
    assert "not JSON" in message
