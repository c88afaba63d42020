"""Dynamic selection with the offline model on real indexes: the three Microsoft GraphRAG outputs
in ``../shared/data/msgraphrag/`` (skipped when absent) and the bundled samples.

The offline model's ratings are deterministic, so these check the walk's invariants on real
hierarchies rather than particular answers.
"""

from __future__ import annotations

import asyncio

import pytest

from graphrag_core import GlobalSearchRequest, Index, retrieve_global
from graphrag_core.cache import MemoryMapCache
from graphrag_core.index import load_index
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.samples import SAMPLES

from .test_index_msgraphrag import REAL_FOLDERS, real_folder

QUESTIONS = {
    "v3-operation-dulce": "Who leads Operation Dulce and what do they find?",
    "v2-christmas-carol": "Who is Scrooge and what happens to him?",
    "v1-operation-dulce": "Who leads Operation Dulce and what do they find?",
    "jargon": "Who are the wizards?",
    "zh-tea": "普洱茶的产地在哪里？",
    "zh-tang": "賀知章與哪些詩人交往？",
}
RELEVANT = ("kept", "superseded", "failed")


def check_walk(index: Index, result, request: GlobalSearchRequest, *, fallback: bool = False) -> None:  # type: ignore[no-untyped-def]
    d = result.diagnostics
    records = {r.community_id: r for r in d.community_ratings}
    assert [r.community_id for r in d.community_ratings] == [c.id for c in index.communities]
    kept = [c.id for c in index.communities if records[c.id].fate in ("kept", "failed")]
    assert d.summary_count == len(kept) and result.community_level == "dynamic"
    for community in index.communities:
        record = records[community.id]
        if record.fate == "skipped":
            assert not community.summary.strip()
        elif record.fate == "unreached":
            assert record.rating is None and record.round is None
        elif record.fate in ("kept", "superseded", "pruned"):
            assert record.rating is not None and record.round is not None
            assert (record.rating >= request.rating_threshold) == (record.fate != "pruned")
        if record.fate == "kept" and not request.keep_parent:  # the most specific: no kept ancestor
            assert all(records[a.id].fate not in ("kept", "failed") for a in index.path_to_root(community.id)[1:])
        if record.fate == "superseded":  # a relevant child (through blank ones) replaced it
            below = [c for c in index.communities if community.id in {a.id for a in index.path_to_root(c.id)[1:]}]
            assert any(records[c.id].fate in RELEVANT for c in below)
    rated = sum(1 for r in d.community_ratings if r.round is not None and r.fate != "skipped")
    if fallback:  # a fallback round may rate a level again
        assert d.rating_calls >= rated * request.rating_repeats
    else:
        assert d.rating_calls == rated * request.rating_repeats
    assert d.rating_usage.total_tokens > 0 and d.failed_rating_count == 0


def run_dynamic(index: Index, question: str, **fields):  # type: ignore[no-untyped-def]
    request = GlobalSearchRequest(query=question, community_selection="dynamic", seed=1, **fields)
    cache = MemoryMapCache()
    result = asyncio.run(retrieve_global(index, request, OfflineChatModel(), cache=cache))
    return request, result, cache


@pytest.mark.parametrize("name", REAL_FOLDERS)
def test_dynamic_selection_on_real_graphrag_outputs(name: str) -> None:
    index = load_index(real_folder(name))
    request, result, cache = run_dynamic(index, QUESTIONS[name])
    assert result.status in ("completed", "no_results")
    check_walk(index, result, request)
    again = asyncio.run(retrieve_global(index, request.model_copy(update={"reduce_strategy": "stop"}), OfflineChatModel(), cache=cache))
    assert again.diagnostics.rating_calls == 0 and again.diagnostics.fates() == result.diagnostics.fates()


@pytest.mark.parametrize("name", REAL_FOLDERS)
def test_an_off_topic_question_on_real_outputs_ends_cleanly(name: str) -> None:
    index = load_index(real_folder(name))
    request, result, _ = run_dynamic(index, "Which football club won the 1998 world cup final?")
    check_walk(index, result, request, fallback=True)
    if result.status == "no_results":
        assert result.diagnostics.map_calls == 0 and result.diagnostics.summary_count == 0
    else:  # something matched a word of the question: what was kept is what the map read
        assert result.status == "completed" and result.diagnostics.summary_count > 0


@pytest.mark.parametrize("name", list(SAMPLES))
def test_dynamic_selection_on_the_samples(name: str) -> None:
    index = load_index(SAMPLES[name])
    request, result, _ = run_dynamic(index, QUESTIONS[name])
    assert result.status == "completed" and result.community_ids
    check_walk(index, result, request)
    leaf = asyncio.run(retrieve_global(index, GlobalSearchRequest(query=QUESTIONS[name], seed=1), OfflineChatModel()))
    assert result.diagnostics.summary_count < leaf.diagnostics.summary_count  # a focused question reads fewer summaries
    kept_parent_request, kept_parent, _ = run_dynamic(index, QUESTIONS[name], keep_parent=True, rating_threshold=2)
    check_walk(index, kept_parent, kept_parent_request)


def test_a_broad_question_on_a_sample_reaches_the_leaves() -> None:
    index = load_index(SAMPLES["jargon"])
    request, result, _ = run_dynamic(index, "What are the main themes of this corpus?")
    check_walk(index, result, request)
    kept = {r.community_id for r in result.diagnostics.community_ratings if r.fate == "kept"}
    assert kept == {c.id for c in index.select_communities("leaf")}


def test_the_offline_model_finds_the_obvious_communities_for_the_corpus_subject() -> None:
    """茶的历史 ("the history of tea") on zh-tea: 茶 is in every summary and 历史 in none, yet a
    stand-in model must not end with "No relevant community summaries"; the communities that
    speak of history (经历, 历史上) rate above the rest."""
    index = load_index(SAMPLES["zh-tea"])
    request, result, _ = run_dynamic(index, "茶的历史")
    assert result.status == "completed" and result.community_ids
    check_walk(index, result, request)
    ratings = {r.community_id: r.rating for r in result.diagnostics.community_ratings}
    assert all(rating is not None and rating >= 1 for rating in ratings.values())
    history = {c.id for c in index.communities if "历" in c.summary}
    assert history and min(ratings[cid] for cid in history) > min(ratings.values())
    request, focused, _ = run_dynamic(index, "茶的历史", rating_threshold=max(ratings.values()))
    kept = {r.community_id for r in focused.diagnostics.community_ratings if r.fate == "kept"}
    assert kept and kept <= history and "2" in kept  # 茶经、陆羽与煎茶: the Tang dynasty's tea classic
