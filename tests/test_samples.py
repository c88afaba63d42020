"""The bundled samples and the builder that makes them."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from graphrag_core.errors import ModelOutputError
from graphrag_core.index import load_index, save_index
from graphrag_core.llm.base import ChatRequest, ChatResponse
from graphrag_core.models import Index
from graphrag_core.samples import DEFAULT_SAMPLE, SAMPLES, sample_path
from graphrag_core.samples.__main__ import main as samples_main
from graphrag_core.samples.builder import BuildOptions, SampleBuildError, build_index
from graphrag_core.samples.jargon import (
    jargon_articles,
    jargon_options,
    parse_jargon,
    read_source,
)
from graphrag_core.samples.text import split_sentences
from graphrag_core.samples.zh import parse_zh_source, zh_options

from . import APP_ROOT

# A few entries in the layout of Debian's jargon.txt: a lexicon part, a letter section with its
# index of headwords, entries indented by three spaces, {cross-references} that break lines.
REAL_LOOKING = """\
                          Part II. The Jargon Lexicon

   The Crunchly saga begins here.

  A

   abbrev

   ABEND

   :abbrev: /@·breev'/, /@·brev´/, n.

   Common abbreviation for ‘abbreviation’.

   :ABEND: /a´bend/, /@·bend´/, n.

   [ABnormal END]

   1. Abnormal termination (of software); {crash}; {lossage}. Derives from
   an error message on the IBM 360; used jokingly by hackers but seriously
   mainly by {code
   grinder}s.

   2. [alt.callahans] Absent By Enforced Net Deprivation — used in the
   subject lines of postings.

   (The next cartoon in the Crunchly saga is 74-08-18. The previous one is
   73-07-29.)

  C

   crash

   :crash: n.,v.

   1. A sudden, usually drastic failure. Most often said of the {system}
   (q.v., sense 1), esp. of magnetic disk drives (the term originally
   described what happens when the air gap of a hard disk collapses).

   :code grinder: n.

   A {suit}-wearing minion of the sort hired in legion strength by banks
   and insurance companies. See {ABEND}.

   :segfault: n.,vi.

   Syn. {crash}.

   :lossage: /los'*j/, n.

   The result of a bug or malfunction. See {segfault}.

                             Part III. Appendices

   :appendix: n.

   Not part of the lexicon at all, so never read.
