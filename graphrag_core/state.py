"""A run's state as a fold over its events: ``state = state.apply(event)`` for each event.

This is the engine's one fold of a run's events. The app draws live runs from this state, a
saved event list redraws a finished run with no model (:meth:`RunState.replay`), the engine
builds a failed run's ``RunFailed`` from it, and a run's figures
(:func:`graphrag_core.figures.run_figures`) are read off it, so none of them can disagree.
Folding is cheap and never calls anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from .events import (
    BatchesPlanned,
    ChunksRanked,
    CommunityRated,
    Event,
    HierarchyNode,
    MapBatchCached,
    MapBatchFailed,
    MapBatchRetried,
    MapBatchStarted,
    MapBatchSucceeded,
    ModelNotice,
    PartialAnswerStarted,
    QueryExpanded,
    RelevanceFinished,
    RelevanceStarted,
    RelevanceTested,
    RunWarning,
    ReduceAnswerDelta,
    ReduceFailed,
    ReduceRetried,
    ReduceSelection,
    ReduceStarted,
    RunFailed,
    RunFinished,
    RunStarted,
    SelectionFinished,
    SelectionRound,
    SelectionStarted,
    SummariesSelected,
    with_cache_hits,
)
from .errors import INTERRUPTED_ERROR_TYPE, STOPPED_MESSAGE, RunCancelled
from .lazy.state import RelevanceState
from .llm.base import TokenUsage
from .request import GlobalSearchRequest
from .results import GlobalSearchResult, ReduceCandidate
from .status import RunStatus

_SPENDING = (MapBatchRetried, MapBatchSucceeded, MapBatchFailed, ReduceRetried, ReduceFailed, CommunityRated, QueryExpanded, RelevanceTested)
"""The events that report an attempt's token usage (a failed attempt's tokens were spent too)."""

class BatchStatus(StrEnum):
    """Where one map batch stands in a run's fold."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    """Answered on the first attempt, by the model or the map cache."""
    RETRIED = "retried"
    """Answered after a failed attempt."""
    FAILED = "failed"
    CANCELLED = "cancelled"
    """Still running when the run was stopped."""

    @property
    def word(self) -> str:
        """The word people read for this state: a batch still running when its run was stopped
        reads ``stopped``, as its run does (:attr:`RunStatus.word`)."""
        return "stopped" if self is BatchStatus.CANCELLED else "done after a retry" if self is BatchStatus.RETRIED else self.value

    @property
    def succeeded(self) -> bool:
        """Whether the batch has its answer (``DONE`` or ``RETRIED``)."""
        return self in (BatchStatus.DONE, BatchStatus.RETRIED)

    @property
    def finished(self) -> bool:
        return self not in (BatchStatus.PENDING, BatchStatus.RUNNING)


class CallOutcome(StrEnum):
    """How one call of a map batch (or the reduce) went, as far as the events tell."""

    PENDING = "pending"
    """No attempt yet (a batch's record before its first call)."""
    RUNNING = "running"
    OK = "ok"
    ERROR = "error"
    CACHED = "cached"
    """The map cache answered: no call reached the model."""
    CANCELLED = "cancelled"


@dataclass
class CallSpan:
    """One model call of a batch on the run's clock; ``end`` is None while it runs."""

    batch_index: int
    attempt: int
    start: float
    end: float | None = None
    outcome: CallOutcome = CallOutcome.RUNNING


@dataclass
class BatchState:
    index: int
    community_ids: tuple[str, ...]
    token_estimate: int
    status: BatchStatus = BatchStatus.PENDING
    attempts: int = 0
    usefulness: float | None = None
    answer: str | None = None
    errors: list[str] = field(default_factory=list)
    error_type: str | None = None
    """Set when the batch failed every attempt (``MapBatchFailed``); its last error is ``errors[-1]``."""
    cached: bool = False
    """Answered from the map cache (``MapBatchCached``): no model call, no tokens."""
    duration_s: float | None = None
    usage: TokenUsage | None = None
    """The succeeding attempt's reported usage (a cached answer has none)."""

    @property
    def finished(self) -> bool:
        return self.status.finished


WalkFate = Literal["queued", "kept", "pruned", "superseded", "skipped", "failed", "unreached"]
"""A community's place in a dynamic selection as it runs: ``queued`` is in the current round's
frontier, not yet rated; the others are the fates of ``results.CommunityFate``."""


