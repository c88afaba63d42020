"""What the options name, resolved: the index INDEX names, the model (through
:func:`~graphrag_core.llm.settings.resolve_model_settings`, as in the app), the run history,
the map cache and the evaluation store, the tokenizer.

Each resolver reports what cannot be used as a :class:`~graphrag_cli.context.CliError` naming
the option, file or variable, with the exit code the failure calls for: 3 for an index that
cannot be read, 2 for everything else here.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphrag_core.cache import GuardedCache, MapCache, open_map_cache
from graphrag_core.errors import IndexValidationError
from graphrag_core.evaluation.store import EvaluationStore, evaluation_store_path
from graphrag_core.figures import Price
from graphrag_core.history import RunStore, StoreError
from graphrag_core.index import index_display_name, load_index
from graphrag_core.levels import LEAF, Level, is_fixed, level_text
from graphrag_core.methods import LAZY
from graphrag_core.llm.base import ChatModel
from graphrag_core.llm.embeddings import KEY_EMBEDDING_MODEL, EmbeddingModel, EmbeddingSettings
from graphrag_core.llm.factory import build_chat_model, build_embedding_model
from graphrag_core.llm.settings import (
    KEY_PRICE_CACHED,
    KEY_PRICE_COMPLETION,
    KEY_PRICE_PROMPT,
    ModelChoice,
    ModelSettings,
    SettingsError,
    resolve_model_settings,
)
from graphrag_core.locations import cache_path_from, endpoints_path_from, store_path_from
from graphrag_core.llm.server_facts import server_facts_of
from graphrag_core.models import Index, map_text_tables
from graphrag_core.request import GlobalSearchRequest, SearchSettings
from graphrag_core.server_advice import advise
from graphrag_core.samples import sample_path
from graphrag_core.tokens import ENDPOINT, Tokenizer, tokenizer_for

from .context import EXIT_INDEX, EXIT_USAGE, CliContext, CliError
from .options import ModelOptions

# -- the index ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedIndex:
    """An index, the folder it was read from and the one name it goes by
    (:func:`~graphrag_core.index.index_display_name`)."""

    index: Index
    path: Path
    name: str


def resolve_index_path(text: str) -> Path:
    """INDEX as given: an existing path wins; else a bundled sample of that name; else the path
    (whose loading then reports that it does not exist)."""
    path = Path(text).expanduser()
    if path.exists():
        return path
    try:
        return sample_path(text)
    except KeyError:
        return path


def load_index_at(text: str, *, summary: str = "full_content", tables: Sequence[str] = ()) -> LoadedIndex:
    """The index INDEX names, with ``tables`` (of :data:`~graphrag_core.models.DEFERRED_TABLES`)
    read now: what the command will use, so that any table it cannot read is reported here, as
    the index's error. :class:`CliError` with exit code 3 when it cannot be read."""
    path = resolve_index_path(text)
    try:
        index = load_index(path, summary=summary)  # type: ignore[arg-type]
        if tables:
            index.load_tables(*tables)
    except IndexValidationError as exc:
        raise CliError(str(exc), EXIT_INDEX) from None
    except OSError as exc:
        raise CliError(f"{path}: cannot read the index: {exc.strerror or exc}", EXIT_INDEX) from None
    return LoadedIndex(index=index, path=path, name=index_display_name(path, index) or str(path))


def search_tables(settings: SearchSettings) -> tuple[str, ...]:
    """The tables a search with these settings reads (its map texts' claims and sources; a lazy
    run's chunks and what links them to communities)."""
    if settings.method == LAZY:
        return ("chunks", "entities", "claims")
    return map_text_tables(include_claims=settings.include_claims, include_sources=settings.include_sources)


def check_levels(loaded: LoadedIndex, levels: Sequence[Level], *, option: str = "--level") -> None:
    """A level the index does not have is bad input (exit 2); the message names the levels it has."""
    have = loaded.index.levels()
    missing = [level for level in levels if is_fixed(level) and level != LEAF and level not in have]
    if missing:
        shown = ", ".join([LEAF, *(level_text(level) for level in have)])
        first = level_text(missing[0])
        raise CliError(f"{option} {first}: the index {loaded.name} has no level {first}; its levels are {shown}.", EXIT_USAGE)


