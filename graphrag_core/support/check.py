"""The support check of a finished run: is each point of its answer backed by what it cites?

:func:`check_support` cuts the answer into points (:func:`~graphrag_core.answer_points.answer_points`:
each bullet, or each sentence of a paragraph, with its citations), keeps those that cite
something (the others are listed as ``uncited``: they claim no support), and asks a judge
about each against the texts its citations stand for (:mod:`.units`): the ``offline`` judge
(:mod:`.lexical`, deterministic) or the ``model`` judge (:mod:`.model_judge`).

Invariants:

- a point is judged against the texts of the ids it cites, and only those: a right sentence
  under another community's id is not ``supported``;
- when a point's own citations do not support it fully, the offline judge's search looks for
  the communities (or, for a ``text``/``vector`` run, the chunks) that do among those the
  answer cites elsewhere and those the run read (their summaries and claims), and the point
  names them (``supported_by``, with a quote each in ``elsewhere``), whichever judge judged it;
- an id the index does not have supports nothing (its point says so);
- every quote is a verbatim span of its unit's text (the offline judge's are its sentences;
  the model judge's are looked for and dropped when absent);
- nothing here raises for what a judge replied: a point the model judge could not judge is
  ``unsupported`` with its ``error`` set.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ..answer_points import Point, answer_points
from ..citations import ReferenceKind, find_citations, result_unit
from ..levels import LEAF
from ..llm.base import ChatModel, model_identity
from ..methods import GLOBAL
from ..models import Index
from ..request import GlobalSearchRequest
from ..results import GlobalSearchResult
from ..sources import source_table
from ..status import RunStatus
from ..tokens import Tokenizer
from ..wording import counted
from .lexical import LEXICAL_JUDGE_IDENTITY, MAX_SUPPORTED_BY, Finding, SentencePool, UnitSentence, judge_point, unit_sentences
from .model_judge import JudgedPoint, SupportSettings, cost_of_calls, judge_with_model, plan_support_calls, scaled_cost
from .models import JudgeName, SupportCheck, SupportCost, SupportEvidence, SupportPoint, SupportVerdict, verdict_mark
from .units import SupportUnit, UnitReader

if TYPE_CHECKING:
    from ..cache import MapCache
    from ..spending import SpendingLimit

FORECAST_POINTS = 8
"""How many points a forecast (before the answer exists) assumes the answer will have."""
FORECAST_SAMPLE = 12
"""How many of the level's communities (or chunks) a forecast reads to size a point's texts."""


def _percent(share: float) -> str:
    return f"{round(100 * share)}%"


def _noun(unit: ReferenceKind, count: int = 1) -> str:
    return ("community" if count == 1 else "communities") if unit == "community" else ("source" if count == 1 else "sources")


class _Checker:
    """One answer's points, the units they cite, and the pool of what the run read."""

    def __init__(self, index: Index, answer: str, *, unit: ReferenceKind, read: Sequence[str] = ()) -> None:
        self.unit = unit
        self.reader = UnitReader(index, self.unit)
        points = answer_points(answer)
        cited = [tuple(dict.fromkeys(i for c in find_citations(p.text) for i in c.ids_of(self.unit))) for p in points]
        self.points: list[tuple[Point, tuple[str, ...]]] = [(p, ids) for p, ids in zip(points, cited) if ids]
        self.uncited = tuple(p.text for p, ids in zip(points, cited) if not ids)
        self.cited_anywhere = tuple(dict.fromkeys(i for _, ids in self.points for i in ids))
        self.read = tuple(dict.fromkeys(i for i in read if i not in set(self.cited_anywhere)))
        self.pool = SentencePool()
        for cited_id in (*self.cited_anywhere, *self.read):
            for text in self.reader.units(cited_id, chunks=False):
                self.pool.add(unit_sentences(text))
        self._chunk_sentences: dict[str, list[UnitSentence]] = {}

    def own_units(self, cited: Sequence[str]) -> list[SupportUnit]:
        return [u for cid in cited for u in self.reader.units(cid)]

    def own_sentences(self, cited: Sequence[str]) -> list[UnitSentence]:
        """The sentences of the texts ``cited`` stands for: the pool's, and their chunks'."""
        found: list[UnitSentence] = []
        for cid in cited:
            found += self.pool.of_cited(cid)
            if self.unit == "community":
                if cid not in self._chunk_sentences:
                    chunks = [u for u in self.reader.units(cid) if u.kind == "chunk"]
                    self._chunk_sentences[cid] = [s for u in chunks for s in unit_sentences(u)]
                found += self._chunk_sentences[cid]
        return found

    def elsewhere(self, weights: dict[str, float], cited: Sequence[str]) -> list[tuple[str, Finding]]:
        """The other ids whose texts support the point, best first (at most :data:`MAX_SUPPORTED_BY`)."""
        found = []
        for other in self.pool.cited_sharing(weights):
            if other in cited:
                continue
            finding = judge_point(weights, self.pool.of_cited(other))
            if finding.verdict == "supported":
                found.append((other, finding))
        found.sort(key=lambda item: -item[1].coverage)
        return found[:MAX_SUPPORTED_BY]

    def unknown(self, cited: Sequence[str]) -> list[str]:
        return [cid for cid in cited if not self.reader.known(cid)]

    @classmethod
    def of(cls, index: Index, result: GlobalSearchResult) -> _Checker:
        """The checker of a finished run: its answer (none for ``no_results``), its units, and
        what it read (every id its batches, map answers and reduce candidates carried)."""
        read = [i for ids in result.diagnostics.batch_community_ids for i in ids]
        read += [i for c in result.reduce_candidates for i in c.answer.community_ids]
        read += [i for a in (*result.map_answers, *result.selected_answers) for i in a.community_ids]
        answer = result.answer if result.status != RunStatus.NO_RESULTS else ""
        return cls(index, answer, unit=result_unit(result), read=read)

    def offline_reason(self, finding: Finding) -> str:
        if not finding.checkable:
            return "The point has no words to check."
        held = _percent(finding.coverage)
        if finding.verdict == "supported":
            return f"Its cited texts hold {held} of its words (weighted by how rare each word is)."
        if finding.verdict == "partial":
            return f"Its cited texts hold {held} of its words: part of it is not said there."
        return f"Its cited texts hold {held} of its words at most."

    def finish(
        self, point: Point, cited: tuple[str, ...], *, verdict: SupportVerdict, evidence: tuple[SupportEvidence, ...], reason: str,
        coverage: float | None = None, notes: tuple[str, ...] = (), error: str | None = None,
    ) -> SupportPoint:
        """The point's record, with the ids it cites that the index lacks and, unless it is
        supported, the other ids that support it."""
        words: list[str] = []
        missing = self.unknown(cited)
        if missing:
            words.append(f"{_noun(self.unit, len(missing)).capitalize()} {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not in the index.")
        if reason:
            words.append(reason)
        supported_by: tuple[str, ...] = ()
        elsewhere: tuple[SupportEvidence, ...] = ()
        if verdict != "supported":
            found = self.elsewhere(self.pool.weights(point.plain), cited)
            if found:
                supported_by = tuple(cid for cid, _ in found)
                elsewhere = tuple(f.evidence()[0] for _, f in found if f.evidence())
                named = [f"{_noun(self.unit)} {cid} ({'another point cites it' if cid in self.cited_anywhere else 'the run read it'})" for cid in supported_by]
                words.append(f"Said by {', '.join(named)}, not by what the point cites.")
        return SupportPoint(
            text=point.text, communities=cited, verdict=verdict, evidence=evidence, start=point.start, end=point.end,
            coverage=coverage, reason=" ".join(words), supported_by=supported_by, elsewhere=elsewhere, notes=notes, error=error,
        )

    def offline(self, point: Point, cited: tuple[str, ...]) -> SupportPoint:
        sentences = self.own_sentences(cited)
        finding = judge_point(self.pool.weights(point.plain), sentences)
        reason = self.offline_reason(finding) if sentences or not self.unknown(cited) else ""
        return self.finish(point, cited, verdict=finding.verdict, evidence=finding.evidence(), reason=reason, coverage=finding.coverage)

    def judged_points(self) -> list[JudgedPoint]:
        return [JudgedPoint(n, p.plain, cited, tuple(self.own_units(cited))) for n, (p, cited) in enumerate(self.points, start=1)]

    def check(self, judge: JudgeName, judged_by: str, points: Sequence[SupportPoint], **figures: object) -> SupportCheck:
        return SupportCheck(
            judge=judge, judged_by=judged_by, unit=self.unit, points=tuple(points), uncited=self.uncited,
            checked_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), **figures,  # type: ignore[arg-type]
        )


