"""Question sets: reading them from JSON Lines or CSV, and generating them (spec sections 3 and 5).

Every error about a file names it as the user gave it and the physical line, from 1 (a CSV's
header is line 1): ``{file}:{line}: question must not be empty.``
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import EvaluationError, QuestionsOutputError
from ..inputs import unicode_problem
from ..llm.base import ChatModel, ChatRequest
from ..retry import CallFailed, complete_with_retry
from ..models import Index
from ..parsing import invalid_output, parse_json_output
from ..prompts import QUESTION_OUTPUT_SCHEMAS, render_question_messages
from ..tokens import estimate_tokens
from ..wording import counted

DESCRIPTION_TOKEN_LIMIT = 3000
"""How much of the root summaries describes the corpus to the question generator."""
QUESTIONS_OUTPUT_RESERVE = 1024
TAG_SEPARATOR = ";"
"""How a CSV's ``tags`` cell separates tags."""


class EvalQuestion(BaseModel):
    """One question of a set; ``tags`` are free labels (generated questions carry ``persona`` and ``task``)."""

    model_config = ConfigDict(frozen=True)

    id: str
    question: str
    tags: dict[str, str] = Field(default_factory=dict)


def _tags(value: Any, where: str) -> dict[str, str]:
    if value is None or value == "":
        return {}
    if isinstance(value, dict) and all(isinstance(v, str | int | float) for v in value.values()):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return {v: "" for v in value}
    if isinstance(value, str):
        return {t.strip(): "" for t in value.split(TAG_SEPARATOR) if t.strip()}
    raise EvaluationError(f"{where}: tags must be a list of strings or an object of strings.")


def _question(value: Any, where: str) -> str:
    if value is None:
        raise EvaluationError(f"{where}: question must not be empty.")
    if not isinstance(value, str):
        raise EvaluationError(f"{where}: question must be a string.")
    if not value.strip():
        raise EvaluationError(f"{where}: question must not be empty.")
    if problem := unicode_problem(value):
        raise EvaluationError(f"{where}: the question is {problem}.")
    return value.strip()


def _finish(rows: list[tuple[int, Any, str, dict[str, str]]], file: str) -> list[EvalQuestion]:
    if not rows:
        raise EvaluationError(f"{file}: the question set has no questions.")
    seen: set[str] = set()
    questions: list[EvalQuestion] = []
    for n, (line, given_id, text, tags) in enumerate(rows, start=1):
        qid = str(given_id).strip() if given_id not in (None, "") else f"q{n}"
        for what, value in (("id", qid), *((f"tag {key!r}", f"{key}{tag}") for key, tag in tags.items())):
            if problem := unicode_problem(value):
                raise EvaluationError(f"{file}:{line}: the {what} is {problem}.")
        if qid in seen:
            raise EvaluationError(f"{file}:{line}: duplicate question id {qid}.")
        seen.add(qid)
        questions.append(EvalQuestion(id=qid, question=text, tags=tags))
    return questions


def parse_questions_jsonl(text: str, file: str) -> list[EvalQuestion]:
    """Questions from JSON Lines text; blank lines are skipped."""
    rows: list[tuple[int, Any, str, dict[str, str]]] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{file}:{line_no}"
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise EvaluationError(f"{where}: not valid JSON: {exc}.") from None
        if not isinstance(value, dict):
            raise EvaluationError(f"{where}: each line must be a JSON object with a question.")
        rows.append((line_no, value.get("id"), _question(value.get("question"), where), _tags(value.get("tags"), where)))
    return _finish(rows, file)


def parse_questions_csv(text: str, file: str) -> list[EvalQuestion]:
    """Questions from CSV text with a ``question`` column (``id`` and ``tags`` optional)."""
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise EvaluationError(f"{file}: the question set has no questions.") from None
    if "question" not in header:
        raise EvaluationError(f"{file}:1: the CSV needs a question column.")
    rows: list[tuple[int, Any, str, dict[str, str]]] = []
    last_line = reader.line_num
    for cells in reader:
        line_no, last_line = last_line + 1, reader.line_num
        if not cells:  # an empty physical line; a row of empty cells is a blank question
            continue
        record = dict(zip(header, cells))
        where = f"{file}:{line_no}"
        rows.append((line_no, record.get("id"), _question(record.get("question", ""), where), _tags(record.get("tags"), where)))
    return _finish(rows, file)


