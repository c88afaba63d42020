"""The bigger Chinese sample, ``zh-tang``: poets of the Tang dynasty, from the biographies of
《御定全唐詩》 (1705) and the poems of 《唐詩三百首》 (1763), both in the public domain, as the
``chinese-poetry`` project publishes them (traditional characters, as printed).

Two steps, so that the committed sample rebuilds from a file in this repository:

1. :func:`tang_source_text` turns two JSON files of a ``chinese-poetry`` checkout
   (``全唐诗/authors.tang.json``, ``全唐诗/唐诗三百首.json``) into the sample's source text
   (``sample_data/zh-tang-source.txt``, the format of :mod:`.zh`): one article per poet, its
   biography first, then up to :data:`POEMS_PER_POET` of the poet's poems in the anthology;
   every mention of another chosen poet's name in a biography is marked ``{名}``, which the
   builder reads as a cross-reference.
2. The sample builder reads that text with :func:`.zh.parse_zh_source` and builds the index
   with :func:`tang_options`.

Which poets (:func:`choose_poets`): every poet of the anthology with a biography, then every poet
whose biography names one of those or is named in one of theirs, and so on for :data:`STEPS` steps. A name counts as
a mention when it is a poet's full name of at least two characters, found leftmost-longest (so
韋應物 is never read as the poet 應物); emperors (their biographies begin 帝..., their names end
宗, 祖, 皇帝...) and the few names that are also ordinary words, places or era names
(:data:`NOT_NAMES`) are never mentions. A poet listed twice keeps the first listing with a
biography. Everything is in file order, so the same files give the same text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from .builder import BuildOptions
from .bundled import SAMPLE_DATA

SOURCE_FILE = SAMPLE_DATA / "zh-tang-source.txt"
"""The committed source text of the Tang poets sample."""

SOURCE_REPOSITORY = "chinese-poetry/chinese-poetry"
SOURCE_FILES = ("全唐诗/authors.tang.json", "全唐诗/唐诗三百首.json")
"""The files of a ``chinese-poetry`` checkout the source text is made from."""

POEMS_PER_POET = 2
STEPS = 2
"""How many steps out from the anthology's poets the sample reaches (see :func:`choose_poets`)."""
MIN_BIOGRAPHY_CHARS = 10
"""A biography shorter than this ("不詳", or nothing) does not make an article."""

NOT_NAMES: Mapping[str, str] = {
    "直言": "a word: 直言極諫, 好直言",
    "彭城": "a place: 彭城人",
    "景雲": "an era name (710-711): 景雲中",
    "丘爲": "read inside 宋齊丘爲丞相",
    "應物": "韋應物's given name: 應物有詩以送其行",
    "王建": "also the founder of Former Shu: 蜀王建時, 王建帥蜀",
    "大義": "a word: 講論大義",
    "子言": "a courtesy name: 字子言",
}
"""Poets' names that the biographies mostly use for something else, so they are not mentions."""

_EMPEROR_NAME = re.compile(r"(?:宗|祖|皇帝|皇后|太后|公主|太子)$")
_VERSIONS = re.compile(r"\s+")
_HEADER = """# 唐詩人小傳 — source text of the zh-tang sample (GraphRAG Global Explorer).
# Made by graphrag_core/samples/tang.py from {repository} at commit {commit}:
#   {files}
# The texts are in the public domain: the poets' biographies of 《御定全唐詩》 (compiled 1705) and
# the poems of 《唐詩三百首》 (蘅塘退士, 1763), as printed (traditional characters). The chinese-poetry
# compilation is under the MIT licence: Copyright (c) 2016 JackeyGao; "The above copyright notice
# and this permission notice shall be included in all copies or substantial portions of the Software."
# Articles start with ":名: 詩人"; {{名}} marks a mention of another poet of the sample. Rebuild with:
#   python -m graphrag_core.samples zh-tang --out sample_data/zh-tang
"""


class TangSourceError(ValueError):
    """The ``chinese-poetry`` files are not in the shape this module reads; the message says where."""


@dataclass(frozen=True, slots=True)
class Poem:
    author: str
    title: str
    text: str


def _json_list(text: str, file: str, items: str) -> list[object]:
    """The JSON list ``text`` holds (the file ``file`` of ``items``), else an error naming the file."""
    try:
        records = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TangSourceError(f"{file} is not JSON: {exc}") from None
    if not isinstance(records, list):
        raise TangSourceError(f"{file} must be a JSON list of {items}.")
    return records


def read_biographies(text: str) -> dict[str, str]:
    """Each poet's biography from ``authors.tang.json``, by name, in file order.

    A ``desc`` that holds several versions of the biography (separated by spaces: the classical
    text has none of its own) gives its first; a name listed twice keeps its first non-blank one."""
    records = _json_list(text, "authors.tang.json", "poets")
    biographies: dict[str, str] = {}
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict) or not isinstance(record.get("name"), str):
            raise TangSourceError(f"authors.tang.json, poet {number}: a poet is an object with a string name.")
        name = record["name"].strip()
        versions = [v for v in _VERSIONS.split(str(record.get("desc") or "").strip()) if v]
        biography = versions[0] if versions else ""
        if name and not biographies.get(name):
            biographies[name] = biography
    return biographies


