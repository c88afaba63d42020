"""The settings widgets, generated from ``SearchSettings``' field metadata, and the index picker
every page shares.

Each search setting is one widget whose key is the setting's name (:func:`setting_widget`),
read back through :meth:`~graphrag_app.urls.SettingField.cast`: a checkbox for a flag, a radio
for up to three choices and a selectbox for more, a slider for a small scale (an integer its rule
bounds on both sides, like a rating), a number input for any other number; its bounds and help
come from the field (:func:`~graphrag_app.urls.setting_fields`). :data:`LOOKS` adds what
metadata does not say about a widget (a label other than the name, a step, words for the
choices, a longer help line); a field without a look is drawn from its metadata alone, so a
field added to ``SearchSettings`` gets its widget with no change here.

Widgets take their values from the session (a page seeds them from its settings), never from
``value=``, so a reopened run or a URL can set them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.request import DYNAMIC_SETTING_NAMES, LAZY_SETTING_NAMES, SearchSettings

from .loaders import OpenedIndex, default_index_key, open_index, sample_names, show_index_problem
from .session import Widget
from .settings import AppSettings
from .urls import RunSettings, SettingField, setting_fields

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
    "seed": Look(label="Seed", help="Same seed, same batches."),
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


def setting_widget(setting: SettingField | str) -> Widget[Any]:
    """The widget of a search setting: its key is the setting's name."""
    return Widget(setting if isinstance(setting, str) else setting.name)


def draw_setting(setting: SettingField, container: DeltaGenerator | None = None) -> None:
    """The widget of one search setting (any kind but the level, whose options are the index's:
    Explore's level picker draws it), keyed by the setting's name."""
    where = container or st
    look = LOOKS.get(setting.name) or Look()
    label, help_line, key = label_of(setting), help_of(setting), setting.name
    if setting.kind == "bool":
        where.checkbox(label, key=key, help=help_line)
    elif setting.kind == "choice":
        choices = list(setting.choices or ())
        words = look.words or {}
        settle_choices([setting])
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


def settle_choices(settings: Iterable[SettingField]) -> None:
    """Each choice setting's widget holds one of its choices (else its default), before the
    widgets are read or drawn."""
    for setting in settings:
        if setting.kind == "choice" and setting_widget(setting).value not in (setting.choices or ()):
            setting_widget(setting).set(setting.default)


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


def search_from_widgets(base: SearchSettings) -> SearchSettings:
    """The search settings the widgets show now (a setting without widget state keeps ``base``'s);
    raises the engine's errors (spec messages) when they break a rule, e.g. a budget not above
    its reserve."""
    values = base.model_dump()
    for setting in setting_fields(type(base)):
        value = setting_widget(setting).value
        if value is not None:
            values[setting.name] = setting.cast(value)
    return type(base)(**values)


# -- the index picker ------------------------------------------------------------------------------


def chosen_index(index: Widget[str], folder: Widget[str]) -> str:
    """The index an index picker names: a bundled sample, or the folder typed beside
    "Folder path…" ("" when none is typed). An unknown choice is reset to the default sample
    first, so the picker holds one of its options when it is drawn."""
    if index.value not in [*sample_names(), FOLDER_CHOICE]:
        index.set(default_index_key())
    if index.value == FOLDER_CHOICE:
        return str(folder.value or "").strip()
    return str(index.value or "")


def open_chosen_index(app: AppSettings, index: Widget[str], folder: Widget[str], *, tables: Sequence[str] = ()) -> OpenedIndex:
    """The index the picker names, opened with ``tables`` read (:func:`~graphrag_app.loaders.open_index`)."""
    key = chosen_index(index, folder)
    return open_index(key, app, tables=tables) if key else OpenedIndex(None, None, "Enter the path of an index folder.")


def draw_index_picker(index: Widget[str], folder: Widget[str], *, choice: DeltaGenerator | None = None, place: DeltaGenerator | None = None) -> None:
    """The "Index" selectbox (the bundled samples, or "Folder path…") into ``choice``, and the
    "Index folder" box into ``place`` when a folder is chosen (default: where the caller draws)."""
    chosen_index(index, folder)
    (choice or st).selectbox(
        "Index",
        [*sample_names(), FOLDER_CHOICE],
        key=index.key,
        format_func=lambda v: "Folder path…" if v == FOLDER_CHOICE else f"{v} (sample)",
    )
    if index.value == FOLDER_CHOICE:
        (place or st).text_input(
            "Index folder",
            key=folder.key,
            placeholder="/path/to/index (native, or GraphRAG output)",
            help="A native index folder (manifest.json), a Microsoft GraphRAG output folder (.parquet or .csv "
            "tables, GraphRAG 0.3 on), or a GraphRAG project folder (settings.yaml beside its output).",
        )


def pick_index(app: AppSettings, index: Widget[str], folder: Widget[str], *, choice: DeltaGenerator | None = None, place: DeltaGenerator | None = None, tables: Sequence[str] = ()) -> OpenedIndex:
    """The index picker drawn (:func:`draw_index_picker`), and the index it names opened."""
    draw_index_picker(index, folder, choice=choice, place=place)
    return open_chosen_index(app, index, folder, tables=tables)


def open_picked_index(app: AppSettings, index: Widget[str], folder: Widget[str], *, tables: Sequence[str] = ()) -> OpenedIndex:
    """The index picker of a page (the choice beside the folder box), and the index it opens;
    when it cannot be used the page shows why and stops here (so ``index`` is set on return)."""
    choice, place = st.columns([1, 2], vertical_alignment="bottom")
    opened = pick_index(app, index, folder, choice=choice, place=place, tables=tables)
    if show_index_problem(opened):
        st.stop()
    return opened


def seed_from_url(index: Widget[str], folder: Widget[str], wanted: str) -> None:
    """On a page's first drawing, the index a URL names goes into its picker (a sample, else a folder)."""
    if index.present:
        return
    if wanted in sample_names():
        index.set(wanted)
    else:
        index.set(FOLDER_CHOICE)
        folder.set(wanted)


__all__ = [
    "BUDGETS",
    "FOLDER_CHOICE",
    "LEVEL_HELP",
    "LOOKS",
    "SELECTION",
    "TOKENIZER_HELP",
    "Look",
    "chosen_index",
    "draw_index_picker",
    "draw_setting",
    "draw_settings",
    "fields_of",
    "help_of",
    "label_of",
    "open_chosen_index",
    "open_picked_index",
    "other_fields",
    "pick_index",
    "search_from_widgets",
    "seed_from_url",
    "setting_widget",
    "settle_choices",
]
