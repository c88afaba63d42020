"""The app's settings (the only module that reads ``os.environ`` and ``st.secrets``), and the
models they describe.

============================================  ===============================================
``GRAPHRAG_EXPLORER_DB``                      the run history (SQLite); default:
                                              ``graphrag_core.history.default_store_path()``
``GRAPHRAG_EXPLORER_ALLOWED_ROOTS``           folders (``os.pathsep``-separated) under which
                                              index folders may be opened; unset: any folder
                                              (a local tool); set but empty: samples only
``GRAPHRAG_EXPLORER_SHARED``                  ``1`` (or ``true``): the app is shared with people
                                              who are not its operator (so is an app with
                                              allowed roots): runs call only the configured
                                              endpoint and ``GRAPHRAG_LLM_ALLOWED_BASE_URLS``,
                                              and without allowed roots only the bundled
                                              samples open
``GRAPHRAG_EXPLORER_CACHE``                   the SQLite map cache; default: ``map-cache.sqlite3``
                                              beside the run history; ``off`` turns it off
                                              (both read by ``graphrag_core.locations``, which
                                              the command line shares)
``GRAPHRAG_LLM_*``, ``OPENAI_API_KEY``        the model: see ``graphrag_core.llm.settings``
``GRAPHRAG_EMBEDDING_*``                      the embedding model that ranks source chunks for
                                              naive RAG (method ``vector``): see
                                              ``graphrag_core.llm.embeddings``; unset: BM25
============================================  ===============================================

The same keys may be given at the top level of ``.streamlit/secrets.toml``; the environment
wins over the secrets file.

The app's models are built from these settings with what the process already learned about
each endpoint, and checked before a run with what already passed: one
:class:`~graphrag_core.llm.endpoints.Endpoints` (the output form each endpoint accepted, the
notices already shown) and one :class:`~graphrag_core.preflight.Preflight` (the endpoints that
passed their check lately) are held for the process (``st.cache_resource``), so a session's
second run neither negotiates its structured output again nor re-checks its endpoint.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from graphrag_core.evaluation.store import evaluation_store_path
from graphrag_core.llm.base import ChatModel
from graphrag_core.llm.embeddings import EmbeddingModel, EmbeddingSettings
from graphrag_core.llm.endpoints import Endpoints
from graphrag_core.llm.factory import build_chat_model, build_embedding_model
from graphrag_core.llm.settings import (
    DEFAULT_OPENAI_BASE_URL,
    KEY_ALLOWED_BASE_URLS,
    ModelChoice,
    ModelSettings,
    SettingsError,
    endpoint_key,
)
from graphrag_core.preflight import Preflight
from graphrag_core.locations import cache_path_from, endpoints_path_from, store_path_from

_LOG = logging.getLogger(__name__)

ENV_ALLOWED_ROOTS = "GRAPHRAG_EXPLORER_ALLOWED_ROOTS"
ENV_SHARED = "GRAPHRAG_EXPLORER_SHARED"


@dataclass(frozen=True)
class AppSettings:
    """Everything the pages read from outside: where runs live, which folders open, the model.

    ``allowed_roots`` is None when any folder may be opened. ``model`` is the configured model
    (offline when nothing is configured); ``model_error`` explains a configuration that could
    not be used, in which case ``model`` falls back to offline. ``shared`` (allowed roots set,
    or ``GRAPHRAG_EXPLORER_SHARED``): the app's visitors are not its operator, so runs call only
    the endpoints the operator configured (:func:`endpoint_refusal`).
    """

    store_path: Path
    allowed_roots: tuple[Path, ...] | None
    model: ModelSettings
    model_error: str | None = None
    cache_path: Path | None = None
    embedding: EmbeddingSettings | None = None
    """The embedding model that ranks source chunks for naive RAG; None: BM25 ranks them."""
    embedding_error: str | None = None
    """Why the configured embedding model cannot be used (then ``embedding`` is None)."""
    shared: bool = False
    endpoints_path: Path | None = None
    """Where what endpoints accepted is remembered across restarts (``GRAPHRAG_EXPLORER_ENDPOINTS``,
    else beside the map cache; None: in this process only)."""

    @property
    def eval_store_path(self) -> Path:
        """The evaluation store: beside the run history."""
        return evaluation_store_path(self.store_path)


def _secrets() -> dict[str, Any]:
    """The top-level keys of ``secrets.toml``, or nothing when there is no secrets file."""
    try:
        if not st.secrets.load_if_toml_exists():
            return {}
        return {key: value for key, value in st.secrets.items() if not isinstance(value, Mapping)}
    except (OSError, ValueError) as exc:  # an unreadable or malformed secrets.toml
        return {"__error__": f"secrets.toml could not be read: {exc}"}


def parse_allowed_roots(value: str | None) -> tuple[Path, ...] | None:
    """``None`` for unset; otherwise the resolved, non-blank entries of an ``os.pathsep`` list."""
    if value is None:
        return None
    return tuple(Path(part).expanduser().resolve() for part in value.split(os.pathsep) if part.strip())


def settings_from_mapping(mapping: Mapping[str, Any]) -> AppSettings:
    """The settings a mapping of ``KEY -> value`` describes (pure; used by tests)."""
    store_path = store_path_from(mapping)
    roots_value = mapping.get(ENV_ALLOWED_ROOTS)
    cache_path = cache_path_from(mapping, store_path)
    model_error: str | None = mapping.get("__error__")  # type: ignore[assignment]
    try:
        model = ModelSettings.from_mapping(mapping)
    except SettingsError as exc:
        model, model_error = ModelSettings(), str(exc)
    embedding = embedding_error = None
    try:
        embedding = EmbeddingSettings.from_mapping(mapping, chat=model)
    except SettingsError as exc:
        embedding_error = str(exc)
    roots = parse_allowed_roots(None if roots_value is None else str(roots_value))
    shared = roots is not None or _flag(mapping.get(ENV_SHARED))
    return AppSettings(
        store_path=store_path,
        allowed_roots=() if shared and roots is None else roots,
        model=model,
        model_error=model_error,
        cache_path=cache_path,
        endpoints_path=endpoints_path_from(mapping, store_path),
        embedding=embedding,
        embedding_error=embedding_error,
        shared=shared,
    )


def _flag(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on") if value is not None else False


def callable_endpoints(app: AppSettings) -> list[str]:
    """The endpoints a shared app's runs may call: the configured one (OpenAI's when the
    configured provider is OpenAI-compatible with no base URL) and ``GRAPHRAG_LLM_ALLOWED_BASE_URLS``."""
    configured = app.model
    endpoints = list(configured.allowed_base_urls)
    if configured.base_url or configured.provider == "openai":
        endpoints.insert(0, configured.base_url or DEFAULT_OPENAI_BASE_URL)
    return endpoints


def endpoint_refusal(app: AppSettings, settings: ModelSettings) -> str | None:
    """Why a run with ``settings`` may not call its endpoint here (None: it may).

    Invariant: a shared app never calls an endpoint its operator did not configure, whatever a
    link or a visitor typed, so nothing an unconfigured endpoint says (an error body, a refused
    connection) reaches a page. A local app (not shared) calls what its user chose."""
    if not app.shared or settings.provider != "openai":
        return None
    allowed = callable_endpoints(app)
    target = endpoint_key(settings.base_url)
    if target is not None and target in {endpoint_key(url) for url in allowed}:
        return None
    listed = ", ".join(allowed) or "none: only the offline model"
    return (
        f"This app is shared, so it only calls the endpoints its operator configured ({listed}); "
        f"{settings.base_url} is not one of them. The operator can add it to {KEY_ALLOWED_BASE_URLS}."
    )


def load_settings() -> AppSettings:
    """The settings of this process: ``secrets.toml`` overlaid by the environment."""
    return settings_from_mapping({**_secrets(), **os.environ})


PRESENTATION_LATENCY_S = 0.4
"""The app's offline model waits about this long per call unless ``GRAPHRAG_LLM_OFFLINE_LATENCY``
says otherwise (``0`` turns it off): at full speed a run ends before anyone sees it stream. The
command line and the engine have no such default."""


def offline_latency_s(app: AppSettings) -> float:
    """The average simulated latency the app's offline model starts with: the configured one,
    else the presentation pace."""
    configured = app.model.offline_latency
    if configured is None:
        return PRESENTATION_LATENCY_S
    return round(sum(configured) / 2, 3)


MODEL_PICKS: dict[str, ModelChoice] = {
    "offline": ModelChoice(provider="offline", offline_latency_s=0.0),
    "configured": ModelChoice(),
}
"""The model choices of Sweeps and Evaluate: the offline model at full speed, or the configured model."""


def configured_model_name(app: AppSettings) -> str | None:
    """The configured OpenAI-compatible model's name, or None when the configured model is offline."""
    if app.model.provider != "openai":
        return None
    return str(app.model.describe().get("model", app.model.provider))


