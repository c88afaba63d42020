"""The Explore page's settings widgets (sidebar) and the buttons' callbacks.

Widgets take their values from ``st.session_state`` (seeded from the session's
``RunSettings``), never from ``value=``, so a reopened run or a URL can set them.
Callbacks run before the script, so a click on Run starts the worker before the page draws
(and the page then draws Stop enabled); errors are queued on the session and shown on the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.cache import MapCache, SqliteMapCache
from graphrag_core.errors import GraphRAGError, PreflightError
from graphrag_core.index import index_display_name
from graphrag_core.llm.settings import ModelSettings, build_chat_model
from graphrag_core.preflight import preflight_sync
from graphrag_core.models import Index
from graphrag_core.request import COMMUNITY_SELECTIONS, MAX_RATING, REDUCE_STRATEGIES, SearchSettings
from graphrag_core.search import draw_seed
from graphrag_core.state import RunState
from graphrag_core.history import RunStore
from graphrag_core.tokens import TOKENIZER_NAMES

from .compare_charts import index_key_for
from .escaping import escape_markdown
from .loaders import (
    IndexAccessError,
    IndexSource,
    default_index_key,
    folder_signature,
    level_sections,
    load_source,
    resolve_source,
    sample_names,
)
from .runner import start_run
from .session import FOLDER_CHOICE, ExplorerSession, Keys, RunView, get_session, level_option, seed_widgets, settings_from_widgets
from .settings import AppSettings, load_settings, model_settings_for
from .urls import LEAF, MAX_LATENCY_S, MAX_SEED, RunSettings

MAX_FALLBACK_LEVEL = 99


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


def _level_label(level: str, counts: dict[int | str, int], sections: dict[str, tuple[int, int, int]] | None = None) -> str:
    """``leaf · ≈496k tokens · 262 summaries``: the tokens of the level's map texts with the
    claims and excerpts the page includes now (first, so the narrow sidebar still shows them),
    so a costly level shows before it is run."""
    value: int | str = level if level == LEAF else int(level)
    count = counts.get(value, 0)
    name = "leaf" if level == LEAF else f"level {level}"
    if sections is None or level not in sections:
        return f"{name} ({count:,} summaries)"
    tokens = included_tokens(sections[level], claims=bool(st.session_state.get(Keys.CLAIMS, True)), sources=bool(st.session_state.get(Keys.SOURCES, True)))
    return f"{name} · ≈{short_count(tokens)} tokens · {count:,} summaries"


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


def level_sections_for(opened: "OpenedIndex") -> dict[str, tuple[int, int, int]] | None:
    """The index's tokens per level and section, or None when they cannot be counted (e.g. an
    exact tokenizer whose package is missing: the preview reports that)."""
    if opened.index is None or opened.source is None:
        return None
    try:
        return level_sections(opened.index, opened.source.key, folder_signature(opened.source.path), str(st.session_state.get(Keys.TOKENIZER) or "heuristic"))
    except (ImportError, ValueError):
        return None


HELP: dict[str, str] = {
    "level": "Which communities to map over: leaf = the finest, 0 = the roots (fewest, broadest). "
    "Each shows the tokens of its map texts (summaries plus the claims and source excerpts included) "
    "and its number of summaries.",
    "map_budget": "The largest prompt one map call may send, in tokens: the prompt plus as many summaries as fit.",
    "map_reserve": "Tokens kept free in each map call for its answer (taken from the map budget).",
    "reduce_budget": "The largest prompt of the final reduce call: the most useful map answers that fit.",
    "reduce_reserve": "Tokens kept free in the reduce call for the final answer (taken from the reduce budget).",
    "concurrency": "How many map calls may be in flight at once.",
    "tokenizer": "How tokens are counted for the budgets: heuristic (fast, no download) or an exact OpenAI encoding.",
}
"""One line of help for each setting a new user asks about."""


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


def draw_settings(app: AppSettings) -> OpenedIndex:
    """Draw the sidebar's settings; return the index they name."""
    st.header("Index")
    opened = pick_index(app, index_key=Keys.INDEX, folder_key=Keys.FOLDER)

    counts: dict[int | str, int] = opened.index.summary_counts() if opened.index is not None else {LEAF: 0}
    levels = [str(level) for level in counts]
    chosen_level = level_option(str(st.session_state.get(Keys.LEVEL, LEAF)))  # a stale label names its level
    if st.session_state.get(Keys.LEVEL) != chosen_level or chosen_level not in levels:
        st.session_state[Keys.LEVEL] = chosen_level if chosen_level in levels else LEAF
    if st.session_state.get(Keys.SELECTION) not in COMMUNITY_SELECTIONS:
        st.session_state[Keys.SELECTION] = "level"
    st.radio(
        "Community selection",
        list(COMMUNITY_SELECTIONS),
        key=Keys.SELECTION,
        horizontal=True,
        format_func=lambda v: {"level": "Fixed level", "dynamic": "Dynamic"}[v],
        help="Fixed level: map every summary of one level. Dynamic: the model rates communities from "
        "the roots down (0-5) and the map reads the most specific relevant ones.",
    )
    if st.session_state.get(Keys.SELECTION) == "dynamic":
        _draw_dynamic_settings()
    else:
        sections = level_sections_for(opened)
        st.selectbox(
            "Community level",
            levels,
            key=Keys.LEVEL,
            format_func=lambda v: _level_label(v, counts, sections),
            help=HELP["level"],
        )

    st.header("Budgets")
    top = SearchSettings.ui_max  # the same ranges the URL accepts
    st.number_input("Map token budget", min_value=1, max_value=top("map_token_budget"), step=500, key=Keys.MAP_BUDGET, help=HELP["map_budget"])
    st.number_input("Map output reserve", min_value=0, max_value=top("map_output_reserve"), step=128, key=Keys.MAP_RESERVE, help=HELP["map_reserve"])
    st.number_input("Reduce token budget", min_value=1, max_value=top("reduce_token_budget"), step=500, key=Keys.REDUCE_BUDGET, help=HELP["reduce_budget"])
    st.number_input("Reduce output reserve", min_value=0, max_value=top("reduce_output_reserve"), step=128, key=Keys.REDUCE_RESERVE, help=HELP["reduce_reserve"])
    st.number_input("Map concurrency", min_value=1, max_value=top("map_concurrency"), step=1, key=Keys.CONCURRENCY, help=HELP["concurrency"])

    st.header("Search")
    st.number_input("Seed", min_value=0, max_value=MAX_SEED, step=1, key=Keys.SEED, help="Same seed, same batches.")
    st.button("New seed", key=Keys.NEW_SEED, on_click=_new_seed, icon=":material/casino:", help="Draw a new random seed.")
    st.radio(
        "Reduce strategy",
        list(REDUCE_STRATEGIES),
        key=Keys.STRATEGY,
        horizontal=True,
        format_func=lambda v: {"skip": "skip (try shorter ones)", "stop": "stop (first that does not fit)"}[v],
    )
    st.checkbox("Include claims", key=Keys.CLAIMS, help="Add the leaf claims to each summary's map text.")
    st.checkbox("Include source excerpts", key=Keys.SOURCES, help="Add the source chunks those claims cite.")
    st.selectbox("Tokenizer", list(TOKENIZER_NAMES), key=Keys.TOKENIZER, help=HELP["tokenizer"])

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


