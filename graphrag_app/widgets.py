"""The settings widgets, generated from ``SearchSettings``' field metadata.

Each search setting is one widget whose key is the setting's name, read back through
:meth:`~graphrag_app.setting_fields.SettingField.cast`: a checkbox for a flag, a radio for up to three
choices and a selectbox for more, a slider for a small scale (an integer its rule bounds on
both sides, like a rating), a number input for any other number; its bounds and help come from
the field (:func:`~graphrag_app.setting_fields.setting_fields`).
:data:`LOOKS` adds what metadata does not say about a widget (a label other than the name, a
step, words for the choices, a longer help line); a field without a look is drawn from its
metadata alone, so a field added to ``SearchSettings`` gets its widget with no change here.

Widgets take their values from ``st.session_state`` (seeded from the page's :class:`RunSettings`
by :func:`seed_widgets`), never from ``value=``, so a reopened run or a URL can set them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.errors import GraphRAGError
from graphrag_core.levels import level_text
from graphrag_core.llm.settings import ModelChoice
from graphrag_core.request import DYNAMIC_SETTING_NAMES, LAZY_SETTING_NAMES, SearchSettings

from .setting_fields import SettingField, setting_fields
from .urls import RunSettings


class Keys:
    """The keys of the Explore page's widgets that are not search settings (a search setting's
    widget key is its name). Stable: tests find widgets by them."""

    QUESTION = "question"
    INDEX = "index"
    FOLDER = "index_folder"
    SEED = "seed"
    NEW_SEED = "new_seed"
    MODEL = "model"
    MODEL_NAME = "model_name"
    BASE_URL = "base_url"
    API_KEY = "api_key"
    LATENCY = "latency_s"
    USE_CACHE = "use_map_cache"
    RUN = "run_global_search"
    STOP = "stop"
    RUN_FRESH = "run_fresh"
    REPLAY = "replay"
    REPLAY_SPEED = "replay_speed"
    ANSWER_FROM_READ = "answer_from_read"
    PRESENTER = "presenter_mode"
    SPEND_LIMIT = "spend_limit_tokens"


FOLDER_CHOICE = "__folder__"
"""The Index selectbox's option for "a folder path" (the path goes in the Index folder box)."""
RADIO_MAX_CHOICES = 4
"""A choice among this many values or fewer is a horizontal radio; more is a selectbox."""
SLIDER_MAX_SPAN = 10
"""An integer whose rule bounds it on both sides within this span (a rating) is a slider."""


@dataclass(frozen=True)
class Look:
    """What a widget shows beyond its field's metadata; every part is optional."""

    label: str | None = None
    help: str | None = None
    step: int | float | None = None
    words: Mapping[str, str] | None = None
    """The text shown for each of a choice's values."""


LEVEL_HELP = (
    "Which communities to map over: leaf = the finest, 0 = the roots (fewest, broadest). Each shows the tokens "
    "of its map texts (summaries plus the claims and source excerpts included) and its number of summaries."
)
TOKENIZER_HELP = (
    "How tokens are counted for the budgets: auto (the estimate for the offline model; for a real "
    "endpoint o200k_base, or the server's own count when a local server offers one), heuristic "
    "(the spec's estimate), an exact OpenAI encoding, or endpoint (the server's own count)."
)

METHOD_HELP = (
    "What answers the question. Summaries: GraphRAG's global search, map-reduce over the community summaries of a level "
    "(the paper's C0-C3). Source text: the same map-reduce over the index's source chunks (the paper's TS). Naive RAG: "
    "the chunks most relevant to the question, packed into the reduce budget, one call (the paper's SS). Lazy: "
    "LazyGraphRAG's idea, relevance tests of source chunks community by community under a budget, then map-reduce over "
    "the claims they found (LZ)."
)