"""


def _synthetic_jargon(entries: int = 96) -> str:
    """A jargon-format text with nested structure (groups of four, paired, pairs paired into
    quads, quads in a ring) and one stray entry with no cross-reference."""
    lines = ["Part II. The Jargon Lexicon", "", "  A", ""]
    for number in range(entries):
        group = number // 4
        peers = [f"{{term{group * 4 + k}}}" for k in range(4) if group * 4 + k != number]
        sibling = (group ^ 1) * 4 + number % 4
        cousin = (group ^ 2) * 4 + number % 4
        far = ((group // 4 + 1) * 16) % entries
        extra = f" See {{term{cousin}}}." if number % 4 < 2 else ""
        extra += f" Compare {{term{far}}}." if number % 16 == 0 else ""
        lines += [
            f"   :term{number}: n.",
            "",
            f"   1. A {'machine' if group % 2 else 'person'} word number {number}, used with {', '.join(peers)}.",
            f"   Also related to {{term{sibling}}} now and then.{extra}",
            "",
            f"   2. Second sense of term{number}: said of {'hardware' if group % 2 else 'hackers'} in jest.",
            "",
        ]
    lines += ["   :stray: n.", "", "   A hardware word with no cross-reference at all, said of machine.", ""]
    lines += ["Part III. Appendices", ""]
    return "\n".join(lines)


# -- the parser --------------------------------------------------------------------------------


def test_parser_reads_entries_references_and_skips_noise() -> None:
    entries = parse_jargon(REAL_LOOKING)
    assert [e.term for e in entries] == ["abbrev", "ABEND", "crash", "code grinder", "segfault", "lossage"]
    abend = entries[1]
    assert abend.headline == "/a´bend/, /@·bend´/, n."
    assert abend.paragraphs[0] == "[ABnormal END]"
    assert abend.paragraphs[1].startswith("1. Abnormal termination (of software); {crash}")
    assert abend.references == ("crash", "lossage", "code grinder")  # the broken-line ref is whole
    assert not any("Crunchly" in p for e in entries for p in e.paragraphs)
    assert entries[4].redirect == "crash"
    assert entries[0].redirect is None


def test_articles_follow_redirects_and_keep_senses() -> None:
    articles = {a.title: a for a in jargon_articles(REAL_LOOKING)}
    assert "segfault" not in articles  # a redirect, not an article
    assert articles["lossage"].links == ("crash",)  # {segfault} followed to {crash}
    assert [p.sense for p in articles["ABEND"].paragraphs] == [1, 1, 2]
    assert articles["ABEND"].heading.startswith(":ABEND: ")
    assert articles["abbrev"].kind == "noun"


def test_sentences_survive_abbreviations() -> None:
    text = "Said esp. of disks, e.g. the RK05. Also n. usage. Second sentence here."
    assert split_sentences(text, "en") == ["Said esp. of disks, e.g. the RK05.", "Also n. usage.", "Second sentence here."]
    assert split_sentences("绿茶不发酵。红茶全发酵！", "zh") == ["绿茶不发酵。", "红茶全发酵！"]


# -- the builder -------------------------------------------------------------------------------


def test_builder_is_deterministic_to_the_byte(tmp_path: Path) -> None:
    source = tmp_path / "jargon.txt"
    source.write_text(_synthetic_jargon(), encoding="utf-8")
    options = replace(jargon_options(), max_leaf_size=4, split_resolution=0.5)  # small corpus, 3 levels
    outputs = [tmp_path / "first", tmp_path / "second"]
    for out in outputs:
        index, _ = asyncio.run(build_index(jargon_articles(read_source(source)), options))
        save_index(index, out)
    names = sorted(p.name for p in outputs[0].iterdir())
    assert names == sorted(p.name for p in outputs[1].iterdir())
    assert "manifest.json" in names
    for name in names:
        assert (outputs[0] / name).read_bytes() == (outputs[1] / name).read_bytes(), name
    index = load_index(outputs[0])
    _check_index(index, min_levels=3)
    assert any("no cross-reference" in r.description for r in index.relationships)  # the stray


def test_command_line_reports_a_corpus_too_small_for_its_levels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "jargon.txt"
    source.write_text(_synthetic_jargon(8), encoding="utf-8")
    assert samples_main(["jargon", "--source", str(source), "--out", str(tmp_path / "out")]) == 2
    assert "fewer than the 3 asked for" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_chunks_are_capped_and_claims_cite_the_right_chunk() -> None:
    long_paragraph = " ".join(f"Sentence number {n} about the {{other}} thing." for n in range(200))
    text = (
        "   :long: n.\n\n   1. " + long_paragraph + "\n\n   2. The second sense, cited from a later chunk.\n\n"
        "   :other: n.\n\n   The other thing, which {long} describes at length.\n"
    )
    options = BuildOptions(name="t", max_chunk_chars=500, min_levels=1)
    index, _ = asyncio.run(build_index(jargon_articles(text), options))
    assert max(len(c.text) for c in index.chunks) <= 500
    long_chunks = [c for c in index.chunks if c.document_id == "d0001"]
    assert len(long_chunks) > 10 and all(c.text.startswith(":long: n.") for c in long_chunks)
    second_sense = next(c for c in index.claims if c.description.startswith("The second sense"))
    assert "The second sense" in index.chunk(second_sense.chunk_ids[0]).text


class _FakeSummaryModel:
    """Writes a summary that names the community's first listed term; counts its calls."""

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        content = request.messages[-1].content
        first = next(line[2:].split(":")[0] for line in content.splitlines() if line.startswith("- "))
        reply = {"title": f"About {first}", "summary": f"A group of terms led by {first}."}
        return ChatResponse(text="```json\n" + json.dumps(reply) + "\n```")


