"""A hard spending limit (issue 26, part 2): no call is dispatched that could take the total past
the limit; a run that reaches it stops as Stop stops it, a sweep stops its later points, an
experiment stops between items and goes on later; the cost preview says whether it is reached."""

from __future__ import annotations

import asyncio
import json

import pytest

from graphrag_core import GlobalSearchRequest, answer_from_read, retrieve_global
from graphrag_core.cost import spend_forecast
from graphrag_core.errors import RequestValidationError, SpendLimitReached
from graphrag_core.evaluation import ExperimentSpec, parse_conditions, run_experiment
from graphrag_core.evaluation.judge import judge_pair
from graphrag_core.evaluation.questions import EvalQuestion
from graphrag_core.evaluation.store import EvaluationStore
from graphrag_core.events import MapBatchSucceeded, PartialAnswerStarted, RunFailed, RunFinished, RunStarted
from graphrag_core.figures import run_figures
from graphrag_core.history import RunStore
from graphrag_core.index import load_index
from graphrag_core.llm.base import ChatRequest, ChatResponse, TokenUsage
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.scripted import ScriptedChatModel
from graphrag_core.samples import SAMPLES
from graphrag_core.spending import SpendingLimit, forecast_limit, worst_case_tokens
from graphrag_core.state import BatchStatus, RunState
from graphrag_core.status import RunStatus
from graphrag_core.sweep import SweepSpec, run_sweep
from graphrag_core.tokens import get_tokenizer

from .cli_support import run_cli

QUESTION = "What are the main themes?"
HEURISTIC = get_tokenizer("heuristic")


@pytest.fixture(scope="module")
def jargon():
    return load_index(SAMPLES["jargon"])


class Metered:
    """A model that replies like the offline one, reports usage, and checks the limit's promise:
    when a call arrives, what was spent before it plus its worst case fits the limit."""

    def __init__(self, limit: int, *, latency: float = 0.0) -> None:
        self.inner, self.limit, self.latency = OfflineChatModel(), limit, latency
        self.spent = 0
        self.reserved = 0
        self.sent: list[ChatRequest] = []
        self.identity = "metered"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        worst = worst_case_tokens(request, HEURISTIC)
        assert self.spent + self.reserved + worst <= self.limit, "a call that could pass the limit was sent"
        self.reserved += worst
        self.sent.append(request)
        try:
            await asyncio.sleep(self.latency)
            text = self.inner.reply(request)
        finally:
            self.reserved -= worst
        usage = TokenUsage(prompt_tokens=HEURISTIC.count(request.prompt_text), completion_tokens=HEURISTIC.count(text))
        self.spent += usage.total_tokens
        return ChatResponse(text=text, usage=usage)


@pytest.mark.parametrize("bad", [0, -5, True, 2.5, "1000"])
def test_the_limit_is_a_positive_integer_or_none(bad):
    assert GlobalSearchRequest(query="q").spend_limit_tokens is None
    with pytest.raises(RequestValidationError, match="^spend_limit_tokens must be a positive integer"):
        GlobalSearchRequest(query="q", spend_limit_tokens=bad)


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_run_at_its_limit_sends_no_call_that_could_pass_it_and_answers_from_what_it_read_as_stop_does(jargon, concurrency):
    limit = 60_000
    model = Metered(limit, latency=0.01)
    request = GlobalSearchRequest(query=QUESTION, community_level=1, seed=3, spend_limit_tokens=limit, map_concurrency=concurrency)
    events = []
    result = asyncio.run(retrieve_global(jargon, request, model, on_event=events.append))
    assert result.status == RunStatus.PARTIAL and result.answer and result.diagnostics.stopped_early
    d = result.diagnostics
    assert d.stopped_at_limit == limit and 0 < d.unread_batch_count < d.batch_count
    assert d.stopped_note == (
        f"Stopped at the spending limit of 60,000 tokens after reading {d.batch_count - d.unread_batch_count:,} of {d.batch_count:,} "
        "batches: a partial answer from what was read."
    )
    stop = next(e for e in events if isinstance(e, RunFailed))
    assert stop.cancelled and stop.error_type == "SpendLimitReached" and "stopped at its spending limit of 60,000 tokens" in stop.error
    assert isinstance(events[events.index(stop) + 1], PartialAnswerStarted) and isinstance(events[-1], RunFinished)
    assert model.sent[-1].purpose == "reduce", "the answer from what was read is a reduce within the limit"
    state = RunState.replay(events)
    assert state.status is RunStatus.PARTIAL
    statuses = {b.status for b in state.batches}
    assert BatchStatus.DONE in statuses and BatchStatus.PENDING in statuses
    assert BatchStatus.CANCELLED not in statuses, "the calls in flight were let finish before the limit stopped the run"
    figures = run_figures(events)
    assert figures.usage.total_tokens == model.spent <= limit


