"""Running an experiment: a question set x conditions x seeds, answered by the engine and judged
pairwise (evaluation spec section 3), in three named steps: answers, claims, judgments.

Invariants of :func:`run_experiment`:

- every condition answers every question once per seed through
  :func:`~graphrag_core.search.retrieve_global` (map cache included);
- every pair of distinct conditions (in the order given, the earlier one as A) is judged on
  every question and seed; with two seeds or more each condition is also judged against itself
  (A/A: seed k's answer against seed k+1's), the sanity check that should come out near 50;
- a pair whose answer failed is not judged; the failure is kept in the result;
- a pair of two unanswered answers (both ``no_results``: the same fixed text) is not judged
  either: it is skipped as unanswered, and the report lists the unanswered answers;
- claims that could not be listed are recorded on their answer (``claims_error``), so the
  result, the experiment the store keeps and the report show them; that answer is left out of
  the claim metrics;
- answers, judge calls and claims go to the :class:`EvaluationStore` as soon as they are made,
  so a rerun makes only what is missing; failures are not stored, so a rerun tries them again;
- once ``should_stop`` has returned true, no model is asked anything more;
- with a spending limit, no call of the experiment could take its total past it: an item
  (an answer, a list of claims, a judgment) whose planned prompts cannot fit is not started,
  one that reaches the limit stops there, and the experiment stops between items with what
  it has (``stopped``, ``stop_reason``); what it made is in the store, so running it again
  (with a larger limit, or tomorrow's) goes on from there;
- a condition's cost counts map calls whether or not the map cache served them and the prompt
  tokens the engine planned, so it does not depend on what ran before; the tokens the endpoint
  reported are kept beside them (``reported_tokens``), labelled as such;
- an index without source chunks is refused before anything runs when a condition's method
  reads them (``text``, ``vector``); ``vector`` answers rank chunks with ``embedder`` when one is
  given (its tokens counted apart), else by BM25;
- with a ``support_judge`` every answer that did not fail is support-checked
  (:mod:`graphrag_core.support`) as it is made, its counts kept on it (and in the store); a kept
  answer checked by another judge (or not at all) is checked again from its text; the model
  judge is the experiment's ``judge`` model, its calls through the map cache and within the
  spending limit; each condition's supported share is in the result.

Why this module is long: its steps (answers with their support checks, claims, judgments) share
one run's state (what is kept, the stop, the spending limit, the Batch API's waves) and its
invariants, and read best in one place, each step a method of :class:`_Run`.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from ..errors import EvaluationError, GraphRAGError, NoSourceChunksError, SpendLimitReached, describe_error
from ..events import Event
from ..figures import RunFigures, run_figures
from ..history.records import EVALUATION_LABEL_PREFIX, RunRecord
from ..llm.base import ChatModel, model_identity
from ..llm.embeddings import EmbeddingModel, ranker_name
from ..methods import GLOBAL, LAZY, VECTOR, reads_chunks
from ..models import Index
from ..request import GlobalSearchRequest
from ..batch_plan import plan_batches
from ..search import retrieve_global
from ..spending import SpendingLimit
from ..status import RunStatus
from ..support.models import JudgeName
from .batches import BatchOptions, BatchStore, BatchWaves
from .claims import extract_claims
from .conditions import Condition
from .judge import is_heuristic, judge_pair, judge_request_count
from ..index.fingerprint import index_fingerprint
from .keys import answer_key, claims_key, experiment_id
from .questions import EvalQuestion
from .results import AnswerCost, AnswerRecord, ExperimentEstimate, ExperimentResult, JudgmentRecord, SupportTally
from .spec import ExperimentSpec, JudgmentJob
from .support_share import answer_support, support_calls
from .statistics import compute_claim_summaries, compute_costs, compute_support_shares, compute_win_rates
from .store import EvaluationStore

if TYPE_CHECKING:
    from ..cache import MapCache
    from ..history.store import RunStore
    from ..results import GlobalSearchResult


T = TypeVar("T")
R = TypeVar("R")
BATCH_MAP_CONCURRENCY = 1024
"""Through the Batch API, an answer's map calls (and a pair's judge calls) all wait for the same
wave: a call in a wave is no connection held open."""


class EvalProgress(BaseModel):
    """Where an experiment is: ``stage`` (answers, judgments, claims), items done of total; through
    the Batch API, ``batch``: a job's lines done of its total at a poll, ``label`` its wave and state."""

    model_config = ConfigDict(frozen=True)

    stage: Literal["answers", "claims", "judgments", "batch"]
    done: int
    total: int
    label: str = ""
    reused: bool = False


