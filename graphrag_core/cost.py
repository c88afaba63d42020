"""What a search would cost at each level, and where its tokens come from, before any call.

Level 0 of the Jargon sample maps 18 summaries yet costs 68 batches and about 449k tokens:
the summaries are short, but every leaf claim below them and the source excerpts those claims
cite ride along. :func:`level_costs` says so per level: the map prompt tokens of the summaries,
the claims and the source excerpts (each counted whether or not the request includes it, so
the page can say what switching it on or off would change), and the batches the request's own
settings would send.

Invariant: for every level, ``batches`` and ``map_prompt_tokens`` are exactly what
:func:`graphrag_core.batch_plan.plan_batches` plans for the request at that level (:func:`map_cost`,
the one estimate); the three section figures are estimates of the map texts alone (no prompt,
no part headers), which is why they add up to less than ``map_prompt_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .errors import GraphRAGError
from .lazy.cost import estimate_lazy_cost
from .methods import LAZY
from .levels import level_text
from .models import LEAF, Index
from .rows import Community
from .request import GlobalSearchRequest
from .batch_plan import PROMPT_MESSAGES, plan_batches
from .selection import estimate_rating_cost
from .spending import LimitForecast, forecast_limit
from .tokens import ENDPOINT, Tokenizer, get_tokenizer, prompt_overhead


@dataclass(frozen=True)
class MapCost:
    """What the map of a request would read and send: its summaries, batches, and the planned
    prompt tokens of every batch (prompt text, part headers and map texts, each batch once)."""

    summaries: int
    batches: int
    map_prompt_tokens: int
    largest_batch_tokens: int
    batch_tokens: tuple[int, ...] = ()
    """Each batch's planned prompt tokens, in the order the map sends them."""

    @property
    def model_calls(self) -> int:
        """Map calls plus the reduce (when there is anything to map)."""
        return self.batches + 1 if self.batches else 0


def map_cost(
    index: Index, request: GlobalSearchRequest, *, seed: int, tokenizer: Tokenizer | None = None, communities: Sequence[Community] | None = None
) -> MapCost:
    """The one estimate of a map's cost before any call: exactly what
    :func:`graphrag_core.batch_plan.plan_batches` plans for ``request`` at its level (or for
    ``communities`` when given, e.g. a dynamic selection's bound). Every figure a front end shows
    for a level's map tokens comes from here (Explore's level picker and cost preview, the
    Sweeps picker), so they agree. Raises ``BudgetError`` when the budgets cannot fit it."""
    tokenizer = tokenizer or get_tokenizer(request.tokenizer)
    bound = None if communities is None else list(communities)
    selected, _batches, estimates = plan_batches(index, request, seed=seed, tokenizer=tokenizer, communities=bound)
    return MapCost(
        summaries=len(selected), batches=len(estimates), map_prompt_tokens=sum(estimates), largest_batch_tokens=max(estimates, default=0),
        batch_tokens=tuple(estimates),
    )


@dataclass(frozen=True)
class LevelCost:
    """One level's cost under a request's settings (see the module docstring)."""

    level: int | str
    summaries: int
    batches: int | None
    """None when the request's budgets cannot fit this level (``error`` says why)."""
    map_prompt_tokens: int | None
    summary_tokens: int
    claim_tokens: int
    source_tokens: int
    error: str | None = None
    tokenizer: str = ""
    """What the figures were counted with."""
    estimate: bool = False
    """Whether that is not what the run counts with (``run_tokenizer`` of :func:`level_costs`):
    the figures are then an estimate of the run's, to be labelled so (:func:`counting_note`)."""
    run_tokenizer: str = ""
    """What the run counts with, when the caller said."""

    @property
    def model_calls(self) -> int | None:
        """Map calls plus the reduce."""
        return None if self.batches is None else (self.batches + 1 if self.batches else 0)


def section_tokens(index: Index, level: int | str, tokenizer: Tokenizer) -> tuple[int, int, int]:
    """Tokens of the summaries, the claims and the source excerpts of a level's map texts."""
    summaries = claims = sources = 0
    for community in index.select_communities(level):
        alone = tokenizer.count(index.map_text(community.id, include_claims=False, include_sources=False))
        with_claims = tokenizer.count(index.map_text(community.id, include_claims=True, include_sources=False))
        with_sources = tokenizer.count(index.map_text(community.id, include_claims=False, include_sources=True))
        summaries += alone
        claims += max(0, with_claims - alone)
        sources += max(0, with_sources - alone)
    return summaries, claims, sources