def _draw_dynamic_settings() -> None:
    """The rating settings of dynamic selection."""
    st.slider("Rating threshold", min_value=0, max_value=MAX_RATING, step=1, key=Keys.RATING_THRESHOLD, help="A community rated at least this (0-5) is kept and its children rated next.")
    st.checkbox("Keep parents", key=Keys.KEEP_PARENT, help="Keep a relevant community even when one of its children is relevant too.")
    st.number_input("Rating repeats", min_value=1, max_value=SearchSettings.ui_max("rating_repeats"), step=1, key=Keys.RATING_REPEATS, help="Rating calls per community; the most frequent rating wins (ties: the lowest).")
    st.number_input("Fallback max level", min_value=0, max_value=MAX_FALLBACK_LEVEL, step=1, key=Keys.FALLBACK_LEVEL, help="When a round keeps nothing, rate every community of the next level, down to this one.")
    st.number_input("Rating output reserve", min_value=0, max_value=SearchSettings.ui_max("rating_output_reserve"), step=64, key=Keys.RATING_RESERVE)


def _new_seed() -> None:
    st.session_state[Keys.SEED] = draw_seed()


def _model_settings(app: AppSettings, current: RunSettings) -> ModelSettings:
    """The model a run with these settings calls (with the key typed in this browser session)."""
    return model_settings_for(
        app,
        provider=current.model,
        model_name=current.model_name,
        base_url=current.base_url,
        api_key=str(st.session_state.get(Keys.API_KEY) or ""),
        latency_s=current.latency_s,
    )


