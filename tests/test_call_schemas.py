"""Every kind of call sends its own JSON Schema: rating, judge, claims, each
question-generation step and community summaries, as map and reduce do. Checked through the
engine functions that make each call, against a local chat-completions server."""

from __future__ import annotations

import asyncio
import json

import pytest

from graphrag_core import GlobalSearchRequest, retrieve_global
from graphrag_core.cache import MemoryMapCache
from graphrag_core.evaluation import judge_pair
from graphrag_core.evaluation.claims import extract_claims
from graphrag_core.evaluation.questions import generate_questions
from graphrag_core.evaluation.store import EvaluationStore
from graphrag_core.llm.base import ChatModel, ChatRequest
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.openai_model import OpenAIChatModel
from graphrag_core.llm.scripted import ScriptedChatModel
from graphrag_core.llm.settings import ModelSettings
from graphrag_core.prompts import (
    CLAIMS_OUTPUT_SCHEMA,
    COMMUNITY_SUMMARY_OUTPUT_SCHEMA,
    JUDGE_OUTPUT_SCHEMA,
    MAP_OUTPUT_SCHEMA,
    QUESTION_OUTPUT_SCHEMAS,
    RATING_OUTPUT_SCHEMA,
    REDUCE_OUTPUT_SCHEMA,
)
from graphrag_core.samples.summarize import CommunityDigest, MemberDigest, model_summaries

from .factories import small_index
from .openai_server import openai_server
from .test_structured_output import form_of
from .test_structured_output import only as only_form

LATER_SCHEMAS = {
    "rate": RATING_OUTPUT_SCHEMA,
    "judge": JUDGE_OUTPUT_SCHEMA,
    "claims": CLAIMS_OUTPUT_SCHEMA,
    "personas": QUESTION_OUTPUT_SCHEMAS["personas"],
    "tasks": QUESTION_OUTPUT_SCHEMAS["tasks"],
    "questions": QUESTION_OUTPUT_SCHEMAS["questions"],
    "summary": COMMUNITY_SUMMARY_OUTPUT_SCHEMA,
}
"""Each later kind of call (a question-generation step counts as a kind) and its schema."""

ANY_SHAPE = {
    "reason": "it speaks to the question",
    "rating": 4,
    "winner": 1,
    "claims": ["Tea is grown on hills."],
    "personas": ["A tea historian."],
    "tasks": ["Trace where tea is grown."],
    "questions": ["Where is tea grown?"],
    "title": "Tea hills",
    "summary": "Tea is grown on hills.",
    "answer": "Tea is grown on hills.",
    "usefulness": 70,
}
"""One reply that every kind of call reads as valid (each parser reads only its own keys)."""


def run(coroutine):
    return asyncio.run(coroutine)


def call_kind(kind: str, model: ChatModel) -> object:
    """Run the engine function that makes ``kind``'s calls; its result."""
    if kind == "rate":
        request = GlobalSearchRequest(query="Who are the wizards?", community_selection="dynamic", seed=3)
        return run(retrieve_global(small_index(), request, model))
    if kind == "judge":
        return run(judge_pair("Where is tea grown?", "On hills.", "In tea shops.", model, criteria=["directness"], concurrency=1))
    if kind == "claims":
        return run(extract_claims("Tea is grown on hills. It is picked by hand.", model))
    if kind in QUESTION_OUTPUT_SCHEMAS:
        return run(generate_questions(small_index(), model, personas=1, tasks=1, per_task=1))
    assert kind == "summary"
    digest = CommunityDigest(size=2, level=0, members=(MemberDigest("Tea", "Tea is a drink."), MemberDigest("Hill", "A hill is high ground.")))
    return run(model_summaries([("0", digest)], model, language="en", concurrency=1))


def model_for(base_url: str) -> OpenAIChatModel:
    return OpenAIChatModel(ModelSettings(provider="openai", base_url=base_url, model="tiny", timeout=5))


def only(form: str):
    """A server that answers only requests in ``form``, with a reply every kind of call reads."""
    return only_form(form, answer=json.dumps(ANY_SHAPE))


def test_each_schema_is_strict_and_matches_its_prompt():
    for schema in [MAP_OUTPUT_SCHEMA, REDUCE_OUTPUT_SCHEMA, *LATER_SCHEMAS.values()]:
        body = schema.schema_
        assert body["type"] == "object" and body["additionalProperties"] is False
        assert body["required"] == list(body["properties"])  # strict mode: every property required
    assert len({s.name for s in [MAP_OUTPUT_SCHEMA, REDUCE_OUTPUT_SCHEMA, *LATER_SCHEMAS.values()]}) == 9
    for step, schema in QUESTION_OUTPUT_SCHEMAS.items():
        assert schema.schema_["required"] == [step]  # the key the step's prompt asks for


@pytest.mark.parametrize("kind", list(LATER_SCHEMAS))
def test_each_kind_of_call_sends_its_own_schema_as_strict_json_schema(kind):
    schema = LATER_SCHEMAS[kind]
    with openai_server(only("json_schema")) as server:
        call_kind(kind, model_for(server.base_url))
        formats = [b["response_format"] for b in server.bodies()]
    assert all(f["type"] == "json_schema" and f["json_schema"]["strict"] is True for f in formats)
    own = [f for f in formats if f["json_schema"]["name"] == schema.name]
    assert own, f"no {kind} call was made"
    assert all(f["json_schema"]["schema"] == schema.schema_ for f in own)


