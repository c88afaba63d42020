"""Experiments through the OpenAI Batch API (issue 26, part 3), against a fake Batch API server
(tests/batch_api_server.py): waves of jobs, failed and expired lines sent again, state in the
experiment store so a rerun after a restart goes on, progress with the job's state and counts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from graphrag_core.errors import BatchAPIError, EvaluationError
from graphrag_core.evaluation import ExperimentSpec, parse_conditions, run_experiment
from graphrag_core.evaluation.batches import BatchOptions, BatchStore
from graphrag_core.evaluation.questions import EvalQuestion
from graphrag_core.evaluation.store import EvaluationStore
from graphrag_core.llm.batch_api import parse_result_lines
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.openai_model import OpenAIChatModel
from graphrag_core.llm.settings import ModelSettings

from .batch_api_server import batch_api_server
from .cli_support import run_cli
from .factories import small_index

FAST = BatchOptions(poll_s=0.01, settle_s=0.05)
CONDITIONS = "C0: level=0\nC2: level=2"


def spec(conditions: str = CONDITIONS, *, claims: bool = True) -> ExperimentSpec:
    questions = [EvalQuestion(id="q1", question="What do hackers know?"), EvalQuestion(id="q2", question="What about machines and kludges?")]
    return ExperimentSpec(questions=questions, conditions=parse_conditions(conditions), seeds=[1], claims=claims)


def endpoint(base_url: str) -> OpenAIChatModel:
    return OpenAIChatModel(ModelSettings(provider="openai", base_url=base_url, model="gpt-4o-mini", api_key="sk-batch-test"))


def through_batch(fake, store: EvaluationStore, *, experiment: ExperimentSpec | None = None, progress=None, options: BatchOptions = FAST):
    model = endpoint(fake.base_url)
    return asyncio.run(run_experiment(small_index(), experiment or spec(), model, model, store=store, batch=options, on_progress=progress))


def purposes(fake) -> list[set[str]]:
    return [{custom_id.split("-", 1)[0] for custom_id in job} for job in fake.lines_sent()]


def test_an_experiment_goes_in_waves_and_answers_as_direct_calls_would(tmp_path: Path):
    seen = []
    with batch_api_server(polls=3) as fake:
        result = through_batch(fake, EvaluationStore(tmp_path / "e.sqlite3"), progress=seen.append)
    direct = asyncio.run(run_experiment(small_index(), spec(), OfflineChatModel(), OfflineChatModel()))
    assert not result.stopped
    assert [(a.condition, a.question_id, a.status, a.answer) for a in result.answers] == [
        (a.condition, a.question_id, a.status, a.answer) for a in direct.answers
    ], "the fake answers each line as the offline model: the same answers as direct calls"
    assert [a.claims for a in result.answers] == [a.claims for a in direct.answers]
    assert len(result.judgments) == len(direct.judgments) and result.judge_calls == direct.judge_calls > 0
    assert purposes(fake) == [{"map"}, {"reduce"}, {"claims"}, {"judge"}], "one job per wave: maps, reduces, claims, judgments"
    batch = [p for p in seen if p.stage == "batch"]
    assert batch[0].label.startswith("wave 1 (map): batch ") and " in_progress, " in batch[0].label
    assert any(p.label.startswith("wave 4 (judge): batch ") and p.label.endswith(f"completed, {p.total}/{p.total} done") for p in batch)


def test_dynamic_selection_rates_in_waves_before_its_map(tmp_path: Path):
    dynamic = spec("D1: selection=dynamic\nD2: selection=dynamic, reduce_budget=6000", claims=False)
    with batch_api_server(polls=2) as fake:
        result = through_batch(fake, EvaluationStore(tmp_path / "e.sqlite3"), experiment=dynamic)
    assert all(a.status != "failed" for a in result.answers)
    waves = purposes(fake)
    assert "rate" in waves[0] and waves[-1] == {"judge"}
    first_map = next(i for i, p in enumerate(waves) if "map" in p)
    assert first_map >= 1 and all(p == {"rate"} for p in waves[:first_map]), "the ratings, round by round, then the maps"
    assert all("rate" not in p for p in waves[first_map:])


def test_lines_that_fail_or_expire_go_into_the_next_job(tmp_path: Path):
    patient = BatchOptions(poll_s=0.01, settle_s=0.05, line_attempts=4)
    with batch_api_server(polls=2, plans=["fail_some", "expire", "fail"]) as fake:
        result = through_batch(fake, EvaluationStore(tmp_path / "e.sqlite3"), options=patient)
        jobs = fake.lines_sent()
        statuses = [job.status for job in fake.jobs.values()]
    assert statuses[:3] == ["completed", "expired", "failed"]
    failed_first = jobs[0][::3]  # every third line of a fail_some job is in its error file
    assert failed_first and set(failed_first) <= set(jobs[1]), "the failed lines were sent again in the next job"
    unrun = jobs[1][len(jobs[1]) // 2:]
    assert set(unrun) <= set(jobs[2]) and set(jobs[2]) <= set(jobs[3]), "the expired job's unrun lines, then the failed job's, went again"
    assert not result.stopped and all(a.status != "failed" for a in result.answers) and result.judgments


def test_a_line_that_fails_in_every_job_fails_its_call_and_the_answer_is_recorded_failed(tmp_path: Path):
    with batch_api_server(polls=1, plans=["fail"] * 50) as fake:
        model = endpoint(fake.base_url)
        options = BatchOptions(poll_s=0.01, settle_s=0.05, line_attempts=1)
        one = ExperimentSpec(questions=[EvalQuestion(id="q1", question="What do hackers know?")], conditions=parse_conditions("C0: level=0"), seeds=[1, 2])
        result = asyncio.run(run_experiment(small_index(), one, model, OfflineChatModel(), store=EvaluationStore(tmp_path / "e.sqlite3"), batch=options))
    for answer in result.answers:
        assert answer.status == "failed" and "Batch line map-" in (answer.error_detail or answer.error or "")
        assert "the job was failed before it ran the line" in (answer.error_detail or answer.error or "")
    assert {p for wave in purposes(fake) for p in wave} == {"map"}, "no reduce, no judgment of failed answers"


def test_a_rerun_after_a_restart_follows_the_job_it_left_and_sends_only_what_is_missing(tmp_path: Path):
    path = tmp_path / "e.sqlite3"
    with batch_api_server(polls=1_000_000) as fake:  # the first job never finishes while the first run lives

        async def interrupted() -> None:
            task = asyncio.ensure_future(run_experiment(small_index(), spec(), endpoint(fake.base_url), endpoint(fake.base_url), store=EvaluationStore(path), batch=FAST))
            while not fake.jobs or next(iter(fake.jobs.values())).status != "in_progress":
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(interrupted())
        (first,) = fake.jobs.values()
        (left,) = _unfinished(path)
        assert left.id == first.id and left.status == "in_progress"
        first.polls_left = fake.polls = 2  # the provider finishes it while nobody watches; later jobs finish too
        result = through_batch(fake, EvaluationStore(path))
        jobs = fake.lines_sent()
    assert not result.stopped and result.judgments
    assert jobs[0] == fake.lines_sent()[0] and purposes(fake)[1] == {"reduce"}, "no second map job: the rerun followed the first one"
    every = [custom_id for job in jobs for custom_id in job]
    assert len(every) == len(set(every)), "no line was sent twice"


def _unfinished(path: Path):
    import sqlite3

    with sqlite3.connect(path) as connection:
        (experiment,) = {row[0] for row in connection.execute("SELECT experiment_id FROM batch_jobs")}
    return BatchStore(path).jobs(experiment, unfinished=True)


def test_the_store_keeps_each_job_and_reply_so_a_finished_experiment_reruns_with_no_job(tmp_path: Path):
    path = tmp_path / "e.sqlite3"
    with batch_api_server(polls=2) as fake:
        first = through_batch(fake, EvaluationStore(path))
        sent = len(fake.jobs)
        again = through_batch(fake, EvaluationStore(path))
        assert len(fake.jobs) == sent, "everything was in the store: no new job"
    jobs = BatchStore(path).jobs(first.id)
    assert [j.wave for j in jobs] == [1, 2, 3, 4] and all(j.status == "completed" for j in jobs)
    assert BatchStore(path).jobs(first.id, unfinished=True) == []
    assert [a.answer for a in again.answers] == [a.answer for a in first.answers]


def test_the_batch_api_needs_an_openai_compatible_model_and_a_store(tmp_path: Path):
    with pytest.raises(EvaluationError, match="needs an OpenAI-compatible model"):
        asyncio.run(run_experiment(small_index(), spec(), OfflineChatModel(), OfflineChatModel(), store=EvaluationStore(tmp_path / "e.sqlite3"), batch=FAST))
    with pytest.raises(EvaluationError, match="needs its store"):
        asyncio.run(run_experiment(small_index(), spec(), OfflineChatModel(), OfflineChatModel(), batch=FAST))


def test_result_lines_are_read_with_their_errors_and_a_broken_line_is_named():
    lines = parse_result_lines(
        '{"custom_id": "map-a-0", "response": {"status_code": 200, "body": {"choices": []}}, "error": null}\n'
        '{"custom_id": "map-b-0", "response": {"status_code": 500, "body": {"error": {"message": "overloaded"}}}, "error": null}\n'
        '{"custom_id": "map-c-0", "response": null, "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}}\n'
    )
    assert [(r.custom_id, r.body is not None, r.error) for r in lines] == [
        ("map-a-0", True, None), ("map-b-0", False, "overloaded"),
        ("map-c-0", False, "This request could not be executed before the completion window expired."),
    ]
    with pytest.raises(BatchAPIError, match="line 2 is not a result line"):
        parse_result_lines('{"custom_id": "x"}\nnot json\n')


def test_eval_via_batch_on_the_command_line_shows_the_jobs_and_goes_on_after_a_restart(capsys, tmp_path: Path):
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "What do hackers know?"}\n{"question": "What about machines?"}\n', encoding="utf-8")
    with batch_api_server(polls=2, plans=["fail_some"]) as fake:
        args = (
            "eval", questions, "--index", "jargon", "--condition", "C0:level=0,claims=false,sources=false", "--condition", "C1:level=1,claims=false,sources=false",
            "--model", "openai", "--judge", "openai", "--base-url", fake.base_url, "--model-name", "gpt-4o-mini", "--api-key-env", "TEST_KEY",
            "--via", "batch", "--batch-poll", "0.01", "--eval-db", tmp_path / "e.sqlite3", "--no-store", "--no-cache",
        )
        code, out, err = run_cli(capsys, *args, environ={"TEST_KEY": "sk-test"})
        assert code == 0, err
        assert "wave 1 (map): batch batch_" in err and " failed" in err and "wave 2 (map" in err
        assert "# " in out and "win rate" in out.lower()
        jobs = len(fake.jobs)
        code, again, err = run_cli(capsys, *args, environ={"TEST_KEY": "sk-test"})
        assert code == 0 and len(fake.jobs) == jobs and "wave " not in err
    code, _, err = run_cli(capsys, "eval", questions, "--index", "jargon", "--condition", "C0:level=0", "--condition", "C1:level=1", "--via", "batch", "--eval-db", tmp_path / "f.sqlite3", "--no-store")
    assert code == 2 and "needs an OpenAI-compatible model" in err
