"""The Compare, Index browser and Sweeps pages, run headless with AppTest against a temp store."""

import pytest

from graphrag_core import GlobalSearchRequest
from graphrag_core.locations import ENV_DB
from graphrag_core.history import RunStore
from graphrag_app.sweeps.state import SweepsState

from .apptest_support import page
from .factories import sample_run

QUESTION = "What do hackers call a clever but ugly fix?"


def offline_run(level, seed, *, label=""):
    return sample_run(GlobalSearchRequest(query=QUESTION, community_level=level, seed=seed, include_sources=False), label=label)


@pytest.fixture(scope="module")
def two_runs():
    return offline_run(0, 1, label="level 0"), offline_run(1, 2, label="level 1")


@pytest.fixture
def store(run_db, two_runs):
    store = RunStore(run_db)
    for record in two_runs:
        store.save(record)
    return store


def plotly_charts(at):
    return at.get("plotly_chart")


def table_with(at, column):
    """The first dataframe shown with that column (AppTest does not expose a dataframe's key)."""
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"No table with a {column!r} column.")


def test_compare_from_url_renders_settings_metrics_and_charts(store, two_runs):
    a, b = two_runs
    at = page("compare")
    at.query_params["runs"] = f"{a.run_id},{b.run_id}"
    at.run()
    assert not at.exception
    assert at.multiselect(key="compare_runs").value == [a.run_id, b.run_id]
    assert at.multiselect(key="compare_runs").label == "Runs to compare"
    headers = [h.value for h in at.subheader]
    assert {"Settings", "Metrics", "Communities behind the answers", "Answers", "History"} <= set(headers)
    metrics = table_with(at, "metric")
    assert list(metrics["metric"])[:3] == ["status", "summaries", "batches"]
    assert len(metrics.columns) == 3  # metric, A, B
    assert len(plotly_charts(at)) == 4  # cost, usefulness, overlap heatmap, overlap bars
    # The answers' citations link to the provenance page with index, community and run.
    links = [m.value for m in at.markdown if "provenance?" in m.value]
    assert links and f"run={a.run_id}" in links[0] and "index=jargon" in links[0]
    # The answers are drawn as safe Markdown (no HTML), their citations as provenance links.
    from graphrag_app.text import safe_markdown

    first_line = a.result.answer.splitlines()[0]
    assert any(m.value.startswith(safe_markdown(first_line)) for m in at.markdown)
    assert not any(m.proto.allow_html for m in at.markdown)


def test_compare_asks_for_two_runs_and_follows_the_multiselect(store, two_runs):
    a, b = two_runs
    at = page("compare").run()
    assert not at.exception
    assert any("at least two runs" in i.value for i in at.info)
    at.multiselect(key="compare_runs").select(a.run_id).select(b.run_id).run()
    assert not at.exception
    assert at.query_params["runs"] == f"{a.run_id},{b.run_id}"
    assert len(plotly_charts(at)) == 4


def test_compare_reports_unknown_run_ids(store, two_runs):
    at = page("compare")
    at.query_params["runs"] = f"{two_runs[0].run_id},nosuchrun"
    at.run()
    assert not at.exception
    assert any("nosuchrun" in i.value for i in at.info)
    assert at.multiselect(key="compare_runs").value == [two_runs[0].run_id]


def test_history_exports_and_deletes_a_run(store, two_runs):
    a, b = two_runs
    at = page("compare")
    at.query_params["runs"] = f"{a.run_id},{b.run_id}"
    at.run()
    assert [b.label for b in at.get("download_button")] == ["Download JSON", "Download Markdown", "Download run bundle"]
    assert at.selectbox(key="compare_history_run").value == a.run_id
    at.button(key="compare_delete").click().run()
    assert not at.exception
    assert a.run_id not in store and b.run_id in store
    assert at.multiselect(key="compare_runs").value == [b.run_id]
    assert any("Deleted run" in i.value for i in at.info)


def test_compare_with_an_empty_store(run_db):
    at = page("compare").run()
    assert not at.exception
    assert any("empty" in i.value for i in at.info)


