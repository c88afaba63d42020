"""What an experiment makes: answers, judgments, win rates, costs and claim summaries (pure models).

Invariants: every model is frozen; an :class:`AnswerRecord` is one condition's answer to one
question with one seed, failed or not; a :class:`JudgmentRecord` holds a judgment or says why
the pair was skipped, never both; win rates are the row's mean score against the column
(100 = always won, 50 = even).
"""

from __future__ import annotations

import time

from pydantic import BaseModel, ConfigDict, Field, computed_field

from ..status import RunStatus
from ..support.models import SupportCheck
from .judge import PairJudgment
from .questions import EvalQuestion
from .spec import ExperimentSpec


class AnswerCost(BaseModel):
    """What one answer cost: summaries read, map batches, and calls and prompt tokens per purpose
    (``prompt_tokens``: the engine's planned estimates, so a cached rerun costs the same), and the
    prompt and completion tokens the endpoint reported for the calls made (``reported_tokens``).

    ``units`` is what the answer read, as the paper's Table 2 counts it: community summaries
    (``global``), source chunks mapped (``text``) or packed into the prompt (``vector``).
    ``embedding_tokens`` are the embedding model's (a ``vector`` answer ranked by embeddings),
    kept apart from the chat model's prompt tokens: they are priced apart."""

    model_config = ConfigDict(frozen=True)

    summaries: int = 0
    batches: int = 0
    calls: dict[str, int] = Field(default_factory=dict)
    prompt_tokens: dict[str, int] = Field(default_factory=dict)
    units: int | None = None
    """None in answers kept before units were counted: their summaries stand in."""
    embedding_tokens: int = 0
    reported_tokens: int = 0
    cached_tokens: int = 0
    """The prompt tokens of ``reported_tokens`` the endpoint served from its prompt cache."""

    @property
    def total_prompt_tokens(self) -> int:
        return sum(self.prompt_tokens.values())




class SupportTally(BaseModel):
    """An answer's support check in counts (:class:`~graphrag_core.support.SupportCheck`): who
    judged, the points (sentences and bullets that cite something) and their verdicts, and how
    many the judge could not judge (``unsupported`` among them)."""

    model_config = ConfigDict(frozen=True)

    judge: str
    judged_by: str
    points: int = 0
    supported: int = 0
    partial: int = 0
    unsupported: int = 0
    unjudged: int = 0

    @classmethod
    def of(cls, check: SupportCheck) -> SupportTally:
        counts = check.counts()
        return cls(
            judge=check.judge, judged_by=check.judged_by, points=len(check.points), supported=counts["supported"],
            partial=counts["partial"], unsupported=counts["unsupported"], unjudged=check.unjudged,
        )


class SupportShare(BaseModel):
    """A condition's supported share: its answers' points pooled (``supported / points``, None
    when no point cites anything), over the answers checked (failed ones are not)."""

    model_config = ConfigDict(frozen=True)

    condition: str
    judge: str
    answers: int
    points: int
    supported: int
    partial: int
    unsupported: int
    unjudged: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def share(self) -> float | None:
        return self.supported / self.points if self.points else None


class AnswerRecord(BaseModel):
    """One condition's answer to one question with one seed, and what it cost.

    ``error`` says why a failed answer failed; ``claims`` are the answer's claims when they were
    asked for and listed, and ``claims_error`` says why they could not be listed (then ``claims``
    is ``None``)."""

    model_config = ConfigDict(frozen=True)

    condition: str
    question_id: str
    seed: int
    status: RunStatus
    answer: str = ""
    run_id: str | None = None
    cost: AnswerCost = Field(default_factory=AnswerCost)
    error: str | None = None
    error_detail: str | None = None
    """What lies behind ``error`` when it is a summary (a batch's own error, e.g. a timeout)."""
    claims: list[str] | None = None
    claims_error: str | None = None
    support: SupportTally | None = None
    """The answer's support check in counts (None: not checked, or failed)."""


class JudgmentRecord(BaseModel):
    """One judged pair: ``row`` (A) against ``col`` (B) on one question, with their seeds."""

    model_config = ConfigDict(frozen=True)

    row: str
    col: str
    question_id: str
    seed_a: int
    seed_b: int
    judgment: PairJudgment | None = None
    skipped: str | None = None

    @property
    def aa(self) -> bool:
        return self.row == self.col


class WinRate(BaseModel):
    """How often ``row`` beat ``col`` on a criterion: its mean score over their judgments."""

    model_config = ConfigDict(frozen=True)

    criterion: str
    row: str
    col: str
    win_rate: float | None
    judgments: int
    questions: int
    p_value: float | None = None
    p_holm: float | None = None


