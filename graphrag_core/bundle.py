"""Run bundles: one JSON file that carries a whole run, to share it and redraw it with no model.

A bundle holds the request, the model's identity (never a key), the fingerprint of the index
(:func:`~graphrag_core.index.fingerprint.index_fingerprint`, a hash of its records), every event
(which carry every prompt sent and every raw reply, see :mod:`graphrag_core.events`) and the
result. :func:`read_bundle` checks what it reads and names what is wrong; :func:`index_mismatch`
says when the index at hand is not the one the run used.

Format versions: 2 records the fingerprint of the index's records; 1 (still read) recorded a
hash of the index folder's files, which cannot be compared with an index here, and says so.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import GraphRAGError
from .events import EventList
from .history.records import RunRecord, utc_now_iso
from .index.fingerprint import index_fingerprint
from .request import GlobalSearchRequest
from .results import GlobalSearchResult
from .status import RunStatus

BUNDLE_FORMAT = "graphrag-explorer-run-bundle"
BUNDLE_VERSION = 2
CONTENT_FINGERPRINT_VERSION = 2
"""The first format version whose fingerprint is :func:`index_fingerprint` (1 hashed files)."""


class BundleError(GraphRAGError):
    """A file that is not a readable run bundle; the message names the file and the problem."""


class IndexIdentity(BaseModel):
    """Which index a run used: its name, where it was, and its fingerprint."""

    model_config = ConfigDict(frozen=True)

    name: str
    path: str | None = None
    fingerprint: str | None = None
    """:func:`index_fingerprint` of the index (in a version 1 bundle: a hash of its folder's
    files); None when the index could not be read where the bundle was made."""


class RunBundle(BaseModel):
    """One run, whole. ``model`` is the model's identity string (never a secret)."""

    model_config = ConfigDict(frozen=True)

    format: Literal["graphrag-explorer-run-bundle"] = BUNDLE_FORMAT
    format_version: int = BUNDLE_VERSION
    exported_at: str = Field(default_factory=utc_now_iso)
    run_id: str
    created_at: str
    label: str = ""
    status: RunStatus
    index: IndexIdentity
    request: GlobalSearchRequest
    model: str
    seed: int | None = None
    events: EventList
    result: GlobalSearchResult | None = None

    def to_record(self) -> RunRecord:
        """The run as a history record (its events replay it with no model)."""
        record = RunRecord.from_events(
            self.events, index_name=self.index.name, index_path=self.index.path, label=self.label, created_at=self.created_at
        )
        if record.status == RunStatus.RUNNING:  # cut short where it was recorded; nothing runs it here
            record = record.model_copy(update={"status": RunStatus.INTERRUPTED})
        return record


def fingerprint_at(path: str | os.PathLike[str]) -> str:
    """The fingerprint of the index at ``path``; raises ``IndexValidationError`` (or
    ``IndexFormatError``) naming the path when no index can be read there."""
    from .index import load_index  # pyarrow and the loaders, only when a bundle meets an index

    return index_fingerprint(load_index(path))


def make_bundle(record: RunRecord, *, index_path: str | os.PathLike[str] | None = None) -> RunBundle:
    """The bundle of a stored run; the index is fingerprinted at ``index_path`` (default: the
    record's own index path) when an index can be read there."""
    where = index_path if index_path is not None else record.index_path
    fingerprint = None
    if where is not None and Path(where).exists():
        try:
            fingerprint = fingerprint_at(where)
        except (GraphRAGError, ValueError, OSError):  # not an index (any more): the bundle says it is unknown
            fingerprint = None
    return RunBundle(
        run_id=record.run_id,
        created_at=record.created_at,
        label=record.label,
        status=record.status,
        index=IndexIdentity(name=record.index_name, path=None if where is None else os.fspath(where), fingerprint=fingerprint),
        request=record.request,
        model=record.model,
        seed=record.seed,
        events=record.events,
        result=record.result,
    )


def bundle_to_json(bundle: RunBundle) -> str:
    return bundle.model_dump_json(indent=1)


def read_bundle(data: str | bytes, *, source: str = "the run bundle") -> RunBundle:
    """A bundle from its JSON text; raises :class:`BundleError` naming ``source`` and the problem."""
    try:
        bundle = RunBundle.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the top level"
        if first.get("type") == "json_invalid":
            raise BundleError(f"{source} is not JSON: {first.get('msg')}") from None
        if where == "format":
            raise BundleError(f"{source} is not a run bundle (its format is not {BUNDLE_FORMAT!r}).") from None
        raise BundleError(f"{source} is not a valid run bundle: {where}: {first.get('msg')} ({exc.error_count()} problem(s)).") from None
    if bundle.format_version > BUNDLE_VERSION:
        raise BundleError(f"{source} is a version {bundle.format_version} run bundle; this version reads up to {BUNDLE_VERSION}.")
    if not bundle.events:
        raise BundleError(f"{source} holds no events, so there is nothing to redraw.")
    return bundle


IndexCheck = Literal["same", "absent", "unchecked", "unreadable", "different"]
"""What comparing a bundle with the index at hand found: the same index; no index there;
fingerprints that cannot be compared; an index that cannot be read; a different index."""


def check_index(bundle: RunBundle, path: str | os.PathLike[str] | None) -> tuple[IndexCheck, str | None]:
    """How the index at ``path`` compares with the run's, and why it is not the run's (a
    sentence; None when it is the same index). Only ``"different"`` says the index here is
    known to be another one."""
    if path is None or not Path(path).exists():
        return "absent", f"The run's index ({bundle.index.name}) is not available here: the run is drawn from the bundle alone; provenance needs the index."
    if bundle.index.fingerprint is None:
        return "unchecked", "The bundle does not record its index's fingerprint, so the index here could not be checked against it."
    if bundle.format_version < CONTENT_FINGERPRINT_VERSION:
        return "unchecked", (
            f"The bundle (format version {bundle.format_version}) records a hash of its index's files, which this version "
            "does not compare, so the index here could not be checked against it: the run is drawn as recorded; titles and "
            "provenance come from the index here."
        )
    try:
        here = fingerprint_at(path)
    except (GraphRAGError, ValueError, OSError) as exc:
        return "unreadable", f"The index here ({path}) could not be read ({exc}), so it could not be checked against the run's: the run is drawn from the bundle alone."
    if here != bundle.index.fingerprint:
        return "different", (
            f"The index here ({path}) is not the one this run used (fingerprint {here[:19]}… here, "
            f"{bundle.index.fingerprint[:19]}… in the bundle): the run is drawn as recorded; titles and provenance come from the index here and may not match."
        )
    return "same", None


def index_mismatch(bundle: RunBundle, path: str | os.PathLike[str] | None) -> str | None:
    """Why the index at ``path`` is not the run's (a sentence), or None when it is the same index.

    Fingerprints that cannot be compared (unknown on either side, or a version 1 bundle's hash
    of files) are said as such (see :func:`check_index`)."""
    return check_index(bundle, path)[1]


__all__ = [
    "BUNDLE_FORMAT",
    "BUNDLE_VERSION",
    "BundleError",
    "IndexIdentity",
    "RunBundle",
    "bundle_to_json",
    "fingerprint_at",
    "IndexCheck",
    "check_index",
    "index_mismatch",
    "make_bundle",
    "read_bundle",
]
