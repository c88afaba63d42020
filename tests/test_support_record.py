"""The support check kept with the run (issue 41): the run history (migration 4), run bundles
(old ones without a check still open), the Markdown report, and the command line's
``query --check-support``, ``runs show`` and ``runs check``."""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
from pathlib import Path

import pytest

from graphrag_cli.context import EXIT_OK, EXIT_RUN
from graphrag_cli.main import main
from graphrag_core import ScriptedChatModel
from graphrag_core.bundle import BundleError, bundle_to_json, make_bundle, read_bundle
from graphrag_core.history import RunStore
from graphrag_core.history.migrations import SCHEMA_VERSION, file_version
from graphrag_core.report import record_to_markdown
from graphrag_core.support import SupportCheck, offline_support
from graphrag_core.support.report import NOT_CHECKED

from .cli_support import run_cli

QUESTION = "What kinds of bugs do hackers talk about?"
STALE = "stale pointer bug: Synonym for aliasing bug used esp. among microcomputer hackers. [Communities: 98]"


def _query(capsys, store: Path, *extra: str, model=None):  # type: ignore[no-untyped-def]
    return run_cli(capsys, "query", "jargon", QUESTION, "--level", "1", "--seed", "3", "--no-cache", "--store", store, "-q", *extra, model=model)


@pytest.fixture(scope="module")
def checked_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict]:
    """A jargon run made with ``query --check-support --json``: its store, id and document."""
    store = tmp_path_factory.mktemp("support") / "runs.sqlite3"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["query", "jargon", QUESTION, "--level", "1", "--seed", "3", "--no-cache", "--store", str(store), "-q", "--check-support", "--json"], environ={})
    assert code == EXIT_OK
    document = json.loads(out.getvalue())
    return store, document["run_id"], document


def test_query_json_carries_the_support_document_in_the_issues_form(checked_run) -> None:
    _, _, document = checked_run
    support = document["support"]
    assert support["judge"] == "offline" and support["judged_by"].startswith("offline:lexical/")
    point = next(p for p in support["points"] if p["text"] == STALE)
    assert point["communities"] == ["98"] and point["verdict"] == "supported"
    assert point["evidence"] == [{"kind": "claim", "id": "c01088", "quote": STALE.removesuffix(" [Communities: 98]")}]
    assert {"text", "communities", "verdict", "evidence"} <= set(point)
    assert support["summary"] == f"{support['counts']['supported']} of {len(support['points'])} points supported"


def test_the_check_is_kept_with_the_run_and_shown_by_runs_show(capsys, checked_run) -> None:
    store, run_id, document = checked_run
    record = RunStore(store).get(run_id)
    assert record is not None and record.support is not None
    assert record.support.to_json_dict()["points"] == document["support"]["points"]
    code, out, _ = run_cli(capsys, "runs", "--store", store, "show", run_id, "--json")
    assert code == EXIT_OK and json.loads(out)["support"]["points"][0]["verdict"] in ("supported", "partial", "unsupported")
    code, out, _ = run_cli(capsys, "runs", "--store", store, "show", run_id)
    assert "## Support check" in out and "of 8 points supported**" in out and "[✓ supported]" in out
    assert 'claim c01088: "stale pointer bug: Synonym for aliasing bug used esp. among microcomputer hackers."' in out


def test_the_text_answer_marks_each_point_in_words(capsys, tmp_path: Path) -> None:
    code, out, _ = _query(capsys, tmp_path / "runs.sqlite3", "--check-support")
    assert code == EXIT_OK
    assert f"- {STALE} [✓ supported]" in out.splitlines()
    assert "Support check (offline judge, offline:lexical/v1): 8 of 8 points supported." in out
    assert out.count("stale pointer bug") == 1  # printed once, marked (not streamed and then again)


def test_the_model_judge_through_the_offline_model_says_its_cost_first(capsys, tmp_path: Path) -> None:
    code, out, err = _query(capsys, tmp_path / "runs.sqlite3", "--support-judge", "model")
    assert code == EXIT_OK
    assert "Support check (model judge, offline:bm25/" in out
    code, out, err = run_cli(capsys, "query", "jargon", QUESTION, "--level", "1", "--seed", "3", "--no-cache", "--no-store", "--support-judge", "model")
    assert "support check (model judge): " in err and " calls for 8 points" in err


def test_a_model_judge_that_fails_loses_nothing(capsys, tmp_path: Path) -> None:
    def script(request):  # type: ignore[no-untyped-def]
        if request.purpose == "support":
            return "garbage"
        from graphrag_core.llm.offline import OfflineChatModel

        return OfflineChatModel().reply(request)

    store = tmp_path / "runs.sqlite3"
    code, out, err = _query(capsys, store, "--support-judge", "model", "--json", model=ScriptedChatModel(script))
    document = json.loads(out)
    assert code == EXIT_OK and document["answer"] and document["run_id"] in RunStore(store)
    assert all(p["verdict"] == "unsupported" and "could not be used" in p["error"] for p in document["support"]["points"])