def test_model_written_summaries_use_the_summary_prompt() -> None:
    model = _FakeSummaryModel()
    options = BuildOptions(name="t", min_levels=2, max_leaf_size=4, split_resolution=0.5, summaries="model")
    index, _ = asyncio.run(build_index(jargon_articles(_synthetic_jargon()), options, model=model))
    assert len(model.requests) == len(index.communities)
    assert {r.purpose for r in model.requests} == {"summary"}
    assert all(c.title.startswith("About term") or c.title == "About stray" for c in index.communities)
    assert all(c.summary.startswith("A group of terms led by") for c in index.communities)
    parents = [r for r in model.requests if "Sub-communities:" in r.messages[-1].content]
    assert parents and all("About " in r.messages[-1].content for r in parents)  # children written first


def test_model_summaries_reject_bad_output_and_need_a_model() -> None:
    class Broken:
        async def complete(self, request: ChatRequest) -> ChatResponse:
            return ChatResponse(text='{"title": ""}')

    options = replace(BuildOptions(name="t", min_levels=1), summaries="model")
    with pytest.raises(ModelOutputError, match="non-blank title and summary"):
        asyncio.run(build_index(jargon_articles(_synthetic_jargon()), options, model=Broken()))
    with pytest.raises(SampleBuildError, match="need a chat model"):
        asyncio.run(build_index(jargon_articles(_synthetic_jargon()), options))


# -- the committed samples ---------------------------------------------------------------------


def _check_index(index: Index, *, min_levels: int) -> None:
    levels = index.levels()
    assert len(levels) >= min_levels
    for level in levels:
        assert index.select_communities(level), f"level {level} has no summaries"
    assert all(c.title.strip() and c.summary.strip() for c in index.communities)
    chunk_ids = {c.id for c in index.chunks}
    assert index.claims
    for claim in index.claims:
        assert claim.chunk_ids and set(claim.chunk_ids) <= chunk_ids
        assert index.is_leaf(claim.community_id), f"claim {claim.id} is not on a leaf"
    for community in index.communities:  # children nest inside their parent and are smaller
        for child in index.children(community.id):
            assert set(child.entity_ids) < set(community.entity_ids)
    _check_records_link_their_chunks(index)


def _check_records_link_their_chunks(index: Index) -> None:
    """Every entity names the chunks it was extracted from, and each of those chunks lists it
    among the entities extracted from it (the Provenance page's source view); a cross-reference
    names the chunks that hold its ``{reference}``."""
    from graphrag_core.records import IndexRecords

    records = IndexRecords(index)
    extracted = {chunk.id: records.from_chunk(chunk.id) for chunk in index.chunks}
    for entity in index.entities:
        assert entity.chunk_ids, f"entity {entity.id} {entity.title!r} names no source chunk"
        for chunk_id in entity.chunk_ids:
            assert entity in extracted[chunk_id][0], f"chunk {chunk_id} does not list entity {entity.id}"
            assert entity.title in index.chunk(chunk_id).text
    for rel in index.relationships:
        if "no cross-reference" in rel.description:
            assert not rel.chunk_ids  # a similarity link: nothing in the source to point at
            continue
        assert rel.chunk_ids, f"relationship {rel.id} names no source chunk"
        source = records.entity_titled(rel.source)
        for chunk_id in rel.chunk_ids:
            assert rel in extracted[chunk_id][1] and chunk_id in source.chunk_ids  # the source term's own text


def test_registry_points_at_the_committed_samples() -> None:
    assert DEFAULT_SAMPLE in SAMPLES
    assert sample_path("jargon") == SAMPLES["jargon"]
    assert all(path.is_dir() and path.parent.name == "sample_data" for path in SAMPLES.values())
    with pytest.raises(KeyError, match="jargon"):
        sample_path("nope")


@pytest.fixture(scope="module")
def jargon_index() -> Index:
    return load_index(sample_path("jargon"))


def test_jargon_sample_loads_and_has_the_promised_shape(jargon_index: Index) -> None:
    _check_index(jargon_index, min_levels=3)
    levels = jargon_index.levels()
    assert levels[0] < 30 and len(jargon_index.leaves) > 5 * levels[0]  # few roots, many leaves
    assert max(len(c.text) for c in jargon_index.chunks) <= 1500
    assert sum(p.stat().st_size for p in sample_path("jargon").iterdir()) < 6_000_000