def offline_support(index: Index, result: GlobalSearchResult) -> SupportCheck:
    """The offline judge's check of a finished run (deterministic, no model; see the module)."""
    return _offline(_Checker.of(index, result))


def _offline(checker: _Checker) -> SupportCheck:
    return checker.check("offline", LEXICAL_JUDGE_IDENTITY, [checker.offline(p, cited) for p, cited in checker.points])


async def check_support(
    index: Index,
    result: GlobalSearchResult,
    judge: JudgeName = "offline",
    *,
    model: ChatModel | None = None,
    settings: SupportSettings | None = None,
    cache: MapCache | None = None,
    spending: SpendingLimit | None = None,
    tokenizer: Tokenizer | None = None,
) -> SupportCheck:
    """Check whether each point of ``result``'s answer is backed by what it cites (see the
    module's invariants). ``judge="offline"`` is :func:`offline_support`; ``judge="model"``
    asks ``model`` (required) through the engine's retry loop, its calls packed and bounded by
    ``settings``, its replies kept in ``cache``, no call passing ``spending``'s limit."""
    return await _judged(_Checker.of(index, result), judge, model=model, settings=settings, cache=cache, spending=spending, tokenizer=tokenizer)


async def check_answer_support(
    index: Index,
    answer: str,
    judge: JudgeName = "offline",
    *,
    method: str = GLOBAL,
    read: Sequence[str] = (),
    model: ChatModel | None = None,
    settings: SupportSettings | None = None,
    cache: MapCache | None = None,
    spending: SpendingLimit | None = None,
    tokenizer: Tokenizer | None = None,
) -> SupportCheck:
    """:func:`check_support` of an answer's text alone, for an answer whose run is not at hand
    (an evaluation's kept answers): ``method`` says what its citations name, ``read`` what the
    run read when it is known (the ids searched for other support, and the words' weights)."""
    checker = _Checker(index, answer, unit="community" if method == GLOBAL else "source", read=read)
    return await _judged(checker, judge, model=model, settings=settings, cache=cache, spending=spending, tokenizer=tokenizer)


