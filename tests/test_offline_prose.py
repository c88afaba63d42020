"""What the offline model writes around the sentences it extracts: points that name their
subject, no point twice (issue 38, item 9), nothing in English on a Chinese corpus with the
citation markers left as the parser reads them (issue 43, item 3), and BM25 over Chinese
characters (issue 43, item 5)."""

from __future__ import annotations

import asyncio
import re
import unicodedata

import pytest

from graphrag_core import GlobalSearchRequest, Index, retrieve_global
from graphrag_core.citations import find_citations
from graphrag_core.index import load_index
from graphrag_core.llm.offline import OfflineChatModel, answer_map, answer_reduce, answer_summary
from graphrag_core.llm.offline.answers import with_subject
from graphrag_core.llm.offline.retrieval import TOKEN_RE, is_name_list, point_key, same_point, terms
from graphrag_core.ranking import rank_by_bm25
from graphrag_core.samples import sample_path, sample_question

LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


@pytest.fixture(scope="module")
def jargon() -> Index:
    return load_index(sample_path("jargon"))


@pytest.fixture(scope="module")
def tang() -> Index:
    return load_index(sample_path("zh-tang"))


def _run(index: Index, question: str, **settings: object):  # type: ignore[no-untyped-def]
    request = GlobalSearchRequest(query=question, seed=3, **settings)  # type: ignore[arg-type]
    return asyncio.run(retrieve_global(index, request, OfflineChatModel()))


def _points(answer: str) -> list[tuple[str, list[str]]]:
    """Each bullet of an answer: its text without the citation, and the ids it cites."""
    points = []
    for line in answer.splitlines():
        if not line.startswith("- "):
            continue
        citations = find_citations(line)
        assert citations, f"a point without its citation: {line!r}"
        points.append((line[2 : citations[0].start].strip(), [cid for c in citations for cid in c.community_ids]))
    return points


def _prose(answer: str) -> str:
    """The answer without its citation markers (as the citation parser reads them)."""
    kept, at = [], 0
    for citation in find_citations(answer):
        kept.append(answer[at : citation.start])
        at = citation.end
    return "".join(kept) + answer[at:]


# -- Chinese answers hold no English prose --------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "settings"),
    [
        (sample_question("zh-tang"), {}),
        ("What are the main themes?", {}),  # an English question: the answer is still Chinese
        ("哪些詩人曾經被貶謫？", {"community_level": 0}),
        ("杜甫與李白", {"method": "text"}),
        ("杜甫與李白", {"method": "vector"}),
    ],
)
def test_a_chinese_answer_holds_no_english_prose(tang: Index, question: str, settings: dict[str, object]) -> None:
    """zh-tang's text has no Latin letter at all, so any Latin word outside a citation marker
    is the offline model's own prose."""
    result = _run(tang, question, **settings)
    assert result.status == "completed"
    texts = [result.answer, *(a.answer for a in result.map_answers)]
    for text in texts:
        assert not LATIN_WORD.findall(_prose(text)), text
        for line in text.splitlines():
            if line.startswith("- "):
                assert find_citations(line), line  # every point keeps a machine-readable citation
    assert result.answer.startswith(("關於", "從")) and "個要點" in result.answer  # its overview, in traditional characters
    cited = {cid for c in find_citations(result.answer) for cid in (c.community_ids or c.ids_of("source"))}
    assert cited and cited <= set(result.community_ids)


def test_latin_words_in_a_chinese_answer_come_from_the_corpus() -> None:
    """zh-tea writes some English names (Camellia sinensis, Robert Fortune): an answer may quote
    them, and nothing else in Latin letters."""
    index = load_index(sample_path("zh-tea"))
    corpus = " ".join(c.text for c in index.chunks) + " ".join(c.summary for c in index.communities)
    for question in (sample_question("zh-tea"), "What are the main themes?"):
        result = _run(index, question)
        for word in LATIN_WORD.findall(_prose(result.answer)):
            assert word in corpus, (word, result.answer)


def test_the_reduce_writes_the_language_the_prompt_asks_for() -> None:
    points = "[Usefulness: 80; Community IDs: 21]\n- 杜甫：天寶間，甫與李白齊名，時稱李杜。 [Communities: 21]"
    english_question = answer_reduce("Who was famous with Li Bai?", points, language="zh")["answer"]
    assert english_question.startswith("從 1 個中間回答中歸納出 1 個要點") and "Li Bai" not in english_question
    assert answer_reduce("李白？", points)["answer"].startswith("關於“李白？”：從")  # the answers' script
    assert answer_reduce("Anything?", "", language="zh")["answer"] == "中间回答中没有足够的信息来回答这个问题。"
    assert answer_reduce("Floods?", "[Usefulness: 80; Community IDs: 3]\n- The river floods every spring. [Communities: 3]")["answer"].startswith("Overview")