def test_a_check_that_cannot_be_made_is_an_error_after_the_answer(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graphrag_core.errors import IndexValidationError
    from graphrag_cli import support_check

    async def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise IndexValidationError("claims.jsonl line 3: community_id: no such community")

    monkeypatch.setattr(support_check, "check_support", broken)
    store = tmp_path / "runs.sqlite3"
    code, out, err = _query(capsys, store, "--check-support")
    assert code == EXIT_RUN and "stale pointer bug" in out
    assert "error: the support check failed: claims.jsonl line 3" in err
    assert len(RunStore(store)) == 1


def test_runs_check_checks_a_stored_run_and_keeps_it(capsys, tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    _query(capsys, store)
    run_id = RunStore(store).list_runs(1)[0].run_id
    assert RunStore(store).get(run_id).support is None  # type: ignore[union-attr]
    code, out, _ = run_cli(capsys, "runs", "--store", store, "check", run_id, "--json", "--model", "offline")
    assert code == EXIT_OK and json.loads(out)["judge"] == "offline"
    assert RunStore(store).get(run_id).support is not None  # type: ignore[union-attr]


def test_an_old_history_file_gains_the_column_and_keeps_its_runs(checked_run, tmp_path: Path) -> None:
    store, run_id, _ = checked_run
    old = tmp_path / "old.sqlite3"
    with sqlite3.connect(store) as source, sqlite3.connect(old) as target:
        source.backup(target)
    with sqlite3.connect(old) as conn:  # as version 3 wrote it
        conn.execute("ALTER TABLE runs DROP COLUMN support_json")
        conn.execute("DELETE FROM schema_version WHERE version = 4")
        assert file_version(conn) == 3
    reopened = RunStore(old)
    assert reopened.schema_version == SCHEMA_VERSION == 4
    record = reopened.get(run_id)
    assert record is not None and record.support is None and record.result is not None


def test_writing_a_running_runs_row_keeps_its_check_and_save_replaces_it(checked_run, tmp_path: Path) -> None:
    store, run_id, _ = checked_run
    record = RunStore(store).get(run_id)
    assert record is not None and record.support is not None
    other = RunStore(tmp_path / "other.sqlite3")
    other.save(record)
    other.append(record.summary(), record.events, since=len(record.events), result=record.result)
    assert other.get(run_id).support == record.support  # type: ignore[union-attr]
    other.save(record.model_copy(update={"support": None}))
    assert other.get(run_id).support is None  # type: ignore[union-attr]
    assert other.set_support(run_id, record.support) and not other.set_support("nope", record.support)


def test_bundles_carry_the_check_and_old_bundles_open(checked_run) -> None:
    store, run_id, _ = checked_run
    record = RunStore(store).get(run_id)
    assert record is not None
    text = bundle_to_json(make_bundle(record))
    bundle = read_bundle(text)
    assert bundle.support == record.support and bundle.to_record().support == record.support
    old = json.loads(text)
    del old["support"]
    assert read_bundle(json.dumps(old)).support is None
    forged = json.loads(text)
    forged["support"]["points"][0]["text"] = "A point the answer never made. [Communities: 98]"
    with pytest.raises(BundleError, match="support check"):
        read_bundle(json.dumps(forged))


def test_replay_shows_the_bundles_check(capsys, checked_run, tmp_path: Path) -> None:
    store, run_id, _ = checked_run
    path = tmp_path / "run.json"
    path.write_text(bundle_to_json(make_bundle(RunStore(store).get(run_id))), encoding="utf-8")  # type: ignore[arg-type]
    code, out, _ = run_cli(capsys, "replay", path)
    assert code == EXIT_OK and f"- {STALE} [✓ supported]" in out
    code, out, _ = run_cli(capsys, "replay", path, "--json")
    assert json.loads(out)["support"]["judge"] == "offline"


def test_a_report_without_a_check_says_so_and_quotes_are_inert(checked_run) -> None:
    store, run_id, _ = checked_run
    record = RunStore(store).get(run_id)
    assert record is not None and isinstance(record.support, SupportCheck)
    assert NOT_CHECKED in record_to_markdown(record.model_copy(update={"support": None}))
    point = record.support.points[0]
    evidence = point.evidence[0].model_copy(update={"quote": "<script>x</script> [a](http://x)"})
    hostile = record.support.model_copy(update={"points": (point.model_copy(update={"evidence": (evidence,)}),)})
    report = record_to_markdown(record.model_copy(update={"support": hostile}))
    assert "<script>" not in report and "](http" not in report


def test_the_offline_check_of_a_record_is_the_one_the_command_line_made(checked_run) -> None:
    from graphrag_core.index import load_index
    from graphrag_core.samples import sample_path

    store, run_id, _ = checked_run
    record = RunStore(store).get(run_id)
    assert record is not None and record.result is not None and record.support is not None
    again = offline_support(load_index(sample_path("jargon")), record.result)
    assert again.points == record.support.points  # deterministic
