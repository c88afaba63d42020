"""A lazy run's relevance tests as a fold over their events (:class:`RelevanceState`), part of
the run's one fold (:class:`~graphrag_core.state.RunState`, its ``relevance``), so a live view
and a replay draw the same "relevance tests: N of B" and the same relevant chunks by community.
Folding is cheap and never calls anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..events import LazyCommunity, QueryExpanded, RelevanceFinished, RelevanceStarted, RelevanceTested
from ..llm.base import TokenUsage

RelevanceEvent = QueryExpanded | RelevanceStarted | RelevanceTested | RelevanceFinished


@dataclass
class CommunityTests:
    """One community's tests so far: how many, the chunks they tested, those found relevant,
    and what the walk did with it after its last test."""

    community_id: str
    level: int = 0
    title: str = ""
    tests: int = 0
    tested: int = 0
    relevant: int = 0
    failed: int = 0
    last: str | None = None


@dataclass
class RelevanceState:
    """The query expansion and the relevance tests of a lazy run (empty for the other methods)."""

    active: bool = False
    finished: bool = False
    budget: int | None = None
    subqueries: tuple[str, ...] = ()
    expansion_error: str | None = None
    expansion_calls: int = 0
    expansion_cache_hits: int = 0
    ranker: str | None = None
    communities: dict[str, LazyCommunity] = field(default_factory=dict)
    by_community: dict[str, CommunityTests] = field(default_factory=dict)
    tests: list[RelevanceTested] = field(default_factory=list)
    used: int = 0
    """Tests made so far (calls and cache answers): what is taken of the budget."""
    prompt_tokens: int = 0
    """The tests' planned prompt estimates (each test once, the cache's answers too)."""
    expansion_prompt_tokens: int = 0
    calls: int = 0
    cache_hits: int = 0
    failed: int = 0
    relevant_ids: set[str] = field(default_factory=set)
    usage: TokenUsage = field(default_factory=TokenUsage)
    """The relevance tests' tokens (the expansion's are apart: ``expansion_usage``)."""
    expansion_usage: TokenUsage = field(default_factory=TokenUsage)
    embedding_usage: TokenUsage = field(default_factory=TokenUsage)
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    reason: str | None = None

    def apply(self, event: RelevanceEvent) -> None:
        match event:
            case QueryExpanded():
                self.active, self.subqueries, self.expansion_error = True, event.subqueries, event.error
                self.expansion_calls, self.expansion_cache_hits, self.expansion_usage = event.calls, event.cache_hits, event.usage
                self.expansion_prompt_tokens = event.prompt_tokens
            case RelevanceStarted():
                self.active, self.budget, self.subqueries, self.ranker = True, event.relevance_budget, event.subqueries, event.ranker
                self.communities = {c.id: c for c in event.communities}
                self.embedding_usage = event.embedding_usage
            case RelevanceTested():
                self.tests.append(event)
                self.used += event.tests
                self.prompt_tokens += event.prompt_tokens
                self.calls += event.calls
                self.cache_hits += event.cache_hits
                self.failed += event.failed
                self.usage = self.usage + event.usage
                self.relevant_ids.update(event.relevant_ids)
                known = self.communities.get(event.community_id)
                mine = self.by_community.setdefault(
                    event.community_id, CommunityTests(event.community_id, event.level, known.title if known is not None else "")
                )
                mine.tests += 1
                mine.tested += len(event.source_ids)
                mine.relevant += len(event.relevant_ids)
                mine.failed += event.failed
                mine.last = event.next
            case RelevanceFinished():
                self.finished, self.groups, self.reason = True, event.groups, event.reason
                self.used, self.calls, self.cache_hits, self.usage = event.tests, event.calls, event.cache_hits, event.usage

    @property
    def label(self) -> str:
        """What a live view names: ``relevance tests: 37 of 100``."""
        return f"relevance tests: {self.used:,} of {self.budget:,}" if self.budget is not None else "relevance tests: none yet"

    @property
    def relevant_count(self) -> int:
        """Distinct relevant chunks found so far."""
        return len(self.relevant_ids)

    @property
    def spent(self) -> TokenUsage:
        """The chat model's tokens before the map: the expansion's and the tests'."""
        return self.expansion_usage + self.usage

    @property
    def degraded(self) -> bool:
        """Whether the expansion or a test failed (the run is at best partial)."""
        return self.expansion_error is not None or self.failed > 0

    def diagnostics(self) -> dict[str, object]:
        """The lazy figures of a run's diagnostics, as far as the events tell (the same keys as
        :meth:`graphrag_core.lazy.evidence.Evidence.diagnostics`, for a run answered from what it
        read after a stop)."""
        return dict(
            relevance_budget=self.budget, relevance_tests=self.used, relevance_calls=self.calls, relevance_cache_hits=self.cache_hits,
            relevance_usage=self.usage, failed_test_count=self.failed, expansion_calls=self.expansion_calls,
            expansion_usage=self.expansion_usage, subqueries=list(self.subqueries),
            relevant_chunks={cid: list(refs) for cid, refs in self.groups.items()}, ranker=self.ranker, embedding_usage=self.embedding_usage,
        )

    @property
    def model_calls(self) -> int:
        """The expansion's and the tests' calls that reached the model."""
        return self.expansion_calls + self.calls


__all__ = ["CommunityTests", "RelevanceEvent", "RelevanceState"]
