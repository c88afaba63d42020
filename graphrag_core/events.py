"""The events of a run: frozen, tagged by ``kind``, JSON-serializable, emitted in order.

A finished run's event list is enough to redraw it with no model: see ``state.RunState``.
``at`` is seconds since the run started.

A map batch is answered either by the model (``MapBatchStarted`` per attempt, then
``MapBatchSucceeded`` or ``MapBatchFailed``) or by the map cache (one ``MapBatchCached``, and no
attempt). Event lists recorded before ``MapBatchCached`` existed report a cache hit as
``MapBatchStarted`` then ``MapBatchSucceeded(cached=True)``; every reader of stored events
(:data:`EventList`, :func:`events_from_json`) turns that pair into the ``MapBatchCached`` it
stands for (:func:`with_cache_hits`), so old runs and bundles fold to the same figures.

Why this module is long: the events are one closed, tagged union (:data:`Event`) that every
reader of a stored run validates against; each method's events (the map's, dynamic
selection's, the lazy method's relevance tests) are members of it, and declaring them beside
the union keeps the stored form of a run in one place.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter

from .llm.base import ChatMessage, TokenUsage
from .request import GlobalSearchRequest
from .results import CommunityFate, GlobalSearchResult, Level, ReduceCandidate


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    at: float = 0.0


class RunStarted(_Event):
    kind: Literal["run_started"] = "run_started"
    run_id: str
    request: GlobalSearchRequest
    seed: int
    model: str
    tokenizer: str


class SummariesSelected(_Event):
    kind: Literal["summaries_selected"] = "summaries_selected"
    community_level: Level
    count: int
    community_ids: tuple[str, ...] = ()


class ChunksRanked(_Event):
    """The ``vector`` method ranked the index's source chunks for the question (evaluation spec
    section 7): by ``ranker`` (an embedding model's identity, or ``bm25``), ``relevant_count`` of
    ``unit_count`` chunks relevant. Embedding calls, cache hits and tokens are the ranking's own,
    apart from the chat model's."""

    kind: Literal["chunks_ranked"] = "chunks_ranked"
    ranker: str
    unit_count: int
    relevant_count: int
    embedding_calls: int = 0
    embedding_cache_hits: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)
    duration_s: float = 0.0


class HierarchyNode(BaseModel):
    """One community of the hierarchy, as much as a drawing of the walk needs."""

    model_config = ConfigDict(frozen=True)

    id: str
    parent_id: str | None = None
    level: int = 0
    title: str = ""
    blank: bool = False


class SelectionStarted(_Event):
    """Dynamic selection begins: the model rates communities from the roots down.

    ``hierarchy`` lists every community of the index (index order), so a saved run redraws
    its walk with no index at hand."""

    kind: Literal["selection_started"] = "selection_started"
    community_count: int
    hierarchy: tuple[HierarchyNode, ...] = ()
    root_ids: tuple[str, ...]
    rating_threshold: int
    keep_parent: bool
    rating_repeats: int
    rating_prompt_budget: int


class SelectionRound(_Event):
    """A round's frontier (index order), the blank communities its children replaced, and
    whether it is a fallback round (every community of one level)."""

    kind: Literal["selection_round"] = "selection_round"
    round: int
    community_ids: tuple[str, ...]
    skipped_ids: tuple[str, ...] = ()
    fallback: bool = False


