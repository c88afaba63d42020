"""The index picker every page shares, and Explore's sidebar with its buttons' callbacks.

The search settings' widgets are generated (:mod:`graphrag_app.widgets`); this module lays them
out in the sidebar's sections and draws what depends on the opened index (the level picker).
Callbacks run before the script, so a click on Run starts the worker before the page draws (and
the page then draws Stop enabled); errors are queued on :class:`ExploreState` and shown on the page.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.errors import GraphRAGError, NoSourceChunksError
from graphrag_core.levels import LEAF, level_label, level_text, parse_level
from graphrag_core.llm.settings import ModelSettings, SettingsError, resolve_model_settings
from graphrag_core.methods import GLOBAL, LAZY, VECTOR
from graphrag_core.models import Index
from graphrag_core.request import DYNAMIC_SETTING_NAMES, LAZY_SETTING_NAMES, GlobalSearchRequest, inapplicable_settings
from graphrag_core.search import draw_seed
from graphrag_core.tokens import planning_tokenizer_name

from . import widgets
from .escaping import escape_markdown
from .llm import ranking_line
from .loaders import (
    IndexAccessError,
    IndexSource,
    SECTIONS_WAIT_S,
    LevelCosts,
    cost_previews,
    default_index_key,
    folder_signature,
    load_source,
    resolve_source,
    sample_names,
)
from .settings import AppSettings, endpoint_refusal
from .state import ExploreState
from .urls import MAX_LATENCY_S, MAX_SEED, RunSettings, level_option
from .widgets import FOLDER_CHOICE, Keys, read_widgets

Sections = dict[str, tuple[int, int, int]]


@dataclass
class OpenedIndex:
    """The index the widgets name, or why it could not be opened."""

    source: IndexSource | None
    index: Index | None
    error: str | None

    @property
    def problem(self) -> str | None:
        """Why a page cannot use this index, as the pages say it (None: it can)."""
        if self.index is not None and self.source is not None and not self.error:
            return None
        return self.error or "The index could not be opened."


def show_index_problem(opened: OpenedIndex) -> bool:
    """Show why the index cannot be used (a page then stops or returns); True when it cannot."""
    if opened.problem is None:
        return False
    st.error(escape_markdown(opened.problem), icon=":material/folder_off:")
    return True


def open_index(key: str, app: AppSettings, *, tables: Sequence[str] = ()) -> OpenedIndex:
    """Resolve and load an index for the page, with ``tables`` (of
    :data:`~graphrag_core.deferred.DEFERRED_TABLES`) read now: what the page shows or runs on.
    Any failure, in opening or in reading those tables, becomes a message naming the error."""
    try:
        source = resolve_source(key, app)
    except IndexAccessError as exc:
        return OpenedIndex(None, None, str(exc))
    try:
        index = load_source(source)
        if tables:
            index.load_tables(*tables)
        return OpenedIndex(source, index, None)
    except GraphRAGError as exc:
        return OpenedIndex(source, None, f"{source.path} is not a readable index: {exc}")
    except (OSError, ValueError) as exc:  # unreadable files, malformed JSON or parquet
        return OpenedIndex(source, None, f"{source.path} could not be read ({type(exc).__name__}): {exc}")


def short_count(n: int) -> str:
    """``449192`` -> ``449k``, ``1234567`` -> ``1.2M``, ``950`` -> ``950``."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{round(n / 1000):,}k"
    return f"{n:,}"


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


def level_sections_for(opened: OpenedIndex, *, tokenizer: str) -> Sections | None:
    """The index's tokens per level and section, counted as the cost preview and the level picker
    count them (the tokenizer setting ``tokenizer`` as a plan made without the model server reads
    it: the same counts, kept once), or None when they cannot be counted (e.g. an exact
    tokenizer whose package is missing: the preview reports that)."""
    if opened.index is None or opened.source is None:
        return None
    name = planning_tokenizer_name(tokenizer, real_endpoint=False)
    try:
        return cost_previews().level_sections(opened.index, opened.source.key, folder_signature(opened.source.path), name)
    except (ImportError, ValueError):
        return None


