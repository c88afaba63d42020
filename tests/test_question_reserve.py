"""Prompts a provider can cache (issue 26, part 1): with ``question_reserve`` the map and rating
prompts put the instructions, then the data, then the question, and batches are packed as if the
question took exactly the reserve, so every question up to it reads the same batches."""

import asyncio

import pytest

from graphrag_cli.commands.query import build_request
from graphrag_cli.main import build_parser
from graphrag_core import GlobalSearchRequest, retrieve_global
from graphrag_core.context import QUESTION_MARKER, split_prompt_sections
from graphrag_core.errors import RequestValidationError
from graphrag_core.evaluation import Condition
from graphrag_core.index import load_index
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.scripted import ScriptedChatModel
from graphrag_core.request import FRONT_END_QUESTION_RESERVE, SearchDefaults
from graphrag_core.samples import SAMPLES
from graphrag_core.search import plan_batches
from graphrag_core.tokens import get_tokenizer

SHORT = "What are the main themes?"
LONGER = "How do hackers talk about the tools they build, and what does that say about their culture and values?"


@pytest.fixture(scope="module")
def jargon():
    return load_index(SAMPLES["jargon"])


def _requests(model):
    return [r for r in model.requests if r.purpose == "map"]


def _run(index, request):
    model = ScriptedChatModel(lambda r: {"answer": "x", "usefulness": 50} if r.purpose == "map" else {"answer": "done"})
    asyncio.run(retrieve_global(index, request, model))
    return model


@pytest.mark.parametrize("bad", [-1, True, 1.5, "100"])
def test_question_reserve_is_a_non_negative_integer(bad):
    assert GlobalSearchRequest(query="q").question_reserve == 0
    with pytest.raises(RequestValidationError, match=r"^question_reserve must be a non-negative integer\.$"):
        GlobalSearchRequest(query="q", question_reserve=bad)


def test_questions_within_the_reserve_get_the_same_batches_and_share_each_map_prompts_prefix(jargon):
    requests = [GlobalSearchRequest(query=q, community_level=1, seed=5, question_reserve=256) for q in (SHORT, LONGER)]
    plans = [plan_batches(jargon, r, seed=5)[1] for r in requests]
    assert [b.content for b in plans[0]] == [b.content for b in plans[1]]
    unreserved = [plan_batches(jargon, r.model_copy(update={"question_reserve": 0}), seed=5)[1] for r in requests]
    assert [b.content for b in unreserved[0]] != [b.content for b in unreserved[1]], "without a reserve the question's length moves the cuts"

    short, longer = (_requests(_run(jargon, r)) for r in requests)
    assert len(short) == len(longer) == len(plans[0])
    by_content = {split_prompt_sections(r.messages[-1].content)[1]: r for r in longer}
    for first in short:
        question, data = split_prompt_sections(first.messages[-1].content)
        assert question == SHORT
        second = by_content[data]
        assert first.messages[0] == second.messages[0]
        head = first.prompt_text[: first.prompt_text.rindex(QUESTION_MARKER)]
        assert second.prompt_text.startswith(head), "everything up to the question is shared"
        assert first.prompt_text.endswith(f"{QUESTION_MARKER}\n{SHORT}")


@pytest.mark.parametrize("tokenizer", ["heuristic", "o200k_base"])
def test_every_map_prompt_is_within_the_budget_for_the_longest_question_the_reserve_allows(jargon, tokenizer):
    counter = get_tokenizer(tokenizer)
    question = "why " * 200
    reserve = counter.count(question.strip())
    request = GlobalSearchRequest(
        query=question, community_level=1, seed=2, question_reserve=reserve, tokenizer=tokenizer, map_token_budget=3000
    )
    _, batches, estimates = plan_batches(jargon, request, seed=2, tokenizer=counter)
    prompts = {split_prompt_sections(p.messages[-1].content)[1]: p for p in _requests(_run(jargon, request))}
    assert len(prompts) == len(batches) > 1
    for batch, estimate in zip(batches, estimates):
        sent = counter.count(prompts[batch.content].prompt_text)
        assert sent <= request.map_prompt_budget
        assert abs(estimate - sent) <= 1, "the planned estimate is the sent prompt's count, up to the join after the data"


def test_a_question_longer_than_the_reserve_is_refused_before_any_call(jargon):
    model = ScriptedChatModel("{}")
    request = GlobalSearchRequest(query="word " * 300, question_reserve=256)
    with pytest.raises(RequestValidationError, match=r"^The question takes 375 tokens, more than question_reserve \(256\)\.$"):
        asyncio.run(retrieve_global(jargon, request, model))
    dynamic = request.model_copy(update={"community_selection": "dynamic"})
    with pytest.raises(RequestValidationError, match="more than question_reserve"):
        asyncio.run(retrieve_global(jargon, dynamic, model))
    assert model.calls == 0


def test_rating_prompts_put_the_summary_before_the_question(jargon):
    models = []
    for question in (SHORT, LONGER):
        model = ScriptedChatModel(
            lambda r: {"reason": "r", "rating": 0} if r.purpose == "rate" else {"answer": "x", "usefulness": 0}
        )
        request = GlobalSearchRequest(query=question, community_selection="dynamic", seed=1, question_reserve=256, rating_output_reserve=64)
        asyncio.run(retrieve_global(jargon, request, model))
        models.append(model)
    first, second = ([r for r in m.requests if r.purpose == "rate"] for m in models)
    assert first and len(first) == len(second)
    for a, b in zip(first, second):
        assert a.messages[-1].content.startswith("---Data---\n[Community ID: ")
        head = a.prompt_text[: a.prompt_text.rindex(QUESTION_MARKER)]
        assert b.prompt_text.startswith(head)


def test_the_offline_model_reads_data_first_prompts_as_it_reads_the_others(jargon):
    answers = []
    for reserve in (0, 256):
        request = GlobalSearchRequest(query=SHORT, community_level=1, seed=3, question_reserve=reserve)
        answers.append(asyncio.run(retrieve_global(jargon, request, OfflineChatModel())))
    assert [a.status for a in answers] == ["completed", "completed"]
    assert SHORT in answers[1].answer


def test_the_command_line_the_app_and_experiments_keep_256_tokens_for_the_question_unless_told():
    parser = build_parser()
    assert build_request(parser.parse_args(["query", "jargon", SHORT])).question_reserve == FRONT_END_QUESTION_RESERVE == 256
    assert build_request(parser.parse_args(["query", "jargon", SHORT, "--question-reserve", "0"])).question_reserve == 0
    assert SearchDefaults.for_front_ends().question_reserve == 256
    assert Condition(name="C0", overrides={"level": 0}).request(SHORT, 1).question_reserve == 256
    assert Condition.parse("C1:question_reserve=64").request(SHORT, 1).question_reserve == 64

    from graphrag_app.urls import RunSettings, setting_fields

    assert RunSettings().search.question_reserve == 256
    assert next(f for f in setting_fields() if f.name == "question_reserve").default == 256