class CommunityRated(_Event):
    """One community rated: its final rating (``None`` and ``failed`` when every repeat failed),
    each repeat's rating, the first successful repeat's reason, and whether it was kept.

    ``superseded_id`` is the ancestor this community removed from the kept set (unless
    ``keep_parent``); ``calls`` counts model calls (cache hits apart), ``usage`` their tokens.
    """

    kind: Literal["community_rated"] = "community_rated"
    community_id: str
    level: int
    round: int
    rating: int | None
    failed: bool = False
    repeat_ratings: tuple[int | None, ...] = ()
    reason: str | None = None
    kept: bool
    superseded_id: str | None = None
    errors: tuple[str, ...] = ()
    calls: int = 0
    cache_hits: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)
    cached_prompt_tokens: int = 0
    """The planned prompt estimate of the repeats the cache answered: what they would have cost without it."""
    started_at: float | None = None
    """When the first of its calls to the model started (the run's clock; the event's ``at`` is
    when its last repeat ended). None when the cache answered every repeat, or in a run
    recorded before calls were timed."""

    @property
    def fate(self) -> Literal["kept", "pruned", "failed"]:
        return "failed" if self.failed else "kept" if self.kept else "pruned"

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens of this community's rating calls."""
        return self.usage.total_tokens


class SelectionFinished(_Event):
    """Dynamic selection ended: the kept communities (index order) and what rating them cost."""

    kind: Literal["selection_finished"] = "selection_finished"
    kept_ids: tuple[str, ...]
    fates: dict[str, CommunityFate] = Field(default_factory=dict)
    rated_count: int
    rounds: int
    calls: int
    cache_hits: int = 0
    failed_count: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens of every rating call."""
        return self.usage.total_tokens


class QueryExpanded(_Event):
    """The lazy method's query expansion (docs/lazy-search.md): the subqueries its relevance
    tests ask. ``error`` is set when every attempt failed: the question itself is then the one
    subquery (the run is ``partial`` at best). ``calls`` counts attempts that reached the model,
    ``usage`` their tokens; ``cache_hits`` is 1 when the map cache answered."""

    kind: Literal["query_expanded"] = "query_expanded"
    subqueries: tuple[str, ...]
    calls: int = 0
    cache_hits: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)
    error: str | None = None
    messages: tuple[ChatMessage, ...] | None = None
    raw_reply: str | None = None
    started_at: float | None = None
    prompt_tokens: int = 0
    """The call's planned prompt estimate (whether the model or the cache answered it)."""


class LazyCommunity(BaseModel):
    """A community the lazy method's candidates reach, as much as a drawing of its tests needs:
    ``candidates`` counts its ranked source chunks (over every subquery, each chunk once)."""

    model_config = ConfigDict(frozen=True)

    id: str
    parent_id: str | None = None
    level: int = 0
    title: str = ""
    candidates: int = 0


class RelevanceStarted(_Event):
    """The lazy method's relevance tests begin: the budget (relevance-test calls at most), the
    subqueries, how the chunks were ranked (``ranker``; the embedding model's calls and tokens
    apart from the chat model's) and how many each subquery ranked, and every community that
    holds a candidate (index order), so a saved run draws its tests with no index at hand."""

    kind: Literal["relevance_started"] = "relevance_started"
    relevance_budget: int
    subqueries: tuple[str, ...]
    ranker: str
    candidate_counts: tuple[int, ...] = ()
    communities: tuple[LazyCommunity, ...] = ()
    root_ids: tuple[str, ...] = ()
    chunks_per_test: int = 1
    max_misses: int = 1
    prompt_budget: int = 0
    embedding_calls: int = 0
    embedding_cache_hits: int = 0
    embedding_usage: TokenUsage = Field(default_factory=TokenUsage)


TestNext = Literal["opened", "again", "left", "exhausted", "stopped"]
"""What a community's walk does after one of its tests: ``opened`` (relevant: its
sub-communities are tested next), ``again`` (tested again with its next candidates),
``left`` (nothing relevant after its tries), ``exhausted`` (no untested candidate is left),
``stopped`` (its round takes what was left of the budget)."""