def test_index_browser_on_the_jargon_sample(run_db):
    at = page("index_browser").run()
    assert not at.exception
    assert at.selectbox(key="browse_index").value == "jargon"
    assert len(plotly_charts(at)) == 3  # hierarchy, levels, entity graph
    levels = table_with(at, "map text tokens")
    assert list(levels["level"]) == ["0", "1", "2", "leaf"]
    table = table_with(at, "provenance")
    assert len(table) == 300
    assert table["provenance"].iloc[0].startswith("provenance?index=jargon&community=")
    at.text_input(key="browse_filter").input("kludge").run()
    assert not at.exception
    filtered = table_with(at, "provenance")
    assert 0 < len(filtered) < 300
    at.segmented_control(key="browse_size_by").set_value("tokens").run()
    at.segmented_control(key="browse_kind").set_value("treemap").run()
    assert not at.exception


def test_index_browser_opens_the_community_named_in_the_url(run_db):
    at = page("index_browser")
    at.query_params["index"] = "zh-tea"
    at.query_params["community"] = "1"
    at.run()
    assert not at.exception
    assert at.selectbox(key="browse_index").value == "zh-tea"
    assert at.selectbox(key="browse_graph_community").value == "1"


def test_index_browser_reports_a_folder_that_is_not_an_index(tmp_path, run_db):
    at = page("index_browser")
    at.query_params["index"] = str(tmp_path)
    at.run()
    assert not at.exception
    assert at.error and str(tmp_path) in at.error[0].value.replace("\\", "")


def test_sweeps_runs_a_tiny_grid(run_db):
    at = page("sweeps").run()
    assert not at.exception
    at.multiselect(key="sweep_levels").set_value(["0"])
    at.text_input(key="sweep_seeds").input("1, 2")
    at.checkbox(key="sweep_save_runs").check()
    at.run()
    assert any("2 points" in c.value for c in at.caption)
    at.button(key="sweep_run").click().run()
    assert not at.exception
    assert len(plotly_charts(at)) == 5  # stability, cost per level, status per point, communities, tokens
    points = table_with(at, "prompt tokens (est.)")  # readable headers, no snake_case
    assert list(points["seed"]) == [1, 2] and set(points["status"]) <= {"completed", "partial", "no_results"}
    assert not any("_" in str(column) for column in points.columns)
    assert {"communities cited", "communities behind"} <= set(points.columns)  # the names Explore uses
    assert all(str(link).startswith("./?run=") for link in points["run"])  # each point links to its run
    assert not any("readable headers" in m.value for m in at.markdown)  # no stray text on the page
    assert len(at.get("download_button")) == 2
    assert len(RunStore(run_db)) == 2  # each point's run saved for Compare


def test_sweeps_reports_a_bad_seed_list(run_db):
    at = page("sweeps").run()
    at.text_input(key="sweep_seeds").input("1, two").run()
    assert not at.exception
    assert any("two" in w.value for w in at.warning)
    assert at.button(key="sweep_run").disabled


def test_switching_index_resets_the_entity_graph_community(run_db):
    from graphrag_app.index_browser import charts as index_charts
    from graphrag_core.index import load_index
    from graphrag_core.samples import sample_path

    jargon = index_charts.communities_with_entities(load_index(sample_path("jargon")))
    zh = index_charts.communities_with_entities(load_index(sample_path("zh-tea")))
    shared = [o for o in zh[1:] if o in jargon and o != jargon[0]]
    assert shared, "the test needs a community id both samples have"
    at = page("index_browser").run()
    at.selectbox(key="browse_index").select("zh-tea").run()
    at.selectbox(key="browse_graph_community").select(shared[0]).run()
    assert at.selectbox(key="browse_graph_community").value == shared[0]
    at.selectbox(key="browse_index").select("jargon").run()
    assert not at.exception
    assert at.selectbox(key="browse_graph_community").value == jargon[0]  # not zh-tea's community