def test_a_jargon_entity_and_its_source_name_each_other(jargon_index: Index) -> None:
    """The issue's example: entity e1838 "suit" came from chunk d1838-1, which lists it."""
    from graphrag_core.records import IndexRecords

    records = IndexRecords(jargon_index)
    suit = records.get("entity", "e1838")
    assert suit is not None and suit.title == "suit" and suit.chunk_ids == ("d1838-1",)
    entities, relationships, _claims = records.from_chunk("d1838-1")
    assert [e.title for e in entities] == ["suit"]
    assert {r.target for r in relationships} >= {"droid", "management", "PHB"}


def test_zh_sample_loads_and_is_chinese() -> None:
    index = load_index(sample_path("zh-tea"))
    _check_index(index, min_levels=2)
    assert any("\u4e00" <= ch <= "\u9fff" for ch in index.communities[0].summary)


def test_zh_sample_rebuilds_to_the_committed_bytes(tmp_path: Path) -> None:
    assert samples_main(["zh", "--out", str(tmp_path / "zh")]) == 0
    for committed in sample_path("zh-tea").iterdir():
        assert (tmp_path / "zh" / committed.name).read_bytes() == committed.read_bytes(), committed.name


def test_jargon_sample_rebuilds_to_the_committed_bytes(tmp_path: Path) -> None:
    """The README's rebuild command, from Debian's jargon-text (skipped when it is not installed)."""
    from graphrag_core.samples.jargon import DEFAULT_SOURCE

    if not DEFAULT_SOURCE.is_file():
        pytest.skip(f"{DEFAULT_SOURCE} is missing (apt-get install jargon-text)")
    assert samples_main(["jargon", "--source", str(DEFAULT_SOURCE), "--out", str(tmp_path / "jargon")]) == 0
    for committed in sample_path("jargon").iterdir():
        assert (tmp_path / "jargon" / committed.name).read_bytes() == committed.read_bytes(), committed.name


def test_zh_source_parses_into_linked_articles() -> None:
    articles = parse_zh_source(":甲: 条目\n甲是{乙}的朋友。\n\n第二段。\n:乙: 条目\n乙认识{甲}。\n")
    assert [a.title for a in articles] == ["甲", "乙"]
    assert articles[0].links == ("乙",) and len(articles[0].paragraphs) == 2
    assert zh_options().language == "zh"


# -- the Tang poets sample (issue 43) ------------------------------------------------------------


@pytest.fixture(scope="module")
def tang_index() -> Index:
    return load_index(sample_path("zh-tang"))


def test_the_tang_sample_is_bundled_and_offered() -> None:
    from graphrag_core.samples import sample_question

    assert SAMPLES["zh-tang"] == sample_path("zh-tang") and (sample_path("zh-tang") / "manifest.json").is_file()
    assert sample_question("zh-tang") and list(SAMPLES).index("zh-tang") > list(SAMPLES).index("zh-tea")


def test_the_tang_sample_loads_validates_and_has_60_leaf_communities(tang_index: Index) -> None:
    from graphrag_core.language import chinese_script, corpus_language

    _check_index(tang_index, min_levels=3)  # every table read, so every table's checks ran
    assert not tang_index.warnings
    assert len(tang_index.leaves) >= 60
    assert corpus_language(tang_index.communities) == "zh"
    assert all(chinese_script(c.summary) == "hant" for c in tang_index.communities)  # its own words too: 本社區收錄...
    assert sum(p.stat().st_size for p in sample_path("zh-tang").iterdir()) < 2_000_000
    li_bai = next(e for e in tang_index.entities if e.title == "李白")
    assert li_bai.description.startswith("李白，字太白")
    assert {r.target for r in tang_index.relationships if r.source == "杜甫"} >= {"李白", "高適", "嚴武", "元稹"}


