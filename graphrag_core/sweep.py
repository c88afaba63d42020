"""Sweeps: one question asked over a grid of levels, seeds and token budgets.

A sweep answers "how much does the answer depend on the level, the shuffle seed and the
budgets?" Each grid point is an ordinary :func:`~graphrag_core.search.retrieve_global` run; the
sweep collects one flat row per point and a stability figure per level (how much the communities
behind the answer change between seeds).

Invariants:

- every grid point gets exactly one :class:`SweepPoint` result, in grid order
  (level, map budget, reduce budget, seed), whatever the completion order;
- a point that fails with an engine error (``AllMapBatchesFailed``, ``BudgetError``, a model
  or reduce error) is recorded as ``failed`` with its error; it never stops the sweep. Errors
  that are not the engine's (bugs) and cancellation do stop it;
- at most ``SweepSpec.point_concurrency`` points run at once (each still bounds its own map
  calls by ``map_concurrency``);
- with a spending limit no call could take the sweep's total past it: the point that reaches it
  answers from what it read (``stopped_early``; ``cancelled`` if it read nothing useful) and the
  points after it are not run (``cancelled``), their ``error`` saying why.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from .csv_cells import csv_text
from .errors import AllMapBatchesFailed, GraphRAGError, SpendLimitReached
from .events import Event, RunFinished
from .figures import RunFigures, RunSpend, run_figures
from .index import index_display_name
from .levels import Level
from .llm.base import ChatModel, TokenUsage, model_identity
from .models import Index
from .pool import run_pool
from .results import GlobalSearchResult
from .status import RunStatus
from .search import retrieve_global
from .history import SWEEP_LABEL_PREFIX, RunRecorder, RunStore
from .spending import SpendingLimit
from .sweep_spec import SweepSpec
from .tokens import ENDPOINT, tokenizer_for

if TYPE_CHECKING:
    from .cache import MapCache


CSV_LIST_SEPARATOR = ";"
"""How a list (community ids) is joined inside one CSV cell."""


class SweepPoint(BaseModel):
    """The outcome of one grid point, flat enough for a table row.

    ``prompt_tokens`` is the planned prompt estimate: each map batch's prompt once plus the
    reduce prompt (retries are not counted again), plus, under dynamic selection, the rating
    prompts (as the model reported them, or as planned for those the cache answered), so levels
    and dynamic compare on one axis whatever the cache held. ``model_calls`` counts every call
    made, retries and dynamic selection's rating calls included; ``calls_as_if_uncached`` adds
    the calls the cache answered, so points compare by what they cost, not by what an earlier
    point left in the cache. ``rating_calls`` and ``rating_tokens`` (prompt and completion, as
    the model counted them) are the rating's part. ``community_ids`` are those behind the answer
    (the **behind** set; empty unless the point produced one), ``cited_community_ids`` those the
    answer cites (the **cited** set) and ``unsupported_citation_count`` the distinct cited ids
    not in the index or not behind it. ``index`` is the point's place in grid order (the
    ``point`` column of the rows and the CSV).
    """

    model_config = ConfigDict(frozen=True)

    index: int
    level: Level
    seed: int
    map_token_budget: int
    reduce_token_budget: int
    status: RunStatus
    summary_count: int = 0
    batch_count: int = 0
    map_calls: int = 0
    reduce_calls: int = 0
    rating_calls: int = 0
    rating_tokens: int = 0
    prompt_tokens: int = 0
    failed_batch_count: int = 0
    selected_answer_count: int = 0
    duration_s: float = 0.0
    community_ids: tuple[str, ...] = ()
    answer: str = ""
    error: str | None = None
    error_type: str | None = None
    batch_errors: tuple[str, ...] = ()
    run_id: str | None = None
    cache_hits: int = 0
    """Map batches (and dynamic selection's ratings) answered from the map cache (no model call)."""
    tokens_spent: int = 0
    """Prompt and completion tokens the model reported for this point."""
    completion_tokens_spent: int = 0
    """The completion part of ``tokens_spent`` (completion tokens are priced differently)."""
    cached_tokens_spent: int = 0
    """The prompt tokens of ``tokens_spent`` the endpoint served from its prompt cache."""
    estimated_usage_calls: int = 0
    """Calls whose tokens in ``tokens_spent`` the run counted itself (the endpoint reported none)."""
    cited_community_ids: tuple[str, ...] = ()
    unsupported_citation_count: int = 0
    stopped_early: bool = False
    """Stopped at the spending limit, a ``partial`` answer from what it read (``error`` says so)."""
    lazy_calls: int = 0
    """A lazy point's expansion and relevance-test calls (counted in ``model_calls``)."""

    @property
    def model_calls(self) -> int:
        return self.map_calls + self.reduce_calls + self.rating_calls + self.lazy_calls

    @property
    def calls_as_if_uncached(self) -> int:
        """The calls this point would have made with no cache (``model_calls`` plus cache hits)."""
        return self.model_calls + self.cache_hits

    @property
    def failed(self) -> bool:
        return self.status == RunStatus.FAILED

    @property
    def answered(self) -> bool:
        """Whether the point ran to its end (not failed, not stopped at a spending limit)."""
        return self.status not in (RunStatus.FAILED, RunStatus.CANCELLED) and not self.stopped_early


ROW_FIELDS: tuple[str, ...] = (
    "point",
    "level",
    "seed",
    "map_token_budget",
    "reduce_token_budget",
    "status",
    "summary_count",
    "batch_count",
    "map_calls",
    "reduce_calls",
    "model_calls",
    "calls_as_if_uncached",
    "rating_calls",
    "rating_tokens",
    "prompt_tokens",
    "failed_batch_count",
    "selected_answer_count",
    "duration_s",
    "community_ids",
    "error",
    "error_type",
    "run_id",
    "cache_hits",
    "tokens_spent",
    "cached_tokens_spent",
    "cited_community_ids",
    "unsupported_citation_count",
)
"""The columns of :meth:`SweepResult.to_rows` and of the CSV, in order: ``point`` is the
point's number in grid order (``SweepPoint.index``), ``model_calls`` the calls spent and
``calls_as_if_uncached`` the calls it would have made with no cache."""


def jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    """``|a & b| / |a | b|``; two empty sets are identical (1.0)."""
    union = a | b
    return 1.0 if not union else len(a & b) / len(union)


class SweepResult(BaseModel):
    """Every point of a sweep, in grid order, with what it was run against."""

    model_config = ConfigDict(frozen=True)

    sweep_id: str
    spec: SweepSpec
    index_name: str
    model: str
    points: list[SweepPoint]
    duration_s: float = 0.0

    def to_rows(self) -> list[dict[str, Any]]:
        """One dict per point with the keys of :data:`ROW_FIELDS`; ``community_ids`` (behind) and
        ``cited_community_ids`` are lists."""
        rows = []
        for point in self.points:
            data = point.model_dump()
            data["point"] = point.index
            data["model_calls"] = point.model_calls
            data["calls_as_if_uncached"] = point.calls_as_if_uncached
            data["community_ids"] = list(point.community_ids)
            data["cited_community_ids"] = list(point.cited_community_ids)
            rows.append({name: data[name] for name in ROW_FIELDS})
        return rows

    def spend(self) -> RunSpend:
        """The sweep's model calls, cache hits and tokens, spent and as if uncached (a point
        with cache hits is counted at its planned prompt tokens plus its completion tokens)."""
        calls = sum(p.model_calls for p in self.points)
        hits = sum(p.cache_hits for p in self.points)
        completion = sum(p.completion_tokens_spent for p in self.points)
        spent = TokenUsage(
            prompt_tokens=sum(p.tokens_spent for p in self.points) - completion,
            completion_tokens=completion,
            estimated_calls=sum(p.estimated_usage_calls for p in self.points),
            cached_tokens=sum(p.cached_tokens_spent for p in self.points),
        )
        uncached_prompt = sum(
            max(p.tokens_spent - p.completion_tokens_spent, p.prompt_tokens) if p.cache_hits else p.tokens_spent - p.completion_tokens_spent
            for p in self.points
        )
        return RunSpend(
            calls=calls,
            cache_hits=hits,
            tokens=spent,
            tokens_as_if_uncached=TokenUsage(prompt_tokens=uncached_prompt, completion_tokens=completion),
            tokens_estimated=hits > 0,
        )

    def to_csv(self) -> str:
        """The rows as CSV with a header (:func:`~graphrag_core.csv_cells.csv_text`: no cell
        runs as a spreadsheet formula); community ids joined by ``;`` in one cell."""
        rows = []
        for row in self.to_rows():
            row["community_ids"] = CSV_LIST_SEPARATOR.join(row["community_ids"])
            row["cited_community_ids"] = CSV_LIST_SEPARATOR.join(row["cited_community_ids"])
            rows.append([row[name] for name in ROW_FIELDS])
        return csv_text(ROW_FIELDS, rows)

    def to_json(self, *, indent: int | None = 2) -> str:
        """The spec, the rows and the stability per level as one JSON document."""
        document = {
            "sweep_id": self.sweep_id,
            "index_name": self.index_name,
            "model": self.model,
            "duration_s": self.duration_s,
            "spec": self.spec.model_dump(mode="json"),
            "points": self.to_rows(),
            "stability_by_level": {str(level): value for level, value in self.stability_by_level().items()},
        }
        return json.dumps(document, indent=indent, ensure_ascii=False)

    def stability_by_level(self) -> dict[Level, float | None]:
        """For each level, the mean pairwise Jaccard similarity of the sets of communities behind
        the answer (the selected map answers' communities) across seeds.

        Pairs are only formed between points with the same budgets (so a budget change is not
        counted as seed instability), and failed or stopped points are left out. ``None`` when a level
        has fewer than two usable points with the same budgets. Two points with nothing behind
        their answers (``no_results``) count as identical.
        """
        stability: dict[Level, float | None] = {}
        for level in self.spec.levels:
            groups: dict[tuple[int, int], list[frozenset[str]]] = {}
            for point in self.points:
                if point.level == level and point.answered:
                    key = (point.map_token_budget, point.reduce_token_budget)
                    groups.setdefault(key, []).append(frozenset(point.community_ids))
            scores = [jaccard(a, b) for sets in groups.values() for a, b in itertools.combinations(sets, 2)]
            stability[level] = sum(scores) / len(scores) if scores else None
        return stability

    def points_at(self, level: Level) -> list[SweepPoint]:
        return [p for p in self.points if p.level == level]


@dataclass(frozen=True)
class SweepProgress:
    """Reported after each point finishes: how many are done, of how many, and the last one."""

    done: int
    total: int
    point: SweepPoint


ProgressSink = Callable[[SweepProgress], None]


def _figure_columns(figures: RunFigures) -> dict[str, Any]:
    """The columns every point reads from its run's figures, however the run ended."""
    spend = figures.spend
    return dict(
        summary_count=figures.summaries or 0,
        batch_count=figures.batches,
        map_calls=figures.map_calls,
        reduce_calls=figures.reduce_calls,
        rating_calls=figures.rating_calls,
        lazy_calls=figures.expansion_calls + figures.relevance_calls,
        rating_tokens=figures.rating_usage.total_tokens,
        prompt_tokens=figures.prompt_tokens,
        failed_batch_count=figures.failed_batches,
        run_id=figures.run_id,
        cache_hits=spend.cache_hits,
        tokens_spent=spend.tokens.total_tokens,
        completion_tokens_spent=spend.tokens.completion_tokens,
        cached_tokens_spent=spend.tokens.cached_tokens,
        estimated_usage_calls=spend.tokens.estimated_calls,
    )


def _point_from_result(base: dict[str, Any], result: GlobalSearchResult, events: Sequence[Event]) -> SweepPoint:
    figures = run_figures(events) if events else run_figures([RunFinished(result=result)])
    return SweepPoint(
        **base,
        **_figure_columns(figures),
        status=result.status,
        selected_answer_count=figures.selected_answers,
        duration_s=figures.duration_s,
        community_ids=figures.communities_behind,
        cited_community_ids=figures.communities_cited,
        unsupported_citation_count=figures.unsupported_citations,
        answer=result.answer,
        batch_errors=tuple(f.error for f in figures.failures),
        stopped_early=result.diagnostics.stopped_early,
        error=result.diagnostics.stopped_note,
        error_type=SpendLimitReached.__name__ if result.diagnostics.stopped_at_limit is not None else None,
    )


def _point_from_failure(base: dict[str, Any], exc: GraphRAGError, events: Sequence[Event], duration_s: float) -> SweepPoint:
    figures = run_figures(events)
    if isinstance(exc, SpendLimitReached):  # stopped as by Stop, not failed
        return SweepPoint(**base, **_figure_columns(figures), status=RunStatus.CANCELLED, duration_s=duration_s, error=str(exc), error_type=type(exc).__name__)
    if isinstance(exc, AllMapBatchesFailed):
        batch_errors = tuple(str(e) or type(e).__name__ for e in exc.exceptions)
        error = exc.message
    else:
        batch_errors = tuple(f.error for f in figures.failures)
        error = str(exc) or type(exc).__name__
    return SweepPoint(
        **base,
        **_figure_columns(figures),
        status=RunStatus.FAILED,
        duration_s=duration_s,
        error=error,
        error_type=type(exc).__name__,
        batch_errors=batch_errors,
    )


async def run_sweep(
    index: Index,
    spec: SweepSpec,
    model: ChatModel,
    *,
    on_progress: ProgressSink | None = None,
    cache: MapCache | None = None,
    store: RunStore | None = None,
    index_path: str | None = None,
    sweep_id: str | None = None,
    spend_limit_tokens: int | None = None,
) -> SweepResult:
    """Run every grid point of ``spec`` against ``index`` and collect one row per point.

    ``store``, when given, receives each point's run (finished or failed) as a
    :class:`~graphrag_core.history.RunRecord` labelled with the sweep id and the point.
    ``sweep_id`` (default: a fresh one) lets a caller that stops the sweep name its partial result.
    ``spend_limit_tokens`` is one limit for the whole sweep (see the module's invariants).
    """
    sweep_id = sweep_id or uuid.uuid4().hex
    # one tokenizer for every point (they share the base's setting): the "endpoint" one is asked
    # of the model itself (a wrapper would offer no count), and its counts are cached across points
    tokenizer = tokenizer_for(spec.base.tokenizer, model)
    if spec.base.tokenizer == ENDPOINT:
        # a server without /tokenize refuses the sweep once, before any point or model call
        await asyncio.to_thread(tokenizer.count, spec.query)
    display_name = index_display_name(index_path, index)
    grid = spec.grid()
    points: list[SweepPoint | None] = [None] * len(grid)
    started, done = time.monotonic(), 0
    spending = SpendingLimit(spend_limit_tokens, what="sweep") if spend_limit_tokens is not None else None

    async def run_point(i: int) -> SweepPoint:
        level, map_budget, reduce_budget, seed = grid[i]
        base = dict(index=i, level=level, seed=seed, map_token_budget=map_budget, reduce_token_budget=reduce_budget)
        if spending is not None and spending.reached:
            why, kind = f"Not run: the sweep had reached its spending limit of {spending.limit:,} tokens.", SpendLimitReached.__name__
            return SweepPoint(**base, status=RunStatus.CANCELLED, error=why, error_type=kind)
        label = f"{SWEEP_LABEL_PREFIX}{sweep_id[:8]} · point {i + 1} of {len(grid)}"  # the settings are the run's own
        recorder = RunRecorder(store, index_name=display_name, index_path=index_path, label=label)  # stored as it streams
        events: list[Event] = recorder.events
        point_started = time.monotonic()
        try:
            request = spec.request_for(level, map_budget, reduce_budget, seed)
            result = await retrieve_global(index, request, model, on_event=recorder, cache=cache, tokenizer=tokenizer, spending=spending)
            return _point_from_result(base, result, events)
        except GraphRAGError as exc:
            return _point_from_failure(base, exc, events, time.monotonic() - point_started)
        finally:
            recorder.close()

    async def run_and_record(i: int) -> None:
        nonlocal done
        point = await run_point(i)
        points[i] = point
        done += 1
        if on_progress is not None:
            on_progress(SweepProgress(done=done, total=len(grid), point=point))

    await run_pool(len(grid), spec.point_concurrency, run_and_record)
    assert all(p is not None for p in points)
    return SweepResult(
        sweep_id=sweep_id,
        spec=spec,
        index_name=display_name,
        model=model_identity(model),
        points=[p for p in points if p is not None],
        duration_s=time.monotonic() - started,
    )


__all__ = [
    "CSV_LIST_SEPARATOR",
    "ROW_FIELDS",
    "Level",
    "ProgressSink",
    "SweepPoint",
    "SweepProgress",
    "SweepResult",
    "SweepSpec",
    "jaccard",
    "run_sweep",
]