@dataclass
class SelectionState:
    """The walk of a dynamic selection, folded from its events (empty for a fixed level).

    ``fates`` holds only communities the walk has touched until it finishes; then every
    community of the index (the others ``unreached``). ``ratings`` keeps each community's last
    rating event (rating, repeats, reason, cost).
    """

    active: bool = False
    finished: bool = False
    round: int | None = None
    fates: dict[str, WalkFate] = field(default_factory=dict)
    ratings: dict[str, CommunityRated] = field(default_factory=dict)
    kept_ids: tuple[str, ...] = ()
    calls: int = 0
    cache_hits: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    cached_prompt_tokens: int = 0
    """The planned prompt estimate of the ratings the cache answered."""
    rating_threshold: int | None = None
    community_count: int | None = None
    hierarchy: tuple[HierarchyNode, ...] = ()

    def apply(self, event: SelectionStarted | SelectionRound | CommunityRated | SelectionFinished) -> None:
        match event:
            case SelectionStarted():
                self.active, self.rating_threshold, self.community_count = True, event.rating_threshold, event.community_count
                self.hierarchy = event.hierarchy
            case SelectionRound():
                self.round = event.round
                for community_id in event.skipped_ids:
                    self.fates[community_id] = "skipped"
                for community_id in event.community_ids:
                    self.fates[community_id] = "queued"
            case CommunityRated():
                self.ratings[event.community_id] = event
                self.fates[event.community_id] = event.fate
                if event.superseded_id is not None:
                    self.fates[event.superseded_id] = "superseded"
                self.calls += event.calls
                self.cache_hits += event.cache_hits
                self.usage = self.usage + event.usage
                self.cached_prompt_tokens += event.cached_prompt_tokens
            case SelectionFinished():
                self.finished, self.kept_ids = True, event.kept_ids
                self.fates.update(event.fates)
                self.calls, self.cache_hits, self.usage = event.calls, event.cache_hits, event.usage

    @property
    def rated_count(self) -> int:
        return len(self.ratings)

    def fate_of(self, community_id: str) -> WalkFate:
        """A community's fate so far: ``unreached`` until the walk touches it."""
        return self.fates.get(community_id, "unreached")

    def counts(self) -> dict[str, int]:
        """How many communities have each fate so far."""
        totals: dict[str, int] = {}
        for fate in self.fates.values():
            totals[fate] = totals.get(fate, 0) + 1
        return totals


def unfinished_error(run_error: str) -> str:
    """What a batch (or a call) still in flight when its run failed says instead of an error
    of its own: the run's end."""
    return f"not finished: the run ended while it was in flight ({run_error})"


def _call_end(event: MapBatchRetried | MapBatchSucceeded | MapBatchFailed) -> float:
    """When a map call ended: its own end time where the event carries it (the event is emitted
    after the call's slot went to the next call), else the event's time."""
    return event.call_ended_at if event.call_ended_at is not None else event.at


