"""The app's pages under ``streamlit.testing.v1.AppTest``, plus its streamlit-free modules.

Runs use the offline model (no network). Every test gets its own run history (``run_db``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from graphrag_app.explore import charts
from graphrag_app.jobs import fold_new, follow, start_run
from graphrag_app.settings import PRESENTATION_LATENCY_S, offline_latency_s, settings_from_mapping
from graphrag_app.urls import (
    RunSettings,
    from_query_params,
    ignored_notice,
    level_notice,
    provenance_url,
    to_query_params,
)
from graphrag_core.events import (
    BatchesPlanned,
    MapBatchStarted,
    MapBatchSucceeded,
    PlannedBatch,
    RunStarted,
)
from graphrag_core.index import load_index, save_index
from graphrag_core.llm.settings import ModelChoice
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.models import Community, Index
from graphrag_core.request import FRONT_END_QUESTION_RESERVE, GlobalSearchRequest, SearchSettings
from graphrag_core.samples import sample_path, sample_question
from graphrag_core.state import RunState
from graphrag_core.history import RunStore
from graphrag_core.tokens import TOKENIZER_NAMES

from . import wait_until
from .apptest_support import QUESTION, TIMEOUT, app, messages, metrics, provenance, run_question, stored_run, texts
from .apptest_support import page as app_page
from .factories import small_index

HANG_GUARD_S = 900
"""The script-run limit of a test whose run is long by design: a hang guard, not a speed check."""


# -- Explore ----------------------------------------------------------------------------------


def test_explore_opens_on_the_sample_with_every_setting_and_a_cost_preview(run_db: Path) -> None:
    at = app().run()
    assert not at.exception
    assert at.selectbox(key="index").value == "jargon"
    labels = {w.label for w in [*at.selectbox, *at.number_input, *at.radio, *at.checkbox, *at.text_area]}
    assert {
        "Index",
        "Community level",
        "Map token budget",
        "Reduce token budget",
        "Map output reserve",
        "Reduce output reserve",
        "Map concurrency",
        "Seed",
        "Reduce strategy",
        "Include claims",
        "Include source excerpts",
        "Tokenizer",
        "Model",
        "Question",
    } <= labels
    level = at.selectbox(key="community_level")
    assert level.value == "leaf" and "summaries" in level.format_func("leaf")
    shown = metrics(at)
    assert int(shown["Summaries"]) > 0 and int(shown["Batches"]) > 0
    assert int(shown["Model calls"]) == int(shown["Batches"]) + 1
    assert {b.label for b in at.button} >= {"Run global search", "Stop", "New seed"}
    assert at.button(key="stop").disabled


def test_explore_starts_with_the_sample_question_and_runs_it_on_the_first_click(run_db: Path) -> None:
    at = app().run()
    assert at.text_area(key="question").value == sample_question("jargon")
    at.button(key="run_global_search").click()
    at = at.run()
    assert not at.exception and not messages(at, "error")
    assert "Status: completed" in texts(at)
    scripts = [element for element in at.get("html") if "scrollIntoView" in str(element.proto)]
    assert len(scripts) == 1, "the answer is scrolled into view once, when it arrives"
    at = at.run()  # a later rerun (a changed widget) does not scroll again
    assert not [element for element in at.get("html") if "scrollIntoView" in str(element.proto)]


def test_the_app_paces_the_offline_model_unless_configured(run_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert offline_latency_s(settings_from_mapping({})) == PRESENTATION_LATENCY_S > 0
    assert offline_latency_s(settings_from_mapping({"GRAPHRAG_LLM_OFFLINE_LATENCY": "0"})) == 0
    assert offline_latency_s(settings_from_mapping({"GRAPHRAG_LLM_OFFLINE_LATENCY": "1,2"})) == 1.5
    assert app().run().number_input(key="latency_s").value == 0  # run_db turns the pace off for tests
    monkeypatch.delenv("GRAPHRAG_LLM_OFFLINE_LATENCY")
    at = app().run()
    assert at.number_input(key="latency_s").value == PRESENTATION_LATENCY_S
    assert at.query_params["latency"] == f"{PRESENTATION_LATENCY_S:g}"
    assert to_query_params(RunSettings(index="jargon", model=ModelChoice(provider="offline", offline_latency_s=0.0)))["latency"] == "0"  # a link keeps "no pace"


def test_new_seed_draws_another_seed_and_the_preview_follows_the_settings(run_db: Path) -> None:
    at = app().run()
    seed = at.number_input(key="seed").value
    at.button(key="new_seed").click().run()
    assert at.number_input(key="seed").value != seed
    before = metrics(at)
    at.selectbox(key="community_level").select("0").run()
    after = metrics(at)
    assert after["Summaries"] != before["Summaries"]


def test_a_run_shows_status_answer_community_links_and_lands_in_url_and_history(run_db: Path) -> None:
    at = run_question(app().run())
    assert not at.exception
    assert "Status: completed" in texts(at)
    assert "Answer" in [h.value for h in at.subheader]
    run_id = at.query_params["run"]
    # the answer's citations are links to their communities' provenance views for this run
    answer = next(m.value for m in at.markdown if "](provenance?" in m.value)
    assert f"&run={run_id}" in answer and "community=" in answer
    assert at.query_params["q"] == QUESTION and at.query_params["seed"] == str(at.number_input(key="seed").value)
    record = RunStore(run_db).get(run_id)
    assert record is not None and record.status == "completed"


def test_a_rerun_changing_only_reduce_settings_is_answered_from_the_map_cache(run_db: Path) -> None:
    at = run_question(app().run())
    first = RunStore(run_db).get(at.query_params["run"])
    assert first is not None and first.result is not None
    assert first.result.diagnostics.map_calls == first.result.diagnostics.batch_count > 0

    at.radio(key="reduce_strategy").set_value("stop")
    at.button(key="run_global_search").click()
    at = at.run()
    second = RunStore(run_db).get(at.query_params["run"])
    assert second is not None and second.result is not None and second.run_id != first.run_id
    assert second.result.diagnostics.map_calls == 0
    assert second.result.diagnostics.cache_hits == second.result.diagnostics.batch_count
    assert metrics(at)["Map cache hits"] == str(second.result.diagnostics.batch_count)

    at.checkbox(key="use_map_cache").uncheck()
    at.button(key="run_global_search").click()
    at = at.run()
    third = RunStore(run_db).get(at.query_params["run"])
    assert third is not None and third.result is not None
    assert third.result.diagnostics.map_calls == third.result.diagnostics.batch_count
    assert third.result.diagnostics.cache_hits == 0


def test_budget_errors_are_shown_in_the_preview_instead_of_crashing(run_db: Path) -> None:
    at = app().run()
    at.number_input(key="map_output_reserve").set_value(0)
    at.number_input(key="map_token_budget").set_value(50).run()
    assert not at.exception
    assert any("Map token budget cannot fit the Map prompt." in m for m in messages(at, "error"))
    at.number_input(key="map_token_budget").set_value(8000)
    at.number_input(key="reduce_output_reserve").set_value(9000).run()
    assert any("Token budgets must exceed their output reserves." in m for m in messages(at, "error"))
    run_question(at)
    assert not at.exception
    assert any("Token budgets must exceed their output reserves." in m for m in messages(at, "error"))


def test_empty_question_is_refused_with_the_spec_message(run_db: Path) -> None:
    at = app().run()
    at.text_area(key="question").input("").run()  # the box starts with the sample's question
    at.button(key="run_global_search").click().run()
    assert any("Global retrieval query must not be empty." in m for m in messages(at, "error"))


def test_a_folder_that_is_not_an_index_gives_a_message_and_the_page_keeps_working(run_db: Path, tmp_path: Path) -> None:
    at = app().run()
    at.selectbox(key="index").select("__folder__").run()
    (tmp_path / "empty").mkdir()
    at.text_input(key="index_folder").input(str(tmp_path / "empty")).run()
    assert not at.exception
    assert any("not an index folder" in m or "not a readable index" in m for m in messages(at, "error"))
    at.number_input(key="map_concurrency").set_value(3).run()  # the rest of the page still works
    assert not at.exception
    at.selectbox(key="index").select("jargon").run()
    assert not messages(at, "error")


def test_a_native_index_folder_opens_and_runs(run_db: Path, small_index_dir: Path) -> None:
    at = app().run()
    at.selectbox(key="index").select("__folder__").run()
    at.text_input(key="index_folder").input(str(small_index_dir)).run()
    assert not messages(at, "error")
    assert at.query_params["index"] == str(small_index_dir)
    run_question(at)
    assert "Status: completed" in texts(at) or "Status: no_results" in texts(at)


def test_allowed_roots_limit_which_folders_open(run_db: Path, small_index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    monkeypatch.setenv("GRAPHRAG_EXPLORER_ALLOWED_ROOTS", str(allowed))
    at = app().run()
    at.selectbox(key="index").select("__folder__").run()
    at.text_input(key="index_folder").input(str(small_index_dir)).run()
    assert any("outside the folders this app may open" in m for m in messages(at, "error"))
    inside = allowed / "small"
    save_index(small_index(), inside)
    at.text_input(key="index_folder").input(str(inside)).run()
    assert not messages(at, "error")


def test_url_parameters_set_the_widgets(run_db: Path) -> None:
    at = app(
        {"q": "Who is RMS?", "level": "1", "seed": "7", "strategy": "stop", "claims": "0", "map_budget": "6000", "tokenizer": "heuristic", "level_bogus": "x"}
    ).run()
    assert at.text_area(key="question").value == "Who is RMS?"
    assert at.selectbox(key="community_level").value == "1"
    assert at.number_input(key="seed").value == 7
    assert at.radio(key="reduce_strategy").value == "stop"
    assert at.checkbox(key="include_claims").value is False
    assert at.number_input(key="map_token_budget").value == 6000


@pytest.mark.parametrize(
    ("query_params", "named"),
    [
        pytest.param({"seed": "-3", "strategy": "sideways"}, ("seed", "strategy"), id="bad-values"),
        pytest.param({"level": "999", "map_budget": "99999999999999999999"}, ("level='999'", "map_budget="), id="out-of-range"),
        pytest.param({"selection": "smart", "rating_threshold": "9"}, ("selection", "rating_threshold"), id="dynamic-settings"),
    ],
)
def test_a_bad_url_value_is_ignored_with_a_notice(run_db: Path, query_params: dict[str, str], named: tuple[str, ...]) -> None:
    at = app(query_params).run()
    assert not at.exception
    notes = messages(at, "info")
    for name in named:
        assert any(name in n for n in notes), name
    assert at.radio(key="community_selection").value == "level"
    assert at.selectbox(key="community_level").value == "leaf"


def test_a_url_notice_stays_when_the_page_draws_itself_again(run_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a busy machine the level picker is drawn before its tokens are counted, and the page
    draws itself again once they are: the URL's notices stay on it (they are the reader's only
    word on why the link's values were not used)."""
    from graphrag_app.previews import CostPreviews

    counted, computed = CostPreviews.level_costs, CostPreviews.levels_future
    asked: list[bool] = []

    def not_yet_the_first_time(self: CostPreviews, *args: object, **kwargs: object) -> object:
        asked.append(True)
        return None if len(asked) == 1 else counted(self, *args, **kwargs)

    def counted_by_the_preview(self: CostPreviews, *args: object) -> object:
        future = computed(self, *args)  # type: ignore[arg-type]
        future.result()  # ready when the preview is drawn
        return future

    monkeypatch.setattr(CostPreviews, "level_costs", not_yet_the_first_time)
    monkeypatch.setattr(CostPreviews, "levels_future", counted_by_the_preview)
    at = app({"selection": "smart", "seed": "-3"}).run()
    assert not at.exception
    assert len(asked) >= 2, "the page did not draw itself again with the levels' tokens"
    notes = messages(at, "info")
    for name in ("selection", "seed"):
        assert any(name in n for n in notes), (name, notes)
    at.text_area(key="question").input("Who is RMS?").run()  # the reader acts: the notices have been read
    assert not any("Ignored the URL parameter" in n for n in messages(at, "info"))


