"""What a run would cost before any model call, computed off the script thread by one worker the
app holds once (``st.cache_resource``, shared by every session): a request's cost preview,
each level's tokens per section, each level's cost under a request's settings, and how many of
its batches the map cache would answer (:class:`CostPreviews`).

Each is kept per index and request: the request itself (frozen, hashable, its seed inside) is
the key, and the worker is handed the request, not a copy of it as text. The newest are kept,
the least recently asked dropped first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from graphrag_core.cache import SqliteMapCache, cache_key
from graphrag_core.cost import LevelCost, dynamic_bound, level_costs, map_cost, section_tokens
from graphrag_core.language import corpus_language
from graphrag_core.levels import LEAF, level_text
from graphrag_core.map import map_request
from graphrag_core.methods import GLOBAL, unit_kind
from graphrag_core.models import Index
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.search import PROMPT_MESSAGES, plan_batches
from graphrag_core.selection import RatingCost, estimate_rating_cost
from graphrag_core.sources import source_units
from graphrag_core.spending import LimitForecast, forecast_limit
from graphrag_core.tokens import Tokenizer, get_tokenizer, planning_tokenizer_name, prompt_overhead

from .loaders import INDEX_CACHE_ENTRIES, OpenedIndex, folder_signature

PREVIEW_CACHE_ENTRIES = 128


@dataclass(frozen=True)
class CostPreview:
    """What a run with these settings would cost, before any model call. ``summaries`` counts the
    units the run reads: summaries, or source chunks for the ``text`` and ``vector`` methods."""

    summaries: int
    batches: int
    map_prompt_tokens: int
    largest_batch_tokens: int
    batch_tokens: tuple[int, ...] = ()
    """Each planned batch's map prompt estimate, in batch order (what a spending limit's forecast
    lets through)."""
    overhead: int = 0
    """What the endpoint adds around each call's messages, in the planning tokenizer's count."""
    rating: RatingCost | None = None
    """Dynamic selection: the rating cost range; the map figures are then its upper bound."""
    bound_label: str = ""

    @property
    def model_calls(self) -> int:
        """Map calls plus the reduce (when there is anything to map)."""
        return self.batches + 1 if self.batches else 0

    def forecast(self, request: GlobalSearchRequest) -> LimitForecast | None:
        """Whether ``request`` (these settings, with its spending limit) will reach the limit."""
        if request.spend_limit_tokens is None:
            return None
        rating = self.rating
        return forecast_limit(
            request.spend_limit_tokens, self.batch_tokens, map_output_reserve=request.map_output_reserve,
            reduce_token_budget=request.reduce_token_budget, overhead=self.overhead, rating_output_reserve=request.rating_output_reserve,
            rating=None if rating is None else (rating.min_calls, rating.max_calls, rating.min_prompt_tokens, rating.max_prompt_tokens),
        )


SECTIONS_WAIT_S = 1.0
"""How long a page waits for each level's token counts before drawing without them."""


PREVIEW_WAIT_S = 2.0
"""How long a page waits for a cost preview before it says "still computing" and polls."""


Sections = dict[str, tuple[int, int, int]]


def _compute_sections(index: Index, tokenizer: str) -> Sections:
    counter = get_tokenizer(tokenizer)
    levels: list[int | str] = [LEAF, *index.levels()]
    return {level_text(level): section_tokens(index, level, counter) for level in levels}


def _preview_tokenizer(request: GlobalSearchRequest) -> Tokenizer:
    """The tokenizer a preview counts with: the request's as a plan made without the model server
    counts it (a preview never calls the model server)."""
    return get_tokenizer(planning_tokenizer_name(request.tokenizer, real_endpoint=False))


def _seed_of(request: GlobalSearchRequest) -> int:
    """The seed a preview plans with: the request's (a preview of a run that draws its seed has
    no batches to show)."""
    if request.seed is None:
        raise ValueError("A cost preview needs the request's seed (the batches depend on it).")
    return request.seed


def _compute_preview(index: Index, request: GlobalSearchRequest) -> CostPreview:
    seed = _seed_of(request)
    tokenizer = _preview_tokenizer(request)
    rating = bound = None
    if request.dynamic:  # the map reads at most every leaf (every community when parents are kept)
        rating = estimate_rating_cost(index, request, tokenizer=tokenizer)
        bound = dynamic_bound(index, request)
    cost = map_cost(index, request, seed=seed, tokenizer=tokenizer, communities=bound)
    return CostPreview(  # a run over source chunks reads chunks, not summaries
        summaries=cost.summaries if request.method == GLOBAL else len(source_units(index, method=request.method)),
        batches=cost.batches,
        map_prompt_tokens=cost.map_prompt_tokens,
        largest_batch_tokens=cost.largest_batch_tokens,
        batch_tokens=cost.batch_tokens,
        overhead=prompt_overhead(tokenizer, PROMPT_MESSAGES),
        rating=rating,
        bound_label="every community" if request.keep_parent else "the leaves",
    )


