"""Issue 10: the command line reads the same configuration as the app (model, run history,
map cache), a configured key never follows --base-url elsewhere, and each run names its model."""

from __future__ import annotations

import json
from pathlib import Path

from graphrag_cli.context import EXIT_OK
from graphrag_core.history import RunStore

from .cli_support import QUESTION, run_cli
from .openai_server import Reply, completion_body
from .test_openai_model import SECRET

REPLY = '{"answer": "The mill.", "usefulness": 60}'
"""Read as a map answer and as the reduce answer alike."""


def script_run(server) -> None:  # type: ignore[no-untyped-def]
    server.script(*[Reply(body=completion_body(REPLY)) for _ in range(8)])


def test_query_uses_the_apps_model_settings_and_names_the_model(capsys, index_dir, two_servers, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    home, _ = two_servers
    environ = {
        "GRAPHRAG_LLM_PROVIDER": "openai",
        "GRAPHRAG_LLM_BASE_URL": home.base_url,
        "GRAPHRAG_LLM_API_KEY": SECRET,
        "GRAPHRAG_LLM_MODEL": "served-model",
        "GRAPHRAG_EXPLORER_DB": str(tmp_path / "app-runs.sqlite3"),
        "GRAPHRAG_EXPLORER_CACHE": str(tmp_path / "app-cache.sqlite3"),
    }
    script_run(home)
    code, out, err = run_cli(capsys, "query", index_dir, QUESTION, "--seed", "1", "--json", environ=environ)
    assert code == EXIT_OK, err
    assert home.requests and home.requests[0]["json"]["model"] == "served-model"
    assert home.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"
    document = json.loads(out)
    host = home.base_url.split("//")[1].split("/")[0]
    assert document["model"] == f"openai:served-model@{host}" and document["answer"] == "The mill."
    runs = RunStore(tmp_path / "app-runs.sqlite3").list_runs()
    assert len(runs) == 1 and runs[0].model == document["model"]
    assert (tmp_path / "app-cache.sqlite3").is_file()

    calls = len(home.requests)
    code, out, err = run_cli(capsys, "query", index_dir, QUESTION, "--model", "offline", environ=environ)
    assert code == EXIT_OK and len(home.requests) == calls
    assert "answered by offline" in err


def test_cache_off_and_default_offline(capsys, index_dir, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    environ = {"GRAPHRAG_EXPLORER_DB": str(tmp_path / "runs.sqlite3"), "GRAPHRAG_EXPLORER_CACHE": "off", "XDG_DATA_HOME": str(tmp_path / "xdg")}
    code, _, err = run_cli(capsys, "query", index_dir, QUESTION, environ=environ)
    assert code == EXIT_OK and "answered by offline" in err
    assert len(RunStore(tmp_path / "runs.sqlite3").list_runs()) == 1
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".sqlite3") == ["runs.sqlite3"]
    assert not (tmp_path / "xdg").exists()


def test_base_url_option_never_gets_the_configured_key(capsys, index_dir, two_servers) -> None:  # type: ignore[no-untyped-def]
    home, other = two_servers
    environ = {"GRAPHRAG_LLM_BASE_URL": home.base_url, "GRAPHRAG_LLM_API_KEY": SECRET, "MY_KEY": "sk-mine"}
    script_run(other)
    code, _, err = run_cli(capsys, "query", index_dir, QUESTION, "--base-url", other.base_url, "--no-store", "--no-cache", environ=environ)
    assert code == EXIT_OK, err
    assert other.requests and all(SECRET not in str(r["headers"]) for r in other.requests)
    script_run(other)
    code, _, err = run_cli(
        capsys, "query", index_dir, QUESTION, "--base-url", other.base_url, "--api-key-env", "MY_KEY", "--no-store", "--no-cache", environ=environ
    )
    assert code == EXIT_OK, err
    assert other.requests[-1]["headers"]["authorization"] == "Bearer sk-mine"
    assert not home.requests
