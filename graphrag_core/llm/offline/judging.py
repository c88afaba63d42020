"""The offline model's answers to the evaluation prompts: a transparent heuristic, not an LLM.

- ``judge``: each answer gets a score for the criterion from its own text and the question
  alone (never from its position); the higher score wins, equal scores tie. Two identical
  answers therefore always tie, so an A/A comparison scores exactly 50. The reason says which
  figures decided, and starts with ``heuristic:``.
- ``claims``: the answer's sentences and list items, citations removed.
- ``questions``: personas, tasks and questions built from the most frequent content terms of
  the corpus description, from fixed templates (Chinese templates for a Chinese corpus).

Figures per criterion (ties broken by nothing: equal figures are a tie):

- comprehensiveness: distinct content terms, plus 2 per distinct point (sentence or item);
- diversity: distinct cited communities x 3, plus distinct content terms of the points' openings;
- empowerment: question terms covered x 4, plus explanatory markers x 2, plus cited communities;
- directness: question terms covered x 10, minus the answer's length in words / 10 (short wins).
"""

from __future__ import annotations

import re
from collections import Counter

from ...prompts import (
    ANSWER_1_MARKER,
    ANSWER_2_MARKER,
    ANSWER_MARKER,
    DATA_MARKER,
    PERSONA_MARKER,
    QUESTION_MARKER,
    STEP_MARKER,
    TASK_MARKER,
)
from .retrieval import BULLET_RE, CJK_RANGES

HEURISTIC_LABEL = "heuristic"

_TERM_RE = re.compile(rf"[{CJK_RANGES}]{{2}}|[A-Za-z][A-Za-z0-9'-]{{2,}}")
_CRITERION_RE = re.compile(r"^\[Criterion: (?P<name>[a-z]+)\]$", re.MULTILINE)
_CITATION_RE = re.compile(r"[ \t]*\[(?:Communities|Community|Data)[^\]]*\]")
_CITED_IDS_RE = re.compile(r"\[Communities?: (?P<ids>[^\]]*)\]")
_POINT_SPLIT_RE = re.compile(r"(?<=[.!?。！？；])\s*|\n+")
_EXPLAIN_RE = re.compile(r"\b(because|therefore|so that|which means|for example|for instance|such as|in short)\b|因为|所以|例如|因此|比如", re.IGNORECASE)
_STOP = frozenset(
    """the and for with that this from are was were been have has had not but its into onto over under
    between also more most other some any all each both only very just same what which who whom whose
    when where why how does did done about there their they them than then such can could would should
    will shall may might must these those answer question questions main themes theme corpus""".split()
)


def _terms(text: str) -> list[str]:
    return [t.lower() for t in _TERM_RE.findall(_CITATION_RE.sub(" ", text)) if t.lower() not in _STOP]


def _points(text: str) -> list[str]:
    cleaned = _CITATION_RE.sub("", text)
    points = []
    for part in _POINT_SPLIT_RE.split(cleaned):
        part = BULLET_RE.sub("", part).strip(" \t-*#")
        if len(_terms(part)) >= 1:
            points.append(part)
    return points


def _cited(text: str) -> set[str]:
    return {i.strip() for m in _CITED_IDS_RE.finditer(text) for i in m.group("ids").split(",") if i.strip()}


def _figure(criterion: str, question: str, answer: str) -> tuple[float, str]:
    """The criterion's figure for one answer, and how it was made (for the reason)."""
    terms = set(_terms(answer))
    points = list(dict.fromkeys(p.casefold() for p in _points(answer)))
    asked = set(_terms(question))
    covered = len(asked & terms)
    words = len(_terms(answer)) + len(re.findall(rf"[{CJK_RANGES}]", answer)) // 2
    if criterion == "comprehensiveness":
        return len(terms) + 2 * len(points), f"{len(terms)} distinct terms, {len(points)} points"
    if criterion == "diversity":
        openings = {t for p in points for t in _terms(p)[:3]}
        cited = len(_cited(answer))
        return 3 * cited + len(openings), f"{cited} cited communities, {len(openings)} distinct point openings"
    if criterion == "empowerment":
        explain = len(_EXPLAIN_RE.findall(answer))
        cited = len(_cited(answer))
        return 4 * covered + 2 * explain + cited, f"{covered} question terms, {explain} explanations, {cited} citations"
    return 10 * covered - words / 10, f"{covered} question terms in {words} words"


def _section(text: str, marker: str, *ends: str) -> str:
    _, found, rest = text.partition(f"{marker}\n")
    if not found:
        return ""
    cut = len(rest)
    for end in ends:
        at = rest.find(f"\n{end}")
        if at >= 0:
            cut = min(cut, at)
    return rest[:cut]


def judge_reply(user: str) -> dict[str, object]:
    """``{"winner", "reason"}`` for a judge prompt (see the module docstring)."""
    question = _section(user, QUESTION_MARKER, "[Criterion: ").strip()
    found = _CRITERION_RE.search(user)
    criterion = found.group("name") if found else "comprehensiveness"
    head, _, answers = user.partition(f"\n{ANSWER_1_MARKER}\n")
    first, _, second = answers.partition(f"\n{ANSWER_2_MARKER}\n")
    if first == second:
        return {"winner": 0, "reason": f"{HEURISTIC_LABEL}: the two answers are identical."}
    one, how_one = _figure(criterion, question, first)
    two, how_two = _figure(criterion, question, second)
    winner = 0 if abs(one - two) < 1e-9 else (1 if one > two else 2)
    return {"winner": winner, "reason": f"{HEURISTIC_LABEL} ({criterion}): answer 1 has {how_one}; answer 2 has {how_two}."}