LOOKS: dict[str, Look] = {
    "method": Look(label="Method", help=METHOD_HELP, words={"global": "Summaries", "text": "Source text (TS)", "vector": "Naive RAG (SS)", "lazy": "Lazy (LZ)"}),
    "relevance_budget": Look(
        step=50,
        help="Relevance tests the lazy method may make (each tests a few source chunks for one subquery); no test is sent "
        "past it. LazyGraphRAG's published budgets are 100, 500 and 1,500.",
    ),
    "community_level": Look(help=LEVEL_HELP),
    "map_token_budget": Look(step=500, help="The largest prompt one map call may send, in tokens: the prompt plus as many summaries as fit."),
    "map_output_reserve": Look(step=128, help="Tokens kept free in each map call for its answer (taken from the map budget)."),
    "reduce_token_budget": Look(step=500, help="The largest prompt of the final reduce call: the most useful map answers that fit."),
    "reduce_output_reserve": Look(step=128, help="Tokens kept free in the reduce call for the final answer (taken from the reduce budget)."),
    "map_concurrency": Look(help="How many map calls may be in flight at once."),
    "reduce_strategy": Look(words={"skip": "skip (try shorter ones)", "stop": "stop (first that does not fit)"}),
    "include_claims": Look(help="Add the leaf claims to each summary's map text."),
    "include_sources": Look(label="Include source excerpts", help="Add the source chunks those claims cite."),
    "tokenizer": Look(help=TOKENIZER_HELP),
    "community_selection": Look(
        words={"level": "Fixed level", "dynamic": "Dynamic"},
        help="Fixed level: map every summary of one level. Dynamic: the model rates communities from the roots "
        "down (0-5) and the map reads the most specific relevant ones.",
    ),
    "rating_threshold": Look(help="A community rated at least this (0-5) is kept and its children rated next."),
    "keep_parent": Look(label="Keep parents", help="Keep a relevant community even when one of its children is relevant too."),
    "rating_repeats": Look(help="Rating calls per community; the most frequent rating wins (ties: the lowest)."),
    "fallback_max_level": Look(help="When a round keeps nothing, rate every community of the next level, down to this one."),
    "rating_output_reserve": Look(step=64),
    "question_reserve": Look(
        label="Prompt-cache reserve (tokens)",  # not "Question ...": the question's own box is found by that word
        step=64,
        help="Tokens kept for the question: batches are packed as if it took exactly this many, so every question up to "
        "it reads the same batches and each map prompt starts with the same data (a provider's prompt cache serves it "
        "to the next question at a fraction of the price). 0 packs around the question as it is.",
    ),
}
"""What each widget shows beyond its field's metadata."""

BUDGETS: tuple[str, ...] = (
    "map_token_budget", "map_output_reserve", "reduce_token_budget", "reduce_output_reserve", "question_reserve", "map_concurrency",
)
"""The settings of the sidebar's Budgets section, in the order drawn."""
SELECTION: tuple[str, ...] = ("method", "community_selection", "community_level", *DYNAMIC_SETTING_NAMES, *LAZY_SETTING_NAMES)
"""The settings of the sidebar's Index section (the method, then the level picker or dynamic selection's settings)."""


def label_of(setting: SettingField) -> str:
    """The widget's label: its look's, else the setting's name as words (``Map token budget``)."""
    look = LOOKS.get(setting.name)
    return (look.label if look and look.label else None) or setting.name.replace("_", " ").capitalize()


def help_of(setting: SettingField) -> str:
    """The widget's help line: its look's, else the field's description."""
    look = LOOKS.get(setting.name)
    return (look.help if look and look.help else None) or setting.description


def draw_setting(setting: SettingField, container: DeltaGenerator | None = None) -> None:
    """The widget of one search setting (any kind but the level, whose options are the index's:
    see ``controls.draw_level_picker``), keyed by the setting's name."""
    where = container or st
    look = LOOKS.get(setting.name) or Look()
    label, help_line, key = label_of(setting), help_of(setting), setting.name
    if setting.kind == "bool":
        where.checkbox(label, key=key, help=help_line)
    elif setting.kind == "choice":
        choices = list(setting.choices or ())
        words = look.words or {}
        if st.session_state.get(key) not in choices:
            st.session_state[key] = setting.default
        if len(choices) <= RADIO_MAX_CHOICES:
            where.radio(label, choices, key=key, horizontal=True, format_func=lambda v: words.get(v, v), help=help_line)
        else:
            where.selectbox(label, choices, key=key, format_func=lambda v: words.get(v, v), help=help_line)
    elif setting.kind == "int":
        low, high = setting.low, setting.high
        if setting.scale and low is not None and high is not None and high - low <= SLIDER_MAX_SPAN:
            where.slider(label, min_value=low, max_value=high, step=1, key=key, help=help_line)
        else:
            where.number_input(label, min_value=low, max_value=high, step=int(look.step or 1), key=key, help=help_line)
    elif setting.kind == "float":
        low, high = setting.low, setting.high
        where.number_input(
            label,
            min_value=None if low is None else float(low),
            max_value=None if high is None else float(high),
            step=float(look.step or 0.1),
            key=key,
            help=help_line,
        )
    elif setting.kind == "text":
        where.text_input(label, key=key, help=help_line)
    else:
        raise ValueError(f"the {setting.name} setting has no generic widget: draw it with the page's level picker")


MAX_SPEND_LIMIT = 10**12
"""The largest spending limit the page offers."""
SPEND_LIMIT_HELP = (
    "The most tokens the run may spend (0: no limit). No model call that could take the total past it is sent; a run "
    "that reaches it stops as Stop stops it, keeping what it read. The cost preview says whether it will be reached."
)


