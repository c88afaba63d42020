"""Where a level's tokens come from, before any model call."""

from __future__ import annotations

from graphrag_core.cost import level_costs, section_tokens
from graphrag_core.index import load_index
from graphrag_core.models import LEAF
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.samples import sample_path
from graphrag_core.search import plan_batches
from graphrag_core.tokens import get_tokenizer

from .factories import small_index


def test_level_costs_match_the_plan_and_split_the_tokens_by_section() -> None:
    index = small_index()
    request = GlobalSearchRequest(query="What matters?", seed=3, map_token_budget=2000, map_output_reserve=100)
    costs = level_costs(index, request, seed=3)
    assert [c.level for c in costs] == [LEAF, *index.levels()]
    for cost in costs:
        _, _, estimates = plan_batches(index, request.model_copy(update={"community_level": cost.level}), seed=3)
        assert (cost.batches, cost.map_prompt_tokens) == (len(estimates), sum(estimates))
        assert cost.summary_tokens > 0
        assert cost.model_calls == cost.batches + 1


def test_claims_and_excerpts_are_where_level_0_of_the_jargon_sample_spends() -> None:
    index = load_index(sample_path("jargon"))
    summaries, claims, sources = section_tokens(index, 0, get_tokenizer("heuristic"))
    assert claims + sources > 10 * summaries  # 18 short summaries, every leaf claim and excerpt below them
    lean = GlobalSearchRequest(query="?", community_level=0, seed=1, include_claims=False, include_sources=False)
    full = lean.model_copy(update={"include_claims": True, "include_sources": True})
    assert len(plan_batches(index, lean, seed=1)[1]) < 10 < len(plan_batches(index, full, seed=1)[1])


def test_level_costs_take_the_section_counts_already_made() -> None:
    index = small_index()
    request = GlobalSearchRequest(query="What matters?", seed=3, map_token_budget=2000, map_output_reserve=100)
    counted = level_costs(index, request, seed=3)
    given = {"leaf": (1, 2, 3)}  # only the leaves' counts: the other levels are counted here
    costs = level_costs(index, request, seed=3, sections=given)
    assert (costs[0].summary_tokens, costs[0].claim_tokens, costs[0].source_tokens) == (1, 2, 3)
    assert [(c.batches, c.map_prompt_tokens) for c in costs] == [(c.batches, c.map_prompt_tokens) for c in counted]
    assert costs[1:] == counted[1:]
