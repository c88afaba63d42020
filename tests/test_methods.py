"""The text and vector methods (evaluation spec section 7): source-text map-reduce (the paper's TS)
and naive RAG (SS), with BM25 offline and an embedding model's cosine when one is given."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Sequence

import pytest

from graphrag_core import GlobalSearchRequest, Index, retrieve_global
from graphrag_core.cache import MemoryMapCache
from graphrag_core.calls import why_no_answer
from graphrag_core.citations import community_sets, find_citations
from graphrag_core.errors import FatalModelError, NoSourceChunksError, ReplyTooLongError, RequestValidationError, RetryableModelError
from graphrag_core.events import BatchesPlanned, ChunksRanked, MapBatchStarted, ReduceSelection, ReduceStarted, SummariesSelected
from graphrag_core.evaluation.keys import answer_key
from graphrag_core.figures import run_figures
from graphrag_core.index import load_index
from graphrag_core.llm.base import TokenUsage
from graphrag_core.llm.embeddings import EmbeddingSettings, Embeddings
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.scripted import ScriptedChatModel
from graphrag_core.llm.settings import ModelSettings, SettingsError
from graphrag_core.retry import RetryPolicy
from graphrag_core.models import Community
from graphrag_core.naive_rag import MAX_UNPACKED_LISTED, plan_excerpts
from graphrag_core.prompts import map_prompt_skeleton, rag_prompt_skeleton
from graphrag_core.ranking import RankedChunk, decode_vector, embedding_key, encode_vector, rank_by_bm25
from graphrag_core.request import inapplicable_settings
from graphrag_core.results import NO_RELEVANT_CHUNKS_ANSWER
from graphrag_core.sources import source_chunk, source_units, unit_ids
from graphrag_core.state import RunState
from graphrag_core.tokens import estimate_tokens

from . import MSGRAPHRAG_DATA
from .factories import small_index
from .openai_server import Reply, embedding_body, openai_server


def run(coro):
    return asyncio.run(coro)


def search(index: Index, question: str, method: str, model=None, *, engine: dict | None = None, seed: int = 3, **settings) -> tuple:  # noqa: ANN001
    """A run of ``method`` with the offline model (or ``model``); ``engine`` holds retrieve_global's keywords."""
    events: list = []
    request = GlobalSearchRequest(query=question, method=method, seed=seed, **settings)
    result = run(retrieve_global(index, request, model or OfflineChatModel(), on_event=events.append, **(engine or {})))
    return result, events


class FakeEmbedder:
    """An embedding model whose vectors are a function of the text: one dimension per word of
    ``vocabulary`` (how often it occurs), so cosine ranks by shared words."""

    def __init__(self, vocabulary: Sequence[str], *, failures: Sequence[BaseException] = ()) -> None:
        self.identity = "embedding:fake@test"
        self.vocabulary = [w.lower() for w in vocabulary]
        self.calls: list[list[str]] = []
        self.failures = list(failures)

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        self.calls.append(list(texts))
        if self.failures:
            raise self.failures.pop(0)
        vectors = [[float(re.findall(r"[a-z]+", t.lower()).count(w)) + 0.01 for w in self.vocabulary] for t in texts]
        return Embeddings(vectors=vectors, usage=TokenUsage(prompt_tokens=sum(estimate_tokens(t) for t in texts)))


# -- the setting ------------------------------------------------------------------------------------


def test_method_is_a_setting_with_its_own_message():
    assert GlobalSearchRequest(query="q").method == "global"
    for bad in ("TS", "", None, 1):
        with pytest.raises(RequestValidationError, match=r'^method must be "global", "text", "vector" or "lazy"\.$'):
            GlobalSearchRequest(query="q", method=bad)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("TS: method=text, level=1", "Condition TS: level does not apply to method text."),
        ("TS: method=text, claims=false", "Condition TS: claims does not apply to method text."),
        ("TS: method=text, sources=false", "Condition TS: sources does not apply to method text."),
        ("TS: method=text, selection=dynamic", "Condition TS: selection does not apply to method text."),
        ("SS: method=vector, community_level=0", "Condition SS: community_level does not apply to method vector."),
        ("SS: method=vector, rating_threshold=2", "Condition SS: rating_threshold does not apply to method vector."),
        ("SS: method=vector, map_budget=4000", "Condition SS: map_budget does not apply to method vector."),
    ],
)
def test_a_condition_refuses_settings_that_mean_nothing_for_its_method(text: str, message: str):
    from graphrag_core.evaluation import parse_conditions
    from graphrag_core.errors import EvaluationError

    with pytest.raises(EvaluationError, match=f"^{re.escape(message)}$"):
        parse_conditions(text)


