"""The lazy method (docs/lazy-search.md): query expansion, candidates grouped by community,
relevance tests under a budget by iterative deepening, then map-reduce over each community's
evidence; offline, through a counting OpenAI-compatible endpoint, in events, costs and eval."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import Counter

import pytest

from graphrag_core import GlobalSearchRequest, retrieve_global
from graphrag_core.cache import MemoryMapCache
from graphrag_core.calls import why_no_answer
from graphrag_core.citations import community_sets, find_citations
from graphrag_core.errors import BudgetError, EvaluationError, NoChunkCommunitiesError, RequestValidationError, SpendLimitReached
from graphrag_core.evaluation import parse_conditions
from graphrag_core.events import (
    BatchesPlanned,
    MapBatchStarted,
    QueryExpanded,
    ReduceStarted,
    RelevanceFinished,
    RelevanceStarted,
    RelevanceTested,
    events_from_json,
    events_to_json,
)
from graphrag_core.figures import run_figures
from graphrag_core.index import load_index
from graphrag_core.lazy.candidates import CHUNKS_PER_TEST, memberships
from graphrag_core.lazy.cost import estimate_lazy_cost
from graphrag_core.lazy.expansion import parse_expansion_output
from graphrag_core.lazy.relevance import RELEVANCE_SHAPE_ERROR, parse_relevance_output
from graphrag_core.lazy.walk import MAX_MISSES
from graphrag_core.llm.base import ChatMessage, ChatRequest
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.openai_model import OpenAIChatModel
from graphrag_core.llm.scripted import ScriptedChatModel
from graphrag_core.llm.settings import ModelSettings
from graphrag_core.retry import RetryPolicy
from graphrag_core.models import Community, Entity, Index, SourceChunk
from graphrag_core.samples import sample_path
from graphrag_core.sources import unit_ids
from graphrag_core.state import RunState

from .cli_support import run_cli
from .openai_server import completion_body, openai_server

NO_WAIT = RetryPolicy(sleep=lambda seconds: asyncio.sleep(0))


@pytest.fixture(scope="module")
def jargon() -> Index:
    return load_index(sample_path("jargon"))


@pytest.fixture(scope="module")
def tea() -> Index:
    return load_index(sample_path("zh-tea"))


def lazy(index: Index, question: str, model=None, *, cache=None, policy=NO_WAIT, **settings):  # noqa: ANN001
    events: list = []
    request = GlobalSearchRequest(query=question, method="lazy", seed=settings.pop("seed", 7), **settings)
    result = asyncio.run(retrieve_global(index, request, model or OfflineChatModel(), on_event=events.append, cache=cache, retry_policy=policy))
    return result, events


class Recording(OfflineChatModel):
    """The offline model, keeping every request it was sent."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[ChatRequest] = []

    async def complete(self, request):  # noqa: ANN001, ANN201
        self.requests.append(request)
        return await super().complete(request)


# -- the setting ------------------------------------------------------------------------------------


def test_the_relevance_budget_is_a_positive_integer_with_the_spec_message():
    assert GlobalSearchRequest(query="q", method="lazy").relevance_budget == 100
    for bad in (0, -1, True, 1.5, "100"):
        with pytest.raises(RequestValidationError, match=r"^relevance_budget must be a positive integer\.$"):
            GlobalSearchRequest(query="q", method="lazy", relevance_budget=bad)


def test_lz_conditions_parse_and_refuse_what_does_not_apply():
    lz100, lz500 = parse_conditions("LZ100: method=lazy, relevance_budget=100\nLZ500: method=lazy, relevance_budget=500, map_budget=6000")
    assert (lz100.method, lz500.request("q", 1).relevance_budget, lz500.request("q", 1).map_token_budget) == ("lazy", 500, 6000)
    for text, message in (
        ("C0: level=0, relevance_budget=100", "Condition C0: relevance_budget does not apply to method global."),
        ("SS: method=vector, relevance_budget=5", "Condition SS: relevance_budget does not apply to method vector."),
        ("LZ: method=lazy, level=1", "Condition LZ: level does not apply to method lazy."),
        ("LZ: method=lazy, selection=dynamic", "Condition LZ: selection does not apply to method lazy."),
        ("LZ: method=lazy, relevance_budget=0", "Condition LZ: relevance_budget must be a positive integer."),
    ):
        with pytest.raises(EvaluationError, match=f"^{re.escape(message)}$"):
            parse_conditions(text)


