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