LevelCosts = dict[str, LevelCost]
"""Each level's cost (``"leaf"``, ``"0"``, ...) under one request's settings."""


def _compute_levels(index: Index, request: GlobalSearchRequest, *, sections: Callable[[str], Sections] | None = None) -> LevelCosts:
    """Every level's cost; ``sections(tokenizer_name)`` gives the levels' section counts already
    made with that tokenizer (they depend on neither the budgets nor the seed)."""
    name = planning_tokenizer_name(request.tokenizer, real_endpoint=False)
    counted = None if sections is None else sections(name)
    costs = level_costs(index, request, seed=_seed_of(request), tokenizer=get_tokenizer(name), sections=counted)
    return {level_text(cost.level): cost for cost in costs}  # type: ignore[arg-type]


class _Identity:
    """Stands for a model in a cache key: only its identity counts (``cache_key``)."""

    def __init__(self, identity: str) -> None:
        self.identity = identity


def _count_cached(index: Index, request: GlobalSearchRequest, identity: str, cache_path: Path) -> int:
    """How many of the request's map batches the cache at ``cache_path`` answers for the model
    ``identity`` (the keys the map phase would look up); the request names the tokenizer its run
    counts with (the cost preview resolves ``"auto"`` for the model)."""
    _communities, batches, _estimates = plan_batches(index, request, seed=_seed_of(request), tokenizer=get_tokenizer(request.tokenizer))
    model, unit, data_first = _Identity(identity), unit_kind(request.method), request.question_reserve > 0
    language = corpus_language(index.communities)  # the map prompts ask for it: their keys hold it
    cache = SqliteMapCache(cache_path)
    try:
        return sum(
            cache.get(cache_key(model, map_request(
                request.query, batch.content, output_reserve=request.map_output_reserve, unit=unit, data_first=data_first, language=language,
            ))) is not None
            for batch in batches
        )
    finally:
        cache.close()


def cache_signature(path: Path) -> int:
    """A number that changes whenever the SQLite file at ``path`` (or its write-ahead log) is written."""
    stats = []
    for name in (path, path.with_name(path.name + "-wal")):
        try:
            stat = name.stat()
        except OSError:
            continue
        stats.append((stat.st_mtime_ns, stat.st_size))
    return hash(tuple(stats))