def test_conditions_of_the_chunk_methods_keep_what_applies():
    from graphrag_core.evaluation import parse_conditions

    ts, ss = parse_conditions("TS: method=text, map_budget=4000, strategy=stop\nSS: method=vector, reduce_budget=3000")
    assert (ts.method, ss.method) == ("text", "vector")
    assert ts.request("q", 1).map_token_budget == 4000 and ss.request("q", 1).reduce_token_budget == 3000
    assert set(inapplicable_settings("text")) < set(inapplicable_settings("vector")) and inapplicable_settings("global") == ("relevance_budget",)


def test_a_global_answer_keeps_its_key_whatever_the_method_field_and_vector_keys_name_the_ranker():
    global_request = GlobalSearchRequest(query="q", seed=1)
    vector = GlobalSearchRequest(query="q", seed=1, method="vector")
    assert answer_key("fp", "m", global_request) == answer_key("fp", "m", global_request.model_copy(update={"method": "global"}))
    assert answer_key("fp", "m", vector, ranker="bm25") != answer_key("fp", "m", vector, ranker="embedding:x@y")
    assert answer_key("fp", "m", vector, ranker="bm25") != answer_key("fp", "m", global_request)


# -- text: map-reduce over the source chunks ----------------------------------------------------------


def test_text_maps_over_every_source_chunk_headed_by_its_id_and_cites_them():
    index = small_index()
    result, events = search(index, "What does a wizard know?", "text")
    selected = next(e for e in events if isinstance(e, SummariesSelected))
    assert selected.community_ids == ("k1", "k2", "k3") and result.diagnostics.summary_count == 3
    sent = [e.messages[-1].content for e in events if isinstance(e, MapBatchStarted) and e.messages]
    headers = re.findall(r"^\[Source ID: (\S+) \| part (\d+)\]$", "\n".join(sent), flags=re.MULTILINE)
    assert sorted(h for h, _ in headers) == ["k1", "k2", "k3"]
    assert "source text excerpts" in next(e for e in events if isinstance(e, MapBatchStarted)).messages[0].content
    assert result.status == "completed" and result.community_ids and set(result.community_ids) <= {"k1", "k2", "k3"}
    cited = [r.id for c in find_citations(result.answer) for r in c.references if r.kind == "source"]
    assert cited and set(cited) <= set(result.community_ids)
    assert result.diagnostics.unsupported_citation_count == 0
    sets = community_sets(result, index_ids=unit_ids(index, "text"))
    assert sets.unit == "source" and sets.cited and not sets.unsupported
    reduce = next(e for e in events if isinstance(e, ReduceStarted))
    assert "[Sources: id, id]" in reduce.messages[0].content and "Source IDs:" in reduce.messages[-1].content


def test_text_batches_are_shuffled_with_the_seed_and_packed_into_the_map_budget():
    index = small_index()
    budget = estimate_tokens(map_prompt_skeleton("kludge?", unit="source")) + 40  # room for about two chunks
    settings = {"seed": 5, "map_token_budget": budget, "map_output_reserve": 0}
    first = [e.batches for e in search(index, "kludge?", "text", **settings)[1] if isinstance(e, BatchesPlanned)]
    again = [e.batches for e in search(index, "kludge?", "text", **settings)[1] if isinstance(e, BatchesPlanned)]
    assert first == again and len(first[0]) >= 2  # a small budget: more than one batch
    assert all(b.token_estimate <= budget for b in first[0])
    assert sorted(cid for b in first[0] for cid in b.community_ids) == ["k1", "k2", "k3"]


