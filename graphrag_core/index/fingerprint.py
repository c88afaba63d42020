"""The one fingerprint of an index: a hash of what it holds, wherever and however it is stored.

Run bundles (which index a run used) and experiments (which index an answer was computed on,
a part of its stored key) both name an index by :func:`index_fingerprint`. It hashes the
index's records as the engine reads them (communities, claims, source chunks, documents,
entities, relationships), not its files, so:

- an index built in memory has one (an experiment may run on one that was never saved);
- the same records read from another folder, a copy, or another format (a native export of
  Microsoft GraphRAG outputs) give the same fingerprint; a folder's unrelated files do not count;
- any change to what a run reads or a page shows (a summary, a title, a claim, a source text,
  an entity) changes it. The index's name, description and loading warnings do not.
"""

from __future__ import annotations

import hashlib

from ..models import Index

FINGERPRINT_PREFIX = "sha256:"

_RECORD_TABLES = frozenset({"communities", "claims", "chunks", "documents", "entities", "relationships"})
"""The fields of :class:`~graphrag_core.models.Index` that hold its records (in the model's order)."""


def index_fingerprint(index: Index) -> str:
    """``sha256:<hex>`` over the index's records, as the JSON of its record tables."""
    digest = hashlib.sha256(index.model_dump_json(include=set(_RECORD_TABLES)).encode("utf-8"))
    return f"{FINGERPRINT_PREFIX}{digest.hexdigest()}"


__all__ = ["FINGERPRINT_PREFIX", "index_fingerprint"]
