"""Every prompt the engine sends, as ``string.Template`` texts with one render function each.

A prompt *skeleton* is the whole prompt with the query filled in and the content empty: every
message's text joined by newlines. It counts against the phase's token budget, so what is
budgeted is what is sent. The ``---Question---`` and ``---Data---`` markers split a user message
into its parts; :func:`~graphrag_core.context.split_prompt_sections` reads them back (the offline model uses it).

Why this module is long: every prompt the engine sends lives here, by design (one place to read
and change what models are told), and each kind of call brings its text, its output schema
and its render function.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from string import Template

from .context import (
    COMMUNITY,
    DATA_MARKER,
    QUESTION_MARKER,
    Unit,
    format_prompt_sections,
    format_support_prompt,
    question_tail,
    split_prompt_sections,
)
from .language import LANGUAGE_NAMES, Language
from .llm.base import ChatMessage, ChatRequest
from .prompt_schemas import (
    CLAIMS_OUTPUT_SCHEMA,
    COMMUNITY_SUMMARY_OUTPUT_SCHEMA,
    EXPANSION_OUTPUT_SCHEMA,
    JUDGE_OUTPUT_SCHEMA,
    MAP_OUTPUT_SCHEMA,
    RATING_OUTPUT_SCHEMA,
    REDUCE_OUTPUT_SCHEMA,
    RELEVANCE_OUTPUT_SCHEMA,
    STRING_LIST,
    SUPPORT_OUTPUT_SCHEMA,
    strict_object,
)

MAP_SYSTEM = Template(
    """---Role---
You are a helpful assistant answering a question about a corpus, using only the $material \
in the data section below. Each $part starts with its $id_name.

---Goal---
Write an intermediate answer that collects the key points of the data that help answer the \
question, and rate how useful those points are for answering it.
- usefulness is an integer from 0 to 100: 0 when the data does not help at all, 100 when it \
answers the question fully.
- When nothing in the data is relevant, give usefulness 0 and an empty answer.
- Do not make anything up; say only what the data supports.$map_citation$language_rule

---Response format---
Reply with one JSON object and nothing else:
{"answer": "<the key points, in prose or as a list>", "usefulness": <0-100>}"""
)

MAP_USER = Template(format_prompt_sections("$query", "$content"))
MAP_USER_DATA_FIRST = Template(format_prompt_sections("$query", "$content", data_first=True))

REDUCE_SYSTEM = Template(
    """---Role---
You are a helpful assistant writing the final answer to a question about a corpus, by \
combining intermediate answers from analysts who each read part of the corpus's $reduce_material.

---Goal---
Combine the intermediate answers below into one answer to the question.
- Intermediate answers are ranked by usefulness, most useful first.
- Keep what is relevant and supported; drop what is not; merge repeated points.
- Cite the $id_names behind each point as $citation.
- If the answers do not contain enough to answer, say so.$language_rule

---Response format---
Reply with one JSON object and nothing else:
{"answer": "<the final answer, in Markdown>"}"""
)

REDUCE_USER = Template(format_prompt_sections("$query", "$content"))

RAG_SYSTEM = Template(
    """---Role---
You are a helpful assistant answering a question about a corpus, using only the source text \
excerpts in the data section below: the passages of the corpus most relevant to the question, \
most relevant first. Each excerpt starts with its source id.

---Goal---
Answer the question from the excerpts.
- Keep what is relevant and supported; say only what the excerpts support.
- Cite the source ids behind each point as [Sources: id, id].
- If the excerpts do not contain enough to answer, say so.$language_rule

