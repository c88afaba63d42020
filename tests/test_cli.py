import asyncio
import csv
import json
import os
import subprocess
import sys

import pytest

from graphrag_cli.context import (
    EXIT_INDEX,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RUN,
    EXIT_USAGE,
)
from graphrag_core import (
    FatalModelError,
    GlobalSearchRequest,
    GlobalSearchResult,
    RetryableModelError,
    ScriptedChatModel,
    retrieve_global,
)
from graphrag_core.index import load_index, save_index
from graphrag_core.history import RunStore
from graphrag_core.citations import community_sets
from graphrag_core.report import record_to_markdown

from . import APP_ROOT, factories
from .cli_support import QUESTION, run_cli

ANSWER = "The mill and the river shape the town."


def reply(request):
    if request.purpose == "map":
        return '{"answer": "The mill matters.", "usefulness": 60}'
    return json.dumps({"answer": ANSWER})


def test_query_prints_the_answer_and_progress(capsys, index_dir, tmp_path):
    store_path = tmp_path / "runs.sqlite3"
    code, out, err = run_cli(
        capsys, "query", index_dir, QUESTION, "--seed", "3", "--store", store_path, "--no-cache", model=ScriptedChatModel(reply)
    )
    assert code == EXIT_OK
    assert out == ANSWER + "\n"
    assert "selected 2 community summaries at level leaf" in err
    assert "map: 1/1 batches done" in err
    assert "completed" in err and "seed 3" in err
    runs = RunStore(store_path).list_runs()
    assert len(runs) == 1 and runs[0].status == "completed" and runs[0].seed == 3
    assert runs[0].index_name == "tiny" and runs[0].model == "scripted"


def test_query_json_prints_the_result(capsys, index_dir):
    model = ScriptedChatModel(reply)
    code, out, err = run_cli(
        capsys, "query", index_dir, QUESTION, "--json", "--level", "1", "--seed", "5", "--map-budget", "4000",
        "--reduce-budget", "3000", "--map-reserve", "100", "--reduce-reserve", "200", "--concurrency", "2",
        "--strategy", "stop", "--no-claims", "--no-sources", "--no-store", "--no-cache", model=model,
    )
    assert code == EXIT_OK
    result = GlobalSearchResult.model_validate_json(out)
    assert result.answer == ANSWER and result.status == "completed"
    request = result.request
    assert (request.community_level, request.seed, request.map_token_budget, request.reduce_token_budget) == (1, 5, 4000, 3000)
    assert (request.map_output_reserve, request.reduce_output_reserve, request.map_concurrency) == (100, 200, 2)
    assert request.reduce_strategy == "stop" and not request.include_claims and not request.include_sources
    assert "[Supporting claims]" not in model.calls_for("map")[0].prompt_text


def test_query_json_carries_the_id_of_the_run_it_recorded(capsys, index_dir, tmp_path):
    store_path = tmp_path / "runs.sqlite3"
    code, out, _ = run_cli(capsys, "query", index_dir, QUESTION, "--json", "--store", store_path, "--no-cache", model=ScriptedChatModel(reply))
    assert code == EXIT_OK
    document = json.loads(out)
    (run,) = RunStore(store_path).list_runs()
    assert document["run_id"] == run.run_id and document["recorded_in"] == str(store_path)
    code, shown, _ = run_cli(capsys, "runs", "--store", store_path, "show", document["run_id"], "--json")
    assert code == EXIT_OK and json.loads(shown)["run_id"] == run.run_id  # a script opens the run it just made
    code, out, _ = run_cli(capsys, "query", index_dir, QUESTION, "--json", "--no-store", "--no-cache", model=ScriptedChatModel(reply))
    unstored = json.loads(out)
    assert len(unstored["run_id"]) == 32 and unstored["recorded_in"] is None


