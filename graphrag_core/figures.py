"""A run's figures as one function of its events: :func:`run_figures`, and what it spent.

Every place that reports how a run went (the run history, the Markdown export, sweeps, the
compare page, the diagnostics panel, the command line) reads a :class:`RunFigures`, so they
agree for completed, partial, failed, stopped and interrupted runs alike. Its :attr:`~RunFigures.spend`
is what the run spent and what it would have spent with no map cache (:class:`RunSpend`).

Invariants:

- the figures are read off the engine's one fold of the events (:class:`~graphrag_core.state.RunState`,
  :func:`figures_of`), so a live view, a replay and the figures cannot disagree;
- a model call is an attempt that reached the model; a cache hit (``MapBatchCached``, a rating's
  ``cache_hits``) is never counted as one (``calls_if_uncached = model_calls + cache_hits +
  rating_cache_hits``);
- figures the events carry (batches, attempts, cache hits, reported token usage of every
  attempt) are counted from the events; figures only the result carries (the reduce's usage)
  come from ``RunFinished``, and for a run cut short in its reduce ``reduce_calls`` counts the
  reduce attempts started;
- a cached map batch (or rating) costs no tokens; as if uncached it costs its planned prompt
  tokens plus the mean completion tokens of this run's answered map (or rating) calls (an
  estimate, which ``RunSpend.tokens_estimated`` says);
- a later event kind folds into ``RunState`` and adds its fields here, so every reader picks it up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .citations import cited_community_ids, result_unit
from .errors import STOPPED_MESSAGE
from .events import Event
from .llm.base import TokenUsage
from .results import BatchFailure, ReduceCandidate
from .state import BatchStatus, RunState
from .status import RunStatus


@dataclass(frozen=True)
class Price:
    """A model's price in money per million prompt and completion tokens (currency unnamed), and
    per million prompt tokens the endpoint served from its prompt cache (None: the prompt price)."""

    prompt_per_million: float
    completion_per_million: float
    cached_per_million: float | None = None

    def of(self, usage: TokenUsage) -> float:
        cached = self.prompt_per_million if self.cached_per_million is None else self.cached_per_million
        return (
            usage.uncached_prompt_tokens * self.prompt_per_million
            + usage.cached_tokens * cached
            + usage.completion_tokens * self.completion_per_million
        ) / 1_000_000


@dataclass(frozen=True)
class RunSpend:
    """Model calls and tokens spent, and the same as if no call had been answered from the cache
    (a run's is :attr:`RunFigures.spend`; a sweep adds its points')."""

    calls: int
    cache_hits: int
    tokens: TokenUsage
    tokens_as_if_uncached: TokenUsage
    tokens_estimated: bool
    """True when ``tokens_as_if_uncached`` includes estimates for cached batches."""

    @property
    def calls_as_if_uncached(self) -> int:
        return self.calls + self.cache_hits


def money(amount: float) -> str:
    """A price for people: ``0.0123`` -> ``"0.012"``, ``12.5`` -> ``"12.50"`` (no currency sign)."""
    if amount >= 1:
        return f"{amount:,.2f}"
    return f"{amount:.3g}" if amount > 0 else "0"


def estimated_note(usage: TokenUsage) -> str:
    """What people read beside tokens some of which the run counted itself: ``""`` when the
    endpoint reported every call's, else ``"1 call's usage estimated: the endpoint reported none"``."""
    calls = usage.estimated_calls
    if not calls:
        return ""
    whose = "1 call's" if calls == 1 else f"{calls:,} calls'"
    return f"{whose} usage estimated: the endpoint reported none"


def tokens_text(usage: TokenUsage) -> str:
    """A token total for people: ``"7,187"``, or ``"≈7,187"`` when some of it is the run's own count."""
    return ("≈" if usage.estimated else "") + f"{usage.total_tokens:,}"


def cached_text(usage: TokenUsage) -> str:
    """The prompt tokens the endpoint served from its prompt cache, for people: ``""`` when none,
    else ``"5,120 prompt tokens from the endpoint's prompt cache, 71%"``."""
    if not usage.cached_tokens:
        return ""
    share = usage.cached_tokens / usage.prompt_tokens if usage.prompt_tokens else 0.0
    return f"{usage.cached_tokens:,} prompt tokens from the endpoint's prompt cache, {share:.0%}"


