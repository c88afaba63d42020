"""Untrusted text (an index's names and summaries, a question, a model's answers and errors)
made inert inside the Markdown reports the program writes (:mod:`graphrag_core.report`,
:mod:`graphrag_core.evaluation.report`), so a report opened in any Markdown viewer runs nothing
and fetches nothing.

Invariants of :func:`markdown_text`: the result holds no raw HTML (``<``, ``>`` and ``&`` are
written as entities, so the text reads as it was), no inline link or image (``](`` is escaped)
and no link reference definition (``[x]: url`` at a line's start is escaped). Everything else,
the emphasis and lists of a model's answer included, is kept, so an answer reads as written.
:func:`markdown_cell` also keeps a value on one line of one table cell.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

_LINK_TARGET = re.compile(r"\]\(")
_REFERENCE_DEFINITION = re.compile(r"^(\s{0,3})\[(?=[^\]\n]*\]:)", re.M)


def markdown_text(value: object) -> str:
    """``value`` as Markdown text that holds no HTML, link or image (see the module's invariants)."""
    text = html.escape("" if value is None else str(value), quote=False)
    text = _LINK_TARGET.sub(r"]\\(", text)
    return _REFERENCE_DEFINITION.sub(r"\1\\[", text)


def markdown_cell(value: object) -> str:
    """``value`` made safe for one Markdown table cell: inert (:func:`markdown_text`), on one
    line, its pipes escaped."""
    return " ".join(markdown_text(value).split()).replace("|", "\\|")


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """The lines of a Markdown table with that header and one line per row, every cell through
    :func:`markdown_cell`."""
    lines = ["| " + " | ".join(markdown_cell(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(markdown_cell(v) for v in row) + " |" for row in rows]
    return lines


__all__ = ["markdown_cell", "markdown_table", "markdown_text"]
