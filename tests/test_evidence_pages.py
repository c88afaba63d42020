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