def spend_line(spend: RunSpend, price: Price | None = None) -> str:
    """One line for people: ``model calls 1 (84 as if uncached, 83 cache hits) · tokens 7,187
    (≈515,953 as if uncached)`` plus the cost at ``price`` when one is configured; the prompt
    tokens the endpoint served from its prompt cache are said beside the tokens (and priced at
    the cached price)."""
    calls = f"model calls {spend.calls:,}"
    if spend.cache_hits:
        calls += f" ({spend.calls_as_if_uncached:,} as if uncached, {spend.cache_hits:,} cache hits)"
    approx = "≈" if spend.tokens_estimated or spend.tokens.estimated else ""
    tokens = f"tokens {tokens_text(spend.tokens)}"
    if spend.tokens.cached_tokens:
        tokens += f" ({cached_text(spend.tokens)})"
    if spend.cache_hits:
        tokens += f" ({approx}{spend.tokens_as_if_uncached.total_tokens:,} as if uncached)"
    if spend.tokens.estimated:
        tokens += f" ({estimated_note(spend.tokens)})"
    parts = [calls, tokens]
    if price is not None:
        cost = f"cost {money(price.of(spend.tokens))}"
        if spend.tokens.cached_tokens and price.cached_per_million is not None:
            cost += f" ({money(price.of(spend.tokens.model_copy(update={'cached_tokens': 0})))} without the prompt cache)"
        if spend.cache_hits:
            cost += f" ({approx}{money(price.of(spend.tokens_as_if_uncached))} as if uncached)"
        parts.append(cost)
    return " · ".join(parts)