class RelevanceTested(_Event):
    """One relevance test: up to a few source chunks of one community, for one subquery
    (``subquery`` numbers them from 0), in round ``round``. ``relevant_ids`` are the chunks found
    relevant (with ``claims`` claims drawn from them); ``failed`` when every attempt failed
    (``errors``). ``calls`` counts attempts that reached the model and ``cache_hits`` the map
    cache's answer (each counts against the relevance budget), ``usage`` their tokens."""

    kind: Literal["relevance_tested"] = "relevance_tested"
    community_id: str
    level: int
    round: int
    subquery: int
    source_ids: tuple[str, ...]
    relevant_ids: tuple[str, ...] = ()
    claims: int = 0
    failed: bool = False
    errors: tuple[str, ...] = ()
    next: TestNext = "again"
    calls: int = 0
    cache_hits: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)
    started_at: float | None = None
    prompt_tokens: int = 0
    """The test's planned prompt estimate (whether the model or the cache answered it; retries not counted again)."""

    @property
    def tests(self) -> int:
        """What this test took of the relevance budget: its calls and its cache answer."""
        return self.calls + self.cache_hits


class RelevanceFinished(_Event):
    """The relevance tests ended: ``tests`` of ``relevance_budget`` used (calls and cache
    answers), the relevant chunks found by community (``groups``: community id -> chunk
    references, the communities the map reads), and why it ended (``budget``: spent;
    ``frontier``: nothing left to test)."""

    kind: Literal["relevance_finished"] = "relevance_finished"
    relevance_budget: int
    tests: int
    calls: int
    cache_hits: int = 0
    failed_count: int = 0
    rounds: int = 0
    groups: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    reason: Literal["budget", "frontier"] = "frontier"
    usage: TokenUsage = Field(default_factory=TokenUsage)

    @property
    def relevant_count(self) -> int:
        """Distinct relevant chunks found."""
        return len({ref for refs in self.groups.values() for ref in refs})


class PlannedBatch(BaseModel):
    model_config = ConfigDict(frozen=True)

    index: int
    community_ids: tuple[str, ...]
    token_estimate: int


class BatchesPlanned(_Event):
    kind: Literal["batches_planned"] = "batches_planned"
    batches: tuple[PlannedBatch, ...]
    map_prompt_budget: int
    concurrency: int


class MapBatchStarted(_Event):
    """``messages`` are the verbatim messages sent: on the first attempt, and on a later one
    only when they differ from the attempt before (``None`` means "the same as before")."""

    kind: Literal["map_batch_started"] = "map_batch_started"
    batch_index: int
    attempt: int
    messages: tuple[ChatMessage, ...] | None = None


class MapBatchRetried(_Event):
    kind: Literal["map_batch_retried"] = "map_batch_retried"
    batch_index: int
    attempt: int
    error: str
    delay_s: float = 0.0
    error_type: str | None = None
    """The failed attempt's error class (``ReplyCutError``, ``CallTimedOut``, ...); ``None`` in
    runs recorded before it was kept."""
    raw_reply: str | None = None
    """The failed attempt's reply text, when the model replied (e.g. a reply that did not parse)."""
    usage: TokenUsage | None = None
    """The failed attempt's reported usage (it counts: the tokens were spent)."""
    call_ended_at: float | None = None
    """When the model call returned (run clock), read before its slot was released; the event
    itself is emitted later (after parsing), so the call timeline ends the call here, not at
    ``at``. ``None`` for a cache hit (and in runs recorded before it existed)."""


class MapBatchCached(_Event):
    """A map batch answered from the map cache: no model call, no tokens. ``messages`` are the
    verbatim messages the cached reply answered (the cache's key), ``raw_reply`` that reply;
    the cache read took ``duration_s`` and ended at ``at``."""

    kind: Literal["map_batch_cached"] = "map_batch_cached"
    batch_index: int
    answer: str
    usefulness: float
    duration_s: float = 0.0
    messages: tuple[ChatMessage, ...] | None = None
    raw_reply: str | None = None


