"""How the app names a run in its lists (graphrag_app.labels) and the settings line it shows
(graphrag_core.report.settings_text)."""

from graphrag_app.labels import run_label
from graphrag_core.history.records import RunRecord
from graphrag_core.history.store import RunStore
from graphrag_core.report import settings_text
from graphrag_core.request import GlobalSearchRequest

from .test_history_store import run_events, stopped_run


def test_runs_that_differ_only_in_budgets_have_different_labels(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite3")
    small = RunRecord.from_events(run_events(map_token_budget=3000, reduce_token_budget=2500, include_claims=False), index_name="tiny")
    large = RunRecord.from_events(run_events(map_token_budget=12000), index_name="tiny")
    store.save(small)
    store.save(large)
    labels = {s.run_id: run_label(s) for s in store.list_runs()}
    assert labels[small.run_id] != labels[large.run_id].replace(large.run_id[:8], small.run_id[:8])
    assert "level leaf · map 3,000 · reduce 2,500 · seed 7 · skip · no claims" in labels[small.run_id]
    assert "map 12,000 · reduce 8,000 · seed 7" in labels[large.run_id]
    assert run_label(large) == labels[large.run_id]  # a record and its summary read the same


def test_a_stopped_run_reads_stopped_and_its_stored_status_stays_cancelled(tmp_path):
    summary = stopped_run(RunStore(tmp_path / "runs.sqlite3"))
    assert summary.status == "cancelled" and summary.status.word == "stopped"
    assert run_label(summary).endswith("· stopped") and "cancelled" not in run_label(summary)


def test_a_dynamic_run_says_dynamic_not_its_unused_level():
    dynamic = GlobalSearchRequest(query="q", community_selection="dynamic", community_level=1, seed=3)
    fixed = dynamic.model_copy(update={"community_selection": "level"})
    assert settings_text(dynamic, seed=None).startswith("dynamic · map ")
    assert settings_text(fixed, seed=None).startswith("level 1 · map ") and "· seed 3 ·" in settings_text(fixed, seed=None)
    assert "level" not in settings_text(dynamic, seed=None)


def test_a_dynamic_runs_label_in_the_history_says_dynamic(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite3")
    store.save(RunRecord.from_events(run_events(community_selection="dynamic"), index_name="tiny"))
    (summary,) = store.list_runs()
    assert summary.community_level == "dynamic"
    assert " · dynamic · map 8,000 · " in run_label(summary)
