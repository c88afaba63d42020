"""The app's pages, in one place. A page whose file is missing is left out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

APP_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class PageSpec:
    path: str
    title: str
    icon: str
    url_path: str
    default: bool = False


PAGE_SPECS: tuple[PageSpec, ...] = (
    PageSpec("pages/explore.py", "Explore", ":material/travel_explore:", "explore", default=True),
    PageSpec("pages/provenance.py", "Provenance", ":material/account_tree:", "provenance"),
    PageSpec("pages/compare.py", "Compare", ":material/compare_arrows:", "compare"),
    PageSpec("pages/index_browser.py", "Index browser", ":material/folder_open:", "index_browser"),
    PageSpec("pages/sweeps.py", "Sweeps", ":material/tune:", "sweeps"),
    PageSpec("pages/evaluate.py", "Evaluate", ":material/scoreboard:", "evaluate"),
)


def available_specs(root: Path = APP_ROOT) -> list[PageSpec]:
    return [spec for spec in PAGE_SPECS if (root / spec.path).is_file()]


def build_pages(root: Path = APP_ROOT) -> list[st.Page]:
    """The ``st.Page`` of every page whose file exists; Explore is the default (served at ``/``)."""
    return [
        st.Page(spec.path, title=spec.title, icon=spec.icon, url_path=spec.url_path, default=spec.default)
        for spec in available_specs(root)
    ]


def ensure_app_navigation() -> None:
    """Make a page file that Streamlit ran on its own rerun through ``app.py``'s navigation.

    With a folder named ``pages/`` beside ``app.py``, Streamlit starts in its legacy
    pages-directory mode and, until some session has run ``app.py`` (whose ``st.navigation``
    turns that mode off for the process), serves a deep link such as ``/compare?runs=...`` by
    running the page file alone: no page config, no navigation. Each page calls this first;
    in that mode it turns the legacy mode off and reruns, so ``app.py`` serves the same URL.
    """
    try:  # an internal of Streamlit (1.36+); without it there is nothing to switch off
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:
        return
    if getattr(PagesManager, "uses_pages_directory", None):
        PagesManager.uses_pages_directory = False
        st.rerun()
