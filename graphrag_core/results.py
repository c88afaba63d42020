"""What the map and reduce phases produce, and what a run reports (spec sections 6-9)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .llm.base import TokenUsage
from .request import GlobalSearchRequest

Status = Literal["completed", "partial", "no_results"]
CandidateFate = Literal["selected", "skipped", "not_tried", "dropped"]

NO_RESULTS_ANSWER = "No relevant community summaries were found for this query."


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, coerce_numbers_to_str=True)


class MapAnswer(_Value):
    """One batch's intermediate answer, with the community ids of the batch it answered."""

    answer: str
    usefulness: float
    community_ids: tuple[str, ...] = ()
    batch_index: int | None = None


class BatchFailure(_Value):
    """A map batch that failed every attempt; ``error`` is its last error, as text."""

    batch_index: int
    community_ids: tuple[str, ...]
    attempts: int
    error: str
    error_type: str


class ReduceCandidate(_Value):
    """A map answer's fate in the reduce selection.

    ``tokens`` is the reduce prompt estimate with this candidate added to those selected before
    it (for ``selected`` the running total; for ``skipped`` what it would have been); ``None``
    for ``dropped`` and ``not_tried`` answers.
    """

    rank: int | None
    answer: MapAnswer
    fate: CandidateFate
    tokens: int | None = None


class GlobalSearchDiagnostics(_Value):
    """The figures of spec section 9, and the cost of the run."""

    community_level: int | Literal["leaf"]
    summary_count: int
    batch_count: int
    batch_community_ids: list[tuple[str, ...]]
    batch_token_estimates: list[int] = Field(default_factory=list)
    batch_usefulness: list[float | None]
    failed_batch_count: int
    selected_answer_count: int
    reduce_prompt_tokens: int | None
    map_prompt_budget: int
    reduce_prompt_budget: int
    seed: int
    map_calls: int = 0
    reduce_calls: int = 0
    cache_hits: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)
    duration_s: float = 0.0


class GlobalSearchResult(_Value):
    """The outcome of one global search."""

    status: Status
    answer: str
    query: str
    community_level: int | Literal["leaf"]
    seed: int
    request: GlobalSearchRequest
    map_answers: list[MapAnswer] = Field(default_factory=list)
    selected_answers: list[MapAnswer] = Field(default_factory=list)
    reduce_candidates: list[ReduceCandidate] = Field(default_factory=list)
    failed_batches: list[BatchFailure] = Field(default_factory=list)
    community_ids: list[str] = Field(default_factory=list)
    diagnostics: GlobalSearchDiagnostics

    @property
    def errors(self) -> list[str]:
        return [f.error for f in self.failed_batches]