# -- offline, on both samples ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "question"),
    [("jargon", "What are the main themes?"), ("jargon", "What is a kludge and how do hackers use it?"), ("zh-tea", "茶的历史以及怎样泡茶？")],
)
def test_a_lazy_run_answers_offline_with_citations_to_communities_and_source_chunks(sample, question, request):
    index = request.getfixturevalue("jargon" if sample == "jargon" else "tea")
    result, events = lazy(index, question, relevance_budget=40)
    assert result.status == "completed" and result.answer.strip()
    d = result.diagnostics
    assert 0 < d.relevance_tests <= 40 and d.relevance_calls == d.relevance_tests and d.subqueries
    citations = find_citations(result.answer)
    cited_communities = {r.id for c in citations for r in c.references if r.kind == "community"}
    cited_sources = {r.id for c in citations for r in c.references if r.kind == "source"}
    assert cited_communities and cited_sources
    assert cited_communities <= set(result.community_ids) and d.unsupported_citation_count == 0
    relevant = {ref for refs in d.relevant_chunks.values() for ref in refs}
    assert cited_sources <= relevant <= unit_ids(index, "text")
    assert set(result.community_ids) <= set(d.relevant_chunks) <= {c.id for c in index.communities}
    sets = community_sets(result, index_ids=unit_ids(index, "lazy"))
    assert sets.unit == "community" and sets.cited and not sets.unsupported


def test_its_prompts_hold_source_text_and_claims_never_a_community_summary(jargon):
    model = Recording()
    result, events = lazy(jargon, "What is a kludge?", model, relevance_budget=30)
    assert result.status == "completed"
    assert Counter(r.purpose for r in model.requests).keys() == {"expand", "relevance", "map", "reduce"}
    sent = "\n".join(r.prompt_text for r in model.requests)
    summaries = [c.summary.strip() for c in jargon.communities if len(c.summary.strip()) > 40]
    assert summaries and not [s for s in summaries if s in sent]
    assert "[Community summary]" not in sent and "community report" not in sent
    maps = [r for r in model.requests if r.purpose == "map"]
    assert all("[Relevant source text]" in r.messages[-1].content for r in maps)
    assert re.search(r"^\[Community ID: \S+ \| evidence part \d+\]$", maps[0].messages[-1].content, flags=re.MULTILINE)
    chunk_texts = {c.text.strip() for c in jargon.chunks}
    tested = [r for r in model.requests if r.purpose == "relevance"]
    assert all(any(t[:60] in r.messages[-1].content for t in chunk_texts) for r in tested[:5])
    assert all(len(re.findall(r"^\[Source ID: ", r.messages[-1].content, flags=re.MULTILINE)) <= CHUNKS_PER_TEST for r in tested)


def test_the_tests_walk_from_the_top_level_down_and_each_chunk_is_tested_once_per_subquery(jargon):
    result, events = lazy(jargon, "Which hackers wrote which programs and tools?", relevance_budget=60)
    tests = [e for e in events if isinstance(e, RelevanceTested)]
    assert len(tests) == result.diagnostics.relevance_tests == 60
    by_subquery: dict[int, list[str]] = {}
    for t in tests:
        by_subquery.setdefault(t.subquery, []).extend(t.source_ids)
    assert all(len(ids) == len(set(ids)) for ids in by_subquery.values())
    roots = {c.id for c in jargon.communities if c.parent_id is None}
    assert {t.community_id for t in tests if t.round == 0} <= roots
    opened = {t.community_id for t in tests if t.next == "opened"}
    for t in tests:
        parent = jargon.community(t.community_id).parent_id
        assert parent is None or parent in opened, "a community is tested only once its parent was opened"
    # a community left had MAX_MISSES tests in a row that found nothing
    for t in tests:
        if t.next == "left":
            mine = [x for x in tests if x.community_id == t.community_id and x.subquery == t.subquery]
            assert len(mine) >= MAX_MISSES and not any(x.relevant_ids for x in mine[-MAX_MISSES:])


