"""How the app names a run in its lists (graphrag_app.labels) and the settings line it shows
(graphrag_core.report.settings_text)."""

from graphrag_app.text import run_label
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
    assert "· stopped ·" in run_label(summary) and "cancelled" not in run_label(summary)
    assert run_label(summary).endswith(summary.run_id[:8])  # the id last: what tells runs apart comes first


def test_a_dynamic_run_says_dynamic_not_its_unused_level():
    dynamic = GlobalSearchRequest(query="q", community_selection="dynamic", community_level=1, seed=3)
    fixed = dynamic.model_copy(update={"community_selection": "level"})
    assert settings_text(dynamic, seed=None).startswith("dynamic (threshold 1) · map ")
    assert settings_text(fixed, seed=None).startswith("level 1 · map ") and "· seed 3 ·" in settings_text(fixed, seed=None)
    assert "level" not in settings_text(dynamic, seed=None)


def test_a_dynamic_runs_label_in_the_history_says_dynamic(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite3")
    store.save(RunRecord.from_events(run_events(community_selection="dynamic"), index_name="tiny"))
    (summary,) = store.list_runs()
    assert summary.community_level == "dynamic"
    assert run_label(summary).startswith("What shapes the town? · dynamic (threshold 1) · map 8,000 · ")


def test_every_label_and_settings_line_of_a_dynamic_run_says_dynamic_with_its_threshold(tmp_path, capsys):
    from graphrag_app.explore.actions import _line
    from graphrag_cli.output import format_run_line
    from graphrag_core.report import record_to_markdown

    store = RunStore(tmp_path / "runs.sqlite3")
    record = RunRecord.from_events(run_events(community_selection="dynamic", rating_threshold=3, community_level=1), index_name="tiny")
    store.save(record)
    (summary,) = store.list_runs()
    for text in (run_label(summary), run_label(record), format_run_line(summary), _line(summary)):
        assert "dynamic (threshold 3)" in text, text
        assert "level 1" not in text and "level leaf" not in text, text
    report = record_to_markdown(record)
    assert "| community level | dynamic |" in report and "| rating threshold | 3 |" in report


def test_runs_list_shows_a_runs_label_whole():
    from graphrag_cli.output import format_run_line

    record = RunRecord.from_events(run_events(), index_name="tiny", label="see the level=1 run of last week, then compare")
    assert format_run_line(record.summary()).endswith("[see the level=1 run of last week, then compare]")


def test_compared_runs_are_named_by_what_sets_them_apart_with_the_id_last():
    from graphrag_app.compare.charts import run_labels

    level0 = RunRecord.from_events(run_events(community_level=0), index_name="tiny")
    dynamic = RunRecord.from_events(run_events(community_selection="dynamic", rating_threshold=2), index_name="tiny")
    bigger = RunRecord.from_events(run_events(community_level=0, map_token_budget=12000), index_name="tiny")
    assert run_labels([level0, dynamic]) == [f"A · level 0 · {level0.run_id[:8]}", f"B · dynamic (threshold 2) · {dynamic.run_id[:8]}"]
    assert run_labels([level0, bigger]) == [f"A · map 8,000 · {level0.run_id[:8]}", f"B · map 12,000 · {bigger.run_id[:8]}"]
    same = level0.model_copy(update={"run_id": "f" * 32})
    assert run_labels([level0, same]) == [f"A · {level0.run_id[:8]}", "B · ffffffff"]  # nothing differs: letter and id
    other_question = RunRecord.from_events(run_events(community_level=0), index_name="tiny").model_copy(update={"query": "Who built the mill by the river, and when?"})
    first, second = run_labels([level0, other_question])
    assert first.startswith("A · What shapes the town? · ") and second.startswith("B · Who built the mill by the r… · ")


def test_a_sweeps_runs_are_labelled_by_sweep_and_point_not_by_settings_cut_short(tmp_path):
    import asyncio

    from graphrag_core.levels import DYNAMIC
    from graphrag_core.llm.scripted import ScriptedChatModel
    from graphrag_core.sweep import SweepSpec, run_sweep

    from .factories import small_index

    def reply(request):  # type: ignore[no-untyped-def]
        if request.purpose == "rate":
            return '{"rating": 3}'
        return '{"answer": "Something.", "usefulness": 50}' if request.purpose == "map" else '{"answer": "A."}'

    store = RunStore(tmp_path / "runs.sqlite3")
    spec = SweepSpec(query="q", levels=[0, DYNAMIC], seeds=[1])
    result = asyncio.run(run_sweep(small_index(), spec, ScriptedChatModel(reply), store=store))
    by_id = {s.run_id: s for s in store.list_runs()}
    for i, point in enumerate(result.points):
        summary = by_id[point.run_id]
        assert summary.label == f"sweep {result.sweep_id[:8]} · point {i + 1} of 2"
    dynamic_run = by_id[result.points[1].run_id]
    assert dynamic_run.community_level == "dynamic" and "dynamic (threshold 1)" in run_label(dynamic_run)
    assert [row["level"] for row in result.to_rows()] == [0, "dynamic"]


def test_counts_read_as_a_person_writes_them():
    from graphrag_core.wording import counted

    assert [counted(1, "community"), counted(2, "community"), counted(1, "batch"), counted(3, "batch")] == [
        "1 community", "2 communities", "1 batch", "3 batches"
    ]
    assert counted(1234, "model call") == "1,234 model calls" and counted(1, "key") == "1 key" and counted(0, "key") == "0 keys"
    assert counted(2, "community summary", "community summaries") == "2 community summaries"
