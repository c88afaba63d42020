"""The model judge: a chat model asked, through the engine's one retry loop, whether the texts
each point cites support it; its quotes checked by the engine.

Invariants:

- the points are packed into calls in answer order: a call holds at most
  ``max_points_per_call`` points and its prompt at most ``token_budget`` tokens; a point's
  cited texts go in by priority (the summary, the claims, then the source chunks), each text
  once per call, and a text that does not fit is left out and said so in the point's notes;
  a point that does not fit beside the points before it starts a new call;
- every call is bounded as the engine's other calls are: ``max_tokens`` (a reserve per point),
  at most ``concurrency`` in flight, at most ``max_attempts`` attempts (a reply of the wrong
  shape is retried with what was wrong, a cut reply asking for less), a spending limit when
  one is given (a call that could pass it is not sent);
- a reply is kept in the map cache (keyed by the model's identity and the exact request) only
  once it parsed, so a rerun of the same check makes no call;
- every quote is looked for in the text it names, whitespace aside: a quote not found, or from
  a text the point does not cite, is dropped and the verdict goes down one step; a supported
  or partial verdict with no quote left is ``unsupported``;
- a call that fails every attempt (or is not sent at the spending limit) leaves its points
  ``unsupported`` with an ``error`` saying why: never an exception that loses the check.

Why this module is long: the packing, the parsing and checking of replies, the calls and
their cost are one judge, and each must agree with the others (the cost is that of the very
requests the judge sends).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cache import GuardedCache, MapCache, cache_key
from ..citations import ReferenceKind
from ..context import COMMUNITY, SOURCE, Unit, format_support_point_header, format_support_text_header
from ..errors import RequestValidationError, SpendLimitReached, SupportOutputError, describe_error
from ..llm.base import ChatModel, ChatRequest, TokenUsage
from ..retry import DEFAULT_MAX_ATTEMPTS, DEFAULT_RETRY_POLICY, Attempts, CallBudget, CallFailed, complete_with_retry
from ..parsing import invalid_output, parse_json_output
from ..prompts import SUPPORT_OUTPUT_SCHEMA, render_support_messages
from ..spending import SpendingLimit
from ..tokens import HeuristicTokenizer, Tokenizer, prompt_overhead
from .models import EVIDENCE_KINDS, VERDICTS, SupportCost, SupportEvidence, SupportVerdict, downgraded
from .units import SupportUnit, find_quote

SUPPORT_TOKEN_BUDGET = 8000
"""The most prompt tokens one support check call holds (texts and points together)."""
SUPPORT_OUTPUT_PER_POINT = 300
"""``max_tokens`` of a call: this many per point it asks about, plus :data:`SUPPORT_OUTPUT_BASE`."""
SUPPORT_OUTPUT_BASE = 64
MAX_POINTS_PER_CALL = 8
"""The most points one call asks about (fewer when their texts do not fit the budget)."""
DEFAULT_SUPPORT_CONCURRENCY = 4
"""Support check calls in flight at most."""
MIN_SUPPORT_TOKEN_BUDGET = 1000


@dataclass(frozen=True)
class SupportSettings:
    """How the model judge sends its calls (every value a positive whole number;
    ``token_budget`` at least :data:`MIN_SUPPORT_TOKEN_BUDGET`)."""

    token_budget: int = SUPPORT_TOKEN_BUDGET
    output_per_point: int = SUPPORT_OUTPUT_PER_POINT
    max_points_per_call: int = MAX_POINTS_PER_CALL
    concurrency: int = DEFAULT_SUPPORT_CONCURRENCY
    max_attempts: int = DEFAULT_MAX_ATTEMPTS

    def __post_init__(self) -> None:
        for name in ("output_per_point", "max_points_per_call", "concurrency", "max_attempts"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise RequestValidationError(f"Support check setting {name} must be a whole number of at least 1 (got {value!r}).")
        if isinstance(self.token_budget, bool) or not isinstance(self.token_budget, int) or self.token_budget < MIN_SUPPORT_TOKEN_BUDGET:
            raise RequestValidationError(
                f"Support check token_budget must be a whole number of at least {MIN_SUPPORT_TOKEN_BUDGET:,} (got {self.token_budget!r})."
            )


@dataclass(frozen=True)
class JudgedPoint:
    """What the model judge is asked about one point: its number (from 1, in the answer's
    order), its words without citations, the ids it cites and their texts in priority order."""

    number: int
    text: str
    cited: tuple[str, ...]
    units: tuple[SupportUnit, ...]


@dataclass(frozen=True)
class PlannedCall:
    """One call of the model judge: its points' numbers, the request, and per point the texts
    shown and how many of its texts were left out for the budget."""

    numbers: tuple[int, ...]
    request: ChatRequest
    shown: dict[int, tuple[SupportUnit, ...]]
    left_out: dict[int, int]


@dataclass
class _Packing:
    texts: list[SupportUnit] = field(default_factory=list)
    points: list[JudgedPoint] = field(default_factory=list)
    shown: dict[int, list[SupportUnit]] = field(default_factory=dict)
    left_out: dict[int, int] = field(default_factory=dict)
    tokens: int = 0


def _text_block(unit: SupportUnit, kind: Unit) -> tuple[str, str]:
    return format_support_text_header(unit.kind, unit.id, unit.cited, unit=kind), unit.text


def _point_block(point: JudgedPoint, kind: Unit) -> tuple[str, str]:
    return format_support_point_header(point.number, point.cited, unit=kind), point.text


def plan_support_calls(
    points: Sequence[JudgedPoint], *, unit: ReferenceKind = "community", settings: SupportSettings | None = None, tokenizer: Tokenizer | None = None
) -> list[PlannedCall]:
    """The calls the model judge makes for ``points`` (see the module's invariants)."""
    settings = settings or SupportSettings()
    counter = tokenizer or HeuristicTokenizer()
    kind: Unit = SOURCE if unit == "source" else COMMUNITY
    base = counter.count("\n".join(m.content for m in render_support_messages([], []))) + prompt_overhead(counter, 2)
    unit_tokens: dict[tuple[str, str, str], int] = {}

    def cost(text: SupportUnit) -> int:
        key = (text.kind, text.id, text.cited)
        if key not in unit_tokens:
            header, body = _text_block(text, kind)
            unit_tokens[key] = counter.count(f"{header}\n{body.strip()}") + 2
        return unit_tokens[key]

    calls: list[PlannedCall] = []
    packing = _Packing(tokens=base)
    for point in points:
        header, body = _point_block(point, kind)
        own = counter.count(f"{header}\n{' '.join(body.split())}") + 2
        held = {(t.kind, t.id, t.cited) for t in packing.texts}
        needed = own + sum(cost(t) for t in point.units if (t.kind, t.id, t.cited) not in held)
        if packing.points and (len(packing.points) >= settings.max_points_per_call or packing.tokens + needed > settings.token_budget):
            calls.append(_finish(packing, kind, settings))
            packing, held = _Packing(tokens=base), set()
        packing.points.append(point)
        packing.tokens += own
        shown: list[SupportUnit] = []
        for text in point.units:
            key = (text.kind, text.id, text.cited)
            if key in held:
                shown.append(text)
            elif packing.tokens + cost(text) <= settings.token_budget:
                packing.texts.append(text)
                packing.tokens += cost(text)
                held.add(key)
                shown.append(text)
        packing.shown[point.number] = shown
        packing.left_out[point.number] = len(point.units) - len(shown)
    if packing.points:
        calls.append(_finish(packing, kind, settings))
    return calls


def _finish(packing: _Packing, kind: Unit, settings: SupportSettings) -> PlannedCall:
    request = ChatRequest(
        purpose="support",
        messages=render_support_messages([_text_block(t, kind) for t in packing.texts], [_point_block(p, kind) for p in packing.points]),
        max_tokens=SUPPORT_OUTPUT_BASE + settings.output_per_point * len(packing.points),
        json_mode=True,
        output_schema=SUPPORT_OUTPUT_SCHEMA,
    )
    return PlannedCall(
        numbers=tuple(p.number for p in packing.points),
        request=request,
        shown={n: tuple(units) for n, units in packing.shown.items()},
        left_out=dict(packing.left_out),
    )


# -- replies --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelQuote:
    kind: str
    id: str
    quote: str


@dataclass(frozen=True)
class ModelVerdict:
    """One point's entry in a reply, as the model wrote it (its quotes not checked yet)."""

    verdict: SupportVerdict
    quotes: tuple[ModelQuote, ...]
    reason: str


_SHAPE = (
    'Support check output must be a JSON object with a list "points" holding one entry per point asked about ({numbers}), '
    'each with "point" (its number), "verdict" (supported, partial or unsupported), "evidence" (a list of '
    '{{"kind": summary, claim or chunk, "id", "quote"}}) and "reason".'
)


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # an id written as a number
    return None


def _entry(entry: Any) -> tuple[int, ModelVerdict] | None:
    if not isinstance(entry, dict):
        return None
    number, verdict, evidence, reason = entry.get("point"), entry.get("verdict"), entry.get("evidence", []), entry.get("reason", "")
    if isinstance(number, bool) or not isinstance(number, int) or verdict not in VERDICTS or not isinstance(evidence, list):
        return None
    quotes: list[ModelQuote] = []
    for item in evidence:
        if not isinstance(item, dict) or item.get("kind") not in EVIDENCE_KINDS:
            return None
        unit_id, quote = _text(item.get("id")), item.get("quote")
        if unit_id is None or not isinstance(quote, str):
            return None
        quotes.append(ModelQuote(item["kind"], unit_id, quote))
    return number, ModelVerdict(verdict, tuple(quotes), reason.strip() if isinstance(reason, str) else "")


def parse_support_output(raw: str, numbers: Sequence[int]) -> dict[int, ModelVerdict]:
    """Each asked point's entry of a support check reply; raises :class:`SupportOutputError`
    (the not-valid-JSON message, or :data:`_SHAPE`'s) when any entry is malformed or a point
    asked about has none. An entry for a point not asked about is ignored; of two entries for
    one point the first counts."""
    value = parse_json_output(raw, error=SupportOutputError)
    shape_error = invalid_output(SupportOutputError, _SHAPE.format(numbers=", ".join(map(str, numbers))), raw)
    entries = value.get("points") if isinstance(value, dict) else None
    if not isinstance(entries, list):
        raise shape_error
    found: dict[int, ModelVerdict] = {}
    for entry in entries:
        parsed = _entry(entry)
        if parsed is None:
            raise shape_error
        found.setdefault(*parsed)
    if any(n not in found for n in numbers):
        raise shape_error
    return {n: found[n] for n in numbers}


@dataclass(frozen=True)
class CheckedVerdict:
    """A point's verdict once its quotes were checked: the evidence found, and what was dropped."""

    verdict: SupportVerdict
    evidence: tuple[SupportEvidence, ...]
    reason: str
    notes: tuple[str, ...] = ()
    error: str | None = None


def check_quotes(answer: ModelVerdict, shown: Sequence[SupportUnit], cited: Sequence[SupportUnit]) -> CheckedVerdict:
    """The verdict after the engine looked for every quote (see the module's invariants): a quote
    counts when its text is one the point cites (``cited``) and it is found there, whitespace
    aside; ``shown`` are the texts the call showed for this point."""
    by_key = {(u.kind, u.id): u for u in cited}
    shown_keys = {(u.kind, u.id) for u in shown}
    evidence: list[SupportEvidence] = []
    notes: list[str] = []
    for quote in answer.quotes if answer.verdict != "unsupported" else ():
        unit = by_key.get((quote.kind, quote.id))
        visible = unit is not None and (quote.kind, quote.id) in shown_keys
        span = find_quote(unit.text, quote.quote) if unit is not None and visible else None
        if unit is None or span is None:
            why = "a text the point does not cite" if unit is None else "a text the call did not show" if not visible else "not found there"
            notes.append(f"The judge's quote from {quote.kind} {quote.id} was dropped ({why}): {quote.quote[:120]!r}.")
            continue
        start, end = span
        evidence.append(SupportEvidence(kind=unit.kind, id=unit.id, quote=unit.text[start:end], community_id=unit.cited, start=start, end=end))
    verdict = answer.verdict
    if notes and verdict != "unsupported":
        verdict = downgraded(verdict)
        notes.append(f"Its verdict went down to {verdict}: a quote could not be found.")
    if verdict != "unsupported" and not evidence:
        verdict = "unsupported"
        notes.append("No quote of the judge's was found in the cited texts, so the point is unsupported.")
    return CheckedVerdict(verdict, tuple(evidence), answer.reason, tuple(notes))


# -- the calls ------------------------------------------------------------------------------------


@dataclass
class ModelJudgement:
    """What the model judge made of every point (by number) and what its calls cost."""

    verdicts: dict[int, CheckedVerdict] = field(default_factory=dict)
    calls: int = 0
    cache_hits: int = 0
    failed_calls: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    notes: list[str] = field(default_factory=list)


async def judge_with_model(
    model: ChatModel,
    points: Sequence[JudgedPoint],
    calls: Sequence[PlannedCall],
    *,
    settings: SupportSettings | None = None,
    cache: MapCache | None = None,
    spending: SpendingLimit | None = None,
    tokenizer: Tokenizer | None = None,
) -> ModelJudgement:
    """Send the planned ``calls`` (at most ``concurrency`` at once) and check every reply's
    quotes against the texts of ``points`` (see the module's invariants)."""
    settings = settings or SupportSettings()
    judged = ModelJudgement()
    by_number = {p.number: p for p in points}
    guarded = None if cache is None else cache if isinstance(cache, GuardedCache) else GuardedCache(cache, on_failure=judged.notes.append)
    slot = asyncio.Semaphore(settings.concurrency)
    policy = dataclasses.replace(DEFAULT_RETRY_POLICY, max_attempts=settings.max_attempts)

    def settle(call: PlannedCall, answers: dict[int, ModelVerdict]) -> None:
        for number, answer in answers.items():
            point = by_number[number]
            checked = check_quotes(answer, call.shown[number], point.units)
            left = call.left_out.get(number, 0)
            if left:
                note = f"{left} of {len(point.units)} cited texts were left out of the call (its token budget)."
                checked = dataclasses.replace(checked, notes=(note, *checked.notes))
            judged.verdicts[number] = checked

    def fail(call: PlannedCall, error: str) -> None:
        for number in call.numbers:
            judged.verdicts[number] = CheckedVerdict("unsupported", (), f"Not judged: {error}", error=error)

    async def one(call: PlannedCall) -> None:
        def parse(text: str) -> dict[int, ModelVerdict]:
            return parse_support_output(text, call.numbers)

        key = cache_key(model, call.request) if guarded is not None else None
        if guarded is not None and key is not None:
            text = await asyncio.to_thread(guarded.get, key)
            if text is not None:
                try:
                    answers = parse(text)
                except SupportOutputError:
                    pass  # an entry this version cannot read: ask again
                else:
                    judged.cache_hits += 1
                    settle(call, answers)
                    return
        tally = Attempts()
        try:
            reply = await complete_with_retry(
                model, call.request, parse, policy=policy, attempts=tally, slot=slot,
                budget=CallBudget(tokenizer=tokenizer, token_budget=settings.token_budget + (call.request.max_tokens or 0), spending=spending),
            )
        except CallFailed as failed:
            judged.failed_calls += 1
            fail(call, f"the model judge's reply could not be used: {describe_error(failed.error)}")
            return
        except SpendLimitReached as reached:
            fail(call, f"the call was not sent: {reached}")
            return
        finally:
            judged.calls += tally.calls
            judged.usage = judged.usage + tally.usage
        if guarded is not None and key is not None:
            await asyncio.to_thread(guarded.put, key, reply.text)
        settle(call, reply.value)

    await asyncio.gather(*(one(call) for call in calls))
    return judged


def cost_of_calls(
    calls: Sequence[PlannedCall], *, model: object | None = None, cache: MapCache | None = None, tokenizer: Tokenizer | None = None, forecast: bool = False
) -> SupportCost:
    """What ``calls`` cost before any is sent: those the cache answers (for ``model``) are
    counted apart and cost nothing; the others their prompt tokens and their ``max_tokens``."""
    counter = tokenizer or HeuristicTokenizer()
    cached = 0
    prompt = completion = 0
    for call in calls:
        if cache is not None and model is not None and cache.get(cache_key(model, call.request)) is not None:
            cached += 1
            continue
        prompt += counter.count(call.request.prompt_text) + prompt_overhead(counter, len(call.request.messages))
        completion += call.request.max_tokens or 0
    return SupportCost(
        points=sum(len(c.numbers) for c in calls), calls=len(calls), prompt_tokens=prompt, max_completion_tokens=completion,
        cached_calls=cached, forecast=forecast,
    )


def scaled_cost(cost: SupportCost, points: int) -> SupportCost:
    """``cost`` (of a sample of points) scaled to ``points`` points, as a forecast."""
    if cost.points == 0:
        return cost.model_copy(update={"forecast": True})
    factor = points / cost.points
    return SupportCost(
        points=points, calls=max(1, math.ceil(cost.calls * factor)), prompt_tokens=round(cost.prompt_tokens * factor),
        max_completion_tokens=round(cost.max_completion_tokens * factor), forecast=True,
    )


__all__ = [
    "DEFAULT_SUPPORT_CONCURRENCY",
    "MAX_POINTS_PER_CALL",
    "SUPPORT_OUTPUT_BASE",
    "SUPPORT_OUTPUT_PER_POINT",
    "SUPPORT_TOKEN_BUDGET",
    "CheckedVerdict",
    "JudgedPoint",
    "ModelJudgement",
    "ModelQuote",
    "ModelVerdict",
    "PlannedCall",
    "SupportSettings",
    "check_quotes",
    "cost_of_calls",
    "judge_with_model",
    "parse_support_output",
    "plan_support_calls",
    "scaled_cost",
]