def test_a_community_whose_tests_find_nothing_is_left_and_one_that_does_is_opened():
    """Root r holds a relevant chunk under its child a and only irrelevant ones under b."""
    communities = [
        Community(id="r", level=0, summary="All."),
        Community(id="a", level=1, parent_id="r", summary="A."),
        Community(id="b", level=1, parent_id="r", summary="B."),
    ]
    chunks = [SourceChunk(id=f"s{i}", text=f"tea tea {'leaves are picked in spring' if i == 0 else 'is sold in town'} {i}.") for i in range(12)]
    entities = [Entity(id="ea", title="A", community_ids=("a",), chunk_ids=("s0", "s1")), Entity(id="eb", title="B", community_ids=("b",), chunk_ids=tuple(f"s{i}" for i in range(2, 12)))]
    index = Index(communities=communities, chunks=chunks, entities=entities)

    def script(request: ChatRequest) -> str:
        if request.purpose == "expand":
            return '{"subqueries": ["When is tea picked?"]}'
        if request.purpose == "relevance":
            ids = re.findall(r"^\[Source ID: (\S+)\]$", request.messages[-1].content, flags=re.MULTILINE)
            return json.dumps({"tests": [{"source_id": i, "relevant": i == "s0", "claims": ["Tea is picked in spring."] if i == "s0" else []} for i in ids]})
        return OfflineChatModel().reply(request)

    model = ScriptedChatModel(script)
    result, events = lazy(index, "When is tea picked?", model, relevance_budget=50)
    tests = [e for e in events if isinstance(e, RelevanceTested)]
    assert tests[0].community_id == "r" and tests[0].round == 0
    assert ("r", "opened") in {(t.community_id, t.next) for t in tests}
    b_tests = [t for t in tests if t.community_id == "b"]
    assert len(b_tests) == MAX_MISSES and b_tests[-1].next == "left" and not any(t.relevant_ids for t in b_tests)
    assert result.diagnostics.relevant_chunks == {"r": ["s0"]}  # found by the root's test first: r's group
    finished = next(e for e in events if isinstance(e, RelevanceFinished))
    assert finished.reason == "frontier" and finished.tests < 50
    assert "Tea is picked in spring. [Sources: s0]" in next(e for e in events if isinstance(e, MapBatchStarted)).messages[-1].content


# -- the budget, through a counting endpoint ----------------------------------------------------


def _purpose_of(body: dict) -> str:
    system = body["messages"][0]["content"]
    if "You test source text excerpts" in system:
        return "relevance"
    if "breaking a question into" in system:
        return "expand"
    return "reduce" if "writing the final answer" in system else "map"


def counting_handler(*, fail_every: int = 0, garbage_every: int = 0):
    """An endpoint that answers as the offline model does and counts the requests of each
    purpose; every ``fail_every``-th relevance request gets a 500, every ``garbage_every``-th
    a reply that is not JSON (both are retried, and each retry is a call of its own)."""
    offline = OfflineChatModel()
    counts: Counter[str] = Counter()
    lock = threading.Lock()

    def handle(path: str, body: dict):
        purpose = _purpose_of(body)
        with lock:
            counts[purpose] += 1
            n = counts[purpose]
        if purpose == "relevance" and fail_every and n % fail_every == 0:
            return 500, {"error": {"message": "the server is busy"}}
        if purpose == "relevance" and garbage_every and n % garbage_every == 0:
            return 200, completion_body("I think they are all relevant.")
        request = ChatRequest(purpose=purpose, messages=tuple(ChatMessage(role=m["role"], content=m["content"]) for m in body["messages"]))
        return 200, completion_body(offline.reply(request))

    return handle, counts


