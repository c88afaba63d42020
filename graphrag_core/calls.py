"""What each model call of a run sent and got back, read from the run's events (no model).

:func:`batch_call` gives one map batch's record: the verbatim messages, every attempt with its
raw reply, its parse result or error, usage and latency, and what the reduce did with the
answer. :func:`reduce_call` does the same for the reduce. :func:`why_no_answer` says, for a run
that ended ``no_results``, ``partial`` or failed, what went wrong, batch by batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .events import (
    BatchesPlanned,
    ChunksRanked,
    Event,
    MapBatchCached,
    MapBatchFailed,
    MapBatchRetried,
    MapBatchStarted,
    MapBatchSucceeded,
    ReduceReplied,
    ReduceSelection,
    ReduceStarted,
    RunFailed,
    RunFinished,
    with_cache_hits,
)
from .errors import CUT_REPLY_LEAD, CallTimedOut, ReplyCutError, RetryableModelError, SpendLimitReached
from .llm.base import ChatMessage, TokenUsage
from .results import ReduceCandidate
from .state import CallOutcome, unfinished_error
from .status import RunStatus
from .wording import counted



class _Value(BaseModel):
    model_config = ConfigDict(frozen=True)


AttemptKind = Literal["parsed", "cached", "cut", "rejected", "timed_out", "failed", "cancelled", "running"]
"""What became of one attempt, as people count them: its reply parsed (or came from the cache);
it was cut at the output reserve; it was rejected (it came back, but not as the answer asked
for); its call timed out; it failed otherwise (no reply); it was cancelled; it is still running."""


class CallAttempt(_Value):
    """One attempt of a call: what came back and how long it took (``None`` where unknown)."""

    attempt: int
    started_at: float | None = None
    duration_s: float | None = None
    outcome: CallOutcome = CallOutcome.RUNNING
    raw_reply: str | None = None
    error: str | None = None
    error_type: str | None = None
    """The failed attempt's error class, where the run recorded it."""
    answer: str | None = None
    usefulness: float | None = None
    usage: TokenUsage | None = None

    @property
    def kind(self) -> AttemptKind:
        """What became of this attempt (:data:`AttemptKind`): from its error class where the run
        recorded one, else (older runs) from its error's words and whether a reply came back."""
        if self.outcome is CallOutcome.OK:
            return "parsed"
        if self.outcome is CallOutcome.CACHED:
            return "cached"
        if self.outcome is CallOutcome.CANCELLED:
            return "cancelled"
        if self.outcome is not CallOutcome.ERROR:
            return "running"
        error = self.error or ""
        if self.error_type == ReplyCutError.__name__ or (self.error_type is None and error.startswith(CUT_REPLY_LEAD)):
            return "cut"
        worded = self.error_type in (None, RetryableModelError.__name__)  # recorded before timeouts had their own class
        if self.error_type == CallTimedOut.__name__ or (worded and self.raw_reply is None and " timed out" in error):
            return "timed_out"
        return "rejected" if self.raw_reply is not None else "failed"


class BatchCall(_Value):
    """One map batch: its communities, the messages it sent, its attempts and its reduce fate."""

    batch_index: int
    community_ids: tuple[str, ...]
    token_estimate: int
    messages: tuple[ChatMessage, ...] | None
    attempts: tuple[CallAttempt, ...]
    candidate: ReduceCandidate | None = None
    """What the reduce selection did with this batch's answer (``None``: no answer reached it)."""

    @property
    def status(self) -> CallOutcome:
        """The last attempt's outcome (``PENDING`` before the first)."""
        return self.attempts[-1].outcome if self.attempts else CallOutcome.PENDING


class ReduceCall(_Value):
    messages: tuple[ChatMessage, ...] | None
    prompt_tokens: int | None
    answer_count: int
    attempts: tuple[CallAttempt, ...]
    answer: str | None = None


def _planned(events: Sequence[Event]) -> BatchesPlanned | None:
    return next((e for e in events if isinstance(e, BatchesPlanned)), None)


