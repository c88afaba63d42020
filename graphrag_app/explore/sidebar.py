"""Explore's sidebar: its widgets settled and read once per script run into an
:class:`~graphrag_app.explore.state.ExploreRequest` (:func:`read_request`), then drawn
(:func:`draw_sidebar`): the index, the method, the community level picker with each level's
tokens, the budgets, the seed, the model.

The level picker waits (up to a second) for each level's tokens, so the page draws it last, into
the place :func:`draw_sidebar` keeps for it (:func:`draw_level_picker`): what must not wait (Run)
is on the page first, and nothing else in the sidebar waits with it.
"""

from __future__ import annotations

from streamlit.delta_generator import DeltaGenerator

import streamlit as st

from graphrag_core.errors import GraphRAGError, NoSourceChunksError
from graphrag_core.levels import DYNAMIC, LEAF, level_label, level_text, parse_level
from graphrag_core.methods import GLOBAL, LAZY, VECTOR
from graphrag_core.request import DYNAMIC_SETTING_NAMES, LAZY_SETTING_NAMES, GlobalSearchRequest, inapplicable_settings
from graphrag_core.samples import is_starting_question, starting_question
from graphrag_core.search import draw_seed

from .. import widgets
from ..text import short_count
from ..settings import ranking_line
from ..loaders import OpenedIndex
from ..previews import SECTIONS_WAIT_S, level_costs_for
from ..settings import AppSettings
from ..urls import MAX_LATENCY_S, RunSettings, level_option
from . import actions
from .actions import model_settings
from .state import (
    API_KEY,
    BASE_URL,
    FOLDER,
    INDEX,
    LATENCY,
    MODEL,
    MODEL_NAME,
    QUESTION,
    SEED,
    SPEND_LIMIT,
    SUPPORT_JUDGE,
    USE_CACHE,
    ExploreRequest,
    ExploreState,
    Keys,
    checking_support,
    read_choices,
)

LEVEL = widgets.setting_widget("community_level")
METHOD = widgets.setting_widget("method")
SELECTION = widgets.setting_widget("community_selection")
MAX_SPEND_LIMIT = 10**12
"""The largest spending limit the page offers."""
SPEND_LIMIT_HELP = (
    "The most tokens the run may spend (0: no limit). No model call that could take the total past it is sent; a run "
    "that reaches it stops as Stop stops it, keeping what it read. The cost preview says whether it will be reached."
)


# -- settled, then read once -----------------------------------------------------------------------


def _summary_counts(opened: OpenedIndex) -> dict[int | str, int]:
    return opened.index.summary_counts() if opened.index is not None else {LEAF: 0}


def settle_level(opened: OpenedIndex) -> None:
    """The level the Community level picker holds: one of the opened index's levels (a stale
    label names its level; a level the index lacks is the leaves)."""
    options = [level_text(level) for level in _summary_counts(opened)]  # type: ignore[arg-type]
    chosen = level_option(str(LEVEL.value if LEVEL.value is not None else LEAF))
    LEVEL.set(chosen if chosen in options else LEAF)


def follow_sample_question(opened: OpenedIndex) -> None:
    """An untouched starting question follows the index: switching to the Chinese sample asks its
    question, and switching to a folder asks the generic one (not the Jargon File's)."""
    if opened.source is not None and is_starting_question(str(QUESTION.value or "")):
        QUESTION.set(starting_question(opened.source.key))


def _fixed_level(base: RunSettings) -> bool:
    """Whether the widgets choose a fixed level of the summaries (the level picker is drawn)."""
    return str(METHOD.value or base.search.method) == GLOBAL and SELECTION.value != DYNAMIC


def read_request(app: AppSettings, base: RunSettings) -> tuple[OpenedIndex, ExploreRequest]:
    """The index the picker names, opened, and everything the widgets say, read once. First the
    widgets are settled, as their drawing would leave them: the index picker on one of its
    options, each choice on one of its values, the level on one of the opened index's, and an
    untouched starting question following the index."""
    opened = widgets.open_chosen_index(app, INDEX, FOLDER)
    widgets.settle_choices(base.fields)
    if _fixed_level(base):
        settle_level(opened)
    follow_sample_question(opened)
    return opened, read_choices(base)


# -- drawn -----------------------------------------------------------------------------------------