def test_query_quiet_and_offline_model(capsys, index_dir):
    code, out, err = run_cli(capsys, "query", index_dir, "What does the mill do?", "--quiet", "--no-store", "--no-cache")
    assert code == EXIT_OK
    assert out.strip()
    assert err == ""


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--level", "-1"], 'community_level must be "leaf" or a non-negative integer.'),
        (["--level", "top"], 'community_level must be "leaf" or a non-negative integer.'),
        (["--map-budget", "0"], "map_token_budget must be a positive integer."),
        (["--map-budget", "lots"], "map_token_budget must be a positive integer."),
        (["--reduce-budget", "-5"], "reduce_token_budget must be a positive integer."),
        (["--map-reserve", "-1"], "map_output_reserve must be a non-negative integer."),
        (["--reduce-reserve", "-1"], "reduce_output_reserve must be a non-negative integer."),
        (["--concurrency", "0"], "map_concurrency must be a positive integer."),
        (["--map-budget", "500"], "Token budgets must exceed their output reserves."),
        (["--map-budget", "600"], "Map token budget cannot fit the Map prompt."),
        (["--rating-threshold", "6"], "rating_threshold must be an integer from 0 to 5."),
        (["--rating-threshold", "high"], "rating_threshold must be an integer from 0 to 5."),
        (["--rating-repeats", "0"], "rating_repeats must be a positive integer."),
        (["--fallback-max-level", "-1"], "fallback_max_level must be a non-negative integer."),
        (["--rating-reserve", "-1"], "rating_output_reserve must be a non-negative integer."),
        (["--selection", "dynamic", "--map-budget", "300", "--map-reserve", "10", "--rating-reserve", "300"], "Token budgets must exceed their output reserves."),
        (["--selection", "dynamic", "--map-budget", "400", "--map-reserve", "10", "--rating-reserve", "300"], "Map token budget cannot fit the rating prompt."),
    ],
)
def test_query_validation_exit_2_with_spec_message(capsys, index_dir, options, message):
    code, out, err = run_cli(capsys, "query", index_dir, QUESTION, *options, "--no-store", "--no-cache", model=ScriptedChatModel(reply))
    assert code == EXIT_USAGE
    assert out == ""
    assert err.strip().splitlines()[-1] == f"error: {message}"
    assert "Traceback" not in err


def test_empty_question_exit_2(capsys, index_dir):
    code, out, err = run_cli(capsys, "query", index_dir, "   ", "--no-store")
    assert code == EXIT_USAGE
    assert err.strip() == "error: Global retrieval query must not be empty."


def test_usage_errors_exit_2(capsys, index_dir):
    code, _, err = run_cli(capsys, "query", index_dir, QUESTION, "--strategy", "sometimes")
    assert code == EXIT_USAGE and "invalid choice" in err
    code, _, err = run_cli(capsys)
    assert code == EXIT_USAGE and "usage:" in err
    code, _, err = run_cli(capsys, "query", index_dir, QUESTION, "--model", "openai", "--api-key-env", "NOT_SET_ANYWHERE", "--no-store")
    assert code == EXIT_USAGE and "NOT_SET_ANYWHERE is not set" in err


def test_help_exits_0(capsys):
    code, out, _ = run_cli(capsys, "query", "--help")
    assert code == EXIT_OK and "--map-budget" in out and "--no-cache" in out


def test_bad_index_exit_3(capsys, tmp_path):
    code, out, err = run_cli(capsys, "query", tmp_path / "missing", QUESTION, "--no-store")
    assert code == EXIT_INDEX and out == ""
    assert "no such file or folder" in err and "Traceback" not in err

    (tmp_path / "empty").mkdir()
    code, _, err = run_cli(capsys, "inspect", tmp_path / "empty")
    assert code == EXIT_INDEX and "not an index folder" in err


