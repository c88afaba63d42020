"""The app's settings: the only module that reads ``os.environ`` and ``st.secrets``.

============================================  ===============================================
``GRAPHRAG_EXPLORER_DB``                      the run history (SQLite); default:
                                              ``graphrag_core.history.default_store_path()``
``GRAPHRAG_EXPLORER_ALLOWED_ROOTS``           folders (``os.pathsep``-separated) under which
                                              index folders may be opened; unset: any folder
                                              (a local tool); set but empty: samples only
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
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from graphrag_core.evaluation.store import evaluation_store_path
from graphrag_core.llm.embeddings import EmbeddingSettings
from graphrag_core.llm.settings import ModelChoice, ModelSettings, SettingsError
from graphrag_core.locations import CACHE_OFF, DEFAULT_CACHE_NAME, ENV_CACHE, ENV_DB, cache_path_from, store_path_from  # noqa: F401 - re-exported

ENV_ALLOWED_ROOTS = "GRAPHRAG_EXPLORER_ALLOWED_ROOTS"


@dataclass(frozen=True)
class AppSettings:
    """Everything the pages read from outside: where runs live, which folders open, the model.

    ``allowed_roots`` is None when any folder may be opened. ``model`` is the configured model
    (offline when nothing is configured); ``model_error`` explains a configuration that could
    not be used, in which case ``model`` falls back to offline.
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
    return AppSettings(
        store_path=store_path,
        allowed_roots=parse_allowed_roots(None if roots_value is None else str(roots_value)),
        model=model,
        model_error=model_error,
        cache_path=cache_path,
        embedding=embedding,
        embedding_error=embedding_error,
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