def test_a_default_leaf_run_on_the_tang_sample_streams_at_least_5_batches(tang_index: Index) -> None:
    from graphrag_core.events import MapBatchSucceeded
    from graphrag_core.llm.offline import OfflineChatModel
    from graphrag_core.request import GlobalSearchRequest
    from graphrag_core.samples import sample_question
    from graphrag_core.search import plan_batches, retrieve_global

    request = GlobalSearchRequest(query=sample_question("zh-tang"))  # every default: leaf, 8000-token budgets
    _, batches, _ = plan_batches(tang_index, request, seed=1, model=OfflineChatModel())
    assert len(batches) >= 5
    events: list[object] = []
    result = asyncio.run(retrieve_global(tang_index, request.model_copy(update={"seed": 1}), OfflineChatModel(), on_event=events.append))
    assert result.status == "completed" and result.diagnostics.batch_count == len(batches)
    assert sum(isinstance(e, MapBatchSucceeded) for e in events) >= 5


def test_the_command_line_inspects_the_tang_sample(capsys: pytest.CaptureFixture[str]) -> None:
    from graphrag_cli.main import main

    assert main(["inspect", "zh-tang"], environ={}) == 0
    out = capsys.readouterr().out
    assert out.startswith("Index zh-tang") and " leaf          133 " in out


def test_the_tang_sample_rebuilds_to_the_committed_bytes(tmp_path: Path) -> None:
    assert samples_main(["zh-tang", "--out", str(tmp_path / "tang")]) == 0
    for committed in sample_path("zh-tang").iterdir():
        assert (tmp_path / "tang" / committed.name).read_bytes() == committed.read_bytes(), committed.name


def test_the_tang_questions_load_and_are_chinese() -> None:
    from graphrag_core.evaluation.questions import bundled_question_set, load_questions
    from graphrag_core.language import text_language

    questions = load_questions(bundled_question_set("zh-tang"))
    assert len(questions) >= 8 and len({q.id for q in questions}) == len(questions)
    assert all(text_language(q.question) == "zh" and q.question.endswith("？") for q in questions)


_AUTHORS = [
    {"name": "太宗皇帝", "desc": "帝姓李氏，諱世民。與李白無涉，詩一卷。"},
    {"name": "李白", "desc": "李白，字太白，隴西成紀人。天寶初，往見賀知章。與韋應物不同時。  李白，字太白。（複出）"},
    {"name": "賀知章", "desc": "賀知章，字季真，會稽永興人。晚年尤加縱誕。"},
    {"name": "韋應物", "desc": "韋應物，京兆長安人。少以三衛郎事明皇。"},
    {"name": "應物", "desc": "應物，大中時江南詩僧也。詩二首。"},
    {"name": "景雲", "desc": "景雲，善草書，與岑參同時。詩三首。"},
    {"name": "岑參", "desc": "岑參，南陽人，文本之後。景雲中，其祖在朝。"},
    {"name": "孟郊", "desc": "孟郊，字東野，湖州武康人。與韓愈善。"},
    {"name": "韓愈", "desc": "韓愈，字退之，南陽人。"},
    {"name": "不詳", "desc": ""},
]
_ANTHOLOGY = [
    {"author": "李白", "title": "靜夜思", "paragraphs": ["床前明月光，疑是地上霜。", "舉頭望明月，低頭思故鄉。"]},
    {"author": "李白", "title": "月下獨酌", "paragraphs": ["花間一壺酒，獨酌無相親。"]},
    {"author": "李白", "title": "將進酒", "paragraphs": ["君不見黃河之水天上來。"]},
    {"author": "岑參", "title": "逢入京使", "paragraphs": ["故園東望路漫漫。"]},
]


