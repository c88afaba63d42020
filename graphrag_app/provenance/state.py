"""Provenance's state in this browser session, and its widgets (each named once, by its key)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..session import PageState, Widget


@dataclass
class ProvenanceState(PageState):
    """Provenance: the (index, community) of the URL as the page last read or wrote it, and the
    run Back to Explore was clicked for (None when it was not)."""

    KEY: ClassVar[str] = "provenance_page"

    url_community: tuple[str, str | None] | None = None
    back_to: str | None = None


COMMUNITY = Widget[str]("provenance_community")
"""The community the page shows (the picker; a hierarchy link sets it)."""
BACK_KEY = "provenance_back"


__all__ = ["BACK_KEY", "COMMUNITY", "ProvenanceState"]