def initial_model(app: AppSettings) -> ModelChoice:
    """Explore's model before anyone chose: the configured model, with the app's offline pace."""
    configured = app.model
    if configured.provider == "openai":
        return ModelChoice(provider="openai", model=configured.model, base_url=configured.base_url or "", offline_latency_s=offline_latency_s(app))
    return ModelChoice(provider=configured.provider, offline_latency_s=offline_latency_s(app))


# -- the app's models -------------------------------------------------------------------------------


def app_endpoints(app: AppSettings) -> Endpoints:
    """An :class:`Endpoints` that remembers in ``app.endpoints_path`` (what a local server
    accepted is not negotiated again after a restart); a memory that cannot be written is logged
    and the app goes on with what it learns in this process."""
    endpoints = Endpoints()
    endpoints.remember_in(app.endpoints_path, on_failure=lambda message: _LOG.warning("endpoint memory: %s", message))
    return endpoints


@st.cache_resource(show_spinner=False)
def shared_endpoints() -> Endpoints:
    """The process's one :class:`Endpoints` (shared by every session), remembered across restarts."""
    return app_endpoints(load_settings())


@st.cache_resource(show_spinner=False)
def shared_preflight() -> Preflight:
    """The process's one :class:`Preflight` (shared by every session)."""
    return Preflight()


