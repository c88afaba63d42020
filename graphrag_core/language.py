"""Which language a text is in, by its characters: Chinese or English (and its limits).

:func:`text_language` counts character classes, with the citation markers taken out first
(``[Communities: 3]`` is not English prose): Han characters against Latin letters, three
letters weighing as one character (a Chinese word is one or two characters, an English one
about five letters). The class holding at least :data:`MAJORITY` of the weight decides; a
Chinese text quoting an English name stays Chinese, an English one quoting 陆羽 stays English.

Its limits, on purpose: only Chinese and English are told apart. Latin script is taken for
English (a French corpus is "English"), Han characters with kana for no language (Japanese),
and so are Hangul, Cyrillic or any other script, and texts of less than
:data:`MIN_WEIGHT` characters' weight (a blank or a one-word answer). ``None`` means "not
known", and nothing is reported about it.

:func:`corpus_language` reads an index's community titles and summaries (at most
:data:`CORPUS_SAMPLE_CHARS` characters of them, in index order), :func:`language_drift` compares
a run's map answers and final answer with it, and :func:`chinese_script` tells simplified from
traditional characters (so generated wording can follow the text it stands beside).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from .rows import Community

Language = Literal["en", "zh"]
LANGUAGE_NAMES: dict[Language, str] = {"en": "English", "zh": "Chinese"}
"""Each language's name in English (the run's messages are English)."""

ChineseScript = Literal["hans", "hant"]

MAJORITY = 0.6
"""The share of a text's weight one class must hold to name its language."""
MIN_WEIGHT = 6.0
"""Less than this (in characters' weight) and a text has no language we can tell."""
LETTERS_PER_CHARACTER = 3.0
CORPUS_SAMPLE_CHARS = 20_000
"""How much of an index's titles and summaries :func:`corpus_language` reads (the rest would
say the same, and a big index must not cost a pass over all of it)."""

HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3007\U00020000-\U0003134f"
"""Han characters: the unified ideographs with their extensions (A to H), the compatibility
ideographs and 〇."""
_HAN = re.compile(f"[{HAN_RANGES}]")
_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff]")
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_LATIN = re.compile("[A-Za-z\u00c0-\u024f]")
_LETTER = re.compile(r"[^\W\d_]")
_URL = re.compile(r"https?://\S+|www\.\S+")
_MARKER = re.compile(f"\\[[^\\[\\]{HAN_RANGES}]*\\]")
"""A bracket with no Han character in it: a citation marker (``[Communities: 3]``,
``[Data: Reports (1, 2)]``, ``[Sources: d1-1]``) or an aside that names no language of its own."""

# Characters written differently in simplified and traditional Chinese (and never the same
# character in the other script), in pairs: simplified, traditional.
_SCRIPT_PAIRS = (
    "这這 们們 个個 为爲 为為 与與 说說 时時 会會 来來 国國 对對 发發 过過 还還 学學 门門 长長 开開 "
    "关關 见見 没沒 书書 东東 车車 马馬 鸟鳥 龙龍 风風 华華 实實 现現 经經 题題 给給 问問 间間 "
    "认認 记記 让讓 语語 读讀 词詞 诗詩 该該 请請 论論 识識 总總 区區 县縣 亲親 兴興 万萬 岁歲 "
    "历歷 传傳 军軍 赋賦 从從 节節 礼禮 乐樂 声聲 观觀 归歸 诏詔 荐薦 迁遷 议議 宫宮 纪紀 陇隴 进進 "
    "阳陽 阴陰 隐隱 谓謂 谁誰 贵貴 赐賜 闻聞 应應 处處 将將 尔爾 无無 乡鄉 举舉 补補 员員 罢罷 赠贈 "
    "凤鳳 苏蘇 刘劉 张張 陈陳 杨楊 郑鄭 韩韓 赵趙 孙孫 钱錢 顾顧 贺賀 严嚴 陆陸 卢盧 冯馮 许許 邓鄧 "
    "吴吳 萧蕭 谢謝 诸諸 卫衛 齐齊 晋晉 汉漢 帅帥 辞辭 监監 驿驛 写寫 画畫 图圖 义義 众眾 气氣"
).split()
_SIMPLIFIED = frozenset(pair[0] for pair in _SCRIPT_PAIRS)
_TRADITIONAL = frozenset(pair[1] for pair in _SCRIPT_PAIRS)


def _prose(text: str) -> str:
    """``text`` without its citation markers (:data:`_MARKER`) and web addresses."""
    return _URL.sub(" ", _MARKER.sub(" ", text))