ProgressSink = Callable[[EvalProgress], None]


def estimate_experiment(
    index: Index, spec: ExperimentSpec, *, every_question: bool = True, support_judge: JudgeName | None = None
) -> ExperimentEstimate:
    """The model calls an experiment needs before retries and before anything is reused.

    Map batches are planned for each question with the first seed, or, with
    ``every_question=False``, for the first question only and counted for every question (a
    question's length barely changes the batches; much faster on a big index). With the
    ``model`` support judge, its calls as forecast (:func:`~graphrag_core.support.forecast_support`)
    for every answer."""
    check_index(index, spec)
    seed = spec.seeds[0]
    planned = spec.questions if every_question else spec.questions[:1]
    scale = len(spec.seeds) * (1 if every_question else len(spec.questions))
    plans = [_answer_plan(index, condition.request(q.question, seed), seed) for condition in spec.conditions for q in planned]
    judgments = len(spec.judgment_jobs())
    return ExperimentEstimate(
        answers=spec.answer_count(),
        answer_calls=sum(calls for calls, _ in plans) * scale,
        answer_prompt_tokens=sum(tokens for _, tokens in plans) * scale,
        judgments=judgments,
        judge_calls=judge_request_count(spec.criteria, spec.repeats) * judgments,
        claims_calls=spec.answer_count() if spec.claims else 0,
        support_calls=support_calls(index, spec) if support_judge == "model" else 0,
    )


def check_index(index: Index, spec: ExperimentSpec) -> None:
    """Refuse an index without source chunks when a condition's method reads them (evaluation
    spec section 7: ``The index has no source chunks, so method text cannot run.``)."""
    for condition in spec.conditions:
        if reads_chunks(condition.method) and not any(c.text.strip() for c in index.chunks):
            raise NoSourceChunksError(condition.method)


def _answer_plan(index: Index, request: GlobalSearchRequest, seed: int) -> tuple[int, int]:
    """One answer's planned calls (its map batches and, when there is any, the reduce; the
    ``vector`` method's one call; a ``lazy`` answer's most: its expansion, its relevance budget,
    its map's bound and its reduce) and its map batches' planned prompt tokens (the most, for
    ``lazy``, its relevance prompts included)."""
    if request.method == VECTOR:
        return 1, 0
    if request.method == LAZY:
        from ..lazy.cost import estimate_lazy_cost

        try:
            cost = estimate_lazy_cost(index, request)
        except GraphRAGError:
            return 0, 0
        return cost.max_calls, cost.max_prompt_tokens
    try:
        _, batches, estimates = plan_batches(index, request, seed=seed)
    except GraphRAGError:
        return 0, 0
    return (len(batches) + 1 if batches else 0), sum(estimates)


