"""The offline model answers the real prompts deterministically, with no network."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from graphrag_core.llm.base import ChatModel, ChatRequest, ChatResponse, model_identity
from graphrag_core.llm.offline import OfflineChatModel, answer_map, answer_reduce
from graphrag_core.models import Claim, Community, Index, SourceChunk
from graphrag_core.prompts import (
    render_community_summary_messages,
    render_map_messages,
    render_reduce_messages,
)

FLOODS = """[Community ID: 3 | summary part 1]
[Community summary]
The river floods every spring. Farmers along the river built levees to protect their crops.

[Supporting claims]
- Levee -> River: Levees reduce flood damage to farms.
[Community ID: 7 | summary part 1]
[Community summary]
Spring floods wash fertile silt onto the fields of the valley farmers."""

JAZZ = """[Community ID: 9 | summary part 1]
[Community summary]
A jazz festival draws musicians from many countries. Concerts run all night in the old harbour."""

ZH = """[Community ID: 21 | summary part 1]
[Community summary]
长江流域每年夏季发生洪水。农民修建堤坝保护农田。
[Community ID: 22 | summary part 1]
[Community summary]
上海的金融业发展迅速。银行数量不断增加。"""


def _map(model: OfflineChatModel, question: str, data: str) -> dict[str, object]:
    request = ChatRequest(purpose="map", messages=render_map_messages(question, data), max_tokens=512)
    return json.loads(asyncio.run(model.complete(request)).text)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the offline model must not open a connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)


def test_protocol_and_identity() -> None:
    model = OfflineChatModel()
    assert isinstance(model, ChatModel)
    assert model_identity(model) == "offline:bm25/v6"


def test_same_input_same_output(no_network: None) -> None:
    request = ChatRequest(purpose="map", messages=render_map_messages("How do farmers cope with floods?", FLOODS))
    first = asyncio.run(OfflineChatModel().complete(request))
    second = asyncio.run(OfflineChatModel(latency=(0.0, 0.01), seed=5).complete(request))
    assert first.text == second.text
    assert first.usage is not None and first.usage.prompt_tokens > 0


def test_relevant_batch_scores_higher_than_irrelevant(no_network: None) -> None:
    model = OfflineChatModel()
    relevant = _map(model, "How do farmers cope with river floods?", FLOODS)
    irrelevant = _map(model, "How do farmers cope with river floods?", JAZZ)
    assert relevant["usefulness"] > irrelevant["usefulness"]
    assert irrelevant == {"answer": "", "usefulness": 0}
    assert isinstance(relevant["usefulness"], int) and 0 < relevant["usefulness"] <= 100
    assert "levee" in str(relevant["answer"]).lower()
    assert "[Communities: 3" in str(relevant["answer"])
    assert len(str(relevant["answer"]).split()) <= 140


def test_generic_words_alone_do_not_match() -> None:
    # "What is the main theme of the jazz corpus?": only "jazz" is a content term.
    result = _map(OfflineChatModel(), "What is the main theme of the jazz corpus?", FLOODS)
    assert result["usefulness"] == 0


def test_broad_question_still_answers() -> None:
    result = _map(OfflineChatModel(), "What are the main themes?", FLOODS)
    assert result["usefulness"] > 0
    assert "[Communities:" in str(result["answer"])


def test_chinese_batch_against_chinese_question() -> None:
    model = OfflineChatModel()
    result = _map(model, "长江洪水对农民有什么影响？", ZH)
    assert result["usefulness"] > 0
    assert "堤坝" in str(result["answer"]) and "21" in str(result["answer"])
    assert "上海" not in str(result["answer"])
    assert _map(model, "长江洪水对农民有什么影响？", JAZZ)["usefulness"] == 0
    assert _map(model, "主要主题是什么？", ZH)["usefulness"] > 0


def test_reduce_merges_and_cites() -> None:
    data = "\n\n".join(
        [
            "[Usefulness: 85; Community IDs: 3, 7]\n- The river floods every spring. [Communities: 3]\n"
            "- Levees reduce flood damage. [Communities: 3]",
            "[Usefulness: 40; Community IDs: 9]\nThe river floods every spring. Spring floods bring silt.",
        ]
    )
    request = ChatRequest(purpose="reduce", messages=render_reduce_messages("How do floods affect farms?", data))
    answer = json.loads(asyncio.run(OfflineChatModel().complete(request)).text)["answer"]
    lines = answer.splitlines()
    assert lines[0].startswith("Overview")
    assert answer.count("The river floods every spring.") == 1
    assert "[Communities: 3, 9]" in answer
    assert "Spring floods bring silt. [Communities: 9]" in answer


def test_reduce_without_candidates_is_still_valid() -> None:
    request = ChatRequest(purpose="reduce", messages=render_reduce_messages("Anything?", ""))
    answer = json.loads(asyncio.run(OfflineChatModel().complete(request)).text)["answer"]
    assert answer.strip()


def test_summary_request() -> None:
    text = "The river floods every spring. Farmers build levees along the river. Levees reduce flood damage."
    request = ChatRequest(purpose="summary", messages=render_community_summary_messages(text))
    payload = json.loads(asyncio.run(OfflineChatModel().complete(request)).text)
    assert set(payload) == {"title", "summary"}
    assert payload["title"] and "River" in payload["title"]
    assert "levees" in payload["summary"]


def test_latency_is_seeded_and_bounded() -> None:
    request = ChatRequest(purpose="map", messages=render_map_messages("q", JAZZ))
    other = ChatRequest(purpose="map", messages=render_map_messages("another question", JAZZ))
    model = OfflineChatModel(latency=(0.1, 0.5), seed=1)
    assert model.delay_for(request) == OfflineChatModel(latency=(0.1, 0.5), seed=1).delay_for(request)
    assert 0.1 <= model.delay_for(request) <= 0.5
    assert model.delay_for(request) != model.delay_for(other)
    assert OfflineChatModel().delay_for(request) == 0.0
    with pytest.raises(ValueError):
        OfflineChatModel(latency=(0.5, 0.1))


def _small_index() -> Index:
    return Index(
        communities=(
            Community(id="0", level=0, summary="Water and farming in the valley, and the city's culture."),
            Community(id="1", level=1, parent_id="0", summary="The river floods every spring and farmers build levees."),
            Community(id="2", level=1, parent_id="0", summary="A jazz festival fills the harbour with concerts."),
        ),
        claims=(
            Claim(id="c1", community_id="1", subject="Levee", object="River", description="Levees cut flood damage.", chunk_ids=("k1",)),
        ),
        chunks=(SourceChunk(id="k1", text="In 2021 the levees held back the spring flood."),),
    )


def test_global_search_with_offline_model_cites_communities() -> None:
    from graphrag_core.request import GlobalSearchRequest
    from graphrag_core.search import retrieve_global

    request = GlobalSearchRequest(query="How do farmers deal with floods?", seed=0)
    result = asyncio.run(retrieve_global(_small_index(), request, OfflineChatModel()))
    assert result.status == "completed"
    assert "1" in result.community_ids
    assert "[Communities: 1" in result.answer
    assert result.diagnostics.usage.total_tokens > 0


def test_broad_global_search_answers_from_every_community() -> None:
    from graphrag_core.request import GlobalSearchRequest
    from graphrag_core.search import retrieve_global

    result = asyncio.run(retrieve_global(_small_index(), GlobalSearchRequest(query="What are the main themes?", seed=0), OfflineChatModel()))
    assert result.status == "completed"
    assert "[Communities: 1]" in result.answer and "[Communities: 2]" in result.answer


def _sample_batches(question: str, *, level: object = "leaf") -> list[str]:
    from graphrag_core.index import load_index
    from graphrag_core.request import GlobalSearchRequest
    from graphrag_core.samples import sample_path
    from graphrag_core.search import plan_batches

    index = load_index(sample_path("jargon"))
    request = GlobalSearchRequest(query=question, community_level=level, seed=1)
    _, batches, _ = plan_batches(index, request, seed=1)
    return [batch.content for batch in batches]


def test_usefulness_spreads_with_relevance_on_the_sample() -> None:
    question = "What does hacker culture say about kludges?"
    scores = [answer_map(question, batch)["usefulness"] for batch in _sample_batches(question)]
    assert len(set(scores)) >= 20, sorted(scores)
    assert max(scores) - min(s for s in scores if s) >= 30
    broad = [answer_map("What are the main themes?", batch)["usefulness"] for batch in _sample_batches("What are the main themes?")]
    assert len(set(broad)) >= 10, sorted(broad)


def test_usefulness_rises_with_the_relevant_text() -> None:
    one_mention = """[Community ID: 1 | summary part 1]
