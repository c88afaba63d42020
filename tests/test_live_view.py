"""The live view's parts without a browser: replays at a speed, the runs a reload attaches to, a
fresh run, a stopped run answering from what it read, what the cache would answer, and the
Explore page driving them under AppTest (which has no browser to tick the live view, so its
script follows a run or a replay to the end)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from graphrag_app.explore import charts
from graphrag_app.jobs import FreshCache
from graphrag_app.explore.views import cache_line
from graphrag_app.jobs import follow
from graphrag_app.live import LiveRuns, replay_run, start_partial_answer
from graphrag_app.previews import CostPreviews
from graphrag_app.live import ShownRun
from graphrag_app.urls import RunSettings, replay_speed, to_query_params
from graphrag_core.cache import MemoryMapCache, SqliteMapCache
from graphrag_core.history import RunStore
from graphrag_core.index import load_index
from graphrag_core.llm.base import model_identity
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.samples import sample_path
from graphrag_core.search import retrieve_global
from graphrag_core.state import RunState
from graphrag_core.status import RunStatus

import pytest

from . import wait_until
from .apptest_support import QUESTION, app, stored_run, texts
from .factories import sample_run
from .test_partial_answer import SMALL_BATCHES, gated

TIMEOUT = 60


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_replay_releases_a_runs_events_at_their_recorded_times_scaled_by_its_speed() -> None:
    record = sample_run(GlobalSearchRequest(query=QUESTION, seed=7, community_level=1))
    clock = Clock()
    replay = replay_run(record.events, speed=2.0, clock=clock)
    assert replay.run_id == record.run_id and not replay.done
    assert [e.kind for e in replay.events_since(0)] == [e.kind for e in record.events if e.at <= 0]
    last = record.events[-1].at
    clock.now += last / 4  # half the run at twice its pace
    halfway = replay.events_since(0)
    assert 0 < len(halfway) < len(record.events) and all(e.at <= last / 2 for e in halfway)
    clock.now += last / 4
    assert replay.done and len(replay.events_since(0)) == len(record.events)
    state = follow(replay, RunState(), lambda s: None, sleep=lambda s: None)
    assert state.result == record.result  # the same run, drawn again with no model


def test_stop_ends_a_replay_with_the_whole_run_and_a_speed_must_be_positive() -> None:
    record = sample_run(GlobalSearchRequest(query=QUESTION, seed=7, community_level=1))
    replay = replay_run(record.events, speed=1.0, clock=Clock())
    replay.request_stop()
    assert replay.done and RunState.replay(replay.events_since(0)).result == record.result
    with pytest.raises(ValueError, match="above 0"):
        replay_run(record.events, speed=0)


def test_a_replays_link_and_speed() -> None:
    assert replay_speed(None) == 1.0 and replay_speed("0.5") == 0.5
    for bad in ("fast", "0", "-1", "1000"):
        with pytest.raises(ValueError, match="speed"):
            replay_speed(bad)
    params = to_query_params(RunSettings(index="jargon", query="q"), run_id="abc", replay_speed=4.0, presenter=True)
    assert params["replay"] == "abc" and params["speed"] == "4" and params["presenter"] == "1" and "run" not in params
    assert to_query_params(RunSettings(index="jargon", query="q"), run_id="abc")["run"] == "abc"


class _Handle:
    def __init__(self, run_id: str) -> None:
        self.run_id, self.done = run_id, False


def test_the_runs_a_reload_attaches_to_are_those_still_running() -> None:
    runs = LiveRuns()
    first, second = _Handle("a"), _Handle("b")
    runs.add(first, index_key="jargon")  # type: ignore[arg-type]
    runs.add(second, index_key="zh-tea")  # type: ignore[arg-type]
    attached = runs.get("a")
    assert attached is not None and attached.handle is first and attached.index_key == "jargon"
    first.done = True
    assert runs.get("a") is None and runs.get("b") is not None and runs.get("nope") is None


def test_a_fresh_run_reads_nothing_from_the_cache_and_leaves_its_answers_there() -> None:
    inner = MemoryMapCache()
    inner.put("k", "old")
    fresh = FreshCache(inner)
    assert fresh.get("k") is None
    fresh.put("k2", "new")
    assert inner.get("k2") == "new"
    index = load_index(sample_path("jargon"))
    request = GlobalSearchRequest(query=QUESTION, seed=3, community_level=1)
    first: list = []
    asyncio.run(retrieve_global(index, request, OfflineChatModel(), cache=inner, on_event=first.append))
    again: list = []
    asyncio.run(retrieve_global(index, request, OfflineChatModel(), cache=FreshCache(inner), on_event=again.append))
    assert RunState.replay(first).map_calls > 0 and RunState.replay(again).map_calls == RunState.replay(first).map_calls


@pytest.mark.parametrize(("sample", "question"), [("jargon", QUESTION), ("zh-tea", "茶的历史以及怎样泡茶？")])
def test_before_run_the_page_can_say_how_many_batches_the_cache_would_answer(tmp_path: Path, sample: str, question: str) -> None:
    """On a Chinese corpus too: its map prompts ask for Chinese, and so must the keys counted
    (the preview once counted the English prompt's keys and found no batch cached)."""
    index = load_index(sample_path(sample))
    request = GlobalSearchRequest(query=question, seed=3, community_level=1)
    path = tmp_path / "cache.sqlite3"
    previews = CostPreviews()
    identity = model_identity(OfflineChatModel())

    def cached() -> int:
        return previews.cached_future(index, sample, 1, request, identity=identity, cache_path=path).result(TIMEOUT)

    assert cached() == 0
    cache = SqliteMapCache(path)
    result = asyncio.run(retrieve_global(index, request, OfflineChatModel(), cache=cache))
    cache.close()
    assert cached() == result.diagnostics.batch_count  # counted again once the cache file changed
    assert "all" in cache_line(5, 5) and "3 of 5" in cache_line(3, 5) and "no batch" in cache_line(0, 5)


def test_a_stopped_app_run_answers_from_what_it_read_in_the_same_run(tmp_path: Path) -> None:
    from graphrag_app.jobs import start_run

    db = tmp_path / "runs.sqlite3"
    index = load_index(sample_path("jargon"))
    request = GlobalSearchRequest(query=QUESTION, **SMALL_BATCHES)
    handle = start_run(index, request, lambda: gated(2), store_path=db, index_name="jargon")
    wait_until(lambda: sum(e.kind == "map_batch_succeeded" for e in handle.events_since(0)) >= 2, "two answered batches")
    handle.request_stop()
    assert handle.wait(TIMEOUT)
    record = RunStore(db).get(handle.run_id)
    assert record is not None and record.status == "cancelled" and record.replay().answerable_from_read

    seen = follow(handle, RunState(), lambda s: None)
    going_on = start_partial_answer(index, record, OfflineChatModel, store_path=db)
    assert going_on.run_id == handle.run_id
    state = follow(going_on, seen, lambda s: None)  # the page's state picks up where it stopped
    assert going_on.save_error is None
    assert state.status is RunStatus.PARTIAL and state.stopped_early and state.result is not None
    assert state.result.diagnostics.stopped_early and len(state.result.map_answers) == 2
    stored = RunStore(db).get(handle.run_id)
    assert stored is not None and stored.status == "partial" and stored.created_at == record.created_at
    assert len(RunStore(db).list_runs()) == 1
    assert RunState.replay(stored.events).result == state.result


# -- Explore under AppTest ---------------------------------------------------------------------


def test_explore_replays_a_run_from_its_link(run_db: Path) -> None:
    run_id = stored_run(run_db)
    at = app({"replay": run_id, "speed": "50"}).run(timeout=TIMEOUT)
    assert not at.exception
    assert any(t.startswith("Status: completed") for t in texts(at))
    assert at.query_params["run"] == run_id and "replay" not in at.query_params  # the replay ended: the run is shown
    assert not at.button(key="run_global_search").disabled and at.button(key="replay")


def test_a_bad_replay_speed_is_said_and_the_replay_plays_at_its_pace(run_db: Path) -> None:
    run_id = stored_run(run_db)
    at = app({"replay": run_id, "speed": "nope"}).run(timeout=TIMEOUT)
    assert any("speed='nope'" in i.value for i in at.info)
    assert any(t.startswith("Status: completed") for t in texts(at))


def test_explore_offers_an_answer_from_what_a_stopped_run_read(run_db: Path, tmp_path: Path) -> None:
    from graphrag_app.jobs import start_run

    index = load_index(sample_path("jargon"))
    request = GlobalSearchRequest(query=QUESTION, **SMALL_BATCHES)
    handle = start_run(index, request, lambda: gated(2), store_path=run_db, index_name="jargon", index_path=str(sample_path("jargon")))
    wait_until(lambda: sum(e.kind == "map_batch_succeeded" for e in handle.events_since(0)) >= 2, "two answered batches")
    handle.request_stop()
    assert handle.wait(TIMEOUT)

    at = app({"run": handle.run_id, "latency": "0"}).run(timeout=TIMEOUT)
    assert any(t.startswith("Status: stopped") for t in texts(at))
    at.button(key="answer_from_read").click().run(timeout=TIMEOUT)
    assert not at.exception
    assert any(t.startswith("Status: partial") and "Stopped after reading 2 of" in t for t in texts(at))
    assert any("Stopped after reading 2 of" in w.value for w in at.warning)
    assert not at.button(key="run_global_search").disabled
    [summary] = RunStore(run_db).list_runs()
    assert summary.run_id == handle.run_id and summary.status == "partial"


def test_the_live_timeline_never_shows_more_calls_in_flight_than_the_limit() -> None:
    """A slot goes to the next call a moment before the end of the last is reported: a tick that
    folds the next call's start first must not draw a fifth call in flight at concurrency 4."""
    from graphrag_core.events import BatchesPlanned, MapBatchStarted, PlannedBatch, RunStarted

    events: list = [RunStarted(run_id="r", request=GlobalSearchRequest(query="q", seed=1), seed=1, model="m", tokenizer="heuristic")]
    events.append(BatchesPlanned(batches=tuple(PlannedBatch(index=i, community_ids=(str(i),), token_estimate=10) for i in range(6)), map_prompt_budget=100, concurrency=4))
    events += [MapBatchStarted(at=0.1 * i, batch_index=i, attempt=1) for i in range(4)]
    events.append(MapBatchStarted(at=1.0, batch_index=4, attempt=1))  # batch 0's end is not folded yet
    state = RunState.replay(events)
    state.elapsed_s = 1.4
    lanes = charts.call_lanes(state.calls, state.elapsed_s, limit=4)
    assert max(lanes) + 1 == 4 and lanes[4] == lanes[0]
    figure = charts.timeline_figure(state)
    assert "at most 4 in flight (limit 4)" in figure.layout.title.text
    running = next(t for t in figure.data if t.name == "running")
    first = [hover for hover, in running.customdata].index("Batch 0, attempt 1")  # each bar's hover names its call
    assert abs(running.base[first] + running.x[first] - 1.0) < 1e-9  # batch 0's bar ends where batch 4 took its slot
    assert max(charts.call_lanes(state.calls, state.elapsed_s)) + 1 == 5  # with no limit, lanes are only what the spans say


def test_before_run_the_preview_says_the_cache_would_answer_and_run_fresh_reads_none_of_it(run_db: Path) -> None:
    at = app({"q": QUESTION, "level": "1", "seed": "5", "latency": "0"}).run(timeout=TIMEOUT)
    assert any(c.value.startswith("Map cache: no batch") for c in at.caption)
    at.button(key="run_global_search").click().run(timeout=TIMEOUT)
    first = RunStore(run_db).get(at.query_params["run"])
    assert first is not None and first.figures.spend.cache_hits == 0
    assert any(c.value.startswith("Map cache: all") for c in at.caption)  # said before the next Run

    at.button(key="run_fresh").click().run(timeout=TIMEOUT)
    fresh = RunStore(run_db).get(at.query_params["run"])
    assert fresh is not None and fresh.run_id != first.run_id
    assert fresh.figures.spend.cache_hits == 0 and fresh.figures.spend.calls == first.figures.spend.calls
    at.button(key="run_global_search").click().run(timeout=TIMEOUT)
    cached = RunStore(run_db).get(at.query_params["run"])
    assert cached is not None and cached.figures.spend.cache_hits == first.figures.batches


def test_a_run_from_a_bundle_replays_through_the_live_view_with_the_recorded_bars(run_db: Path, tmp_path: Path) -> None:
    from graphrag_app.panels.bundles import open_bundle
    from graphrag_app.settings import load_settings
    from graphrag_core.bundle import bundle_to_json, make_bundle

    elsewhere = tmp_path / "elsewhere.sqlite3"
    run_id = stored_run(elsewhere)
    recorded = RunStore(elsewhere).get(run_id)
    assert recorded is not None
    bundle, _notices, errors = open_bundle(bundle_to_json(make_bundle(recorded)).encode(), name="run.json", app=load_settings())
    assert bundle is not None and errors == []

    at = app({"replay": run_id, "speed": "50"}).run(timeout=TIMEOUT)
    assert not at.exception
    assert any(t.startswith("Status: completed") for t in texts(at))
    assert at.query_params["run"] == run_id
    shown = at.session_state[ShownRun.KEY].view
    assert shown is not None and shown.handle is None  # played to its end through the live view
    assert charts.usefulness_figure(shown.state).to_plotly_json()["data"] == charts.usefulness_figure(recorded.replay()).to_plotly_json()["data"]
    assert shown.state.result == recorded.replay().result


class _Starting:
    """A run handle whose events come after ``polls`` looks (a run planning its batches)."""

    def __init__(self, events: list, *, polls: int) -> None:
        self.events, self.polls, self.looks = events, polls, 0
        self.done = False

    def progress(self, seen: RunState) -> RunState:
        self.looks += 1
        if self.looks > self.polls:
            for event in self.events[len(seen.events):]:
                seen.apply(event)
        return seen


def test_the_drawing_after_a_click_on_run_waits_a_moment_for_the_runs_first_events() -> None:
    from graphrag_app.explore.live_view import FIRST_EVENTS_POLL_S, FIRST_EVENTS_WAIT_S, await_first_events
    from graphrag_app.live import RunView

    from graphrag_app.jobs import run_blocking

    request = GlobalSearchRequest(query="What is a hacker?", community_level=1, seed=3)
    _handle, finished = run_blocking(load_index(sample_path("jargon")), request, OfflineChatModel(), timeout=120)
    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    planning = _Starting(finished.events[:3], polls=3)
    view = RunView(run_id="r", state=RunState(), index_key="jargon", handle=planning)  # type: ignore[arg-type]
    await_first_events(view, sleep=sleep, clock=lambda: clock[0])
    assert view.state.status is not None and view.state.batches  # drawn running, with its planned batches
    assert clock[0] == 3 * FIRST_EVENTS_POLL_S
    silent = _Starting([], polls=0)
    view = RunView(run_id="r", state=RunState(), index_key="jargon", handle=silent)  # type: ignore[arg-type]
    clock[0] = 0.0
    await_first_events(view, sleep=sleep, clock=lambda: clock[0])
    assert not view.state.events and FIRST_EVENTS_WAIT_S <= clock[0] < FIRST_EVENTS_WAIT_S + 2 * FIRST_EVENTS_POLL_S  # never more than the bound


def test_the_live_view_draws_the_call_timeline_anew_at_most_once_a_second() -> None:
    # a chart drawn again unchanged costs the browser nothing; a changed one is built anew
    from graphrag_app.explore.live_view import TIMELINE_REDRAW_S, live_timeline
    from graphrag_app.jobs import run_blocking
    from graphrag_app.live import RunView

    request = GlobalSearchRequest(query="What is a hacker?", community_level=1, seed=3)
    _handle, finished = run_blocking(load_index(sample_path("jargon")), request, OfflineChatModel(), timeout=120)
    events, now = finished.events, [100.0]
    view = RunView(run_id="r", state=RunState.replay(events[:8]), index_key="jargon")
    first = live_timeline(view, height=290, clock=lambda: now[0])
    view.state = RunState.replay(events[:20])
    now[0] += TIMELINE_REDRAW_S / 2
    assert live_timeline(view, height=290, clock=lambda: now[0]) is first  # not due yet: drawn again unchanged
    assert live_timeline(view, height=300, clock=lambda: now[0]) is not first  # presenter mode's height
    now[0] += TIMELINE_REDRAW_S
    due = live_timeline(view, height=300, clock=lambda: now[0])
    assert due.layout.title.text == charts.timeline_figure(view.state, height=300).layout.title.text
    view.state = finished
    assert live_timeline(view, height=300, fresh=True, clock=lambda: now[0]).to_plotly_json() == charts.timeline_figure(finished, height=300).to_plotly_json()  # the end: as it is


def test_a_tick_of_the_live_view_draws_the_first_bar_and_the_answer_as_they_come() -> None:
    # a tick due before the first map answer, or in the reduce before the answer, waits a moment
    # for it (shorter than a tick), instead of showing it a tick later
    from graphrag_app.explore.live_view import FIRST_EVENTS_POLL_S, MOMENT_WAIT_S, await_moment, moment_due
    from graphrag_app.jobs import run_blocking
    from graphrag_app.live import RunView
    from graphrag_core.events import MapBatchSucceeded, ReduceStarted, RunFinished

    request = GlobalSearchRequest(query="What is a hacker?", community_level=1, seed=3)
    _handle, finished = run_blocking(load_index(sample_path("jargon")), request, OfflineChatModel(), timeout=120)
    events = finished.events
    first_answer = next(i for i, e in enumerate(events) if isinstance(e, MapBatchSucceeded))
    reduce = next(i for i, e in enumerate(events) if isinstance(e, ReduceStarted))
    end = next(i for i, e in enumerate(events) if isinstance(e, RunFinished))
    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    for shown, due, wanted in ((first_answer, 2, lambda s: s.finished_batches >= 1), (reduce + 1, 3, lambda s: s.result is not None)):
        state = RunState.replay(events[:shown])
        assert moment_due(state) and not wanted(state)
        view = RunView(run_id="r", state=state, index_key="jargon", handle=_Starting(events[: end + 1], polls=due))  # type: ignore[arg-type]
        clock[0] = 0.0
        await_moment(view, sleep=sleep, clock=lambda: clock[0])
        assert wanted(view.state) and clock[0] == due * FIRST_EVENTS_POLL_S
    streaming = RunState.replay(events[: first_answer + 1])  # some bars already: a tick draws at once
    assert not moment_due(streaming)
    view = RunView(run_id="r", state=RunState.replay(events[:reduce + 1]), index_key="jargon", handle=_Starting([], polls=0))  # type: ignore[arg-type]
    clock[0] = 0.0
    await_moment(view, sleep=sleep, clock=lambda: clock[0])
    assert view.state.result is None and MOMENT_WAIT_S <= clock[0] < MOMENT_WAIT_S + 2 * FIRST_EVENTS_POLL_S  # never more than the bound