async def run_experiment(
    index: Index,
    spec: ExperimentSpec,
    model: ChatModel,
    judge: ChatModel,
    *,
    store: EvaluationStore | None = None,
    cache: MapCache | None = None,
    run_store: RunStore | None = None,
    index_path: str | None = None,
    on_progress: ProgressSink | None = None,
    should_stop: Callable[[], bool] | None = None,
    spend_limit_tokens: int | None = None,
    batch: BatchOptions | None = None,
    embedder: EmbeddingModel | None = None,
    support_judge: JudgeName | None = "offline",
) -> ExperimentResult:
    """Answer, list claims when asked, judge and score (see the module docstring).

    ``run_store``, when given, receives each answer's run, labelled with the experiment, the
    condition, the question and the seed, so the app can open it in Compare and Provenance.
    ``should_stop`` is polled between items: when it returns true the experiment ends early
    with what it has (``stopped=True``); everything made so far is in ``store``.
    ``spend_limit_tokens`` bounds the tokens this call of the experiment spends, answering,
    listing claims and judging together. With ``batch`` (and a ``store``), the calls of the
    OpenAI-compatible models among ``model`` and ``judge`` go as Batch API jobs, in waves
    (:mod:`graphrag_core.evaluation.batches`); a rerun goes on from the jobs in the store.
    ``support_judge`` checks each answer's support (``offline``, the default; ``model``: the
    ``judge`` model; None: no check).
    """
    check_index(index, spec)
    run = _Run(
        index, spec, model, judge, store=store, cache=cache, run_store=run_store, index_path=index_path, emit=on_progress or _unseen,
        stop=should_stop or _never, embedder=embedder, support_judge=support_judge,
    )
    if spend_limit_tokens is not None:
        run.spending = SpendingLimit(spend_limit_tokens, what="experiment")
    if batch is None:
        result = await run.all()
    else:
        if store is None:
            raise EvaluationError("An experiment through the Batch API needs its store (where its jobs are kept).")
        emit = on_progress or _unseen
        waves = BatchWaves(
            BatchStore(store.path), run.id, options=batch,
            on_progress=lambda p: emit(EvalProgress(stage="batch", done=p.done, total=p.total, label=p.text())),
        )
        run.model, run.judge = waves.model(model), waves.model(judge)
        if run.model is model and run.judge is judge:
            raise EvaluationError("The Batch API needs an OpenAI-compatible model (--model openai) to answer or to judge.")
        run.concurrent = True
        try:
            result = await waves.drive(run.all())
        finally:
            waves.store.close()
    if store is not None and not run.stopped:
        store.save_experiment(result)
    return result


def _unseen(progress: EvalProgress) -> None:
    return None


def _never() -> bool:
    return False