def batch_call(events: Iterable[Event], batch_index: int) -> BatchCall | None:
    """The record of map batch ``batch_index``; ``None`` when the run planned no such batch."""
    events = list(events)
    planned = _planned(events)
    if planned is None or not 0 <= batch_index < len(planned.batches):
        return None
    plan = planned.batches[batch_index]
    messages: tuple[ChatMessage, ...] | None = None
    attempts: dict[int, dict] = {}
    candidate: ReduceCandidate | None = None
    ended_at: float | None = None
    cancelled = False
    run_error = ""
    for event in with_cache_hits(events):
        if isinstance(event, MapBatchStarted) and event.batch_index == batch_index:
            if event.messages is not None and messages is None:
                messages = event.messages
            attempts[event.attempt] = {"attempt": event.attempt, "started_at": event.at}
        elif isinstance(event, MapBatchCached) and event.batch_index == batch_index:
            messages = event.messages
            attempts[1] = {
                "attempt": 1, "started_at": event.at - event.duration_s, "duration_s": event.duration_s, "outcome": CallOutcome.CACHED,
                "raw_reply": event.raw_reply, "answer": event.answer, "usefulness": event.usefulness,
            }
        elif isinstance(event, MapBatchRetried) and event.batch_index == batch_index:
            failed = attempts.setdefault(event.attempt - 1, {"attempt": event.attempt - 1})
            failed.update(outcome=CallOutcome.ERROR, error=event.error, error_type=event.error_type, raw_reply=event.raw_reply)
            if failed.get("started_at") is not None:
                failed["duration_s"] = event.at - failed["started_at"]
        elif isinstance(event, MapBatchSucceeded) and event.batch_index == batch_index:
            done = attempts.setdefault(event.attempt, {"attempt": event.attempt})
            done.update(
                outcome=CallOutcome.OK,
                raw_reply=event.raw_reply,
                answer=event.answer,
                usefulness=event.usefulness,
                usage=event.usage,
                duration_s=event.duration_s,
            )
        elif isinstance(event, MapBatchFailed) and event.batch_index == batch_index:
            last = attempts.setdefault(event.attempts, {"attempt": event.attempts})
            last.update(outcome=CallOutcome.ERROR, error=event.error, error_type=event.error_type, raw_reply=event.raw_reply)
            if last.get("started_at") is not None:
                last["duration_s"] = event.at - last["started_at"]
        elif isinstance(event, ReduceSelection):
            candidate = next((c for c in event.candidates if c.answer.batch_index == batch_index), None)
        elif isinstance(event, RunFinished) and candidate is None:
            candidate = next((c for c in event.result.reduce_candidates if c.answer.batch_index == batch_index), None)
        elif isinstance(event, RunFailed):
            ended_at, cancelled, run_error = event.at, event.cancelled, event.error
    records = []
    for number in sorted(attempts):
        data = attempts[number]
        if "outcome" not in data and ended_at is not None:
            data.update(outcome=CallOutcome.CANCELLED if cancelled else CallOutcome.ERROR)
            if not cancelled:
                data["error"] = unfinished_error(run_error)
            if data.get("started_at") is not None:
                data["duration_s"] = ended_at - data["started_at"]
        records.append(CallAttempt(**data))
    return BatchCall(
        batch_index=batch_index,
        community_ids=plan.community_ids,
        token_estimate=plan.token_estimate,
        messages=messages,
        attempts=tuple(records),
        candidate=candidate,
    )


def batch_calls(events: Iterable[Event]) -> list[BatchCall]:
    """Every map batch's record, in batch order, in one pass over the events (a 1,000-batch
    run is not read 1,000 times)."""
    events = list(events)
    planned = _planned(events)
    if planned is None:
        return []
    shared: list[Event] = [planned]
    per_batch: dict[int, list[Event]] = {i: [] for i in range(len(planned.batches))}
    for event in events:
        index = getattr(event, "batch_index", None)
        if isinstance(index, int) and index in per_batch:
            per_batch[index].append(event)
        elif isinstance(event, (ReduceSelection, RunFinished, RunFailed)):
            shared.append(event)
    return [call for i in per_batch if (call := batch_call([planned, *per_batch[i], *shared[1:]], i)) is not None]


def reduce_call(events: Iterable[Event]) -> ReduceCall | None:
    """The record of the reduce call; ``None`` when the run never reached it."""
    started: ReduceStarted | None = None  # the first attempt's (it carries the verbatim messages)
    starts = 0
    attempts: list[CallAttempt] = []
    answer: str | None = None
    for event in events:
        if isinstance(event, ReduceStarted):
            started = started or event
            starts += 1
        elif isinstance(event, ReduceReplied):
            attempts.append(
                CallAttempt(
                    attempt=event.attempt,
                    started_at=event.at - event.duration_s,
                    duration_s=event.duration_s,
                    outcome=CallOutcome.ERROR if event.error else CallOutcome.OK,
                    raw_reply=event.raw_reply,
                    error=event.error,
                    usage=event.usage,
                )
            )
        elif isinstance(event, RunFinished) and started is not None:
            answer = event.result.answer
        elif isinstance(event, RunFailed) and starts > len(attempts):  # the last attempt got no reply
            attempts.append(
                CallAttempt(attempt=len(attempts) + 1, outcome=CallOutcome.CANCELLED if event.cancelled else CallOutcome.ERROR, error=event.error)
            )
    if started is None:
        return None
    return ReduceCall(
        messages=started.messages, prompt_tokens=started.prompt_tokens, answer_count=started.answer_count, attempts=tuple(attempts), answer=answer
    )


