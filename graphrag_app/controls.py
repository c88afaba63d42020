"""The index picker every page shares, and Explore's sidebar with its buttons' callbacks.

The search settings' widgets are generated (:mod:`graphrag_app.widgets`); this module lays them
out in the sidebar's sections and draws what depends on the opened index (the level picker).
Callbacks run before the script, so a click on Run starts the worker before the page draws (and
the page then draws Stop enabled); errors are queued on :class:`ExploreState` and shown on the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.cache import MapCache, open_map_cache
from graphrag_core.errors import GraphRAGError, PreflightError
from graphrag_core.history import RunStore, StoreError
from graphrag_core.index import index_display_name
from graphrag_core.levels import LEAF, level_label, level_text, parse_level
from graphrag_core.llm.settings import ModelSettings, SettingsError, resolve_model_settings
from graphrag_core.models import Index
from graphrag_core.request import DYNAMIC_SETTING_NAMES
from graphrag_core.search import draw_seed
from graphrag_core.state import RunState

from . import widgets
from .escaping import escape_markdown
from .llm import build_model, shared_preflight
from .jobs import check_model, start_run
from .loaders import IndexAccessError, IndexSource, cost_previews, default_index_key, folder_signature, load_source, resolve_source, sample_names
from .settings import AppSettings, endpoint_refusal, load_settings
from .state import ExploreState, RunView
from .urls import MAX_LATENCY_S, MAX_SEED, RunSettings, index_param, level_option
from .widgets import FOLDER_CHOICE, Keys

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


def open_index(key: str, app: AppSettings) -> OpenedIndex:
    """Resolve and load an index for the page; any failure becomes a message naming the error."""
    try:
        source = resolve_source(key, app)
    except IndexAccessError as exc:
        return OpenedIndex(None, None, str(exc))
    try:
        return OpenedIndex(source, load_source(source), None)
    except GraphRAGError as exc:
        return OpenedIndex(source, None, f"{source.path} is not a readable index: {exc}")
    except (OSError, ValueError) as exc:  # unreadable files, malformed JSON or parquet
        return OpenedIndex(source, None, f"{source.path} could not be read ({type(exc).__name__}): {exc}")


def included_tokens(section: tuple[int, int, int], *, claims: bool, sources: bool) -> int:
    summaries, claim_tokens, source_tokens = section
    return summaries + (claim_tokens if claims else 0) + (source_tokens if sources else 0)


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
    """The index's tokens per level and section, or None when they cannot be counted (e.g. an
    exact tokenizer whose package is missing: the preview reports that)."""
    if opened.index is None or opened.source is None:
        return None
    try:
        return cost_previews().level_sections(opened.index, opened.source.key, folder_signature(opened.source.path), tokenizer)
    except (ImportError, ValueError):
        return None


def open_picked_index(app: AppSettings, *, index_key: str, folder_key: str) -> OpenedIndex:
    """The index picker of a page (the choice beside the folder box), and the index it opens;
    when it cannot be used the page shows why and stops here (so ``index`` is set on return)."""
    choice, folder = st.columns([1, 2], vertical_alignment="bottom")
    opened = pick_index(app, index_key=index_key, folder_key=folder_key, choice=choice, folder=folder)
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
) -> OpenedIndex:
    """Draw the "Index" selectbox (the bundled samples, or "Folder path…" with an "Index folder"
    box) into ``choice`` and ``folder`` (default: where the caller draws), and open the index it
    names. An unknown value in ``st.session_state[index_key]`` is reset to the default sample."""
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
            help="A native index folder (manifest.json) or a Microsoft GraphRAG output folder (.parquet).",
        )
        key = str(st.session_state.get(folder_key) or "").strip()
    else:
        key = str(st.session_state.get(index_key) or "")
    return open_index(key, app) if key else OpenedIndex(None, None, "Enter the path of an index folder.")


def seed_from_url(index_key: str, folder_key: str, wanted: str) -> None:
    """On a page's first drawing, the index a URL names goes into its picker (a sample, else a folder)."""
    if index_key in st.session_state:
        return
    if wanted in sample_names():
        st.session_state[index_key] = wanted
    else:
        st.session_state[index_key], st.session_state[folder_key] = FOLDER_CHOICE, wanted


# -- Explore's sidebar -------------------------------------------------------------------------


def draw_level_picker(opened: OpenedIndex, base: RunSettings, *, container: DeltaGenerator | None = None) -> None:
    """The Community level selectbox: the opened index's levels, each with its tokens (with the
    claims and excerpts the page includes now) and its number of summaries."""
    counts: dict[int | str, int] = opened.index.summary_counts() if opened.index is not None else {LEAF: 0}
    options = [level_text(level) for level in counts]  # type: ignore[arg-type]
    chosen = level_option(str(st.session_state.get("community_level", LEAF)))  # a stale label names its level
    st.session_state["community_level"] = chosen if chosen in options else LEAF
    setting = next(f for f in base.fields if f.name == "community_level")
    sections = level_sections_for(opened, tokenizer=str(st.session_state.get("tokenizer") or base.search.tokenizer))
    claims = bool(st.session_state.get("include_claims", base.search.include_claims))
    sources = bool(st.session_state.get("include_sources", base.search.include_sources))

    def label(option: str) -> str:
        section = sections.get(option) if sections else None
        return level_picker_label(option, counts, tokens=None if section is None else included_tokens(section, claims=claims, sources=sources))

    (container or st).selectbox(widgets.label_of(setting), options, key=setting.name, format_func=label, help=widgets.help_of(setting))