def text_language(text: str) -> Language | None:
    """The language of ``text``, or ``None`` when it cannot be told (see the module docstring)."""
    prose = _prose(text)
    han = len(_HAN.findall(prose))
    kana = len(_KANA.findall(prose))
    hangul = len(_HANGUL.findall(prose))
    latin = len(_LATIN.findall(prose))
    other = len(_LETTER.findall(prose)) - han - kana - hangul - latin
    weights = {"zh": float(han), "en": latin / LETTERS_PER_CHARACTER, "": kana + hangul + max(0, other) / LETTERS_PER_CHARACTER}
    total = sum(weights.values())
    if total < MIN_WEIGHT or kana > 0.1 * (han + kana):
        return None
    for language in ("zh", "en"):
        if weights[language] >= MAJORITY * total:
            return language  # type: ignore[return-value]
    return None


def chinese_script(text: str) -> ChineseScript:
    """``"hant"`` when ``text`` writes more traditional-only characters than simplified-only
    ones, else ``"hans"`` (a text with neither is taken for simplified)."""
    simplified = sum(1 for char in text if char in _SIMPLIFIED)
    traditional = sum(1 for char in text if char in _TRADITIONAL)
    return "hant" if traditional > simplified else "hans"


def _sample(parts: Iterable[str], limit: int) -> str:
    taken: list[str] = []
    size = 0
    for part in parts:
        if size >= limit:
            break
        taken.append(part[: limit - size])
        size += len(taken[-1])
    return "\n".join(taken)


def corpus_text(communities: Iterable[Community], *, limit: int = CORPUS_SAMPLE_CHARS) -> str:
    """What :func:`corpus_language` reads of an index: its communities' titles and summaries, in
    index order, cut at ``limit`` characters."""
    return _sample((f"{c.title}\n{c.summary}" for c in communities), limit)


def corpus_language(communities: Iterable[Community]) -> Language | None:
    """The language of an index, from its communities' titles and summaries (``index.communities``;
    see the module docstring)."""
    return text_language(corpus_text(communities))


class LanguageDrift(BaseModel):
    """A run's answers in another language than its corpus's (a diagnostics entry)."""

    model_config = ConfigDict(frozen=True)

    corpus: Language
    map_answers_read: int
    """Map answers whose language could be told (blank and too short ones are not)."""
    map_answers_other: dict[Language, int]
    """How many of those are in each other language, most first."""
    answer: Language | None = None
    """The final answer's language when it is not the corpus's."""

    @property
    def note(self) -> str:
        """The one sentence every front end shows: "The corpus is Chinese; 7 of 9 map answers
        and the final answer are English." """
        parts: list[str] = []
        others = list(self.map_answers_other.items())
        for position, (language, count) in enumerate(others):
            last = position == len(others) - 1
            if last and self.answer == language:
                parts.append(f"{count} of {self.map_answers_read} map answers and the final answer are {LANGUAGE_NAMES[language]}")
            else:
                verb = "is" if count == 1 else "are"
                parts.append(f"{count} of {self.map_answers_read} map answers {verb} {LANGUAGE_NAMES[language]}")
        if self.answer is not None and not (others and others[-1][0] == self.answer):
            parts.append(f"the final answer is {LANGUAGE_NAMES[self.answer]}")
        return f"The corpus is {LANGUAGE_NAMES[self.corpus]}; " + " and ".join(parts) + "."


def language_drift(corpus: Language | None, map_answers: Iterable[str], answer: str | None) -> LanguageDrift | None:
    """How a run's answers depart from the corpus's language: ``None`` when the corpus's
    language is not known or every answer whose language can be told is in it. ``map_answers``
    are the map answers' texts (blank ones say nothing); ``answer`` is the final answer, or
    ``None`` when the run wrote none (a model's answer, not the engine's "no results")."""
    if corpus is None:
        return None
    read = [language for text in map_answers if text.strip() and (language := text_language(text)) is not None]
    others = [language for language in read if language != corpus]
    final = text_language(answer) if answer else None
    final_other = final if final is not None and final != corpus else None
    if not others and final_other is None:
        return None
    counts: dict[str, int] = {}
    for language in others:
        counts[language] = counts.get(language, 0) + 1
    return LanguageDrift(
        corpus=corpus,
        map_answers_read=len(read),
        map_answers_other=dict(sorted(counts.items(), key=lambda item: (-item[1], item[0]))),  # type: ignore[arg-type]
        answer=final_other,
    )


__all__ = [
    "CORPUS_SAMPLE_CHARS",
    "HAN_RANGES",
    "LANGUAGE_NAMES",
    "LanguageDrift",
    "MAJORITY",
    "MIN_WEIGHT",
    "ChineseScript",
    "Language",
    "chinese_script",
    "corpus_language",
    "corpus_text",
    "language_drift",
    "text_language",
]