def open_picked_index(app: AppSettings, *, index_key: str, folder_key: str, tables: Sequence[str] = ()) -> OpenedIndex:
    """The index picker of a page (the choice beside the folder box), and the index it opens;
    when it cannot be used the page shows why and stops here (so ``index`` is set on return)."""
    choice, folder = st.columns([1, 2], vertical_alignment="bottom")
    opened = pick_index(app, index_key=index_key, folder_key=folder_key, choice=choice, folder=folder, tables=tables)
    if show_index_problem(opened):
        st.stop()
    return opened


def pick_index(
    app: AppSettings,
    *,
    index_key: str,
    folder_key: str,
    choice: DeltaGenerator | None = None,
    folder: DeltaGenerator | None = None,
    tables: Sequence[str] = (),
) -> OpenedIndex:
    """Draw the "Index" selectbox (the bundled samples, or "Folder path…" with an "Index folder"
    box) into ``choice`` and ``folder`` (default: where the caller draws), and open the index it
    names, with ``tables`` read (:func:`open_index`). An unknown value in
    ``st.session_state[index_key]`` is reset to the default sample."""
    samples = sample_names()
    if st.session_state.get(index_key) not in [*samples, FOLDER_CHOICE]:
        st.session_state[index_key] = default_index_key()
    (choice or st).selectbox(
        "Index",
        [*samples, FOLDER_CHOICE],
        key=index_key,
        format_func=lambda v: "Folder path…" if v == FOLDER_CHOICE else f"{v} (sample)",
    )
    if st.session_state.get(index_key) == FOLDER_CHOICE:
        (folder or st).text_input(
            "Index folder",
            key=folder_key,
            placeholder="/path/to/index (native, or GraphRAG output)",
            help="A native index folder (manifest.json), a Microsoft GraphRAG output folder (.parquet or .csv "
            "tables, GraphRAG 0.3 on), or a GraphRAG project folder (settings.yaml beside its output).",
        )
        key = str(st.session_state.get(folder_key) or "").strip()
    else:
        key = str(st.session_state.get(index_key) or "")
    return open_index(key, app, tables=tables) if key else OpenedIndex(None, None, "Enter the path of an index folder.")


def seed_from_url(index_key: str, folder_key: str, wanted: str) -> None:
    """On a page's first drawing, the index a URL names goes into its picker (a sample, else a folder)."""
    if index_key in st.session_state:
        return
    if wanted in sample_names():
        st.session_state[index_key] = wanted
    else:
        st.session_state[index_key], st.session_state[folder_key] = FOLDER_CHOICE, wanted


# -- Explore's sidebar -------------------------------------------------------------------------


def level_costs_for(opened: OpenedIndex, request: GlobalSearchRequest | None, *, seed: int, wait_s: float = SECTIONS_WAIT_S) -> LevelCosts | None:
    """Each level's map prompt tokens under ``request``'s settings, from the one estimate the
    cost preview shows (:func:`graphrag_core.cost.map_cost`); None while they are computed
    (waited for up to ``wait_s``), or when there is no request to price."""
    if request is None or opened.index is None or opened.source is None:
        return None
    signature = folder_signature(opened.source.path)
    return cost_previews().level_costs(opened.index, opened.source.key, signature, request.model_dump_json(), seed, wait_s=wait_s)


def picker_request(base: RunSettings) -> tuple[GlobalSearchRequest | None, int]:
    """The request the widgets describe now (budgets, claims, excerpts, tokenizer, question,
    seed), for labels drawn before the widgets below them: None when it cannot run."""
    current, problem = read_widgets(base)
    if problem is not None:
        return None, current.seed
    try:
        return current.to_request(query=current.query if current.query.strip() else "?"), current.seed
    except (GraphRAGError, ValueError):
        return None, current.seed