class MapBatchSucceeded(_Event):
    """A model call answered a map batch (attempt ``attempt``)."""

    kind: Literal["map_batch_succeeded"] = "map_batch_succeeded"
    batch_index: int
    answer: str
    usefulness: float
    attempt: int
    duration_s: float
    usage: TokenUsage | None = None
    cached: bool = False
    """True only in event lists recorded before ``MapBatchCached`` existed (see the module's
    docstring); readers of stored events turn such an event into a ``MapBatchCached``."""
    raw_reply: str | None = None
    """The reply text as the model gave it, before parsing."""
    call_ended_at: float | None = None
    """When the model call returned (run clock), read before its slot was released; the event
    itself is emitted later (after parsing), so the call timeline ends the call here, not at
    ``at``. ``None`` in runs recorded before it existed."""


class MapBatchFailed(_Event):
    kind: Literal["map_batch_failed"] = "map_batch_failed"
    batch_index: int
    attempts: int
    error: str
    error_type: str
    raw_reply: str | None = None
    """The last attempt's reply text, when the model replied."""
    usage: TokenUsage | None = None
    """The last attempt's reported usage (earlier attempts' came with their retries)."""
    call_ended_at: float | None = None
    """When the model call returned (run clock), read before its slot was released; the event
    itself is emitted later (after parsing), so the call timeline ends the call here, not at
    ``at``. ``None`` for a cache hit (and in runs recorded before it existed)."""


class ModelNotice(_Event):
    """Something the model adapter says once about its endpoint (e.g. a refused response
    format and the form used instead)."""

    kind: Literal["model_notice"] = "model_notice"
    message: str


class RunWarning(_Event):
    """Something that did not stop the run but that its reader should know, said once (e.g. the
    map cache could not be read or written, and the run went on without it)."""

    kind: Literal["run_warning"] = "run_warning"
    message: str


class ReduceSelection(_Event):
    kind: Literal["reduce_selection"] = "reduce_selection"
    candidates: tuple[ReduceCandidate, ...]
    reduce_prompt_budget: int
    strategy: Literal["skip", "stop"]


class ReduceStarted(_Event):
    """An attempt of the reduce call starts (``attempt`` 1, then one per retry)."""

    kind: Literal["reduce_started"] = "reduce_started"
    answer_count: int
    prompt_tokens: int
    attempt: int = 1
    messages: tuple[ChatMessage, ...] | None = None
    """The verbatim messages of the reduce call."""


class ReduceReplied(_Event):
    """One reduce attempt's reply: its raw text, and the parse error when it did not parse."""

    kind: Literal["reduce_replied"] = "reduce_replied"
    attempt: int
    raw_reply: str | None = None
    error: str | None = None
    usage: TokenUsage | None = None
    duration_s: float = 0.0



class ReduceAnswerDelta(_Event):
    """The next piece of the final answer as the model writes it (a streaming reduce).

    The pieces of one attempt, joined, are the answer so far; a new attempt starts over. The
    answer of record is the result's."""

    kind: Literal["reduce_answer_delta"] = "reduce_answer_delta"
    attempt: int
    text: str


class ReduceRetried(_Event):
    """A reduce attempt failed; attempt ``attempt`` follows after ``delay_s`` (as map retries)."""

    kind: Literal["reduce_retried"] = "reduce_retried"
    attempt: int
    error: str
    delay_s: float = 0.0
    usage: TokenUsage | None = None


class ReduceFailed(_Event):
    """Every reduce attempt failed (the run then fails with this error)."""

    kind: Literal["reduce_failed"] = "reduce_failed"
    attempts: int
    error: str
    error_type: str
    usage: TokenUsage | None = None


class PartialAnswerStarted(_Event):
    """A stopped run goes on to answer from what it read: a reduce over the map answers it had
    finished when it stopped. It follows the stop's ``RunFailed(cancelled=True)``; the run then
    ends like any other, its result ``partial`` with ``diagnostics.stopped_early`` set."""

    kind: Literal["partial_answer_started"] = "partial_answer_started"
    answers: int
    """Map answers finished before the stop (usefulness 0 included)."""
    batches_read: int
    """Map batches that ended before the stop (answered or failed)."""
    batch_count: int


class RunFinished(_Event):
    kind: Literal["run_finished"] = "run_finished"
    result: GlobalSearchResult