def level_costs(
    index: Index,
    request: GlobalSearchRequest,
    *,
    seed: int,
    tokenizer: Tokenizer | None = None,
    sections: Mapping[str, tuple[int, int, int]] | None = None,
    run_tokenizer: str | None = None,
) -> list[LevelCost]:
    """Every level of ``index`` ("leaf" first, then 0, 1, ...) under ``request``'s settings.

    ``sections`` holds levels' :func:`section_tokens` already counted with the same tokenizer,
    keyed by :func:`~graphrag_core.levels.level_text` (they depend on neither the budgets nor the
    seed); a level it lacks is counted here. ``run_tokenizer`` names what the run will count
    with (``"endpoint"``: the model server's own tokenizer); figures counted with another are
    marked ``estimate``."""
    tokenizer = tokenizer or get_tokenizer(request.tokenizer)
    counted_with = {
        "tokenizer": tokenizer.name, "estimate": run_tokenizer is not None and run_tokenizer != tokenizer.name, "run_tokenizer": run_tokenizer or "",
    }
    levels: list[int | str] = [LEAF, *index.levels()]
    costs: list[LevelCost] = []
    for level in levels:
        at_level = request.model_copy(update={"community_level": level})
        counted = None if sections is None else sections.get(level_text(level))
        summaries, claims, sources = counted if counted is not None else section_tokens(index, level, tokenizer)
        count = len(index.select_communities(level))
        try:
            cost = map_cost(index, at_level, seed=seed, tokenizer=tokenizer)
        except GraphRAGError as exc:
            costs.append(LevelCost(level, count, None, None, summaries, claims, sources, error=str(exc), **counted_with))
            continue
        costs.append(LevelCost(level, count, cost.batches, cost.map_prompt_tokens, summaries, claims, sources, **counted_with))
    return costs


def counting_note(costs: Sequence[LevelCost]) -> str | None:
    """The label of figures that are an estimate of the run's own count (None when they are
    that count): what they were counted with and what the run counts with."""
    estimated = next((cost for cost in costs if cost.estimate), None)
    if estimated is None:
        return None
    if estimated.run_tokenizer == ENDPOINT:
        return (
            f"≈ estimated with {estimated.tokenizer}: the run counts with the model server's own tokenizer, which may count "
            "several times more (a small model's tokenizer, or Chinese text)."
        )
    return f"≈ estimated with {estimated.tokenizer}: the run counts with {estimated.run_tokenizer}."


def dynamic_bound(index: Index, request: GlobalSearchRequest) -> list[Community]:
    """What the map of a dynamic selection reads at most: every leaf, or every community with a
    summary when parents are kept."""
    return [c for c in index.communities if c.summary.strip()] if request.keep_parent else index.select_communities(LEAF)


def spend_forecast(index: Index, request: GlobalSearchRequest, *, seed: int, tokenizer: Tokenizer) -> LimitForecast | None:
    """Whether ``request`` will reach its ``spend_limit_tokens`` (None without one), from its
    planned batches (under dynamic selection, the ratings' range and the map's bound)."""
    if request.spend_limit_tokens is None:
        return None
    if request.method == LAZY:
        return _lazy_forecast(index, request, tokenizer)
    rating = None
    communities = None
    if request.dynamic:
        cost = estimate_rating_cost(index, request, tokenizer=tokenizer)
        rating = (cost.min_calls, cost.max_calls, cost.min_prompt_tokens, cost.max_prompt_tokens)
        communities = dynamic_bound(index, request)
    estimates = map_cost(index, request, seed=seed, tokenizer=tokenizer, communities=communities).batch_tokens
    return forecast_limit(
        request.spend_limit_tokens, estimates, map_output_reserve=request.map_output_reserve, reduce_token_budget=request.reduce_token_budget,
        rating=rating, rating_output_reserve=request.rating_output_reserve, overhead=prompt_overhead(tokenizer, PROMPT_MESSAGES),
    )


def _lazy_forecast(index: Index, request: GlobalSearchRequest, tokenizer: Tokenizer) -> LimitForecast:
    """A lazy run's forecast: its expansion and relevance tests stand where dynamic selection's
    ratings stand (from one test to the whole budget), its map at its bound."""
    cost = estimate_lazy_cost(index, request, tokenizer=tokenizer)
    batch = cost.max_map_prompt_tokens // cost.max_map_batches if cost.max_map_batches else 0
    tests = (cost.min_calls, cost.max_calls - cost.max_map_batches - 1, cost.min_prompt_tokens, cost.expansion_prompt_tokens + cost.max_relevance_prompt_tokens)
    return forecast_limit(
        request.spend_limit_tokens or 0, [batch] * cost.max_map_batches, map_output_reserve=request.map_output_reserve,
        reduce_token_budget=request.reduce_token_budget, rating=tests, rating_output_reserve=request.map_output_reserve,
    )


__all__ = ["LevelCost", "MapCost", "counting_note", "dynamic_bound", "level_costs", "map_cost", "section_tokens", "spend_forecast"]
