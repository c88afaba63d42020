"""Untrusted text (from an index, a model or a URL) made inert where the app shows it: in
Plotly labels and hover text (:func:`plot_text`) and in Streamlit Markdown
(:func:`escape_markdown`). The one place each escaping rule lives; no streamlit import.
"""

from __future__ import annotations

import html
import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*\[\]<>|~$])")
_LINE_START = re.compile(r"^(\s*)([#>+\-=]|\d+[.)])")


def plot_text(text: object) -> str:
    """``text`` made inert for Plotly labels and hover text (which interpret ``<b>``, ``<a>``…)."""
    return html.escape(str(text), quote=False)


def escape_markdown(text: str) -> str:
    """``text`` on one line, safe inside Markdown: no HTML, links, images, code, emphasis with
    ``*``, tables, strike-through, maths or Streamlit ``:color[...]`` directives, and no block
    syntax at the start. Plain prose (``.``, ``:``, ``_`` within words, paths) is left as is, so
    messages stay readable and searchable."""
    line = _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))

    def escape_start(match: re.Match[str]) -> str:
        lead, mark = match.group(1), match.group(2)
        return lead + (mark[:-1] + "\\" + mark[-1] if mark[0].isdigit() else "\\" + mark)

    return _LINE_START.sub(escape_start, line)


__all__ = ["escape_markdown", "plot_text"]