class RunFailed(_Event):
    """The run ended without a result: every map batch failed, the reduce failed, or it was stopped."""

    kind: Literal["run_failed"] = "run_failed"
    error: str
    error_type: str
    cancelled: bool = False
    usage: TokenUsage | None = None
    """Every token the run's model calls reported before it ended."""
    model_calls: int = 0
    """Attempts that reached the model (rating, map and reduce), cache hits excluded."""
    batches_done: int = 0
    """Map batches answered (from the model or the cache)."""
    batches_failed: int = 0


Event = Annotated[
    Union[
        RunStarted,
        ChunksRanked,
        QueryExpanded,
        RelevanceStarted,
        RelevanceTested,
        RelevanceFinished,
        SelectionStarted,
        SelectionRound,
        CommunityRated,
        SelectionFinished,
        SummariesSelected,
        BatchesPlanned,
        MapBatchStarted,
        MapBatchRetried,
        MapBatchSucceeded,
        MapBatchCached,
        MapBatchFailed,
        ModelNotice,
        RunWarning,
        ReduceSelection,
        ReduceStarted,
        ReduceReplied,
        ReduceAnswerDelta,
        ReduceRetried,
        ReduceFailed,
        RunFinished,
        RunFailed,
        PartialAnswerStarted,
    ],
    Field(discriminator="kind"),
]

def with_cache_hits(events: Iterable[Event]) -> list[Event]:
    """The events with every cache hit as one ``MapBatchCached``.

    A ``MapBatchSucceeded(cached=True)`` (recorded before ``MapBatchCached`` existed) and the
    ``MapBatchStarted`` of its batch before it become one ``MapBatchCached`` in the success's
    place, carrying the start's messages; the read took from the start to the success. Every
    other event is kept as it is and in order, so a list with no such pair comes back equal."""
    events = list(events)
    legacy = [i for i, e in enumerate(events) if isinstance(e, MapBatchSucceeded) and e.cached]
    if not legacy:
        return events
    replaced: dict[int, Event] = {}
    dropped: set[int] = set()
    for i in legacy:
        hit = events[i]
        assert isinstance(hit, MapBatchSucceeded)
        start = next(
            (j for j in range(i - 1, -1, -1) if isinstance(events[j], MapBatchStarted) and events[j].batch_index == hit.batch_index),  # type: ignore[union-attr]
            None,
        )
        messages = None
        if start is not None:
            dropped.add(start)
            messages = events[start].messages  # type: ignore[union-attr]
        replaced[i] = MapBatchCached(
            at=hit.at, batch_index=hit.batch_index, answer=hit.answer, usefulness=hit.usefulness,
            duration_s=hit.duration_s, messages=messages, raw_reply=hit.raw_reply,
        )
    return [replaced.get(i, e) for i, e in enumerate(events) if i not in dropped]


EventList = Annotated[list[Event], AfterValidator(with_cache_hits)]
"""A run's events as stored models read them: validated, each cache hit one ``MapBatchCached``."""

_EVENT: TypeAdapter[Event] = TypeAdapter(Event)
_EVENTS: TypeAdapter[list[Event]] = TypeAdapter(EventList)


def event_from_json(data: str | bytes | dict) -> Event:
    """An event back from its JSON text or dict (one event: a cache hit recorded as a pair is
    read back whole by :func:`events_from_json`)."""
    if isinstance(data, dict):
        return _EVENT.validate_python(data)
    return _EVENT.validate_json(data)


def event_to_json(event: Event) -> str:
    """One event as JSON text (:func:`event_from_json` reads it back)."""
    return _EVENT.dump_json(event).decode()


def events_to_json(events: Iterable[Event]) -> str:
    return _EVENTS.dump_json(list(events)).decode()


def events_from_json(data: str | bytes) -> list[Event]:
    """A run's events back from the JSON text of :func:`events_to_json` (see :func:`with_cache_hits`)."""
    return _EVENTS.validate_json(data)