def test_a_run_stopped_at_its_limit_before_any_useful_answer_ends_as_stopped(jargon):
    model = Metered(10_000)  # room for no map batch beside the reduce's worst case
    request = GlobalSearchRequest(query=QUESTION, community_level=1, seed=3, spend_limit_tokens=10_000)
    events = []
    with pytest.raises(SpendLimitReached) as raised:
        asyncio.run(retrieve_global(jargon, request, model, on_event=events.append))
    assert not model.sent and raised.value.limit == 10_000
    end = events[-1]
    assert isinstance(end, RunFailed) and end.cancelled and end.error == str(raised.value) and end.error_type == "SpendLimitReached"
    assert RunState.replay(events).status is RunStatus.CANCELLED and run_figures(events).stopped


def test_stop_on_a_limited_run_answers_within_what_the_limit_leaves(jargon):
    """Stop's answer from what was read holds the request's limit, the run's spend counted in."""
    request = GlobalSearchRequest(query=QUESTION, community_level=1, seed=3, spend_limit_tokens=10**9, map_concurrency=1)
    events = []

    async def stopped_after_two():
        task = asyncio.ensure_future(retrieve_global(jargon, request, OfflineChatModel(), on_event=events.append))
        while sum(isinstance(e, MapBatchSucceeded) for e in events) < 2:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        spent = run_figures(events).usage.total_tokens
        tight = [e.model_copy(update={"request": e.request.model_copy(update={"spend_limit_tokens": spent + 10})}) if isinstance(e, RunStarted) else e for e in events]
        with pytest.raises(SpendLimitReached):
            await answer_from_read(jargon, tight, Metered(spent + 10))
        roomy = await answer_from_read(jargon, events, OfflineChatModel())
        assert roomy.status == RunStatus.PARTIAL and roomy.diagnostics.stopped_at_limit is None
        assert roomy.diagnostics.stopped_note.startswith("Stopped after reading 2 of ")

    asyncio.run(stopped_after_two())


def test_a_run_within_its_limit_is_the_run_without_one(jargon):
    request = GlobalSearchRequest(query=QUESTION, community_level=0, seed=3)
    free = asyncio.run(retrieve_global(jargon, request, OfflineChatModel()))
    model = Metered(10**9)
    limited = asyncio.run(retrieve_global(jargon, request.model_copy(update={"spend_limit_tokens": 10**9}), model))
    assert limited.answer == free.answer and limited.status == free.status == "completed"


def test_dynamic_selection_rating_calls_hold_the_limit_too(jargon):
    model = Metered(8_000 + 3_000)
    request = GlobalSearchRequest(query=QUESTION, community_selection="dynamic", seed=1, spend_limit_tokens=11_000, rating_output_reserve=64)
    with pytest.raises(SpendLimitReached):  # nothing read yet to answer from: the run ends stopped
        asyncio.run(retrieve_global(jargon, request, model))
    assert model.sent and all(r.purpose == "rate" for r in model.sent)