def settle_level(opened: OpenedIndex) -> None:
    """The level the Community level picker holds: one of the opened index's levels (a stale
    label names its level; a level the index lacks is the leaves). Settled before the settings
    are read, whether or not the picker is drawn yet."""
    options = [level_text(level) for level in _summary_counts(opened)]  # type: ignore[arg-type]
    chosen = level_option(str(st.session_state.get("community_level", LEAF)))
    st.session_state["community_level"] = chosen if chosen in options else LEAF


def _summary_counts(opened: OpenedIndex) -> dict[int | str, int]:
    return opened.index.summary_counts() if opened.index is not None else {LEAF: 0}


def draw_level_picker(opened: OpenedIndex, base: RunSettings, *, container: DeltaGenerator | None = None, wait_s: float = SECTIONS_WAIT_S) -> None:
    """The Community level selectbox: the opened index's levels, each with its map prompt tokens
    under the settings the page shows now (the cost preview's own figure for the chosen level)
    and its number of summaries. Waits up to ``wait_s`` for those tokens."""
    counts = _summary_counts(opened)
    options = [level_text(level) for level in counts]  # type: ignore[arg-type]
    settle_level(opened)
    setting = next(f for f in base.fields if f.name == "community_level")
    request, seed = picker_request(base)
    costs = level_costs_for(opened, request, seed=seed, wait_s=wait_s)
    ExploreState.get().levels_unpriced = costs is None and request is not None

    def label(option: str) -> str:
        cost = costs.get(option) if costs else None
        return level_picker_label(option, counts, tokens=None if cost is None else cost.map_prompt_tokens)

    (container or st).selectbox(widgets.label_of(setting), options, key=setting.name, format_func=label, help=widgets.help_of(setting))


def draw_settings(app: AppSettings, base: RunSettings) -> OpenedIndex:
    """Draw the sidebar's settings (``base`` names the settings model); return the index they name."""
    opened, level_picker = draw_settings_but_levels(app, base)
    level_picker()
    return opened


def draw_settings_but_levels(app: AppSettings, base: RunSettings) -> tuple[OpenedIndex, Callable[..., None]]:
    """Draw the sidebar's settings as :func:`draw_settings` does, but leave the Community level
    picker's place empty: it is drawn there by the function returned (keywords as
    :func:`draw_level_picker`'s ``wait_s``), which waits for each level's tokens, so a page can
    draw what must not wait (Run) first. The picker's level is settled here
    (:func:`settle_level`), so the settings read before it is drawn are its."""
    st.header("Index")
    opened = pick_index(app, index_key=Keys.INDEX, folder_key=Keys.FOLDER)
    widgets.draw_settings(widgets.fields_of(base, ["method"]))
    method = str(st.session_state.get("method") or base.search.method)
    unused = set(inapplicable_settings(method))  # a method's meaningless settings are not drawn (they keep their values)
    ExploreState.get().levels_unpriced = False  # until a level picker is drawn without its tokens
    level_picker: Callable[..., None] = lambda **_: None
    if method != GLOBAL:
        draw_method_note(st.container(), opened, method, app)
        if method == LAZY:
            widgets.draw_settings(widgets.fields_of(base, list(LAZY_SETTING_NAMES)))
    else:
        widgets.draw_settings(widgets.fields_of(base, ["community_selection"]))
        if st.session_state.get("community_selection") == "dynamic":
            widgets.draw_settings(widgets.fields_of(base, [n for n in DYNAMIC_SETTING_NAMES if n != "community_selection"]))
        else:
            settle_level(opened)
            place = st.container()
            level_picker = partial(draw_level_picker, opened, base, container=place)

    st.header("Budgets")
    widgets.draw_settings([f for f in widgets.fields_of(base, widgets.BUDGETS) if f.name not in unused])
    widgets.draw_spend_limit()

    st.header("Search")
    st.number_input("Seed", min_value=0, max_value=MAX_SEED, step=1, key=Keys.SEED, help="Same seed, same batches.")
    st.button("New seed", key=Keys.NEW_SEED, on_click=_new_seed, icon=":material/casino:", help="Draw a new random seed.")
    widgets.draw_settings([f for f in widgets.other_fields(base, widgets.SELECTION, widgets.BUDGETS) if f.name not in unused])

    st.header("Model")
    st.radio(
        "Model",
        ["offline", "openai"],
        key=Keys.MODEL,
        format_func=lambda v: {"offline": "Offline (no network)", "openai": "OpenAI-compatible"}[v],
    )
    if st.session_state.get(Keys.MODEL) == "openai":
        st.text_input("Model name", key=Keys.MODEL_NAME, placeholder=app.model.model)
        st.text_input("Base URL", key=Keys.BASE_URL, placeholder=app.model.base_url or "https://api.openai.com/v1")
        st.text_input(
            "API key",
            key=Keys.API_KEY,
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
            key=Keys.LATENCY,
            help="Average delay of each offline model call, to watch the batches stream in.",
        )
    if app.cache_path is not None:
        st.checkbox(
            "Reuse cached map answers",
            value=True,
            key=Keys.USE_CACHE,
            help="Answer a map batch from the cache when this model already answered exactly the same "
            "request, so a rerun that changes only reduce settings makes no map calls.",
        )
    if app.model_error:
        st.warning(f"Model settings ignored: {app.model_error}", icon=":material/warning:")
    return opened, level_picker


