"""Compare's state in this browser session, and its widgets (each named once, by its key)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..session import PageState, Widget


@dataclass
class CompareState(PageState):
    """Compare: the runs the URL named when the page last read or wrote it, and a notice for the
    next drawing."""

    KEY: ClassVar[str] = "compare_page"

    url_runs: list[str] | None = None
    notice: str | None = None


SELECTED = Widget[list[str]]("compare_runs", make=list)
"""The runs chosen for comparison (the multiselect)."""
HISTORY_RUN = Widget[str]("compare_history_run")
"""The run the history's export and delete act on."""
OVERLAP_SET = Widget[str]("compare_overlap_set")
POINTS_LEFT, POINTS_RIGHT = Widget[str]("compare_points_left"), Widget[str]("compare_points_right")
ONLY_DIFFERING = Widget[bool]("compare_only_differing", False)


__all__ = ["HISTORY_RUN", "ONLY_DIFFERING", "OVERLAP_SET", "POINTS_LEFT", "POINTS_RIGHT", "SELECTED", "CompareState"]