---Response format---
Reply with one JSON object and nothing else:
{"answer": "<the answer, in Markdown>"}"""
)
"""The one call of naive RAG (the ``vector`` method, evaluation spec section 7): the question
and the chunks most relevant to it."""

RAG_USER = Template(format_prompt_sections("$query", "$content"))

_UNIT_WORDS: dict[str, dict[str, str]] = {
    "community": {
        "material": "community reports",
        "part": "report part",
        "id_name": "community id",
        "id_names": "community ids",
        "reduce_material": "community reports",
        "citation": "[Communities: id, id]",
    },
    "source": {
        "material": "source text excerpts",
        "part": "excerpt part",
        "id_name": "source id",
        "id_names": "source ids",
        "reduce_material": "source text",
        "citation": "[Sources: id, id]",
    },
    "evidence": {
        "material": "claims and source text excerpts found relevant to the question, grouped by community,",
        "part": "evidence part",
        "id_name": "community id, and each claim and excerpt its source id",
        "id_names": "community ids and source ids",
        "reduce_material": "source text found relevant to the question, grouped by community",
        "citation": "[Communities: id, id] [Sources: id, id]",
        "map_citation": "\n- Cite the community id and the source ids behind each point as [Communities: id] [Sources: id, id].",
    },
}
"""What the map and reduce prompts call a run's units (``community``, ``source`` for the ``text``
method, ``evidence`` for the ``lazy`` method): the community wording is the spec's prompt, word
for word (its ``map_citation`` is empty: the spec's map prompt asks for no citation)."""


def _unit_words(unit: Unit) -> dict[str, str]:
    return {"map_citation": "", **_UNIT_WORDS[unit]}

RATE_SYSTEM = Template(
    """---Role---
You are a helpful assistant deciding whether one community report of a corpus is useful for \
answering a question, even if it is only partly relevant.

---Goal---
Rate how relevant the report in the data section below is to the question, from 0 to 5:
- 0: not relevant at all; 1: barely relevant; 3: partly relevant; 5: highly relevant, it \
speaks directly to the question.
- A report that covers a broad area which includes the question's subject is relevant: more \
specific reports below it will be read next.
- Judge only from the report; do not make anything up.

---Response format---
Reply with one JSON object and nothing else:
{"reason": "<one sentence on why>", "rating": <an integer from 0 to 5>}"""
)

RATE_USER = Template(format_prompt_sections("$query", "[Community ID: $community_id]\n$summary"))
RATE_USER_DATA_FIRST = Template(format_prompt_sections("$query", "[Community ID: $community_id]\n$summary", data_first=True))

EXPAND_SYSTEM = Template(
    """---Role---
You help search a corpus by breaking a question into the few subqueries its answer needs.

---Goal---
Write from 1 to $most subqueries for the question below, each a short question of its own, in the \
question's language, asking for one part of what the answer needs. A question that asks for one \
thing is its own only subquery.

---Response format---
Reply with one JSON object and nothing else:
{"subqueries": ["<subquery>", "<subquery>"]}"""
)
"""The lazy method's query expansion (docs/lazy-search.md): the question into subqueries."""

EXPAND_USER = Template(f"{QUESTION_MARKER}\n$query")

RELEVANCE_SYSTEM = Template(
    """---Role---
You test source text excerpts of a corpus for relevance to a question.

---Goal---
For each excerpt in the data section below (each starts with its source id), decide whether it \
says something that helps answer the question, and list the claims it makes that do.
- relevant is true when the excerpt holds information the answer needs, even in part; else false.
- claims are short, self-contained statements of what the excerpt says that helps answer the \
question, in the excerpt's language; none when it is not relevant.
- Judge only from the excerpt; do not make anything up. Answer every excerpt once, by its source id.

---Response format---
Reply with one JSON object and nothing else:
{"tests": [{"source_id": "<source id>", "relevant": true, "claims": ["<claim>"]}]}"""
)
"""One relevance test of the lazy method (docs/lazy-search.md): a few source chunks, one subquery."""

RELEVANCE_USER = Template(format_prompt_sections("$query", "$content"))

COMMUNITY_SUMMARY_SYSTEM = Template(
    """---Role---
You write short, factual summaries of a community of related terms from a knowledge graph.

---Goal---
Write a title (at most eight words) and a summary (three to five sentences) of the community \
described below, using only what the data says.$language_rule

---Response format---
Reply with one JSON object and nothing else:
{"title": "<title>", "summary": "<summary>"}"""
)

COMMUNITY_SUMMARY_USER = Template(
    """---Data---
$content"""
)

JUDGE_SYSTEM = Template(
    """---Role---
You are a fair judge comparing two answers to the same question about a corpus.

---Goal---
Decide which answer is better on the one criterion given, and only on it. The order in which \
the answers are shown says nothing about their quality. Length alone is not quality.
- winner is 1 when the first answer is better, 2 when the second is, 0 when they are equally good.
- reason is one or two sentences saying why.

---Response format---
Reply with one JSON object and nothing else:
{"winner": <1, 2 or 0>, "reason": "<why>"}"""
)

JUDGE_USER = Template(
    """---Question---
$question

$criterion_marker
The better answer $description.

$first_marker
$first
$second_marker
$second"""
)

CLAIMS_SYSTEM = Template(
    """---Role---
You list the factual claims an answer makes.

---Goal---
List every distinct factual claim of the answer below as a short, self-contained statement, \
in the answer's language. Leave out opinions, questions and statements about the answer itself.

---Response format---
Reply with one JSON object and nothing else:
{"claims": ["<claim>", "<claim>"]}"""
)

CLAIMS_USER = Template(
    """---Answer---
$answer"""
)

QUESTIONS_SYSTEM = Template(
    """---Role---
You help build a benchmark of global questions about a corpus: questions that need an \
understanding of the whole corpus, not a fact from one passage.

---Goal---
$goal

---Response format---
Reply with one JSON object and nothing else:
{"$key": ["<item>", "<item>"]}"""
)

QUESTIONS_USER = Template(
    """---Step---
$step

---Persona---
$persona

---Task---
$task

---Data---
$description"""
)

QUESTION_GOALS = {
    "personas": "Given the description of the corpus below, name $count different kinds of users who would "
    "read it, each in one sentence saying who they are and why they read it.",
    "tasks": "For the user described below, list $count different tasks they would use the corpus for, "
    "each in one sentence.",
    "questions": "For the user and the task below, write $count questions that need an understanding of the "
    "whole corpus to answer (themes, comparisons, trends), in the corpus's language, each ending with a question mark.",
}

SUPPORT_SYSTEM = Template(
    """---Role---
You check whether the texts an answer cites support what the answer says.

---Goal---
For each numbered point under ---Points---, read only the texts its header says it cites \
(their headers are under ---Texts---) and decide:
- "supported": the cited texts say everything the point says;
- "partial": they say part of it, or something close to it but not all of it;
- "unsupported": they do not say it, or they say something else.
Back each verdict with quotes: words copied exactly, in order, from one cited text, with the \
kind and the id its header gives. A supported or partial point needs at least one quote. Use \
nothing beyond the texts, and give every point one entry.

---Response format---
Reply with one JSON object and nothing else:
{"points": [{"point": <number>, "verdict": "<supported, partial or unsupported>", "evidence": \
[{"kind": "<summary, claim or chunk>", "id": "<the text's id>", "quote": "<words copied from the text>"}], \
"reason": "<one sentence>"}]}"""
)

CRITERION_MARKER = "[Criterion: $name]"
ANSWER_1_MARKER = "[Answer 1]"
ANSWER_2_MARKER = "[Answer 2]"
STEP_MARKER = "---Step---"
PERSONA_MARKER = "---Persona---"
TASK_MARKER = "---Task---"
ANSWER_MARKER = "---Answer---"


LANGUAGE_RULE = Template("\n- Write in $language, the language of the corpus, whatever the language of the question.")
"""The line the map, reduce, naive RAG and summary prompts end their goal with on a corpus that
is not in English (an English corpus's prompts are the spec's, word for word)."""
_LANGUAGE_RULE_RE = re.compile(r"^- Write in (?P<name>[A-Z][a-z]+), the language of the corpus,", re.MULTILINE)


def language_rule(language: Language | None) -> str:
    """The prompts' line asking for ``language`` (the corpus's): ``""`` for English or unknown."""
    return "" if language in (None, "en") else LANGUAGE_RULE.substitute(language=LANGUAGE_NAMES[language])


def requested_language(system: str) -> Language | None:
    """The language a prompt's system message asks the answer to be in (:func:`language_rule`
    read back), else ``None``."""
    match = _LANGUAGE_RULE_RE.search(system)
    return next((code for code, name in LANGUAGE_NAMES.items() if match and name == match.group("name")), None)


PROMPT_PLACEHOLDERS: tuple[str, ...] = tuple(
    dict.fromkeys(
        re.findall(
            r'"(<[^"<>]+>)"',
            "\n".join(
                t.template
                for t in (
                    MAP_SYSTEM, REDUCE_SYSTEM, RATE_SYSTEM, COMMUNITY_SUMMARY_SYSTEM, JUDGE_SYSTEM, CLAIMS_SYSTEM, QUESTIONS_SYSTEM,
                    SUPPORT_SYSTEM, EXPAND_SYSTEM, RELEVANCE_SYSTEM,
                )
            ),
        )
    )
)
"""The placeholders of the prompts' response formats (``<why>``): a reply that copies one
instead of filling it in is refused (``graphrag_core.parsing``)."""


RETRY_FEEDBACK = Template(
    """

---Your previous reply---
$reply

---What was wrong with it---
$error
Reply again with one JSON object and nothing else, matching this JSON Schema:
$shape"""
)


CUT_RETRY_FEEDBACK = Template(
    """

---Your previous reply---
It was cut off at $limit, before its JSON object was complete.

---What to do---
Reply again with a shorter answer: keep only the most important points, in fewer words, and
close the JSON object. Reply with one JSON object and nothing else, matching this JSON Schema:
$shape"""
)


QUESTION_OUTPUT_SCHEMAS = {step: strict_object(f"generated_{step}", {step: STRING_LIST}) for step in QUESTION_GOALS}
"""The shape of each question-generation step's reply (evaluation spec section 5), by step:
a list of strings under the step's own key."""

RETRY_REPLY_EXCERPT = 2000
"""How much of an unusable reply is shown back to the model when asking again."""



def _map_system(unit: Unit, language: Language | None) -> str:
    return MAP_SYSTEM.substitute(_unit_words(unit), language_rule=language_rule(language))


def render_map_messages(query: str, content: str, *, unit: Unit = COMMUNITY, data_first: bool = False, language: Language | None = None) -> tuple[ChatMessage, ...]:
    """The map call for one batch: the system instructions and the question with the batch
    (``unit`` says what the batch's parts are: community reports or source text excerpts);
    with ``data_first`` (a question reserve is set) the batch comes before the question, so the
    prompts of every question over the same batch share everything up to the question.
    ``language`` is the corpus's (:func:`language_rule`)."""
    user = (MAP_USER_DATA_FIRST if data_first else MAP_USER).substitute(query=query, content=content)
    return (ChatMessage(role="system", content=_map_system(unit, language)), ChatMessage(role="user", content=user))


def render_reduce_messages(query: str, content: str, *, unit: Unit = COMMUNITY, language: Language | None = None) -> tuple[ChatMessage, ...]:
    """The reduce call: the system instructions and the question with the ranked answers."""
    return (
        ChatMessage(role="system", content=REDUCE_SYSTEM.substitute(_unit_words(unit), language_rule=language_rule(language))),
        ChatMessage(role="user", content=REDUCE_USER.substitute(query=query, content=content)),
    )


def render_rag_messages(query: str, content: str, *, language: Language | None = None) -> tuple[ChatMessage, ...]:
    """Naive RAG's one call: the system instructions and the question with the ranked excerpts."""
    return (
        ChatMessage(role="system", content=RAG_SYSTEM.substitute(language_rule=language_rule(language))),
        ChatMessage(role="user", content=RAG_USER.substitute(query=query, content=content)),
    )


def render_rating_messages(query: str, community_id: str, summary: str, *, data_first: bool = False) -> tuple[ChatMessage, ...]:
    """The rating call of dynamic selection: one community's id, on a line of its own, then its
    summary; the question before them, or after them with ``data_first`` (as the map's)."""
    user = (RATE_USER_DATA_FIRST if data_first else RATE_USER).substitute(query=query, community_id=community_id, summary=summary)
    return (ChatMessage(role="system", content=RATE_SYSTEM.substitute()), ChatMessage(role="user", content=user))


def render_expansion_messages(query: str, *, most: int) -> tuple[ChatMessage, ...]:
    """The lazy method's query expansion: the question into at most ``most`` subqueries."""
    return (
        ChatMessage(role="system", content=EXPAND_SYSTEM.substitute(most=most)),
        ChatMessage(role="user", content=EXPAND_USER.substitute(query=query)),
    )


def render_relevance_messages(subquery: str, content: str) -> tuple[ChatMessage, ...]:
    """One relevance test of the lazy method: the subquery, then the source chunks to test
    (each under its ``[Source ID: ref]`` header)."""
    return (
        ChatMessage(role="system", content=RELEVANCE_SYSTEM.substitute()),
        ChatMessage(role="user", content=RELEVANCE_USER.substitute(query=subquery, content=content)),
    )


def render_retry_request(request: ChatRequest, reply: str, error: str) -> ChatRequest:
    """``request`` again, its system message followed by the unusable reply and what was wrong.

    A model at temperature 0 answers an identical request identically, so a retry must say
    what to change: the error and the expected shape (the request's output schema). The other
    messages stay as they were (the question and data remain the last message)."""
    schema = request.output_schema.schema_ if request.output_schema is not None else {"type": "object"}
    feedback = RETRY_FEEDBACK.substitute(
        reply=reply[:RETRY_REPLY_EXCERPT], error=error, shape=json.dumps(schema, ensure_ascii=False)
    )
    return _with_feedback(request, feedback)


def render_cut_retry_request(request: ChatRequest, *, cut_at: int | None, max_tokens: int | None) -> ChatRequest:
    """``request`` again after its reply was cut at ``cut_at`` tokens: its system message asks
    for a shorter answer (the cut reply is not sent back: it would only take room), and the
    output reserve becomes ``max_tokens``."""
    schema = request.output_schema.schema_ if request.output_schema is not None else {"type": "object"}
    limit = f"the limit of {cut_at:,} tokens" if cut_at else "the model's output limit"
    feedback = CUT_RETRY_FEEDBACK.substitute(limit=limit, shape=json.dumps(schema, ensure_ascii=False))
    return _with_feedback(request, feedback).model_copy(update={"max_tokens": max_tokens})


def _with_feedback(request: ChatRequest, feedback: str) -> ChatRequest:
    """``request`` with ``feedback`` after its system message (or as one, when it has none)."""
    messages = list(request.messages)
    if messages and messages[0].role == "system":
        messages[0] = ChatMessage(role="system", content=messages[0].content + feedback)
    else:
        messages.insert(0, ChatMessage(role="system", content=feedback.lstrip()))
    return request.model_copy(update={"messages": tuple(messages)})


def render_community_summary_messages(content: str, *, language: Language | None = None) -> tuple[ChatMessage, ...]:
    """A call that asks a model to title and summarize one community (sample building)."""
    return (
        ChatMessage(role="system", content=COMMUNITY_SUMMARY_SYSTEM.substitute(language_rule=language_rule(language))),
        ChatMessage(role="user", content=COMMUNITY_SUMMARY_USER.substitute(content=content)),
    )


def render_judge_messages(question: str, criterion: str, description: str, first: str, second: str) -> tuple[ChatMessage, ...]:
    """One judge call: the question, the criterion and two answers in the order shown.

    ``[Criterion: name]``, ``[Answer 1]`` and ``[Answer 2]`` each stand on a line of their own;
    each answer starts on the line after its marker, and the second answer ends the prompt.
    """
    user = JUDGE_USER.substitute(
        question=question,
        criterion_marker=Template(CRITERION_MARKER).substitute(name=criterion),
        description=description,
        first_marker=ANSWER_1_MARKER,
        first=first,
        second_marker=ANSWER_2_MARKER,
        second=second,
    )
    return (ChatMessage(role="system", content=JUDGE_SYSTEM.substitute()), ChatMessage(role="user", content=user))


def render_support_messages(texts: Sequence[tuple[str, str]], points: Sequence[tuple[str, str]]) -> tuple[ChatMessage, ...]:
    """One support check call: the cited texts and the points, each under its header
    (:func:`~graphrag_core.context.format_support_prompt`)."""
    return (
        ChatMessage(role="system", content=SUPPORT_SYSTEM.substitute()),
        ChatMessage(role="user", content=format_support_prompt(texts, points)),
    )


def render_claims_messages(answer: str) -> tuple[ChatMessage, ...]:
    """A call that lists the factual claims of one answer."""
    return (
        ChatMessage(role="system", content=CLAIMS_SYSTEM.substitute()),
        ChatMessage(role="user", content=CLAIMS_USER.substitute(answer=answer)),
    )


def render_question_messages(step: str, description: str, count: int, *, persona: str = "", task: str = "") -> tuple[ChatMessage, ...]:
    """One question-generation call; ``step`` is ``personas``, ``tasks`` or ``questions`` (the reply's key)."""
    goal = Template(QUESTION_GOALS[step]).substitute(count=count)
    return (
        ChatMessage(role="system", content=QUESTIONS_SYSTEM.substitute(goal=goal, key=step)),
        ChatMessage(role="user", content=QUESTIONS_USER.substitute(step=step, persona=persona, task=task, description=description)),
    )


def _skeleton(messages: tuple[ChatMessage, ...]) -> str:
    return "\n".join(m.content for m in messages)


def map_prompt_skeleton(query: str, *, unit: Unit = COMMUNITY, language: Language | None = None) -> str:
    """The whole map prompt with the query filled in and the content empty."""
    return _skeleton(render_map_messages(query, "", unit=unit, language=language))


def map_prompt_head(*, unit: Unit = COMMUNITY, language: Language | None = None) -> str:
    """The data-first map prompt up to its data: the prompt sent for a batch is this, a newline,
    the batch's content and :func:`~graphrag_core.context.question_tail` of the question, so
    the head and the content are the same for every question (what a provider caches)."""
    return _map_system(unit, language) + "\n" + DATA_MARKER


def reduce_prompt_skeleton(query: str, *, unit: Unit = COMMUNITY, language: Language | None = None) -> str:
    """The whole reduce prompt with the query filled in and the content empty."""
    return _skeleton(render_reduce_messages(query, "", unit=unit, language=language))


def rag_prompt_skeleton(query: str, *, language: Language | None = None) -> str:
    """The whole naive RAG prompt with the query filled in and the excerpts empty."""
    return _skeleton(render_rag_messages(query, "", language=language))


__all__ = [
    "CLAIMS_OUTPUT_SCHEMA",
    "COMMUNITY_SUMMARY_OUTPUT_SCHEMA",
    "DATA_MARKER",
    "EXPANSION_OUTPUT_SCHEMA",
    "JUDGE_OUTPUT_SCHEMA",
    "MAP_OUTPUT_SCHEMA",
    "QUESTION_OUTPUT_SCHEMAS",
    "RATING_OUTPUT_SCHEMA",
    "LANGUAGE_RULE",
    "RELEVANCE_OUTPUT_SCHEMA",
    "REDUCE_OUTPUT_SCHEMA",
    "SUPPORT_OUTPUT_SCHEMA",
    "QUESTION_MARKER",
    "language_rule",
    "map_prompt_head",
    "map_prompt_skeleton",
    "question_tail",
    "rag_prompt_skeleton",
    "reduce_prompt_skeleton",
    "render_community_summary_messages",
    "render_expansion_messages",
    "render_relevance_messages",
    "render_map_messages",
    "render_rag_messages",
    "render_reduce_messages",
    "render_support_messages",
    "requested_language",
    "split_prompt_sections",
]
