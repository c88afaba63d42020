"""The app's parts under the pages: settings widgets and links generated from ``SearchSettings``'
metadata, the one job runner and the one way to follow a job, Evaluate's question generation as
a job, the drill-down seen from the row, the cost previews the app holds once, typed page state,
and deep links through ``app.py``'s navigation."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Literal

import pytest
from pydantic import Field
from streamlit.testing.v1 import AppTest

from graphrag_app import jobs
from graphrag_app.evaluate.drilldown import nothing_judged
from graphrag_core.evaluation import drilldown, drilldown_choices
from graphrag_app.previews import CostPreviews
from graphrag_app.urls import setting_fields
from graphrag_app.urls import PARAM_NAMES, RunSettings, from_query_params, to_query_params
from graphrag_core.evaluation import Condition, ExperimentSpec, run_experiment
from graphrag_core.evaluation.questions import EvalQuestion
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.scripted import ScriptedChatModel
from graphrag_core.history import RunStore
from graphrag_core.request import GlobalSearchRequest, SearchSettings
from graphrag_core.state import RunState
from graphrag_core.sweep import SweepSpec

from .apptest_support import page
from .factories import small_index
from .test_evaluation_experiment import _answers_by_level, _longer_wins

TIMEOUT = 60


class WiderSettings(SearchSettings):
    """The search settings with three settings more, declared once each, as a new field would be."""

    knob: int = Field(default=3, description="how far the knob is turned", ge=1, json_schema_extra={"short": "knob", "ui_max": 9})
    flavour: Literal["plain", "spicy"] = Field(default="plain", description="how it tastes")
    tidy: bool = Field(default=False, description="tidy the answer")


# -- one declaration of each setting -----------------------------------------------------------


def test_every_search_setting_is_linked_by_its_short_name() -> None:
    for setting in setting_fields():
        assert PARAM_NAMES[setting.name] == setting.param
        if setting.name != "fallback_max_level":  # fallback_level: links made before short names
            assert setting.param == SearchSettings.short_name(setting.name)
    assert {f.name for f in setting_fields()} == set(SearchSettings.model_fields)


def test_a_new_search_setting_is_linked_with_no_other_change() -> None:
    settings = RunSettings(index="jargon", query="q", search=WiderSettings(knob=5, flavour="spicy", tidy=True))
    params = to_query_params(settings)
    assert (params["knob"], params["flavour"], params["tidy"]) == ("5", "spicy", "1")
    decoded, problems = from_query_params(params, base=RunSettings(search=WiderSettings()))
    assert decoded == settings and not problems
    assert isinstance(decoded.search, WiderSettings)
    decoded, problems = from_query_params({"knob": "10", "flavour": "sour"}, base=RunSettings(search=WiderSettings()))
    assert decoded.search.knob == 3 and decoded.search.flavour == "plain"  # type: ignore[attr-defined]
    assert any("knob='10'" in p and "at most 9" in p for p in problems)
    assert any("flavour='sour'" in p for p in problems)


def _sidebar_with_wider_settings() -> None:
    import streamlit as st

    from graphrag_app.explore import sidebar
    from graphrag_app.explore.state import ExploreState, seed_widgets
    from graphrag_app.settings import load_settings
    from graphrag_app.urls import RunSettings

    from tests.test_app_parts import WiderSettings

    base = RunSettings(index="jargon", query="q", search=WiderSettings(knob=4))
    seed_widgets(base, index_options=["jargon"])
    opened, chosen = sidebar.read_request(load_settings(), base)
    with st.sidebar:
        box = sidebar.draw_sidebar(load_settings(), ExploreState.get(), opened, chosen)
        sidebar.draw_level_picker(box, ExploreState.get(), opened, chosen)
    current = chosen.settings
    st.text(f"{current.search.knob!r} {current.search.flavour} {current.search.tidy} {type(current.search).__name__}")


def test_a_new_search_setting_gets_its_widget_with_no_other_change(run_db: Path) -> None:
    at = AppTest.from_function(_sidebar_with_wider_settings, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    knob = at.number_input(key="knob")
    assert (knob.value, knob.label, knob.help, knob.max) == (4, "Knob", "how far the knob is turned", 9)
    assert at.radio(key="flavour").options == ["plain", "spicy"]
    assert at.checkbox(key="tidy").label == "Tidy"
    assert at.text[-1].value == "4 plain False WiderSettings"
    knob.set_value(6)
    at.radio(key="flavour").set_value("spicy")
    at.checkbox(key="tidy").check()
    at.run()
    assert at.text[-1].value == "6 spicy True WiderSettings"  # read back with the field's own type


def _sidebar_then_run_then_levels() -> None:
    import streamlit as st

    from graphrag_app import previews as loaders
    from graphrag_app.explore import sidebar
    from graphrag_app.explore.state import ExploreState, seed_widgets
    from graphrag_app.settings import load_settings
    from graphrag_app.urls import RunSettings

    asked: list[str] = []
    previews = loaders.cost_previews()
    counting = previews.level_costs
    previews.level_costs = lambda *a, **k: asked.append("levels") or counting(*a, **k)  # type: ignore[method-assign]
    base = RunSettings(index="jargon", query="q")
    seed_widgets(base, index_options=["jargon"])
    st.session_state["community_level"] = "level 7 (3 summaries)"  # a stale label of a level the index lacks
    try:
        opened, chosen = sidebar.read_request(load_settings(), base)
        with st.sidebar:
            box = sidebar.draw_sidebar(load_settings(), ExploreState.get(), opened, chosen)
        st.text(f"before the picker: {st.session_state['community_level']} {asked}")
        st.button("Run global search")
        sidebar.draw_level_picker(box, ExploreState.get(), opened, chosen)
        st.text(f"after the picker: {asked}")
    finally:
        del previews.level_costs  # the app's one CostPreviews counts as its class does again


def test_each_script_run_reads_the_widgets_once_and_passes_that_request_on(run_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Explore reads its widgets once per script run, a run with a click on Run included (the
    callback only notes the click; the script starts the run from its one read), and hands that
    value on: the cost preview's worker gets the request itself (no JSON), and the run is made
    from it (the question typed in the same interaction as the click)."""
    from graphrag_app.explore import sidebar, views

    from .apptest_support import app, run_question

    seen: list[str] = []  # "page" once per script run (the page reads its URL first), "read" per read
    load_url, read = views.load_url, sidebar.read_choices
    monkeypatch.setattr(views, "load_url", lambda *args: (seen.append("page"), load_url(*args))[1])
    monkeypatch.setattr(sidebar, "read_choices", lambda base: (seen.append("read"), read(base))[1])
    previewed: list[object] = []
    preview = CostPreviews.preview_future
    monkeypatch.setattr(CostPreviews, "preview_future", lambda self, index, key, signature, request: (previewed.append(request), preview(self, index, key, signature, request))[1])
    at = app({"latency": "0", "seed": "5"}).run()
    assert not at.exception and seen.count("page") >= 1 and seen == ["page", "read"] * seen.count("page")
    assert previewed and all(isinstance(r, GlobalSearchRequest) and r.seed == 5 for r in previewed)
    seen.clear()
    at = run_question(at, "Who wrote the Jargon File?")
    assert not at.exception
    assert seen.count("page") >= 2 and seen == ["page", "read"] * seen.count("page"), seen  # the click's run, then the page drawn whole
    record = RunStore(run_db).get(at.query_params["run"])
    assert record is not None and record.request.query == "Who wrote the Jargon File?" and record.request.seed == 5


