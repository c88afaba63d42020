"""Which language a corpus and its answers are in, the prompts asking for the corpus's, and a
run that says so when its answers come back in another (issue 43, item 4)."""

from __future__ import annotations

import asyncio
import json

import pytest

from graphrag_core import Community, GlobalSearchRequest, Index, retrieve_global
from graphrag_core.events import MapBatchStarted, ModelNotice, ReduceStarted
from graphrag_core.index import load_index
from graphrag_core.language import LanguageDrift, chinese_script, corpus_language, language_drift, text_language
from graphrag_core.llm.base import ChatRequest
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.scripted import ScriptedChatModel
from graphrag_core.prompts import (
    language_rule,
    map_prompt_skeleton,
    render_map_messages,
    render_rag_messages,
    render_reduce_messages,
    requested_language,
)
from graphrag_core.samples import sample_path, sample_question

from .cli_support import run_cli


def test_a_text_is_chinese_or_english_by_its_characters() -> None:
    assert text_language("长江流域每年夏季发生洪水。农民修建堤坝保护农田。") == "zh"
    assert text_language("李白，字太白，隴西成紀人。") == "zh"
    assert text_language("The river floods every spring, and farmers build levees.") == "en"
    # a Chinese answer quoting an English name stays Chinese, and the reverse
    assert text_language('建盏传到日本后被称为"天目"（tenmoku），至今仍受收藏者珍视。') == "zh"
    assert text_language("Lu Yu (陆羽) wrote the Classic of Tea (茶经), the first book on tea.") == "en"


def test_citation_markers_are_not_prose() -> None:
    assert text_language("- 农民修建堤坝保护农田。 [Communities: 21, 22] [Data: Reports (3, 4, +more)]") == "zh"
    assert text_language("[Communities: 1, 2, 3] [Data: Reports (5); Entities (7)] [Sources: d0001-1]") is None


@pytest.mark.parametrize(
    "text",
    ["", "   ", "OK", "茶", "東京は日本の首都で、多くの人が住んでいます。", "Москва — столица России и крупнейший город.", "서울은 한국의 수도입니다"],
)
def test_what_cannot_be_told_has_no_language(text: str) -> None:
    assert text_language(text) is None  # too short, Japanese, Russian, Korean: not claimed


def test_the_script_of_chinese_text() -> None:
    assert chinese_script("李白，字太白，隴西成紀人。天寶初，至長安，往見賀知章。") == "hant"
    assert chinese_script("陆羽是唐代的茶学家，写成了茶经。") == "hans"
    assert chinese_script("茶") == "hans"  # neither: taken for simplified


@pytest.mark.parametrize(("sample", "language"), [("jargon", "en"), ("zh-tea", "zh"), ("zh-tang", "zh")])
def test_each_sample_is_in_its_language(sample: str, language: str) -> None:
    assert corpus_language(load_index(sample_path(sample)).communities) == language


def test_the_drift_note_names_the_languages_and_counts() -> None:
    english, chinese = "The river floods every spring, and farmers build levees.", "长江流域每年夏季发生洪水，农民修建堤坝。"
    both = language_drift("zh", [english] * 7 + [chinese] * 2 + [""], english)
    assert both == LanguageDrift(corpus="zh", map_answers_read=9, map_answers_other={"en": 7}, answer="en")
    assert both.note == "The corpus is Chinese; 7 of 9 map answers and the final answer are English."
    assert language_drift("zh", [english, chinese, chinese], chinese).note == "The corpus is Chinese; 1 of 3 map answers is English."
    assert language_drift("en", [english], chinese).note == "The corpus is English; the final answer is Chinese."
    assert language_drift("en", [chinese, english], None).note == "The corpus is English; 1 of 2 map answers is Chinese."
    assert language_drift("zh", [chinese] * 3, chinese) is None  # they agree
    assert language_drift(None, [english], english) is None  # the corpus's language is not known
    assert language_drift("zh", ["", "OK"], "[Communities: 1]") is None  # nothing whose language can be told


def test_an_english_corpus_keeps_the_specs_prompts_and_a_chinese_one_asks_for_chinese() -> None:
    assert language_rule(None) == language_rule("en") == ""
    for language in (None, "en"):
        messages = render_map_messages("q?", "data", language=language)
        assert messages == render_map_messages("q?", "data")
        assert "language of the corpus" not in messages[0].content
    rule = "- Write in Chinese, the language of the corpus, whatever the language of the question."
    for messages in (
        render_map_messages("q?", "data", language="zh"),
        render_map_messages("q?", "data", language="zh", data_first=True, unit="source"),
        render_reduce_messages("q?", "answers", language="zh"),
        render_rag_messages("q?", "excerpts", language="zh"),
    ):
        assert rule in messages[0].content.splitlines()
        assert requested_language(messages[0].content) == "zh"
    assert requested_language(render_reduce_messages("q?", "answers")[0].content) is None
    # the line is budgeted: the skeleton the batcher packs against holds it
    assert rule in map_prompt_skeleton("q?", language="zh")


def _reply_in(map_text: str, reduce_text: str):  # type: ignore[no-untyped-def]
    def script(request: ChatRequest) -> dict[str, object]:
        if request.purpose == "map":
            return {"answer": f"- {map_text} [Communities: 1]", "usefulness": 60}
        return {"answer": f"{reduce_text} [Communities: 1]"}

    return script


