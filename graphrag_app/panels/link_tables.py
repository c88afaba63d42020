"""Tables whose "open" cells open what they name in one click.

A link column of ``st.dataframe`` (``LinkColumn``) opens nothing on the first click in this
Streamlit: the click selects the cell, and the next click opens the link of the cell selected
before it. A link table shows an ``open ›`` column instead and follows a click on it through the
table's cell selection: the row's link opens at once, in this tab, so Back returns. The links
stay in the table (a hidden column), so what the table holds is unchanged.

A link to another page of the app switches to it with the link's parameters; a link to the page
shown changes its URL (a new history entry); a link to a stored run (``./?run=...``) opens the
run on Explore, as Explore's own Open button does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ..live import ShownRun, open_run
from ..navigation import EXPLORE_PAGE, PAGE_SPECS
from ..session import Widget
from ..settings import load_settings
from ..urls import RUN_PARAM, to_query_params

if TYPE_CHECKING:
    import pandas as pd  # imported where a table is built: a page that draws none does not load it

OPEN_TEXT = "open ›"
"""What an open cell says."""
OPEN_COLOR = "color: #1c6ed5"
"""An open cell is drawn in the colour of a link."""
PENDING_LINK = Widget[tuple[str, dict[str, str]]]("link_tables_pending")
"""The page and parameters a click asked for, followed on the next script run."""


def plain_number(value: object) -> str:
    """A float as an unstyled table shows it: up to four decimals, no trailing zeros, blank for NaN."""
    import pandas as pd

    if value is None or pd.isna(value):  # type: ignore[arg-type]
        return ""
    return f"{value:,.4f}".rstrip("0").rstrip(".")


def destination(url: str) -> tuple[str, dict[str, str]]:
    """The page file and query parameters a relative app link names: ``provenance?community=3``
    is ``pages/provenance.py`` with ``{"community": "3"}``; ``./?run=abc`` is Explore's."""
    parts = urlsplit(url)
    path = parts.path.strip("./")
    page = next((spec.path for spec in PAGE_SPECS if spec.url_path == path), EXPLORE_PAGE)
    return page, dict(parse_qsl(parts.query))


def _clicked(key: str, links: list[str | None], column: str, here: str | None) -> None:
    """``on_select`` of a link table: a click on an open cell follows that row's link."""
    cells = Widget[dict](key).selection().get("cells")
    if not cells:
        return
    row, clicked_column = cells[0]
    url = links[row] if clicked_column == column and 0 <= row < len(links) else None
    if not url:
        return
    page, params = destination(url)
    if page == here:  # the page shown: its URL changes, the browser keeps a history entry
        st.query_params.from_dict(params)
        return
    if page == EXPLORE_PAGE and RUN_PARAM in params:  # the run opens as Explore's Open opens it
        shown = ShownRun.get()
        if not shown.running and open_run(shown, params[RUN_PARAM], app=load_settings()) and shown.settings is not None:
            params = to_query_params(shown.settings, run_id=params[RUN_PARAM])
    PENDING_LINK.set((page, params))


def follow_pending_link() -> None:
    """Switch to the page a click in a link table asked for (called before a link table draws)."""
    pending = PENDING_LINK.pop()
    if pending is not None:
        page, params = pending
        st.switch_page(page, query_params=params)


def link_table(
    container: DeltaGenerator,
    frame: pd.DataFrame,
    *,
    link_column: str,
    key: str,
    here: str | None = None,
    open_column: str = "open",
    open_help: str | None = None,
    column_config: Mapping[str, Any] | None = None,
    **dataframe: Any,
) -> None:
    """``frame`` as a table whose first column, ``open_column``, opens each row's link in one
    click (``link_column`` holds the links, kept but hidden). ``here`` is the page file drawing it (a link to
    it changes the URL in place). Other keywords go to ``st.dataframe``."""
    import pandas as pd

    follow_pending_link()
    links = [None if pd.isna(url) or not url else str(url) for url in frame[link_column]] if len(frame) else []
    shown = frame.copy()
    shown.insert(0, open_column, [OPEN_TEXT if url else "" for url in links])  # first: where a reader looks for the action
    config = {**(column_config or {}), link_column: None, open_column: st.column_config.TextColumn(open_column, help=open_help, width="small")}
    # a styled table shows the Styler's text for every cell: numbers keep the plain look of an unstyled one
    floats = [c for c in shown.columns if pd.api.types.is_float_dtype(shown[c]) and c not in (column_config or {})]
    container.dataframe(
        shown.style.map(lambda _value: OPEN_COLOR, subset=[open_column]).format(plain_number, subset=floats),
        column_config=config,
        key=key,
        on_select=lambda: _clicked(key, links, open_column, here),
        selection_mode="single-cell",
        **dataframe,
    )


__all__ = ["OPEN_TEXT", "destination", "follow_pending_link", "link_table", "plain_number"]
