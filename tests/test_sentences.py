"""The engine's one sentence splitter (graphrag_core.sentences): abbreviations, decimals,
quotes, citations and Chinese end marks; and the parts of the engine that cut sentences with it
(the sentences that cite a community, the points of an answer, the offline model's retrieval)."""

from __future__ import annotations

import asyncio

import pytest

from graphrag_core import GlobalSearchRequest, retrieve_global
from graphrag_core.answer_points import answer_points
from graphrag_core.citations import citing_sentences
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.offline.retrieval import split_sentences as offline_sentences
from graphrag_core.index import load_index
from graphrag_core.models import Index
from graphrag_core.samples import sample_path
from graphrag_core.sentences import sentence_spans, split_sentences

@pytest.fixture(scope="module")
def jargon_index() -> Index:
    return load_index(sample_path("jargon"))


STALE_POINTER = "stale pointer bug: Synonym for aliasing bug used esp. among microcomputer hackers."


def test_the_stale_pointer_point_is_cited_whole_in_the_jargon_run_of_issue_38(jargon_index: Index) -> None:
    """Issue 38, item 3: the evidence dialog's "Cited in the final answer" showed "among
    microcomputer hackers." for this point (jargon, level 1, seed 3)."""
    request = GlobalSearchRequest(query="What kinds of bugs do hackers talk about?", community_level=1, seed=3)
    result = asyncio.run(retrieve_global(jargon_index, request, OfflineChatModel()))
    assert f"- {STALE_POINTER} [Communities: 98]" in result.answer.splitlines()
    assert citing_sentences(result.answer, "98") == [f"{STALE_POINTER} [Communities: 98]"]


@pytest.mark.parametrize(
    "text, sentences",
    [
        (STALE_POINTER, [STALE_POINTER]),
        ("Use e.g. Unix or i.e. Linux. It works.", ["Use e.g. Unix or i.e. Linux.", "It works."]),
        ("Dr. Smith met Mr. Jones. Mrs. Brown vs. Ms. Green.", ["Dr. Smith met Mr. Jones.", "Mrs. Brown vs. Ms. Green."]),
        ("It was founded in the U.S. Army base. It is a.k.a. the Rock.", ["It was founded in the U.S. Army base.", "It is a.k.a. the Rock."]),
        ("See cf. Knuth. Lists, arrays, etc. The end.", ["See cf. Knuth.", "Lists, arrays, etc.", "The end."]),
        ("Lists, arrays, etc. and more.", ["Lists, arrays, etc. and more."]),
        ("See No. 5 here. The answer is no. Then go.", ["See No. 5 here.", "The answer is no.", "Then go."]),
        ("foo: n. A thing. J. R. R. Tolkien wrote it.", ["foo: n. A thing.", "J. R. R. Tolkien wrote it."]),
        ("So do I. Then we left.", ["So do I.", "Then we left."]),
    ],
)
def test_abbreviations_and_initials_end_no_sentence(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


def test_decimals_names_and_dots_inside_words_end_no_sentence() -> None:
    assert split_sentences("The rate is 3.5 percent. It was 4.25 in 1999. Then 2000 came.") == [
        "The rate is 3.5 percent.",
        "It was 4.25 in 1999.",
        "Then 2000 came.",
    ]
    assert split_sentences("Edit malloc.c or see www.example.com today. He paid $3.50. Fine.") == [
        "Edit malloc.c or see www.example.com today.",
        "He paid $3.50.",
        "Fine.",
    ]
    assert split_sentences("Use vi (e.g., for config files). Done.") == ["Use vi (e.g., for config files).", "Done."]


def test_quotes_brackets_emphasis_and_runs_of_marks_stay_with_their_sentence() -> None:
    assert split_sentences('He said "stop." Then he left. (See above.) Really?! Yes... and no. Wait… Then.') == [
        'He said "stop."',
        "Then he left.",
        "(See above.)",
        "Really?!",
        "Yes... and no.",
        "Wait…",
        "Then.",
    ]
    assert split_sentences("**Bold claim.** Next one.") == ["**Bold claim.**", "Next one."]
    assert split_sentences('"Why?", she asked. He left.') == ['"Why?", she asked.', "He left."]


def test_a_citation_after_the_end_mark_stays_with_its_sentence() -> None:
    text = "A town. [Communities: 3] Next one [Data: Reports (1, 2)]. Last [Communities: 4]."
    assert split_sentences(text) == ["A town. [Communities: 3]", "Next one [Data: Reports (1, 2)].", "Last [Communities: 4]."]


def test_bullets_and_lines_each_end_their_sentences() -> None:
    text = "1. First item. Second sentence.\n- A bullet without an end mark\n\n## A heading\nLast line."
    assert split_sentences(text) == ["1. First item.", "Second sentence.", "- A bullet without an end mark", "## A heading", "Last line."]


def test_chinese_end_marks_full_width_and_half_width_forms_and_closers() -> None:
    assert split_sentences("茶起源于中国。后来传到日本！再到欧洲？是的；对。") == ["茶起源于中国。", "后来传到日本！", "再到欧洲？", "是的；", "对。"]
    assert split_sentences("他说：“好。”然后走了。「茶经」记载了茶！」接着") == ["他说：“好。”", "然后走了。", "「茶经」记载了茶！」", "接着"]
    assert split_sentences("绿茶｡红茶．白茶﹗黑茶﹖完") == ["绿茶｡", "红茶．", "白茶﹗", "黑茶﹖", "完"]
    assert split_sentences("茶很好!下一句?最后;完") == ["茶很好!", "下一句?", "最后;", "完"]  # half-width marks in Chinese text
    assert split_sentences("中国.com是网站。版本2.0很好。") == ["中国.com是网站。", "版本2.0很好。"]
    quoted = "关于“主要主题有哪些？”：有 5 个要点。神农是传说之神。 [Communities: 2]"
    assert split_sentences(quoted) == ["关于“主要主题有哪些？”：有 5 个要点。", "神农是传说之神。 [Communities: 2]"]


def test_spans_are_ordered_trimmed_and_cover_the_text_but_whitespace() -> None:
    text = "  One e.g. two.  Three!\n\n茶。好 [Communities: 1]。\n- Bullet. Two.  "
    spans = sentence_spans(text)
    assert all(a < b for a, b in spans) and all(b1 <= a2 for (_, b1), (a2, _) in zip(spans, spans[1:]))
    assert all(text[a:b] == text[a:b].strip() and "\n" not in text[a:b] for a, b in spans)
    covered = set().union(*(range(a, b) for a, b in spans))
    assert all(text[i].isspace() for i in range(len(text)) if i not in covered)


def test_the_answers_points_and_the_offline_retrieval_cut_with_the_same_splitter() -> None:
    paragraph = "Hackers value wit, e.g. puns. They share code [Communities: 3]. Dr. Who is a show."
    assert [p.text for p in answer_points(paragraph)] == ["Hackers value wit, e.g. puns.", "They share code [Communities: 3].", "Dr. Who is a show."]
    assert offline_sentences(f"- {paragraph}\n[Community summary]\n茶。好！") == [*split_sentences(paragraph), "茶。", "好！"]
    assert [p.text for p in answer_points(f"- {STALE_POINTER} [Communities: 98]")] == [f"{STALE_POINTER} [Communities: 98]"]