def test_corrupt_index_exit_3(capsys, index_dir):
    (index_dir / "communities.jsonl").write_text('{"id": "x", "level": "high"}\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "query", index_dir, QUESTION, "--no-store")
    assert code == EXIT_INDEX
    assert "communities.jsonl" in err


def test_every_batch_failed_exit_4_lists_batch_errors(capsys, index_dir, tmp_path):
    store_path = tmp_path / "runs.sqlite3"
    model = ScriptedChatModel(lambda r: RetryableModelError("HTTP 503 from the endpoint"))
    code, out, err = run_cli(capsys, "query", index_dir, QUESTION, "--seed", "1", "--store", store_path, "--no-cache", model=model)
    assert code == EXIT_RUN and out == ""
    assert "error: Every Global Map batch failed." in err
    assert "batch 0 (communities " in err and "HTTP 503 from the endpoint" in err
    assert RunStore(store_path).list_runs()[0].status == "failed"


def test_reduce_failure_exit_4(capsys, index_dir):
    def script(request):
        if request.purpose == "reduce":
            return FatalModelError("HTTP 400: bad request")
        return reply(request)

    code, _, err = run_cli(capsys, "query", index_dir, QUESTION, "--no-store", "--no-cache", model=ScriptedChatModel(script))
    assert code == EXIT_RUN
    assert "HTTP 400: bad request" in err


def test_ctrl_c_exit_130(capsys, index_dir, tmp_path):
    store_path = tmp_path / "runs.sqlite3"
    model = ScriptedChatModel(lambda r: KeyboardInterrupt())
    code, _, err = run_cli(capsys, "query", index_dir, QUESTION, "--store", store_path, "--no-cache", model=model)
    assert code == EXIT_INTERRUPTED
    assert "interrupted" in err and "Traceback" not in err


def test_cache_makes_a_rerun_free(capsys, index_dir, tmp_path):
    cache = tmp_path / "cache.sqlite3"
    first = ScriptedChatModel(reply)
    assert run_cli(capsys, "query", index_dir, QUESTION, "--seed", "2", "--cache", cache, "--no-store", model=first)[0] == EXIT_OK
    second = ScriptedChatModel(reply)
    assert run_cli(capsys, "query", index_dir, QUESTION, "--seed", "2", "--cache", cache, "--no-store", model=second)[0] == EXIT_OK
    assert len(first.calls_for("map")) == 1 and second.calls_for("map") == []


def test_sweep_writes_csv_and_json(capsys, index_dir, tmp_path):
    out_csv = tmp_path / "sweep.csv"
    code, _, err = run_cli(
        capsys, "sweep", index_dir, QUESTION, "--levels", "leaf,0,1", "--seeds", "1,2", "--map-budgets", "8000,600",
        "--out", out_csv, "--no-store", "--no-cache", model=ScriptedChatModel(reply),
    )
    assert code == EXIT_OK
    rows = list(csv.DictReader(out_csv.open(encoding="utf-8")))
    assert len(rows) == 3 * 2 * 2
    assert {r["level"] for r in rows} == {"leaf", "0", "1"}
    failed = [r for r in rows if r["status"] == "failed"]
    assert len(failed) == 6 and {r["error"] for r in failed} == {"Map token budget cannot fit the Map prompt."}
    assert "point 12/12" in err and "stability at level leaf: 1.000" in err

    out_json = tmp_path / "sweep.json"
    code, _, _ = run_cli(
        capsys, "sweep", index_dir, QUESTION, "--levels", "leaf", "--seeds", "1,2,3", "--out", out_json,
        "--no-store", "--no-cache", model=ScriptedChatModel(reply),
    )
    assert code == EXIT_OK
    document = json.loads(out_json.read_text(encoding="utf-8"))
    assert len(document["points"]) == 3 and document["stability_by_level"] == {"leaf": 1.0}


def test_sweep_validation(capsys, index_dir, tmp_path):
    code, _, err = run_cli(capsys, "sweep", index_dir, QUESTION, "--levels", "leaf,-2", "--no-store", "--no-cache")
    assert code == EXIT_USAGE and err.strip() == 'error: community_level must be "leaf" or a non-negative integer.'
    code, _, err = run_cli(capsys, "sweep", index_dir, QUESTION, "--out", tmp_path / "x.txt", "--no-store")
    assert code == EXIT_USAGE and ".csv or .json" in err


def test_inspect_text_and_json(capsys, index_dir):
    code, out, _ = run_cli(capsys, "inspect", index_dir)
    assert code == EXIT_OK
    assert "level  communities  summaries" in out
    assert "totals: communities 4, claims 1, chunks 1, documents 1" in out
    assert "Level 1: 1 of 3 communities have a blank summary." in out

    code, out, _ = run_cli(capsys, "inspect", index_dir, "--json")
    stats = json.loads(out)
    by_level = {str(row["level"]): row for row in stats["levels"]}
    assert by_level["leaf"]["communities"] == 3 and by_level["leaf"]["summaries"] == 2
    assert by_level["0"]["claims"] == 1 and by_level["1"]["claims"] == 1
    assert by_level["0"]["map_text_tokens"] > by_level["0"]["summary_tokens"] > 0
    assert stats["totals"]["communities"] == 4


def test_import_native_round_trip(capsys, index_dir, tmp_path):
    dest = tmp_path / "copy"
    code, out, _ = run_cli(capsys, "import", index_dir, dest)
    assert code == EXIT_OK and "Imported" in out
    assert load_index(dest).model_dump() == load_index(index_dir).model_dump()


def test_import_microsoft_graphrag_folder(capsys, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = tmp_path / "output"
    src.mkdir()
    pq.write_table(
        pa.table({"community": [0, 1, 2], "level": [0, 1, 1], "parent": [-1, 0, 0], "title": ["Root", "Mill", "River"]}),
        src / "communities.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "community": [0, 1, 2],
                "title": ["Root", "Mill", "River"],
                "summary": ["short root", "short mill", "short river"],
                "full_content": ["# Root\nThe town.", "# Mill\nThe mill.", "# River\nThe river."],
            }
        ),
        src / "community_reports.parquet",
    )
    dest = tmp_path / "native"
    code, _, err = run_cli(capsys, "import", src, dest, "--summary", "summary")
    assert code == EXIT_OK, err
    imported = load_index(dest)
    assert [c.id for c in imported.communities] == ["0", "1", "2"]
    assert imported.community("1").summary == "short mill" and imported.community("1").parent_id == "0"
    assert imported.model_dump() == load_index(src, summary="summary").model_dump()