@pytest.mark.parametrize(
    ("sample", "budget", "fail_every", "garbage_every"),
    [("jargon", 1, 0, 0), ("jargon", 2, 2, 0), ("jargon", 7, 0, 3), ("jargon", 25, 4, 5), ("zh-tea", 1, 0, 0), ("zh-tea", 3, 2, 0), ("zh-tea", 50, 0, 0)],
)
def test_the_relevance_test_calls_never_pass_the_budget_at_a_real_endpoint(sample, budget, fail_every, garbage_every, request):
    index = request.getfixturevalue("jargon" if sample == "jargon" else "tea")
    handler, counts = counting_handler(fail_every=fail_every, garbage_every=garbage_every)
    with openai_server(handler) as server:
        model = OpenAIChatModel(ModelSettings(provider="openai", base_url=server.base_url, model="tiny", timeout=10))
        try:
            result, events = lazy(index, "What is tea?" if sample == "zh-tea" else "What is a kludge and how do hackers use it?", model,
                                  relevance_budget=budget, map_concurrency=3)
        except Exception:  # noqa: BLE001 - the count is what is checked, whatever the run's end
            result, events = None, []
    assert counts["relevance"] <= budget
    assert counts["expand"] in (1, 2)
    if result is not None:
        d = result.diagnostics
        assert d.relevance_calls == counts["relevance"] and d.relevance_tests <= budget
        state = RunState.replay(events)
        assert state.relevance.used == d.relevance_tests and state.relevance.label == f"relevance tests: {d.relevance_tests:,} of {budget:,}"


def test_a_budget_smaller_than_the_candidates_is_used_whole_and_best_first(jargon):
    result, events = lazy(jargon, "What is a kludge?", relevance_budget=5)
    started = next(e for e in events if isinstance(e, RelevanceStarted))
    finished = next(e for e in events if isinstance(e, RelevanceFinished))
    assert sum(c.candidates for c in started.communities) > 5 * CHUNKS_PER_TEST
    assert finished.tests == 5 and finished.reason == "budget" and result.diagnostics.relevance_tests == 5


def test_budget_one_answers_or_says_clearly_why_not(jargon):
    result, _ = lazy(jargon, "What is a kludge?", relevance_budget=1)
    assert result.diagnostics.relevance_tests == 1
    assert result.status == "completed" and find_citations(result.answer)

    def nothing(request: ChatRequest) -> str:
        if request.purpose == "relevance":
            ids = re.findall(r"^\[Source ID: (\S+)\]$", request.messages[-1].content, flags=re.MULTILINE)
            return json.dumps({"tests": [{"source_id": i, "relevant": False, "claims": []} for i in ids]})
        return OfflineChatModel().reply(request)

    result, events = lazy(jargon, "What is a kludge?", ScriptedChatModel(nothing), relevance_budget=1)
    assert result.status == "no_results" and not [e for e in events if isinstance(e, MapBatchStarted)]
    assert [item.message for item in why_no_answer(events)] == [
        "The relevance tests (1 of 1) found no relevant source chunk before the budget was spent, so no batch was sent."
    ]
    assert result.answer == (
        "No relevant source chunks were found for this query within the relevance budget: 1 of 1 relevance test found none "
        "(a larger relevance_budget tests more source chunks)."
    )


def test_a_question_no_chunk_matches_has_no_candidate_and_says_so():
    index = Index(
        communities=[Community(id="r", level=0, summary="x")],
        chunks=[SourceChunk(id="s1", text="Tea is grown on hills.")],
        entities=[Entity(id="e", title="Tea", community_ids=("r",), chunk_ids=("s1",))],
    )
    result, events = lazy(index, "zyzzyva quux?", relevance_budget=3)
    assert result.status == "no_results" and result.diagnostics.relevance_tests == 0
    assert result.answer == "No relevant source chunks were found for this query: no source chunk linked to a community is a candidate for it."