def test_the_limit_waits_for_calls_in_flight_before_it_says_reached():
    async def scenario():
        limit = SpendingLimit(100)
        first = await limit.reserve(60)
        waiting = asyncio.ensure_future(limit.reserve(60))
        await asyncio.sleep(0)
        assert not waiting.done(), "it does not fit while the first holds its worst case"
        limit.settle(first, 10)  # the first cost less than its worst case
        second = await waiting
        assert limit.spent == 10 and limit.reserved == 60
        limit.settle(second, 60)
        with pytest.raises(SpendLimitReached):
            await limit.reserve(40)
        assert limit.reached and limit.spent == 70

    asyncio.run(scenario())


def test_the_forecast_says_whether_the_limit_will_be_reached(jargon):
    assert forecast_limit(10**6, [7_000] * 20, map_output_reserve=512, reduce_token_budget=8_000).verdict == "within"
    will = forecast_limit(60_000, [7_000] * 20, map_output_reserve=512, reduce_token_budget=8_000)
    assert will.verdict == "will_reach" and will.batches_sent == (6, 7)
    assert will.text().startswith("The spending limit of 60,000 tokens will be reached: the map stops after about 6–7 of 20 batches")
    may = forecast_limit(150_000, [7_000] * 20, map_output_reserve=512, reduce_token_budget=8_000)
    assert may.verdict == "may_reach" and "may be reached" in may.text()
    request = GlobalSearchRequest(query=QUESTION, community_level=1, seed=3, spend_limit_tokens=60_000)
    forecast = spend_forecast(jargon, request, seed=3, tokenizer=HEURISTIC)
    assert forecast is not None and forecast.verdict == "will_reach"
    assert spend_forecast(jargon, request.model_copy(update={"spend_limit_tokens": None}), seed=3, tokenizer=HEURISTIC) is None


def test_a_sweep_shares_one_limit_and_does_not_run_the_points_after_it(jargon):
    spec = SweepSpec(query=QUESTION, levels=[1], seeds=[1, 2, 3, 4], base={"include_claims": False, "include_sources": False})
    model = Metered(200_000)
    result = asyncio.run(run_sweep(jargon, spec, model, spend_limit_tokens=200_000))
    statuses = [p.status for p in result.points]
    assert statuses[0] == "completed"
    (reached,) = [p for p in result.points if p.stopped_early]
    assert reached.status == "partial" and reached.answer and reached.error_type == "SpendLimitReached"
    assert reached.error.startswith("Stopped at the spending limit of 200,000 tokens after reading ")
    later = result.points[reached.index + 1:]
    assert later and all(p.status == "cancelled" and p.error.startswith("Not run: the sweep had reached its spending limit") for p in later)
    assert result.spend().tokens.total_tokens == model.spent <= 200_000
    assert [p.answered for p in result.points] == [s == "completed" for s in statuses]


def _spec(questions=3):
    return ExperimentSpec(
        questions=[EvalQuestion(id=f"q{i}", question=q) for i, q in enumerate(["What are the main themes?", "Who are the people?", "What tools appear?"][:questions])],
        conditions=parse_conditions("C0: level=1, claims=false, sources=false\nC1: level=1, claims=false, sources=false, reduce_budget=6000"),
        seeds=[1],
    )


def test_an_experiment_stops_between_items_at_its_limit_and_goes_on_from_there(jargon, tmp_path):
    store = EvaluationStore(tmp_path / "eval.sqlite3")
    first = asyncio.run(run_experiment(jargon, _spec(), OfflineChatModel(), OfflineChatModel(), store=store, spend_limit_tokens=120_000))
    assert first.stopped and first.stop_reason and "spending limit of 120,000 tokens" in first.stop_reason
    done = len(first.answers)
    assert 0 < done < 6
    assert sum(a.cost.reported_tokens for a in first.answers) <= 120_000
    second = asyncio.run(run_experiment(jargon, _spec(), OfflineChatModel(), OfflineChatModel(), store=store, spend_limit_tokens=10**8))
    assert not second.stopped and len(second.answers) == 6 and second.judgments
    reused = [a for a in second.answers if a.run_id in {b.run_id for b in first.answers}]
    assert len(reused) == done, "what the first run made was kept and not spent again"