def build_model(settings: ModelSettings) -> ChatModel:
    """The chat model ``settings`` describe, negotiating through the process's endpoints. Build it
    inside the job that uses it: an OpenAI client must not outlive its event loop."""
    return build_chat_model(settings, endpoints=shared_endpoints())


def embedding_for(chat: ModelSettings, embedding: EmbeddingSettings | None) -> EmbeddingSettings | None:
    """The embedding model naive RAG ranks with beside the chat model ``chat``: the configured
    one, except with the offline chat model (offline, BM25 ranks the chunks)."""
    return None if chat.provider == "offline" else embedding


def build_embedder(chat: ModelSettings, embedding: EmbeddingSettings | None) -> EmbeddingModel | None:
    """The embedding model of :func:`embedding_for`, built inside the job that uses it (as a chat model is)."""
    return build_embedding_model(embedding_for(chat, embedding))


def ranking_line(chat: ModelSettings, embedding: EmbeddingSettings | None, *, error: str | None = None) -> str:
    """How naive RAG (method ``vector``) ranks the source chunks with this chat model, in words."""
    chosen = embedding_for(chat, embedding)
    if chosen is not None:
        return f"Naive RAG ranks the source chunks by the cosine similarity of embeddings from {chosen.model} ({chosen.identity.split('@')[-1]})."
    if chat.provider == "offline":
        return "Naive RAG ranks the source chunks by BM25 (offline: no embedding model is called)."
    why = f" ({error})" if error else " (no embedding model is configured: set GRAPHRAG_EMBEDDING_MODEL to rank by embeddings)"
    return f"Naive RAG ranks the source chunks by BM25{why}."