def parse_questions(text: str, file: str, *, fmt: str | None = None) -> list[EvalQuestion]:
    """Questions from text; ``fmt`` is ``jsonl`` or ``csv``, else read from ``file``'s suffix."""
    fmt = fmt or Path(file).suffix.lower().lstrip(".")
    if fmt in ("jsonl", "json", "ndjson"):
        return parse_questions_jsonl(text, file)
    if fmt == "csv":
        return parse_questions_csv(text, file)
    raise EvaluationError(f"{file}: a question set must be a .jsonl or .csv file.")


def load_questions(path: str | Path) -> list[EvalQuestion]:
    """The question set in a JSON Lines or CSV file (see :func:`parse_questions`)."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise EvaluationError(f"{file}: cannot read the question set: {exc.strerror or exc}") from None
    return parse_questions(text, file)




def bundled_question_set(sample: str) -> Path | None:
    """The question set bundled with a sample index (``{name}-questions.jsonl`` beside its folder)."""
    from ..samples import SAMPLE_DATA

    path = SAMPLE_DATA / f"{sample}-questions.jsonl"
    return path if path.is_file() else None


def questions_to_jsonl(questions: Sequence[EvalQuestion]) -> str:
    return "".join(json.dumps(q.model_dump(), ensure_ascii=False) + "\n" for q in questions)


# -- generation ---------------------------------------------------------------------------------


def corpus_description(index: Index, *, token_limit: int = DESCRIPTION_TOKEN_LIMIT) -> str:
    """The root communities' titles and summaries, as much as fits in ``token_limit`` tokens."""
    roots = [c for c in index.communities if c.parent_id is None] or list(index.communities)
    parts: list[str] = []
    used = 0
    for community in roots:
        text = f"{community.title}: {community.summary.strip()}" if community.title else community.summary.strip()
        if not text.strip():
            continue
        cost = estimate_tokens(text)
        if parts and used + cost > token_limit:
            break
        parts.append(text)
        used += cost
    return "\n\n".join(parts)


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EvaluationError(f"{name} must be a positive integer.")
    return value


def parse_string_list(raw: str, key: str) -> list[str]:
    """The non-blank strings of ``key`` in a JSON object reply (stripped, duplicates dropped)."""
    value = parse_json_output(raw, error=QuestionsOutputError)
    items = value.get(key) if isinstance(value, dict) else None
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise invalid_output(QuestionsOutputError, f"Question generation output must contain a list of strings {key}.", raw)
    return list(dict.fromkeys(i.strip() for i in items if i.strip()))


async def _ask_list(model: ChatModel, step: str, description: str, count: int, *, persona: str = "", task: str = "") -> list[str]:
    request = ChatRequest(
        purpose="questions",
        messages=render_question_messages(step, description, count, persona=persona, task=task),
        max_tokens=QUESTIONS_OUTPUT_RESERVE,
        output_schema=QUESTION_OUTPUT_SCHEMAS[step],
    )

    try:
        reply = await complete_with_retry(model, request, lambda text: parse_string_list(text, step))
    except CallFailed as failed:
        raise failed.error from None
    return reply.value[:count]


