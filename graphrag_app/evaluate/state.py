"""Evaluate's state in this browser session (the experiment page and the judging screen), and
its widgets (each named once, by its key)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from graphrag_core.evaluation import ExperimentResult
from graphrag_core.evaluation.questions import EvalQuestion

from ..jobs import EvalJob, QuestionsJob
from ..session import PageState, Widget


@dataclass
class EvaluateState(PageState):
    """Evaluate: the experiment and the question generation in flight, the result shown, the
    generated questions, the cached estimate, and the last failures."""

    KEY: ClassVar[str] = "evaluate_page"

    job: EvalJob | None = None
    questions_job: QuestionsJob | None = None
    result: ExperimentResult | None = None
    generated: list[EvalQuestion] | None = None
    estimate: tuple[tuple[str, str], Any] | None = None
    """The estimate of the last spec, keyed by (index, spec as JSON)."""
    error: str | None = None
    questions_error: str | None = None


@dataclass
class JudgingState(PageState):
    """Evaluate's judging screen: the experiment being judged (read once from the store) and the
    name this browser session judges under (None until it is given)."""

    KEY: ClassVar[str] = "judging_page"

    experiment: ExperimentResult | None = None
    name: str | None = None
    notice: str | None = None
    """What the last action left to say (a refused name, skipped pairs brought back), once."""


INDEX, FOLDER = Widget[str]("eval_index", ""), Widget[str]("eval_folder", "")
SOURCE, UPLOAD = Widget[str]("eval_source"), Widget[object]("eval_upload")
CONDITIONS, SEEDS = Widget[str]("eval_conditions", ""), Widget[str]("eval_seeds", "")
CRITERIA, REPEATS = Widget[list[str]]("eval_criteria", make=list), Widget[int]("eval_repeats", 1)
MODEL, JUDGE, CLAIMS = Widget[str]("eval_model", "offline"), Widget[str]("eval_judge", "offline"), Widget[bool]("eval_claims", False)
PERSONAS, TASKS, PER_TASK = Widget[int]("eval_personas", 3), Widget[int]("eval_tasks", 2), Widget[int]("eval_per_task", 2)
PRESET_KEY = "eval_preset_paper"
LAZY_PRESET_KEY = "eval_preset_lazy"
JUDGE_NAME = Widget[str]("judge_name_input", "")
"""The name a person types on the judging screen."""


__all__ = [
    "CLAIMS",
    "CONDITIONS",
    "CRITERIA",
    "FOLDER",
    "INDEX",
    "JUDGE",
    "JUDGE_NAME",
    "MODEL",
    "PERSONAS",
    "PER_TASK",
    "LAZY_PRESET_KEY",
    "PRESET_KEY",
    "REPEATS",
    "SEEDS",
    "SOURCE",
    "TASKS",
    "UPLOAD",
    "EvaluateState",
    "JudgingState",
]
