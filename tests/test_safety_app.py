"""Issue 10 on the app's pages (AppTest): a slow cost preview never stalls the page, an
interrupted run is shown as interrupted with its finished batches, the page names its model."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import graphrag_app.previews as loaders
from graphrag_core.events import BatchesPlanned, MapBatchStarted, MapBatchSucceeded, PlannedBatch, RunStarted
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.history import RunRecord, RunStore

from .apptest_support import TIMEOUT, app


def test_a_slow_cost_preview_says_still_computing_and_the_page_stays_usable(run_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    compute = loaders._compute_preview

    def slow(*args):  # type: ignore[no-untyped-def]
        gate.wait(TIMEOUT)
        return compute(*args)

    monkeypatch.setattr(loaders, "_compute_preview", slow)
    monkeypatch.setattr(loaders, "PREVIEW_WAIT_S", 0.05)
    at = app({"seed": "424242"})  # a request no other test previewed
    try:
        at.run()
        assert not at.exception
        assert any("still computing" in c.value for c in at.caption)
        assert at.button(key="run_global_search").disabled is False
        assert "Batches" not in {m.label for m in at.metric}
    finally:
        gate.set()
    assert loaders.cost_previews().settle(TIMEOUT)
    at.run()
    assert "Batches" in {m.label for m in at.metric}
    assert not any("still computing" in c.value for c in at.caption)


def test_an_interrupted_run_reopens_with_its_finished_batches(run_db: Path) -> None:
    request = GlobalSearchRequest(query="What is tea?", seed=3)
    batches = [PlannedBatch(index=i, community_ids=(str(i),), token_estimate=100) for i in range(3)]
    events = [
        RunStarted(at=0.0, run_id="killed-run", request=request, seed=3, model="offline", tokenizer="heuristic"),
        BatchesPlanned(at=0.1, batches=batches, map_prompt_budget=7000, concurrency=2),
        MapBatchStarted(at=0.2, batch_index=0, attempt=1),
        MapBatchSucceeded(at=0.3, batch_index=0, attempt=1, answer="Tea is a drink.", usefulness=60.0, duration_s=0.1),
    ]
    record = RunRecord.from_events(events, index_name="jargon").model_copy(update={"status": "interrupted"})
    RunStore(run_db).save(record)
    at = app({"run": "killed-run"}).run()
    assert not at.exception
    shown = [t.value for t in at.text]
    assert any(t.startswith("Status: interrupted") for t in shown), shown
    assert any("1 of 3 map batches were done" in t for t in shown)
