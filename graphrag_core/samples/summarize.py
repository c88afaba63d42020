"""Community titles and summaries: extractive (offline, the default) or written by a chat model.

Extractive: the title names the two or three most central members; the summary states the
community's size, names its sub-communities when it has any, then quotes the first
definitional sentences of its most central members, most central first, within a word budget
that grows with the level (leaves are short, roots longer). Same digest in, same text out.

Model-written: each community's digest becomes the content of
:func:`graphrag_core.prompts.render_community_summary_messages`; the reply must be a JSON
object with non-blank string ``title`` and ``summary``. Leaves are written before their
parents so that a parent's digest can name its children's titles.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..errors import ModelOutputError
from ..language import ChineseScript, chinese_script
from ..llm.base import ChatModel, ChatRequest
from ..parsing import parse_json_output
from ..prompts import COMMUNITY_SUMMARY_OUTPUT_SCHEMA, render_community_summary_messages
from .text import Language, count_words

LEAF_SUMMARY_WORDS = 220
"""Word budget of a leaf summary (Chinese: characters, see :func:`.text.count_words`)."""
INNER_SUMMARY_WORDS = 380
"""Word budget of a community that has children but also a parent."""
ROOT_SUMMARY_WORDS = 550
"""Word budget of a root community that has children."""
MAX_CHILD_TITLES = 12
MAX_LISTED_MEMBERS = 15
SUMMARY_MAX_TOKENS = 700
"""Output reserve of one model-written summary call."""
MODEL_DIGEST_MEMBERS = 25
"""How many of the most central members a model sees."""


@dataclass(frozen=True, slots=True)
class MemberDigest:
    """A member of a community: its title and its first definitional sentence(s)."""

    title: str
    definition: str


@dataclass(frozen=True, slots=True)
class CommunityDigest:
    """What a summary is written from. ``members`` is in centrality order, most central first."""

    size: int
    level: int
    members: tuple[MemberDigest, ...]
    child_count: int = 0
    child_titles: tuple[str, ...] = ()

    def with_children(self, titles: tuple[str, ...]) -> CommunityDigest:
        return replace(self, child_titles=titles)


@dataclass(frozen=True, slots=True)
class Summary:
    title: str
    summary: str


def _budget(digest: CommunityDigest) -> int:
    if not digest.child_count:
        return LEAF_SUMMARY_WORDS
    return ROOT_SUMMARY_WORDS if digest.level == 0 else INNER_SUMMARY_WORDS


_ZH_WORDS: dict[ChineseScript, dict[str, str]] = {
    "hans": {
        "and": "与", "opening": "本社区收录{size}个相关条目，以{central}为中心。", "children": "下分{count}个子社区：{shown}。",
        "others": "其他条目：", "more": "等（另有{more}个）。", "size": "条目数：", "sub": "子社区：",
        "central": "最核心的条目（按中心度排序）：",
    },
    "hant": {
        "and": "與", "opening": "本社區收錄{size}個相關條目，以{central}爲中心。", "children": "下分{count}個子社區：{shown}。",
        "others": "其他條目：", "more": "等（另有{more}個）。", "size": "條目數：", "sub": "子社區：",
        "central": "最核心的條目（按中心度排序）：",
    },
}
"""The Chinese words a summary is written with, in the script of the members' own text
(:func:`~graphrag_core.language.chinese_script`), so a traditional corpus reads traditional."""


def _zh_words(digest: CommunityDigest) -> dict[str, str]:
    return _ZH_WORDS[chinese_script("".join(m.title + m.definition for m in digest.members))]


def _join_names(names: Sequence[str], language: Language, digest: CommunityDigest) -> str:
    if language == "zh":
        return names[0] if len(names) == 1 else "、".join(names[:-1]) + _zh_words(digest)["and"] + names[-1]
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def extractive_title(digest: CommunityDigest, language: Language) -> str:
    """The two or three most central member titles (two when the third would make it long)."""
    names = [m.title for m in digest.members[:3]]
    if len(names) == 3 and sum(len(n) for n in names) > 48:
        names = names[:2]
    return _join_names(names, language, digest)


def extractive_summary(digest: CommunityDigest, language: Language) -> Summary:
    """A title and a summary quoting the most central members' definitions (see the module
    docstring). The summary never exceeds the level's word budget by more than one sentence's
    heading, and always holds at least the most central member's definition."""
    budget = _budget(digest)
    words = _zh_words(digest) if language == "zh" else {}
    central = _join_names([m.title for m in digest.members[:3]], language, digest)
    if language == "zh":
        opening = words["opening"].format(size=digest.size, central=central)
        if digest.child_titles:
            shown = "；".join(digest.child_titles[:MAX_CHILD_TITLES])
            opening += words["children"].format(count=digest.child_count, shown=shown)
    else:
        noun = "term" if digest.size == 1 else "terms"
        opening = f"{digest.size} related {noun} centred on {central}."
        if digest.child_titles:
            shown = "; ".join(digest.child_titles[:MAX_CHILD_TITLES])
            more = " and others" if digest.child_count > MAX_CHILD_TITLES else ""
            opening += f" It groups {digest.child_count} sub-communities: {shown}{more}."
    parts = [opening]
    used = count_words(opening, language)
    quoted = 0
    for member in digest.members:
        if not member.definition:
            continue
        line = f"{member.title}：{member.definition}" if language == "zh" else f"{member.title}: {member.definition}"
        cost = count_words(line, language)
        if quoted and used + cost > budget:
            break
        parts.append(line)
        used += cost
        quoted += 1
    rest = [m.title for m in digest.members[quoted:]][:MAX_LISTED_MEMBERS]
    if rest:
        more = len(digest.members) - quoted - len(rest)
        if language == "zh":
            tail = words["others"] + "、".join(rest) + (words["more"].format(more=more) if more else "。")
        else:
            tail = "Also here: " + ", ".join(rest) + (f", and {more} more." if more else ".")
        parts.append(tail)
    joiner = "" if language == "zh" else "\n"
    return Summary(title=extractive_title(digest, language), summary=joiner.join(parts))