class _Run:
    """One run of an experiment: what it answers with, where it keeps what it makes, and
    whether it was stopped (``stopped`` never goes back to false)."""

    def __init__(
        self,
        index: Index,
        spec: ExperimentSpec,
        model: ChatModel,
        judge: ChatModel,
        *,
        store: EvaluationStore | None,
        cache: MapCache | None,
        run_store: RunStore | None,
        index_path: str | None,
        emit: ProgressSink,
        stop: Callable[[], bool],
        embedder: EmbeddingModel | None = None,
        support_judge: JudgeName | None = None,
    ) -> None:
        self.index, self.spec, self.model, self.judge, self.embedder = index, spec, model, judge, embedder
        self.support_judge = support_judge
        self.store, self.cache, self.run_store, self.index_path = store, cache, run_store, index_path
        self.emit, self.stop = emit, stop
        self.started = time.monotonic()
        self.fingerprint = index_fingerprint(index)
        self.ranker = ranker_name(embedder) if any(c.method in (VECTOR, LAZY) for c in spec.conditions) else None
        self.id = experiment_id(spec, self.fingerprint, model, judge, ranker=self.ranker)
        self.stopped = False
        self.stop_reason: str | None = None
        self.spending: SpendingLimit | None = None
        self.concurrent = False
        """Every item of a stage at once, and each answer's map calls at once (the Batch API's waves)."""

    async def all(self) -> ExperimentResult:
        """Answer, list claims when asked, judge: the experiment's stages in order."""
        answers = await self.answers()
        if self.spec.claims and not self.stopped:
            answers = await self.claims(answers)
        return self.result(answers, await self.judgments(answers))

    def stopping(self) -> bool:
        """Whether to end now: asks ``stop`` until it once says yes."""
        self.stopped = self.stopped or self.stop()
        return self.stopped

    def limit_reached(self, exc: SpendLimitReached) -> None:
        """Stop between items: the spending limit is reached (``stop_reason`` says so)."""
        self.stopped, self.stop_reason = True, str(exc)

    # -- 1. answers --------------------------------------------------------------------------------

    async def each(self, items: Sequence[T], one: Callable[[T], Awaitable[R]]) -> list[R | None]:
        """``one`` of every item, in order: one after another, or all at once when ``concurrent``
        (the Batch API gathers their calls into waves). No item starts once the run is stopping;
        an item that reaches the spending limit stops the run and gives None, as do the items
        not started."""
        if not self.concurrent:
            done: list[R | None] = []
            for item in items:
                if self.stopping():
                    break
                try:
                    done.append(await one(item))
                except SpendLimitReached as exc:
                    self.limit_reached(exc)
                    break
            return done + [None] * (len(items) - len(done))

        async def guarded(item: T) -> R | None:
            try:
                return await one(item)
            except SpendLimitReached as exc:
                self.limit_reached(exc)
                return None

        return [None] * len(items) if self.stopping() else list(await asyncio.gather(*(guarded(item) for item in items)))

    async def answers(self) -> list[AnswerRecord]:
        """Every condition's answer to every question per seed, kept ones reused."""
        total = self.spec.answer_count()
        done = 0

        async def one(item: tuple[Condition, EvalQuestion, int]) -> AnswerRecord:
            nonlocal done
            condition, question, seed = item
            record, reused = await self.answer(condition, question, seed)
            done += 1
            failed = f" · failed: {record.error_detail or record.error}" if record.status == RunStatus.FAILED else ""
            label = f"{condition.name} · {question.id} · seed {seed}{failed}"
            self.emit(EvalProgress(stage="answers", done=done, total=total, label=label, reused=reused))
            return record

        items = list(itertools.product(self.spec.conditions, self.spec.questions, self.spec.seeds))
        return [record for record in await self.each(items, one) if record is not None]

    async def answer(self, condition: Condition, question: EvalQuestion, seed: int) -> tuple[AnswerRecord, bool]:
        """One answer, from the store when a finished one is kept there, and whether it was."""
        request = condition.request(question.question, seed)
        key = answer_key(self.fingerprint, self.model, request, ranker=ranker_name(self.embedder))
        kept = self.store.get_answer(key) if self.store is not None else None
        if kept is not None and kept.status != RunStatus.FAILED:
            kept = kept.model_copy(update={"condition": condition.name, "question_id": question.id})
            if self.support_judge is not None and (kept.support is None or kept.support.judge != self.support_judge):
                kept = kept.model_copy(update={"support": await self.support_of(kept.answer, method=request.method)})
                if self.store is not None and kept.support is not None:
                    self.store.put_answer(key, kept)
            return kept, True
        self.check_room(request, seed)
        record = await self.ask(condition, question, seed, request)
        if self.store is not None and record.status != RunStatus.FAILED:
            self.store.put_answer(key, record)
        return record, False

    def check_room(self, request: GlobalSearchRequest, seed: int) -> None:
        """Raise ``SpendLimitReached`` when an answer's planned prompts and its reduce cannot fit
        what the spending limit leaves (a fixed level's; dynamic selection's is not known
        before its ratings, and the limit holds inside the run anyway)."""
        if self.spending is None or request.dynamic or request.method == LAZY:  # a lazy answer's map is known after its tests
            return
        try:
            _, _, estimates = plan_batches(self.index, request, seed=seed)
        except GraphRAGError:
            return  # the run reports it
        planned = sum(estimates)
        if estimates and not self.spending.fits(planned, keep=request.reduce_token_budget):
            self.spending.reached = True
            raise SpendLimitReached(
                f"The experiment stopped at its spending limit of {self.spending.limit:,} tokens ({self.spending.spent:,} spent): "
                f"the next answer's planned prompts ({planned:,} tokens) and its reduce would take the total past it, so it was not started.",
                limit=self.spending.limit, spent=self.spending.spent,
            )

    async def ask(self, condition: Condition, question: EvalQuestion, seed: int, request: GlobalSearchRequest) -> AnswerRecord:
        """One answer from the engine, failed or not, its run saved to the run store; a run that
        reached the spending limit raises ``SpendLimitReached`` (its run saved too, and its
        answer from what it read kept out of the experiment: it would be judged as a whole one)."""
        events: list[Event] = []
        run_id = uuid.uuid4().hex
        base = dict(condition=condition.name, question_id=question.id, seed=seed, run_id=run_id)
        try:
            if self.concurrent:  # every map call of the answer goes into the same wave
                request = request.model_copy(update={"map_concurrency": BATCH_MAP_CONCURRENCY})
            result = await retrieve_global(
                self.index, request, self.model, on_event=events.append, cache=self.cache, run_id=run_id, embedder=self.embedder,
                spending=self.spending,
            )
            limit = result.diagnostics.stopped_at_limit
            if limit is not None:
                raise SpendLimitReached(result.diagnostics.stopped_note or "", limit=limit, spent=self.spending.spent if self.spending else 0)
            record = AnswerRecord(
                **base, status=result.status, answer=result.answer, cost=cost_of(run_figures(events), method=request.method),
                support=await self.support_of(result.answer, method=request.method, result=result),
            )
        except SpendLimitReached:
            self.save_run(events, condition, question, seed)
            raise
        except GraphRAGError as exc:
            message = exc.message if isinstance(exc, BaseExceptionGroup) else str(exc)
            detail = describe_error(exc.exceptions[0]).splitlines()[0] if isinstance(exc, BaseExceptionGroup) and exc.exceptions else None
            record = AnswerRecord(
                **base, status=RunStatus.FAILED, error=message or type(exc).__name__, error_detail=detail,
                cost=cost_of(run_figures(events), method=request.method),
            )
        self.save_run(events, condition, question, seed)
        return record

    async def support_of(self, answer: str, *, method: str, result: GlobalSearchResult | None = None) -> SupportTally | None:
        """An answer's support check in counts, by the experiment's support judge (None without one)."""
        if self.support_judge is None:
            return None
        model = self.judge if self.support_judge == "model" else None
        return await answer_support(
            self.index, answer, self.support_judge, model=model, method=method, result=result, cache=self.cache, spending=self.spending
        )

    def save_run(self, events: list[Event], condition: Condition, question: EvalQuestion, seed: int) -> None:
        if self.run_store is not None and events:
            label = f"{EVALUATION_LABEL_PREFIX}{self.id[:8]} · {condition.name} · {question.id} · seed {seed}"
            self.run_store.save(RunRecord.from_events(events, index_name=self.index.name or "", index_path=self.index_path, label=label))

    # -- 2. claims ---------------------------------------------------------------------------------

    async def claims(self, answers: list[AnswerRecord]) -> list[AnswerRecord]:
        """The answers with their claims (failed answers, and all once stopped, as they were)."""
        done = 0

        async def one(record: AnswerRecord) -> AnswerRecord:
            nonlocal done
            if record.status == RunStatus.FAILED:
                return record
            listed = await self.claims_of(record)
            done += 1
            self.emit(EvalProgress(stage="claims", done=done, total=len(answers), label=f"{record.condition} · {record.question_id}"))
            return listed

        return [listed or record for record, listed in zip(answers, await self.each(answers, one))]

    async def claims_of(self, record: AnswerRecord) -> AnswerRecord:
        """One answer with its claims, from the store or the judge; a failure is recorded on it."""
        key = claims_key(self.judge, record.answer)
        kept = self.store.get_claims(key) if self.store is not None else None
        if kept is not None:
            return record.model_copy(update={"claims": kept})
        try:
            claims, _ = await extract_claims(record.answer, self.judge, spending=self.spending)
        except GraphRAGError as exc:
            return record.model_copy(update={"claims": None, "claims_error": describe_error(exc)})
        if self.store is not None:
            self.store.put_claims(key, claims)
        return record.model_copy(update={"claims": claims})

    # -- 3. judgments ------------------------------------------------------------------------------

    async def judgments(self, answers: list[AnswerRecord]) -> list[JudgmentRecord]:
        """Every judgment of the spec (:meth:`ExperimentSpec.judgment_jobs`), in its order."""
        by_key = {(a.condition, a.question_id, a.seed): a for a in answers}
        texts = {q.id: q.question for q in self.spec.questions}
        jobs = self.spec.judgment_jobs()
        done = 0

        async def one(job: JudgmentJob) -> JudgmentRecord:
            nonlocal done
            a, b = by_key.get((job.row, job.question_id, job.seed_a)), by_key.get((job.col, job.question_id, job.seed_b))
            judged = await self.judge_one(job, texts[job.question_id], a, b)
            done += 1
            self.emit(EvalProgress(stage="judgments", done=done, total=len(jobs), label=f"{job.row} vs {job.col} · {job.question_id}"))
            return judged

        return [judged for judged in await self.each(jobs, one) if judged is not None]

    async def judge_one(self, job: JudgmentJob, question: str, a: AnswerRecord | None, b: AnswerRecord | None) -> JudgmentRecord:
        """One pair judged, or skipped with the reason when an answer is missing or failed."""
        if a is None or b is None or a.status == RunStatus.FAILED or b.status == RunStatus.FAILED:
            failed = [f"{r.condition} seed {r.seed}" for r in (a, b) if r is not None and r.status == RunStatus.FAILED]
            return JudgmentRecord(**job._asdict(), skipped=f"answer failed: {', '.join(failed)}" if failed else "answer missing")
        if a.status == RunStatus.NO_RESULTS and b.status == RunStatus.NO_RESULTS:
            return JudgmentRecord(**job._asdict(), skipped=f"{UNANSWERED_SKIP}: neither answer found anything to say (no results)")
        judgment = await judge_pair(
            question, a.answer, b.answer, self.judge, criteria=self.spec.criteria, repeats=self.spec.repeats, store=self.store, spending=self.spending,
            **({"concurrency": BATCH_MAP_CONCURRENCY} if self.concurrent else {}),
        )
        return JudgmentRecord(**job._asdict(), judgment=judgment)

    # -- the result --------------------------------------------------------------------------------

    def result(self, answers: list[AnswerRecord], judgments: list[JudgmentRecord]) -> ExperimentResult:
        calls = [c for j in judgments if j.judgment is not None for c in j.judgment.calls]
        return ExperimentResult(
            id=self.id,
            index_name=self.index.name or "",
            index_path=self.index_path,
            model=model_identity(self.model),
            judge=model_identity(self.judge),
            heuristic_judge=is_heuristic(self.judge),
            ranker=self.ranker,
            spec=self.spec,
            answers=answers,
            judgments=judgments,
            win_rates=compute_win_rates(self.spec, judgments),
            costs=compute_costs(self.spec, answers),
            claims=compute_claim_summaries(self.spec, answers),
            support_judge=self.support_judge,
            supported_shares=compute_support_shares(self.spec, answers, self.support_judge) if self.support_judge else [],
            judge_calls=len(calls),
            judge_calls_failed=sum(1 for c in calls if not c.ok),
            duration_s=time.monotonic() - self.started,
            stopped=self.stopped,
            stop_reason=self.stop_reason,
        )


