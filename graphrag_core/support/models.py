"""What a support check finds (pure models): each point of an answer with its verdict and the
words that back it, and the check as a whole.

Invariants: every model is frozen; a point's ``evidence`` quotes are verbatim spans of their
units' texts (``unit_text[start:end]``, found whitespace aside: :func:`.units.find_quote`),
checked by the engine whichever judge made them; a ``supported`` point has at least one quote;
``supported_by`` never names a unit the point cites.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..citations import ReferenceKind
from ..llm.base import TokenUsage
from ..wording import counted

SupportVerdict = Literal["supported", "partial", "unsupported"]
VERDICTS: tuple[SupportVerdict, ...] = ("supported", "partial", "unsupported")
"""The verdicts, from best to worst."""
VERDICT_LABELS: dict[str, str] = {"supported": "supported", "partial": "partly supported", "unsupported": "not supported"}
"""Each verdict in words, the same on every page, in reports and in the command line's text."""
VERDICT_MARKS: dict[str, str] = {"supported": "✓", "partial": "~", "unsupported": "✗"}
"""Each verdict's mark, always shown with its words (a mark is never the only signal)."""
EvidenceKind = Literal["summary", "claim", "chunk"]
EVIDENCE_KINDS: tuple[EvidenceKind, ...] = ("summary", "claim", "chunk")
JudgeName = Literal["offline", "model"]
JUDGES: tuple[JudgeName, ...] = ("offline", "model")
"""``offline``: the deterministic lexical judge; ``model``: a chat model asked about each point."""


def downgraded(verdict: SupportVerdict) -> SupportVerdict:
    """The verdict one step down (``unsupported`` stays)."""
    return VERDICTS[min(VERDICTS.index(verdict) + 1, len(VERDICTS) - 1)]


def verdict_mark(verdict: SupportVerdict) -> str:
    """A point's mark in plain text: ``[✓ supported]``, ``[~ partly supported]``, ``[✗ not supported]``."""
    return f"[{VERDICT_MARKS[verdict]} {VERDICT_LABELS[verdict]}]"


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True)


class SupportEvidence(_Value):
    """Words of one unit that back a point: ``quote`` is ``text[start:end]`` of the unit named by
    ``kind`` and ``id`` (a community's summary, a claim, a source chunk), reached through the
    cited unit ``community_id`` (a community, or a ``text``/``vector`` run's chunk reference)."""

    kind: EvidenceKind
    id: str
    quote: str
    community_id: str | None = None
    start: int = 0
    end: int = 0
    coverage: float | None = None
    """The share of the point's weighted words this quote holds (the offline judge's; None for a model's quote)."""

    def to_json_dict(self) -> dict[str, object]:
        """The issue's form: ``{kind, id, quote}``."""
        return {"kind": self.kind, "id": self.id, "quote": self.quote}


class SupportPoint(_Value):
    """One point of the answer (a sentence or a bullet with its citations) and its verdict.

    ``communities`` are the ids the point cites (communities, or source chunks for a ``text``
    or ``vector`` run), ``start``/``end`` its place in the answer. ``supported_by`` names the
    other units (cited elsewhere in the answer, or read by the run) that support the point when
    its own citations do not fully, each with its best quote in ``elsewhere``. ``notes`` say
    what the engine changed or could not do (a quote not found, texts left out of a call);
    ``error`` is set when the judge could not judge the point (its verdict then is
    ``unsupported``, downgraded, not a finding)."""

    text: str
    communities: tuple[str, ...]
    verdict: SupportVerdict
    evidence: tuple[SupportEvidence, ...] = ()
    start: int = 0
    end: int = 0
    coverage: float | None = None
    """The share of the point's weighted words that its evidence holds (the offline judge)."""
    reason: str = ""
    supported_by: tuple[str, ...] = ()
    elsewhere: tuple[SupportEvidence, ...] = ()
    notes: tuple[str, ...] = ()
    error: str | None = None

    def to_json_dict(self) -> dict[str, object]:
        """The issue's form (``text``, ``communities``, ``verdict``, ``evidence``) with ``reason``
        and ``supported_by``; ``notes`` and ``error`` when there are any."""
        document: dict[str, object] = {
            "text": self.text,
            "communities": list(self.communities),
            "verdict": self.verdict,
            "evidence": [e.to_json_dict() for e in self.evidence],
            "reason": self.reason,
            "supported_by": list(self.supported_by),
        }
        if self.notes:
            document["notes"] = list(self.notes)
        if self.error:
            document["error"] = self.error
        return document


