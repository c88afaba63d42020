"""One pairwise judgment, as the GraphRAG paper makes it (evaluation spec sections 1-2).

Invariants of :func:`judge_pair`:

- for every criterion and every repeat there are exactly two calls, one showing A first and
  one showing B first, so a judge that always prefers a position scores exactly 50;
- each call gets at most :data:`~graphrag_core.retry.DEFAULT_MAX_ATTEMPTS` attempts (the
  engine's one retry loop); a call that still fails is recorded with its error and left out
  of the scores, never counted as a tie;
- A's score for a criterion is the mean of 100 (A won) / 50 (tie) / 0 (B won) over its
  successful calls, B's is 100 minus A's, and a criterion whose calls all failed scores ``None``;
- the records come back in a fixed order (criterion, repeat, A-first before B-first) whatever
  the completion order.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
from collections.abc import Iterable, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..errors import EvaluationError, JudgeOutputError, SpendLimitReached
from ..llm.base import ChatModel, ChatRequest, TokenUsage, model_identity
from ..retry import DEFAULT_MAX_ATTEMPTS, DEFAULT_RETRY_POLICY, Attempts, CallBudget, CallFailed, complete_with_retry
from ..spending import SpendingLimit
from ..parsing import invalid_output, number_between, parse_json_output
from ..prompts import JUDGE_OUTPUT_SCHEMA, render_judge_messages

CRITERIA: dict[str, str] = {
    "comprehensiveness": "covers more of the aspects and details the question calls for",
    "diversity": "offers more varied perspectives and insights",
    "empowerment": "better helps the reader understand the topic and make informed judgements",
    "directness": "answers the question more specifically and clearly",
}
"""The paper's four criteria, in its order, each with what makes an answer the better one."""

DEFAULT_CRITERIA: tuple[str, ...] = tuple(CRITERIA)
JUDGE_OUTPUT_RESERVE = 512
"""``max_tokens`` of a judge call: a winner and a sentence or two of reason."""
DEFAULT_JUDGE_CONCURRENCY = 4
WIN, TIE, LOSS = 100.0, 50.0, 0.0

Order = Literal["AB", "BA"]


def validate_criteria(criteria: Iterable[str] | str | None) -> tuple[str, ...]:
    """The criteria as a tuple in the order given, duplicates dropped; ``None`` means all four.

    Raises :class:`EvaluationError` ``Unknown evaluation criterion: {name}.`` for a name that is
    not one of :data:`CRITERIA`, and when the set is empty.
    """
    if criteria is None:
        return DEFAULT_CRITERIA
    if isinstance(criteria, str):
        criteria = [criteria]
    names: list[str] = []
    for name in criteria:
        if name not in CRITERIA:
            raise EvaluationError(f"Unknown evaluation criterion: {name}.")
        if name not in names:
            names.append(name)
    if not names:
        raise EvaluationError("At least one evaluation criterion is needed.")
    return tuple(names)


def validate_repeats(repeats: Any) -> int:
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise EvaluationError("repeats must be a positive integer.")
    return repeats


class JudgeVerdict(BaseModel):
    """A parsed judge reply: ``winner`` is the position shown (1, 2) or 0 for a tie."""

    model_config = ConfigDict(frozen=True)

    winner: Literal[0, 1, 2]
    reason: str | None = None


def parse_judge_output(raw: str) -> JudgeVerdict:
    """Read a judge's reply: a JSON object whose ``winner`` is 1, 2 or 0 (a number with no
    fractional part; ``true`` is not a number) and an optional string ``reason``.

    Text that is not JSON raises :class:`JudgeOutputError` with the global search message
    (``LLM output is not valid JSON: ...``); JSON of any other shape raises it with the judge's.
    """
    value = parse_json_output(raw, error=JudgeOutputError)
    shape_error = invalid_output(JudgeOutputError, "Judge output must contain a winner of 1, 2 or 0.", raw)
    if not isinstance(value, dict) or "winner" not in value:
        raise shape_error
    winner, reason = value["winner"], value.get("reason")
    if not number_between(winner, 0, 2) or winner not in (0, 1, 2):
        raise shape_error
    if reason is not None and not isinstance(reason, str):
        raise shape_error
    return JudgeVerdict(winner=int(winner), reason=reason.strip() if reason else None)


def score_of_a(order: Order, winner: int) -> float:
    """A's score for one call: 100 if A won, 50 for a tie, 0 if B won."""
    if winner == 0:
        return TIE
    a_position = 1 if order == "AB" else 2
    return WIN if winner == a_position else LOSS


class JudgeCall(BaseModel):
    """One judge call: what was shown in which order, the raw reply, and its outcome.

    ``winner`` is the position the judge named (1, 2, 0); ``score_a`` what that means for A.
    A failed call has ``error`` set and ``winner``/``score_a`` ``None``.
    """

    model_config = ConfigDict(frozen=True)

    criterion: str
    repeat: int
    order: Order
    raw: str | None = None
    winner: int | None = None
    score_a: float | None = None
    reason: str | None = None
    usage: TokenUsage | None = None
    attempts: int = 1
    error: str | None = None
    error_type: str | None = None
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


class PairJudgment(BaseModel):
    """Every call of one head-to-head comparison of answer A and answer B, and the scores.

    ``scores`` holds A's score per criterion (``None`` when every call of it failed);
    ``scores_b`` is B's (100 minus A's).
    """

    model_config = ConfigDict(frozen=True)

    question: str
    answer_a: str
    answer_b: str
    criteria: tuple[str, ...]
    repeats: int
    judge: str
    scores: dict[str, float | None]
    calls: list[JudgeCall] = Field(default_factory=list)

    @property
    def scores_b(self) -> dict[str, float | None]:
        return {c: (None if s is None else 100.0 - s) for c, s in self.scores.items()}

    @property
    def usage(self) -> TokenUsage:
        total = TokenUsage()
        for call in self.calls:
            if call.usage is not None:
                total = total + call.usage
        return total


