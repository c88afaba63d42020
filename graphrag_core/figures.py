"""A run's figures as one function of its events: :func:`run_figures`.

Every place that reports how a run went (the run history, the Markdown export, sweeps, the
compare page, the diagnostics panel, the command line) reads a :class:`RunFigures`, so they
agree for completed, partial, failed, stopped and interrupted runs alike.

Invariants:

- a model call is an attempt that reached the model; a cache hit is never counted as one
  (``calls_if_uncached = map_calls + cache_hits + reduce_calls``);
- figures the events carry (batches, attempts, cache hits, reported token usage of the map
  calls) are counted from the events; figures only the result carries (the reduce's calls and
  usage) come from ``RunFinished``, and for a run cut short in its reduce ``reduce_calls``
  counts the reduces started (at least one call each);
- a later event kind adds its own fields here (and a ``case`` in :func:`run_figures`), so every
  reader picks it up.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .citations import cited_community_ids
from .errors import INTERRUPTED_ERROR_TYPE, STOPPED_MESSAGE
from .events import (
    BatchesPlanned,
    CommunityRated,
    Event,
    MapBatchFailed,
    MapBatchRetried,
    MapBatchStarted,
    MapBatchSucceeded,
    ReduceFailed,
    ReduceRetried,
    ReduceSelection,
    ReduceStarted,
    RunFailed,
    RunFinished,
    RunStarted,
    SummariesSelected,
)
from .llm.base import TokenUsage
from .results import BatchFailure, ReduceCandidate

RunOutcome = Literal["completed", "partial", "no_results", "failed", "cancelled", "running", "interrupted"]
"""How a run ended: a result's status, or ``failed``/``cancelled``, ``interrupted`` (its process
ended first), or ``running`` (cut short)."""



class RunFigures(BaseModel):
    """What a run did and spent, whatever way it ended (see the module's invariants)."""

    model_config = ConfigDict(frozen=True)

    outcome: RunOutcome = "running"
    run_id: str | None = None
    community_level: int | Literal["leaf", "dynamic"] | None = None
    seed: int | None = None
    summaries: int | None = None
    """Summaries selected at the level; ``None`` when the run stopped before selecting."""
    batches: int = 0
    batch_community_ids: tuple[tuple[str, ...], ...] = ()
    batch_token_estimates: tuple[int, ...] = ()
    succeeded_batches: int = 0
    failed_batches: int = 0
    cancelled_batches: int = 0
    retried_batches: int = 0
    """Batches that needed more than one attempt (whether they then succeeded or not)."""
    failures: tuple[BatchFailure, ...] = ()
    """The batches that failed every attempt, in batch order, with their last error."""
    map_calls: int = 0
    cache_hits: int = 0
    reduce_calls: int = 0
    rating_calls: int = 0
    """Dynamic selection's rating calls (cache hits apart), retries included."""
    rating_cache_hits: int = 0
    rating_usage: TokenUsage = Field(default_factory=TokenUsage)
    usage: TokenUsage = Field(default_factory=TokenUsage)
    """Token usage the model reported, over every call counted in ``model_calls``."""
    cached_prompt_tokens: int = 0
    """The planned prompt estimate of the batches answered from the cache: what they would have
    cost without it."""
    candidates: tuple[ReduceCandidate, ...] = ()
    reduce_prompt_tokens: int | None = None
    communities_behind: tuple[str, ...] = ()
    """The **behind** set: the communities of the map answers selected for the reduce (the
    result's ``community_ids``; see :mod:`.citations` for the three sets)."""
    communities_cited: tuple[str, ...] = ()
    """The **cited** set: the communities the answer cites, in order of first citation."""
    unsupported_citations: int = 0
    """Distinct cited ids not in the index or not behind the answer (the result's diagnostics)."""
    duration_s: float = 0.0
    error: str | None = None
    error_type: str | None = None

    # -- derived ----------------------------------------------------------------------------

    @property
    def finished_batches(self) -> int:
        return self.succeeded_batches + self.failed_batches + self.cancelled_batches

    @property
    def model_calls(self) -> int:
        """Calls that reached the model (retries included, cache hits not)."""
        return self.map_calls + self.reduce_calls + self.rating_calls

    @property
    def calls_if_uncached(self) -> int:
        """The calls the run would have made with no cache."""
        return self.model_calls + self.cache_hits + self.rating_cache_hits

    @property
    def map_prompt_tokens(self) -> int:
        """The planned prompt estimate of every map batch (each once)."""
        return sum(self.batch_token_estimates)

    @property
    def prompt_tokens(self) -> int:
        """The planned prompt estimate of what was sent: each map batch once, plus the reduce
        prompt when a reduce call was made (retries are not counted again), plus dynamic
        selection's rating prompts as the model reported them."""
        return self.map_prompt_tokens + ((self.reduce_prompt_tokens or 0) if self.reduce_calls else 0) + self.rating_usage.prompt_tokens

    @property
    def prompt_tokens_if_uncached(self) -> int:
        """Reported prompt tokens plus the planned estimate of the batches the cache answered."""
        return self.usage.prompt_tokens + self.cached_prompt_tokens

    def _fate_count(self, fate: str) -> int:
        return sum(1 for c in self.candidates if c.fate == fate)

    @property
    def selected_answers(self) -> int:
        return self._fate_count("selected")

    @property
    def skipped_answers(self) -> int:
        return self._fate_count("skipped")

    @property
    def dropped_answers(self) -> int:
        return self._fate_count("dropped")

    @property
    def not_tried_answers(self) -> int:
        return self._fate_count("not_tried")

    @property
    def stopped(self) -> bool:
        return self.outcome == "cancelled"


def run_figures(events: Iterable[Event]) -> RunFigures:
    """The figures of the run those events describe (finished or not); no model is called."""
    fields: dict[str, object] = {}
    estimates: list[int] = []
    community_ids: list[tuple[str, ...]] = []
    status: dict[int, str] = {}
    attempts: dict[int, int] = {}
    last_error: dict[int, str] = {}
    failures: dict[int, BatchFailure] = {}
    starts = hits = reduces = rating_calls = rating_hits = 0
    usage = rating_usage = TokenUsage()
    cached_tokens = 0
    outcome: RunOutcome = "running"
    at = 0.0
    for event in events:
        at = max(at, event.at)
        match event:
            case RunStarted():
                fields.update(run_id=event.run_id, seed=event.seed, community_level=event.request.community_level)
            case SummariesSelected():
                fields.update(summaries=event.count, community_level=event.community_level)
            case BatchesPlanned():
                community_ids = [b.community_ids for b in event.batches]
                estimates = [b.token_estimate for b in event.batches]
            case MapBatchStarted():
                starts += 1
                attempts[event.batch_index] = max(attempts.get(event.batch_index, 0), event.attempt)
                status.setdefault(event.batch_index, "running")
            case MapBatchRetried():
                last_error[event.batch_index] = event.error
                if event.usage is not None:  # a failed attempt's tokens were spent too
                    usage = usage + event.usage
            case MapBatchSucceeded():
                status[event.batch_index] = "succeeded"
                if event.cached:
                    hits += 1
                    if event.batch_index < len(estimates):
                        cached_tokens += estimates[event.batch_index]
                elif event.usage is not None:
                    usage = usage + event.usage
            case MapBatchFailed():
                status[event.batch_index] = "failed"
                if event.usage is not None:
                    usage = usage + event.usage
                attempts[event.batch_index] = event.attempts
                ids = community_ids[event.batch_index] if event.batch_index < len(community_ids) else ()
                failures[event.batch_index] = BatchFailure(
                    batch_index=event.batch_index, community_ids=ids, attempts=event.attempts,
                    error=event.error, error_type=event.error_type,
                )
            case CommunityRated():
                rating_calls += event.calls
                rating_hits += event.cache_hits
                rating_usage = rating_usage + event.usage
                usage = usage + event.usage
            case ReduceSelection():
                fields.update(candidates=tuple(event.candidates))
            case ReduceStarted():
                reduces += 1
                fields.update(reduce_prompt_tokens=event.prompt_tokens)
            case ReduceRetried() | ReduceFailed():
                if event.usage is not None:
                    usage = usage + event.usage
            case RunFinished():
                result, d = event.result, event.result.diagnostics
                outcome = result.status
                reduces = d.reduce_calls
                usage = d.usage  # the map calls' usage, the reduce's and the rating's, as the run added them
                rating_calls, rating_hits, rating_usage = d.rating_calls, d.rating_cache_hits, d.rating_usage
                fields.update(
                    summaries=d.summary_count,
                    community_level=d.community_level,
                    seed=d.seed,
                    reduce_prompt_tokens=d.reduce_prompt_tokens,
                    communities_behind=tuple(result.community_ids),
                    communities_cited=tuple(cited_community_ids(result.answer)) if result.status != "no_results" else (),
                    unsupported_citations=d.unsupported_citation_count,
                    duration=d.duration_s,
                )
                if not community_ids:  # a record made from a result alone
                    community_ids = list(d.batch_community_ids)
                    estimates = list(d.batch_token_estimates)
                if not fields.get("candidates"):
                    fields["candidates"] = tuple(result.reduce_candidates)
                if not failures:
                    failures = {f.batch_index: f for f in result.failed_batches}
                if not status:
                    starts, hits = d.map_calls + d.cache_hits, d.cache_hits
                    status = {i: "succeeded" for i, u in enumerate(d.batch_usefulness) if u is not None}
                    status.update({i: "failed" for i in failures})
            case RunFailed():
                if event.cancelled:
                    outcome = "cancelled"
                else:
                    outcome = "interrupted" if event.error_type == INTERRUPTED_ERROR_TYPE else "failed"
                fields.update(error=event.error, error_type=event.error_type)
                if event.usage is not None:  # the engine's own count of what the run spent
                    usage = event.usage
                for index, state in status.items():
                    if state == "running":
                        status[index] = "cancelled" if event.cancelled else "failed"
    duration = fields.pop("duration", at)
    states = list(status.values())
    return RunFigures(
        outcome=outcome,
        batches=len(community_ids),
        batch_community_ids=tuple(community_ids),
        batch_token_estimates=tuple(estimates),
        succeeded_batches=states.count("succeeded"),
        failed_batches=states.count("failed"),
        cancelled_batches=states.count("cancelled"),
        retried_batches=sum(1 for n in attempts.values() if n > 1),
        failures=tuple(failures[i] for i in sorted(failures)),
        map_calls=starts - hits,
        cache_hits=hits,
        reduce_calls=reduces,
        rating_calls=rating_calls,
        rating_cache_hits=rating_hits,
        rating_usage=rating_usage,
        usage=usage,
        cached_prompt_tokens=cached_tokens,
        duration_s=float(duration),  # type: ignore[arg-type]
        **fields,  # type: ignore[arg-type]
    )


__all__ = ["STOPPED_MESSAGE", "RunFigures", "RunOutcome", "run_figures"]
