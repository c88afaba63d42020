"""What the map and reduce phases produce, and what a run reports (spec sections 6-9)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .language import LanguageDrift
from .levels import Level
from .llm.base import TokenUsage
from .request import GlobalSearchRequest

Status = Literal["completed", "partial", "no_results"]
CandidateFate = Literal["selected", "skipped", "not_tried", "dropped"]
CommunityFate = Literal["kept", "pruned", "superseded", "skipped", "failed", "unreached"]
"""What dynamic selection did with a community (dynamic-selection.md section 4)."""

NO_RESULTS_ANSWER = "No relevant community summaries were found for this query."
NO_RELEVANT_CHUNKS_ANSWER = "No relevant source chunks were found for this query."
"""The ``no_results`` answer of a run that reads source chunks (the ``text``, ``vector`` and ``lazy`` methods)."""


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


class CommunityRating(_Value):
    """One community's part in a dynamic selection.

    ``rating`` is the majority of the successful repeats (ties to the lowest), ``None`` when the
    community was not rated or every repeat failed (``failed``). ``repeat_ratings`` has one entry
    per repeat, ``None`` for a failed one; ``reason`` is the first successful repeat's.
    ``round`` counts from 0; ``None`` for ``unreached``. A failed community that a relevant child
    replaced has fate ``superseded`` and keeps ``failed=True``.
    """

    community_id: str
    level: int
    fate: CommunityFate
    round: int | None = None
    rating: int | None = None
    failed: bool = False
    repeat_ratings: tuple[int | None, ...] = ()
    reason: str | None = None
    errors: tuple[str, ...] = ()
    calls: int = 0
    cache_hits: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)


class GlobalSearchDiagnostics(_Value):
    """The figures of spec section 9, and the cost of the run.

    ``usage`` is everything the run spent; ``map_usage`` and ``rating_usage`` its map and rating
    parts (``reduce_usage`` the rest). Rating figures are zero unless the selection was dynamic.
    """

    community_level: Level
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
    map_usage: TokenUsage = Field(default_factory=TokenUsage)
    rating_calls: int = 0
    rating_cache_hits: int = 0
    rating_usage: TokenUsage = Field(default_factory=TokenUsage)
    community_ratings: list[CommunityRating] = Field(default_factory=list)
    failed_rating_count: int = 0
    unsupported_citation_count: int = 0
    """Distinct ids the answer cites (communities, or source chunks for the ``text`` and
    ``vector`` methods) that are not in the index or not behind it."""
    ranker: str | None = None
    """What ranked the chunks of a ``vector`` run (an embedding model's identity, or ``bm25``)."""
    embedding_calls: int = 0
    embedding_cache_hits: int = 0
    embedding_usage: TokenUsage = Field(default_factory=TokenUsage)
    """The embedding model's tokens (a ``vector`` run with one): apart from ``usage``, the chat model's."""
    stopped_early: bool = False
    """The run was stopped during its map and answered from what it had read: its answer is a
    reduce over the batches finished before the stop (its status is ``partial``)."""
    unread_batch_count: int = 0
    """Map batches that had not ended when the run was stopped (0 unless ``stopped_early``)."""
    stopped_at_limit: int | None = None
    """The spending limit (tokens) that stopped the run, when that was the stop (not its user)."""
    language_drift: LanguageDrift | None = None
    """The map answers or the final answer came back in another language than the corpus's
    (:func:`~graphrag_core.language.language_drift`); ``None`` when they agree or the corpus's
    language is not known. Its ``note`` is what the run says about it."""
    relevance_budget: int | None = None
    """The lazy method's relevance budget (None for the other methods)."""
    relevance_tests: int = 0
    """Relevance tests a lazy run made: calls to the model and answers from the map cache, each
    counted against ``relevance_budget`` (never more)."""
    relevance_calls: int = 0
    """Of ``relevance_tests``, the calls that reached the model (retries included)."""
    relevance_cache_hits: int = 0
    relevance_usage: TokenUsage = Field(default_factory=TokenUsage)
    failed_test_count: int = 0
    """Relevance tests every attempt of which failed."""
    expansion_calls: int = 0
    expansion_usage: TokenUsage = Field(default_factory=TokenUsage)
    subqueries: list[str] = Field(default_factory=list)
    """The subqueries a lazy run's relevance tests asked (the query expansion's)."""
    relevant_chunks: dict[str, list[str]] = Field(default_factory=dict)
    """A lazy run's relevant source chunks by community (community id -> chunk references): what
    its map read, so each community behind the answer leads to its source text."""

    @property
    def stopped_note(self) -> str | None:
        """The one sentence every front end shows for a run answered from what it read after a
        stop (None for any other run)."""
        if not self.stopped_early:
            return None
        read = self.batch_count - self.unread_batch_count
        if self.stopped_at_limit is not None:
            return (
                f"Stopped at the spending limit of {self.stopped_at_limit:,} tokens after reading {read:,} of {self.batch_count:,} "
                "batches: a partial answer from what was read."
            )
        return f"Stopped after reading {read:,} of {self.batch_count:,} batches: a partial answer from what was read."

    @property
    def reduce_usage(self) -> TokenUsage:
        """What the reduce spent: the total less the map's, the rating's and the lazy method's
        expansion and relevance tests'."""
        before = self.map_usage + self.rating_usage + self.expansion_usage + self.relevance_usage
        return TokenUsage(
            prompt_tokens=max(0, self.usage.prompt_tokens - before.prompt_tokens),
            completion_tokens=max(0, self.usage.completion_tokens - before.completion_tokens),
            estimated_calls=max(0, self.usage.estimated_calls - before.estimated_calls),
        )

    @property
    def rating_prompt_tokens(self) -> int:
        return self.rating_usage.prompt_tokens

    @property
    def rating_completion_tokens(self) -> int:
        return self.rating_usage.completion_tokens

    def fates(self) -> dict[str, CommunityFate]:
        """Each community's fate under dynamic selection, by id (empty for a fixed level)."""
        return {r.community_id: r.fate for r in self.community_ratings}


class GlobalSearchResult(_Value):
    """The outcome of one global search."""

    status: Status
    answer: str
    query: str
    community_level: Level
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