def test_an_index_without_source_chunks_refuses_both_methods_with_the_spec_message():
    index = Index(communities=[Community(id="r", level=0, summary="A root.")])
    for method in ("text", "vector"):
        events: list = []
        with pytest.raises(NoSourceChunksError, match=rf"^The index has no source chunks, so method {method} cannot run\.$"):
            run(retrieve_global(index, GlobalSearchRequest(query="q", method=method), OfflineChatModel(), on_event=events.append))
        assert events[-1].kind == "run_failed"  # recorded as a failed run, like any other


# -- vector: naive RAG --------------------------------------------------------------------------------


def test_vector_ranks_by_bm25_packs_in_rank_order_and_makes_one_call():
    index = small_index()
    model = ScriptedChatModel(lambda request: {"answer": "A wizard knows complex software. [Sources: k1]"})
    result, events = search(index, "What does a wizard or a hacker know about complex software?", "vector", model=model)
    ranked = next(e for e in events if isinstance(e, ChunksRanked))
    assert ranked.ranker == "bm25" and ranked.unit_count == 3 and ranked.embedding_calls == 0
    assert model.calls == 1 and model.requests[0].purpose == "reduce"
    prompt = model.requests[0].messages[-1].content
    assert prompt.index("[Source ID: k1]") < prompt.index("[Source ID: k2]")  # k1 shares three terms, k2 one
    assert "[Source ID: k3]" not in prompt  # no term in common: not relevant
    assert "most relevant first" in model.requests[0].messages[0].content
    assert result.community_ids[0] == "k1" and result.diagnostics.batch_count == 0 and result.diagnostics.ranker == "bm25"
    assert result.answer.endswith("[Sources: k1]") and result.diagnostics.unsupported_citation_count == 0
    figures = run_figures(events)
    assert figures.model_calls == 1 and figures.reduce_prompt_tokens and figures.ranker == "bm25"
    assert RunState.replay(events).ranking == ranked


def test_a_chunk_sharing_no_term_with_the_question_is_not_relevant():
    result, events = search(small_index(), "Tell me about penguins and glaciers?", "vector")
    assert result.status == "no_results" and result.answer == NO_RELEVANT_CHUNKS_ANSWER
    assert next(e for e in events if isinstance(e, ChunksRanked)).relevant_count == 0
    (why,) = why_no_answer(events)  # what query and the Evidence page say: not "no community summaries"
    assert why.reason == "no_relevant_chunks" and "3 source chunks" in why.message


def test_a_broad_question_ranks_the_most_typical_chunks():
    ranking = rank_by_bm25(small_index(), "What are the main themes?")
    assert len(ranking.chunks) == 3 and "typical" in ranking.ranker


def test_packing_keeps_rank_order_within_the_budget_and_lists_a_bounded_tail():
    chunks = [RankedChunk(reference=f"c{i}", chunk_id=f"c{i}", text="word " * (50 + 40 * (i % 3)), score=100.0 - i) for i in range(60)]
    skeleton = rag_prompt_skeleton("q")
    budget = estimate_tokens(skeleton) + 400
    plan = plan_excerpts(chunks, skeleton, budget, strategy="skip")
    selected = [a.community_ids[0] for a in plan.selected]
    assert selected == sorted(selected, key=lambda ref: int(ref[1:]))  # rank order
    assert estimate_tokens(skeleton + "\n" + plan.context) <= budget == budget and plan.prompt_tokens <= budget
    unpacked = [c for c in plan.candidates if c.fate != "selected"]
    assert 0 < len(unpacked) <= MAX_UNPACKED_LISTED
    assert plan.candidates[0].answer.usefulness == 100.0
    stop = plan_excerpts(chunks, skeleton, budget, strategy="stop")
    fates = [c.fate for c in stop.candidates]
    assert fates.index("skipped") == len(stop.selected) and set(fates[fates.index("skipped") + 1 :]) == {"not_tried"}


