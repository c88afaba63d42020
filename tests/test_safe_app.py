"""Issue 27 on the app's pages (AppTest): a damaged run history, a NUL byte in ``index=``, and a
shared app that calls only its operator's endpoints, each read as one clear notice."""

from __future__ import annotations

from pathlib import Path

import pytest

from .apptest_support import app, page
from .test_safe_inputs import DAMAGED, damaged_history


def test_explore_and_compare_read_a_damaged_history_as_one_clear_notice(run_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db, run_id = damaged_history(run_db.parent)
    monkeypatch.setenv("GRAPHRAG_EXPLORER_DB", str(db))
    compare = page("compare")
    compare.query_params["runs"] = run_id
    for at in (app(), app({"run": run_id}), compare):
        at.run()
        assert not at.exception
        errors = [e.value for e in at.error]
        assert errors and all(DAMAGED in e and str(db) in e for e in errors), errors
        assert not any("StoreError" in e or "DatabaseError" in e for e in errors)


@pytest.mark.parametrize("name", [None, "provenance", "index_browser"])
def test_a_nul_byte_in_the_index_parameter_is_a_clear_notice(run_db: Path, name: str | None) -> None:
    at = app() if name is None else page(name)
    at.query_params["index"] = "/tmp/some\x00index"
    if name == "provenance":
        at.query_params["community"] = "1"
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("NUL" in e and "%00" in e for e in errors), errors


def test_resolve_source_refuses_a_nul_byte_with_an_index_access_error() -> None:
    from graphrag_app.loaders import IndexAccessError, resolve_source
    from graphrag_app.settings import settings_from_mapping

    for roots in ({}, {"GRAPHRAG_EXPLORER_ALLOWED_ROOTS": "/tmp"}):
        with pytest.raises(IndexAccessError, match="NUL"):
            resolve_source("/tmp/a\x00b", settings_from_mapping(roots))


# -- a shared app calls only its operator's endpoints (finding 6) ----------------------------------


def test_an_app_is_shared_when_roots_are_set_or_it_is_said_so() -> None:
    from graphrag_app.settings import settings_from_mapping

    assert not settings_from_mapping({}).shared
    assert settings_from_mapping({"GRAPHRAG_EXPLORER_ALLOWED_ROOTS": "/srv/indexes"}).shared
    shared = settings_from_mapping({"GRAPHRAG_EXPLORER_SHARED": "1"})
    assert shared.shared and shared.allowed_roots == (), "shared with no roots: the bundled samples only"
    assert not settings_from_mapping({"GRAPHRAG_EXPLORER_SHARED": "0"}).shared


def test_a_shared_app_calls_only_configured_or_allow_listed_endpoints() -> None:
    from graphrag_app.settings import endpoint_refusal, settings_from_mapping
    from graphrag_core.llm.settings import ModelChoice, resolve_model_settings

    app = settings_from_mapping(
        {"GRAPHRAG_EXPLORER_SHARED": "1", "GRAPHRAG_LLM_BASE_URL": "http://llm.internal:8000/v1", "GRAPHRAG_LLM_ALLOWED_BASE_URLS": "https://api.example.org/v1"}
    )

    def refusal(base_url: str) -> str | None:
        return endpoint_refusal(app, resolve_model_settings(app.model, ModelChoice(provider="openai", base_url=base_url)))

    assert refusal("") is None and refusal("http://llm.internal:8000/v1/") is None and refusal("https://api.example.org/v1") is None
    said = refusal("http://169.254.169.254/latest")
    assert said is not None and "169.254.169.254" in said and "GRAPHRAG_LLM_ALLOWED_BASE_URLS" in said
    assert refusal("http://llm.internal:8001/v1") is not None  # another port is another endpoint
    assert endpoint_refusal(app, resolve_model_settings(app.model, ModelChoice(provider="offline"))) is None
    local = settings_from_mapping({"GRAPHRAG_LLM_BASE_URL": "http://llm.internal:8000/v1"})
    assert endpoint_refusal(local, resolve_model_settings(local.model, ModelChoice(provider="openai", base_url="http://other:1/v1"))) is None


def test_explore_in_a_shared_app_refuses_a_linked_endpoint_without_calling_it(run_db: Path, monkeypatch: pytest.MonkeyPatch, two_servers) -> None:  # type: ignore[no-untyped-def]
    from .apptest_support import run_question

    home, other = two_servers
    monkeypatch.setenv("GRAPHRAG_EXPLORER_SHARED", "1")
    monkeypatch.setenv("GRAPHRAG_LLM_BASE_URL", home.base_url)
    at = run_question(app({"model": "openai", "base_url": other.base_url, "llm": "m"}).run())
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("only calls the endpoints its operator configured" in e for e in errors), errors
    assert other.requests == [], "the linked endpoint was called"
    assert "run" not in at.query_params