class CostPreviews:
    """What runs would cost before any call, computed off the script thread by one worker
    shared by every session: the cost preview of a request (the newest ``preview_entries``
    requests kept, least recently asked dropped first) and each level's tokens per section (the
    newest ``section_entries`` index and tokenizer pairs kept, oldest dropped first). The app
    holds one (:func:`cost_previews`)."""

    def __init__(self, *, preview_entries: int = PREVIEW_CACHE_ENTRIES, section_entries: int = INDEX_CACHE_ENTRIES) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cost-preview")
        self._lock = threading.Lock()
        self._previews: OrderedDict[tuple[str, int, GlobalSearchRequest], Future[CostPreview]] = OrderedDict()
        self._sections: OrderedDict[tuple[str, int, str], Future[Sections]] = OrderedDict()
        self._levels: OrderedDict[tuple[str, int, GlobalSearchRequest], Future[LevelCosts]] = OrderedDict()
        self._cached: OrderedDict[tuple[object, ...], Future[int]] = OrderedDict()
        self._preview_entries = preview_entries
        self._section_entries = section_entries

    def sections_future(self, index: Index, index_key: str, signature: int, tokenizer: str) -> Future[Sections]:
        """Per level (``"leaf"``, ``"0"``, ...): the tokens of its summaries, claims and source
        excerpts (see ``graphrag_core.cost.section_tokens``); independent of budgets, so kept
        per index and tokenizer."""
        key = (index_key, signature, tokenizer)
        with self._lock:
            future = self._sections.get(key)
            if future is None:
                future = self._pool.submit(_compute_sections, index, tokenizer)
                self._sections[key] = future
                while len(self._sections) > self._section_entries:
                    self._sections.popitem(last=False)
            return future

    def level_sections(self, index: Index, index_key: str, signature: int, tokenizer: str) -> Sections | None:
        """The counts of :meth:`sections_future` when ready within ``SECTIONS_WAIT_S``, else None
        (the page draws without them and has them on a later rerun)."""
        future = self.sections_future(index, index_key, signature, tokenizer)
        futures.wait([future], timeout=SECTIONS_WAIT_S)
        return future.result() if future.done() else None

    def levels_future(self, index: Index, index_key: str, signature: int, request: GlobalSearchRequest) -> Future[LevelCosts]:
        """Every level's cost under a request's settings and seed (:func:`graphrag_core.cost.level_costs`,
        the same estimate as the cost preview's), kept like the previews. The levels' section
        counts are made once per index and tokenizer (a new seed or budget plans the batches
        only)."""

        def compute() -> LevelCosts:
            return _compute_levels(index, request, sections=lambda name: self._sections_in_worker(index, index_key, signature, name))

        return self._recent(self._levels, (index_key, signature, request), compute)

    def _sections_in_worker(self, index: Index, index_key: str, signature: int, tokenizer: str) -> Sections:
        """On the worker: the counts :meth:`sections_future` holds when they are ready, else
        counted now and kept there (waiting for a future queued behind this task on the one
        worker would never end)."""
        key = (index_key, signature, tokenizer)
        with self._lock:
            future = self._sections.get(key)
        if future is not None and future.done() and future.exception() is None:
            return future.result()
        counted = _compute_sections(index, tokenizer)
        ready: Future[Sections] = Future()
        ready.set_result(counted)
        with self._lock:
            if key not in self._sections or not self._sections[key].done():
                self._sections[key] = ready
                while len(self._sections) > self._section_entries:
                    self._sections.popitem(last=False)
        return counted

    def level_costs(self, index: Index, index_key: str, signature: int, request: GlobalSearchRequest, *, wait_s: float = SECTIONS_WAIT_S) -> LevelCosts | None:
        """The levels' costs of :meth:`levels_future` when ready within ``wait_s``, else None (a
        level picker draws without its tokens and the page is drawn again when they are); empty
        when they cannot be computed."""
        future = self.levels_future(index, index_key, signature, request)
        futures.wait([future], timeout=wait_s)
        if not future.done():
            return None
        return future.result() if future.exception() is None else {}  # settings that cannot run: no tokens to show

    def preview_future(self, index: Index, index_key: str, signature: int, request: GlobalSearchRequest) -> Future[CostPreview]:
        """The cost preview of a request (its seed's batches). The future raises ``BudgetError``
        (or a request's ``ValueError``) when the request cannot run."""
        return self._recent(self._previews, (index_key, signature, request), _compute_preview, index, request)

    def _recent(self, table: OrderedDict[Any, Future[Any]], key: Any, compute: Callable[..., Any], *args: Any) -> Future[Any]:
        """The future ``table`` holds for ``key``, moved up as the most recently asked, else
        ``compute(*args)`` submitted to the worker; at most ``preview_entries`` are kept, the least
        recently asked dropped first."""
        with self._lock:
            future = table.get(key)
            if future is None:
                future = self._pool.submit(compute, *args)
                table[key] = future
                while len(table) > self._preview_entries:
                    table.popitem(last=False)
            else:
                table.move_to_end(key)
            return future

    def cached_future(self, index: Index, index_key: str, signature: int, request: GlobalSearchRequest, *, identity: str, cache_path: Path) -> Future[int]:
        """How many of a request's map batches the map cache would answer (a fixed level's
        request; the endpoint tokenizer is not planned here). Counted again whenever the cache
        file changes."""
        key = (index_key, signature, request, identity, str(cache_path), cache_signature(cache_path))
        return self._recent(self._cached, key, _count_cached, index, request, identity, cache_path)

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until every preview and count asked for so far is computed; False on timeout."""
        with self._lock:
            pending = [*self._previews.values(), *self._sections.values(), *self._levels.values()]
        _done, not_done = futures.wait(pending, timeout=timeout)
        return not not_done


@st.cache_resource(show_spinner=False)
def cost_previews() -> CostPreviews:
    """The app's one :class:`CostPreviews` (shared by every session)."""
    return CostPreviews()


def level_sections_for(opened: OpenedIndex, *, tokenizer: str) -> Sections | None:
    """The index's tokens per level and section, counted as the cost preview and the level picker
    count them (the tokenizer setting ``tokenizer`` as a plan made without the model server reads
    it: the same counts, kept once), or None when they cannot be counted (e.g. an exact
    tokenizer whose package is missing: the preview reports that)."""
    if opened.index is None or opened.source is None:
        return None
    name = planning_tokenizer_name(tokenizer, real_endpoint=False)
    try:
        return cost_previews().level_sections(opened.index, opened.source.key, folder_signature(opened.source.path), name)
    except (ImportError, ValueError):
        return None


def level_costs_for(opened: OpenedIndex, request: GlobalSearchRequest | None, *, wait_s: float = SECTIONS_WAIT_S) -> LevelCosts | None:
    """Each level's map prompt tokens under ``request``'s settings and seed, from the one
    estimate the cost preview shows (:func:`graphrag_core.cost.map_cost`); None while they are
    computed (waited for up to ``wait_s``), or when there is no request to price."""
    if request is None or opened.index is None or opened.source is None:
        return None
    signature = folder_signature(opened.source.path)
    return cost_previews().level_costs(opened.index, opened.source.key, signature, request, wait_s=wait_s)


def wait_for_preview(future: Future[CostPreview]) -> None:
    """Give a preview ``PREVIEW_WAIT_S`` to finish before the page draws without it."""
    futures.wait([future], timeout=PREVIEW_WAIT_S)


__all__ = [
    "PREVIEW_WAIT_S",
    "SECTIONS_WAIT_S",
    "CostPreview",
    "CostPreviews",
    "LevelCosts",
    "cache_signature",
    "cost_previews",
    "level_costs_for",
    "level_sections_for",
    "wait_for_preview",
]