def test_explore_draws_run_before_the_level_picker_waits_for_its_tokens(run_db: Path) -> None:
    at = AppTest.from_function(_sidebar_then_run_then_levels, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert [t.value for t in at.text] == ["before the picker: leaf []", "after the picker: ['levels']"]
    picker = at.sidebar.selectbox(key="community_level")
    assert picker.value == "leaf" and picker.label == "Community level"
    order = [getattr(element, "key", None) or getattr(element, "value", None) for element in at.sidebar]
    assert order.index("community_selection") < order.index("community_level") < order.index("Budgets")  # in its place


def test_the_level_picker_does_not_wait_for_its_tokens_while_a_run_streams(run_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graphrag_app.previews import SECTIONS_WAIT_S

    from .apptest_support import app, run_question

    waits: list[tuple[bool, float]] = []
    counting = CostPreviews.level_costs

    def level_costs(self, *args, wait_s: float = SECTIONS_WAIT_S):  # type: ignore[no-untyped-def]
        from graphrag_app.live import ShownRun

        waits.append((ShownRun.get().running, wait_s))
        return counting(self, *args, wait_s=wait_s)

    monkeypatch.setattr(CostPreviews, "level_costs", level_costs)
    at = app({"latency": "0"}).run()
    assert waits and set(waits) == {(False, SECTIONS_WAIT_S)}  # (drawn again once the tokens are in, if they were late)
    run_question(at)
    assert not at.exception
    assert (True, 0) in waits  # the script run that starts the run: its live view is not held up by the sidebar
    assert waits[-1] == (False, SECTIONS_WAIT_S)  # the whole page after the run waits as before


def test_every_search_setting_has_its_widget_on_explore(run_db: Path) -> None:
    from .apptest_support import app

    at = app().run()
    keys = {w.key for w in [*at.selectbox, *at.number_input, *at.radio, *at.checkbox, *at.slider]}
    fixed = {f.name for f in setting_fields()} - {"rating_threshold", "keep_parent", "rating_repeats", "fallback_max_level", "rating_output_reserve", "relevance_budget"}
    assert fixed <= keys and "relevance_budget" not in keys  # the lazy method's budget only under that method
    at.radio(key="community_selection").set_value("dynamic").run()
    keys = {w.key for w in [*at.selectbox, *at.number_input, *at.radio, *at.checkbox, *at.slider]}
    assert {f.name for f in setting_fields()} - {"community_level", "relevance_budget"} <= keys
    at.radio(key="method").set_value("lazy").run()
    assert [w.value for w in at.number_input if w.key == "relevance_budget"] == [GlobalSearchRequest.model_fields["relevance_budget"].default]


# -- one job runner, one follow -------------------------------------------------------------------


def _script(request):  # type: ignore[no-untyped-def]
    if request.purpose == "map":
        return json.dumps({"answer": "Levees hold. [Communities: 1]", "usefulness": 50})
    return json.dumps({"answer": "Levees hold."})


def _run() -> tuple[jobs.Followable, object]:
    request = GlobalSearchRequest(query="How do farmers cope with floods?", seed=1)
    return jobs.start_run(small_index(), request, lambda: ScriptedChatModel(_script), store_path=None, index_name="small"), RunState()


def _sweep() -> tuple[jobs.Followable, object]:
    spec = SweepSpec(query="How do farmers cope with floods?", levels=["leaf", 0], seeds=[1, 2])
    return jobs.start_sweep(small_index(), spec, lambda: ScriptedChatModel(_script)), []


def _evaluation(tmp_path: Path) -> tuple[jobs.Followable, object]:
    spec = ExperimentSpec(
        questions=[EvalQuestion(id="1", question="What matters?")], conditions=[Condition.parse("a:level=0"), Condition.parse("b:level=1")], seeds=[1]
    )
    job = jobs.start_evaluation(
        small_index(), spec, lambda: ScriptedChatModel(_script), lambda: ScriptedChatModel('{"winner": 0}'), eval_store_path=tmp_path / "e.sqlite3", run_store_path=None
    )
    return job, {}


def _questions() -> tuple[jobs.Followable, object]:
    return jobs.start_question_generation(small_index(), OfflineChatModel, personas=1, tasks=1, per_task=2), None


@pytest.mark.parametrize("kind", ["run", "sweep", "evaluation", "questions"])
def test_every_kind_of_job_is_followed_the_one_way_to_its_end(kind: str, tmp_path: Path) -> None:
    job, seen = {"run": _run, "sweep": _sweep, "evaluation": lambda: _evaluation(tmp_path), "questions": _questions}[kind]()
    drawn: list[object] = []
    last = jobs.follow(job, seen, drawn.append, interval=0.01, poll=0.005)
    assert isinstance(job, jobs.JobHandle) and job.done and job.error is None, job.error
    assert drawn and drawn[-1] is last  # the end is always drawn, with what the job made
    if kind == "run":
        assert isinstance(last, RunState) and last.result is not None and last.events == job.events_since(0)  # type: ignore[attr-defined]
    elif kind == "sweep":
        assert len(last) == job.total == 4 and job.result is not None  # type: ignore[arg-type, attr-defined]
    elif kind == "evaluation":
        assert last["judgments"].done == last["judgments"].total > 0 and job.result is not None  # type: ignore[index, attr-defined]
    else:
        assert last is None and job.questions  # type: ignore[attr-defined]


def test_a_job_that_fails_or_is_stopped_says_so() -> None:
    def broken() -> ScriptedChatModel:
        raise RuntimeError("no model here")

    failed = jobs.start_question_generation(small_index(), broken, personas=1, tasks=1, per_task=1)
    jobs.follow(failed, None, lambda _: None, poll=0.005)
    assert failed.error == "no model here" and failed.error_type == "RuntimeError" and not failed.stopped
    assert failed.questions is None and isinstance(failed.failure, RuntimeError)

    async def forever() -> None:
        await asyncio.Event().wait()

    stopped = jobs.JobHandle()
    jobs.start_job(stopped, forever, name="test-forever")
    stopped.request_stop()
    assert stopped.wait(TIMEOUT) and stopped.stopped and stopped.cancelled and stopped.failure is None


def test_evaluate_generates_its_questions_in_a_job_not_on_the_script_thread(run_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[str] = []
    generate = jobs.generate_questions

    async def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return await generate(*args, **kwargs)

    monkeypatch.setattr(jobs, "generate_questions", recorded)
    at = page("evaluate", timeout=120).run()
    at.selectbox(key="eval_index").set_value("zh-tea").run()
    at.radio(key="eval_source").set_value("generate").run()
    at.button(key="eval_generate").click().run()
    assert not at.exception
    assert threads == ["graphrag-questions"]
    assert [f.value for f in at.dataframe if "tags" in f.value.columns]


def test_a_model_check_runs_as_a_job_and_raises_what_the_preflight_found() -> None:
    from graphrag_core.errors import PreflightError
    from graphrag_core.preflight import Preflight
    from graphrag_core.llm.settings import ModelSettings
    from graphrag_core.llm.factory import build_chat_model

    jobs.check_model(OfflineChatModel(), checks=Preflight())  # nothing to check
    unreachable = build_chat_model(ModelSettings.from_mapping({"GRAPHRAG_LLM_PROVIDER": "openai", "GRAPHRAG_LLM_BASE_URL": "http://127.0.0.1:9/v1"}))
    with pytest.raises(PreflightError, match="127.0.0.1:9"):
        jobs.check_model(unreachable, checks=Preflight())


# -- the drill-down, seen from the row -----------------------------------------------------------


def test_a_drill_down_is_seen_from_the_row_whichever_way_the_pair_was_judged() -> None:
    spec = ExperimentSpec(
        questions=[EvalQuestion(id="1", question="q?")], conditions=[Condition.parse("C0:level=0"), Condition.parse("C2:level=2")], seeds=[1], criteria=["diversity"]
    )
    result = asyncio.run(run_experiment(small_index(), spec, ScriptedChatModel(_answers_by_level), ScriptedChatModel(_longer_wins)))
    stored = drilldown(result, "C0", "C2", choice=0, criterion="diversity")
    flipped = drilldown(result, "C2", "C0", choice=0, criterion="diversity")
    assert stored is not None and flipped is not None and stored.judged
    assert (stored.row.condition, stored.col.condition) == ("C0", "C2") == (flipped.col.condition, flipped.row.condition)
    assert (stored.row.score, stored.col.score) == (0.0, 100.0) == (flipped.col.score, flipped.row.score)  # C2's longer answer wins
    assert stored.row.answer is flipped.col.answer and stored.row.answer is not None
    assert {call.winner for call in stored.calls} == {"C2"} and {call.shown_first for call in stored.calls} == {"C0", "C2"}
    assert drilldown_choices(result, "C2", "C0") == ["1 · seeds 1/1 · q?"]
    assert drilldown(result, "C0", "C0", criterion="diversity") is None and nothing_judged("C0", "C0").endswith("(A/A needs two seeds.)")


# -- objects the app holds once -------------------------------------------------------------------


def test_cost_previews_keep_the_newest_requests_and_move_a_repeated_one_up() -> None:
    previews = CostPreviews(preview_entries=2, section_entries=1)
    index = small_index()
    requests = [GlobalSearchRequest(query="q", seed=1, map_token_budget=budget) for budget in (3000, 4000, 5000)]
    first = previews.preview_future(index, "small", 0, requests[0])
    second = previews.preview_future(index, "small", 0, requests[1])
    assert previews.preview_future(index, "small", 0, GlobalSearchRequest(query="q", seed=1, map_token_budget=3000)) is first  # asked again (an equal request): the newest now
    previews.preview_future(index, "small", 0, requests[2])  # drops the least recently asked
    assert previews.preview_future(index, "small", 0, requests[0]) is first
    assert previews.preview_future(index, "small", 0, requests[1]) is not second
    sections = previews.sections_future(index, "small", 0, "heuristic")
    assert previews.sections_future(index, "small", 0, "heuristic") is sections
    previews.sections_future(index, "other", 0, "heuristic")  # one kept: the oldest goes
    assert previews.sections_future(index, "small", 0, "heuristic") is not sections
    assert previews.settle(TIMEOUT) and first.result().batches > 0


def test_each_level_s_sections_are_counted_once_per_index_and_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new session draws a new seed, so the level picker's costs are planned again; the
    sections (independent of seed and budgets) are not counted again."""
    from graphrag_app import previews as loaders
    from graphrag_core.cost import level_costs

    counted: list[str] = []
    count_sections = loaders._compute_sections
    monkeypatch.setattr(loaders, "_compute_sections", lambda index, name: counted.append(name) or count_sections(index, name))
    previews, index = CostPreviews(), small_index()
    request = GlobalSearchRequest(query="q", seed=1, map_token_budget=3000)
    by_seed = {seed: previews.levels_future(index, "small", 0, request.model_copy(update={"seed": seed})).result(TIMEOUT) for seed in (1, 2, 3)}
    assert counted == ["heuristic"]
    assert previews.sections_future(index, "small", 0, "heuristic").result(TIMEOUT) == count_sections(index, "heuristic") and counted == ["heuristic"]
    for seed, costs in by_seed.items():  # the same figures as counting everything afresh
        assert list(costs.values()) == level_costs(index, request, seed=seed)


def test_a_page_state_is_one_typed_object_under_one_key() -> None:
    def script() -> None:
        import streamlit as st

        from graphrag_app.explore.state import ExploreState
        from graphrag_app.sweeps.state import SweepsState

        if "stale" not in st.session_state:
            st.session_state["stale"] = True
            st.session_state[SweepsState.KEY] = "left by an older version of the app"
        sweeps = SweepsState.get()
        assert SweepsState.get() is sweeps and ExploreState.get() is not sweeps
        sweeps.ended_early = (sweeps.ended_early or "") + "x"
        st.text(f"{type(st.session_state[SweepsState.KEY]).__name__} {sweeps.ended_early} {sweeps.running}")

    at = AppTest.from_function(script).run()
    assert [t.value for t in at.text] == ["SweepsState x False"]
    at.run()
    assert [t.value for t in at.text] == ["SweepsState xx False"]


def test_a_page_run_before_any_navigation_declares_it_and_reruns(run_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold deep link: Streamlit's pages-directory mode runs a page file alone until
    ``st.navigation`` is called in the process; the page declares the app's navigation and
    reruns (public API only), after which ``app.py`` serves the URL."""
    from graphrag_app import navigation

    fresh = navigation.AppNavigation()
    monkeypatch.setattr(navigation, "app_navigation", lambda: fresh)
    assert not fresh.declared
    at = page("compare").run()
    assert not at.exception and fresh.declared
    assert "Compare runs" in [t.value for t in at.title]


def test_a_link_tables_links_name_their_pages_and_parameters() -> None:
    from graphrag_app.navigation import page_file
    from graphrag_app.panels.link_tables import destination, plain_number
    from graphrag_app.urls import provenance_url, record_url, run_url

    assert destination(provenance_url("jargon", "12", "r1")) == ("pages/provenance.py", {"index": "jargon", "community": "12", "run": "r1"})
    assert destination(record_url("folder/x", "entity", "10")) == ("pages/provenance.py", {"index": "folder/x", "entity": "10"})
    assert destination(run_url("abc")) == ("pages/explore.py", {"run": "abc"})
    assert page_file("provenance") == "pages/provenance.py"
    assert [plain_number(v) for v in (0.18, 2.0, 1234.56789, float("nan"))] == ["0.18", "2", "1,234.5679", ""]