@pytest.mark.parametrize("kind", list(LATER_SCHEMAS))
def test_each_kind_of_call_falls_back_on_an_endpoint_without_schemas(kind):
    with openai_server(only("json_object")) as server:
        model = model_for(server.base_url)
        results = [call_kind(kind, model) for _ in range(2)]
        forms = [form_of(b) for b in server.bodies()]
    assert forms[:3] == ["json_schema", "json_object_schema", "json_object"]  # negotiated once
    assert len(forms) > 3 and set(forms[3:]) == {"json_object"}  # then remembered
    assert model.output_form == "json_object"
    assert results[0] is not None and results[1] is not None


@pytest.mark.parametrize("kind", [k for k in LATER_SCHEMAS if k != "summary"])
def test_a_retry_quotes_the_shape_of_its_own_kind(kind):
    """The retry after a reply of the wrong shape shows the model this kind's schema, not the map's."""
    schema = LATER_SCHEMAS[kind]
    wrong: set[str] = set()

    def script(request: ChatRequest):
        own = request.output_schema
        if own is not None and own.name == schema.name and not wrong:
            wrong.add(own.name)
            return '{"something": "else"}'
        return ANY_SHAPE

    model = ScriptedChatModel(script)
    call_kind(kind, model)
    retries = [r for r in model.requests if r.output_schema == schema and "---What was wrong with it---" in r.messages[0].content]
    assert len(retries) == 1
    retry_system = retries[0].messages[0].content
    assert json.dumps(schema.schema_, ensure_ascii=False) in retry_system
    assert json.dumps(MAP_OUTPUT_SCHEMA.schema_, ensure_ascii=False) not in retry_system
    assert '{"something": "else"}' in retry_system


def test_the_offline_model_answers_every_kind_with_its_schema_attached():
    offline = OfflineChatModel()
    ratings = call_kind("rate", offline)
    assert ratings.diagnostics.rating_calls > 0 and ratings.diagnostics.failed_rating_count == 0
    judgment = call_kind("judge", offline)
    assert all(c.ok for c in judgment.calls)
    claims, _ = call_kind("claims", offline)
    assert claims
    questions = call_kind("questions", offline)
    assert questions and all(q.question.endswith("?") for q in questions)
    [summary] = call_kind("summary", offline)
    assert summary.title and summary.summary


def test_a_cached_dynamic_rerun_makes_no_call_with_the_rating_schema_in_the_key():
    cache = MemoryMapCache()
    request = GlobalSearchRequest(query="Who are the wizards?", community_selection="dynamic", seed=3)
    with openai_server(only("json_schema")) as server:
        first = run(retrieve_global(small_index(), request, model_for(server.base_url), cache=cache))
        made = len(server.bodies())
        second = run(retrieve_global(small_index(), request, model_for(server.base_url), cache=cache))
        again = [b["response_format"]["json_schema"]["name"] for b in server.bodies()[made:]]
    assert again == [REDUCE_OUTPUT_SCHEMA.name]  # no rating or map call: only the reduce, never cached
    assert first.diagnostics.rating_calls > 0 and second.diagnostics.rating_calls == 0
    assert second.diagnostics.rating_cache_hits == first.diagnostics.rating_calls


def test_a_judged_pair_judged_again_makes_no_call(tmp_path):
    store = EvaluationStore(tmp_path / "e.sqlite")
    with openai_server(only("json_schema")) as server:
        model = model_for(server.base_url)
        first = run(judge_pair("q?", "a", "b", model, criteria=["directness"], store=store))
        made = len(server.bodies())
        second = run(judge_pair("q?", "a", "b", model, criteria=["directness"], store=store))
        assert made == 2 and len(server.bodies()) == made
    assert all(c.cached for c in second.calls) and second.scores == first.scores


def test_rating_and_judge_keys_leave_the_schema_out_so_stored_calls_still_count():
    # ratings cached and judgments stored before every call sent its schema stay valid: the schema
    # asks for the shape the prompt already asks for (an evaluation stopped yesterday resumes)
    from graphrag_core.evaluation.judge import judge_call_key
    from graphrag_core.llm.base import ChatRequest
    from graphrag_core.llm.offline import OfflineChatModel
    from graphrag_core.prompts import JUDGE_OUTPUT_SCHEMA, RATING_OUTPUT_SCHEMA
    from graphrag_core.selection import rating_cache_key

    model = OfflineChatModel()
    bare = ChatRequest(purpose="rate", messages=[{"role": "user", "content": "rate"}], json_mode=True)
    assert rating_cache_key(model, bare.model_copy(update={"output_schema": RATING_OUTPUT_SCHEMA}), 0) == rating_cache_key(model, bare, 0)
    assert rating_cache_key(model, bare, 0) != rating_cache_key(model, bare, 1)
    judged = bare.model_copy(update={"purpose": "judge"})
    assert judge_call_key(model, judged.model_copy(update={"output_schema": JUDGE_OUTPUT_SCHEMA}), 0) == judge_call_key(model, judged, 0)