def test_runs_list_show_delete(capsys, index_dir, tmp_path):
    store_path = tmp_path / "runs.sqlite3"
    run_cli(capsys, "query", index_dir, QUESTION, "--store", store_path, "--no-cache", model=ScriptedChatModel(reply))
    run_id = RunStore(store_path).list_runs()[0].run_id
    code, out, _ = run_cli(capsys, "runs", "--store", store_path, "list")
    assert code == EXIT_OK and run_id in out and QUESTION in out
    code, out, _ = run_cli(capsys, "runs", "--store", store_path, "show", run_id)
    assert code == EXIT_OK and out.startswith(f"# Global search run {run_id}") and ANSWER in out
    code, out, _ = run_cli(capsys, "runs", "--store", store_path, "show", run_id, "--json")
    assert json.loads(out)["run_id"] == run_id
    assert run_cli(capsys, "runs", "--store", store_path, "delete", run_id)[0] == EXIT_OK
    assert run_cli(capsys, "runs", "--store", store_path, "delete", run_id)[0] == EXIT_USAGE


def test_default_store_follows_xdg_data_home(capsys, index_dir, tmp_path):
    environ = {"XDG_DATA_HOME": str(tmp_path / "data")}
    code, _, _ = run_cli(capsys, "query", index_dir, QUESTION, model=ScriptedChatModel(reply), environ=environ)
    assert code == EXIT_OK
    folder = tmp_path / "data" / "graphrag-explorer"
    assert (folder / "runs.sqlite3").is_file() and (folder / "map-cache.sqlite3").is_file()
    assert len(RunStore(folder / "runs.sqlite3").list_runs()) == 1