def digest_text(digest: CommunityDigest, language: Language) -> str:
    """The content a model summarizes: size, sub-community titles, and the most central
    members with their definitions, most central first."""
    if language == "zh":
        words = _zh_words(digest)
        lines = [f"{words['size']}{digest.size}"]
        if digest.child_titles:
            lines.append(words["sub"] + "；".join(digest.child_titles))
        lines.append(words["central"])
    else:
        lines = [f"Number of terms: {digest.size}"]
        if digest.child_titles:
            lines.append("Sub-communities: " + "; ".join(digest.child_titles))
        lines.append("Most central terms, most central first:")
    for member in digest.members[:MODEL_DIGEST_MEMBERS]:
        lines.append(f"- {member.title}: {member.definition}".rstrip(": "))
    return "\n".join(lines)


async def model_summaries(
    jobs: Sequence[tuple[str, CommunityDigest]],
    model: ChatModel,
    *,
    language: Language,
    concurrency: int,
) -> list[Summary]:
    """One model-written summary per ``(community id, digest)`` job, in job order.

    At most ``concurrency`` calls are in flight; the limit is held only around the call.
    A reply that is not a JSON object with non-blank string ``title`` and ``summary`` raises
    :class:`ModelOutputError` naming the community; model errors propagate unchanged.
    """
    if concurrency < 1:
        raise ValueError("summary concurrency must be a positive integer.")
    limit = asyncio.Semaphore(concurrency)

    async def write(community_id: str, digest: CommunityDigest) -> Summary:
        request = ChatRequest(
            purpose="summary",
            messages=render_community_summary_messages(digest_text(digest, language), language=language),
            max_tokens=SUMMARY_MAX_TOKENS,
            output_schema=COMMUNITY_SUMMARY_OUTPUT_SCHEMA,
        )
        async with limit:
            response = await model.complete(request)
        return _read_summary(community_id, response.text)

    return list(await asyncio.gather(*(write(community_id, digest) for community_id, digest in jobs)))


def _read_summary(community_id: str, text: str) -> Summary:
    try:
        value = parse_json_output(text)
    except ModelOutputError as exc:
        raise ModelOutputError(f"Summary of community {community_id}: {exc}") from exc
    title = value.get("title") if isinstance(value, dict) else None
    summary = value.get("summary") if isinstance(value, dict) else None
    if not isinstance(title, str) or not isinstance(summary, str) or not title.strip() or not summary.strip():
        raise ModelOutputError(
            f"Summary of community {community_id} must be a JSON object with non-blank title and summary strings."
        )
    return Summary(title=" ".join(title.split()), summary=summary.strip())