class WhyItem(_Value):
    """One reason, with the batches it concerns (``text`` is a reply or error to show as is)."""

    reason: Literal[
        "stopped_early", "stopped_at_limit", "all_scores_zero", "cut_reply", "unparsed_reply", "timed_out", "failed_batch", "over_budget",
        "no_summaries", "no_relevant_chunks", "no_chunk_fits", "run_failed", "expansion_failed", "tests_failed",
    ]
    message: str
    batch_indexes: tuple[int, ...] = ()
    texts: tuple[str, ...] = ()


def _relevance_reasons(events: list[Event], *, mapped: bool, finished: bool) -> list[WhyItem]:
    """A lazy run's part of why it has no full answer: its expansion or tests that failed, and
    relevance tests that found nothing (then no batch was sent)."""
    from .events import QueryExpanded, RelevanceFinished, RelevanceTested

    items: list[WhyItem] = []
    expanded = next((e for e in events if isinstance(e, QueryExpanded)), None)
    if expanded is not None and expanded.error:
        items.append(WhyItem(reason="expansion_failed", message=f"The query expansion failed, so the question itself was the one subquery: {expanded.error}"))
    failed = [e for e in events if isinstance(e, RelevanceTested) and e.failed]
    if failed:
        items.append(WhyItem(reason="tests_failed", message=f"{len(failed):,} relevance tests failed every attempt: {failed[-1].errors[-1] if failed[-1].errors else 'no reply'}"))
    done = next((e for e in events if isinstance(e, RelevanceFinished)), None)
    if done is not None and finished and not mapped:
        ended = "the budget was spent" if done.reason == "budget" else "no candidate was left"
        items.append(
            WhyItem(
                reason="no_relevant_chunks",
                message=f"The relevance tests ({done.tests:,} of {done.relevance_budget:,}) found no relevant source chunk before {ended}, so no batch was sent.",
            )
        )
    return items