def test_a_stored_run_reopens_from_the_url_with_no_model(run_db: Path) -> None:
    run_id = stored_run(run_db)
    at = app()
    at.query_params["run"] = run_id
    at.run()
    assert not at.exception
    assert "Status: completed" in texts(at)
    assert at.number_input(key="seed").value == 7
    assert at.text_area(key="question").value == QUESTION


def test_recent_runs_lists_runs_and_opens_one(run_db: Path) -> None:
    run_id = stored_run(run_db)
    at = app().run()
    assert any(QUESTION.replace("?", "") in m.value.replace("\\", "") for m in at.markdown)
    at.button(key=f"open-{run_id}").click().run()
    assert "Status: completed" in texts(at)
    assert at.query_params["run"] == run_id


def test_a_missing_run_in_the_url_is_a_notice(run_db: Path) -> None:
    at = app()
    at.query_params["run"] = "no-such-run"
    at.run()
    assert not at.exception
    assert any("not in this app's run history" in m for m in messages(at, "info"))


# -- Provenance ---------------------------------------------------------------------------------


def test_provenance_shows_community_path_summary_claims_sources_and_run_use(run_db: Path) -> None:
    run_id = stored_run(run_db)
    record = RunStore(run_db).get(run_id)
    assert record is not None and record.result is not None
    community_id = record.result.community_ids[0]
    at = provenance({"index": "jargon", "community": community_id, "run": run_id})
    assert not at.exception
    index = load_index(sample_path("jargon"))
    community = index.community(community_id)
    assert any(community_id in h.value for h in at.header)
    shown = texts(at)
    assert community.summary in shown
    assert any(h.value.startswith("Claims from leaf descendants") for h in at.subheader)
    claims = index.leaf_claims(community_id)
    if claims:
        chunk = index.claim_chunks(claims[0])[0]
        assert chunk.text in shown
    assert "In this run" in [h.value for h in at.subheader]
    assert any("used by the reduce" in m.value for m in at.markdown)
    if community.parent_id is not None:
        assert any("Path to the root" in m.value for m in at.markdown)