def read_anthology(text: str) -> list[Poem]:
    """The poems of ``唐诗三百首.json``, in file order (its lines joined)."""
    records = _json_list(text, "唐诗三百首.json", "poems")
    poems: list[Poem] = []
    for number, record in enumerate(records, start=1):
        lines = record.get("paragraphs") if isinstance(record, dict) else None
        if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
            raise TangSourceError(f"唐诗三百首.json, poem {number}: a poem has an author, a title and a list of lines.")
        poems.append(Poem(author=str(record.get("author", "")).strip(), title=str(record.get("title", "")).strip(), text="".join(lines)))
    return poems


def _usable(name: str, biography: str) -> bool:
    return (
        len(name) >= 2
        and len(biography) >= MIN_BIOGRAPHY_CHARS
        and not biography.startswith("帝")
        and not _EMPEROR_NAME.search(name)
        and name not in NOT_NAMES
    )


def _name_pattern(names: Iterable[str]) -> re.Pattern[str]:
    """Leftmost-longest matching of ``names`` (longer names first at any one position)."""
    return re.compile("|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n))))


def mentions(biography: str, own: str, pattern: re.Pattern[str]) -> list[str]:
    """The names ``pattern`` finds in ``biography`` other than ``own``, each once, in order."""
    return list(dict.fromkeys(m.group(0) for m in pattern.finditer(biography) if m.group(0) != own))


def choose_poets(biographies: Mapping[str, str], anthology: Sequence[Poem], *, steps: int = STEPS) -> list[str]:
    """The sample's poets, in the order of ``biographies`` (see the module docstring): the
    anthology's, then ``steps`` times every poet naming or named by one chosen so far."""
    usable = {name: bio for name, bio in biographies.items() if _usable(name, bio)}
    pattern = _name_pattern(usable)
    named = {name: set(mentions(bio, name, pattern)) for name, bio in usable.items()}
    chosen = {poem.author for poem in anthology if poem.author in usable}
    for _ in range(steps):
        reached = set(chosen)
        for name, found in named.items():
            if name in chosen:
                reached.update(found)
            elif chosen & found:
                reached.add(name)
        chosen = reached
    return [name for name in usable if name in chosen]


def mark_mentions(biography: str, own: str, pattern: re.Pattern[str], poets: Collection[str]) -> str:
    """``biography`` with every mention of another of ``poets`` written ``{名}`` (``pattern``
    finds every usable name, so a longer name that is not one of ``poets`` hides the shorter one inside it)."""
    return pattern.sub(lambda m: "{" + m.group(0) + "}" if m.group(0) != own and m.group(0) in poets else m.group(0), biography)


def tang_source_text(authors_json: str, anthology_json: str, *, commit: str) -> str:
    """The sample's source text (see the module docstring) from the two files' text."""
    biographies = read_biographies(authors_json)
    anthology = read_anthology(anthology_json)
    poets = choose_poets(biographies, anthology)
    pattern = _name_pattern(name for name, bio in biographies.items() if _usable(name, bio))
    chosen = set(poets)
    poems: dict[str, list[Poem]] = {}
    for poem in anthology:
        if poem.text and len(poems.setdefault(poem.author, [])) < POEMS_PER_POET:
            poems[poem.author].append(poem)
    blocks = [_HEADER.format(repository=SOURCE_REPOSITORY, commit=commit, files=", ".join(SOURCE_FILES))]
    for name in poets:
        paragraphs = [mark_mentions(biographies[name], name, pattern, chosen)]
        paragraphs.extend(f"《{poem.title}》：{poem.text}" for poem in poems.get(name, ()))
        blocks.append(f":{name}: 詩人\n" + "\n\n".join(paragraphs) + "\n")
    return "\n".join(blocks)


def tang_options() -> BuildOptions:
    """How the Tang poets sample is built: leaves of at most 4 poets under 3 levels, so that its
    ~460 poets give 60+ leaf communities; one claim per paragraph (the biography and each poem)."""
    return BuildOptions(
        name="唐詩人小傳 (zh-tang)",
        description=(
            "Poets of the Tang dynasty: their biographies from 《御定全唐詩》 (1705) and poems from "
            "《唐詩三百首》 (1763), public domain, in traditional characters, from the chinese-poetry "
            "project. Poets are documents and entities; a biography naming another poet is a "
            "relationship; communities come from recursive Louvain; summaries are extractive."
        ),
        language="zh",
        max_leaf_size=4,
        max_levels=3,
        min_levels=3,
        root_resolution=0.5,
        max_claims_per_article=3,
    )


__all__ = [
    "NOT_NAMES",
    "POEMS_PER_POET",
    "STEPS",
    "SOURCE_FILE",
    "SOURCE_FILES",
    "Poem",
    "TangSourceError",
    "choose_poets",
    "mark_mentions",
    "mentions",
    "read_anthology",
    "read_biographies",
    "tang_options",
    "tang_source_text",
]
