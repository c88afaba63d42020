"""The offline model's reply to a support check call: the offline judge
(:mod:`graphrag_core.support.lexical`) run over the texts and points the prompt holds.

So ``--support-judge model`` with the offline model goes through every step a real model's
check takes (packing, calls, cache, parsing, quote checks) and gives the offline judge's
verdicts, weighed over the prompt's texts alone. Pure: a function of the prompt.
"""

from __future__ import annotations

from ...context import parse_support_prompt
from ...support.lexical import SentencePool, judge_point, unit_sentences
from ...support.units import SupportUnit
from .judging import HEURISTIC_LABEL


def support_reply(user: str) -> dict[str, object]:
    """``{"points": [...]}``: for each point of the prompt, the offline judge's verdict over the
    texts it cites and its quotes, copied from them."""
    texts, points = parse_support_prompt(user)
    units = [SupportUnit(kind, uid, cited, text) for kind, uid, cited, text in texts]  # type: ignore[arg-type]
    pool = SentencePool()
    for unit in units:
        pool.add(unit_sentences(unit))
    entries: list[dict[str, object]] = []
    for number, cited, text in points:
        finding = judge_point(pool.weights(text), [s for cid in cited for s in pool.of_cited(cid)])
        evidence = [{"kind": e.kind, "id": e.id, "quote": e.quote} for e in finding.evidence()]
        reason = f"{HEURISTIC_LABEL}: the cited texts hold {round(100 * finding.coverage)}% of the point's words."
        entries.append({"point": number, "verdict": finding.verdict, "evidence": evidence, "reason": reason})
    return {"points": entries}


__all__ = ["support_reply"]
