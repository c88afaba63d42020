"""Shared fixtures: an isolated run history per test, and a small index on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_core.index import save_index

from .factories import small_index

APP_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def run_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``GRAPHRAG_EXPLORER_DB`` pointing into this test's tmp folder (no shared history)."""
    path = tmp_path / "runs.sqlite3"
    monkeypatch.setenv("GRAPHRAG_EXPLORER_DB", str(path))
    monkeypatch.delenv("GRAPHRAG_EXPLORER_ALLOWED_ROOTS", raising=False)
    monkeypatch.delenv("GRAPHRAG_EXPLORER_CACHE", raising=False)  # the map cache goes beside the store
    monkeypatch.setenv("GRAPHRAG_LLM_OFFLINE_LATENCY", "0")  # no presentation pace in tests
    return path


@pytest.fixture
def small_index_dir(tmp_path: Path) -> Path:
    """``tests.factories.small_index()`` saved as a native index folder."""
    folder = tmp_path / "small-index"
    save_index(small_index(), folder)
    return folder