[Community summary]
The harbour hosts a jazz festival every summer. Farmers sometimes lose crops when the river floods."""
    assert 0 < answer_map("How do farmers cope with river floods?", one_mention)["usefulness"] < answer_map(
        "How do farmers cope with river floods?", FLOODS
    )["usefulness"]


CUT = """[Community ID: 4 | summary part 1]
[Community summary]
The {kludge} is a crock that works. See {hack} for the opposite.
[Source excerpts]
bargain, and Scrooge was not a man to be
The Parrot's role in the kludge story
He says “It came from the kludge era."""


def test_map_answers_are_clean_sentences() -> None:
    answer = str(answer_map("What is a kludge?", CUT)["answer"])
    assert "The kludge is a crock that works." in answer
    assert "{" not in answer and "}" not in answer
    assert "Scrooge was not a man to be" not in answer
    assert "Parrot" not in answer and "“" not in answer


def test_reduce_speaks_the_question_language() -> None:
    data = "[Usefulness: 80; Community IDs: 21]\n- 农民修建堤坝保护农田。 [Communities: 21]"
    answer = answer_reduce("长江洪水对农民有什么影响？", data)["answer"]
    assert "Overview" not in answer and "key point" not in answer
    assert answer.startswith("关于") and "农民修建堤坝保护农田。 [Communities: 21]" in answer
    assert answer_reduce("长江洪水对农民有什么影响？", "")["answer"] != answer_reduce("Floods?", "")["answer"]


def test_calls_do_not_block_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    both_inside = threading.Barrier(2, timeout=10)
    model = OfflineChatModel()
    original = OfflineChatModel.reply

    def reply(self: OfflineChatModel, request: ChatRequest) -> str:
        both_inside.wait()  # only returns once another call is being answered at the same time
        return original(self, request)

    monkeypatch.setattr(OfflineChatModel, "reply", reply)
    request = ChatRequest(purpose="map", messages=render_map_messages("floods?", FLOODS))

    async def two() -> list[ChatResponse]:
        return list(await asyncio.gather(model.complete(request), model.complete(request)))

    first, second = asyncio.run(two())
    assert first.text == second.text


def test_the_class_decides_whether_the_model_streams_not_its_latency() -> None:
    from typing import get_args

    from graphrag_core.llm.base import Purpose, StreamingChatModel
    from graphrag_core.llm.offline import PacedOfflineChatModel
    from graphrag_core.llm.offline.model import ANSWERERS
    from graphrag_core.llm.settings import ModelSettings
    from graphrag_core.llm.factory import build_chat_model

    assert not isinstance(OfflineChatModel(latency=(0.0, 0.02), seed=1), StreamingChatModel)
    assert isinstance(PacedOfflineChatModel(), StreamingChatModel)  # even with nothing to wait for
    for model in (OfflineChatModel(latency=(0.0, 0.02)), PacedOfflineChatModel(latency=(0.0, 0.02))):
        assert "complete_streaming" not in vars(model)  # a method of the class, never of one instance
    # what a front end builds: the paced class when there is a delay to watch, else the plain one
    assert type(build_chat_model(ModelSettings(offline_latency=(0.0, 0.02), offline_seed=4))) is PacedOfflineChatModel
    assert type(build_chat_model(ModelSettings())) is OfflineChatModel
    assert type(build_chat_model(ModelSettings(offline_latency=(0.0, 0.0)))) is OfflineChatModel
    assert set(ANSWERERS) == set(get_args(Purpose))  # one answerer for every purpose

    request = ChatRequest(purpose="reduce", messages=render_reduce_messages("How do floods affect farms?", "[Usefulness: 85; Community IDs: 3]\n- The river floods. [Communities: 3]"))
    pieces: list[str] = []
    paced = PacedOfflineChatModel(latency=(0.0, 0.01), seed=2)
    streamed = asyncio.run(paced.complete_streaming(request, pieces.append))
    assert "".join(pieces) == streamed.text == asyncio.run(OfflineChatModel().complete(request)).text
    assert model_identity(paced) == model_identity(OfflineChatModel()) == "offline:bm25/v6"  # one cache for both


def test_centrality_does_not_depend_on_the_order_a_set_iterates_in() -> None:
    # Twins: documents whose terms differ only in name, so each term of one has the document
    # frequency of its twin's. Summed in a set's order (which the string hash seed decides), the
    # same six numbers round differently, and a broad question's answer changed its sentence
    # order from one process to the next.
    from graphrag_core.llm.offline.retrieval import Terms, centrality

    frequencies = (25, 27, 3, 17, 33, 32)
    twins = [Terms(tuple(f"t{i}x{p}" for p in range(len(frequencies))), ()) for i in range(60)]
    fillers = [
        Terms(tuple(f"t{i}x{p}" for i in range(len(twins)) for p, df in enumerate(frequencies) if j < df - 1), ())
        for j in range(max(frequencies))
    ]
    scores = centrality([*twins, *fillers])[: len(twins)]
    assert len(set(scores)) == 1