def test_sweeps_refuses_an_unreachable_model_before_any_call(tmp_path, monkeypatch):
    # issue 16: a sweep with the configured model checks the endpoint first, like Explore and the
    # command line: one message naming the endpoint, no job, no point run, nothing recorded
    db = tmp_path / "runs.sqlite3"
    monkeypatch.setenv(ENV_DB, str(db))
    monkeypatch.setenv("GRAPHRAG_LLM_PROVIDER", "openai")
    monkeypatch.setenv("GRAPHRAG_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("GRAPHRAG_LLM_MODEL", "test-model")
    at = page("sweeps").run()
    at.multiselect(key="sweep_levels").set_value(["0"])
    at.text_input(key="sweep_seeds").input("1")
    at.radio(key="sweep_model").set_value("configured")
    at.checkbox(key="sweep_save_runs").check()
    at.run()
    at.button(key="sweep_run").click().run()
    assert not at.exception
    shown = [e.value for e in at.error] + [w.value for w in at.warning]
    refused = [t for t in shown if "The model endpoint http://127.0.0.1:9/v1 cannot be reached" in t.replace("\\", "")]
    assert len(refused) == 1, shown
    assert "sweep_job" not in at.session_state and "sweep_result" not in at.session_state
    sweeps = at.session_state[SweepsState.KEY]
    assert sweeps.job is None and sweeps.result is None
    assert not plotly_charts(at)
    assert not db.exists() or len(RunStore(db)) == 0
    assert not at.button(key="sweep_run").disabled  # fix the endpoint, then run again


def test_sweeps_explains_why_the_endpoint_tokenizer_needs_the_configured_model(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_DB, str(tmp_path / "runs.sqlite3"))
    at = page("sweeps").run()
    at.selectbox(key="sweep_tokenizer").select("endpoint").run()
    assert not at.exception
    assert any("own /tokenize" in w.value and "offline model has no server" in w.value for w in at.warning)
    assert at.button(key="sweep_run").disabled


def test_sweeps_counts_with_the_servers_own_tokenizer(tmp_path, monkeypatch):
    # issue 16: the endpoint tokenizer works in sweeps too (the server's /tokenize is asked)
    from .openai_server import completion_body, openai_server

    def llama_cpp(path, body):
        if path == "/tokenize":
            return 200, {"tokens": list(range(len(body["content"]) // 3))}
        if body.get("stream"):
            chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [{"index": 0, "delta": {"content": '{"answer": "Hackers say kludge [Data: Reports (1)]."}'}}]}
            return 200, [chunk]
        return 200, completion_body('{"answer": "points", "usefulness": 50}')

    monkeypatch.setenv(ENV_DB, str(tmp_path / "runs.sqlite3"))
    monkeypatch.setenv("GRAPHRAG_LLM_PROVIDER", "openai")
    monkeypatch.setenv("GRAPHRAG_LLM_MODEL", "m")
    with openai_server(llama_cpp) as server:
        monkeypatch.setenv("GRAPHRAG_LLM_BASE_URL", server.base_url)
        at = page("sweeps").run()
        at.multiselect(key="sweep_levels").set_value(["0"])
        at.text_input(key="sweep_seeds").input("1")
        at.radio(key="sweep_model").set_value("configured")
        at.selectbox(key="sweep_tokenizer").select("endpoint")
        at.run()
        assert not at.button(key="sweep_run").disabled
        at.button(key="sweep_run").click().run()
        counted = [r for r in server.requests if r["path"] == "/tokenize"]
    assert not at.exception
    points = table_with(at, "prompt tokens (est.)")
    assert list(points["status"]) == ["completed"]
    assert counted


def test_compare_overlap_switches_between_the_three_sets_named_as_on_explore(store, two_runs):
    a, b = two_runs
    at = page("compare")
    at.query_params["runs"] = f"{a.run_id},{b.run_id}"
    at.run()
    from graphrag_app.compare import charts as cc

    control = at.get("button_group")[0]
    assert control.label == "Community set"
    titles = {"cited": "Communities cited by the answers", "behind": "Communities behind the answers", "read_but_unused": "Communities read but unused"}
    for which, heading in titles.items():
        control.set_value(which).run()
        assert not at.exception
        assert heading in [h.value for h in at.subheader]
        assert not any("cited by" in frame.value.columns for frame in at.dataframe)
        expected = set().union(*cc.run_sets([a, b], which))
        overlap = [frame.value for frame in at.dataframe if "runs" in frame.value.columns]
        if expected:  # the table holds exactly that set's communities
            assert overlap[0]["communities"].sum() == len(expected)
            assert {cid for row in overlap[0]["ids"] for cid in row.removesuffix(" …").split(", ")} <= expected
        else:
            assert not overlap and f"No community is {which.replace('_', ' ')} in these runs." in [c.value for c in at.caption]
