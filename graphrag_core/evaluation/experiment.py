"""Experiments: a question set x conditions x seeds, answered by the engine and judged pairwise
(evaluation spec section 3).

Invariants of :func:`run_experiment`:

- every condition answers every question once per seed through
  :func:`~graphrag_core.search.retrieve_global` (map cache included);
- every pair of distinct conditions (in the order given, the earlier one as A) is judged on
  every question and seed; with two seeds or more each condition is also judged against itself
  (A/A: seed k's answer against seed k+1's), the sanity check that should come out near 50;
- a pair whose answer failed is not judged; the failure is kept in the result;
- answers, judge calls and claims go to the :class:`EvaluationStore` as soon as they are made,
  so a rerun makes only what is missing;
- a condition's cost counts map calls whether or not the map cache served them and the prompt
  tokens the engine planned, so it does not depend on what ran before.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
import uuid
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import EvaluationError, GraphRAGError, RequestValidationError
from ..events import Event
from ..figures import RunFigures, run_figures
from ..index.fingerprint import index_fingerprint
from ..llm.base import ChatModel, model_identity
from ..models import Index
from ..request import GlobalSearchRequest
from ..search import plan_batches, retrieve_global
from .claims import DEFAULT_CLAIM_THRESHOLD, claim_metrics, extract_claims, validate_threshold
from .judge import DEFAULT_CRITERIA, PairJudgment, judge_pair, judge_request_count, validate_criteria, validate_repeats
from .questions import EvalQuestion
from .store import EvaluationStore

if TYPE_CHECKING:
    from ..cache import MapCache
    from ..history import RunStore

PURPOSES_SHOWN = ("rate", "map", "reduce")
"""The purposes whose calls and prompt tokens a condition's cost reports."""

CONDITION_ALIASES = {
    GlobalSearchRequest.short_name(name): name
    for name in GlobalSearchRequest.model_fields
    if GlobalSearchRequest.short_name(name) != name
}
"""Short names a condition may use for request fields (``level=0`` is ``community_level=0``): the
settings' short names, as the command line and the app's links spell them."""
_NOT_OVERRIDABLE = frozenset({"query", "seed"})
_TRUE, _FALSE = frozenset({"true", "yes", "on"}), frozenset({"false", "no", "off"})


def request_fields() -> tuple[str, ...]:
    """The request fields a condition may override (read from the request model, so fields
    added to it are accepted without a change here)."""
    return tuple(f for f in GlobalSearchRequest.model_fields if f not in _NOT_OVERRIDABLE)


def _scalar(text: str) -> Any:
    value = text.strip()
    low = value.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    if low in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            continue
    return value


class Condition(BaseModel):
    """A name and the request overrides its answers are made with."""

    model_config = ConfigDict(frozen=True)

    name: str
    overrides: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, /, **data: Any) -> None:
        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            raise EvaluationError("A condition needs a name.")
        data["name"] = name.strip()
        overrides: dict[str, Any] = {}
        allowed = request_fields()
        for key, value in dict(data.get("overrides") or {}).items():
            field = CONDITION_ALIASES.get(key, key)
            if field not in allowed:
                raise EvaluationError(f"Condition {data['name']}: unknown request field {key}.")
            overrides[field] = value
        try:
            GlobalSearchRequest(query="probe", **overrides)
        except (RequestValidationError, ValueError) as exc:
            raise EvaluationError(f"Condition {data['name']}: {exc}") from None
        data["overrides"] = overrides
        super().__init__(**data)

    @classmethod
    def parse(cls, text: str) -> "Condition":
        """``NAME:key=value,key=value`` (e.g. ``C0:level=0`` or ``small:map_budget=2000,strategy=stop``)."""
        name, _, rest = text.partition(":")
        overrides: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                raise EvaluationError(f"Condition {name.strip() or text}: expected key=value, got {part!r}.")
            overrides[key.strip()] = _scalar(value)
        return cls(name=name, overrides=overrides)

    def request(self, question: str, seed: int) -> GlobalSearchRequest:
        return GlobalSearchRequest(query=question, seed=seed, **self.overrides)

    def describe(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.overrides.items()) or "defaults"