def test_provenance_of_an_unknown_community_or_index_is_a_message(run_db: Path) -> None:
    at = provenance({"index": "jargon", "community": "no-such-community"})
    assert not at.exception
    assert any("No community" in m for m in messages(at, "error"))
    at = provenance({"index": "/no/such/folder", "community": "1"})
    assert not at.exception
    assert messages(at, "error")


def test_index_text_is_shown_as_text_not_html(run_db: Path, tmp_path: Path) -> None:
    hostile = "<img src=x onerror=alert(1)> **bold** [link](javascript:alert(1))"
    index = Index(communities=(Community(id="1", level=0, title="<b>Title</b>", summary=hostile),))
    save_index(index, tmp_path / "hostile")
    at = provenance({"index": str(tmp_path / "hostile"), "community": "1"})
    assert not at.exception
    assert hostile in texts(at)
    for markdown in at.markdown:
        assert "<img" not in markdown.value and "<b>" not in markdown.value
    assert all("<b>" not in h.value for h in at.header)


# -- streamlit-free modules -----------------------------------------------------------------------


def test_settings_round_trip_through_query_params() -> None:
    settings = RunSettings(
        index="jargon",
        query="a & b?",
        model=ModelChoice(provider="offline", offline_latency_s=0.5),
        search=SearchSettings(community_level=2, reduce_strategy="stop", include_sources=False, seed=11),
    )
    params = to_query_params(settings, run_id="abc")
    assert params["run"] == "abc"
    decoded, problems = from_query_params(params, base=RunSettings())
    assert decoded == settings and not problems
    assert provenance_url("jargon", "12", "r1") == "provenance?index=jargon&community=12&run=r1"


