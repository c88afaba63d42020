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

from graphrag_core.llm.settings import ModelSettings, SettingsError
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
    return AppSettings(
        store_path=store_path,
        allowed_roots=parse_allowed_roots(None if roots_value is None else str(roots_value)),
        model=model,
        model_error=model_error,
        cache_path=cache_path,
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


OFFLINE_LATENCY_SPREAD = 0.5
"""A simulated latency of ``x`` seconds draws each call's delay from ``[x/2, 3x/2]``."""


def model_settings_for(
    app: AppSettings,
    *,
    provider: str,
    model_name: str = "",
    base_url: str = "",
    api_key: str = "",
    latency_s: float = 0.0,
) -> ModelSettings:
    """The configured model settings with the page's choices applied; raises ``ValueError``
    (pydantic's) with a message naming the field when a choice cannot be used.

    The configured key goes only to the configured (or an allow-listed) endpoint: a base URL
    from a link or typed in the page is called with ``api_key`` (typed in this browser
    session) or with none (see ``ModelSettings.for_endpoint``)."""
    if provider == "openai":
        return app.model.for_endpoint(base_url=base_url, api_key=api_key, model=model_name)
    spread = OFFLINE_LATENCY_SPREAD
    latency = (latency_s * (1 - spread), latency_s * (1 + spread)) if latency_s > 0 else None
    return ModelSettings(**{**app.model.model_dump(), "provider": provider, "offline_latency": latency})