def test_a_chinese_summary_is_written_in_chinese() -> None:
    payload = answer_summary("李白，字太白，隴西成紀人。天寶初，至長安，往見賀知章。知章見其文，歎爲謫仙人。")
    assert not LATIN_WORD.findall(payload["title"] + payload["summary"])
    assert " " not in payload["summary"] and payload["summary"].endswith("。")
    assert answer_summary("")["title"] == "Untitled community"


def test_a_rating_reason_is_in_the_summary_s_language() -> None:
    from graphrag_core.llm.offline.rating import answer_rating

    found = answer_rating("普洱茶的产地在哪里？", "[Community ID: 1]\n普洱茶产于云南，是黑茶的代表。")
    assert found["rating"] >= 1 and found["reason"].startswith("摘要提到普洱") and not LATIN_WORD.findall(found["reason"])
    assert answer_rating("杜甫？", "[Community ID: 2]\n李白，字太白，隴西成紀人。")["reason"] == "摘要中沒有出現問題中的詞。"
    assert answer_rating("What are the main themes?", "[Community ID: 3]\n本社區收錄2個相關條目。")["reason"].startswith("這是")
    assert answer_rating("kludge?", "[Community ID: 4]\nA kludge is a clever fix.")["reason"].startswith("The summary mentions kludge")


# -- points that name their subject, each once ----------------------------------------------------


def _names_a_member(index: Index, text: str, cited: list[str]) -> bool:
    titles = {e.id: e.title for e in index.entities}
    return any(titles[e].casefold() in text.casefold() for cid in cited for e in index.community(cid).entity_ids)


def _key(text: str) -> str:
    """A point without its ``subject:`` and everything but its letters, lowercased."""
    body = re.sub(r"^[^:：]{1,40}[:：]\s*", "", text)
    return "".join(ch for ch in unicodedata.normalize("NFKC", body).lower() if ch.isalnum())


def _say_different_things(points: list[str]) -> bool:
    keys = [_key(p) for p in points]
    return all(a != b and not (len(a) >= 20 and a in b) for i, a in enumerate(keys) for j, b in enumerate(keys) if i != j)


@pytest.mark.parametrize(
    ("question", "level"),
    [("What does hacker culture value, and how does its slang show it?", 1), ("What is a stale pointer bug?", "leaf")],
)
def test_offline_answers_name_their_subject_and_say_each_thing_once(jargon: Index, question: str, level: object) -> None:
    """The issue's demo (jargon, level 1, seed 3): each point of every map answer and of the final
    answer names a term of a community it cites ("aliasing bug: Also called a stale pointer
    bug.", not "Also called a stale pointer bug."), and no two points of one answer say the same."""
    result = _run(jargon, question, community_level=level)
    answers = [result.answer, *(a.answer for a in result.map_answers if a.answer)]
    assert len(answers) > 10
    for answer in answers:
        points = _points(answer)
        for text, cited in points:
            assert _names_a_member(jargon, text, cited), (text, cited)
        assert _say_different_things([text for text, _ in points]), answer
    assert "Also here:" not in result.answer  # a list of names is no point


def test_a_fragment_gets_its_subject(jargon: Index) -> None:
    """"Used only in a debugging context." is the last sentence of the entry chase pointers."""
    entity = next(e for e in jargon.entities if e.title == "chase pointers")
    leaf = next(c for c in jargon.leaves if entity.id in c.entity_ids)
    data = f"[Community ID: {leaf.id} | summary part 1]\n" + jargon.map_text(leaf.id)
    answer = str(answer_map("What is a pointer hunt in a debugging context?", data)["answer"])
    assert "- chase pointers: Used only in a debugging context. [Communities: " in answer
    assert "- Used only" not in answer


def test_how_a_point_names_its_subject() -> None:
    assert with_subject("Used only in a debugging context.", "chase pointers") == "chase pointers: Used only in a debugging context."
    assert with_subject("To insert a kluge into a program.", "kluge") == "kluge: To insert a kluge into a program."  # a fragment
    assert with_subject("Hackers value all three of these properties.", "hacker ethic") == "hacker ethic: Hackers value all three of these properties."
    assert with_subject("In C, a wild pointer is said to have done a fandango on core.", "fandango on core").startswith("In C,")
    assert with_subject("root: The superuser account.", "root") == "root: The superuser account."
    assert with_subject("Problem: this fails on word-oriented machines.", "vaxocentrism") == "vaxocentrism: Problem: this fails on word-oriented machines."
    assert with_subject("與杜甫友善，其出牧韶州，甫有詩送之。", "韋迢") == "韋迢：與杜甫友善，其出牧韶州，甫有詩送之。"
    assert with_subject("李白: 《靜夜思》：床前明月光。", "李白") == "李白：《靜夜思》：床前明月光。"  # a claim line, in Chinese
    assert with_subject("天寶間，甫與李白齊名。", "") == "天寶間，甫與李白齊名。"