def test_an_index_that_links_no_chunk_to_a_community_is_refused_before_any_call():
    index = Index(communities=[Community(id="r", level=0, summary="x")], chunks=[SourceChunk(id="s1", text="Tea.")])
    model = ScriptedChatModel("{}")
    with pytest.raises(NoChunkCommunitiesError, match="so method lazy cannot run"):
        lazy(index, "tea?", model)
    assert model.calls == 0


def test_a_map_budget_too_small_for_a_test_is_refused_before_any_call(tea):
    model = ScriptedChatModel("{}")
    with pytest.raises(BudgetError, match=r"^Map token budget cannot fit the relevance test prompt\.$"):
        lazy(tea, "茶?", model, map_token_budget=600, map_output_reserve=512)
    assert model.calls == 0


# -- replies, failures, the cache, the spending limit -------------------------------------------


def test_relevance_replies_must_answer_each_source_once():
    good = '{"tests": [{"source_id": "1", "relevant": true, "claims": ["a", " "]}, {"source_id": 2, "relevant": false, "claims": ["x"]}]}'
    verdicts = parse_relevance_output(good, ["1", "2"])
    assert verdicts["1"].relevant and verdicts["1"].claims == ("a",) and verdicts["2"] == (False, ())
    for bad in (
        '{"tests": [{"source_id": "1", "relevant": true, "claims": []}]}',
        '{"tests": [{"source_id": "1", "relevant": "yes", "claims": []}, {"source_id": "2", "relevant": false, "claims": []}]}',
        '{"tests": [{"source_id": "1", "relevant": true, "claims": []}, {"source_id": "1", "relevant": false, "claims": []}]}',
        '{"tests": [{"source_id": "9", "relevant": true, "claims": []}, {"source_id": "2", "relevant": false, "claims": []}]}',
        '{"rating": 3}',
    ):
        with pytest.raises(ValueError, match=re.escape(RELEVANCE_SHAPE_ERROR)):
            parse_relevance_output(bad, ["1", "2"])
    assert parse_expansion_output('{"subqueries": ["a?", "A?", " ", "b?", "c?", "d?", "e?"]}') == ("a?", "b?", "c?", "d?")
    with pytest.raises(ValueError, match="non-empty list of strings subqueries"):
        parse_expansion_output('{"subqueries": []}')


def test_a_failed_expansion_falls_back_to_the_question_and_failed_tests_are_recorded(tea):
    def script(request: ChatRequest) -> str:
        if request.purpose == "expand":
            return "no json here"
        if request.purpose == "relevance" and "d0015-1" in request.messages[-1].content:
            return "still no json"
        return OfflineChatModel().reply(request)

    result, events = lazy(tea, "茶的历史以及怎样泡茶？", ScriptedChatModel(script), relevance_budget=20)
    expanded = next(e for e in events if isinstance(e, QueryExpanded))
    assert expanded.error and expanded.subqueries == ("茶的历史以及怎样泡茶？",) and expanded.calls == 2
    failed = [e for e in events if isinstance(e, RelevanceTested) and e.failed]
    assert failed and all(e.calls == 2 and e.errors for e in failed)
    assert result.status == "partial" and result.diagnostics.failed_test_count == len(failed)
    assert {item.reason for item in why_no_answer(events)} == {"expansion_failed", "tests_failed"}
    assert result.diagnostics.relevance_tests == sum(e.tests for e in events if isinstance(e, RelevanceTested)) <= 20