def test_app_settings_read_store_path_roots_and_model(tmp_path: Path) -> None:
    settings = settings_from_mapping(
        {"GRAPHRAG_EXPLORER_DB": str(tmp_path / "x.sqlite3"), "GRAPHRAG_EXPLORER_ALLOWED_ROOTS": "", "GRAPHRAG_LLM_PROVIDER": "bogus"}
    )
    assert settings.store_path == tmp_path / "x.sqlite3"
    assert settings.allowed_roots == ()
    assert settings.model.provider == "offline" and settings.model_error
    assert settings_from_mapping({}).allowed_roots is None


class _GatedModel:
    """The offline model for the first ``open_calls`` calls; every later call waits until it is
    cancelled, so a test can stop a run in the middle without timing it."""

    identity = "gated-offline"

    def __init__(self, open_calls: int) -> None:
        self.inner, self.open_calls, self.calls = OfflineChatModel(), open_calls, 0

    async def complete(self, request):
        self.calls += 1
        if self.calls > self.open_calls:
            await asyncio.Event().wait()  # never set: only cancellation ends this call
        return await self.inner.complete(request)


def test_stop_cancels_a_slow_run_and_saves_it_as_cancelled(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    index = load_index(sample_path("jargon"))
    request = GlobalSearchRequest(query=QUESTION, seed=3, map_concurrency=2)
    handle = start_run(index, request, lambda: _GatedModel(open_calls=2), store_path=db, index_name="jargon")
    wait_until(lambda: sum(e.kind == "map_batch_succeeded" for e in handle.events_since(0)) >= 2, "two finished batches")
    handle.request_stop()
    assert handle.wait(10)
    state = follow(handle, RunState(), lambda _s: None)
    assert state.status == "cancelled"
    assert 0 < state.finished_batches < len(state.batches)
    record = RunStore(db).get(handle.run_id)
    assert record is not None and record.status == "cancelled"


class _DripHandle:
    """A finished run's events, released a few at a time, like a run in progress."""

    def __init__(self, events: list, per_poll: int) -> None:
        self.events, self.per_poll, self.released = events, per_poll, 0

    @property
    def done(self) -> bool:
        return self.released >= len(self.events)

    def events_since(self, start: int) -> list:
        self.released = min(len(self.events), self.released + self.per_poll)
        return self.events[start : self.released]

    def elapsed(self) -> float:
        return self.events[self.released - 1].at if self.released else 0.0

    def progress(self, state: RunState) -> RunState:
        return fold_new(self, state)


def _thousand_batch_events() -> list:
    request = GlobalSearchRequest(query="q", seed=1)
    events: list = [RunStarted(run_id="r", request=request, seed=1, model="m", tokenizer="heuristic")]
    batches = tuple(PlannedBatch(index=i, community_ids=(str(i),), token_estimate=100) for i in range(1000))
    events.append(BatchesPlanned(batches=batches, map_prompt_budget=7488, concurrency=8))
    for i in range(1000):
        events.append(MapBatchStarted(at=i * 0.01, batch_index=i, attempt=1))
        events.append(MapBatchSucceeded(at=i * 0.01 + 0.05, batch_index=i, answer="a", usefulness=i % 100, attempt=1, duration_s=0.05))
    return events


def test_redraws_are_throttled_with_a_thousand_batches() -> None:
    clock = [0.0]
    renders: list[int] = []
    handle = _DripHandle(_thousand_batch_events(), per_poll=10)
    state = follow(
        handle,
        RunState(),
        lambda s: renders.append(s.finished_batches),
        interval=0.3,
        poll=0.05,
        sleep=lambda s: clock.__setitem__(0, clock[0] + s),
        clock=lambda: clock[0],
    )
    polls = len(handle.events) // 10
    assert len(renders) <= polls * 0.05 / 0.3 + 2
    assert renders[-1] == 1000 and state.finished_batches == 1000


def test_charts_draw_a_thousand_batches() -> None:
    # how long this takes is measured by benchmarks/bench_charts.py, not asserted here
    state = RunState.replay(_thousand_batch_events())
    figures = [charts.usefulness_figure(state), charts.timeline_figure(state), charts.reduce_figure(state)]
    assert sum(len(trace.x) for trace in figures[0].data) == 1000
    lanes = charts.call_lanes(state.calls, state.elapsed_s)
    assert max(lanes) + 1 <= 8


def test_an_unreachable_model_is_refused_up_front_with_one_readable_error(run_db: Path) -> None:
    # issue 16: an unreachable endpoint used to cost every batch's attempts before "Every Global
    # Map batch failed."; the run is now refused before it starts, with one message naming it
    at = app({"q": QUESTION, "model": "openai", "base_url": "http://127.0.0.1:9/v1", "llm": "test-model", "level": "0"}).run()
    at.button(key="run_global_search").click().run()
    assert not at.exception
    shown = texts(at) + messages(at, "error")
    refused = [t for t in shown if "The model endpoint http://127.0.0.1:9/v1 cannot be reached" in t]
    assert len(refused) == 1
    assert "Every Global Map batch failed." not in shown
    assert at.selectbox(key="index").value == "jargon"  # the rest of the page still works
    assert "run" not in at.query_params and len(RunStore(run_db)) == 0  # nothing ran, nothing recorded


def test_a_thousand_batch_run_completes(run_db: Path) -> None:
    at = app({"q": QUESTION, "map_budget": "700", "map_reserve": "0", "seed": "5"}).run()
    assert int(metrics(at)["Batches"].replace(",", "")) >= 1000  # shown as 1,147
    # The page follows the run until it ends, so the script run lasts as long as the run: the
    # timeout only guards against a hang (its duration is measured by benchmarks/bench_charts.py,
    # not bounded here; the default 60 s failed on a loaded machine in any test order).
    at.button(key="run_global_search").click().run(timeout=HANG_GUARD_S)
    assert "Status: completed" in texts(at)


def test_url_values_out_of_range_are_ignored_with_a_notice() -> None:
    base = RunSettings(search=SearchSettings(map_token_budget=7000))
    decoded, problems = from_query_params(
        {"map_budget": "99999999999999999999", "concurrency": "1000000", "seed": str(2**40), "map_reserve": "x"}, base=base
    )
    assert decoded == base
    assert len(problems) == 4
    assert any("map_budget='99999999999999999999'" in p and "at most" in p for p in problems)
    assert any("concurrency='1000000'" in p for p in problems)
    decoded, problems = from_query_params({"level": "2", "tokenizer": "nope", "strategy": "stop"}, base=base)
    assert decoded.search.community_level == 2 and decoded.search.reduce_strategy == "stop" and decoded.search.tokenizer == base.search.tokenizer
    assert problems == [ignored_notice("tokenizer", "nope", "tokenizer must be one of " + ", ".join(TOKENIZER_NAMES))]


def test_the_seed_is_linked_and_drawn_from_its_field_with_the_one_range() -> None:
    from graphrag_app.urls import setting_fields
    from graphrag_core.request import SEED_MAX

    seed = next(f for f in setting_fields() if f.name == "seed")
    assert (seed.param, seed.kind, seed.low, seed.high, seed.scale) == ("seed", "int", 0, SEED_MAX, False)
    settings, problems = from_query_params({"seed": str(SEED_MAX)}, base=RunSettings())
    assert settings.seed == SEED_MAX and not problems and to_query_params(settings)["seed"] == str(SEED_MAX)
    for raw in ("-1", str(SEED_MAX + 1)):
        kept, problems = from_query_params({"seed": raw}, base=RunSettings(search=SearchSettings(seed=4)))
        assert kept.seed == 4 and problems == [ignored_notice("seed", raw, f"seed must be between 0 and {SEED_MAX}, not {raw}")]
    assert "seed" not in to_query_params(RunSettings())  # no seed yet: the run draws one


def test_run_settings_are_a_view_of_the_search_settings() -> None:
    defaults = SearchSettings.for_front_ends()  # the app keeps 256 tokens for the question (issue 26)
    settings = RunSettings()
    assert settings.search.model_dump() == defaults.model_dump()
    request = GlobalSearchRequest(query="q", community_level=2, map_concurrency=3, include_sources=False, seed=5)
    again = RunSettings.from_request(request, index="jargon", seed=None, base=settings).to_request()
    assert again == request


def test_a_url_level_the_index_lacks_is_ignored_with_a_notice() -> None:
    assert level_notice({"level": "999"}, [0, 1, "leaf"]) == (
        "Ignored the URL parameter level='999': not a valid community level (this index has the levels 0, 1, leaf)."
    )
    assert level_notice({"level": "1"}, [0, 1, "leaf"]) is None
    assert level_notice({"level": "leaf"}, [0, "leaf"]) is None
    assert level_notice({}, [0, "leaf"]) is None


def test_a_sweep_runs_as_a_background_job_and_stop_keeps_the_finished_points(tmp_path: Path) -> None:
    from graphrag_app.jobs import SweepHandle, start_sweep
    from graphrag_core.llm.base import ChatRequest, ChatResponse
    from graphrag_core.sweep import SweepSpec

    reduces = 0

    class SecondReduceHangs:
        identity = "test:hangs"

        async def complete(self, request: ChatRequest) -> ChatResponse:
            nonlocal reduces
            if request.purpose == "map":
                return ChatResponse(text='{"answer": "Levees hold. [Communities: 1]", "usefulness": 50}')
            reduces += 1
            if reduces > 1:
                await asyncio.Event().wait()  # until Stop cancels it
            return ChatResponse(text='{"answer": "Levees hold."}')

    spec = SweepSpec(query="How do farmers cope with floods?", levels=["leaf"], seeds=[1, 2, 3], point_concurrency=1)
    handle = start_sweep(small_index(), spec, SecondReduceHangs, store_path=tmp_path / "runs.sqlite3")
    assert isinstance(handle, SweepHandle) and handle.total == 3
    for _ in range(400):  # poll until the first point is in (no timing is asserted)
        if handle.points() or handle.done:
            break
        handle.wait(0.05)
    assert len(handle.points()) == 1 and not handle.done
    handle.request_stop()
    assert handle.wait(10) and handle.stopped
    assert handle.result is not None and [p.seed for p in handle.result.points] == [1]
    assert handle.result.sweep_id == handle.sweep_id
    assert len(RunStore(tmp_path / "runs.sqlite3")) >= 1  # the finished point's run is saved


def test_the_preview_says_where_tokens_come_from_and_what_they_cost(run_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHRAG_LLM_PRICE_PROMPT", "0.15")
    monkeypatch.setenv("GRAPHRAG_LLM_PRICE_COMPLETION", "0.60")
    at = app().run()
    level = at.selectbox(key="community_level")
    assert all("tokens" in option for option in level.options)  # each level's cost shows in the picker
    assert level.help and at.number_input(key="map_token_budget").help and at.selectbox(key="tokenizer").help
    captions = [c.value for c in at.caption]
    assert any("Where the map tokens come from at this level: summaries" in c for c in captions)
    assert any("Cost at the configured price" in c for c in captions)
    at.checkbox(key="include_claims").uncheck().run()
    assert any("claims off (would add" in c for c in (c.value for c in at.caption))


def test_the_sample_question_follows_the_sample_until_the_user_writes_one(run_db: Path) -> None:
    at = app().run()
    at.selectbox(key="index").select("zh-tea").run()
    assert at.text_area(key="question").value == sample_question("zh-tea")
    at.text_area(key="question").input("Who wrote the Cha Jing?").run()
    at.selectbox(key="index").select("jargon").run()
    assert at.text_area(key="question").value == "Who wrote the Cha Jing?"


def test_a_folder_index_is_not_asked_the_jargon_samples_question(run_db: Path, small_index_dir: Path) -> None:
    from graphrag_core.samples import GENERIC_QUESTION

    at = app().run()
    assert at.text_area(key="question").value == sample_question("jargon")
    at.selectbox(key="index").select("__folder__").run()
    at.text_input(key="index_folder").input(str(small_index_dir)).run()
    assert at.text_area(key="question").value == GENERIC_QUESTION
    at.selectbox(key="index").select("zh-tea").run()
    assert at.text_area(key="question").value == sample_question("zh-tea")  # still untouched: it follows on

    sweeps = app_page("sweeps").run()
    assert sweeps.text_input(key="sweep_question").value == sample_question("jargon")
    sweeps.selectbox(key="sweep_index").select("__folder__").run()
    sweeps.text_input(key="sweep_folder").input(str(small_index_dir)).run()
    assert sweeps.text_input(key="sweep_question").value == GENERIC_QUESTION


def test_recent_runs_lists_the_open_indexs_runs_and_hides_evaluation_runs(run_db: Path) -> None:
    from .factories import sample_run

    store = RunStore(run_db)
    mine = sample_run(GlobalSearchRequest(query="Who are the wizards?", seed=1, community_level=0))
    tea = sample_run(GlobalSearchRequest(query="茶是什么？", seed=1, community_level=0), sample="zh-tea")
    judged = sample_run(GlobalSearchRequest(query="What is a kludge?", seed=1, community_level=0), label="eval 1a2b3c4d · C0 · q1 · seed 1")
    for record in (mine, tea, judged):
        store.save(record)
    at = app().run()
    listed = [m.value for m in at.markdown if "status:" in m.value]
    assert len(listed) == 1 and "Who are the wizards?" in listed[0]
    caption = next(c.value for c in at.caption if c.value.startswith("Runs on "))
    assert "1 run on other indexes is not listed" in caption and "1 evaluation run hidden" in caption
    at.toggle(key="recent_show_evaluation_runs").set_value(True).run()
    listed = [m.value for m in at.markdown if "status:" in m.value]
    assert len(listed) == 2 and any("What is a kludge?" in m and "*evaluation run*" in m for m in listed)
    at.selectbox(key="index").select("zh-tea").run()
    listed = [m.value for m in at.markdown if "status:" in m.value]
    assert len(listed) == 1 and "茶是什么？" in listed[0]


def test_the_level_picker_and_the_cost_preview_give_one_estimate(run_db: Path) -> None:
    """The picker said "≈496k tokens" (the map texts alone) while the preview said 515,735 (the
    prompts the map sends) for the same level: both now show the map prompt tokens."""
    from graphrag_app.text import short_count
    from graphrag_app.previews import cost_previews
    from graphrag_core.cost import map_cost

    at = app({"level": "1", "seed": "3", "map_budget": "6000"}).run()
    assert cost_previews().settle(TIMEOUT)
    at.run()
    shown = int(metrics(at)["Est. map prompt tokens"].replace(",", ""))
    request = GlobalSearchRequest(  # the app keeps 256 tokens for the question (issue 26)
        query=sample_question("jargon"), community_level=1, seed=3, map_token_budget=6000, question_reserve=FRONT_END_QUESTION_RESERVE
    )
    assert shown == map_cost(load_index(sample_path("jargon")), request, seed=3).map_prompt_tokens
    options = at.selectbox(key="community_level").options
    label = next(o for o in options if o.startswith("level 1 ·"))
    assert f"≈{short_count(shown)} tokens" in label, (label, shown)
    at.checkbox(key="include_sources").uncheck().run()  # fewer tokens: both follow
    assert cost_previews().settle(TIMEOUT)
    at.run()
    fewer = int(metrics(at)["Est. map prompt tokens"].replace(",", ""))
    label = next(o for o in at.selectbox(key="community_level").options if o.startswith("level 1 ·"))
    assert fewer < shown and f"≈{short_count(fewer)} tokens" in label
    where = next(c.value for c in at.caption if c.value.startswith("Where the map tokens come from"))
    assert "the map prompt and part headers of" in where
