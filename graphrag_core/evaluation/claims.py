"""Claim-based metrics, the paper's second experiment (evaluation spec section 4).

Comprehensiveness is the number of distinct claims of an answer; diversity is the number of
clusters when two claims are linked whenever their ROUGE-L F1 is at least a threshold (single
linkage). ROUGE-L compares English by lowercase words and Chinese by characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from ..errors import ClaimsOutputError, EvaluationError
from ..llm.base import ChatModel, ChatRequest, TokenUsage
from ..retry import Attempts, CallBudget, CallFailed, complete_with_retry
from ..spending import SpendingLimit
from ..parsing import invalid_output, parse_json_output
from ..prompts import CLAIMS_OUTPUT_SCHEMA, render_claims_messages

DEFAULT_CLAIM_THRESHOLD = 0.5
CLAIM_THRESHOLD_RANGE = (0.5, 0.8)
CLAIMS_OUTPUT_RESERVE = 1024

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U000323af"
"""Han ideographs: the unified blocks, extension A, the compatibility blocks and extensions B to H."""
_UNIT_RE = re.compile(rf"[{_CJK}]|[^\W{_CJK}_]+")


def rouge_units(text: str) -> list[str]:
    """The units ROUGE-L compares: each Chinese character, and each lowercase word otherwise."""
    return [u.lower() for u in _UNIT_RE.findall(text)]


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_l_f1(a: str, b: str) -> float:
    """ROUGE-L F1 of two texts (0 when either has no units)."""
    return rouge_l_f1_of_units(rouge_units(a), rouge_units(b))


def rouge_l_f1_of_units(ua: Sequence[str], ub: Sequence[str]) -> float:
    """ROUGE-L F1 of two texts already cut into :func:`rouge_units` (0 when either has none)."""
    if not ua or not ub:
        return 0.0
    lcs = _lcs(ua, ub)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(ua), lcs / len(ub)
    return 2 * precision * recall / (precision + recall)


def _normal(claim: str) -> str:
    return " ".join(claim.split()).casefold()


def distinct_claims(claims: Sequence[str]) -> list[str]:
    """The non-blank claims, each once (compared without case and extra spaces), in order."""
    seen: dict[str, str] = {}
    for claim in claims:
        key = _normal(claim)
        if key and key not in seen:
            seen[key] = claim.strip()
    return list(seen.values())


def validate_threshold(threshold: float) -> float:
    low, high = CLAIM_THRESHOLD_RANGE
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not low <= threshold <= high:
        raise EvaluationError(f"threshold must be between {low} and {high}.")
    return float(threshold)


def cluster_claims(claims: Sequence[str], *, threshold: float = DEFAULT_CLAIM_THRESHOLD) -> list[list[str]]:
    """Single-linkage clusters of the distinct claims: linked when ROUGE-L F1 >= ``threshold``."""
    threshold = validate_threshold(threshold)
    items = distinct_claims(claims)
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if root(i) != root(j) and rouge_l_f1(items[i], items[j]) >= threshold:
                parent[root(j)] = root(i)
    clusters: dict[int, list[str]] = {}
    for i, claim in enumerate(items):
        clusters.setdefault(root(i), []).append(claim)
    return list(clusters.values())


class ClaimMetrics(BaseModel):
    """An answer's claims and the two metrics computed from them."""

    model_config = ConfigDict(frozen=True)

    claims: list[str]
    comprehensiveness: int
    diversity: int
    threshold: float


def claim_metrics(claims: Sequence[str], *, threshold: float = DEFAULT_CLAIM_THRESHOLD) -> ClaimMetrics:
    distinct = distinct_claims(claims)
    clusters = cluster_claims(distinct, threshold=threshold)
    return ClaimMetrics(claims=distinct, comprehensiveness=len(distinct), diversity=len(clusters), threshold=float(threshold))


def parse_claims_output(raw: str) -> list[str]:
    """The ``claims`` list of a claims reply; other shapes raise :class:`ClaimsOutputError`."""
    value = parse_json_output(raw, error=ClaimsOutputError)
    claims = value.get("claims") if isinstance(value, dict) else None
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        raise invalid_output(ClaimsOutputError, "Claims output must contain a list of strings claims.", raw)
    return [c.strip() for c in claims if c.strip()]


async def extract_claims(answer: str, model: ChatModel, *, spending: SpendingLimit | None = None) -> tuple[list[str], TokenUsage]:
    """The factual claims the model finds in ``answer`` (purpose ``"claims"``), and the usage;
    with ``spending``, ``SpendLimitReached`` instead of a call that could pass its limit."""
    request = ChatRequest(
        purpose="claims", messages=render_claims_messages(answer), max_tokens=CLAIMS_OUTPUT_RESERVE, output_schema=CLAIMS_OUTPUT_SCHEMA
    )
    tally = Attempts()
    try:
        reply = await complete_with_retry(model, request, parse_claims_output, attempts=tally, budget=CallBudget(spending=spending))
    except CallFailed as failed:
        raise failed.error from None
    return reply.value, tally.usage


__all__ = [
    "DEFAULT_CLAIM_THRESHOLD",
    "ClaimMetrics",
    "claim_metrics",
    "cluster_claims",
    "distinct_claims",
    "extract_claims",
    "parse_claims_output",
    "rouge_l_f1",
    "rouge_units",
]