def priced_request(chosen: ExploreRequest) -> GlobalSearchRequest | None:
    """The request each level's tokens are counted for (None when the settings cannot run)."""
    try:
        return chosen.priced()
    except (GraphRAGError, ValueError):
        return None


def level_picker_label(option: str, counts: dict[int | str, int], *, tokens: int | None = None) -> str:
    """A level picker's label: ``leaf · ≈496k tokens · 262 summaries`` (the tokens first, so a
    narrow sidebar still shows them), or ``level 1 (70 summaries)`` before the tokens are
    counted. The level's words are :func:`~graphrag_core.levels.level_label`'s; the rest is the
    picker's (:func:`~graphrag_app.urls.level_option` reads a stale label back)."""
    level = parse_level(option)
    count = counts.get(level, 0)  # type: ignore[call-overload]
    if tokens is None:
        return f"{level_label(level)} ({count:,} summaries)"
    return f"{level_label(level)} · ≈{short_count(tokens)} tokens · {count:,} summaries"


def draw_level_picker(box: DeltaGenerator | None, page: ExploreState, opened: OpenedIndex, chosen: ExploreRequest, *, wait_s: float = SECTIONS_WAIT_S) -> None:
    """The Community level selectbox, into ``box`` (None: no fixed level is chosen, nothing to
    draw): the opened index's levels, each with its map prompt tokens under the settings the
    page shows (the cost preview's own figure for the chosen level) and its number of
    summaries. Waits up to ``wait_s`` for those tokens; drawn without them, the page is drawn
    again once they are counted (``page.levels_unpriced``)."""
    if box is None:
        return
    counts = _summary_counts(opened)
    options = [level_text(level) for level in counts]  # type: ignore[arg-type]
    setting = next(f for f in chosen.settings.fields if f.name == LEVEL.key)
    request = priced_request(chosen)
    costs = level_costs_for(opened, request, wait_s=wait_s)
    page.levels_unpriced = costs is None and request is not None

    def label(option: str) -> str:
        cost = costs.get(option) if costs else None
        return level_picker_label(option, counts, tokens=None if cost is None else cost.map_prompt_tokens)

    box.selectbox(widgets.label_of(setting), options, key=LEVEL.key, format_func=label, help=widgets.help_of(setting))


def draw_sidebar(app: AppSettings, page: ExploreState, opened: OpenedIndex, chosen: ExploreRequest) -> DeltaGenerator | None:
    """The sidebar's widgets, where the caller draws (``with st.sidebar``), all but the level
    picker: its place is returned (None when no fixed level is chosen), for
    :func:`draw_level_picker`."""
    base = chosen.settings
    st.header("Index")
    widgets.draw_index_picker(INDEX, FOLDER)
    widgets.draw_settings(widgets.fields_of(base, [METHOD.key]))
    method = str(METHOD.value or base.search.method)
    unused = set(inapplicable_settings(method))  # a method's meaningless settings are not drawn (they keep their values)
    page.levels_unpriced = False  # until a level picker is drawn without its tokens
    level_box = None
    if method != GLOBAL:
        draw_method_note(st.container(), opened, method, app, chosen)
        if method == LAZY:
            widgets.draw_settings(widgets.fields_of(base, list(LAZY_SETTING_NAMES)))
    else:
        widgets.draw_settings(widgets.fields_of(base, [SELECTION.key]))
        if SELECTION.value == DYNAMIC:
            widgets.draw_settings(widgets.fields_of(base, [n for n in DYNAMIC_SETTING_NAMES if n != SELECTION.key]))
        else:
            level_box = st.container()

    st.header("Budgets")
    widgets.draw_settings([f for f in widgets.fields_of(base, widgets.BUDGETS) if f.name not in unused])
    st.number_input("Spending limit (tokens)", min_value=0, max_value=MAX_SPEND_LIMIT, step=10_000, key=SPEND_LIMIT.key, help=SPEND_LIMIT_HELP)

    st.header("Search")
    widgets.draw_settings(widgets.fields_of(base, [SEED.key]))
    st.button("New seed", key=Keys.NEW_SEED, on_click=_new_seed, icon=":material/casino:", help="Draw a new random seed.")
    widgets.draw_settings([f for f in widgets.other_fields(base, widgets.SELECTION, widgets.BUDGETS, [SEED.key]) if f.name not in unused])
    draw_model(app)
    st.header("Support check")
    draw_support_switch(st.container())
    return level_box