def test_vector_with_an_embedding_model_ranks_by_cosine_and_caches_the_embeddings():
    index = small_index()
    cache = MemoryMapCache()
    embedder = FakeEmbedder(["kludge", "ugly", "wizard", "hacker"])
    question = "Why is a kludge ugly?"
    result, events = search(index, question, "vector", engine={"cache": cache, "embedder": embedder})
    ranked = next(e for e in events if isinstance(e, ChunksRanked))
    assert ranked.ranker == "embedding:fake@test" and result.community_ids[0] == "k3"
    assert ranked.embedding_calls == 2 and ranked.usage.prompt_tokens > 0  # the chunks, then the question
    assert result.diagnostics.embedding_usage == ranked.usage and result.diagnostics.usage.prompt_tokens != ranked.usage.prompt_tokens
    stored = cache.get(embedding_key(embedder.identity, index.chunk("k3").text))
    assert stored is not None and list(decode_vector(stored)) == pytest.approx([1.01, 1.01, 0.01, 0.01])
    # a new index object (another process) on the same cache embeds nothing again
    again = FakeEmbedder(["kludge", "ugly", "wizard", "hacker"])
    _, events = search(small_index(), question, "vector", engine={"cache": cache, "embedder": again})
    ranked_again = next(e for e in events if isinstance(e, ChunksRanked))
    assert again.calls == [] and ranked_again.embedding_calls == 0 and ranked_again.embedding_cache_hits == 4


def test_an_embedding_call_is_retried_and_a_fatal_one_fails_the_run():
    policy = RetryPolicy(sleep=lambda s: asyncio.sleep(0))
    flaky = FakeEmbedder(["kludge"], failures=[RetryableModelError("busy")])
    result, _ = search(small_index(), "kludge?", "vector", engine={"embedder": flaky, "retry_policy": policy})
    assert result.status == "completed" and len(flaky.calls) == 3
    broken = FakeEmbedder(["kludge"], failures=[FatalModelError("bad key")])
    events: list = []
    with pytest.raises(FatalModelError):
        run(retrieve_global(small_index(), GlobalSearchRequest(query="kludge?", method="vector"), OfflineChatModel(), on_event=events.append, embedder=broken))
    assert events[-1].kind == "run_failed"


def test_vectors_round_trip_through_the_cache_text():
    assert list(decode_vector(encode_vector([0.5, -2.0, 3.25]))) == [0.5, -2.0, 3.25]
    assert decode_vector("not base64!") is None


def test_offline_naive_rag_answers_from_the_excerpts_and_cites_them():
    result, events = search(small_index(), "What is a kludge?", "vector")
    assert result.status == "completed" and "[Sources: k3]" in result.answer
    selection = next(e for e in events if isinstance(e, ReduceSelection))
    assert [c.answer.community_ids for c in selection.candidates if c.fate == "selected"][0] == ("k3",)


# -- embedding settings -------------------------------------------------------------------------------


def test_embedding_settings_are_read_from_their_keys_and_never_show_the_key():
    assert EmbeddingSettings.from_mapping({}) is None
    chat = ModelSettings(provider="openai", base_url="http://llm.local:8000/v1", api_key="sk-chat")
    settings = EmbeddingSettings.from_mapping({"GRAPHRAG_EMBEDDING_MODEL": "nomic-embed"}, chat=chat)
    assert settings is not None and settings.base_url == "http://llm.local:8000/v1" and settings.api_key.get_secret_value() == "sk-chat"
    assert settings.identity == "embedding:nomic-embed@llm.local:8000" and "sk-chat" not in repr(settings.describe())
    elsewhere = EmbeddingSettings.from_mapping({"GRAPHRAG_EMBEDDING_MODEL": "e", "GRAPHRAG_EMBEDDING_BASE_URL": "https://other.example/v1"}, chat=chat)
    assert elsewhere is not None and elsewhere.api_key is None  # the chat key never goes to another endpoint
    with pytest.raises(SettingsError, match="GRAPHRAG_EMBEDDING_BATCH_SIZE"):
        EmbeddingSettings.from_mapping({"GRAPHRAG_EMBEDDING_MODEL": "e", "GRAPHRAG_EMBEDDING_BATCH_SIZE": "many"})


