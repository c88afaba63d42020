"""A support check as a section of a run's Markdown report (pure; every text through
:mod:`graphrag_core.markdown`, so the section holds no HTML and no link)."""

from __future__ import annotations

from ..markdown import markdown_cell, markdown_table, markdown_text
from .models import SupportCheck, SupportEvidence, verdict_mark

SUPPORT_HEADING = "## Support check"
QUOTE_CHARS = 200
"""A quote is cut to this many characters in the report's table."""
NOT_CHECKED = "_Not checked: `graphrag-explorer query ... --check-support` checks a run's points as it ends, `runs check RUN_ID` a stored run's._"


def _quote(evidence: SupportEvidence) -> str:
    quote = evidence.quote if len(evidence.quote) <= QUOTE_CHARS else evidence.quote[: QUOTE_CHARS - 1] + "…"
    return f'{evidence.kind} {evidence.id}: "{quote}"'


def support_markdown(check: SupportCheck | None) -> list[str]:
    """The section's lines: the summary line and who judged, then one row per point (its text,
    what it cites, its verdict in words, its quotes, why, and who else says it)."""
    lines = [SUPPORT_HEADING, ""]
    if check is None:
        return lines + [NOT_CHECKED, ""]
    detail = check.detail_line()
    lines += [
        f"**{markdown_text(check.summary_line())}** ({check.judge} judge, {markdown_text(check.judged_by)}"
        + (f", checked {markdown_text(check.checked_at)}" if check.checked_at else "") + ")" + (f" · {markdown_text(detail)}" if detail else ""),
        "",
    ]
    if check.calls or check.cache_hits:
        lines += [f"Model judge: {check.calls:,} calls, {check.cache_hits:,} from the cache, {check.usage.total_tokens:,} tokens.", ""]
    if not check.points:
        return lines
    rows = [
        (
            number, point.text, ", ".join(point.communities), verdict_mark(point.verdict),
            "; ".join(_quote(e) for e in point.evidence) or "-",
            " ".join(part for part in (point.reason, *point.notes) if part) or "-",
        )
        for number, point in enumerate(check.points, start=1)
    ]
    lines += markdown_table(["#", "point", "cites", "verdict", "evidence", "why"], rows) + [""]
    if check.uncited:
        lines += ["Sentences that cite nothing (not points of the check):", ""]
        lines += [f"- {markdown_cell(sentence)}" for sentence in check.uncited] + [""]
    return lines


__all__ = ["NOT_CHECKED", "SUPPORT_HEADING", "support_markdown"]