@dataclass
class RunState:
    """Everything a page needs to draw a run, live or replayed."""

    run_id: str | None = None
    request: GlobalSearchRequest | None = None
    seed: int | None = None
    model: str | None = None
    tokenizer: str | None = None
    status: RunStatus | None = None
    """``None`` before ``RunStarted``, then ``RUNNING``; once the run ended, its result's status
    (``RunFinished``), or ``CANCELLED``, ``INTERRUPTED`` or ``FAILED`` (``RunFailed``)."""
    phase: Literal["idle", "selecting", "map", "reduce", "done"] = "idle"
    community_level: int | Literal["leaf", "dynamic"] | None = None
    """The request's level, then the level the summaries were selected at (``dynamic`` too)."""
    summary_count: int | None = None
    selected_community_ids: tuple[str, ...] = ()
    batches: list[BatchState] = field(default_factory=list)
    concurrency: int | None = None
    map_prompt_budget: int | None = None
    calls: list[CallSpan] = field(default_factory=list)
    candidates: list[ReduceCandidate] = field(default_factory=list)
    reduce_prompt_budget: int | None = None
    reduce_strategy: str | None = None
    reduce_prompt_tokens: int | None = None
    selection: SelectionState = field(default_factory=SelectionState)
    ranking: ChunksRanked | None = None
    """How a ``vector`` run ranked the source chunks (None for the other methods)."""
    relevance: RelevanceState = field(default_factory=RelevanceState)
    """A ``lazy`` run's query expansion and relevance tests (empty for the other methods)."""
    reduce_attempts: int = 0
    notices: list[str] = field(default_factory=list)
    """What the model adapter said about its endpoint during the run (each once)."""
    warnings: list[str] = field(default_factory=list)
    """What went wrong without stopping the run (``RunWarning``: e.g. a map cache it could not use)."""
    answer_draft: str = ""
    """The final answer as written so far by a streaming reduce (its current attempt)."""
    reduce_errors: list[str] = field(default_factory=list)
    usage: TokenUsage = field(default_factory=TokenUsage)
    """Every token reported by the run's model calls so far (rating, map and reduce), failed
    attempts included; the result's total once it finished, the ``RunFailed`` figure once it failed."""
    map_calls: int = 0
    """Map attempts that reached the model so far (a cache hit is no attempt: ``MapBatchCached``)."""
    reduce_calls: int = 0
    """Reduce attempts started so far."""
    result: GlobalSearchResult | None = None
    error: str | None = None
    error_type: str | None = None
    elapsed_s: float = 0.0
    stopped_early: bool = False
    """The run was stopped and goes on (or went on) to answer from what it read
    (``PartialAnswerStarted``): its batches that had not ended stay ``cancelled``."""
    events: list[Event] = field(default_factory=list)

    @classmethod
    def replay(cls, events: Iterable[Event]) -> "RunState":
        """The state of a whole event list, stored or live (a cache hit recorded the old way, as
        a start and a cached success, is read as the ``MapBatchCached`` it stands for)."""
        state = cls()
        for event in with_cache_hits(events):
            state.apply(event)
        return state

    @property
    def model_calls(self) -> int:
        """Attempts that reached the model so far: rating (or a lazy run's expansion and relevance
        tests), map and reduce (cache hits excluded)."""
        return self.selection.calls + self.relevance.model_calls + self.map_calls + self.reduce_calls

    @property
    def finished_batches(self) -> int:
        return sum(1 for b in self.batches if b.finished)

    @property
    def answerable_from_read(self) -> bool:
        """Whether this run was stopped (or interrupted) before its answer with at least one
        useful map answer finished, so a reduce over what it read can still answer it
        (:func:`graphrag_core.search.answer_from_read`)."""
        return (
            self.status in (RunStatus.CANCELLED, RunStatus.INTERRUPTED)
            and self.result is None
            and any(b.status.succeeded and (b.usefulness or 0) > 0 for b in self.batches)
        )

    @property
    def progress(self) -> float:
        """Share of the work done, 0-1: map batches, with the reduce as the last step."""
        if self.result is not None:
            return 1.0
        if not self.batches:
            return 0.0
        return min(1.0, self.finished_batches / (len(self.batches) + 1))

    def _open_call(self, index: int) -> CallSpan | None:
        for span in reversed(self.calls):
            if span.batch_index == index and span.end is None:
                return span
        return None

    def _close_call(self, index: int, at: float, outcome: CallOutcome) -> None:
        span = self._open_call(index)
        if span is not None:
            span.end = at
            span.outcome = outcome

    def failure(self, *, at: float, error: str, error_type: str, cancelled: bool = False) -> RunFailed:
        """The ``RunFailed`` that ends this run now, with the figures of what it did and spent
        (:meth:`stopped` for a run its user stopped)."""
        return RunFailed(
            at=at,
            error=error,
            error_type=error_type,
            cancelled=cancelled,
            usage=self.usage,
            model_calls=self.model_calls,
            batches_done=sum(1 for b in self.batches if b.status.succeeded),
            batches_failed=sum(1 for b in self.batches if b.status is BatchStatus.FAILED),
        )

    def stopped(self, *, at: float, reason: str = STOPPED_MESSAGE, error_type: str = RunCancelled.__name__) -> RunFailed:
        """The ``RunFailed`` that ends this run now because it was stopped: the one spelling of a
        stopped run (``cancelled``; by its user, error type :class:`~graphrag_core.errors.RunCancelled`,
        or at its spending limit, :class:`~graphrag_core.errors.SpendLimitReached` with the limit
        as the ``reason``)."""
        return self.failure(at=at, error=reason, error_type=error_type, cancelled=True)

    def apply(self, event: Event) -> "RunState":
        """Fold one event in; returns self so folds chain."""
        self.events.append(event)
        self.elapsed_s = max(self.elapsed_s, event.at)
        if isinstance(event, _SPENDING):
            if event.usage is not None:  # a failed attempt's tokens were spent too
                self.usage = self.usage + event.usage
        match event:
            case RunStarted():
                self.run_id, self.request, self.seed = event.run_id, event.request, event.seed
                self.community_level = event.request.community_level
                self.model, self.tokenizer = event.model, event.tokenizer
                self.status, self.phase = RunStatus.RUNNING, "selecting"
            case SelectionStarted() | SelectionRound() | CommunityRated() | SelectionFinished():
                self.selection.apply(event)
            case ChunksRanked():
                self.ranking = event
            case QueryExpanded() | RelevanceStarted() | RelevanceTested() | RelevanceFinished():
                self.relevance.apply(event)
            case SummariesSelected():
                self.summary_count, self.community_level = event.count, event.community_level
                self.selected_community_ids = event.community_ids
            case BatchesPlanned():
                self.batches = [BatchState(b.index, b.community_ids, b.token_estimate) for b in event.batches]
                self.concurrency, self.map_prompt_budget = event.concurrency, event.map_prompt_budget
                self.phase = "map"
            case MapBatchStarted() | MapBatchRetried() | MapBatchCached() | MapBatchSucceeded() | MapBatchFailed():
                self._apply_map_batch(event)
            case ModelNotice():
                self.notices.append(event.message)
            case RunWarning():
                self.warnings.append(event.message)
            case ReduceSelection() | ReduceStarted() | ReduceAnswerDelta() | ReduceRetried() | ReduceFailed() | PartialAnswerStarted():
                self._apply_reduce(event)
            case RunFinished():
                self._apply_finished(event)
            case RunFailed():
                self._apply_failed(event)
        return self

    def _apply_map_batch(self, event: MapBatchStarted | MapBatchRetried | MapBatchCached | MapBatchSucceeded | MapBatchFailed) -> None:
        """One map batch's event: its status, attempts, answer and call span."""
        batch = self.batches[event.batch_index]
        match event:
            case MapBatchStarted():
                batch.attempts = max(batch.attempts, event.attempt)
                self.map_calls += 1
                if batch.status is BatchStatus.PENDING:
                    batch.status = BatchStatus.RUNNING
                self.calls.append(CallSpan(event.batch_index, event.attempt, event.at))
            case MapBatchRetried():
                batch.errors.append(event.error)
                batch.status = BatchStatus.RUNNING
                self._close_call(event.batch_index, _call_end(event), CallOutcome.ERROR)
            case MapBatchCached():
                batch.status, batch.attempts, batch.cached = BatchStatus.DONE, 1, True
                batch.usefulness, batch.answer, batch.duration_s = event.usefulness, event.answer, event.duration_s
                self.calls.append(CallSpan(event.batch_index, 1, event.at - event.duration_s, event.at, CallOutcome.CACHED))
            case MapBatchSucceeded():
                batch.status = BatchStatus.RETRIED if event.attempt > 1 else BatchStatus.DONE
                batch.usefulness, batch.answer = event.usefulness, event.answer
                batch.duration_s, batch.usage = event.duration_s, event.usage
                self._close_call(event.batch_index, _call_end(event), CallOutcome.OK)
            case MapBatchFailed():
                batch.status, batch.error_type = BatchStatus.FAILED, event.error_type
                batch.attempts = event.attempts
                if not batch.errors or batch.errors[-1] != event.error or len(batch.errors) < event.attempts:
                    batch.errors.append(event.error)
                self._close_call(event.batch_index, _call_end(event), CallOutcome.ERROR)

    def _apply_reduce(self, event: ReduceSelection | ReduceStarted | ReduceAnswerDelta | ReduceRetried | ReduceFailed | PartialAnswerStarted) -> None:
        """The reduce's event: its candidates, its attempts and the answer drafted so far."""
        match event:
            case ReduceSelection():
                self.candidates = list(event.candidates)
                self.reduce_prompt_budget, self.reduce_strategy = event.reduce_prompt_budget, event.strategy
                self.phase = "reduce"
            case ReduceStarted():
                self.reduce_prompt_tokens = event.prompt_tokens
                self.reduce_attempts = max(self.reduce_attempts, event.attempt)
                self.reduce_calls += 1
                self.answer_draft = ""
            case ReduceAnswerDelta():
                if event.attempt == self.reduce_attempts:
                    self.answer_draft += event.text
            case ReduceRetried() | ReduceFailed():
                self.reduce_errors.append(event.error)
                self.answer_draft = ""
            case PartialAnswerStarted():
                self.status, self.phase, self.stopped_early = RunStatus.RUNNING, "reduce", True
                self.error = self.error_type = None

    def _apply_finished(self, event: RunFinished) -> None:
        self.result = event.result
        self.usage = event.result.diagnostics.usage  # the reduce's usage arrives here
        self.summary_count = event.result.diagnostics.summary_count
        self.community_level = event.result.diagnostics.community_level
        self.status, self.phase = RunStatus(event.result.status), "done"
        if not self.candidates:
            self.candidates = list(event.result.reduce_candidates)

    def _apply_failed(self, event: RunFailed) -> None:
        """The end of a failed, stopped or interrupted run: calls still in flight end here; their
        batches never finished."""
        for span in self.calls:
            if span.end is None:
                span.end, span.outcome = event.at, CallOutcome.CANCELLED if event.cancelled else CallOutcome.ERROR
        for batch in self.batches:
            if batch.status is BatchStatus.RUNNING:
                batch.status = BatchStatus.CANCELLED if event.cancelled else BatchStatus.FAILED
                if not event.cancelled:
                    batch.errors.append(unfinished_error(event.error))
        if event.cancelled:
            self.status = RunStatus.CANCELLED
        elif event.error_type == INTERRUPTED_ERROR_TYPE:
            self.status = RunStatus.INTERRUPTED
        else:
            self.status = RunStatus.FAILED
        self.error, self.error_type = event.error, event.error_type
        if event.usage is not None:  # the engine's own count of what the run spent
            self.usage = event.usage
        self.phase = "done"