def test_the_openai_embedding_adapter_batches_and_reads_usage():
    from graphrag_core.llm.openai_embeddings import OpenAIEmbeddingModel

    with openai_server(lambda path, body: (200, embedding_body(body["input"]))) as server:
        settings = EmbeddingSettings(model="embed-small", base_url=server.base_url, batch_size=2, api_key="sk-e")
        result = run(OpenAIEmbeddingModel(settings).embed(["one", "two two", "three"]))
    assert len(result.vectors) == 3 and result.usage.prompt_tokens == 4
    assert [(r["path"], r["json"]["model"], r["json"]["input"]) for r in server.requests] == [
        ("/v1/embeddings", "embed-small", ["one", "two two"]),
        ("/v1/embeddings", "embed-small", ["three"]),
    ]
    assert server.authorizations == ["Bearer sk-e", "Bearer sk-e"]


def test_the_openai_embedding_adapter_turns_errors_into_model_errors():
    from graphrag_core.llm.openai_embeddings import OpenAIEmbeddingModel

    with openai_server() as server:
        server.script(Reply(401, {"error": {"message": "invalid key sk-secret"}}), Reply(503, {"error": {"message": "busy"}}, headers={"retry-after": "2"}))
        model = OpenAIEmbeddingModel(EmbeddingSettings(model="embed-small", base_url=server.base_url, api_key="sk-secret"))
        with pytest.raises(FatalModelError) as fatal:
            run(model.embed(["one"]))
        with pytest.raises(RetryableModelError) as busy:
            run(model.embed(["one"]))
    assert "HTTP 401" in str(fatal.value) and "sk-secret" not in str(fatal.value)
    assert busy.value.retry_after == 2.0


def test_an_embedding_reply_without_usage_is_counted_by_the_spec_estimate_and_marked_estimated():
    from graphrag_core.llm.openai_embeddings import OpenAIEmbeddingModel

    def unreported(path: str, body: dict) -> tuple[int, dict]:
        reply = embedding_body(body["input"])
        del reply["usage"]
        return 200, reply

    texts = ["one", "two two", "three"]
    with openai_server(unreported) as server:
        result = run(OpenAIEmbeddingModel(EmbeddingSettings(model="e", base_url=server.base_url, batch_size=2)).embed(texts))
    assert result.usage.prompt_tokens == sum(estimate_tokens(t) for t in texts) and result.usage.estimated_calls == 2


def test_the_openai_embedding_adapter_reaches_azure_as_the_chat_adapter_does():
    """An Azure base URL that already names its deployment (``.../openai/deployments/...``) is
    called as given, as the chat adapter calls it; a resource URL gets the deployment's path."""
    from graphrag_core.llm.openai_embeddings import OpenAIEmbeddingModel

    with openai_server(lambda path, body: (200, embedding_body(body["input"]))) as server:
        resource = server.base_url.removesuffix("/v1")
        for base_url in (f"{resource}/openai/deployments/my-embeddings", resource):
            settings = EmbeddingSettings(model="my-embeddings", base_url=base_url, api_version="2024-06-01")
            assert len(run(OpenAIEmbeddingModel(settings).embed(["one"])).vectors) == 1
        assert [r["path"] for r in server.requests] == ["/openai/deployments/my-embeddings/embeddings?api-version=2024-06-01"] * 2


def test_the_openai_embedding_adapter_ends_at_its_deadline_and_reads_no_reply_past_its_bound():
    from graphrag_core.llm.openai_embeddings import OpenAIEmbeddingModel, reply_bound

    with openai_server(lambda path, body: Reply(body=embedding_body(body["input"]), pace=0.2)) as server:
        model = OpenAIEmbeddingModel(EmbeddingSettings(model="e", base_url=server.base_url, timeout=1))
        started = time.monotonic()
        with pytest.raises(RetryableModelError, match=r"Embedding request .* its reply did not end within 1s of its first byte"):
            run(model.embed(["one"]))
        assert time.monotonic() - started < 5  # the body alone would take over half a minute
    bound = reply_bound(1)
    with openai_server(lambda path, body: Reply(body=b"x" * (bound + 10))) as server:
        model = OpenAIEmbeddingModel(EmbeddingSettings(model="e", base_url=server.base_url, batch_size=1))
        with pytest.raises(ReplyTooLongError, match=rf"passed {bound:,} bytes, so it was refused"):
            run(model.embed(["one"]))