def test_a_cached_rerun_makes_no_relevance_call_and_walks_as_far(jargon):
    cache = MemoryMapCache()
    first, _ = lazy(jargon, "What is a kludge?", cache=cache, relevance_budget=12)
    model = Recording()
    again, events = lazy(jargon, "What is a kludge?", model, cache=cache, relevance_budget=12)
    assert [r.purpose for r in model.requests] == ["reduce"]  # the map cache keeps no reduce
    assert again.answer == first.answer and again.diagnostics.relevance_tests == first.diagnostics.relevance_tests
    assert again.diagnostics.relevance_cache_hits == again.diagnostics.relevance_tests and again.diagnostics.relevance_calls == 0
    figures = run_figures(events)
    assert figures.model_calls == 1 and figures.spend.cache_hits >= 1 + again.diagnostics.relevance_tests


def test_the_spending_limit_holds_the_expansion_and_the_tests(jargon):
    with pytest.raises(SpendLimitReached):
        lazy(jargon, "What is a kludge?", relevance_budget=200, spend_limit_tokens=12_000)


# -- events, state, figures, costs ---------------------------------------------------------------


def test_the_events_fold_and_replay_into_the_same_state(jargon):
    result, events = lazy(jargon, "What are the main themes?", relevance_budget=30)
    replayed = events_from_json(events_to_json(events))
    assert replayed == events
    live, again = RunState(), RunState.replay(replayed)
    for event in events:
        live.apply(event)
    for state in (live, again):
        assert state.relevance.label == "relevance tests: 30 of 30" and state.relevance.finished
        assert state.relevance.relevant_count == len({r for refs in result.diagnostics.relevant_chunks.values() for r in refs})
        assert sum(c.tests for c in state.relevance.by_community.values()) == 30
        assert state.model_calls == result.diagnostics.relevance_calls + 1 + result.diagnostics.map_calls + result.diagnostics.reduce_calls
        assert state.usage == result.diagnostics.usage
    d = result.diagnostics
    assert d.usage == d.map_usage + d.relevance_usage + d.expansion_usage + d.reduce_usage
    figures = run_figures(events)
    assert figures.relevance_tests == 30 and figures.model_calls == state.model_calls and figures.relevance_budget == 30


def test_the_estimate_before_the_run_bounds_its_calls(jargon):
    request = GlobalSearchRequest(query="What is a kludge?", method="lazy", relevance_budget=40, seed=7)
    cost = estimate_lazy_cost(jargon, request)
    result, _ = lazy(jargon, "What is a kludge?", relevance_budget=40)
    d = result.diagnostics
    made = d.expansion_calls + d.relevance_calls + d.map_calls + d.reduce_calls
    assert cost.min_calls <= made <= cost.max_calls and cost.max_calls == 1 + 40 + cost.max_map_batches + 1
    assert "40 relevance tests" in cost.text()


def test_memberships_come_from_entities_and_claims_with_their_ancestors(jargon):
    linked = memberships(jargon)
    assert len(linked) == len(jargon.chunks)
    some = next(iter(linked.values()))
    for community_id in some:
        parent = jargon.community(community_id).parent_id
        assert parent is None or parent in some


# -- the command line and an experiment ----------------------------------------------------------


def test_query_takes_method_lazy_and_a_relevance_budget(capsys):
    code, out, err = run_cli(capsys, "query", "jargon", "What is a kludge?", "--method", "lazy", "--relevance-budget", "9", "--no-store", "--no-cache")
    assert code == 0, err
    assert "estimate: At most 1 expansion call, 9 relevance tests" in err
    assert re.search(r"relevance tests: [1-9] of 9 \(", err) and "[Sources: " in out and "[Communities: " in out
    code, out, err = run_cli(capsys, "query", "zh-tea", "茶?", "--method", "lazy", "--relevance-budget", "2", "--json", "--no-store", "--no-cache")
    document = json.loads(out)
    assert code == 0 and document["diagnostics"]["relevance_tests"] <= 2 and document["diagnostics"]["relevance_budget"] == 2
    code, _, err = run_cli(capsys, "query", "jargon", "q?", "--method", "lazy", "--relevance-budget", "0", "--no-store")
    assert code == 2 and "relevance_budget must be a positive integer." in err