def _zh_index() -> Index:
    return Index(
        name="zh",
        communities=[
            Community(id="0", level=0, title="长江", summary="长江流域每年夏季发生洪水。"),
            Community(id="1", level=1, parent_id="0", title="堤坝", summary="农民修建堤坝保护农田，防止洪水冲毁庄稼。" * 40),
            Community(id="2", level=1, parent_id="0", title="上海", summary="上海的金融业发展迅速，银行数量不断增加。" * 40),
        ],
    )


def _en_index() -> Index:
    return Index(
        name="en",
        communities=[
            Community(id="0", level=0, title="River", summary="The river floods every spring."),
            Community(id="1", level=1, parent_id="0", title="Levees", summary="Farmers build levees along the river to protect their crops. " * 30),
            Community(id="2", level=1, parent_id="0", title="Harbour", summary="A jazz festival fills the old harbour with concerts every summer. " * 30),
        ],
    )


def _run(index: Index, model: ScriptedChatModel | OfflineChatModel, question: str) -> tuple[object, list[object]]:
    events: list[object] = []
    request = GlobalSearchRequest(query=question, seed=1, map_token_budget=1200, map_output_reserve=200)
    result = asyncio.run(retrieve_global(index, request, model, on_event=events.append))
    return result, events


def test_a_chinese_corpus_answered_in_english_says_so() -> None:
    english = "Farmers along the Yangtze build levees to protect their fields from the summer floods."
    model = ScriptedChatModel(_reply_in(english, "In short, the farmers build levees against the floods."))
    result, events = _run(_zh_index(), model, "长江洪水对农民有什么影响？")
    maps = [e for e in events if isinstance(e, MapBatchStarted)]
    assert len(maps) >= 2
    drift = result.diagnostics.language_drift
    assert drift == LanguageDrift(corpus="zh", map_answers_read=len(maps), map_answers_other={"en": len(maps)}, answer="en")
    notices = [e.message for e in events if isinstance(e, ModelNotice)]
    assert notices == [f"The corpus is Chinese; {len(maps)} of {len(maps)} map answers and the final answer are English."]
    # the prompts asked for Chinese: every map call and the reduce call
    calls = [e.messages for e in events if isinstance(e, MapBatchStarted | ReduceStarted) and e.messages]
    assert calls and all("- Write in Chinese, the language of the corpus" in m[0].content for m in calls)
    # the entry is kept with the run (JSON of its result) and read back
    assert json.loads(result.model_dump_json())["diagnostics"]["language_drift"]["corpus"] == "zh"


def test_an_english_corpus_answered_in_chinese_says_so() -> None:
    model = ScriptedChatModel(_reply_in("农民沿着河岸修建堤坝，保护庄稼免受春季洪水的破坏。", "The farmers build levees along the river against the spring floods."))
    result, events = _run(_en_index(), model, "How do farmers cope with floods?")
    drift = result.diagnostics.language_drift
    assert drift is not None and drift.corpus == "en" and drift.answer is None
    assert drift.map_answers_other == {"zh": drift.map_answers_read} and drift.map_answers_read >= 2
    assert [e.message for e in events if isinstance(e, ModelNotice)] == [
        f"The corpus is English; {drift.map_answers_read} of {drift.map_answers_read} map answers are Chinese."
    ]
    assert all("language of the corpus" not in e.messages[0].content for e in events if isinstance(e, MapBatchStarted) and e.messages)


@pytest.mark.parametrize(
    ("index", "model", "question"),
    [
        (_zh_index(), ScriptedChatModel(_reply_in("农民修建堤坝保护农田，防止洪水。", "农民修建堤坝，防止洪水冲毁庄稼。")), "长江洪水？"),
        (_en_index(), ScriptedChatModel(_reply_in("Farmers build levees along the river.", "Farmers build levees.")), "Floods?"),
        (_zh_index(), OfflineChatModel(), "What do farmers do about the floods?"),  # an English question, a Chinese corpus
    ],
)
def test_no_drift_when_the_answers_are_in_the_corpus_language(index: Index, model: object, question: str) -> None:
    result, events = _run(index, model, question)  # type: ignore[arg-type]
    assert result.diagnostics.language_drift is None
    assert not [e for e in events if isinstance(e, ModelNotice)]


@pytest.mark.parametrize("sample", ["zh-tang", "zh-tea", "jargon"])
def test_the_offline_model_answers_every_sample_in_its_language(sample: str) -> None:
    index = load_index(sample_path(sample))
    for question in ("What are the main themes?", sample_question(sample)):
        result = asyncio.run(retrieve_global(index, GlobalSearchRequest(query=question, seed=2), OfflineChatModel()))
        assert result.status == "completed" and result.diagnostics.language_drift is None, (sample, question)


def test_the_command_line_prints_the_notice(capsys: pytest.CaptureFixture[str]) -> None:
    english = "Farmers along the Yangtze build levees to protect their fields from the summer floods."
    model = ScriptedChatModel(_reply_in(english, "In short, the farmers build levees against the floods."))
    code, out, err = run_cli(capsys, "query", "zh-tea", "茶是怎样从中国传到世界各地的？", "--no-store", "--no-cache", "-q", model=model)
    assert code == 0 and "farmers build levees" in out
    assert "note: The corpus is Chinese; " in err and "the final answer are English." in err
