"""Where the run history and the map cache live: one rule for the app and the command line.

==============================  ===========================================================
``GRAPHRAG_EXPLORER_DB``        the run history (SQLite); default:
                                :func:`graphrag_core.history.store.default_store_path`
``GRAPHRAG_EXPLORER_CACHE``     the SQLite map cache; default: ``map-cache.sqlite3`` beside
                                the run history; ``off`` (or none, 0, false, no) turns it off
``GRAPHRAG_EXPLORER_ENDPOINTS`` what model endpoints accepted (the output form each settled
                                on, the refusals already said), kept across processes; default:
                                ``endpoints.sqlite3`` beside the map cache, none when the
                                cache is off; ``off`` turns it off
==============================  ===========================================================

Pure: the caller hands in the mapping (``os.environ``, secrets); nothing here reads it itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .history.store import default_store_path

ENV_DB = "GRAPHRAG_EXPLORER_DB"
ENV_CACHE = "GRAPHRAG_EXPLORER_CACHE"
DEFAULT_CACHE_NAME = "map-cache.sqlite3"
"""The map cache's file when ``GRAPHRAG_EXPLORER_CACHE`` is unset: beside the run history."""
ENV_ENDPOINTS = "GRAPHRAG_EXPLORER_ENDPOINTS"
DEFAULT_ENDPOINTS_NAME = "endpoints.sqlite3"
"""The endpoint memory's file when ``GRAPHRAG_EXPLORER_ENDPOINTS`` is unset: beside the map cache."""
CACHE_OFF = frozenset({"off", "none", "0", "false", "no"})


def store_path_from(mapping: Mapping[str, Any]) -> Path:
    """The run history ``GRAPHRAG_EXPLORER_DB`` names, else the default location."""
    db = str(mapping.get(ENV_DB) or "").strip()
    return Path(db).expanduser() if db else default_store_path({k: str(v) for k, v in mapping.items()})


def cache_path_from(mapping: Mapping[str, Any], store_path: Path) -> Path | None:
    """The map cache ``GRAPHRAG_EXPLORER_CACHE`` names (None when it is off), else
    ``map-cache.sqlite3`` beside ``store_path``."""
    cache = str(mapping.get(ENV_CACHE) or "").strip()
    if cache.lower() in CACHE_OFF:
        return None
    return Path(cache).expanduser() if cache else store_path.with_name(DEFAULT_CACHE_NAME)


def endpoints_path_from(mapping: Mapping[str, Any], store_path: Path) -> Path | None:
    """The endpoint memory ``GRAPHRAG_EXPLORER_ENDPOINTS`` names (None when it is off), else
    ``endpoints.sqlite3`` beside the map cache (None when the cache is off: a front end told to
    remember no model results remembers no endpoint either)."""
    named = str(mapping.get(ENV_ENDPOINTS) or "").strip()
    if named.lower() in CACHE_OFF:
        return None
    if named:
        return Path(named).expanduser()
    cache = cache_path_from(mapping, store_path)
    return None if cache is None else cache.with_name(DEFAULT_ENDPOINTS_NAME)


__all__ = [
    "CACHE_OFF", "DEFAULT_CACHE_NAME", "DEFAULT_ENDPOINTS_NAME", "ENV_CACHE", "ENV_DB", "ENV_ENDPOINTS", "cache_path_from", "endpoints_path_from",
    "store_path_from",
]