def claims_reply(user: str) -> dict[str, object]:
    answer = _section(user, ANSWER_MARKER) or user
    return {"claims": list(dict.fromkeys(_points(answer)))}


_EN = {
    "personas": [
        "A student new to {a}, who wants an overview of the corpus",
        "A researcher comparing how the corpus treats {a} and {b}",
        "A journalist looking for the recurring stories about {b}",
        "A teacher preparing a lesson on {c}",
        "A practitioner who must decide what matters most about {a}",
        "An editor checking that the corpus covers {d} fairly",
    ],
    "tasks": [
        "find the main themes around {a}",
        "compare what the corpus says about {a} and {b}",
        "trace how {c} relates to the rest of the corpus",
        "list the most important actors and ideas connected to {b}",
        "spot disagreements or tensions about {d}",
        "summarise what a newcomer must know about {c}",
    ],
    "questions": [
        "What are the main themes connected to {a} across the corpus?",
        "How does the corpus relate {a} to {b}?",
        "Which ideas about {c} recur most often, and why?",
        "What tensions or contrasts appear in how the corpus treats {b}?",
        "What would a newcomer need to understand about {d} and {a}?",
        "How do the discussions of {c} and {d} differ across the corpus?",
    ],
}
_ZH = {
    "personas": ["想了解{a}的初学者", "比较{a}与{b}的研究者", "关注{b}的记者", "准备{c}课程的老师", "需要判断{a}要点的从业者", "检查{d}覆盖面的编辑"],
    "tasks": ["找出与{a}有关的主要主题", "比较语料中关于{a}和{b}的说法", "梳理{c}与其他内容的联系", "列出与{b}相关的重要人物和观点", "发现关于{d}的分歧", "总结新手需要知道的{c}"],
    "questions": [
        "语料中与{a}有关的主要主题有哪些？",
        "语料如何把{a}和{b}联系起来？",
        "关于{c}，哪些观点反复出现？为什么？",
        "语料在讨论{b}时有哪些对比或分歧？",
        "新手需要了解哪些关于{d}和{a}的内容？",
        "语料对{c}和{d}的讨论有何不同？",
    ],
}
_COUNT_RE = re.compile(r"\b(\d+)\b")
_TEMPLATE_TERMS = frozenset(
    t for table in (_EN, _ZH) for texts in table.values() for text in texts for t in _terms(re.sub(r"\{[a-d]\}", " ", text))
)


_TITLE_SPLIT_RE = re.compile(r",\s*|\s+and\s+|、|与|和")


def _topics(description: str) -> list[str]:
    """The topic phrases of a corpus description: its paragraphs' titles (``Title: summary``),
    split at commas and "and", then its most frequent content terms."""
    phrases: list[str] = []
    for paragraph in description.split("\n\n"):
        title, sep, _ = paragraph.partition(":")
        if not sep:
            title, sep, _ = paragraph.partition("：")
        if sep and len(title) <= 80:
            phrases.extend(p.strip() for p in _TITLE_SPLIT_RE.split(title) if len(p.strip()) >= 2)
    frequent = [t for t, _ in Counter(t for t in _terms(description) if t not in _TEMPLATE_TERMS).most_common(40)]
    return list(dict.fromkeys([*phrases, *frequent])) or ["corpus"]


def questions_reply(system: str, user: str) -> dict[str, object]:
    """Personas from the description's topics; tasks from the persona's topics first; questions
    from the task's topics first, so different personas and tasks give different items."""
    step = _section(user, STEP_MARKER, PERSONA_MARKER).strip() or "questions"
    description = _section(user, DATA_MARKER)
    persona = _section(user, PERSONA_MARKER, TASK_MARKER).strip()
    task = _section(user, TASK_MARKER, DATA_MARKER).strip()
    found = _COUNT_RE.search(system)
    count = int(found.group(1)) if found else 5
    chinese = len(re.findall(rf"[{CJK_RANGES}]", description)) > len(description) / 4
    top = _topics(description)
    anchor = task if step == "questions" else persona if step == "tasks" else ""
    own = sorted((t for t in top if t in anchor), key=anchor.find)
    terms = list(dict.fromkeys([*own, *top]))
    templates = (_ZH if chinese else _EN).get(step, _EN["questions"])
    items: list[str] = []
    shift = sum(map(ord, persona + task)) % len(templates)
    for i in range(count * 10):  # more tries than items, so duplicates are replaced
        if len(items) == count:
            break
        pick = [terms[(i + k * 2) % len(terms)] if k else (own[i % len(own)] if own else terms[i % len(terms)]) for k in range(4)]
        item = templates[(i + shift) % len(templates)].format(a=pick[0], b=pick[1], c=pick[2], d=pick[3])
        if item not in items:
            items.append(item)
    return {step: items}


__all__ = ["HEURISTIC_LABEL", "claims_reply", "judge_reply", "questions_reply"]
