"""Dynamic selection in the app: the switch and its URL settings, the cost range, the live
hierarchy, the rating/map/reduce token split, and replays (AppTest and the pure chart)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from graphrag_app.explore.charts import WALK_COLORS, hierarchy_figure, walk_table
from graphrag_app.urls import RunSettings, from_query_params, to_query_params
from graphrag_core import GlobalSearchRequest, RunState, ScriptedChatModel, retrieve_global
from graphrag_core.events import CommunityRated, SelectionRound
from graphrag_core.request import SearchSettings

from .apptest_support import app, metrics, page, provenance, run_question, texts
from .factories import sample_run, small_index

QUESTION = "Who are the wizards?"


def hierarchy_specs(at) -> list[dict]:  # type: ignore[no-untyped-def]
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    return [s for s in specs if s["data"] and s["data"][0].get("type") == "sunburst"]


def test_the_switch_shows_the_rating_settings_and_a_cost_range(run_db: Path) -> None:
    at = app().run()
    assert at.radio(key="community_selection").value == "level"
    assert "selection" not in at.query_params  # a fixed-level URL is unchanged
    at.radio(key="community_selection").set_value("dynamic").run()
    assert not at.exception
    labels = {w.label for w in [*at.slider, *at.number_input, *at.checkbox]}
    assert {"Rating threshold", "Keep parents", "Rating repeats", "Fallback max level", "Rating output reserve"} <= labels
    assert "Community level" not in {w.label for w in at.selectbox}
    shown = metrics(at)
    low, high = (int(x.replace(",", "")) for x in shown["Est. rating calls"].split("–"))
    assert low == 18 and high == 300  # jargon: 18 roots, 300 communities with a summary
    assert "–" in shown["Est. rating prompt tokens"] and "–" in shown["Model calls"]
    at.number_input(key="rating_repeats").set_value(2).run()
    assert metrics(at)["Est. rating calls"] == "36–600"
    assert at.query_params["selection"] == "dynamic" and at.query_params["rating_repeats"] == "2"


def test_url_parameters_set_the_dynamic_widgets(run_db: Path) -> None:
    at = app({"selection": "dynamic", "rating_threshold": "3", "keep_parent": "1", "rating_repeats": "2", "fallback_level": "1", "rating_reserve": "128"}).run()
    assert at.radio(key="community_selection").value == "dynamic"
    assert at.slider(key="rating_threshold").value == 3
    assert at.checkbox(key="keep_parent").value is True
    assert at.number_input(key="rating_repeats").value == 2
    assert at.number_input(key="fallback_max_level").value == 1
    assert at.number_input(key="rating_output_reserve").value == 128


def test_dynamic_settings_round_trip_through_query_params() -> None:
    settings = RunSettings(
        index="jargon",
        query="q",
        search=SearchSettings(community_selection="dynamic", rating_threshold=2, keep_parent=True, rating_repeats=3, fallback_max_level=0, rating_output_reserve=100),
    )
    decoded, problems = from_query_params(to_query_params(settings), base=RunSettings())
    assert decoded == settings and not problems
    request = settings.to_request()
    assert (request.community_selection, request.rating_threshold, request.keep_parent, request.rating_repeats) == ("dynamic", 2, True, 3)
    assert RunSettings.from_request(request, index="jargon", seed=1, base=RunSettings()).search.rating_repeats == 3


def test_a_dynamic_run_draws_the_hierarchy_and_splits_the_tokens(run_db: Path) -> None:
    at = app().run()
    at.radio(key="community_selection").set_value("dynamic").run()
    at = run_question(at, QUESTION)
    assert not at.exception
    assert "Status: completed" in texts(at)
    shown = metrics(at)
    assert shown["Community level"] == "dynamic"
    assert int(shown["Rating calls"]) > 0
    assert int(shown["Rating tokens"].replace(",", "")) > 0 and int(shown["Map tokens"].replace(",", "")) > 0
    assert int(shown["Reduce tokens"].replace(",", "")) > 0
    [spec] = hierarchy_specs(at)
    colors = spec["data"][0]["marker"]["colors"]
    assert WALK_COLORS["kept"] in colors and WALK_COLORS["pruned"] in colors and WALK_COLORS["unreached"] in colors
    assert any("rating" in h and "reason" in h for h in spec["data"][0]["hovertext"])
    run_id = at.query_params["run"]
    assert at.query_params["selection"] == "dynamic"

    reopened = app()  # a saved run redraws its walk with no model
    reopened.query_params["run"] = run_id
    reopened.run()
    assert not reopened.exception and reopened.radio(key="community_selection").value == "dynamic"
    [again] = hierarchy_specs(reopened)
    assert again["data"][0]["marker"]["colors"] == colors


def test_the_hierarchy_figure_follows_the_walk_live() -> None:
    def reply(request):  # type: ignore[no-untyped-def]
        if request.purpose == "rate":
            cid = request.messages[-1].content.split("[Community ID: ")[1].split("]")[0]
            return {"rating": {"0": 3, "1": 4, "2": 0, "3": 5}.get(cid, 0), "reason": f"<b>why</b> {cid}"}
        return {"answer": "a", "usefulness": 50} if request.purpose == "map" else {"answer": "final"}

    events: list = []
    request = GlobalSearchRequest(query="q", community_selection="dynamic", seed=1)
    asyncio.run(retrieve_global(small_index(), request, ScriptedChatModel(reply), on_event=events.append))
    first_round = next(i for i, e in enumerate(events) if isinstance(e, SelectionRound))
    live = RunState.replay(events[: first_round + 1])
    trace = hierarchy_figure(live).data[0]
    assert list(trace.ids) == ["0", "1", "2", "3", "4", "5", "6"]
    assert list(trace.parents) == ["", "0", "0", "1", "1", "2", "2"]
    assert trace.marker.colors[0] == WALK_COLORS["queued"] and trace.marker.colors[1] == WALK_COLORS["unreached"]

    first_rating = next(i for i, e in enumerate(events) if isinstance(e, CommunityRated) and e.community_id == "1")
    partial = hierarchy_figure(RunState.replay(events[: first_rating + 1])).data[0]
    assert partial.marker.colors[0] == WALK_COLORS["superseded"] and partial.marker.colors[1] == WALK_COLORS["kept"]

    done = RunState.replay(events)
    trace = hierarchy_figure(done).data[0]
    fates = dict(zip(trace.ids, trace.marker.colors))
    assert fates == {
        "0": WALK_COLORS["superseded"],
        "1": WALK_COLORS["superseded"],
        "2": WALK_COLORS["pruned"],
        "3": WALK_COLORS["kept"],
        "4": WALK_COLORS["pruned"],
        "5": WALK_COLORS["unreached"],
        "6": WALK_COLORS["unreached"],
    }
    assert "rating 5" in trace.hovertext[3] and "&lt;b&gt;why&lt;/b&gt; 3" in trace.hovertext[3]  # untrusted reason escaped
    legend = {t.name for t in hierarchy_figure(done).data[1:]}
    assert any(name.startswith("kept") for name in legend) and any(name.startswith("never reached") for name in legend)
    table = walk_table(done)
    assert list(table["fate"]) == ["superseded", "superseded", "pruned", "kept", "pruned", "unreached", "unreached"]
    assert table.loc[3, "rating"] == 5


# -- Compare and Sweeps ----------------------------------------------------------------------------

def test_compare_puts_a_dynamic_run_beside_a_fixed_level(run_db: Path) -> None:
    from graphrag_app.compare import charts as cc
    from graphrag_core.history import RunStore

    level = sample_run(GlobalSearchRequest(query=QUESTION, community_level=1, seed=1))
    dynamic = sample_run(GlobalSearchRequest(query=QUESTION, community_selection="dynamic", seed=1))
    store = RunStore(run_db)
    store.save(level)
    store.save(dynamic)
    rows = {row["setting"]: row for row in cc.settings_table([level, dynamic])}
    a, b = cc.run_labels([level, dynamic])
    assert (rows["community level"][a], rows["community level"][b]) == ("1", "dynamic")
    assert rows["community selection"]["differs"]
    metrics = {m: (x.as_row()) for m, x in (("level", cc.run_metrics(level)), ("dynamic", cc.run_metrics(dynamic)))}
    d = dynamic.result.diagnostics
    assert metrics["dynamic"]["rating calls"] == d.rating_calls > 0 and metrics["level"]["rating calls"] == 0
    assert metrics["dynamic"]["model calls"] == d.rating_calls + d.map_calls + d.reduce_calls
    at = page("compare")
    at.query_params["runs"] = f"{level.run_id},{dynamic.run_id}"
    at.run()
    assert not at.exception
    table = next(f.value for f in at.dataframe if "metric" in f.value.columns)
    assert "rating calls" in list(table["metric"])


def test_sweeps_page_runs_dynamic_beside_a_level(run_db: Path) -> None:
    at = page("sweeps").run()
    assert "dynamic" in at.multiselect(key="sweep_levels").options[-1]
    at.multiselect(key="sweep_levels").set_value(["1", "dynamic"])
    at.text_input(key="sweep_question").input(QUESTION)
    at.text_input(key="sweep_seeds").input("1")
    at.run()
    at.slider(key="sweep_rating_threshold").set_value(2)
    at.run()
    at.button(key="sweep_run").click().run()
    assert not at.exception
    points = next(f.value for f in at.dataframe if "rating calls" in f.value.columns)  # readable headers (issue 14)
    assert list(points["level"].astype(str)) == ["1", "dynamic"]
    assert points["rating calls"].iloc[0] == 0 and points["rating calls"].iloc[1] > 0
    assert points["model calls"].iloc[1] < points["model calls"].iloc[0]  # dynamic reads fewer summaries here


def test_live_redraws_slow_down_while_the_selection_rates() -> None:
    from graphrag_app.jobs import MAX_REDRAW_INTERVAL_S, redraw_interval
    from graphrag_core.events import RunStarted, SelectionStarted

    state = RunState().apply(RunStarted(run_id="r", request=GlobalSearchRequest(query="q", community_selection="dynamic"), seed=1, model="m", tokenizer="heuristic"))
    before = redraw_interval(state)
    state.apply(SelectionStarted(community_count=1, root_ids=("0",), rating_threshold=1, keep_parent=False, rating_repeats=1, rating_prompt_budget=100))
    assert redraw_interval(state) == MAX_REDRAW_INTERVAL_S > before


def test_provenance_shows_a_communitys_rating_in_a_dynamic_run(run_db: Path) -> None:
    from graphrag_app.jobs import run_blocking
    from graphrag_core.index import load_index
    from graphrag_core.llm.offline import OfflineChatModel
    from graphrag_core.samples import sample_path

    index = load_index(sample_path("jargon"))
    request = GlobalSearchRequest(query=QUESTION, community_selection="dynamic", seed=7)
    handle, state = run_blocking(index, request, OfflineChatModel(), store_path=run_db, index_name="jargon", timeout=60)
    assert state.result is not None
    kept = state.result.community_ids[0]
    at = provenance({"index": "jargon", "community": kept, "run": handle.run_id})
    assert not at.exception
    lines = [m.value for m in at.markdown if m.value.startswith("**Dynamic selection:**")]
    assert lines and "kept (the map reads it): rated" in lines[0] and "in round" in lines[0]
    assert any(t.startswith("Reason: The summary mentions") for t in texts(at))
    unreached = next(r.community_id for r in state.result.diagnostics.community_ratings if r.fate == "unreached")
    at = provenance({"index": "jargon", "community": unreached, "run": handle.run_id})
    assert any("never reached" in m.value for m in at.markdown if m.value.startswith("**Dynamic selection:**"))
