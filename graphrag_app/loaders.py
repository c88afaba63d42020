"""Opening indexes for the pages (which folders may be opened, and cached loading) and the cost
previews, both objects the app holds once (``st.cache_resource``, shared by every session).

An index is cached (``Index`` is frozen) by its folder and a signature of the folder's file
times, so an index rewritten on disk is read again. The cost preview is kept per index and
request, computed off the script thread (:class:`CostPreviews`).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from graphrag_core.index import load_index
from graphrag_core.cost import dynamic_bound, section_tokens
from graphrag_core.levels import LEAF, level_text
from graphrag_core.models import Index
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.samples import DEFAULT_SAMPLE, SAMPLES
from graphrag_core.search import PROMPT_MESSAGES, plan_batches
from graphrag_core.selection import RatingCost, estimate_rating_cost
from graphrag_core.spending import LimitForecast, forecast_limit
from graphrag_core.tokens import get_tokenizer, planning_tokenizer_name, prompt_overhead

from .settings import ENV_ALLOWED_ROOTS, AppSettings

INDEX_CACHE_ENTRIES = 6
PREVIEW_CACHE_ENTRIES = 128


class IndexAccessError(ValueError):
    """The folder may not be opened here (outside the allowed roots, or no folder given)."""


@dataclass(frozen=True)
class IndexSource:
    """What an ``index`` URL value names: a bundled sample, or a folder."""

    key: str
    path: Path
    is_sample: bool

    @property
    def label(self) -> str:
        return f"{self.key} (sample)" if self.is_sample else str(self.path)


def default_index_key() -> str:
    return DEFAULT_SAMPLE if DEFAULT_SAMPLE in SAMPLES else next(iter(SAMPLES), "")


def sample_names() -> list[str]:
    return list(SAMPLES)


def resolve_source(key: str, settings: AppSettings) -> IndexSource:
    """The index ``key`` names. A folder must lie under an allowed root when roots are set."""
    key = key.strip()
    if key in SAMPLES:
        return IndexSource(key=key, path=SAMPLES[key], is_sample=True)
    if not key:
        raise IndexAccessError("Enter the path of an index folder.")
    if "\x00" in key:
        raise IndexAccessError("The index path holds a NUL character (%00 in a link), which no folder name can hold: check the link or the path.")
    path = Path(key).expanduser().resolve()
    roots = settings.allowed_roots
    if roots is not None:
        allowed = ", ".join(str(root) for root in roots) or "none: only the bundled samples"
        if not _under(path, roots):
            raise IndexAccessError(f"{path} is outside the folders this app may open ({ENV_ALLOWED_ROOTS}: {allowed}).")
        # A file symlink in an allowed folder must not lead outside the roots either.
        folder = path if path.is_dir() else path.parent
        try:
            entries = [entry for entry in os.scandir(folder) if entry.is_symlink()]
        except OSError:
            entries = []
        for entry in entries:
            target = Path(entry.path).resolve()
            if not _under(target, roots):
                raise IndexAccessError(
                    f"{entry.path} links to {target}, which is outside the folders this app may open "
                    f"({ENV_ALLOWED_ROOTS}: {allowed})."
                )
    return IndexSource(key=key, path=path, is_sample=False)


def _under(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def folder_signature(path: Path) -> int:
    """A number that changes when a file of the folder (not its subfolders) is rewritten."""
    try:
        stats = [path.stat()]
        if path.is_dir():
            stats.extend(entry.stat() for entry in os.scandir(path) if entry.is_file())
    except OSError:
        return 0
    return hash(tuple((s.st_mtime_ns, s.st_size) for s in stats))


@st.cache_resource(max_entries=INDEX_CACHE_ENTRIES, show_spinner="Loading the index…")
def _load(path: str, signature: int) -> Index:
    return load_index(path)


def load_source(source: IndexSource) -> Index:
    """The index at ``source`` (cached); raises ``IndexValidationError``/``IndexFormatError``."""
    return _load(str(source.path), folder_signature(source.path))


@dataclass(frozen=True)
class CostPreview:
    """What a run with these settings would cost, before any model call."""

    summaries: int
    batches: int
    map_prompt_tokens: int
    largest_batch_tokens: int
    batch_tokens: tuple[int, ...] = ()
    """Each batch's planned prompt tokens (what a spending limit's forecast lets through)."""
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


def _compute_preview(index: Index, request_json: str, seed: int) -> CostPreview:
    request = GlobalSearchRequest.model_validate_json(request_json)
    # the preview never calls the model server (draw_cost_preview resolves "auto" for the model)
    tokenizer = get_tokenizer(planning_tokenizer_name(request.tokenizer, real_endpoint=False))
    rating = bound = None
    if request.dynamic:  # the map reads at most every leaf (every community when parents are kept)
        rating = estimate_rating_cost(index, request, tokenizer=tokenizer)
        bound = dynamic_bound(index, request)
    communities, _batches, estimates = plan_batches(index, request, seed=seed, tokenizer=tokenizer, communities=bound)
    return CostPreview(
        summaries=len(communities),
        batches=len(estimates),
        map_prompt_tokens=sum(estimates),
        largest_batch_tokens=max(estimates, default=0),
        batch_tokens=tuple(estimates),
        overhead=prompt_overhead(tokenizer, PROMPT_MESSAGES),
        rating=rating,
        bound_label="every community" if request.keep_parent else "the leaves",
    )


class CostPreviews:
    """What runs would cost before any call, computed off the script thread by one worker
    shared by every session: the cost preview of a request (the newest ``preview_entries``
    requests kept, least recently asked dropped first) and each level's tokens per section (the
    newest ``section_entries`` index and tokenizer pairs kept, oldest dropped first). The app
    holds one (:func:`cost_previews`)."""

    def __init__(self, *, preview_entries: int = PREVIEW_CACHE_ENTRIES, section_entries: int = INDEX_CACHE_ENTRIES) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cost-preview")
        self._lock = threading.Lock()
        self._previews: OrderedDict[tuple[str, int, str, int], Future[CostPreview]] = OrderedDict()
        self._sections: OrderedDict[tuple[str, int, str], Future[Sections]] = OrderedDict()
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

    def preview_future(self, index: Index, index_key: str, signature: int, request_json: str, seed: int) -> Future[CostPreview]:
        """The cost preview of a request. The future raises ``BudgetError`` (or a request's
        ``ValueError``) when the request cannot run."""
        key = (index_key, signature, request_json, seed)
        with self._lock:
            future = self._previews.get(key)
            if future is None:
                future = self._pool.submit(_compute_preview, index, request_json, seed)
                self._previews[key] = future
                while len(self._previews) > self._preview_entries:
                    self._previews.popitem(last=False)
            else:
                self._previews.move_to_end(key)
            return future

    def cost_preview(self, index: Index, index_key: str, signature: int, request_json: str, seed: int) -> CostPreview:
        """The summaries, batches and map prompt tokens of a request (raises ``BudgetError``);
        waits for the computation (see :meth:`preview_future` for a page that must not wait)."""
        return self.preview_future(index, index_key, signature, request_json, seed).result()

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until every preview and count asked for so far is computed; False on timeout."""
        with self._lock:
            pending = [*self._previews.values(), *self._sections.values()]
        _done, not_done = futures.wait(pending, timeout=timeout)
        return not not_done


@st.cache_resource(show_spinner=False)
def cost_previews() -> CostPreviews:
    """The app's one :class:`CostPreviews` (shared by every session)."""
    return CostPreviews()


def wait_for_preview(future: Future[CostPreview]) -> None:
    """Give a preview ``PREVIEW_WAIT_S`` to finish before the page draws without it."""
    futures.wait([future], timeout=PREVIEW_WAIT_S)