class SupportCheck(_Value):
    """A support check of one answer: which judge made it (``judge``, and ``judged_by``: the
    lexical judge's version or the model's identity), every point that cites something, in
    order, and the sentences that cite nothing (``uncited``: not points of the check, listed
    so that a reader sees them). ``calls``, ``cache_hits``, ``failed_calls`` and ``usage``
    are the model judge's (zero for the offline judge)."""

    judge: JudgeName
    judged_by: str
    unit: ReferenceKind = "community"
    points: tuple[SupportPoint, ...] = ()
    uncited: tuple[str, ...] = ()
    calls: int = 0
    cache_hits: int = 0
    failed_calls: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)
    checked_at: str = ""

    def counts(self) -> dict[SupportVerdict, int]:
        """How many points have each verdict (every verdict named, 0 included)."""
        tally = Counter(p.verdict for p in self.points)
        return {v: tally.get(v, 0) for v in VERDICTS}

    @property
    def supported(self) -> int:
        return self.counts()["supported"]

    @property
    def share(self) -> float | None:
        """Supported points as a share of all points (0-1); None when nothing was cited."""
        return self.supported / len(self.points) if self.points else None

    @property
    def unjudged(self) -> int:
        """Points the judge could not judge (their call failed every attempt)."""
        return sum(1 for p in self.points if p.error)

    def summary_line(self) -> str:
        """``7 of 8 points supported`` (``No point cites a source`` when none does)."""
        if not self.points:
            return "No point of the answer cites anything to check"
        return f"{self.supported:,} of {counted(len(self.points), 'point')} supported"

    def detail_line(self) -> str:
        """What the summary line leaves out: the partly and the not supported points (when there
        are any), the points not judged, the sentences that cite nothing (``""`` when there is
        nothing to add)."""
        counts = self.counts()
        parts = [f"{counts[v]:,} {VERDICT_LABELS[v]}" for v in ("partial", "unsupported") if counts[v]]
        if self.unjudged:
            parts.append(f"{counted(self.unjudged, 'point')} not judged (the judge's reply could not be used)")
        if self.uncited:
            parts.append(f"{counted(len(self.uncited), 'sentence')} citing nothing")
        return " · ".join(parts)

    def to_json_dict(self) -> dict[str, object]:
        """The command line's ``support`` document: ``judge``, ``points`` (each in the issue's
        form), and beside them who judged, the counts, the share and the uncited sentences."""
        return {
            "judge": self.judge,
            "judged_by": self.judged_by,
            "points": [p.to_json_dict() for p in self.points],
            "counts": dict(self.counts()),
            "supported_share": self.share,
            "summary": self.summary_line(),
            "uncited": list(self.uncited),
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "usage": self.usage.model_dump(),
        }


class SupportCost(_Value):
    """What a model judge's check would cost before any call: the points it judges, its calls
    (``cached_calls`` of them answered by the cache), the prompt tokens of the calls not
    cached and the most their replies may take. ``forecast`` marks an estimate made before the
    answer exists (the preview of a run), from the index alone."""

    points: int
    calls: int
    prompt_tokens: int
    max_completion_tokens: int
    cached_calls: int = 0
    forecast: bool = False

    def text(self) -> str:
        """One line for a preview: ``support check (model judge): 2 calls, ~5,100 prompt tokens``."""
        about = "about " if self.forecast else ""
        cached = f" ({self.cached_calls:,} from the cache)" if self.cached_calls else ""
        return (
            f"support check (model judge): {about}{counted(self.calls, 'call')}{cached} for {about}{counted(self.points, 'point')}, "
            f"~{self.prompt_tokens:,} prompt tokens and at most {self.max_completion_tokens:,} completion tokens"
        )


__all__ = [
    "EVIDENCE_KINDS",
    "JUDGES",
    "VERDICTS",
    "VERDICT_LABELS",
    "VERDICT_MARKS",
    "EvidenceKind",
    "JudgeName",
    "SupportCheck",
    "SupportCost",
    "SupportEvidence",
    "SupportPoint",
    "SupportVerdict",
    "downgraded",
    "verdict_mark",
]