class RunFigures(BaseModel):
    """What a run did and spent, whatever way it ended (see the module's invariants)."""

    model_config = ConfigDict(frozen=True)

    outcome: RunStatus = RunStatus.RUNNING
    """How the run ended (``RUNNING``: it had not, when these events were folded)."""
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
    rating_cached_prompt_tokens: int = 0
    """The planned prompt estimate of the ratings answered from the cache."""
    cached_completion_tokens: int = 0
    """An estimate of the completion tokens the cache hits would have cost: the mean of this run's
    answered map calls once per cached batch, and of its rating calls once per cached rating."""
    candidates: tuple[ReduceCandidate, ...] = ()
    reduce_prompt_tokens: int | None = None
    communities_behind: tuple[str, ...] = ()
    """The **behind** set: the communities of the map answers selected for the reduce (the
    result's ``community_ids``; see :mod:`.citations` for the three sets); source chunks for a
    run of the ``text`` or ``vector`` method."""
    communities_cited: tuple[str, ...] = ()
    """The **cited** set: the communities (or source chunks) the answer cites, in order of first citation."""
    unsupported_citations: int = 0
    """Distinct cited ids not in the index or not behind the answer (the result's diagnostics)."""
    duration_s: float = 0.0
    error: str | None = None
    error_type: str | None = None
    ranker: str | None = None
    """What ranked a ``vector`` run's chunks (an embedding model's identity, or ``bm25``)."""
    embedding_calls: int = 0
    embedding_cache_hits: int = 0
    embedding_usage: TokenUsage = Field(default_factory=TokenUsage)
    """The embedding model's tokens: apart from ``usage`` (the chat model's), priced apart."""
    relevance_budget: int | None = None
    """A lazy run's relevance budget (None for the other methods)."""
    relevance_tests: int = 0
    """A lazy run's relevance tests so far: calls and map cache answers (never past the budget)."""
    relevance_calls: int = 0
    relevance_cache_hits: int = 0
    relevance_usage: TokenUsage = Field(default_factory=TokenUsage)
    expansion_calls: int = 0
    expansion_cache_hits: int = 0
    expansion_usage: TokenUsage = Field(default_factory=TokenUsage)
    relevance_prompt_tokens: int = 0
    """The relevance tests' planned prompt estimates, each test once (cached ones too)."""
    expansion_prompt_tokens: int = 0
    """The query expansion's planned prompt estimate (cached or not)."""

    # -- derived ----------------------------------------------------------------------------

    @property
    def finished_batches(self) -> int:
        return self.succeeded_batches + self.failed_batches + self.cancelled_batches

    @property
    def model_calls(self) -> int:
        """Calls that reached the model (retries included, cache hits not)."""
        return self.map_calls + self.reduce_calls + self.rating_calls + self.expansion_calls + self.relevance_calls

    @property
    def lazy_cache_hits(self) -> int:
        """A lazy run's expansion and relevance tests answered from the map cache."""
        return self.expansion_cache_hits + self.relevance_cache_hits

    @property
    def calls_if_uncached(self) -> int:
        """The calls the run would have made with no cache."""
        return self.model_calls + self.cache_hits + self.rating_cache_hits + self.lazy_cache_hits

    @property
    def map_prompt_tokens(self) -> int:
        """The planned prompt estimate of every map batch (each once)."""
        return sum(self.batch_token_estimates)

    @property
    def rating_prompt_tokens(self) -> int:
        """Dynamic selection's rating prompts: as the model reported them, plus the planned
        estimate of those the cache answered (so a cached rerun costs what its first run did)."""
        return self.rating_usage.prompt_tokens + self.rating_cached_prompt_tokens

    @property
    def sent_reduce_prompt_tokens(self) -> int:
        """The reduce prompt's planned estimate when a reduce call was made, else 0."""
        return (self.reduce_prompt_tokens or 0) if self.reduce_calls else 0

    @property
    def prompt_tokens(self) -> int:
        """The planned prompt estimate of what the run asked for: each map batch once (cached
        ones too), plus the reduce prompt when a reduce call was made (retries are not counted
        again), plus dynamic selection's rating prompts (:attr:`rating_prompt_tokens`), plus a
        lazy run's expansion and relevance prompts as planned (each once, cached ones too)."""
        lazy = self.expansion_prompt_tokens + self.relevance_prompt_tokens
        return self.map_prompt_tokens + self.sent_reduce_prompt_tokens + self.rating_prompt_tokens + lazy

    @property
    def tokens_if_uncached(self) -> TokenUsage:
        """Reported usage plus the estimate of the batches the cache answered (see the invariants)."""
        saved = TokenUsage(
            prompt_tokens=self.cached_prompt_tokens + self.rating_cached_prompt_tokens, completion_tokens=self.cached_completion_tokens
        )
        return self.usage + saved

    @property
    def spend(self) -> "RunSpend":
        """What the run spent, and the same as if no call had been answered from the cache."""
        return RunSpend(
            calls=self.model_calls,
            cache_hits=self.cache_hits + self.rating_cache_hits + self.lazy_cache_hits,
            tokens=self.usage,
            tokens_as_if_uncached=self.tokens_if_uncached,
            tokens_estimated=bool(self.cache_hits or self.rating_cache_hits),
        )

    def _fate_count(self, fate: str) -> int:
        return sum(1 for c in self.candidates if c.fate == fate)

    @property
    def selected_answers(self) -> int:
        return self._fate_count("selected")

    @property
    def stopped(self) -> bool:
        return self.outcome is RunStatus.CANCELLED


