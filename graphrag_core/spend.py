"""What a run spent, and what it would have spent with no map cache, from its events alone.

A cached rerun makes one model call where the first run made 84: showing only "model calls 1"
next to half a million estimated prompt tokens confuses. :func:`run_spend` counts both sides,
for finished, failed and stopped runs alike (it reads only the events), and :func:`money`
turns tokens into a price when one is configured.

Invariants: ``calls_as_if_uncached == calls + cache_hits``; a cache hit costs no tokens, and
its tokens as if uncached are the batch's planned prompt tokens plus the mean completion
tokens of this run's uncached map calls (an estimate: ``tokens_estimated`` says so).
(Kept small and pure so it can move into the one run-figures module of issue 15.)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .events import BatchesPlanned, Event, MapBatchStarted, MapBatchSucceeded, ReduceStarted, RunFinished
from .llm.base import TokenUsage


@dataclass(frozen=True)
class Price:
    """A model's price in money per million prompt and completion tokens (currency unnamed)."""

    prompt_per_million: float
    completion_per_million: float

    def of(self, usage: TokenUsage) -> float:
        return (usage.prompt_tokens * self.prompt_per_million + usage.completion_tokens * self.completion_per_million) / 1_000_000


@dataclass(frozen=True)
class RunSpend:
    """Model calls and tokens a run spent, and the same as if no map answer had been cached."""

    calls: int
    cache_hits: int
    tokens: TokenUsage
    tokens_as_if_uncached: TokenUsage
    tokens_estimated: bool
    """True when ``tokens_as_if_uncached`` includes estimates for cached batches."""

    @property
    def calls_as_if_uncached(self) -> int:
        return self.calls + self.cache_hits


def run_spend(events: Iterable[Event]) -> RunSpend:
    """The spend of the run those events describe (see the module docstring)."""
    planned: dict[int, int] = {}
    started = 0
    cached_batches: list[int] = []
    map_usage = TokenUsage()
    map_completions: list[int] = []
    reduce_started = False
    finished_usage: TokenUsage | None = None
    finished_reduce_calls = 0
    for event in events:
        if isinstance(event, BatchesPlanned):
            planned = {batch.index: batch.token_estimate for batch in event.batches}
        elif isinstance(event, MapBatchStarted):
            started += 1
        elif isinstance(event, MapBatchSucceeded):
            if event.cached:
                cached_batches.append(event.batch_index)
            elif event.usage is not None:
                map_usage = map_usage + event.usage
                map_completions.append(event.usage.completion_tokens)
        elif isinstance(event, ReduceStarted):
            reduce_started = True
        elif isinstance(event, RunFinished):
            finished_usage = event.result.diagnostics.usage
            finished_reduce_calls = event.result.diagnostics.reduce_calls
    map_calls = started - len(cached_batches)
    reduce_calls = finished_reduce_calls if finished_usage is not None else int(reduce_started)
    spent = finished_usage if finished_usage is not None else map_usage
    mean_completion = round(sum(map_completions) / len(map_completions)) if map_completions else 0
    saved = TokenUsage(
        prompt_tokens=sum(planned.get(i, 0) for i in cached_batches),
        completion_tokens=mean_completion * len(cached_batches),
    )
    return RunSpend(
        calls=map_calls + reduce_calls,
        cache_hits=len(cached_batches),
        tokens=spent,
        tokens_as_if_uncached=spent + saved,
        tokens_estimated=bool(cached_batches),
    )


def money(amount: float) -> str:
    """A price for people: ``0.0123`` -> ``"0.012"``, ``12.5`` -> ``"12.50"`` (no currency sign)."""
    if amount >= 1:
        return f"{amount:,.2f}"
    return f"{amount:.3g}" if amount > 0 else "0"





def spend_line(spend: RunSpend, price: Price | None = None) -> str:
    """One line for people: ``model calls 1 (84 as if uncached, 83 cache hits) · tokens 7,187
    (≈515,953 as if uncached)`` plus the cost at ``price`` when one is configured."""
    calls = f"model calls {spend.calls:,}"
    if spend.cache_hits:
        calls += f" ({spend.calls_as_if_uncached:,} as if uncached, {spend.cache_hits:,} cache hits)"
    approx = "≈" if spend.tokens_estimated else ""
    tokens = f"tokens {spend.tokens.total_tokens:,}"
    if spend.cache_hits:
        tokens += f" ({approx}{spend.tokens_as_if_uncached.total_tokens:,} as if uncached)"
    parts = [calls, tokens]
    if price is not None:
        cost = f"cost {money(price.of(spend.tokens))}"
        if spend.cache_hits:
            cost += f" ({approx}{money(price.of(spend.tokens_as_if_uncached))} as if uncached)"
        parts.append(cost)
    return " · ".join(parts)
__all__ = ["Price", "RunSpend", "money", "run_spend", "spend_line"]