def why_no_answer(events: Iterable[Event]) -> list[WhyItem]:
    """Why a run has no (full) answer: for ``no_results``, ``partial`` and failed runs; else ``[]``."""
    events = list(events)
    ended = next((e for e in reversed(events) if isinstance(e, RunFinished | RunFailed)), None)
    finished = ended if isinstance(ended, RunFinished) else None
    failed = ended if isinstance(ended, RunFailed) else None  # a stop the run went on from is no end
    if finished is not None and finished.result.status == RunStatus.COMPLETED:
        return []
    planned = _planned(events)
    items: list[WhyItem] = []
    limit_stop = next((e for e in reversed(events) if isinstance(e, RunFailed) and e.cancelled and e.error_type == SpendLimitReached.__name__), None)
    if finished is not None and finished.result.diagnostics.stopped_early:
        d = finished.result.diagnostics
        why = f" {limit_stop.error}" if limit_stop is not None and d.stopped_at_limit is not None else ""
        items.append(WhyItem(reason="stopped_early", message=f"{d.stopped_note} {d.unread_batch_count:,} batches were not read.{why}"))
    ranked = next((e for e in events if isinstance(e, ChunksRanked)), None)
    if ranked is not None:  # naive RAG (the vector method): no map; the ranking or the packing left nothing
        if finished is not None and ranked.relevant_count == 0:
            items.append(WhyItem(reason="no_relevant_chunks", message=f"None of the {ranked.unit_count:,} source chunks was relevant to the question, so no call was made."))
        elif finished is not None:
            items.append(WhyItem(reason="no_chunk_fits", message="No relevant source chunk fit the reduce token budget, so no call was made."))
        if failed is not None:
            items.append(WhyItem(reason="run_failed", message=f"The run ended before its answer: {failed.error}"))
        return items
    items.extend(_relevance_reasons(events, mapped=planned is not None and bool(planned.batches), finished=finished is not None))
    if planned is None or not planned.batches:
        if finished is not None and not any(item.reason == "no_relevant_chunks" for item in items):
            items.append(WhyItem(reason="no_summaries", message="The selection held no community summaries, so no batch was sent."))
        if failed is not None and failed is limit_stop:
            items.append(WhyItem(reason="stopped_at_limit", message=_stopped_at_limit(failed, events)))
        elif failed is not None:
            items.append(WhyItem(reason="run_failed", message=_ended(failed, before_map=True)))
        return items

    calls = batch_calls(events)
    scores = {c.batch_index: a.usefulness for c in calls if c for a in c.attempts if a.usefulness is not None}
    tried = [(c.batch_index, a) for c in calls if c for a in c.attempts]
    cut = [(i, a) for i, a in tried if a.kind == "cut"]
    unparsed = [(i, a) for i, a in tried if a.kind == "rejected"]
    timed_out = [(i, a) for i, a in tried if a.kind == "timed_out"]
    hard_failed = [c.batch_index for c in calls if c and c.attempts and c.attempts[-1].outcome is CallOutcome.ERROR]
    if scores and all(score <= 0 for score in scores.values()):
        items.append(
            WhyItem(
                reason="all_scores_zero",
                message=f"Every answered batch ({len(scores)}) scored usefulness 0: the model found nothing relevant, so nothing went to the reduce.",
                batch_indexes=tuple(sorted(scores)),
            )
        )
    if cut:
        were = "was cut at the output reserve before it was complete (it was" if len(cut) == 1 else "were cut at the output reserve before they were complete (each was"
        items.append(_attempts_item("cut_reply", f"{counted(len(cut), 'reply')} {were} retried asking for a shorter answer).", cut))
    if unparsed:
        items.append(_attempts_item("unparsed_reply", f"{counted(len(unparsed), 'reply')} did not parse as a map answer.", unparsed, replies=True))
    if timed_out:
        items.append(_attempts_item("timed_out", f"{counted(len(timed_out), 'call')} timed out: {timed_out[0][1].error or ''}", timed_out))
    if hard_failed:
        items.append(
            WhyItem(
                reason="failed_batch",
                message=f"{len(hard_failed)} of {len(calls)} batches failed every attempt; their communities were not read.",
                batch_indexes=tuple(hard_failed),
                texts=tuple(f"batch {c.batch_index}: {c.attempts[-1].error}" for c in calls if c and c.batch_index in hard_failed),
            )
        )
    selection = next((e for e in reversed(events) if isinstance(e, ReduceSelection)), None)
    if selection is not None:
        over = [c for c in selection.candidates if c.fate in ("skipped", "not_tried")]
        if over:
            items.append(
                WhyItem(
                    reason="over_budget",
                    message=f"{len(over)} useful answers did not fit the reduce prompt budget ({selection.reduce_prompt_budget} tokens).",
                    batch_indexes=tuple(c.answer.batch_index for c in over if c.answer.batch_index is not None),
                )
            )
    if failed is not None and failed is limit_stop:
        items.append(WhyItem(reason="stopped_at_limit", message=_stopped_at_limit(failed, events)))
    elif failed is not None:
        items.append(WhyItem(reason="run_failed", message=_ended(failed, before_map=False)))
    return items


def _attempts_item(reason: str, message: str, attempts: Sequence[tuple[int, CallAttempt]], *, replies: bool = False) -> WhyItem:
    """A reason that concerns some attempts: their batches, and each one's error (and reply)."""
    return WhyItem(
        reason=reason,  # type: ignore[arg-type]
        message=message,
        batch_indexes=tuple(dict.fromkeys(i for i, _ in attempts)),
        texts=tuple(f"batch {i}, attempt {a.attempt}: {a.error}" + (f"\n{a.raw_reply}" if replies else "") for i, a in attempts),
    )


def _stopped_at_limit(stop: RunFailed, events: Sequence[Event]) -> str:
    """Why a run its spending limit stopped has no answer: the stop's own sentence (what the next
    call needed, what was held back), then what had been read."""
    answered = [e for e in events if isinstance(e, MapBatchSucceeded | MapBatchCached)]
    if not answered:
        read = "nothing was read, so there is no answer."
    else:
        read = f"the {len(answered):,} batches read had no useful answer, so there is no answer."
    return f"{stop.error.rstrip('.')}; {read}"


def _ended(failed: RunFailed, *, before_map: bool) -> str:
    """How a run that produced no result ended, in words: stopped by its user, or failed with
    which error (never an exception's class name alone)."""
    if failed.cancelled:
        return "The run was stopped before its map began." if before_map else "The run was stopped before it produced an answer; the batches it finished are kept."
    return f"The run failed{' before the map' if before_map else ''}: {failed.error}"


__all__ = ["AttemptKind", "BatchCall", "CallAttempt", "ReduceCall", "WhyItem", "batch_call", "batch_calls", "reduce_call", "why_no_answer"]
