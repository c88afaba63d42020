"""What an experiment runs: questions x conditions x seeds, and how to judge (evaluation spec section 3).

Invariants of :class:`ExperimentSpec`: at least one question; condition names unique; seeds a
non-empty list of distinct integers (typed text such as ``"1, 2"`` is read by
:func:`~graphrag_core.inputs.parse_ints`, as every front end reads a typed list); two
conditions, or one condition with two seeds and the A/A check; every refusal is an
:class:`~graphrag_core.errors.EvaluationError`.
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from ..errors import EvaluationError
from ..inputs import InputError, parse_ints
from .claims import DEFAULT_CLAIM_THRESHOLD, validate_threshold
from .conditions import Condition
from .judge import DEFAULT_CRITERIA, validate_criteria, validate_repeats
from .questions import EvalQuestion

SEEDS_WHAT = "Seeds"
"""How a refusal of typed seeds names them (``Seeds: 'x' is not a whole number.``)."""


class JudgmentJob(NamedTuple):
    """One pair to judge: ``row``'s answer (A, with ``seed_a``) against ``col``'s (B, with ``seed_b``)."""

    row: str
    col: str
    question_id: str
    seed_a: int
    seed_b: int


def parse_seeds(seeds: Any) -> list[int]:
    """Seeds as given: a list, or typed text (``"1, 2 3"``) read by :func:`~graphrag_core.inputs.parse_ints`."""
    if not isinstance(seeds, str):
        return seeds
    try:
        return parse_ints(seeds, what=SEEDS_WHAT)
    except InputError as exc:
        raise EvaluationError(str(exc)) from None


class ExperimentSpec(BaseModel):
    """What to run: questions x conditions x seeds, and how to judge."""

    model_config = ConfigDict(frozen=True)

    questions: list[EvalQuestion]
    conditions: list[Condition]
    seeds: list[int] = Field(default_factory=lambda: [0])
    criteria: tuple[str, ...] = DEFAULT_CRITERIA
    repeats: int = 1
    include_aa: bool = True
    claims: bool = False
    claim_threshold: float = DEFAULT_CLAIM_THRESHOLD

    def __init__(self, /, **data: Any) -> None:
        if not data.get("questions"):
            raise EvaluationError("An experiment needs at least one question.")
        conditions = data.get("conditions") or []
        if not conditions:
            raise EvaluationError("An experiment needs at least one condition.")
        names = [c.name if isinstance(c, Condition) else dict(c).get("name") for c in conditions]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise EvaluationError(f"Condition names must be unique: {', '.join(map(str, duplicates))}.")
        seeds = data["seeds"] = parse_seeds(data.get("seeds", [0]))
        if not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
            raise EvaluationError("seeds must be a non-empty list of integers.")
        if len(set(seeds)) != len(seeds):
            raise EvaluationError("seeds must not repeat.")
        data["criteria"] = validate_criteria(data.get("criteria"))
        data["repeats"] = validate_repeats(data.get("repeats", 1))
        data["claim_threshold"] = validate_threshold(data.get("claim_threshold", DEFAULT_CLAIM_THRESHOLD))
        if len(conditions) < 2 and not (data.get("include_aa", True) and len(seeds) >= 2):
            raise EvaluationError("An experiment needs two conditions, or one condition with two seeds (A/A).")
        super().__init__(**data)

    def pairs(self) -> list[tuple[str, str]]:
        """Every pair of distinct conditions, in the order given (the earlier one as A)."""
        names = [c.name for c in self.conditions]
        return list(itertools.combinations(names, 2))

    def seed_pairs(self) -> list[tuple[int, int]]:
        """The A/A pairs of seeds (seed k against seed k+1); none without the A/A check."""
        return list(zip(self.seeds, self.seeds[1:])) if self.include_aa else []

    def condition(self, name: str) -> Condition:
        return next(c for c in self.conditions if c.name == name)

    def answer_count(self) -> int:
        """Every condition answers every question once per seed."""
        return len(self.conditions) * len(self.questions) * len(self.seeds)

    def judgment_jobs(self) -> list[JudgmentJob]:
        """Every judgment, question by question: each pair of distinct conditions per seed, then
        each condition against itself per A/A pair of seeds."""
        jobs: list[JudgmentJob] = []
        for question in self.questions:
            for seed in self.seeds:
                jobs.extend(JudgmentJob(a, b, question.id, seed, seed) for a, b in self.pairs())
            for seed_a, seed_b in self.seed_pairs():
                jobs.extend(JudgmentJob(c.name, c.name, question.id, seed_a, seed_b) for c in self.conditions)
        return jobs


__all__ = ["ExperimentSpec", "JudgmentJob", "parse_seeds"]