def test_lz_conditions_run_in_eval_beside_the_levels_with_their_costs_row(capsys, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "What is a kludge?"}\n{"question": "What are the main themes?"}\n', encoding="utf-8")
    out_file = tmp_path / "report.md"
    code, out, err = run_cli(
        capsys, "eval", questions, "--index", "jargon", "--condition", "C1:level=1,claims=false,sources=false",
        "--condition", "LZ10:method=lazy,relevance_budget=10", "--condition", "LZ20:method=lazy,relevance_budget=20",
        "--eval-db", tmp_path / "e.sqlite3", "--no-store", "--no-cache", "--out", out_file,
    )
    assert code == 0, err
    costs = (tmp_path / "report.costs.csv").read_text(encoding="utf-8").splitlines()
    header = costs[0].split(",")
    rows = {line.split(",")[0]: dict(zip(header, line.split(","))) for line in costs[1:]}
    assert rows["LZ10"]["method"] == "lazy" and rows["C1"]["method"] == "global"
    assert 0 < float(rows["LZ10"]["relevance_calls"]) <= 10 < float(rows["LZ20"]["relevance_calls"]) <= 20
    assert float(rows["LZ10"]["expand_calls"]) == 1 and float(rows["C1"]["relevance_calls"]) == 0
    assert float(rows["LZ10"]["relevance_prompt_tokens"]) > 0


def test_a_lazy_run_stopped_in_its_map_answers_from_what_it_read_with_its_tests_figures(jargon):
    import contextlib

    from graphrag_core.events import MapBatchSucceeded
    from graphrag_core.search import answer_from_read

    offline = OfflineChatModel()
    maps: list[ChatRequest] = []

    async def script(request: ChatRequest) -> str:
        if request.purpose == "map":
            maps.append(request)
            if len(maps) > 2:
                await asyncio.Event().wait()  # only the stop ends this call
        return offline.reply(request)

    async def stop_after_two(events: list) -> None:
        reached = asyncio.Event()

        def on_event(event) -> None:  # noqa: ANN001
            events.append(event)
            if sum(isinstance(e, MapBatchSucceeded) for e in events) >= 2:
                reached.set()

        request = GlobalSearchRequest(query="What are the main themes?", method="lazy", relevance_budget=40, map_concurrency=1, seed=3)
        task = asyncio.ensure_future(retrieve_global(jargon, request, ScriptedChatModel(script), on_event=on_event))
        await reached.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    events: list = []
    asyncio.run(stop_after_two(events))
    assert RunState.replay(events).answerable_from_read
    result = asyncio.run(answer_from_read(jargon, events, OfflineChatModel()))
    d = result.diagnostics
    assert result.status == "partial" and d.stopped_early and d.relevance_tests == 40 and d.relevance_budget == 40
    assert d.relevant_chunks and set(result.community_ids) <= set(d.relevant_chunks)
    assert "[Sources: " in result.answer and d.relevance_calls == 40 and d.subqueries == ["What are the main themes?"]


def test_a_sweep_of_lazy_points_counts_their_relevance_calls(capsys):
    code, out, err = run_cli(
        capsys, "sweep", "jargon", "What is a kludge?", "--method", "lazy", "--relevance-budget", "5", "--levels", "leaf", "--seeds", "1,2",
        "--no-store", "--no-cache",
    )
    assert code == 0, err
    assert "model calls 16 ·" in err  # each point: its expansion, 5 tests, 1 map batch and the reduce


def test_with_an_embedding_model_the_candidates_are_ranked_by_its_cosine(tea):
    from .test_methods import FakeEmbedder

    embedder = FakeEmbedder(["tea", "history", "green"])
    events: list = []
    request = GlobalSearchRequest(query="What is the history of tea?", method="lazy", relevance_budget=5, seed=1)
    result = asyncio.run(retrieve_global(tea, request, OfflineChatModel(), on_event=events.append, embedder=embedder))
    started = next(e for e in events if isinstance(e, RelevanceStarted))
    assert started.ranker == "embedding:fake@test" and result.diagnostics.ranker == "embedding:fake@test"
    assert embedder.calls and result.diagnostics.embedding_calls >= 1 and result.diagnostics.relevance_tests <= 5