def run_target(app: AppSettings, current: RunSettings) -> str:
    """One sentence naming the model and endpoint the next run calls, and which key it sends."""
    try:
        settings = _model_settings(app, current)
    except ValueError as exc:
        return f"The model settings cannot be used: {exc}"
    return describe_target(settings, typed_key=bool(str(st.session_state.get(Keys.API_KEY) or "").strip()))


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


def start_clicked() -> None:
    """Callback of "Run global search": start the run in its worker, or queue why not."""
    session = get_session()
    if session.running or session.settings is None:
        return
    app = load_settings()
    current = settings_from_widgets(session.settings)
    try:
        request = current.to_request()
    except ValueError as exc:
        session.errors.append(str(exc))
        return
    opened = open_index(current.index, app)
    if opened.problem is not None:
        session.errors.append(opened.problem)
        return
    try:
        model_settings = _model_settings(app, current)
    except ValueError as exc:
        session.errors.append(f"The model settings cannot be used: {exc}")
        return
    try:
        preflight_sync(build_chat_model(model_settings))
    except PreflightError as exc:
        session.errors.append(str(exc))
        return
    handle = start_run(
        opened.index,
        request,
        lambda: build_chat_model(model_settings),
        store_path=app.store_path,
        index_name=index_display_name(opened.source.path, opened.index),
        index_path=str(opened.source.path),
        cache_factory=_cache_factory(app),
    )
    session.settings = current
    session.view = RunView(run_id=handle.run_id, state=RunState(), index_key=opened.source.key, handle=handle)


def _cache_factory(app: AppSettings) -> Callable[[], MapCache] | None:
    """The map cache of a run, or None when it is off (by setting or by the page's checkbox)."""
    path = app.cache_path
    if path is None or not st.session_state.get(Keys.USE_CACHE, True):
        return None
    return lambda: SqliteMapCache(path)


def stop_clicked() -> None:
    """Callback of "Stop": cancel the running search (the page then shows it stopped)."""
    view = get_session().view
    if view is not None and view.handle is not None:
        view.handle.request_stop()


def open_run(session: ExplorerSession, run_id: str, *, app: AppSettings, set_widgets: bool = True) -> bool:
    """Show a stored run (replayed from its events, no model) and put its settings in the widgets."""
    try:
        record = RunStore(app.store_path).get(run_id)
    except Exception as exc:  # noqa: BLE001 - page boundary: a broken store must not break the page
        session.errors.append(f"The run history at {app.store_path} could not be read ({type(exc).__name__}): {exc}")
        return False
    if record is None:
        session.notices.append(f"Run {run_id} is not in this app's run history; the settings from the link are filled in.")
        return False
    key = index_key_for(record)
    session.view = RunView(run_id=record.run_id, state=record.replay(), index_key=key)
    base = session.settings or RunSettings()
    session.settings = RunSettings.from_request(record.request, index=key, seed=record.seed, base=base)
    if set_widgets:
        seed_widgets(session.settings, index_options=sample_names(), overwrite=True)
    return True


def bundle_opened(session: ExplorerSession, bundle: object, notices: list[str], errors: list[str], *, app: AppSettings) -> None:
    """A run bundle was opened (and put in the history): show its run, unless a run is going."""
    session.errors.extend(errors)
    session.notices.extend(notices)
    run_id = getattr(bundle, "run_id", None)
    if run_id is not None and not session.running:
        open_run(session, run_id, app=app)


def open_clicked(run_id: str) -> None:
    session = get_session()
    if not session.running:
        open_run(session, run_id, app=load_settings())


def close_clicked() -> None:
    session = get_session()
    if not session.running:
        session.view = None
