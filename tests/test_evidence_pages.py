"""The evidence panels of the Explore page under AppTest (offline model, no network)."""

from __future__ import annotations

import json
from pathlib import Path

from graphrag_app.evidence import CALL_KEY
from graphrag_core.store import RunStore

from .test_app_pages import QUESTION, app, run_question


def _json_answer(text: str) -> object:
    try:
        return json.loads(text).get("answer", "").strip()
    except (ValueError, AttributeError):
        return None


def test_a_batch_opens_to_its_verbatim_prompt_raw_reply_and_reduce_fate(run_db: Path) -> None:
    at = run_question(app().run())
    assert not at.exception
    record = RunStore(run_db).get(at.query_params["run"])
    assert record is not None and record.result is not None
    at.selectbox(key=CALL_KEY).select("0").run()
    assert not at.exception
    codes = [c.value for c in at.code]
    assert any(f"---Question---\n{QUESTION}\n\n---Data---" in c for c in codes), "the user message, verbatim"
    assert any(c.startswith("---Role---") for c in codes), "the system message, verbatim"
    assert any('"usefulness"' in c for c in codes), "the raw reply"
    assert any("What the reduce did" in m.value for m in at.markdown)

    at.selectbox(key=CALL_KEY).select("reduce").run()
    codes = [c.value for c in at.code]
    assert any("[Usefulness: " in c and "Community IDs: " in c for c in codes), "the reduce prompt, verbatim"
    assert any(_json_answer(c) == record.result.answer for c in codes), "the reduce's raw reply"


def test_the_three_community_sets_are_tabs_named_the_same_everywhere(run_db: Path) -> None:
    at = run_question(app().run())
    labels = [t.label for t in at.tabs]
    assert any(label.startswith("Cited (") for label in labels)
    assert any(label.startswith("Behind (") for label in labels)
    assert any(label.startswith("Read but unused (") for label in labels)
    assert "Unsupported citations" in [m.label for m in at.metric]


def test_a_run_bundle_from_the_page_opens_in_another_history_and_says_when_the_index_differs(run_db: Path, tmp_path: Path, small_index_dir: Path) -> None:
    from graphrag_app.bundles import bundle_json, open_bundle
    from graphrag_app.settings import settings_from_mapping

    at = run_question(app().run())
    record = RunStore(run_db).get(at.query_params["run"])
    assert record is not None
    assert "Download run bundle" in [b.label for b in at.get("download_button")]
    other_db = tmp_path / "other.sqlite3"
    settings = settings_from_mapping({"GRAPHRAG_EXPLORER_DB": str(other_db)})
    data = bundle_json(record.replay(), index_key=record.index_name, app=settings)
    assert '"api_key"' not in data and json.loads(data)["model"] == record.model

    bundle, notices, errors = open_bundle(data.encode(), name="run.bundle.json", app=settings)
    assert errors == [] and bundle is not None
    assert notices == [f"Opened run {record.run_id[:8]} from run.bundle.json (recorded by {record.model}); no model was called."]
    reopened = RunStore(other_db).get(record.run_id)
    assert reopened is not None and reopened.events == record.events and reopened.result == record.result

    # the same run against another index: said, and still opened
    moved = data.replace(bundle.index.name, str(small_index_dir)).replace(str(bundle.index.path), str(small_index_dir))
    _, notices, errors = open_bundle(moved.encode(), name="moved.json", app=settings)
    assert errors == [] and any("is not the one this run used" in n for n in notices)

    _, _, errors = open_bundle(b'{"format": "x"}', name="bad.json", app=settings)
    assert errors == ["bad.json is not a run bundle (its format is not 'graphrag-explorer-run-bundle')."]
