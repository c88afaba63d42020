"""``--selection dynamic`` and the rating options on ``query`` and ``sweep``."""

import csv
import io
import json


from graphrag_cli.context import EXIT_OK
from graphrag_core import GlobalSearchResult, ScriptedChatModel
from graphrag_core.history import RunStore

from .cli_support import QUESTION, run_cli


def rates(ratings):
    def reply(request):
        if request.purpose == "rate":
            data = request.messages[-1].content
            cid = data.split("[Community ID: ")[1].split("]")[0]
            return {"rating": ratings.get(cid, 0), "reason": f"about {cid}"}
        if request.purpose == "map":
            return {"answer": "The mill matters.", "usefulness": 60}
        return {"answer": "Answer."}

    return ScriptedChatModel(reply)


def test_query_with_dynamic_selection_reports_the_walk(capsys, index_dir, tmp_path):
    store_path = tmp_path / "runs.sqlite3"
    model = rates({"r": 3, "a": 4, "b": 0})
    code, out, err = run_cli(capsys, "query", index_dir, QUESTION, "--selection", "dynamic", "--seed", "1", "--store", store_path, "--no-cache", model=model)
    assert code == EXIT_OK and out == "Answer.\n"
    assert "dynamic selection, round 0: rating 1 community\n" in err  # one community, not "1 communities"
    assert "dynamic selection, round 1: rating 2 communities" in err
    assert "kept 1 of 3 rated communities in 2 rounds (3 rating calls" in err
    assert "selected 1 community summary by dynamic selection" in err
    assert "3 rating calls, 1 map call)" in err
    runs = RunStore(store_path).list_runs()
    assert runs[0].community_level == "dynamic"
    markdown = RunStore(store_path).get(runs[0].run_id)
    assert markdown is not None and markdown.request.dynamic


def test_query_json_carries_every_rating_option(capsys, index_dir):
    model = rates({"r": 4, "a": 4, "b": 4})
    code, out, _ = run_cli(
        capsys, "query", index_dir, QUESTION, "--json", "--selection", "dynamic", "--rating-threshold", "4", "--keep-parent",
        "--rating-repeats", "3", "--fallback-max-level", "0", "--rating-reserve", "100", "--no-store", "--no-cache", model=model,
    )
    assert code == EXIT_OK
    result = GlobalSearchResult.model_validate_json(out)
    r = result.request
    assert (r.community_selection, r.rating_threshold, r.keep_parent, r.rating_repeats, r.fallback_max_level, r.rating_output_reserve) == ("dynamic", 4, True, 3, 0, 100)
    assert result.community_level == "dynamic"
    assert result.diagnostics.fates() == {"r": "kept", "a": "kept", "b": "kept", "c": "skipped"}
    assert result.diagnostics.rating_calls == 9 and all(c.max_tokens == 100 for c in model.calls_for("rate"))


def test_level_dynamic_reads_as_selection_dynamic(capsys, index_dir):
    code, out, _ = run_cli(capsys, "query", index_dir, QUESTION, "--json", "--level", "dynamic", "--no-store", "--no-cache", model=rates({"r": 2}))
    assert code == EXIT_OK and GlobalSearchResult.model_validate_json(out).request.community_selection == "dynamic"


def test_sweep_has_selection_as_a_dimension(capsys, index_dir):
    model = rates({"r": 3, "a": 4})
    code, out, err = run_cli(capsys, "sweep", index_dir, QUESTION, "--levels", "leaf,1,dynamic", "--seeds", "1,2", "--no-store", "--no-cache", model=model)
    assert code == EXIT_OK
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [row["level"] for row in rows] == ["leaf", "leaf", "1", "1", "dynamic", "dynamic"]
    dynamic = rows[-1]
    assert dynamic["rating_calls"] == "3" and int(dynamic["model_calls"]) == 3 + int(dynamic["map_calls"]) + int(dynamic["reduce_calls"])
    assert dynamic["community_ids"] == "a" and dynamic["summary_count"] == "1"
    assert all(row["rating_calls"] == "0" for row in rows[:4])


def test_sweep_selection_dynamic_adds_the_dynamic_point(capsys, index_dir, tmp_path):
    out_path = tmp_path / "sweep.json"
    code, _, _ = run_cli(
        capsys, "sweep", index_dir, QUESTION, "--levels", "leaf", "--selection", "dynamic", "--rating-threshold", "4", "--out", out_path,
        "--no-store", "--no-cache", model=rates({"r": 4, "a": 4}),
    )
    assert code == EXIT_OK
    document = json.loads(out_path.read_text())
    assert [p["level"] for p in document["points"]] == ["leaf", "dynamic"]
    assert document["spec"]["base"]["rating_threshold"] == 4
    assert "dynamic" in document["stability_by_level"]


def test_runs_show_reports_the_walk_in_markdown(capsys, index_dir, tmp_path):
    store_path = tmp_path / "runs.sqlite3"
    run_cli(capsys, "query", index_dir, QUESTION, "--selection", "dynamic", "--store", store_path, "--no-cache", model=rates({"r": 3, "a": 4, "b": 0}))
    run_id = RunStore(store_path).list_runs()[0].run_id
    code, out, _ = run_cli(capsys, "runs", "--store", store_path, "show", run_id)
    assert code == EXIT_OK
    assert "| community level | dynamic |" in out and "| rating threshold | 1 |" in out
    assert "## Dynamic selection" in out and "| rating calls | 3 |" in out
    assert "| a | 1 | 1 | 4 | kept | 4 | about a |" in out and "| r | 0 | 0 | 3 | superseded | 3 | about r |" in out


def test_sweep_prompt_tokens_count_the_rating_prompts(capsys, index_dir):
    from graphrag_core import ChatResponse, TokenUsage

    def reply(request):
        if request.purpose == "rate":
            return ChatResponse(text='{"rating": 3}', usage=TokenUsage(prompt_tokens=1000, completion_tokens=5))
        if request.purpose == "map":
            return {"answer": "The mill matters.", "usefulness": 60}
        return {"answer": "Answer."}

    code, out, _ = run_cli(capsys, "sweep", index_dir, QUESTION, "--levels", "1,dynamic", "--no-store", "--no-cache", model=ScriptedChatModel(reply))
    assert code == EXIT_OK
    level, dynamic = list(csv.DictReader(io.StringIO(out)))
    # dynamic keeps a and b (the children of r): the same map as level 1, plus three rating prompts
    assert int(dynamic["prompt_tokens"]) == int(level["prompt_tokens"]) + 3000
    assert dynamic["rating_tokens"] == str(3 * 1005)


def test_fallback_rounds_are_named_and_a_dynamic_query_ignores_the_level(capsys, index_dir):
    model = rates({"r": 0, "a": 2})
    code, out, err = run_cli(capsys, "query", index_dir, QUESTION, "--selection", "dynamic", "--level", "9", "--no-store", "--no-cache", model=model)
    assert code == EXIT_OK and out == "Answer.\n"
    assert "dynamic selection, round 1: rating 2 communities (fallback: every level-1 community)" in err
    assert "kept 1 of 3 rated communities in 2 rounds" in err