def test_the_tang_source_text_is_made_from_chinese_poetrys_files(tmp_path: Path) -> None:
    """Poets one or two steps from the anthology's, mentions marked {名} leftmost-longest,
    emperors and names that are also words never mentions, a biography's first version only."""
    from graphrag_core.samples.tang import choose_poets, read_anthology, read_biographies, tang_source_text

    authors, anthology = json.dumps(_AUTHORS, ensure_ascii=False), json.dumps(_ANTHOLOGY, ensure_ascii=False)
    bios = read_biographies(authors)
    assert bios["李白"].endswith("與韋應物不同時。")  # the second version is left out
    poems = read_anthology(anthology)
    assert choose_poets(bios, poems, steps=0) == ["李白", "岑參"]
    assert choose_poets(bios, poems, steps=1) == ["李白", "賀知章", "韋應物", "岑參"]  # not 應物 (inside 韋應物), not 景雲 (an era)
    text = tang_source_text(authors, anthology, commit="abc123")
    assert "at commit abc123" in text and "MIT licence" in text
    articles = parse_zh_source(text)
    assert [a.title for a in articles] == ["李白", "賀知章", "韋應物", "岑參"]
    li_bai = articles[0]
    assert li_bai.heading == ":李白: 詩人" and set(li_bai.links) == {"賀知章", "韋應物"}
    assert "往見{賀知章}" in li_bai.paragraphs[0].text and "{應物}" not in li_bai.paragraphs[0].text
    assert [p.text for p in li_bai.paragraphs[1:]] == ["《靜夜思》：床前明月光，疑是地上霜。舉頭望明月，低頭思故鄉。", "《月下獨酌》：花間一壺酒，獨酌無相親。"]
    assert articles[3].links == ()  # 景雲中 is an era, not the poet 景雲
    # the command writes the same text
    (tmp_path / "a.json").write_text(authors, encoding="utf-8")
    (tmp_path / "p.json").write_text(anthology, encoding="utf-8")
    out = tmp_path / "source.txt"
    assert samples_main(["zh-tang-source", "--authors", str(tmp_path / "a.json"), "--anthology", str(tmp_path / "p.json"), "--commit", "abc123", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == text


def test_bad_chinese_poetry_files_are_named() -> None:
    from graphrag_core.samples.tang import TangSourceError, read_anthology, read_biographies

    with pytest.raises(TangSourceError, match="authors.tang.json is not JSON"):
        read_biographies("{")
    with pytest.raises(TangSourceError, match="poet 2"):
        read_biographies('[{"name": "李白"}, {"desc": "x"}]')
    with pytest.raises(TangSourceError, match="poem 1"):
        read_anthology('[{"author": "李白", "paragraphs": "床前明月光"}]')


def test_the_committed_tang_source_names_its_origin() -> None:
    from graphrag_core.samples.tang import SOURCE_FILE

    head = SOURCE_FILE.read_text(encoding="utf-8")[:1200]
    assert "chinese-poetry/chinese-poetry at commit 99ebbef7e1345c0985c44b9fd96a3f9e776f117b" in head
    assert "public domain" in head and "MIT licence" in head


@pytest.mark.parametrize("level", [0, 1, 2, "leaf"])
def test_offline_global_search_completes_on_the_jargon_sample(jargon_index: Index, level: int | str) -> None:
    from graphrag_core.llm.offline import OfflineChatModel
    from graphrag_core.request import GlobalSearchRequest
    from graphrag_core.search import retrieve_global

    request = GlobalSearchRequest(query="What do hackers think of IBM and Microsoft?", community_level=level, seed=7)
    result = asyncio.run(retrieve_global(jargon_index, request, OfflineChatModel()))
    assert result.status == "completed"


def test_the_builder_names_its_optional_dependency(monkeypatch):
    import importlib.util

    from graphrag_core.samples import builder

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "scipy" else real(name, *a))
    with pytest.raises(builder.SampleBuildError, match=r"needs scipy.*graphrag-global-explorer\[samples\]"):
        builder.require_scipy()


def test_samples_are_package_data():
    from importlib.resources import files

    from graphrag_core.samples import SAMPLE_DATA

    assert SAMPLE_DATA == Path(str(files("graphrag_core") / "sample_data"))
    assert all((SAMPLE_DATA / name / "manifest.json").is_file() for name in SAMPLES)


def test_every_sample_file_is_declared_package_data():
    """A non-editable install carries the samples: each file matches a package-data glob."""
    import tomllib
    from fnmatch import fnmatch

    from graphrag_core.samples import SAMPLE_DATA

    config = tomllib.loads((APP_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["graphrag_core"]
    package_root = SAMPLE_DATA.parent
    files = [p.relative_to(package_root).as_posix() for p in SAMPLE_DATA.rglob("*") if p.is_file()]
    assert files and all(any(fnmatch(f, g) and f.count("/") == g.count("/") for g in globs) for f in files), files
    # the evaluation (issue 13) runs scipy's Wilcoxon test at run time, so a plain install needs it
    assert "scipy" in " ".join(config["project"]["dependencies"])