def criterion_scores(calls: Sequence[JudgeCall], criteria: Sequence[str]) -> dict[str, float | None]:
    """A's mean score per criterion over its successful calls; ``None`` when none succeeded."""
    scores: dict[str, float | None] = {}
    for criterion in criteria:
        values = [c.score_a for c in calls if c.criterion == criterion and c.score_a is not None]
        scores[criterion] = sum(values) / len(values) if values else None
    return scores


class JudgeCallStore(Protocol):
    """Where finished judge calls are kept so that a rerun does not repeat them."""

    def get_call(self, key: str) -> JudgeCall | None: ...

    def put_call(self, key: str, call: JudgeCall) -> None: ...


def judge_call_key(judge: object, request: ChatRequest, repeat: int) -> str:
    """sha256 of the judge's identity, the exact request and the repeat number. The request's
    output schema is left out: it asks for the shape the prompt already asks for, so judgments
    stored before schemas were sent still resume an evaluation."""
    keyed = request.model_copy(update={"output_schema": None})
    digest = hashlib.sha256()
    for part in (model_identity(judge), keyed.model_dump_json(), str(repeat)):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


async def judge_pair(
    question: str,
    answer_a: str,
    answer_b: str,
    model: ChatModel,
    *,
    criteria: Iterable[str] | None = DEFAULT_CRITERIA,
    repeats: int = 1,
    concurrency: int = DEFAULT_JUDGE_CONCURRENCY,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    store: JudgeCallStore | None = None,
    spending: SpendingLimit | None = None,
) -> PairJudgment:
    """Compare answer A and answer B on each criterion, ``repeats`` times, in both orders.

    ``store``, when given, serves calls already made (same judge, same prompt, same repeat) and
    receives each successful call as soon as it is made. At most ``concurrency`` calls are in
    flight. With ``spending``, a call that could pass its limit is not sent: once the calls in
    flight have ended (and are in ``store``), ``SpendLimitReached`` is raised. See the module
    docstring for the invariants.
    """
    names = validate_criteria(criteria)
    repeats = validate_repeats(repeats)
    plan: list[tuple[str, int, Order]] = [(c, r, o) for c in names for r in range(repeats) for o in ("AB", "BA")]
    records: list[JudgeCall | None] = [None] * len(plan)
    limit = asyncio.Semaphore(max(1, concurrency))
    policy = dataclasses.replace(DEFAULT_RETRY_POLICY, max_attempts=max_attempts)
    reached: list[SpendLimitReached] = []

    async def one(i: int) -> None:
        criterion, repeat, order = plan[i]
        first, second = (answer_a, answer_b) if order == "AB" else (answer_b, answer_a)
        request = ChatRequest(
            purpose="judge",
            messages=render_judge_messages(question, criterion, CRITERIA[criterion], first, second),
            max_tokens=JUDGE_OUTPUT_RESERVE,
            json_mode=True,
            output_schema=JUDGE_OUTPUT_SCHEMA,
        )
        key = judge_call_key(model, request, repeat) if store is not None else None
        if store is not None and key is not None:
            kept = store.get_call(key)
            if kept is not None:
                records[i] = kept.model_copy(update={"cached": True})
                return
        tally = Attempts()
        try:
            reply = await complete_with_retry(model, request, parse_judge_output, policy=policy, attempts=tally, slot=limit, budget=CallBudget(spending=spending))
        except SpendLimitReached as exc:  # the calls in flight end and are stored first
            reached.append(exc)
            return
        except CallFailed as failed:  # a failed call is recorded, never a fake tie
            records[i] = JudgeCall(
                criterion=criterion,
                repeat=repeat,
                order=order,
                raw=failed.raw_reply,
                usage=tally.usage if tally.usage.total_tokens else None,
                attempts=tally.count,
                error=str(failed.error) or type(failed.error).__name__,  # the reply is kept in ``raw``
                error_type=type(failed.error).__name__,
            )
            return
        verdict = reply.value
        record = JudgeCall(
            criterion=criterion,
            repeat=repeat,
            order=order,
            raw=reply.text,
            winner=verdict.winner,
            score_a=score_of_a(order, verdict.winner),
            reason=verdict.reason,
            usage=tally.usage if tally.usage.total_tokens else None,
            attempts=tally.count,
        )
        records[i] = record
        if store is not None and key is not None:
            store.put_call(key, record)

    await asyncio.gather(*(one(i) for i in range(len(plan))))
    if reached:
        raise reached[0]
    calls = [r for r in records if r is not None]
    return PairJudgment(
        question=question,
        answer_a=answer_a,
        answer_b=answer_b,
        criteria=names,
        repeats=repeats,
        judge=model_identity(model),
        scores=criterion_scores(calls, names),
        calls=calls,
    )


def judge_request_count(criteria: Sequence[str], repeats: int) -> int:
    """How many judge calls one pair needs (before retries)."""
    return 2 * len(criteria) * repeats


def is_heuristic(model: object) -> bool:
    """Whether a judge is the offline heuristic rather than an LLM."""
    return model_identity(model).startswith("offline")


__all__ = [
    "CRITERIA",
    "DEFAULT_CRITERIA",
    "JUDGE_OUTPUT_RESERVE",
    "JudgeCall",
    "JudgeCallStore",
    "JudgeVerdict",
    "PairJudgment",
    "criterion_scores",
    "is_heuristic",
    "judge_call_key",
    "judge_pair",
    "judge_request_count",
    "parse_judge_output",
    "score_of_a",
    "validate_criteria",
    "validate_repeats",
]