def test_a_chinese_summary_line_names_each_member() -> None:
    """The builder writes a Chinese summary on one line, member after member (李頎：...王維：...):
    each sentence is about the member whose ``名：`` came last, and a speaker (帝曰：) is none."""
    data = (
        "[Community ID: 7 | summary part 1]\n[Community summary]\n"
        "本社區收錄2個相關條目，以裴迪與李頎爲中心。裴迪：裴迪，關中人。與杜甫、李頎友善，嘗爲尚書省郎。"
        "李頎：李頎，東川人。帝曰：朕聞其人。與王昌齡、高適友善。"
    )
    answer = str(answer_map("杜甫與王昌齡的朋友", data)["answer"])
    assert "- 裴迪：與杜甫、李頎友善，嘗爲尚書省郎。 [Communities: 7]" in answer
    assert "- 李頎：與王昌齡、高適友善。 [Communities: 7]" in answer


def test_the_same_point_in_other_words_is_one_point() -> None:
    summary, excerpt = "root: The superuser account (with user name 'root') that ignores permission bits.", "1. [Unix] The superuser account (with user name ‘root’) that ignores permission bits."
    assert point_key(summary) == point_key(excerpt)
    assert same_point(point_key("A claim cut short because it was long…"), point_key("A claim cut short because it was long, and then some more."))
    assert not same_point(point_key("The river floods."), point_key("The river floods every spring and the farmers build levees."))  # too short to stand for the other
    data = "[Community ID: 1 | summary part 1]\n[Community summary]\n" + summary + "\n[Source excerpts]\n:root: n.\n\n" + excerpt
    answer = str(answer_map("What is the superuser account?", data)["answer"])
    assert answer.count("superuser account") == 1


def test_a_list_of_names_is_not_a_point() -> None:
    assert is_name_list("Also here: shell out, gib, root mode, peon, wheel bit, shebang, toor.")
    assert is_name_list("其他條目：韓愈、孟郊、賈島、張籍等（另有3個）。")
    assert not is_name_list("See also: the pointer that runs out of bounds, and a core dump that nobody reads.")
    assert not is_name_list("與盧綸、吉中孚、韓翃、錢起、司空曙唱和，號大曆十才子。")  # no headword: a sentence


# -- BM25 over Chinese characters -----------------------------------------------------------------


def test_chinese_terms_are_characters_and_pairs_that_do_not_cross_punctuation() -> None:
    found = terms("李白，杜甫。")
    assert set(found.strong) == {"李白", "杜甫"} and "白杜" not in found.strong
    assert not any(TOKEN_RE.fullmatch(mark) for mark in "，。！？；：“”《》、")


def test_full_width_and_compatibility_forms_are_their_plain_characters() -> None:
    assert terms("１９３７年ＡＢＣ") == terms("1937年ABC")
    assert terms("\uf900") == terms("\u8c48")  # a compatibility ideograph is its unified character
    assert terms("𠀋人").weak == ("𠀋", "人")  # beyond the basic plane (extension B) too


@pytest.mark.parametrize("question", ["语料的主要主题是什么？", "語料的主要主題是什麼？"])
def test_a_broad_chinese_question_has_no_content_terms_in_either_script(question: str) -> None:
    assert terms(question, keep_generic=False).all == ()


def test_traditional_particles_are_stop_characters() -> None:
    assert terms("李白與杜甫").weak == terms("李白与杜甫").weak == ("李", "白", "杜", "甫")


def test_bm25_ranking_needs_a_word_of_the_question_not_one_shared_character(tang: Index) -> None:
    """Nearly every Chinese chunk shares a character with a Chinese question (詩 is in most
    biographies): only the chunks holding one of its words (a bigram) are relevant."""
    ranking = rank_by_bm25(tang, "李白的詩")
    assert ranking.chunks and all("李白" in chunk.text for chunk in ranking.chunks)
    assert len(ranking.chunks) < ranking.unit_count / 10
    tea = rank_by_bm25(load_index(sample_path("zh-tea")), "普洱茶的产地在哪里？")
    assert tea.chunks and all(any(word in chunk.text for word in ("普洱", "洱茶", "产地")) for chunk in tea.chunks)
    assert len(tea.chunks) < tea.unit_count  # every chunk speaks of 茶; not every one is relevant
    broad = rank_by_bm25(tang, "語料的主要主題是什麼？")  # no content words: the most typical chunks, all of them
    assert len(broad.chunks) == broad.unit_count