class QuestionCounts(BaseModel):
    """How many questions a generation asked for and kept, and where the rest went: the model
    proposed fewer personas, tasks or questions than asked (each missing persona or task takes
    its questions with it), or proposed the same question twice.

    Invariant: ``asked == kept + duplicates + short_questions + short_tasks * per_task +
    short_personas * tasks * per_task``."""

    model_config = ConfigDict(frozen=True)

    personas: int
    tasks: int
    per_task: int
    personas_proposed: int
    tasks_proposed: int
    questions_proposed: int
    kept: int

    @property
    def asked(self) -> int:
        return self.personas * self.tasks * self.per_task

    @property
    def short_personas(self) -> int:
        return self.personas - self.personas_proposed

    @property
    def short_tasks(self) -> int:
        """Tasks missing for the personas proposed."""
        return self.personas_proposed * self.tasks - self.tasks_proposed

    @property
    def short_questions(self) -> int:
        """Questions missing for the tasks proposed."""
        return self.tasks_proposed * self.per_task - self.questions_proposed

    @property
    def duplicates(self) -> int:
        return self.questions_proposed - self.kept

    def reasons(self) -> list[str]:
        """Why fewer than ``asked`` were kept, one phrase per cause (empty when all were kept)."""
        reasons = []
        if self.short_personas:
            reasons.append(
                f"the model proposed {self.personas_proposed} of {counted(self.personas, 'persona')}, "
                f"so {counted(self.short_personas * self.tasks * self.per_task, 'question')} were never asked"
            )
        if self.short_tasks:
            reasons.append(
                f"it proposed {self.tasks_proposed} of {counted(self.personas_proposed * self.tasks, 'task')} for those personas, "
                f"so {counted(self.short_tasks * self.per_task, 'question')} were never asked"
            )
        if self.short_questions:
            reasons.append(f"it proposed {self.questions_proposed} of the {counted(self.tasks_proposed * self.per_task, 'question')} asked for those tasks")
        if self.duplicates:
            reasons.append(f"{counted(self.duplicates, 'question')} repeated another and {'was' if self.duplicates == 1 else 'were'} dropped")
        return reasons

    def summary(self) -> str:
        """``asked for 125 questions (5 personas × 5 tasks × 5 per task), kept 68: ...``."""
        head = (
            f"asked for {counted(self.asked, 'question')} ({counted(self.personas, 'persona')} × {counted(self.tasks, 'task')} × "
            f"{self.per_task} per task), kept {self.kept:,}"
        )
        reasons = self.reasons()
        return head + (": " + "; ".join(reasons) if reasons else "")


class QuestionSet(list[EvalQuestion]):
    """Generated questions: a list of :class:`EvalQuestion`, with how many were asked for and
    kept, and why the rest were not (``counts``)."""

    def __init__(self, questions: Sequence[EvalQuestion], counts: QuestionCounts) -> None:
        super().__init__(questions)
        self.counts = counts


async def generate_questions(index: Index, model: ChatModel, personas: int = 5, tasks: int = 5, per_task: int = 5) -> QuestionSet:
    """Global questions for ``index``, the paper's way: personas from a description of the corpus
    (its root summaries), tasks per persona, questions per task.

    Each question keeps its persona and task as tags. At most ``personas * tasks * per_task``
    questions, duplicates dropped; the set's ``counts`` say how many were kept of those asked
    for, and why the rest were not (:class:`QuestionCounts`). A step whose reply fails twice
    raises its error.
    """
    personas, tasks, per_task = _positive("personas", personas), _positive("tasks", tasks), _positive("per_task", per_task)
    description = corpus_description(index)
    if not description.strip():
        raise EvaluationError("The index has no community summaries to describe the corpus with.")
    persona_list = await _ask_list(model, "personas", description, personas)
    task_lists = await asyncio.gather(*(_ask_list(model, "tasks", description, tasks, persona=p) for p in persona_list))
    pairs = [(p, t) for p, ts in zip(persona_list, task_lists) for t in ts]
    question_lists = await asyncio.gather(
        *(_ask_list(model, "questions", description, per_task, persona=p, task=t) for p, t in pairs)
    )
    questions: list[EvalQuestion] = []
    seen: set[str] = set()
    for (persona, task), texts in zip(pairs, question_lists):
        for text in texts:
            if text in seen:
                continue
            seen.add(text)
            questions.append(EvalQuestion(id=f"g{len(questions) + 1}", question=text, tags={"persona": persona, "task": task}))
    counts = QuestionCounts(
        personas=personas,
        tasks=tasks,
        per_task=per_task,
        personas_proposed=len(persona_list),
        tasks_proposed=len(pairs),
        questions_proposed=sum(len(texts) for texts in question_lists),
        kept=len(questions),
    )
    return QuestionSet(questions, counts)


__all__ = [
    "EvalQuestion",
    "QuestionCounts",
    "QuestionSet",
    "bundled_question_set",
    "corpus_description",
    "generate_questions",
    "load_questions",
    "parse_questions",
    "parse_questions_csv",
    "parse_questions_jsonl",
    "questions_to_jsonl",
]
