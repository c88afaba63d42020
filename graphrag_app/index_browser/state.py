"""The Index browser's state in this browser session, and its widgets (each named once, by its key)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..session import PageState, Widget


@dataclass
class BrowseState(PageState):
    """Index browser: the index the entity graph's community box was set for (another index
    resets it: its community ids mean other communities)."""

    KEY: ClassVar[str] = "index_browser_page"

    graph_index: str | None = None


INDEX, FOLDER = Widget[str]("browse_index"), Widget[str]("browse_folder", "")
FILTER = Widget[str]("browse_filter", "")
GRAPH_COMMUNITY = Widget[str]("browse_graph_community")
SIZE_BY, KIND, DEPTH = Widget[str]("browse_size_by"), Widget[str]("browse_kind"), Widget[int]("browse_depth")


__all__ = ["DEPTH", "FILTER", "FOLDER", "GRAPH_COMMUNITY", "INDEX", "KIND", "SIZE_BY", "BrowseState"]