def test_python_dash_m_help():
    root = APP_ROOT
    completed = subprocess.run(
        [sys.executable, "-m", "graphrag_core", "--help"], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0
    assert "usage: graphrag-explorer" in completed.stdout
    for command in ("query", "sweep", "inspect", "import"):
        assert command in completed.stdout


def test_runs_list_shows_budgets_seed_and_selection(capsys, index_dir, tmp_path):
    store_path = tmp_path / "runs.sqlite3"
    run_cli(capsys, "query", index_dir, QUESTION, "--store", store_path, "--no-cache", "--seed", "3", "--map-budget", "3000", model=ScriptedChatModel(reply))
    code, out, _ = run_cli(capsys, "runs", "--store", store_path, "list")
    assert code == EXIT_OK and "level leaf · map 3,000 · reduce 8,000 · seed 3 · skip" in out


def test_a_sample_goes_by_its_sample_name_in_the_history(capsys, tmp_path):
    from graphrag_core.index import index_display_name, load_index
    from graphrag_core.samples import sample_path

    assert index_display_name(sample_path("jargon"), load_index(sample_path("jargon"))) == "jargon"
    store_path = tmp_path / "runs.sqlite3"
    code, _, _ = run_cli(capsys, "query", "zh-tea", "茶是什么？", "--store", store_path, "--no-cache", "--seed", "1")
    assert code == EXIT_OK
    (summary,) = RunStore(store_path).list_runs()
    assert summary.index_name == "zh-tea"  # not the manifest's "中国茶小史 (zh-tea)"


def test_a_cached_rerun_reports_spent_and_as_if_uncached_with_the_price(capsys, index_dir, tmp_path):
    store_path, cache_path = tmp_path / "runs.sqlite3", tmp_path / "cache.sqlite3"
    args = ("query", index_dir, QUESTION, "--store", store_path, "--cache", cache_path, "--seed", "4")
    run_cli(capsys, *args, model=ScriptedChatModel(reply))
    environ = {"GRAPHRAG_LLM_PRICE_PROMPT": "2.5", "GRAPHRAG_LLM_PRICE_COMPLETION": "10"}
    code, _, err = run_cli(capsys, *args, model=ScriptedChatModel(reply), environ=environ)
    assert code == EXIT_OK
    line = next(line for line in err.splitlines() if line.startswith("model calls"))
    assert line.startswith("model calls 1 (") and "as if uncached" in line and "cache hits" in line and "cost " in line
    code, _, err = run_cli(capsys, *args, model=ScriptedChatModel(reply), environ={"GRAPHRAG_LLM_PRICE_PROMPT": "-1"})
    assert code == EXIT_USAGE and "GRAPHRAG_LLM_PRICE_PROMPT" in err


def test_progress_prints_big_numbers_with_thousands_separators():
    import io as _io

    from graphrag_cli.progress import ProgressPrinter
    from graphrag_core.events import ReduceStarted

    stream = _io.StringIO()
    ProgressPrinter(stream)(ReduceStarted(answer_count=1200, prompt_tokens=15636))
    assert "1,200 answers, 15,636 prompt tokens" in stream.getvalue()


def test_query_json_has_the_three_community_sets_and_counts_unsupported_citations(capsys, index_dir):
    def cited(request):
        if request.purpose == "map":
            score = 60 if "[Community ID: a " in request.messages[-1].content else 0
            return json.dumps({"answer": "The mill matters." if score else "", "usefulness": score})
        return json.dumps({"answer": "The mill [Communities: a]. The river [Data: Reports (b, zz, +more)]."})

    code, out, _ = run_cli(
        capsys, "query", index_dir, QUESTION, "--json", "--map-budget", "300", "--map-reserve", "50", "--question-reserve", "0", "--no-store", "--no-cache",
        model=ScriptedChatModel(cited),
    )
    assert code == EXIT_OK
    document = json.loads(out)
    sets = document["community_sets"]
    assert sets["cited"] == ["a", "b", "zz"]
    assert sets["behind"] == ["a"]
    assert [u["community_id"] for u in sets["read_but_unused"]] == ["b"] and sets["read_but_unused"][0]["best_score"] == 0
    assert sets["unsupported"] == [{"community_id": "b", "reason": "not_behind", "count": 1}, {"community_id": "zz", "reason": "not_in_index", "count": 1}]
    assert document["diagnostics"]["unsupported_citation_count"] == 2


def test_runs_export_bundle_and_replay_with_no_model(capsys, index_dir, tmp_path):
    store_path = tmp_path / "runs.sqlite3"

    def cited(request):
        if request.purpose == "map":
            return '{"answer": "The mill matters [Communities: a].", "usefulness": 60}'
        return json.dumps({"answer": "The mill [Communities: a]. The sea [Communities: q]."})

    code, _, _ = run_cli(capsys, "query", index_dir, QUESTION, "--store", store_path, "--no-cache", model=ScriptedChatModel(cited))
    assert code == EXIT_OK
    (run,) = RunStore(store_path).list_runs()
    bundle_path = tmp_path / "run.bundle.json"
    code, out, err = run_cli(capsys, "runs", "--store", store_path, "export", run.run_id, "--bundle", bundle_path)
    assert code == EXIT_OK and str(bundle_path) in out
    document = json.loads(bundle_path.read_text(encoding="utf-8"))
    assert document["format"] == "graphrag-explorer-run-bundle" and document["model"] == "scripted"
    assert document["index"]["fingerprint"].startswith("sha256:")
    kinds = [e["kind"] for e in document["events"]]
    assert "map_batch_started" in kinds and "reduce_replied" in kinds
    started = next(e for e in document["events"] if e["kind"] == "map_batch_started")
    assert QUESTION in started["messages"][-1]["content"], "every prompt is in the bundle"

    # replay needs no model and no store: a model that would fail proves it is not called
    code, out, err = run_cli(capsys, "replay", bundle_path, model=ScriptedChatModel(RuntimeError("no model here")))
    assert code == EXIT_OK, err
    assert "Status: completed" in out and "The mill [Communities: a]." in out
    behind_line = next(line for line in out.splitlines() if line.startswith("Behind (2): "))
    assert "Cited (2): a, q" in out and sorted(behind_line.split(": ")[1].split(", ")) == ["a", "b"]
    assert "Unsupported citations (1): q (not in index)" in out
    assert "warning" not in err

    # against a different index it refuses, saying why, unless --force: then it warns and prints the run
    (index_dir / "communities.jsonl").write_text((index_dir / "communities.jsonl").read_text(encoding="utf-8").replace("Alpha", "Alpha2"), encoding="utf-8")
    code, out, err = run_cli(capsys, "replay", bundle_path, "--json")
    assert code == EXIT_USAGE and out == "" and "is not the one this run used" in err and "--force" in err
    code, out, err = run_cli(capsys, "replay", bundle_path, "--json", "--force")
    assert code == EXIT_OK
    payload = json.loads(out)
    assert payload["status"] == "completed" and sorted(payload["community_sets"]["behind"]) == ["a", "b"]
    assert "is not the one this run used" in payload["index_mismatch"] and "is not the one this run used" in err


def test_replay_warns_before_the_run_it_draws(tmp_path, index_dir):
    """The warning about the index comes first on the terminal, not after the answer."""
    from graphrag_core.bundle import make_bundle, bundle_to_json
    from graphrag_core.history import RunRecord

    events: list = []
    asyncio.run(retrieve_global(load_index(index_dir), GlobalSearchRequest(query=QUESTION, seed=1), ScriptedChatModel(reply), on_event=events.append))
    bundle = make_bundle(RunRecord.from_events(events, index_name="tiny", index_path=str(tmp_path / "gone")))
    path = tmp_path / "run.bundle.json"
    path.write_text(bundle_to_json(bundle), encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "graphrag_core", "replay", str(path)], cwd=APP_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(APP_ROOT)},
    )
    assert completed.returncode == 0
    first, *rest = completed.stdout.splitlines()
    assert first.startswith("warning: The run's index (tiny) is not available here") and any(line.startswith("Status: completed") for line in rest)


