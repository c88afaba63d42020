"""Stop leaves an answer: a stopped run can go on to a reduce over the map answers it finished,
recorded with the run and labelled partial everywhere (the fold, the history, the command line)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

import pytest

from graphrag_cli.context import EXIT_INTERRUPTED, EXIT_OK
from graphrag_cli.main import main
from graphrag_core.history import RunStore
from graphrag_core import GlobalSearchRequest, NothingReadError, answer_from_read, retrieve_global
from graphrag_core.events import MapBatchSucceeded, PartialAnswerStarted, ReduceSelection, RunFailed, RunFinished
from graphrag_core.index import load_index
from graphrag_core.llm.base import ChatRequest
from graphrag_core.llm.scripted import ScriptedChatModel
from graphrag_core.samples import sample_path
from graphrag_core.state import BatchStatus, RunState
from graphrag_core.status import RunStatus

MAP = '{"answer": "A point [Communities: %s].", "usefulness": 60}'
REDUCE = '{"answer": "What was read says this."}'
QUESTION = "What is a hacker?"
SMALL_BATCHES = {"map_token_budget": 900, "map_output_reserve": 0, "map_concurrency": 1, "seed": 3}


def gated(map_calls: int) -> ScriptedChatModel:
    """Answers ``map_calls`` map calls (citing community 1); every later map call waits until
    the run is stopped; the reduce answers."""
    seen: list[ChatRequest] = []

    async def script(request: ChatRequest) -> str:
        if request.purpose == "reduce":
            return REDUCE
        seen.append(request)
        if len(seen) > map_calls:
            await asyncio.Event().wait()  # never set: only the stop ends this call
        return MAP % "1"

    return ScriptedChatModel(script)


async def _stop_after(index, request: GlobalSearchRequest, model: ScriptedChatModel, answered: int, events: list) -> None:  # type: ignore[no-untyped-def]
    reached = asyncio.Event()

    def on_event(event) -> None:  # type: ignore[no-untyped-def]
        events.append(event)
        if sum(isinstance(e, MapBatchSucceeded) for e in events) >= answered:
            reached.set()

    task = asyncio.ensure_future(retrieve_global(index, request, model, on_event=on_event))
    if answered:
        await reached.wait()
    else:
        await asyncio.sleep(0.05)
    task.cancel()  # what Stop does
    with contextlib.suppress(asyncio.CancelledError):
        await task


def stopped_run(answered: int = 3) -> tuple[list, object]:
    """A jargon run (hundreds of small batches, one call at a time) stopped once ``answered``
    batches have their answer: its events, and the index."""
    index = load_index(sample_path("jargon"))
    events: list = []
    request = GlobalSearchRequest(query=QUESTION, **SMALL_BATCHES)
    asyncio.run(_stop_after(index, request, gated(answered), answered, events))
    return events, index


def test_a_stopped_run_answers_from_the_batches_it_read() -> None:
    events, index = stopped_run(3)
    stopped = RunState.replay(events)
    assert stopped.status is RunStatus.CANCELLED and stopped.answerable_from_read
    read = sum(b.status.succeeded for b in stopped.batches)
    assert read == 3
    more: list = []
    model = ScriptedChatModel(REDUCE)
    result = asyncio.run(answer_from_read(index, events, model, on_event=more.append))  # type: ignore[arg-type]

    assert [r.purpose for r in model.requests] == ["reduce"]  # no map call: only what was read
    assert result.status == "partial" and result.answer == "What was read says this."
    d = result.diagnostics
    assert d.stopped_early and d.batch_count == len(stopped.batches)
    assert len(result.map_answers) == read and d.unread_batch_count == d.batch_count - read
    assert d.map_calls == stopped.map_calls and d.selected_answer_count == read
    assert isinstance(more[0], PartialAnswerStarted) and more[0].answers == read and more[0].batches_read == read
    assert isinstance(more[1], ReduceSelection) and isinstance(more[-1], RunFinished)
    assert more[0].at >= events[-1].at  # the run's own clock goes on

    whole = RunState.replay(events + more)
    assert whole.status is RunStatus.PARTIAL and whole.stopped_early and whole.result == result
    assert sum(b.status is BatchStatus.CANCELLED for b in whole.batches) == 1  # the call in flight at the stop
    assert sum(b.status is BatchStatus.DONE for b in whole.batches) == read


def test_nothing_read_or_a_finished_run_cannot_be_answered_from_what_it_read() -> None:
    events, index = stopped_run(0)
    assert not RunState.replay(events).answerable_from_read
    with pytest.raises(NothingReadError):
        asyncio.run(answer_from_read(index, events, ScriptedChatModel(REDUCE)))  # type: ignore[arg-type]
    finished: list = []
    asyncio.run(retrieve_global(index, GlobalSearchRequest(query=QUESTION, seed=1), ScriptedChatModel(lambda r: REDUCE if r.purpose == "reduce" else MAP % "1"), on_event=finished.append))  # type: ignore[arg-type]
    with pytest.raises(NothingReadError):
        asyncio.run(answer_from_read(index, finished, ScriptedChatModel(REDUCE)))  # type: ignore[arg-type]


def test_a_failed_partial_reduce_ends_the_run_failed_with_its_figures() -> None:
    from graphrag_core.errors import FatalModelError

    events, index = stopped_run(2)
    more: list = []
    with pytest.raises(FatalModelError):
        asyncio.run(answer_from_read(index, events, ScriptedChatModel(lambda r: FatalModelError("HTTP 400")), on_event=more.append))  # type: ignore[arg-type]
    assert isinstance(more[-1], RunFailed) and not more[-1].cancelled
    state = RunState.replay(events + more)
    assert state.status is RunStatus.FAILED and state.stopped_early and "HTTP 400" in (state.error or "")


# -- the command line ------------------------------------------------------------------------


def ctrl_c_after(map_calls: int, *, on_reduce: bool = False):  # type: ignore[no-untyped-def]
    """A script that answers ``map_calls`` map calls, then raises ``KeyboardInterrupt`` (Ctrl-C
    during a call); the reduce answers, or is interrupted too (``on_reduce``)."""
    seen: list[ChatRequest] = []

    def script(request: ChatRequest):  # type: ignore[no-untyped-def]
        if request.purpose == "reduce":
            return KeyboardInterrupt() if on_reduce else REDUCE
        seen.append(request)
        return KeyboardInterrupt() if len(seen) > map_calls else MAP % "1"

    return script


QUERY = ["query", "jargon", QUESTION, "--no-cache", "--map-budget", "900", "--map-reserve", "0", "--concurrency", "1", "--seed", "3"]


def test_query_answers_from_what_it_read_when_interrupted_that_way(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    code = main([*QUERY, "--store", str(db), "--json", "--answer-on-interrupt"], model=ScriptedChatModel(ctrl_c_after(2)), environ={})
    out, err = capsys.readouterr()
    assert code == EXIT_OK, err
    document = json.loads(out)
    assert document["status"] == "partial" and document["answer"] == "What was read says this."
    assert document["diagnostics"]["stopped_early"] is True and document["diagnostics"]["unread_batch_count"] > 0
    assert "Stopped after reading 2 of" in err

    [summary] = RunStore(db).list_runs()  # recorded with the run: one run, not two
    assert summary.status == "partial"
    code = main(["runs", "--store", str(db), "show", summary.run_id], environ={})
    shown = capsys.readouterr().out
    assert code == EXIT_OK and "**partial**" in shown and "Stopped after reading 2 of" in shown
    main(["runs", "--store", str(db), "list"], environ={})
    assert "partial" in capsys.readouterr().out


def test_a_second_ctrl_c_quits_and_without_the_option_ctrl_c_stops(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    code = main([*QUERY, "--store", str(db), "--answer-on-interrupt"], model=ScriptedChatModel(ctrl_c_after(2, on_reduce=True)), environ={})
    capsys.readouterr()
    assert code == EXIT_INTERRUPTED
    [summary] = RunStore(db).list_runs()
    assert summary.status == "cancelled"
    record = RunStore(db).get(summary.run_id)
    assert record is not None and record.replay().stopped_early  # it had gone on to answer when it was stopped again

    other = tmp_path / "other.sqlite3"
    code = main([*QUERY, "--store", str(other)], model=ScriptedChatModel(ctrl_c_after(2)), environ={})
    capsys.readouterr()
    assert code == EXIT_INTERRUPTED and RunStore(other).list_runs()[0].status == "cancelled"
