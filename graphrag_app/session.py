"""Typed session state: one :class:`ExplorerSession` under one key, plus the widget keys.

Streamlit keeps a widget's value under its key only while the widget is drawn; leaving the
Explore page drops them. The session keeps the last :class:`RunSettings`, and
:func:`seed_widgets` puts them back before the widgets are drawn again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from graphrag_core.state import RunState

from .runner import RunHandle
from .urls import RunSettings

SESSION_KEY = "graphrag_explorer"


class Keys:
    """The keys of the Explore page's widgets (stable: tests find widgets by them)."""

    QUESTION = "question"
    INDEX = "index"
    FOLDER = "index_folder"
    LEVEL = "community_level"
    MAP_BUDGET = "map_token_budget"
    REDUCE_BUDGET = "reduce_token_budget"
    MAP_RESERVE = "map_output_reserve"
    REDUCE_RESERVE = "reduce_output_reserve"
    CONCURRENCY = "map_concurrency"
    SEED = "seed"
    NEW_SEED = "new_seed"
    STRATEGY = "reduce_strategy"
    CLAIMS = "include_claims"
    SOURCES = "include_sources"
    TOKENIZER = "tokenizer"
    MODEL = "model"
    MODEL_NAME = "model_name"
    BASE_URL = "base_url"
    API_KEY = "api_key"
    LATENCY = "latency_s"
    USE_CACHE = "use_map_cache"
    SELECTION = "community_selection"
    RATING_THRESHOLD = "rating_threshold"
    KEEP_PARENT = "keep_parent"
    RATING_REPEATS = "rating_repeats"
    FALLBACK_LEVEL = "fallback_max_level"
    RATING_RESERVE = "rating_output_reserve"
    RUN = "run_global_search"
    STOP = "stop"


FOLDER_CHOICE = "__folder__"
"""The Index selectbox's option for "a folder path" (the path goes in the Index folder box)."""

# RunSettings field -> widget key, for the fields drawn as one widget each.
FIELD_KEYS: dict[str, str] = {
    "query": Keys.QUESTION,
    "community_level": Keys.LEVEL,
    "map_token_budget": Keys.MAP_BUDGET,
    "reduce_token_budget": Keys.REDUCE_BUDGET,
    "map_output_reserve": Keys.MAP_RESERVE,
    "reduce_output_reserve": Keys.REDUCE_RESERVE,
    "map_concurrency": Keys.CONCURRENCY,
    "seed": Keys.SEED,
    "reduce_strategy": Keys.STRATEGY,
    "include_claims": Keys.CLAIMS,
    "include_sources": Keys.SOURCES,
    "tokenizer": Keys.TOKENIZER,
    "model": Keys.MODEL,
    "model_name": Keys.MODEL_NAME,
    "base_url": Keys.BASE_URL,
    "latency_s": Keys.LATENCY,
    "community_selection": Keys.SELECTION,
    "rating_threshold": Keys.RATING_THRESHOLD,
    "keep_parent": Keys.KEEP_PARENT,
    "rating_repeats": Keys.RATING_REPEATS,
    "fallback_max_level": Keys.FALLBACK_LEVEL,
    "rating_output_reserve": Keys.RATING_RESERVE,
}


@dataclass
class RunView:
    """The run the Explore page shows: live (``handle`` set) or finished/reopened."""

    run_id: str
    state: RunState
    index_key: str
    handle: RunHandle | None = None
    reveal_answer: bool = False
    """Set when a live run ends: the next drawing scrolls its answer into view, once."""

    @property
    def live(self) -> bool:
        return self.handle is not None


@dataclass
class ExplorerSession:
    """Everything this browser session remembers between reruns and pages."""

    settings: RunSettings | None = None
    url_loaded: bool = False
    view: RunView | None = None
    notices: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    api_key: str = ""

    @property
    def running(self) -> bool:
        return self.view is not None and self.view.handle is not None and not self.view.handle.done


def get_session() -> ExplorerSession:
    session = st.session_state.get(SESSION_KEY)
    if not isinstance(session, ExplorerSession):
        session = ExplorerSession()
        st.session_state[SESSION_KEY] = session
    return session


def widget_values(settings: RunSettings, *, index_options: list[str]) -> dict[str, Any]:
    """The widget state that draws ``settings``."""
    values: dict[str, Any] = {key: getattr(settings, name) for name, key in FIELD_KEYS.items()}
    if settings.index in index_options:
        values[Keys.INDEX], values[Keys.FOLDER] = settings.index, ""
    else:
        values[Keys.INDEX], values[Keys.FOLDER] = FOLDER_CHOICE, settings.index
    return values


def seed_widgets(settings: RunSettings, *, index_options: list[str], overwrite: bool = False) -> None:
    """Put ``settings`` into the widgets' state (only where a widget has none, unless ``overwrite``)."""
    for key, value in widget_values(settings, index_options=index_options).items():
        if overwrite or key not in st.session_state:
            st.session_state[key] = value


def level_option(value: str) -> str:
    """The Community level picker's option for ``value``: the option itself, or the one a stale
    label names. Streamlit (1.67) hands back a selectbox's *label* when its text changed since it
    was drawn (``leaf (262 summaries)`` became ``leaf · ≈496k tokens · 262 summaries`` once the
    token counts were ready), and a click in between would otherwise send that label on."""
    words = value.split()
    if words[:1] == ["leaf"]:
        return "leaf"
    if len(words) >= 2 and words[0] == "level" and words[1].isdigit():
        return words[1]
    return value


def settings_from_widgets(base: RunSettings) -> RunSettings:
    """The settings the widgets show now (fields without a widget state keep ``base``'s)."""
    values: dict[str, Any] = {}
    for name, key in FIELD_KEYS.items():
        if key in st.session_state:
            values[name] = st.session_state[key]
    if isinstance(values.get("community_level"), str):
        values["community_level"] = level_option(values["community_level"])
    choice = st.session_state.get(Keys.INDEX, base.index)
    values["index"] = str(st.session_state.get(Keys.FOLDER, "") or "").strip() if choice == FOLDER_CHOICE else choice
    values["query"] = str(values.get("query", base.query) or "")
    for name in (
        "map_token_budget",
        "reduce_token_budget",
        "map_output_reserve",
        "reduce_output_reserve",
        "map_concurrency",
        "seed",
        "rating_threshold",
        "rating_repeats",
        "fallback_max_level",
        "rating_output_reserve",
    ):
        if name in values and values[name] is not None:
            values[name] = int(values[name])
    if values.get("latency_s") is not None:
        values["latency_s"] = float(values["latency_s"])
    values = {k: v for k, v in values.items() if v is not None}
    return RunSettings(**{**base.__dict__, **values})