def tokenizer(name: str, model: ChatModel | None = None) -> Tokenizer:
    """The tokenizer ``name`` for runs against ``model``; exit 2 when it cannot be had."""
    try:
        return tokenizer_for(name, model)
    except ImportError as exc:
        raise CliError(f"The {name} tokenizer needs the bpe-openai package: {exc}", EXIT_USAGE) from None
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


# -- the model ------------------------------------------------------------------------------------


def configured_model_settings(context: CliContext) -> ModelSettings:
    """The app's model settings (``GRAPHRAG_LLM_*`` in the environment)."""
    try:
        return ModelSettings.from_mapping(context.environ)
    except SettingsError as exc:  # its message names the key, never the secret
        raise CliError(str(exc), EXIT_USAGE) from None


def model_settings(context: CliContext, options: ModelOptions) -> ModelSettings:
    """The settings of the model ``options`` choose over the configured ones.

    The endpoint options need the openai provider; ``--api-key-env`` names a variable that must
    hold a key. The configured key goes only to the configured (or an allow-listed) endpoint:
    another ``--base-url`` is called with the key of ``--api-key-env`` or with none."""
    configured = configured_model_settings(context)
    if (options.provider or configured.provider) == "offline" and options.names_endpoint:
        raise CliError("--base-url, --model-name and --api-key-env need --model openai.", EXIT_USAGE)
    typed_key = ""
    if options.api_key_env:
        typed_key = context.environ.get(options.api_key_env, "")
        if not typed_key.strip():
            raise CliError(f"--api-key-env: the environment variable {options.api_key_env} is not set or is empty.", EXIT_USAGE)
    choice = ModelChoice(provider=options.provider, base_url=options.base_url or "", model=options.model_name or "", api_key=typed_key)
    try:
        return resolve_model_settings(configured, choice)
    except SettingsError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


def build_model(context: CliContext, options: ModelOptions) -> ChatModel:
    """The model ``options`` ask for (:func:`model_settings`), sharing the context's endpoints,
    kept in the endpoint memory (``GRAPHRAG_EXPLORER_ENDPOINTS``) unless ``options`` say not to;
    the context's injected model, when it has one, instead."""
    if context.model is not None:
        return context.model
    settings = model_settings(context, options)
    if options.remember_endpoints and settings.provider == "openai":
        where = endpoints_path_from(context.environ, store_path_from(context.environ))
        context.endpoints.remember_in(where, on_failure=lambda message: context.note(f"warning: {message}"))
    try:
        return build_chat_model(settings, endpoints=context.endpoints)
    except ImportError as exc:
        raise CliError(f"The {settings.provider} model is not available in this installation: {exc}", EXIT_USAGE) from None


def build_embedder(context: CliContext, options: ModelOptions, *, name: str | None = None, off: bool = False) -> EmbeddingModel | None:
    """The embedding model that ranks a ``vector`` run's chunks: the context's injected one; none
    with ``--no-embeddings`` or an offline answering model (BM25 ranks offline); else the one
    ``--embedding-model`` (``name``) or ``GRAPHRAG_EMBEDDING_MODEL`` names, reached as the
    ``GRAPHRAG_EMBEDDING_*`` keys say (None when none is named: BM25)."""
    if off:
        return None
    if context.embedder is not None:
        return context.embedder
    chat = model_settings(context, options)
    if chat.provider == "offline":
        return None
    environ = {**context.environ, **({KEY_EMBEDDING_MODEL: name} if name else {})}
    try:
        settings = EmbeddingSettings.from_mapping(environ, chat=chat)
        return build_embedding_model(settings)
    except SettingsError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    except ImportError as exc:
        raise CliError(f"The embedding model is not available in this installation: {exc}", EXIT_USAGE) from None