def test_replay_names_a_file_that_is_not_a_bundle(capsys, tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"format": "something else"}', encoding="utf-8")
    code, _, err = run_cli(capsys, "replay", path)
    assert code == EXIT_USAGE and str(path) in err and "is not a run bundle" in err
    path.write_text("not json", encoding="utf-8")
    code, _, err = run_cli(capsys, "replay", path)
    assert code == EXIT_USAGE and "is not JSON" in err
    code, _, err = run_cli(capsys, "runs", "--store", tmp_path / "r.sqlite3", "export", "nope", "--bundle", tmp_path / "b.json")
    assert code == EXIT_USAGE and "No run 'nope'" in err


def test_runs_export_markdown_lists_the_three_community_sets_and_flags_unsupported_citations(capsys, tmp_path):
    store_path = tmp_path / "runs.sqlite3"
    index_dir = tmp_path / "long-index"
    save_index(factories.make_index(repeat=60), index_dir)  # one leaf per batch at a map budget of 1,000

    def cited(request):
        if request.purpose == "map":
            if "Alpha" in request.prompt_text or "mill" in request.prompt_text.lower():
                return '{"answer": "The mill matters [Communities: a].", "usefulness": 60}'
            return '{"answer": "", "usefulness": 0}'
        return json.dumps({"answer": "The mill [Communities: a]. The sea [Communities: q]. Again [Communities: q]."})

    code, _, err = run_cli(capsys, "query", index_dir, QUESTION, "--store", store_path, "--no-cache", "--map-budget", "1000", "--map-reserve", "100", "--question-reserve", "0",
                           model=ScriptedChatModel(cited))
    assert code == EXIT_OK, err
    (run,) = RunStore(store_path).list_runs()
    record = RunStore(store_path).get(run.run_id)
    assert len(record.result.diagnostics.batch_token_estimates) == 2, "one community per batch"
    sets = community_sets(record.result)
    report_path = tmp_path / "run.md"
    code, out, err = run_cli(capsys, "runs", "--store", store_path, "export", run.run_id, "--markdown", report_path)
    assert code == EXIT_OK and str(report_path) in out and "warning" not in err
    report = report_path.read_text(encoding="utf-8")
    cited_at = report.index("## Communities cited by the answer")
    behind_at = report.index("## Communities behind the answer")
    unused_at = report.index("## Communities read but unused")
    assert cited_at < behind_at < unused_at
    assert "| a | supported |" in report[cited_at:behind_at]
    assert "| q | ⚠ unsupported: not in the index | 2 |" in report[cited_at:behind_at], "checked against the run's index"
    assert report[behind_at:unused_at].split("\n\n")[1] == ", ".join(sets.behind)
    assert sets.read_but_unused, "the script drops some batches"
    for unused in sets.read_but_unused:
        assert f"| {unused.community_id} | 0 | dropped | " in report[unused_at:]
    assert f"{len(sets.cited)} cited · {len(sets.behind)} behind · {len(sets.read_but_unused)} read but unused · 1 unsupported citation(s)" in report
    assert "**Communities:** " in report

    code, shown, _ = run_cli(capsys, "runs", "--store", store_path, "show", run.run_id)
    assert code == EXIT_OK and "| q | ⚠ unsupported: not in the index | 2 |" in shown, "runs show checks against the index too"

    # without the index at hand, the check says so and still flags the id no map answer carried
    assert "unsupported: in no selected map answer" in record_to_markdown(record)
    assert "the index was not at hand" in record_to_markdown(record)
    code, _, err = run_cli(capsys, "runs", "--store", store_path, "export", run.run_id)
    assert code == EXIT_USAGE and "--bundle FILE, --markdown FILE" in err