# -- Microsoft GraphRAG outputs -------------------------------------------------------------------------


def test_a_msgraphrag_index_names_its_chunks_by_their_human_readable_ids():
    folder = MSGRAPHRAG_DATA / "v3-operation-dulce"
    if not folder.exists():
        pytest.skip("the Microsoft GraphRAG outputs in ../shared are not here")
    index = load_index(folder)
    units = source_units(index)
    assert [ref for ref, _ in units] == [c.short_id for c in index.chunks if c.text.strip()]
    assert source_chunk(index, units[0][0]) == units[0][1]
    result, _ = search(index, "Who leads the team?", "text")
    assert result.status == "completed" and set(result.community_ids) <= {ref for ref, _ in units}


# -- what front ends show ---------------------------------------------------------------------------


def test_query_progress_names_the_source_chunks_a_method_reads(small_index_dir, run_db):  # noqa: ANN001
    import io

    from graphrag_cli.main import main

    def progress(method: str) -> str:
        err = io.StringIO()
        code = main(["query", str(small_index_dir), "What is a kludge?", "--method", method], stdout=io.StringIO(), stderr=err, environ={"GRAPHRAG_EXPLORER_DB": str(run_db)})
        assert code == 0, err.getvalue()
        return err.getvalue()

    text = progress("text")
    assert "mapping over 3 source chunks" in text and "map: 1/1 batches done" in text and "community summaries" not in text
    vector = progress("vector")
    assert "ranked 3 source chunks by BM25: 1 relevant" in vector and "answering from 1 source chunk, " in vector
    assert "community summaries" not in vector and "map:" not in vector


def test_a_run_over_chunks_is_named_by_its_method_in_lists():
    from graphrag_core.report import settings_text

    assert settings_text(GlobalSearchRequest(query="q", method="text", map_token_budget=4000), seed=3) == "text (TS) · map 4,000 · reduce 8,000 · seed 3 · skip"
    assert settings_text(GlobalSearchRequest(query="q", method="vector"), seed=3) == "vector (SS) · reduce 8,000 · seed 3 · skip"


def test_query_runs_a_method_and_its_json_names_the_chunks(small_index_dir, run_db):  # noqa: ANN001
    import io

    from graphrag_cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["query", str(small_index_dir), "What is a kludge?", "--method", "vector", "--json"], stdout=out, stderr=err, environ={"GRAPHRAG_EXPLORER_DB": str(run_db)})
    assert code == 0, err.getvalue()
    document = json.loads(out.getvalue())
    assert document["community_sets"]["unit"] == "source" and document["community_sets"]["cited"] == ["k3"]
    assert document["request"]["method"] == "vector" and document["diagnostics"]["ranker"] == "bm25"
    out, err = io.StringIO(), io.StringIO()
    code = main(["query", str(small_index_dir), "What is a kludge?", "--method", "text"], stdout=out, stderr=err, environ={"GRAPHRAG_EXPLORER_DB": str(run_db)})
    assert code == 0 and "source chunks behind the answer: " in err.getvalue() and "[Sources: k3]" in out.getvalue()
    bare = small_index_dir.parent / "bare"
    from graphrag_core.index import save_index

    save_index(Index(communities=[Community(id="r", level=0, summary="A root.")]), bare)
    code = main(["query", str(bare), "q?", "--method", "text"], stdout=io.StringIO(), stderr=(err := io.StringIO()), environ={"GRAPHRAG_EXPLORER_DB": str(run_db)})
    assert code == 2 and "The index has no source chunks, so method text cannot run." in err.getvalue()