async def _judged(
    checker: _Checker,
    judge: JudgeName,
    *,
    model: ChatModel | None,
    settings: SupportSettings | None,
    cache: MapCache | None,
    spending: SpendingLimit | None,
    tokenizer: Tokenizer | None,
) -> SupportCheck:
    if judge == "offline":
        return _offline(checker)
    if judge != "model":
        raise ValueError(f"Unknown support judge {judge!r}: the judges are offline and model.")
    if model is None:
        raise ValueError("The model judge needs a model.")
    settings = settings or SupportSettings()
    points = checker.judged_points()
    calls = plan_support_calls(points, unit=checker.unit, settings=settings, tokenizer=tokenizer)
    judged = await judge_with_model(model, points, calls, settings=settings, cache=cache, spending=spending, tokenizer=tokenizer)
    records = []
    for asked, (point, cited) in zip(points, checker.points):
        verdict = judged.verdicts[asked.number]
        records.append(
            checker.finish(point, cited, verdict=verdict.verdict, evidence=verdict.evidence, reason=verdict.reason, notes=verdict.notes, error=verdict.error)
        )
    return checker.check(
        "model", model_identity(model), records, calls=judged.calls, cache_hits=judged.cache_hits, failed_calls=judged.failed_calls, usage=judged.usage,
    )


