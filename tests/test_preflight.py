"""Before a run, what can be checked without spending tokens is checked."""

from __future__ import annotations

import asyncio
import io
import json
import socket

import pytest

from graphrag_core import ScriptedChatModel
from graphrag_cli.main import main
from graphrag_core.errors import PreflightError
from graphrag_core.llm.openai_model import OpenAIChatModel
from graphrag_core.llm.settings import ModelSettings
from graphrag_core.preflight import Preflight, preflight

from .openai_server import completion_body, openai_server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def openai_model(base_url: str, **fields) -> OpenAIChatModel:
    return OpenAIChatModel(ModelSettings(provider="openai", base_url=base_url, model="m", **fields))


def test_an_unreachable_endpoint_is_refused_up_front_naming_it():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(PreflightError) as info:
        asyncio.run(preflight(openai_model(url)))
    assert str(info.value).startswith(f"The model endpoint {url} cannot be reached (")
    assert info.value.endpoint == url


def test_a_hosted_endpoint_without_a_key_is_refused_without_a_connection():
    with pytest.raises(PreflightError, match=r"^No API key for the model endpoint https://api.openai.com/v1: set GRAPHRAG_LLM_API_KEY"):
        asyncio.run(preflight(openai_model("https://api.openai.com/v1")))


def test_a_reachable_local_endpoint_passes_and_nothing_is_sent():
    with openai_server(lambda path, body: (200, completion_body("{}"))) as server:
        asyncio.run(preflight(openai_model(server.base_url)))
        assert server.requests == []
    asyncio.run(preflight(ScriptedChatModel("{}")))  # nothing to check


def test_the_command_line_refuses_before_any_batch(tmp_path):
    from graphrag_core.index import save_index

    from .factories import small_index

    save_index(small_index(), tmp_path / "idx")
    url = f"http://127.0.0.1:{free_port()}/v1"
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["query", str(tmp_path / "idx"), "What?", "--model", "openai", "--base-url", url, "--model-name", "m", "--json", "--no-store", "--no-cache"],
        stdout=out, stderr=err, environ={},
    )
    assert code != 0
    assert err.getvalue().count("cannot be reached") == 1
    assert url in err.getvalue()
    assert "batch" not in err.getvalue()
    payload = json.loads(out.getvalue())
    assert payload["status"] == "failed" and payload["error_type"] == "PreflightError" and payload["endpoint"] == url


class CountedModel:
    """A model whose check only counts: the shape a network adapter offers."""

    identity = "counted@127.0.0.1:1"

    def __init__(self, checks: list, *, key: str = "counted@127.0.0.1:1") -> None:
        self.checks = checks
        self.preflight_key = key

    async def complete(self, request):
        raise AssertionError("a check spends no tokens")

    async def preflight(self, *, timeout_s):
        self.checks.append(timeout_s)


def test_a_pass_is_remembered_so_each_run_does_not_check_again():
    checks = []
    memory = Preflight()
    asyncio.run(memory.check(CountedModel(checks)))
    asyncio.run(memory.check(CountedModel(checks)))
    assert len(checks) == 1
    memory = Preflight()  # the memory is its owner's: a new owner checks again
    asyncio.run(memory.check(CountedModel(checks)))
    assert len(checks) == 2


def check_with(memory: Preflight, model) -> None:
    asyncio.run(memory.check(model))


def test_a_pass_is_remembered_for_a_while_per_key_and_only_by_its_owner():
    checks, now = [], [0.0]
    memory = Preflight(memory_s=300.0, clock=lambda: now[0])
    check_with(memory, CountedModel(checks))
    now[0] = 299.0
    check_with(memory, CountedModel(checks))
    assert len(checks) == 1
    check_with(memory, CountedModel(checks, key="counted@127.0.0.1:1 (key set)"))  # another key presence
    assert len(checks) == 2
    now[0] = 301.0  # the pass has expired
    check_with(memory, CountedModel(checks))
    assert len(checks) == 3
    asyncio.run(preflight(CountedModel(checks)))  # the function checks every time, remembering nothing
    asyncio.run(preflight(CountedModel(checks)))
    assert len(checks) == 5
    check_with(memory, ScriptedChatModel("{}"))  # nothing to check
    assert len(checks) == 5


def test_an_endpoints_memory_key_says_whether_a_key_is_set_and_never_holds_it():
    secret = "sk-preflight-SECRET"
    hosted = openai_model("https://api.openai.com/v1", api_key=secret)
    assert hosted.preflight_key == f"{hosted.identity} (key set)" and secret not in hosted.preflight_key
    assert openai_model("https://api.openai.com/v1").preflight_key == hosted.identity
    assert openai_model("http://127.0.0.1:9/v1", api_key=secret).preflight_key == "openai:m@127.0.0.1:9"  # needs no key


def test_a_failure_is_never_remembered():
    url = f"http://127.0.0.1:{free_port()}/v1"
    memory = Preflight()
    for _ in range(2):
        with pytest.raises(PreflightError):
            asyncio.run(memory.check(openai_model(url)))