def test_the_walk_does_not_depend_on_the_order_its_calls_end_in(jargon):
    import hashlib

    offline = OfflineChatModel()

    def slow(salt: str):  # noqa: ANN202
        def latency(request: ChatRequest) -> float:
            digest = hashlib.sha256((salt + request.messages[-1].content).encode()).digest()
            return digest[0] / 255 * 0.01

        return ScriptedChatModel(offline.reply, latency=latency)

    runs = [lazy(jargon, "What is a kludge and how do hackers use it?", slow(salt), relevance_budget=30, map_concurrency=6) for salt in ("a", "b")]
    (first, first_events), (second, second_events) = runs
    assert first.answer == second.answer and first.diagnostics.relevant_chunks == second.diagnostics.relevant_chunks

    def tests_of(events: list) -> list:
        return sorted((e.round, e.subquery, e.community_id, e.source_ids, e.relevant_ids, e.next) for e in events if isinstance(e, RelevanceTested))

    assert tests_of(first_events) == tests_of(second_events)
    finished = [i for i, e in enumerate(first_events) if isinstance(e, RelevanceFinished)][0]
    assert all(i < finished for i, e in enumerate(first_events) if isinstance(e, RelevanceTested)), "each test is an event as it ends"


def test_the_lazy_preset_puts_the_published_budgets_beside_the_papers_conditions(tea):
    from graphrag_core.evaluation import conditions_text, preset_conditions

    conditions = preset_conditions("lazy", tea)
    names = [c.name for c in conditions]
    assert names[-3:] == ["LZ100", "LZ500", "LZ1500"] and {"C0", "C1", "TS", "SS", "dynamic"} <= set(names)
    assert [c.overrides for c in conditions[-3:]] == [{"method": "lazy", "relevance_budget": b} for b in (100, 500, 1500)]
    assert parse_conditions(conditions_text(conditions)) == conditions


def test_a_lazy_answers_cost_does_not_depend_on_what_the_cache_held(jargon):
    from graphrag_core.evaluation.experiment import cost_of

    cache = MemoryMapCache()
    _, first = lazy(jargon, "What is a kludge?", cache=cache, relevance_budget=12)
    _, again = lazy(jargon, "What is a kludge?", cache=cache, relevance_budget=12)
    cold, warm = cost_of(run_figures(first), method="lazy"), cost_of(run_figures(again), method="lazy")
    assert cold.calls == warm.calls and cold.prompt_tokens == warm.prompt_tokens
    assert cold.prompt_tokens["relevance"] > 0 and cold.prompt_tokens["expand"] > 0 and warm.reported_tokens < cold.reported_tokens


@pytest.mark.parametrize("reserve", [0, 64])
def test_a_chinese_lazy_runs_map_prompts_are_budgeted_with_the_language_rule_they_are_sent_with(tea, reserve):
    """The map prompt of a corpus whose language is known asks for that language: the batches
    are packed with that prompt, so each one sent is within the map budget and its estimate is
    the sent prompt's count (before, the packing left the language rule out)."""
    from graphrag_core.tokens import HeuristicTokenizer, prompt_overhead

    model = Recording()
    budget = 900
    result, events = lazy(tea, "茶的历史以及怎样泡茶？", model, relevance_budget=40, map_prompt_budget=budget, question_reserve=reserve)
    planned = next(e for e in events if isinstance(e, BatchesPlanned)).batches
    maps = [r for r in model.requests if r.purpose == "map"]
    assert maps and len(maps) == len(planned) and "- Write in Chinese, the language of the corpus" in maps[0].messages[0].content
    counter = HeuristicTokenizer()
    sent = sorted(counter.count(r.prompt_text) + prompt_overhead(counter, 2) for r in maps)
    assert max(sent) <= budget
    assert sent == sorted(b.token_estimate for b in planned)