def draw_method_note(container: DeltaGenerator, opened: OpenedIndex, method: str, app: AppSettings) -> None:
    """What a method that reads source chunks reads in this index, and how naive RAG ranks them."""
    chunks = sum(1 for c in opened.index.chunks if c.text.strip()) if opened.index is not None else 0
    if not chunks:
        container.warning(str(NoSourceChunksError(method)), icon=":material/warning:")
        return
    if method == VECTOR:
        current = ExploreState.get().settings
        try:
            chat = model_settings(app, widgets.choices_from_widgets(current)) if current is not None else app.model
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


def _new_seed() -> None:
    st.session_state[Keys.SEED] = draw_seed()


def _typed_key() -> str:
    return str(st.session_state.get(Keys.API_KEY) or "")


def model_settings(app: AppSettings, current: RunSettings) -> ModelSettings:
    """The model a run with these settings calls (with the key typed in this browser session);
    raises ``ValueError`` naming the field when the choice cannot be used, or why a shared app
    may not call the chosen endpoint (``endpoint_refusal``)."""
    settings = resolve_model_settings(app.model, current.model.model_copy(update={"api_key": _typed_key()}))
    if refusal := endpoint_refusal(app, settings):
        raise SettingsError(refusal)
    return settings


def run_target(app: AppSettings, current: RunSettings) -> str:
    """One sentence naming the model and endpoint the next run calls, and which key it sends."""
    try:
        settings = model_settings(app, current)
    except ValueError as exc:
        return f"The model settings cannot be used: {exc}"
    return describe_target(settings, typed_key=bool(_typed_key().strip()))


def describe_target(settings: ModelSettings, *, typed_key: bool) -> str:
    """"Runs call model m at URL with the configured API key" (or the typed key, or none)."""
    if settings.provider != "openai":
        return "Runs call the offline model (no network)."
    if settings.api_key is None:
        key = "without an API key"
    elif typed_key:
        key = "with the API key typed in this session"
    else:
        key = "with the configured API key"
    return f"Runs call model {settings.model} at {settings.base_url} {key}."


__all__ = [
    "OpenedIndex",
    "describe_target",
    "draw_level_picker",
    "draw_settings",
    "draw_settings_but_levels",
    "settle_level",
    "level_costs_for",
    "level_picker_label",
    "level_sections_for",
    "model_settings",
    "open_index",
    "open_picked_index",
    "pick_index",
    "picker_request",
    "run_target",
    "seed_from_url",
    "short_count",
    "show_index_problem",
]