UNANSWERED_SKIP = "unanswered"
"""How a judgment skipped because both answers are unanswered begins its ``skipped`` reason."""


def cost_of(figures: RunFigures, *, method: str = "global") -> AnswerCost:
    """An answer's cost, read from its run's figures (finished or failed alike): rating calls and
    their reported prompt tokens; a lazy answer's expansion and relevance tests at their planned
    prompt estimates (a cached one counted as a call, so the cost does not depend on what ran
    before); every map batch (a cached one too) at its planned prompt estimate; the reduce's attempts at its planned prompt; the units it read (summaries, the
    source chunks it mapped, or for ``vector`` those packed into its prompt) and the embedding
    model's tokens; and, apart, the tokens the endpoint reported for the calls the run made
    (``reported_tokens``)."""
    calls: dict[str, int] = {}
    tokens: dict[str, int] = {}
    if figures.rating_calls:
        calls["rate"], tokens["rate"] = figures.rating_calls, figures.rating_usage.prompt_tokens
    if method == LAZY:  # the expansion and the relevance tests at their planned prompts (cache answers counted as calls)
        calls["expand"], tokens["expand"] = figures.expansion_calls + figures.expansion_cache_hits, figures.expansion_prompt_tokens
        calls["relevance"], tokens["relevance"] = figures.relevance_tests, figures.relevance_prompt_tokens
    calls["map"] = figures.map_calls + figures.cache_hits
    calls["reduce"] = figures.reduce_calls
    tokens["map"] = figures.map_prompt_tokens
    tokens["reduce"] = (figures.reduce_prompt_tokens or 0) if figures.reduce_calls else 0
    if method == VECTOR:
        del calls["map"], tokens["map"]
        units = figures.selected_answers
    else:
        units = figures.summaries or 0
    return AnswerCost(
        summaries=(figures.summaries or 0) if method == GLOBAL else 0, batches=figures.batches, calls=calls, prompt_tokens=tokens,
        units=units, embedding_tokens=figures.embedding_usage.prompt_tokens, reported_tokens=figures.usage.total_tokens,
        cached_tokens=figures.usage.cached_tokens,
    )


__all__ = ["UNANSWERED_SKIP", "EvalProgress", "ProgressSink", "cost_of", "estimate_experiment", "run_experiment"]