def parse_conditions(text: str) -> list[Condition]:
    """One condition per line, ``NAME: key=value, key=value`` (blank lines and ``#`` comments
    skipped): the Evaluate page's box and a conditions file read alike."""
    conditions = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, rest = line.partition(":")
            conditions.append(Condition.parse(f"{name.strip()}:{rest.replace(' ', '')}"))
    return conditions


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
        seeds = data.get("seeds", [0])
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
        names = [c.name for c in self.conditions]
        return list(itertools.combinations(names, 2))

    def seed_pairs(self) -> list[tuple[int, int]]:
        return list(zip(self.seeds, self.seeds[1:])) if self.include_aa else []

    def condition(self, name: str) -> Condition:
        return next(c for c in self.conditions if c.name == name)


# -- records --------------------------------------------------------------------------------------


class AnswerCost(BaseModel):
    model_config = ConfigDict(frozen=True)

    summaries: int = 0
    batches: int = 0
    calls: dict[str, int] = Field(default_factory=dict)
    prompt_tokens: dict[str, int] = Field(default_factory=dict)

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    @property
    def total_prompt_tokens(self) -> int:
        return sum(self.prompt_tokens.values())


AnswerStatus = Literal["completed", "partial", "no_results", "failed"]


class AnswerRecord(BaseModel):
    """One condition's answer to one question with one seed, and what it cost."""

    model_config = ConfigDict(frozen=True)

    condition: str
    question_id: str
    seed: int
    status: AnswerStatus
    answer: str = ""
    run_id: str | None = None
    cost: AnswerCost = Field(default_factory=AnswerCost)
    error: str | None = None
    claims: list[str] | None = None


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
    """A condition's mean cost per answer, and its prompt tokens as a share of the most expensive."""

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


class ClaimSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    condition: str
    answers: int
    comprehensiveness: float
    diversity: float


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
    spec: ExperimentSpec
    answers: list[AnswerRecord]
    judgments: list[JudgmentRecord]
    win_rates: list[WinRate]
    costs: list[ConditionCost]
    claims: list[ClaimSummary] = Field(default_factory=list)
    judge_calls: int = 0
    judge_calls_failed: int = 0
    duration_s: float = 0.0
    stopped: bool = False

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


# -- statistics -----------------------------------------------------------------------------------


EXACT_TIED_MAX = 13
"""Up to this many scores, a sample with ties or zeros gets the exact permutation p-value
(scipy's ``method="auto"`` does the same, but by a permutation test that takes seconds)."""
EXACT_MAX = 50
"""Up to this many scores, a sample with neither ties nor zeros gets the exact p-value (as scipy's)."""