def test_a_judgment_at_the_limit_stops_and_keeps_the_calls_it_made(tmp_path):
    store = EvaluationStore(tmp_path / "eval.sqlite3")
    limit = SpendingLimit(3 * (worst_case_tokens(_judge_request(), HEURISTIC)) + 10)
    model = ScriptedChatModel(lambda r: ChatResponse(text='{"winner": 1, "reason": "r"}', usage=TokenUsage(prompt_tokens=400, completion_tokens=20)))
    with pytest.raises(SpendLimitReached):
        asyncio.run(judge_pair("q?", "A " * 200, "B " * 200, model, store=store, spending=limit, concurrency=1))
    assert 0 < store.counts()["judge_calls"] < 8 and limit.spent <= limit.limit


def _judge_request() -> ChatRequest:
    from graphrag_core.evaluation.judge import CRITERIA, JUDGE_OUTPUT_RESERVE
    from graphrag_core.prompts import render_judge_messages

    return ChatRequest(purpose="judge", messages=render_judge_messages("q?", "diversity", CRITERIA["diversity"], "A " * 200, "B " * 200), max_tokens=JUDGE_OUTPUT_RESERVE)


def test_query_says_the_forecast_then_stops_at_the_limit_answers_from_what_it_read_and_records_the_run(capsys, tmp_path):
    store = tmp_path / "runs.sqlite3"
    code, out, err = run_cli(
        capsys, "query", "jargon", QUESTION, "--level", "1", "--seed", "3", "--spend-limit-tokens", "60000", "--store", store, "--no-cache"
    )
    assert code == 0, err
    assert "The spending limit of 60,000 tokens will be reached: the map stops after about" in err
    assert "Stopped at the spending limit of 60,000 tokens after reading " in err and out.strip()
    (summary,) = RunStore(store).list_runs()
    record = RunStore(store).get(summary.run_id)
    assert record.status == "partial" and record.request.spend_limit_tokens == 60_000
    code, out, _ = run_cli(capsys, "query", "jargon", QUESTION, "--level", "1", "--seed", "3", "--spend-limit-tokens", "60000", "--json", "--no-store", "--no-cache")
    document = json.loads(out)
    assert document["status"] == "partial" and document["diagnostics"]["stopped_at_limit"] == 60_000
    # the reduce's 8,000 and a batch's 512-token reply reserve leave no batch room under 8,500
    code, out, err = run_cli(capsys, "query", "jargon", QUESTION, "--level", "1", "--spend-limit-tokens", "8500", "--store", store, "--no-cache")
    assert code == 5 and "stopped: The run stopped at its spending limit of 8,500 tokens" in err and not out  # EXIT_STOPPED (issue 40)
    assert RunStore(store).list_runs()[0].status == "cancelled"
    code, _, err = run_cli(capsys, "query", "jargon", QUESTION, "--spend-limit-tokens", "0", "--no-store")
    assert code == 2 and "spend_limit_tokens must be a positive integer" in err


def test_sweep_and_eval_take_the_option(capsys, tmp_path):
    code, out, err = run_cli(
        capsys, "sweep", "jargon", QUESTION, "--levels", "1", "--seeds", "1,2,3", "--no-claims", "--no-sources", "--spend-limit-tokens", "150000",
        "--no-store", "--no-cache",
    )
    assert code == 0, err
    assert "stopped at the spending limit of 150,000 tokens" in err and ",completed," in out and ",partial," in out
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "What are the main themes?"}\n{"question": "Who are the people?"}\n', encoding="utf-8")
    args = ("eval", questions, "--index", "jargon", "--condition", "C0:level=1,claims=false,sources=false", "--condition", "C1:level=leaf,claims=false,sources=false",
            "--eval-db", tmp_path / "e.sqlite3", "--no-store", "--no-cache")
    code, out, err = run_cli(capsys, *args, "--spend-limit-tokens", "200000")
    assert code == 0, err
    assert "stopped: The experiment stopped at its spending limit of 200,000 tokens" in err
    assert "> Stopped before it finished" in out and "spending limit" in out
    code, out, _ = run_cli(capsys, *args, "--estimate", "--spend-limit-tokens", "200000")
    assert "spend_limit: the spending limit of 200,000 tokens will be reached" in out
