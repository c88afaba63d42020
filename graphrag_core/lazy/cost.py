"""What a lazy run can cost, before any call (docs/lazy-search.md, "What the budget means").

Its subqueries, and so its tests' chunks, are known only after its expansion, and its map only
after its tests; the estimate is therefore a range built from the index: one expansion, from
one relevance test (the best root's) to the whole budget, each test prompt at the map prompt
budget's bound (:data:`~graphrag_core.lazy.candidates.CHUNKS_PER_TEST` chunks of the index's
mean length with the prompt around them), and a map over at most that many chunks per test
(never more than the index links to communities), their claims taken as long as their text again,
packed into the map budget, then the reduce.

Invariant: ``max_calls`` is exactly what the budget allows before the map (the expansion's
attempts aside) plus the map's bound and the reduce; every figure is an estimate with the
run's tokenizer, never a call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..models import Index
from ..ranking import RankedChunk
from ..request import GlobalSearchRequest
from ..sources import source_units
from ..tokens import Tokenizer, get_tokenizer, prompt_overhead
from ..wording import counted
from .candidates import CHUNKS_PER_TEST, memberships
from .expansion import expansion_request
from .relevance import relevance_request

CLAIMS_SHARE = 1.0
"""The claims a relevant chunk brings into its map text, as a share of its own text (an estimate)."""


@dataclass(frozen=True)
class LazyCost:
    """The range of a lazy run's cost before any call (see the module docstring)."""

    relevance_budget: int
    expansion_prompt_tokens: int
    test_prompt_tokens: int
    """One relevance test's prompt, estimated with chunks of the index's mean length."""
    max_map_batches: int
    max_map_prompt_tokens: int
    reduce_prompt_budget: int

    @property
    def min_calls(self) -> int:
        """The expansion and one test (when nothing is relevant, no map and no reduce follow)."""
        return 2

    @property
    def max_calls(self) -> int:
        return 1 + self.relevance_budget + self.max_map_batches + (1 if self.max_map_batches else 0)

    @property
    def min_prompt_tokens(self) -> int:
        return self.expansion_prompt_tokens + self.test_prompt_tokens

    @property
    def max_relevance_prompt_tokens(self) -> int:
        return self.relevance_budget * self.test_prompt_tokens

    @property
    def max_prompt_tokens(self) -> int:
        return self.expansion_prompt_tokens + self.max_relevance_prompt_tokens + self.max_map_prompt_tokens + (
            self.reduce_prompt_budget if self.max_map_batches else 0
        )

    def text(self) -> str:
        """One sentence for people (the command line's and the app's preview)."""
        return (
            f"At most 1 expansion call, {counted(self.relevance_budget, 'relevance test')} (about {self.test_prompt_tokens:,} prompt tokens each), "
            f"a map of at most {counted(self.max_map_batches, 'batch', 'batches')} and the reduce: {self.min_calls:,}-{self.max_calls:,} model calls, "
            f"up to about {self.max_prompt_tokens:,} prompt tokens."
        )


def estimate_lazy_cost(index: Index, request: GlobalSearchRequest, *, tokenizer: Tokenizer | None = None) -> LazyCost:
    """The cost range of ``request`` (method ``lazy``) on ``index``; raises what a run would
    raise before its first call (an index it cannot search, a budget too small for a test)."""
    tokenizer = tokenizer or get_tokenizer(request.tokenizer)
    units = source_units(index, method=request.method)
    linked = memberships(index)
    lengths = [tokenizer.count(chunk.text) for _, chunk in units]
    mean = max(1, round(sum(lengths) / len(lengths)))
    sample = [RankedChunk(reference=ref, chunk_id=chunk.id, text="x " * (2 * mean), score=1.0) for ref, chunk in units[:CHUNKS_PER_TEST]]
    test, _ = relevance_request(
        request.query, sample, budget=request.map_prompt_budget, output_reserve=request.map_output_reserve, tokenizer=tokenizer
    )
    overhead = prompt_overhead(tokenizer, len(test.messages))
    linked_tokens = sum(n for (_, chunk), n in zip(units, lengths) if chunk.id in linked)
    relevant = min(linked_tokens, CHUNKS_PER_TEST * request.relevance_budget * mean)
    map_text = math.ceil(relevant * (1 + CLAIMS_SHARE))
    content = max(1, request.map_prompt_budget - overhead - tokenizer.count(request.query) - 400)  # the map prompt's own text
    batches = math.ceil(map_text / content) if map_text else 0
    return LazyCost(
        relevance_budget=request.relevance_budget,
        expansion_prompt_tokens=tokenizer.count(expansion_request(request.query, output_reserve=request.map_output_reserve).prompt_text) + overhead,
        test_prompt_tokens=tokenizer.count(test.prompt_text) + overhead,
        max_map_batches=batches,
        max_map_prompt_tokens=map_text + batches * (request.map_prompt_budget - content),
        reduce_prompt_budget=request.reduce_prompt_budget,
    )


__all__ = ["CLAIMS_SHARE", "LazyCost", "estimate_lazy_cost"]
