"""The app's pages, in one place, and deep links through ``app.py``'s navigation.

With a folder named ``pages/`` beside ``app.py``, Streamlit starts in its legacy pages-directory
mode: until ``st.navigation`` has been called in the process, a deep link such as
``/compare?runs=...`` on a freshly started server runs the page file alone (no page config, no
navigation). ``st.navigation`` (public API) ends that mode for the process. So ``app.py`` runs
:meth:`AppNavigation.run`, and every page starts with :func:`ensure_app_navigation`: a page run
before any navigation was declared declares it, then reruns, and ``app.py`` serves the same URL.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

APP_ROOT = Path(__file__).resolve().parents[1]
SIDEBAR_WIDTH_PX = 390
"""The sidebar's width when a session opens: Explore's level picker shows its whole choice
(``level 1 · ≈478k tokens · 170 summaries``) on a 1280-pixel screen."""
PAGE_CONFIG: dict[str, str | int] = {"page_title": "GraphRAG Global Explorer", "page_icon": ":material/hub:", "layout": "wide", "initial_sidebar_state": SIDEBAR_WIDTH_PX}
SIDEBAR_CSS = f"""<style>
section[data-testid="stSidebar"][data-collapsed="false"] {{ min-width: {SIDEBAR_WIDTH_PX}px; }}
</style>"""
"""The open sidebar is never narrower than :data:`SIDEBAR_WIDTH_PX`. The page config's width is
taken only when it reaches the browser before the sidebar is first drawn, which the first
session of a freshly started server misses (the sidebar of the pages folder is drawn while the
script still imports), so that session's sidebar opened 300 px wide and cut the level picker."""


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


def page_file(url_path: str) -> str:
    """The page file served at ``url_path`` (``"provenance"`` -> ``pages/provenance.py``)."""
    return next(spec.path for spec in PAGE_SPECS if spec.url_path == url_path)


EXPLORE_PAGE = next(spec.path for spec in PAGE_SPECS if spec.default)
"""The default page's file (``/`` serves it)."""
PROVENANCE_PAGE = page_file("provenance")


def available_specs(root: Path = APP_ROOT) -> list[PageSpec]:
    return [spec for spec in PAGE_SPECS if (root / spec.path).is_file()]


def build_pages(root: Path = APP_ROOT) -> list[st.Page]:
    """The ``st.Page`` of every page whose file exists; Explore is the default (served at ``/``).
    Paths are absolute, so a page file run as the main script (a test harness) declares them too."""
    return [
        st.Page(root / spec.path, title=spec.title, icon=spec.icon, url_path=spec.url_path, default=spec.default)
        for spec in available_specs(root)
    ]


class AppNavigation:
    """The app's navigation, and whether it has been declared in this process (after which
    Streamlit serves every URL through ``app.py``). The app holds one (:func:`app_navigation`)."""

    def __init__(self, root: Path = APP_ROOT) -> None:
        self.root = root
        self._declared = threading.Event()

    @property
    def declared(self) -> bool:
        return self._declared.is_set()

    def declare(self) -> st.Page:
        """Set the page config and declare the pages (``st.navigation``); the page for this URL."""
        st.set_page_config(**PAGE_CONFIG)  # type: ignore[arg-type]
        page = st.navigation(build_pages(self.root))
        self._declared.set()
        return page

    def run(self) -> None:
        """What ``app.py`` does: declare the navigation and run the page the URL names."""
        page = self.declare()
        st.html(SIDEBAR_CSS)
        page.run()

    def ensure(self) -> None:
        """At the top of a page: when no navigation was declared yet in this process (a cold
        deep link runs the page file alone), declare it and rerun, so ``app.py`` serves this URL.
        A page file run on its own once navigation is declared (a test harness) draws as it is."""
        if self.declared:
            return
        self.declare()
        st.rerun()


@st.cache_resource(show_spinner=False)
def app_navigation() -> AppNavigation:
    """The app's one :class:`AppNavigation`."""
    return AppNavigation()


def ensure_app_navigation() -> None:
    """Each page calls this first: see :meth:`AppNavigation.ensure`."""
    app_navigation().ensure()


__all__ = ["APP_ROOT", "EXPLORE_PAGE", "PAGE_CONFIG", "PAGE_SPECS", "PROVENANCE_PAGE", "AppNavigation", "PageSpec", "app_navigation", "available_specs", "build_pages", "ensure_app_navigation", "page_file"]