def draw_spend_limit(container: DeltaGenerator | None = None) -> None:
    """The spending limit's input (0 is no limit), keyed :attr:`Keys.SPEND_LIMIT`."""
    (container or st).number_input("Spending limit (tokens)", min_value=0, max_value=MAX_SPEND_LIMIT, step=10_000, key=Keys.SPEND_LIMIT, help=SPEND_LIMIT_HELP)



def draw_settings(settings: Iterable[SettingField], container: DeltaGenerator | None = None) -> None:
    for setting in settings:
        draw_setting(setting, container)


def fields_of(base: RunSettings, names: Iterable[str]) -> list[SettingField]:
    """The settings of ``base`` named ``names``, in that order (names it lacks are left out)."""
    by_name = {setting.name: setting for setting in base.fields}
    return [by_name[name] for name in names if name in by_name]


def other_fields(base: RunSettings, *placed: Iterable[str]) -> list[SettingField]:
    """The settings of ``base`` no section places, in declaration order (a new field lands here)."""
    taken = {name for names in placed for name in names}
    return [setting for setting in base.fields if setting.name not in taken]


def widget_values(settings: RunSettings, *, index_options: list[str]) -> dict[str, Any]:
    """The widget state that draws ``settings``."""
    values: dict[str, Any] = {}
    for setting in settings.fields:
        value = getattr(settings.search, setting.name)
        values[setting.name] = level_text(value) if setting.kind == "level" else value
    model = settings.model
    values.update(
        {
            Keys.QUESTION: settings.query,
            Keys.SEED: settings.seed,
            Keys.MODEL: model.provider or "offline",
            Keys.MODEL_NAME: model.model,
            Keys.BASE_URL: model.base_url,
            Keys.LATENCY: model.offline_latency_s or 0.0,
            Keys.SPEND_LIMIT: settings.spend_limit_tokens or 0,
        }
    )
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


def search_from_widgets(base: SearchSettings) -> SearchSettings:
    """The search settings the widgets show now (a setting without widget state keeps ``base``'s);
    raises the engine's errors (spec messages) when they break a rule, e.g. a budget not above
    its reserve."""
    values = base.model_dump()
    for setting in setting_fields(type(base)):
        value = st.session_state.get(setting.name)
        if value is not None:
            values[setting.name] = setting.cast(value)
    return type(base)(**values)


def choices_from_widgets(base: RunSettings) -> RunSettings:
    """``base`` with the index, question, seed and model the widgets show now."""
    state = st.session_state
    choice = state.get(Keys.INDEX, base.index)
    index = str(state.get(Keys.FOLDER, "") or "").strip() if choice == FOLDER_CHOICE else str(choice)
    seed = state.get(Keys.SEED)
    latency = state.get(Keys.LATENCY)
    limit = state.get(Keys.SPEND_LIMIT, base.spend_limit_tokens)
    model = ModelChoice(
        provider=state.get(Keys.MODEL) or base.model.provider,
        model=str(state.get(Keys.MODEL_NAME, base.model.model) or ""),
        base_url=str(state.get(Keys.BASE_URL, base.model.base_url) or ""),
        offline_latency_s=float(latency) if latency is not None else base.model.offline_latency_s,
    )
    return replace(
        base,
        index=index,
        query=str(state.get(Keys.QUESTION, base.query) or ""),
        seed=int(seed) if seed is not None else base.seed,
        model=model,
        spend_limit_tokens=int(limit) if limit else None,
    )


def read_widgets(base: RunSettings) -> tuple[RunSettings, str | None]:
    """The settings the widgets show, and why their search settings cannot be used (None when
    they can); when they cannot, the search settings are ``base``'s."""
    current = choices_from_widgets(base)
    try:
        return replace(current, search=search_from_widgets(base.search)), None
    except (GraphRAGError, ValueError) as exc:
        return current, str(exc).splitlines()[0]


def settings_from_widgets(base: RunSettings) -> RunSettings:
    """The settings the widgets show; raises the engine's errors when they cannot be used."""
    return replace(choices_from_widgets(base), search=search_from_widgets(base.search))


__all__ = [
    "BUDGETS",
    "FOLDER_CHOICE",
    "LOOKS",
    "SELECTION",
    "Keys",
    "Look",
    "choices_from_widgets",
    "draw_setting",
    "draw_spend_limit",
    "draw_settings",
    "fields_of",
    "help_of",
    "label_of",
    "other_fields",
    "read_widgets",
    "search_from_widgets",
    "seed_widgets",
    "settings_from_widgets",
    "widget_values",
]
