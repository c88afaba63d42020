"""Two answers side by side, point by point (:func:`graphrag_core.answer_points.align_answers`):
the points both make on one row, the points only one answer makes marked, each point's
citations linked to their communities' provenance. Used by Compare and by Evaluate's drill-down.

:func:`point_markdown` is pure; :func:`draw_points` draws the panel into the container it is given.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.answer_points import Alignment, Point, align_answers

from ..text import safe_markdown

Render = Callable[[str], str]
"""A point's text as safe Markdown with its citations linked (e.g. :func:`graphrag_app.panels.evidence.answer_markdown` for one run)."""

ONLY_HERE = ":orange-badge[only here]"
"""How a point only one answer makes is marked."""
PANEL_HEIGHT_PX = 520


def point_markdown(point: Point | None, render: Render, *, alone: bool) -> str:
    """A point as ``render`` draws it (safe Markdown, citations linked), marked when only its answer makes it."""
    if point is None:
        return ""
    text = render(point.text)
    return f"{ONLY_HERE} {text}" if alone else text


def summary(alignment: Alignment, left: str, right: str) -> str:
    """``"5 points both make; 2 only in A; 1 only in B"`` (Markdown, labels escaped)."""
    return (
        f"**{alignment.shared}** {'point' if alignment.shared == 1 else 'points'} both make; "
        f"**{alignment.only_in('left')}** only in {safe_markdown(left)}; **{alignment.only_in('right')}** only in {safe_markdown(right)}"
    )


def draw_points(
    container: DeltaGenerator, *, left: tuple[str, str, Render], right: tuple[str, str, Render], key: str
) -> Alignment:
    """The two answers (``(label, text, render)`` each) aligned by their points; a toggle keeps
    only the points one answer makes. Returns the alignment drawn."""
    (left_label, left_text, left_render), (right_label, right_text, right_render) = left, right
    alignment = align_answers(left_text, right_text)
    with container:
        top = st.columns([3, 1], vertical_alignment="center")
        top[0].markdown(f"{summary(alignment, left_label, right_label)} (marked {ONLY_HERE}).")
        only_differences = top[1].toggle("Only the differences", key=f"{key}_only_differences", help="Show only the points one answer makes and the other lacks.")
        heads = st.columns(2)
        heads[0].markdown(f"**{safe_markdown(left_label)}**")
        heads[1].markdown(f"**{safe_markdown(right_label)}**")
        rows = [r for r in alignment.rows if r.only is not None or not only_differences]
        with st.container(height=PANEL_HEIGHT_PX if len(rows) > 8 else "content", border=True, key=f"{key}_rows"):
            if not rows:
                st.caption("The two answers make the same points.")
            for row in rows:
                cells = st.columns(2, gap="medium")
                cells[0].markdown(point_markdown(row.left, left_render, alone=row.only == "left"))
                cells[1].markdown(point_markdown(row.right, right_render, alone=row.only == "right"))
    return alignment


__all__ = ["ONLY_HERE", "Render", "draw_points", "point_markdown", "summary"]