def estimate_support(
    index: Index,
    result: GlobalSearchResult,
    *,
    model: object | None = None,
    settings: SupportSettings | None = None,
    cache: MapCache | None = None,
    tokenizer: Tokenizer | None = None,
) -> SupportCost:
    """What the model judge's check of ``result`` would cost: the very calls it would send,
    those ``cache`` answers for ``model`` counted apart."""
    checker = _Checker.of(index, result)
    calls = plan_support_calls(checker.judged_points(), unit=checker.unit, settings=settings, tokenizer=tokenizer)
    return cost_of_calls(calls, model=model, cache=cache, tokenizer=tokenizer)


def forecast_support(
    index: Index, request: GlobalSearchRequest, *, settings: SupportSettings | None = None, tokenizer: Tokenizer | None = None
) -> SupportCost:
    """What the model judge's check of a run of ``request`` would cost, before the run (the
    preview's line): :data:`FORECAST_POINTS` points, each citing one of the communities the
    request's level maps over (a chunk for the ``text`` and ``vector`` methods), sized from
    :data:`FORECAST_SAMPLE` of them spread over the level. An estimate (``forecast``)."""
    unit: ReferenceKind = "community" if request.method == GLOBAL else "source"
    reader = UnitReader(index, unit)
    if unit == "community":
        ids = [c.id for c in index.select_communities(LEAF if request.dynamic else request.community_level)]
    else:
        ids = list(source_table(index))
    step = max(1, len(ids) // FORECAST_SAMPLE)
    sample = ids[::step][:FORECAST_SAMPLE]
    points = []
    for number, cid in enumerate(sample, start=1):
        units = tuple(reader.units(cid))
        first = units[0].text.strip().splitlines()[0] if units and units[0].text.strip() else cid
        points.append(JudgedPoint(number, first, (cid,), units))
    calls = plan_support_calls(points, unit=unit, settings=settings, tokenizer=tokenizer)
    return scaled_cost(cost_of_calls(calls, tokenizer=tokenizer, forecast=True), FORECAST_POINTS)


def marked_answer(answer: str, check: SupportCheck) -> str:
    """``answer`` with each checked point followed by its mark in words (``[✓ supported]``,
    ``[~ partly supported]``, ``[✗ not supported]``), where it ends: the text as written, marked."""
    marked = answer
    for point in sorted(check.points, key=lambda p: p.end, reverse=True):
        if 0 < point.end <= len(marked) and marked[point.start : point.end].split() == point.text.split():
            marked = f"{marked[: point.end]} {verdict_mark(point.verdict)}{marked[point.end :]}"
    return marked


def support_lines(check: SupportCheck) -> list[str]:
    """The check in plain text, after the marked answer: the summary line, what it leaves out,
    and for each point not supported why (and who says it instead)."""
    lines = [f"Support check ({check.judge} judge, {check.judged_by}): {check.summary_line()}."]
    if detail := check.detail_line():
        lines.append(f"  {detail}")
    for number, point in enumerate(check.points, start=1):
        if point.verdict != "supported":
            lines.append(f"  point {number} {verdict_mark(point.verdict)}: {point.reason}".rstrip())
    if check.calls or check.cache_hits:
        lines.append(f"  {counted(check.calls, 'model call')}, {counted(check.cache_hits, 'cache hit')}, {check.usage.total_tokens:,} tokens")
    return lines


__all__ = [
    "FORECAST_POINTS",
    "FORECAST_SAMPLE",
    "check_answer_support",
    "check_support",
    "estimate_support",
    "forecast_support",
    "marked_answer",
    "offline_support",
    "support_lines",
]