def draw_settings(app: AppSettings, base: RunSettings) -> OpenedIndex:
    """Draw the sidebar's settings (``base`` names the settings model); return the index they name."""
    st.header("Index")
    opened = pick_index(app, index_key=Keys.INDEX, folder_key=Keys.FOLDER)
    widgets.draw_settings(widgets.fields_of(base, ["community_selection"]))
    if st.session_state.get("community_selection") == "dynamic":
        widgets.draw_settings(widgets.fields_of(base, [n for n in DYNAMIC_SETTING_NAMES if n != "community_selection"]))
    else:
        draw_level_picker(opened, base)

    st.header("Budgets")
    widgets.draw_settings(widgets.fields_of(base, widgets.BUDGETS))
    widgets.draw_spend_limit()

    st.header("Search")
    st.number_input("Seed", min_value=0, max_value=MAX_SEED, step=1, key=Keys.SEED, help="Same seed, same batches.")
    st.button("New seed", key=Keys.NEW_SEED, on_click=_new_seed, icon=":material/casino:", help="Draw a new random seed.")
    widgets.draw_settings(widgets.other_fields(base, widgets.SELECTION, widgets.BUDGETS))

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
    return opened


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


def cache_factory(app: AppSettings, *, use: bool = True) -> Callable[[], MapCache] | None:
    """The map cache of a job, or None when it is off (by setting, or ``use=False``)."""
    path = app.cache_path
    if path is None or not use:
        return None
    return lambda: open_map_cache(path)  # a file that cannot be opened: the run says so once and goes on


def start_clicked() -> None:
    """Callback of "Run global search": start the run in its worker, or queue why not."""
    page = ExploreState.get()
    if page.running or page.settings is None:
        return
    app = load_settings()
    try:
        current = widgets.settings_from_widgets(page.settings)
        request = current.to_request()
    except ValueError as exc:
        page.errors.append(str(exc).splitlines()[0])
        return
    opened = open_index(current.index, app)
    if opened.problem is not None or opened.index is None or opened.source is None:
        page.errors.append(opened.problem or "The index could not be opened.")
        return
    try:
        chosen = model_settings(app, current)
    except ValueError as exc:
        page.errors.append(f"The model settings cannot be used: {exc}")
        return
    try:
        check_model(build_model(chosen), checks=shared_preflight())
    except PreflightError as exc:
        page.errors.append(str(exc))
        return
    handle = start_run(
        opened.index,
        request,
        lambda: build_model(chosen),
        store_path=app.store_path,
        index_name=index_display_name(opened.source.path, opened.index),
        index_path=str(opened.source.path),
        cache_factory=cache_factory(app, use=bool(st.session_state.get(Keys.USE_CACHE, True))),
    )
    page.settings = current
    page.view = RunView(run_id=handle.run_id, state=RunState(), index_key=opened.source.key, handle=handle)


def stop_clicked() -> None:
    """Callback of "Stop": cancel the running search (the page then shows it stopped)."""
    view = ExploreState.get().view
    if view is not None and view.handle is not None:
        view.handle.request_stop()


def open_run(page: ExploreState, run_id: str, *, app: AppSettings, set_widgets: bool = True) -> bool:
    """Show a stored run (replayed from its events, no model) and put its settings in the widgets."""
    try:
        record = RunStore(app.store_path).get(run_id)
    except StoreError as exc:  # its message names the file and what is wrong with it
        page.errors.append(str(exc))
        return False
    except Exception as exc:  # noqa: BLE001 - page boundary: a broken store must not break the page
        page.errors.append(f"The run history at {app.store_path} could not be read ({type(exc).__name__}): {exc}")
        return False
    if record is None:
        page.notices.append(f"Run {run_id} is not in this app's run history; the settings from the link are filled in.")
        return False
    key = index_param(record.index_path, name=record.index_name)
    page.view = RunView(run_id=record.run_id, state=record.replay(), index_key=key)
    page.settings = RunSettings.from_request(record.request, index=key, seed=record.seed, base=page.settings or RunSettings())
    if set_widgets:
        widgets.seed_widgets(page.settings, index_options=sample_names(), overwrite=True)
    return True


def bundle_opened(page: ExploreState, run_id: str | None, notices: list[str], errors: list[str], *, app: AppSettings) -> None:
    """A run bundle was opened and put in the history as ``run_id``: show that run, unless a run is going."""
    page.errors.extend(errors)
    page.notices.extend(notices)
    if run_id is not None and not page.running:
        open_run(page, run_id, app=app)


def open_clicked(run_id: str) -> None:
    page = ExploreState.get()
    if not page.running:
        open_run(page, run_id, app=load_settings())


def close_clicked() -> None:
    page = ExploreState.get()
    if not page.running:
        page.view = None


__all__ = [
    "OpenedIndex",
    "bundle_opened",
    "cache_factory",
    "close_clicked",
    "describe_target",
    "draw_level_picker",
    "draw_settings",
    "included_tokens",
    "level_picker_label",
    "level_sections_for",
    "model_settings",
    "open_clicked",
    "open_index",
    "open_picked_index",
    "open_run",
    "pick_index",
    "run_target",
    "seed_from_url",
    "short_count",
    "show_index_problem",
    "start_clicked",
    "stop_clicked",
]
