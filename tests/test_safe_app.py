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
