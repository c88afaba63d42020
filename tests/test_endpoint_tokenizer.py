"""The tokenizer setting can count with the model server's own /tokenize."""

from __future__ import annotations

import asyncio

import pytest

from graphrag_core import ScriptedChatModel, retrieve_global
from graphrag_core.errors import RequestValidationError
from graphrag_core.events import BatchesPlanned, RunStarted
from graphrag_core.llm.openai_model import OpenAIChatModel
from graphrag_core.llm.settings import ModelSettings
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.search import plan_batches
from graphrag_core.tokens import tokenizer_for

from .factories import small_index
from .openai_server import completion_body, openai_server


def llama_cpp(path, body):
    if path == "/tokenize":
        return 200, {"tokens": list(range(len(body["content"])))}  # one token per character
    if body.get("stream"):
        return 200, [{"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [{"index": 0, "delta": {"content": '{"answer": "ok"}'}}]}]
    return 200, completion_body('{"answer": "points", "usefulness": 50}')


def vllm(path, body):
    if path == "/tokenize":
        return 200, {"count": len(body["prompt"]) // 2, "max_model_len": 8192, "tokens": []}
    return 404, {"detail": "Not Found"}


def model_at(url: str) -> OpenAIChatModel:
    return OpenAIChatModel(ModelSettings(provider="openai", base_url=url, model="m"))


def test_a_run_counts_with_the_servers_own_tokenizer():
    request = GlobalSearchRequest(query="Who?", seed=1, tokenizer="endpoint", map_token_budget=3000)
    events: list = []
    with openai_server(llama_cpp) as server:
        model = model_at(server.base_url)
        asyncio.run(retrieve_global(small_index(), request, model, on_event=events.append))
        counted = [r for r in server.requests if r["path"] == "/tokenize"]
    planned = next(e for e in events if isinstance(e, BatchesPlanned))
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.tokenizer == "endpoint"
    assert counted  # the server was asked

    class Characters:
        name = "characters"

        def count(self, text: str) -> int:
            return len(text)

    # the server counts one token per character: the run planned exactly what a character count plans
    _, _, estimates = plan_batches(small_index(), request, seed=1, tokenizer=Characters())
    assert [b.token_estimate for b in planned.batches] == estimates


def test_vllm_style_counts_are_read():
    with openai_server(vllm) as server:
        tokenizer = model_at(server.base_url).endpoint_tokenizer()
        assert tokenizer.count("abcdefgh") == 4
        assert tokenizer.count("abcdefgh") == 4
        assert len([r for r in server.requests if r["path"] == "/tokenize"]) == 1  # cached


def test_an_endpoint_without_tokenize_is_named():
    with openai_server(lambda path, body: (404, {"detail": "Not Found"})) as server:
        tokenizer = model_at(server.base_url).endpoint_tokenizer()
        with pytest.raises(RequestValidationError, match=r"offers no token count at http://127\.0\.0\.1:\d+/tokenize \(HTTP 404\)"):
            tokenizer.count("text")


def test_a_model_without_its_own_count_is_refused_by_name():
    with pytest.raises(ValueError, match="The model scripted has no token count of its own"):
        tokenizer_for("endpoint", ScriptedChatModel("{}"))


def test_the_command_line_reports_an_endpoint_without_tokenize_and_still_prints_json(tmp_path):
    import io
    import json

    from graphrag_cli.main import main
    from graphrag_core.index import save_index

    save_index(small_index(), tmp_path / "idx")
    with openai_server(lambda path, body: (404, {"detail": "Not Found"})) as server:
        out, err = io.StringIO(), io.StringIO()
        code = main(
            ["query", str(tmp_path / "idx"), "Who?", "--model", "openai", "--base-url", server.base_url, "--model-name", "m",
             "--tokenizer", "endpoint", "--json", "--no-cache", "--store", str(tmp_path / "runs.sqlite3")],
            stdout=out, stderr=err, environ={},
        )
    assert code != 0
    assert "offers no token count" in err.getvalue()
    payload = json.loads(out.getvalue())
    assert payload["status"] == "failed" and payload["error_type"] == "RequestValidationError"
    assert payload["figures"]["model_calls"] == 0


def test_a_sweep_counts_with_the_servers_own_tokenizer():
    # the sweep used to refuse the setting: it wrapped the model in a call counter that offered
    # no count of its own, so every point failed with "has no token count of its own"
    from graphrag_core.sweep import SweepSpec, run_sweep
    from graphrag_core.request import SearchDefaults

    spec = SweepSpec(query="Who?", levels=[0, 1], seeds=[1, 2], base=SearchDefaults(tokenizer="endpoint", map_token_budget=3000))
    with openai_server(llama_cpp) as server:
        result = asyncio.run(run_sweep(small_index(), spec, model_at(server.base_url)))
        counted = [r for r in server.requests if r["path"] == "/tokenize"]
    assert [p.status for p in result.points] and all(p.status == "completed" for p in result.points), [p.error for p in result.points]
    assert counted
    assert len(counted) == len({r["json"]["content"] for r in counted})  # one tokenizer, its counts cached across points


def test_a_sweep_against_an_endpoint_without_tokenize_is_refused_once_before_any_point():
    from graphrag_core.sweep import SweepSpec, run_sweep
    from graphrag_core.request import SearchDefaults

    spec = SweepSpec(query="Who?", levels=[0, 1], seeds=[1, 2], base=SearchDefaults(tokenizer="endpoint"))
    progress: list = []
    with openai_server(lambda path, body: (404, {"detail": "Not Found"})) as server:
        with pytest.raises(RequestValidationError, match="offers no token count at"):
            asyncio.run(run_sweep(small_index(), spec, model_at(server.base_url), on_progress=progress.append))
        # every known place to count was asked once, and no model call was made
        assert [r["path"] for r in server.requests] == ["/tokenize", "/extras/tokenize"]
    assert progress == []


def test_the_sweep_command_takes_the_endpoint_tokenizer(tmp_path):
    import io

    from graphrag_cli.main import main
    from graphrag_core.index import save_index

    save_index(small_index(), tmp_path / "idx")
    with openai_server(llama_cpp) as server:
        out, err = io.StringIO(), io.StringIO()
        code = main(
            ["sweep", str(tmp_path / "idx"), "Who?", "--levels", "0", "--seeds", "1", "--model", "openai", "--base-url", server.base_url,
             "--model-name", "m", "--tokenizer", "endpoint", "--no-cache", "--store", str(tmp_path / "runs.sqlite3"), "--out", str(tmp_path / "s.csv")],
            stdout=out, stderr=err, environ={},
        )
        counted = [r for r in server.requests if r["path"] == "/tokenize"]
    assert code == 0, err.getvalue()
    assert counted and "completed" in (tmp_path / "s.csv").read_text()