def configured_price(context: CliContext) -> Price | None:
    """The price per million tokens in ``GRAPHRAG_LLM_PRICE_PROMPT`` / ``_COMPLETION``, when both
    are set, with ``_CACHED`` for cached prompt tokens (read on their own: an injected model has
    no settings of its own)."""
    keys = (KEY_PRICE_PROMPT, KEY_PRICE_COMPLETION, KEY_PRICE_CACHED)
    try:
        return ModelSettings.from_mapping({key: context.environ[key] for key in keys if key in context.environ}).price
    except SettingsError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


def advised_by_server(context: CliContext, model: ChatModel, request: GlobalSearchRequest, *, counter: Tokenizer, given: Collection[str]) -> GlobalSearchRequest:
    """``request`` with what a local model server says about itself applied
    (:func:`~graphrag_core.server_advice.advise`: the concurrency its slots allow, the budgets its
    context holds; a setting in ``given`` is advised, not changed), each note said now, before the
    run. A server that reports its slots is known to the context's endpoints from the first call
    (one slot: every call streams, so a timed-out one is cancelled on the server too)."""
    facts = server_facts_of(model)
    if not facts.known:
        return request
    endpoint = getattr(model, "endpoint", None)
    if facts.slots is not None and isinstance(endpoint, str):
        context.endpoints.slots(endpoint).found(facts.slots)
    timeout = getattr(getattr(model, "settings", None), "timeout", None)
    advice = advise(facts, request, exact=counter.name == ENDPOINT, timeout_s=timeout, given=given)
    for note in advice.notes:
        context.note_once(note)
    return advice.apply(request)


# -- stores ---------------------------------------------------------------------------------------


def store_failure(exc: StoreError | OSError) -> str:
    """The one message of every command whose run history cannot be used (damaged, busy, of a
    newer version, or not a run store): the store's own sentence, which names the file."""
    return f"Cannot use the run store: {exc}"


def run_store(context: CliContext, path: Path | None, *, read_only: bool = False) -> RunStore:
    """The run history at ``path`` (default: ``GRAPHRAG_EXPLORER_DB``, else the user data folder);
    ``read_only`` for a command that only reads it (it then needs no space, and makes no file)."""
    where = path if path is not None else store_path_from(context.environ)
    try:
        return RunStore(where, read_only=read_only)
    except (StoreError, OSError) as exc:
        raise CliError(store_failure(exc), EXIT_USAGE) from None


def open_store(context: CliContext, path: Path | None, *, off: bool) -> RunStore | None:
    """:func:`run_store`, or None with ``--no-store``."""
    return None if off else run_store(context, path)


def open_cache(context: CliContext, path: Path | None, *, off: bool) -> MapCache | None:
    """The map cache at ``path`` (default: ``GRAPHRAG_EXPLORER_CACHE``, else beside the run
    history); None with ``--no-cache`` or ``GRAPHRAG_EXPLORER_CACHE=off``. A file that cannot
    be opened is no error: each run says so once and goes on without it (``open_map_cache``)."""
    if off:
        return None
    where = path if path is not None else cache_path_from(context.environ, store_path_from(context.environ))
    if where is None:
        return None
    return open_map_cache(where)


def shared_cache(context: CliContext, cache: MapCache | None) -> MapCache | None:
    """``cache`` for a command that makes many runs (a sweep, an evaluation): its first failed
    read or write is one warning for the whole command (not one per run), and no later run
    waits on it again."""
    if cache is None:
        return None
    return GuardedCache(cache, on_failure=lambda message: context.note(f"warning: {message}"))


def evaluation_store(context: CliContext, path: Path | None) -> EvaluationStore:
    """The evaluation store at ``path`` (default: beside the run history)."""
    where = path if path is not None else evaluation_store_path(store_path_from(context.environ))
    try:
        return EvaluationStore(where)
    except OSError as exc:
        raise CliError(f"Cannot use the evaluation store {where}: {exc}", EXIT_USAGE) from None


__all__ = [
    "LoadedIndex",
    "advised_by_server",
    "build_embedder",
    "build_model",
    "check_levels",
    "configured_model_settings",
    "configured_price",
    "evaluation_store",
    "load_index_at",
    "model_settings",
    "open_cache",
    "open_store",
    "resolve_index_path",
    "run_store",
    "search_tables",
    "shared_cache",
    "store_failure",
    "tokenizer",
]