def figures_of(state: RunState) -> RunFigures:
    """The figures of the run ``state`` has folded so far (live or replayed); no model is called."""
    result = state.result
    d = result.diagnostics if result is not None else None
    batches = state.batches
    if batches or d is None:
        community_ids = [b.community_ids for b in batches]
        estimates = [b.token_estimate for b in batches]
        fates = [b.status for b in batches]
        cached = [b for b in batches if b.cached]
        map_calls, hits = state.map_calls, len(cached)
    else:  # a record made from a result alone
        community_ids, estimates = list(d.batch_community_ids), list(d.batch_token_estimates)
        failed = {f.batch_index for f in result.failed_batches}  # type: ignore[union-attr]
        fates = [BatchStatus.FAILED if i in failed else BatchStatus.DONE for i, u in enumerate(d.batch_usefulness) if u is not None or i in failed]
        cached, map_calls, hits = [], d.map_calls, d.cache_hits
    failures = [
        BatchFailure(batch_index=b.index, community_ids=b.community_ids, attempts=b.attempts, error=b.errors[-1], error_type=b.error_type)
        for b in batches
        if b.error_type is not None
    ]
    if not failures and result is not None:
        failures = list(result.failed_batches)
    completions = [b.usage.completion_tokens for b in batches if b.usage is not None and not b.cached and b.status.succeeded]
    mean_completion = round(sum(completions) / len(completions)) if completions else 0
    ranking = state.ranking
    selection = state.selection
    relevance = state.relevance
    rating = (d.rating_calls, d.rating_cache_hits, d.rating_usage) if d is not None else (selection.calls, selection.cache_hits, selection.usage)
    mean_rating_completion = round(rating[2].completion_tokens / rating[0]) if rating[0] else 0
    return RunFigures(
        outcome=state.status or RunStatus.RUNNING,
        run_id=state.run_id,
        community_level=state.community_level,
        seed=d.seed if d is not None else state.seed,
        summaries=state.summary_count,
        batches=len(community_ids),
        batch_community_ids=tuple(community_ids),
        batch_token_estimates=tuple(estimates),
        succeeded_batches=sum(1 for f in fates if f.succeeded),
        failed_batches=fates.count(BatchStatus.FAILED),
        cancelled_batches=fates.count(BatchStatus.CANCELLED),
        retried_batches=sum(1 for b in batches if b.attempts > 1),
        failures=tuple(failures),
        map_calls=map_calls,
        cache_hits=hits,
        reduce_calls=d.reduce_calls if d is not None else state.reduce_calls,
        rating_calls=rating[0],
        rating_cache_hits=rating[1],
        rating_usage=rating[2],
        usage=state.usage,
        cached_prompt_tokens=sum(b.token_estimate for b in cached),
        rating_cached_prompt_tokens=selection.cached_prompt_tokens,
        cached_completion_tokens=mean_completion * len(cached) + mean_rating_completion * rating[1],
        candidates=tuple(state.candidates),
        reduce_prompt_tokens=d.reduce_prompt_tokens if d is not None else state.reduce_prompt_tokens,
        communities_behind=tuple(result.community_ids) if result is not None else (),
        communities_cited=(
            tuple(cited_community_ids(result.answer, kind=result_unit(result))) if result is not None and result.status != RunStatus.NO_RESULTS else ()
        ),
        unsupported_citations=d.unsupported_citation_count if d is not None else 0,
        duration_s=float(d.duration_s if d is not None else state.elapsed_s),
        error=state.error,
        error_type=state.error_type,
        ranker=ranking.ranker if ranking is not None else (d.ranker if d is not None else None),
        embedding_calls=ranking.embedding_calls if ranking is not None else (d.embedding_calls if d is not None else 0),
        embedding_cache_hits=ranking.embedding_cache_hits if ranking is not None else (d.embedding_cache_hits if d is not None else 0),
        embedding_usage=ranking.usage if ranking is not None else (
            d.embedding_usage if d is not None else relevance.embedding_usage
        ),
        relevance_budget=relevance.budget if relevance.budget is not None else (d.relevance_budget if d is not None else None),
        relevance_tests=relevance.used,
        relevance_calls=relevance.calls,
        relevance_cache_hits=relevance.cache_hits,
        relevance_usage=relevance.usage,
        expansion_calls=relevance.expansion_calls,
        expansion_cache_hits=relevance.expansion_cache_hits,
        expansion_usage=relevance.expansion_usage,
        relevance_prompt_tokens=relevance.prompt_tokens,
        expansion_prompt_tokens=relevance.expansion_prompt_tokens,
    )


def run_figures(events: Iterable[Event]) -> RunFigures:
    """The figures of the run those events describe (finished or not); no model is called."""
    return figures_of(RunState.replay(events))


__all__ = [
    "STOPPED_MESSAGE", "Price", "RunFigures", "RunSpend", "cached_text", "estimated_note", "figures_of", "money", "run_figures",
    "spend_line", "tokens_text",
]