class ConditionCost(BaseModel):
    """A condition's mean cost per answer, and its prompt tokens as a share of the reference
    condition's (``share_of``): the ``text`` condition's when there is one, as the paper's
    Table 2 gives levels as a share of TS, else the most expensive condition's."""

    model_config = ConfigDict(frozen=True)

    condition: str
    answers: int
    failed: int
    summaries: float
    batches: float
    calls: dict[str, float]
    prompt_tokens: dict[str, float]
    total_prompt_tokens: float
    share: float | None
    method: str = "global"
    units: float | None = None
    """Mean units read per answer: summaries, or source chunks (see :class:`AnswerCost`); None in
    results made before units were counted (their summaries stand in: :attr:`units_read`)."""
    embedding_tokens: float = 0.0
    share_of: str | None = None
    """The condition ``share`` is relative to."""
    reported_tokens: float = 0.0
    """Mean prompt and completion tokens the endpoint reported per answer (calls made, not cached)."""
    cached_tokens: float = 0.0
    """Mean prompt tokens per answer the endpoint served from its prompt cache (part of ``reported_tokens``)."""
    unanswered: int = 0
    """Answers with no results (``no_results``)."""

    @property
    def units_read(self) -> float:
        return self.units if self.units is not None else self.summaries


class ClaimSummary(BaseModel):
    """A condition's mean claim metrics over the answers whose claims were listed."""

    model_config = ConfigDict(frozen=True)

    condition: str
    answers: int
    comprehensiveness: float
    diversity: float


class ExperimentEstimate(BaseModel):
    """The model calls an experiment needs before retries and before anything is reused:
    ``answer_calls`` (map batches, plus a reduce per answer), ``judge_calls`` and
    ``claims_calls``; ``answers`` and ``judgments`` are how many of each it makes;
    ``answer_prompt_tokens`` what the answers' map prompts take as planned."""

    model_config = ConfigDict(frozen=True)

    answers: int
    answer_calls: int
    judgments: int
    judge_calls: int
    claims_calls: int
    support_calls: int = Field(default=0, exclude_if=lambda calls: calls == 0)
    """The model judge's support check calls (a forecast: the answers do not exist yet); 0 and
    left out of the JSON with the offline judge."""
    answer_prompt_tokens: int = Field(default=0, exclude=True)
    """The answers' map prompts as planned (fixed levels; dynamic selection's depend on its
    ratings): what a spending limit's forecast reads; not one of the counted calls, so not dumped."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total(self) -> int:
        return self.answer_calls + self.judge_calls + self.claims_calls + self.support_calls


class ExperimentResult(BaseModel):
    """Everything an experiment made and the figures computed from it."""

    model_config = ConfigDict(frozen=True)

    id: str
    created_at: float = Field(default_factory=time.time)
    index_name: str
    index_path: str | None = None
    model: str
    judge: str
    heuristic_judge: bool
    ranker: str | None = None
    """What ranked the chunks of the ``vector`` conditions (an embedding model's identity, or ``bm25``); None without one."""
    spec: ExperimentSpec
    answers: list[AnswerRecord]
    judgments: list[JudgmentRecord]
    win_rates: list[WinRate]
    costs: list[ConditionCost]
    claims: list[ClaimSummary] = Field(default_factory=list)
    support_judge: str | None = None
    """Who checked the answers' support (``offline``, ``model``); None: not checked."""
    supported_shares: list[SupportShare] = Field(default_factory=list)
    """Each condition's supported share (in the spec's order), when the answers were checked."""
    judge_calls: int = 0
    judge_calls_failed: int = 0
    duration_s: float = 0.0
    stopped: bool = False
    stop_reason: str | None = None
    """Why a stopped experiment stopped, when it was not its user (its spending limit)."""

    def answer(self, condition: str, question_id: str, seed: int) -> AnswerRecord | None:
        return next((a for a in self.answers if (a.condition, a.question_id, a.seed) == (condition, question_id, seed)), None)

    def question(self, question_id: str) -> EvalQuestion | None:
        return next((q for q in self.spec.questions if q.id == question_id), None)

    def win_rate(self, criterion: str, row: str, col: str) -> WinRate | None:
        return next((w for w in self.win_rates if (w.criterion, w.row, w.col) == (criterion, row, col)), None)

    def judgments_between(self, row: str, col: str) -> list[tuple[JudgmentRecord, bool]]:
        """The judgments of ``row`` against ``col`` and whether ``row`` was B (scores flipped)."""
        found: list[tuple[JudgmentRecord, bool]] = []
        for j in self.judgments:
            if (j.row, j.col) == (row, col):
                found.append((j, False))
            elif row != col and (j.row, j.col) == (col, row):
                found.append((j, True))
        return found

    def claim_failures(self) -> list[AnswerRecord]:
        """The answers whose claims were asked for but could not be listed."""
        return [a for a in self.answers if a.claims_error is not None]


__all__ = [
    "AnswerCost",
    "AnswerRecord",
    "ClaimSummary",
    "ConditionCost",
    "ExperimentEstimate",
    "ExperimentResult",
    "JudgmentRecord",
    "SupportShare",
    "SupportTally",
    "WinRate",
]