def draw_model(app: AppSettings) -> None:
    """The Model section: offline (its simulated latency) or an OpenAI-compatible endpoint (its
    model, base URL and a key kept in this browser session), and whether the map cache is read."""
    st.header("Model")
    st.radio(
        "Model",
        ["offline", "openai"],
        key=MODEL.key,
        format_func=lambda v: {"offline": "Offline (no network)", "openai": "OpenAI-compatible"}[v],
    )
    if MODEL.value == "openai":
        st.text_input("Model name", key=MODEL_NAME.key, placeholder=app.model.model)
        st.text_input("Base URL", key=BASE_URL.key, placeholder=app.model.base_url or "https://api.openai.com/v1")
        st.text_input(
            "API key",
            key=API_KEY.key,
            type="password",
            help="Kept in this browser session only (never in the URL or the run history). "
            "Leave empty to use GRAPHRAG_LLM_API_KEY / OPENAI_API_KEY, which is only ever sent "
            "to the configured endpoint (GRAPHRAG_LLM_BASE_URL) or GRAPHRAG_LLM_ALLOWED_BASE_URLS.",
        )
    else:
        st.number_input(
            "Simulated latency (s)",
            min_value=0.0,
            max_value=MAX_LATENCY_S,
            step=0.1,
            key=LATENCY.key,
            help="Average delay of each offline model call, to watch the batches stream in.",
        )
    if app.cache_path is not None:
        st.checkbox(
            "Reuse cached map answers",
            value=True,
            key=USE_CACHE.key,
            help="Answer a map batch from the cache when this model already answered exactly the same "
            "request, so a rerun that changes only reduce settings makes no map calls.",
        )
    if app.model_error:
        st.warning(f"Model settings ignored: {app.model_error}", icon=":material/warning:")


def draw_method_note(container: DeltaGenerator, opened: OpenedIndex, method: str, app: AppSettings, chosen: ExploreRequest) -> None:
    """What a method that reads source chunks reads in this index, and how naive RAG ranks them."""
    chunks = sum(1 for c in opened.index.chunks if c.text.strip()) if opened.index is not None else 0
    if not chunks:
        container.warning(str(NoSourceChunksError(method)), icon=":material/warning:")
        return
    if method == VECTOR:
        try:
            chat = model_settings(app, chosen)
        except ValueError:
            chat = app.model
        container.caption(f"{chunks:,} source chunks. " + ranking_line(chat, app.embedding, error=app.embedding_error))
    elif method == LAZY:
        container.caption(
            f"Relevance tests over the index's {chunks:,} source chunks, community by community from the top level down, "
            "within the relevance budget; then map-reduce over the claims the tests found."
        )
    else:
        container.caption(f"Map-reduce over the index's {chunks:,} source chunks in place of community summaries (the paper's TS).")


SUPPORT_HELP = (
    "Once a run has ended, check each point of its answer against the texts it cites (their summaries, claims "
    "and source chunks): supported, partly supported or not supported, with the words that support it. "
    "The offline judge is lexical and needs no model. The URL keeps it (support=1)."
)
JUDGE_NAMES = {"offline": "Offline (lexical)", "model": "The run's model"}


def draw_support_switch(container: DeltaGenerator) -> None:
    """The "Check support" switch and, when a model is configured, which judge checks."""
    with container:
        st.toggle("Check support", key=Keys.SUPPORT, help=SUPPORT_HELP)
        if checking_support() and actions.model_judge_available():
            st.radio(
                "Support judge",
                list(JUDGE_NAMES),
                key=SUPPORT_JUDGE.key,
                format_func=JUDGE_NAMES.__getitem__,
                horizontal=True,
                help="The model judge asks the run's model about each point (its quotes checked word for word); it costs model calls.",
            )


def _new_seed() -> None:
    SEED.set(draw_seed())


__all__ = [
    "draw_level_picker",
    "draw_method_note",
    "draw_model",
    "draw_support_switch",
    "draw_sidebar",
    "follow_sample_question",
    "level_picker_label",
    "priced_request",
    "read_request",
    "settle_level",
]