def _midranks(values: Sequence[float]) -> list[float]:
    """The ranks of ``values`` from 1, tied values sharing the mean of their ranks."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in range(start, end + 1):
            ranks[order[k]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def exact_signed_rank_p(differences: Sequence[float]) -> float:
    """The exact two-sided p-value of the signed-rank statistic: zero differences dropped, tied
    ones sharing their mean rank, every sign assignment equally likely under the null (the
    distribution scipy's exhaustive permutation test enumerates). Twice the smaller tail, at most 1."""
    nonzero = [d for d in differences if d != 0]
    doubled = [round(2 * r) for r in _midranks([abs(d) for d in nonzero])]  # midranks are halves
    observed = sum(r for r, d in zip(doubled, nonzero) if d > 0)
    counts: dict[int, int] = {0: 1}  # sum of the positive ranks -> number of sign assignments
    for rank in doubled:
        grown: dict[int, int] = dict(counts)
        for total, count in counts.items():
            grown[total + rank] = grown.get(total + rank, 0) + count
        counts = grown
    every = 2 ** len(doubled)
    below = sum(c for t, c in counts.items() if t <= observed) / every
    above = sum(c for t, c in counts.items() if t >= observed) / every
    return min(1.0, 2 * min(below, above))


def wilcoxon_p(scores: Sequence[float]) -> float | None:
    """Two-sided Wilcoxon signed-rank p-value of ``scores`` against 50 (zero differences dropped,
    Wilcoxon's way); 1.0 when every score is 50, ``None`` with no scores.

    The method is scipy's default (``method="auto"``): the exact distribution for up to 50
    scores with neither ties nor zeros, the exact permutation distribution for up to 13 scores
    with ties or zeros (judge scores tie often: 0, 50, 100), else the normal approximation
    with tie correction."""
    if not scores:
        return None
    differences = [s - 50.0 for s in scores]
    if all(abs(d) < 1e-12 for d in differences):
        return 1.0
    differences = [0.0 if abs(d) < 1e-12 else d for d in differences]
    nonzero = [abs(d) for d in differences if d != 0]
    untied = len(nonzero) == len(differences) and len(set(nonzero)) == len(nonzero)
    if not untied and len(differences) <= EXACT_TIED_MAX:
        return exact_signed_rank_p(differences)
    from scipy.stats import wilcoxon

    exact = untied and len(differences) <= EXACT_MAX
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = float(wilcoxon(differences, alternative="two-sided", method="exact" if exact else "approx").pvalue)
    return p if p == p else 1.0


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values, in the input order (``None`` stays ``None`` and does
    not count towards the family size)."""
    indexed = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(indexed)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def compute_win_rates(spec: ExperimentSpec, judgments: Sequence[JudgmentRecord]) -> list[WinRate]:
    """Win rates for every ordered pair of conditions (both directions) and every A/A, per criterion.

    p-values test the per-question scores (the mean over seeds of a question) against 50; those of
    distinct pairs are Holm-corrected per criterion; A/A p-values are shown uncorrected.
    """
    names = [c.name for c in spec.conditions]
    rates: list[WinRate] = []
    for criterion in spec.criteria:
        block: list[WinRate] = []
        for row, col in [*spec.pairs(), *((n, n) for n in names if spec.seed_pairs())]:
            by_question: dict[str, list[float]] = {}
            scores: list[float] = []
            for j in judgments:
                if (j.row, j.col) != (row, col) or j.judgment is None:
                    continue
                s = j.judgment.scores.get(criterion)
                if s is None:
                    continue
                scores.append(s)
                by_question.setdefault(j.question_id, []).append(s)
            per_question = [sum(v) / len(v) for v in by_question.values()]
            mean = sum(scores) / len(scores) if scores else None
            p = wilcoxon_p(per_question)
            block.append(WinRate(criterion=criterion, row=row, col=col, win_rate=mean, judgments=len(scores), questions=len(per_question), p_value=p))
        distinct = [w for w in block if w.row != w.col]
        adjusted = holm([w.p_value for w in distinct])
        corrected = {(w.row, w.col): a for w, a in zip(distinct, adjusted)}
        for w in block:
            p_holm = corrected.get((w.row, w.col), w.p_value)
            rates.append(w.model_copy(update={"p_holm": p_holm}))
            if w.row != w.col:
                rates.append(
                    WinRate(
                        criterion=criterion,
                        row=w.col,
                        col=w.row,
                        win_rate=None if w.win_rate is None else 100.0 - w.win_rate,
                        judgments=w.judgments,
                        questions=w.questions,
                        p_value=w.p_value,
                        p_holm=p_holm,
                    )
                )
    return rates


def compute_costs(spec: ExperimentSpec, answers: Sequence[AnswerRecord]) -> list[ConditionCost]:
    """Each condition's mean cost per answer (failed answers included: they cost too)."""
    rows: list[ConditionCost] = []
    for condition in spec.conditions:
        mine = [a for a in answers if a.condition == condition.name]
        n = len(mine) or 1
        purposes = sorted({p for a in mine for p in [*a.cost.calls, *a.cost.prompt_tokens]}, key=lambda p: (p not in PURPOSES_SHOWN, PURPOSES_SHOWN.index(p) if p in PURPOSES_SHOWN else 0, p))
        calls = {p: sum(a.cost.calls.get(p, 0) for a in mine) / n for p in purposes}
        tokens = {p: sum(a.cost.prompt_tokens.get(p, 0) for a in mine) / n for p in purposes}
        rows.append(
            ConditionCost(
                condition=condition.name,
                answers=len(mine),
                failed=sum(1 for a in mine if a.status == "failed"),
                summaries=sum(a.cost.summaries for a in mine) / n,
                batches=sum(a.cost.batches for a in mine) / n,
                calls=calls,
                prompt_tokens=tokens,
                total_prompt_tokens=sum(tokens.values()),
                share=None,
            )
        )
    most = max((r.total_prompt_tokens for r in rows), default=0.0)
    return [r.model_copy(update={"share": (r.total_prompt_tokens / most) if most else None}) for r in rows]


def compute_claim_summaries(spec: ExperimentSpec, answers: Sequence[AnswerRecord]) -> list[ClaimSummary]:
    summaries: list[ClaimSummary] = []
    for condition in spec.conditions:
        metrics = [claim_metrics(a.claims, threshold=spec.claim_threshold) for a in answers if a.condition == condition.name and a.claims is not None]
        if not metrics:
            continue
        summaries.append(
            ClaimSummary(
                condition=condition.name,
                answers=len(metrics),
                comprehensiveness=sum(m.comprehensiveness for m in metrics) / len(metrics),
                diversity=sum(m.diversity for m in metrics) / len(metrics),
            )
        )
    return summaries


# -- running ----------------------------------------------------------------------------------------


def answer_key(fingerprint: str, model: object, request: GlobalSearchRequest) -> str:
    digest = hashlib.sha256()
    for part in (fingerprint, model_identity(model), request.model_dump_json()):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def claims_key(model: object, answer: str) -> str:
    return hashlib.sha256(f"{model_identity(model)}\x00{answer}".encode()).hexdigest()


def experiment_id(spec: ExperimentSpec, fingerprint: str, model: object, judge: object) -> str:
    """A stable id: the same spec over the same index with the same models has the same id."""
    text = json.dumps([spec.model_dump(mode="json"), fingerprint, model_identity(model), model_identity(judge)], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def is_heuristic(model: object) -> bool:
    """Whether a judge is the offline heuristic rather than an LLM."""
    return model_identity(model).startswith("offline")


class EvalProgress(BaseModel):
    """Where an experiment is: ``stage`` (answers, judgments, claims), items done of total."""

    model_config = ConfigDict(frozen=True)

    stage: Literal["answers", "claims", "judgments"]
    done: int
    total: int
    label: str = ""
    reused: bool = False


ProgressSink = Callable[[EvalProgress], None]


def _cost_of(figures: RunFigures) -> AnswerCost:
    """An answer's cost, read from its run's figures (finished or failed alike): rating calls and
    their reported prompt tokens; every map batch (a cached one too) at its planned prompt
    estimate; the reduce's attempts at its planned prompt."""
    calls: dict[str, int] = {}
    tokens: dict[str, int] = {}
    if figures.rating_calls:
        calls["rate"], tokens["rate"] = figures.rating_calls, figures.rating_usage.prompt_tokens
    calls["map"] = figures.map_calls + figures.cache_hits
    calls["reduce"] = figures.reduce_calls
    tokens["map"] = figures.map_prompt_tokens
    tokens["reduce"] = (figures.reduce_prompt_tokens or 0) if figures.reduce_calls else 0
    return AnswerCost(summaries=figures.summaries or 0, batches=figures.batches, calls=calls, prompt_tokens=tokens)


def estimate_experiment(index: Index, spec: ExperimentSpec, *, every_question: bool = True) -> dict[str, int]:
    """The model calls an experiment needs before retries and before anything is reused:
    ``answer_calls`` (map batches, plus a reduce per answer), ``judge_calls``, ``claims_calls``
    and their ``total``. Map batches are planned for each question with the first seed, or,
    with ``every_question=False``, for the first question only and counted for every question
    (a question's length barely changes the batches; much faster on a big index)."""
    answer_calls = 0
    planned = spec.questions if every_question else spec.questions[:1]
    scale = 1 if every_question else len(spec.questions)
    for condition in spec.conditions:
        for question in planned:
            request = condition.request(question.question, spec.seeds[0])
            try:
                _, batches, _ = plan_batches(index, request, seed=spec.seeds[0])
            except GraphRAGError:
                batches = []
            answer_calls += (len(batches) + (1 if batches else 0)) * len(spec.seeds) * scale
    per_pair = judge_request_count(spec.criteria, spec.repeats)
    pairs = len(spec.pairs()) * len(spec.seeds) + len(spec.conditions) * len(spec.seed_pairs())
    judge_calls = per_pair * pairs * len(spec.questions)
    claims_calls = len(spec.conditions) * len(spec.questions) * len(spec.seeds) if spec.claims else 0
    return {
        "answers": len(spec.conditions) * len(spec.questions) * len(spec.seeds),
        "answer_calls": answer_calls,
        "judgments": pairs * len(spec.questions),
        "judge_calls": judge_calls,
        "claims_calls": claims_calls,
        "total": answer_calls + judge_calls + claims_calls,
    }


async def run_experiment(
    index: Index,
    spec: ExperimentSpec,
    model: ChatModel,
    judge: ChatModel,
    *,
    store: EvaluationStore | None = None,
    cache: MapCache | None = None,
    run_store: RunStore | None = None,
    index_path: str | None = None,
    on_progress: ProgressSink | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> ExperimentResult:
    """Answer, judge and score (see the module docstring).

    ``run_store``, when given, receives each answer's run, labelled with the experiment, the
    condition, the question and the seed, so the app can open it in Compare and Provenance.
    ``should_stop`` is polled between items: when it returns true the experiment ends early
    with what it has (``stopped=True``); everything made so far is in ``store``.
    """
    started = time.monotonic()
    fingerprint = index_fingerprint(index)
    exp_id = experiment_id(spec, fingerprint, model, judge)
    emit = on_progress or (lambda progress: None)
    stop = should_stop or (lambda: False)
    stopped = False

    # 1. answers
    answers: list[AnswerRecord] = []
    total = len(spec.conditions) * len(spec.questions) * len(spec.seeds)
    for condition in spec.conditions:
        for question in spec.questions:
            for seed in spec.seeds:
                if stop():
                    stopped = True
                    break
                request = condition.request(question.question, seed)
                key = answer_key(fingerprint, model, request)
                kept = store.get_answer(key) if store is not None else None
                if kept is not None and kept.status != "failed":
                    record = kept.model_copy(update={"condition": condition.name, "question_id": question.id})
                    reused = True
                else:
                    record = await _answer(index, condition, question, seed, request, model, cache, run_store, index_path, exp_id)
                    reused = False
                    if store is not None and record.status != "failed":
                        store.put_answer(key, record)
                answers.append(record)
                emit(EvalProgress(stage="answers", done=len(answers), total=total, label=f"{condition.name} · {question.id} · seed {seed}", reused=reused))

    # 2. claims
    if spec.claims and not stopped:
        done = 0
        with_claims: list[AnswerRecord] = []
        for record in answers:
            if stop():
                stopped = True
            if record.status == "failed" or stopped:
                with_claims.append(record)
                continue
            key = claims_key(judge, record.answer)
            claims = store.get_claims(key) if store is not None else None
            if claims is None:
                try:
                    claims, _ = await extract_claims(record.answer, judge)
                except GraphRAGError:
                    claims = None
                if claims is not None and store is not None:
                    store.put_claims(key, claims)
            with_claims.append(record.model_copy(update={"claims": claims}))
            done += 1
            emit(EvalProgress(stage="claims", done=done, total=len(answers), label=f"{record.condition} · {record.question_id}"))
        answers = with_claims

    # 3. judgments
    lookup = {(a.condition, a.question_id, a.seed): a for a in answers}
    jobs: list[tuple[str, str, str, int, int]] = []
    for question in spec.questions:
        for seed in spec.seeds:
            jobs.extend((a, b, question.id, seed, seed) for a, b in spec.pairs())
        for seed_a, seed_b in spec.seed_pairs():
            jobs.extend((c.name, c.name, question.id, seed_a, seed_b) for c in spec.conditions)
    judgments: list[JudgmentRecord] = []
    texts = {q.id: q.question for q in spec.questions}
    for row, col, qid, seed_a, seed_b in jobs:
        if stopped or stop():
            stopped = True
            break
        a, b = lookup.get((row, qid, seed_a)), lookup.get((col, qid, seed_b))
        base = dict(row=row, col=col, question_id=qid, seed_a=seed_a, seed_b=seed_b)
        if a is None or b is None or a.status == "failed" or b.status == "failed":
            failed = [f"{r.condition} seed {r.seed}" for r in (a, b) if r is not None and r.status == "failed"]
            judgments.append(JudgmentRecord(**base, skipped=f"answer failed: {', '.join(failed)}" if failed else "answer missing"))
        else:
            judgment = await judge_pair(texts[qid], a.answer, b.answer, judge, criteria=spec.criteria, repeats=spec.repeats, store=store)
            judgments.append(JudgmentRecord(**base, judgment=judgment))
        emit(EvalProgress(stage="judgments", done=len(judgments), total=len(jobs), label=f"{row} vs {col} · {qid}"))

    calls = [c for j in judgments if j.judgment is not None for c in j.judgment.calls]
    result = ExperimentResult(
        id=exp_id,
        index_name=index.name or "",
        index_path=index_path,
        model=model_identity(model),
        judge=model_identity(judge),
        heuristic_judge=is_heuristic(judge),
        spec=spec,
        answers=answers,
        judgments=judgments,
        win_rates=compute_win_rates(spec, judgments),
        costs=compute_costs(spec, answers),
        claims=compute_claim_summaries(spec, answers),
        judge_calls=len(calls),
        judge_calls_failed=sum(1 for c in calls if not c.ok),
        duration_s=time.monotonic() - started,
        stopped=stopped,
    )
    if store is not None and not stopped:
        store.save_experiment(result)
    return result


async def _answer(
    index: Index,
    condition: Condition,
    question: EvalQuestion,
    seed: int,
    request: GlobalSearchRequest,
    model: ChatModel,
    cache: MapCache | None,
    run_store: RunStore | None,
    index_path: str | None,
    exp_id: str,
) -> AnswerRecord:
    events: list[Event] = []
    run_id = uuid.uuid4().hex
    base = dict(condition=condition.name, question_id=question.id, seed=seed, run_id=run_id)
    try:
        result = await retrieve_global(index, request, model, on_event=events.append, cache=cache, run_id=run_id)
        record = AnswerRecord(**base, status=result.status, answer=result.answer, cost=_cost_of(run_figures(events)))
    except GraphRAGError as exc:
        message = exc.message if isinstance(exc, BaseExceptionGroup) else str(exc)
        record = AnswerRecord(**base, status="failed", error=message or type(exc).__name__, cost=_cost_of(run_figures(events)))
    if run_store is not None and events:
        from ..history import RunRecord

        label = f"eval {exp_id[:8]} · {condition.name} · {question.id} · seed {seed}"
        run_store.save(RunRecord.from_events(events, index_name=index.name or "", index_path=index_path, label=label))
    return record


__all__ = [
    "parse_conditions",
    "AnswerCost",
    "AnswerRecord",
    "ClaimSummary",
    "Condition",
    "ConditionCost",
    "EvalProgress",
    "ExperimentResult",
    "ExperimentSpec",
    "JudgmentRecord",
    "WinRate",
    "compute_costs",
    "compute_win_rates",
    "estimate_experiment",
    "exact_signed_rank_p",
    "holm",
    "index_fingerprint",
    "is_heuristic",
    "run_experiment",
    "wilcoxon_p",
]
