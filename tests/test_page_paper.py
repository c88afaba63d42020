"""The paper's experiment in the app (issue 23) under AppTest: the method on Explore (a text run is
a normal run over chunks; naive RAG's one call), cited chunks as links to their source views, the
paper's preset on Evaluate, the choice chart per criterion and its CSV, the cost table in the
paper's form."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from graphrag_app.evaluate.charts import METHOD_COLORS, choice_chart, paper_cost_table
from graphrag_app.explore.relevance import subqueries_line
from graphrag_app.settings import ranking_line
from graphrag_app.text import escape_markdown
from graphrag_core.evaluation import choose
from graphrag_core.history import RunStore
from graphrag_core.index import load_index, save_index
from graphrag_core.llm.embeddings import EmbeddingSettings
from graphrag_core.llm.settings import ModelSettings
from graphrag_core.models import Community, Index
from graphrag_core.samples import sample_path

from .apptest_support import app, messages, metrics, page, run_question, texts
from .test_evaluation_choice import result  # noqa: F401 - the module's experiment, as a fixture

TIMEOUT = 120


def evaluate() -> AppTest:
    return page("evaluate", timeout=TIMEOUT)


# -- Explore ----------------------------------------------------------------------------------------


def test_explore_offers_the_method_and_a_text_run_maps_over_chunks_with_links_to_them(run_db: Path) -> None:
    at = app().run()
    method = at.radio(key="method")
    assert method.label == "Method" and method.options == ["Summaries", "Source text (TS)", "Naive RAG (SS)", "Lazy (LZ)"]
    method.set_value("text").run()
    assert not at.exception
    assert "community_level" not in {w.key for w in at.selectbox} and "include_claims" not in {c.key for c in at.checkbox}
    shown = metrics(at)
    assert shown["Source chunks"] == "2,370" and int(shown["Model calls"]) == int(shown["Batches"]) + 1
    at = run_question(at, "What is a kludge?")
    assert not at.exception and not messages(at, "error")
    assert "Status: completed" in [t.split(" ·")[0] for t in texts(at)]
    run_id = at.query_params["run"]
    assert at.query_params["method"] == "text"
    answer = next(m.value for m in at.markdown if "Sources:" in m.value and "](provenance?" in m.value)
    assert "provenance?index=jargon&source=" in answer and f"&run={run_id}" in answer and "community=" not in answer
    record = RunStore(run_db).get(run_id)
    assert record is not None and record.request.method == "text" and record.figures.batches > 1
    assert any("Source chunks:" in c.value and "cited" in c.value for c in at.caption)


def test_naive_rag_on_explore_says_how_it_ranks_and_opens_its_one_call(run_db: Path) -> None:
    at = app({"method": "vector"}).run()
    assert at.radio(key="method").value == "vector"
    assert any("ranks the source chunks by BM25" in c.value for c in at.caption)
    shown = metrics(at)
    assert shown["Batches"] == "0" and shown["Model calls"] == "1" and shown["Est. prompt tokens"].startswith("≤")
    assert "map_token_budget" not in {n.key for n in at.number_input}  # no map
    at = run_question(at, "What is a kludge?")
    assert not at.exception
    call = at.selectbox(key="evidence_open_call")
    assert call.options[1] == "The answering call (naive RAG)"
    call.set_value("reduce").run()
    assert any("The answering call" in m.value and "source excerpts" in m.value for m in at.markdown)


def test_an_index_without_chunks_says_so_for_the_chunk_methods(run_db: Path, tmp_path: Path) -> None:
    folder = tmp_path / "no-chunks"
    save_index(Index(communities=[Community(id="r", level=0, summary="A root.")], name="bare"), folder)
    at = app({"index": str(folder), "method": "text"}).run()
    assert any("The index has no source chunks, so method text cannot run." in w.value for w in at.warning)


def test_the_ranking_line_names_the_embedding_model_only_where_it_is_used():
    embedding = EmbeddingSettings(model="text-embedding-3-small", base_url="https://api.openai.com/v1")
    openai = ModelSettings(provider="openai", model="gpt-4o-mini")
    assert "text-embedding-3-small" in ranking_line(openai, embedding)
    assert "BM25 (offline" in ranking_line(ModelSettings(), embedding)
    assert "GRAPHRAG_EMBEDDING_MODEL" in ranking_line(openai, None)


# -- Evaluate ---------------------------------------------------------------------------------------


def test_the_papers_conditions_in_one_click_then_the_choice_and_its_csv(run_db: Path) -> None:
    at = evaluate().run()
    at.selectbox(key="eval_index").set_value("zh-tea").run()
    at.button(key="eval_preset_paper").click().run()
    levels = load_index(sample_path("zh-tea")).levels()
    box = at.text_area(key="eval_conditions").value.splitlines()
    assert [line.split(":")[0] for line in box] == [f"C{level}" for level in levels] + ["TS", "SS", "dynamic"]
    assert "TS: method=text" in box and "SS: method=vector" in box and box[0] == "C0: level=0, claims=false, sources=false"
    assert any("ranks the source chunks by BM25" in c.value for c in at.caption)
    at.text_input(key="eval_seeds").input("1")
    at.multiselect(key="eval_criteria").set_value(["comprehensiveness", "directness"]).run()
    at.button(key="eval_start").click().run()
    assert not at.exception, at.exception
    charts = {chart.key for chart in at.get("plotly_chart")}
    assert {"eval_choice_comprehensiveness", "eval_choice_directness"} <= charts
    recommendations = [b.value for b in [*at.info, *at.warning] if "significantly below" in b.value or "is best" in b.value]
    assert len(recommendations) == 2 and all(r.startswith("Heuristic choice") for r in recommendations)
    paper = next(f.value for f in at.dataframe if "units read per answer" in f.value.columns)
    assert list(paper["condition"]) == [f"C{level}" for level in levels] + ["TS", "SS", "dynamic"]
    assert "share of TS" in paper.columns and paper.loc[paper["condition"] == "TS", "share of TS"].item() == "100.0%"
    table = next(f.value for f in at.dataframe if "Pareto front" in f.value.columns)
    assert table["recommended"].sum() == 2
    download = next(b for b in at.get("download_button") if "choice" in str(b.proto).lower())
    assert download is not None


def test_the_choice_chart_is_log_cost_against_win_rate_with_intervals_and_the_recommendation(result) -> None:  # noqa: F811
    choice = {c.criterion: c for c in choose(result)}["empowerment"]
    figure = choice_chart(choice)
    assert figure.layout.xaxis.type == "log" and "win rate" in figure.layout.yaxis.title.text
    names = {trace.name for trace in figure.data}
    assert "recommended: C0" in names and "Pareto front" in names
    star = next(t for t in figure.data if t.name == "recommended: C0")
    assert star.marker.symbol == "star" and list(star.text) == ["C0"]
    assert star.textposition == "top right"  # the star's label beside it, not under the star
    right = max(math.log10(x) for t in figure.data if t.mode and "markers" in t.mode for x in t.x)
    low, high = figure.layout.xaxis.range
    assert high - right >= 0.15 * (high - low)  # room for the right-most point's label ("dynamic" was cut)
    by_condition = {name: (x, y, err) for t in figure.data if t.mode and "markers" in t.mode for name, x, y, err in zip(t.text, t.x, t.y, t.error_y.array)}
    ts = choice.point("TS")
    assert by_condition["TS"][1] == ts.win_rate and by_condition["TS"][2] == pytest.approx(ts.ci_high - ts.win_rate)
    assert {t.marker.color for t in figure.data if t.name in ("Source text, map-reduce (TS)",)} == {METHOD_COLORS["text"]}
    rows = paper_cost_table(result)
    assert [r["condition"] for r in rows] == ["C0", "TS", "SS"] and rows[1]["share of TS"] == "100.0%"


def test_a_lazy_run_on_explore_uses_its_relevance_budget_and_is_recorded(run_db: Path) -> None:
    at = app().run()
    at.radio(key="method").set_value("lazy").run()
    assert not at.exception and "community_level" not in {w.key for w in at.selectbox}
    at.number_input(key="relevance_budget").set_value(30).run()
    at = run_question(at, "What is a kludge?")
    assert not at.exception and not messages(at, "error")
    assert "Status: completed" in [t.split(" ·")[0] for t in texts(at)]
    assert at.query_params["method"] == "lazy"
    record = RunStore(run_db).get(at.query_params["run"])
    assert record is not None and record.request.method == "lazy" and record.request.relevance_budget == 30
    assert record.result is not None and 0 < record.result.diagnostics.relevance_tests <= 30
    tests = record.result.diagnostics.relevance_tests
    titles = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in at.get("plotly_chart")]
    assert any(title.startswith(f"Relevance tests: {tests} of 30 · ") for title in titles), titles
    assert any(caption.startswith(f"{tests} of 30 relevance tests · ") for caption in (c.value for c in at.caption))
    subqueries = record.result.diagnostics.subqueries
    assert f"Subqueries: {escape_markdown(subqueries_line(subqueries))}" in [c.value for c in at.caption]


def test_lazy_conditions_in_one_click_and_an_lz_condition_judged_with_its_costs(run_db: Path) -> None:
    """Issue 42, item 6: Evaluate puts LZ100, LZ500 and LZ1500 beside the paper's conditions, and
    an LZ condition runs, is judged and has its costs row (method lazy) and its point on the choice."""
    at = evaluate().run()
    at.selectbox(key="eval_index").set_value("jargon").run()
    at.button(key="eval_preset_lazy").click().run()
    levels = load_index(sample_path("jargon")).levels()
    box = at.text_area(key="eval_conditions").value.splitlines()
    names = [f"C{level}" for level in levels] + ["TS", "SS", "dynamic", "LZ100", "LZ500", "LZ1500"]
    assert [line.split(":")[0] for line in box] == names
    assert "LZ500: method=lazy, relevance_budget=500" in box
    at.text_area(key="eval_conditions").input("C1: level=1, claims=false, sources=false\nLZ20: method=lazy, relevance_budget=20")
    at.text_input(key="eval_seeds").input("1")
    at.multiselect(key="eval_criteria").set_value(["comprehensiveness"]).run()
    at.button(key="eval_start").click().run()
    assert not at.exception, at.exception
    paper = next(f.value for f in at.dataframe if "units read per answer" in f.value.columns)
    assert list(paper["condition"]) == ["C1", "LZ20"]
    choice = next(f.value for f in at.dataframe if "Pareto front" in f.value.columns)
    assert set(choice["condition"]) == {"C1", "LZ20"}
    costs = next(f.value for f in at.dataframe if "prompt tokens (planned)" in f.value.columns).set_index("condition")
    assert costs.loc["LZ20", "relevance calls"] > 0 and costs.loc["C1", "relevance calls"] == 0  # the relevance tests, costed apart
    assert costs.loc["LZ20", "relevance calls"] <= 20