def test_a_refused_run_and_a_failed_run_print_one_failure_document(capsys, index_dir):
    code, out, err = run_cli(capsys, "query", index_dir, QUESTION, "--seed", "2", "--json", "--model", "openai", "--no-store", "--no-cache")
    assert code == EXIT_RUN and "No API key for the model endpoint https://api.openai.com/v1" in err
    refused = json.loads(out)
    assert (refused["status"], refused["error_type"], refused["endpoint"]) == ("failed", "PreflightError", "https://api.openai.com/v1")
    assert (refused["query"], refused["seed"], refused["failed_batches"], refused["figures"]["model_calls"]) == (QUESTION, 2, [], 0)

    model = ScriptedChatModel(lambda r: RetryableModelError("HTTP 503 from the endpoint"))
    code, out, _ = run_cli(capsys, "query", index_dir, QUESTION, "--seed", "2", "--json", "--no-store", "--no-cache", model=model)
    assert code == EXIT_RUN
    failed = json.loads(out)
    assert list(failed) == list(refused)
    assert failed["endpoint"] is None and failed["error_type"] == "AllMapBatchesFailed" and failed["failed_batches"]


def test_no_results_says_whether_nothing_was_found_or_every_answer_failed_or_scored_0(capsys, index_dir):  # type: ignore[no-untyped-def]
    from graphrag_core.errors import RetryableModelError

    def script(request):  # the mill's batch fails every attempt, the river's scores 0
        if "mill" in request.prompt_text:
            return RetryableModelError("Model endpoint answered HTTP 503: busy")
        return {"answer": "", "usefulness": 0}

    model = ScriptedChatModel(script)
    argv = ("query", index_dir, QUESTION, "--level", "1", "--map-budget", "770", "--question-reserve", "0", "--no-store", "--no-cache")
    code, out, err = run_cli(capsys, *argv, model=model)
    assert code == 0, err
    assert out.strip() == "No relevant community summaries were found for this query."
    assert "why there is no full answer: Every answered batch (1) scored usefulness 0" in err
    assert "batches failed every attempt" in err
    code, out, err = run_cli(capsys, *argv, "--json", model=model)
    document = json.loads(out)
    assert document["status"] == "no_results"
    assert [item["reason"] for item in document["why_no_answer"]] == ["all_scores_zero", "failed_batch"]


def test_no_results_where_every_batch_scored_0_says_that_alone(capsys, index_dir):  # type: ignore[no-untyped-def]
    model = ScriptedChatModel(lambda request: {"answer": "", "usefulness": 0})
    code, out, err = run_cli(capsys, "query", index_dir, QUESTION, "--level", "1", "--no-store", "--no-cache", "--json", model=model)
    document = json.loads(out)
    reasons = [item["reason"] for item in document["why_no_answer"]]
    assert document["status"] == "no_results" and reasons == ["all_scores_zero"]
