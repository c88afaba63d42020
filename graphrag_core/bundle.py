"""Run bundles: one JSON file that carries a whole run, to share it and redraw it with no model.

A bundle holds the request, the model's identity (never a key), the fingerprint of the index
(:func:`~graphrag_core.index.fingerprint.index_fingerprint`, a hash of its records), every event
(which carry every prompt sent and every raw reply, see :mod:`graphrag_core.events`) and the
result. :func:`read_bundle` checks what it reads and names what is wrong; :func:`index_mismatch`
says when the index at hand is not the one the run used.

A bundle is untrusted input. :func:`read_bundle` reads it as a stream (one event at a time, never
the whole document as one tree) and refuses it, naming the file and the event, as soon as it
holds more than ``max_events`` events, an event its run could not have emitted (a batch that was
not planned, anything before ``run_started`` or after the run ended: :func:`~graphrag_core.event_checks.check_references`),
or a header (run id, model, seed, request, status, result) that is not what its events say.

A bundle may carry the run's latest support check (``support``, :class:`~graphrag_core.support.SupportCheck`);
a bundle made before support checks has none and opens as before. Its points must be the run's:
each point's text stands in the result's answer where the point says it does.

Format versions: 2 records the fingerprint of the index's records; 1 (still read) recorded a
hash of the index folder's files, which cannot be compared with an index here, and says so.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import BinaryIO, Literal

import ijson
from ijson.common import ObjectBuilder
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import GraphRAGError
from .event_checks import EventReferenceError, check_references
from .events import Event, EventList, RunStarted, event_from_json
from .history.records import RunRecord, utc_now_iso
from .index.fingerprint import index_fingerprint
from .request import GlobalSearchRequest
from .results import GlobalSearchResult
from .status import RunStatus
from .support.models import SupportCheck

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
    support: SupportCheck | None = None
    """The run's latest support check (absent from bundles made before support checks)."""

    def to_record(self) -> RunRecord:
        """The run as a history record (its events replay it with no model), its support check kept."""
        record = RunRecord.from_events(
            self.events, index_name=self.index.name, index_path=self.index.path, label=self.label, created_at=self.created_at
        ).model_copy(update={"support": self.support})
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
        support=record.support,
    )


def bundle_to_json(bundle: RunBundle) -> str:
    return bundle.model_dump_json(indent=1)


MAX_BUNDLE_EVENTS = 50_000
"""The most events a bundle may hold (a run of about 20,000 map batches); a bigger one is refused
while it is read, before it takes the memory of its events."""

_BOM = b"\xef\xbb\xbf"
_NESTED = {"start_map": 1, "start_array": 1, "end_map": -1, "end_array": -1}


def _stream_of(data: str | bytes | BinaryIO) -> BinaryIO:
    """A binary stream over ``data`` (a file object, which must be seekable, is read from where
    it is), past a UTF-8 byte order mark."""
    if isinstance(data, str):
        stream: BinaryIO = io.BytesIO(data.encode("utf-8", "surrogatepass"))
    elif isinstance(data, bytes | bytearray | memoryview):
        stream = io.BytesIO(data)
    else:
        stream = data
    start = stream.read(len(_BOM))
    if start != _BOM:
        stream.seek(-len(start), io.SEEK_CUR)
    return stream


def _event_at(value: object, number: int, source: str) -> Event:
    """Event ``number`` (from 1) of ``source``, validated; :class:`BundleError` naming it otherwise."""
    if not isinstance(value, dict):
        raise BundleError(f"{source}: event {number} is not a JSON object.")
    kind = value.get("kind")
    try:
        return event_from_json(value)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        if first.get("type") == "union_tag_invalid" or not isinstance(kind, str):
            raise BundleError(f"{source}: event {number} has no known kind ({str(kind)[:40]!r}).") from None
        where = ".".join(str(p) for p in first.get("loc", ())[1:]) or "the event"
        raise BundleError(f"{source}: event {number} ({kind}): {where}: {first.get('msg')}.") from None


def _parse(stream: BinaryIO, *, source: str, max_events: int) -> tuple[dict[str, object], list[Event]]:
    """The bundle's header fields and its validated events, read token by token: an event's
    tree is built, validated and dropped before the next is read, and the read stops at the
    first event past ``max_events``."""
    header: dict[str, object] = {}
    events: list[Event] = []
    tokens = ijson.parse(stream, use_float=True)
    try:
        _prefix, first, _value = next(tokens)
        if first != "start_map":
            raise BundleError(f"{source} is not a run bundle (it is not a JSON object).")
        key: str | None = None
        builder: ObjectBuilder | None = None
        depth = 0
        in_events = False
        for _prefix, token, value in tokens:
            if depth == 0:
                if token == "map_key":
                    key = value
                    if key in header:
                        raise BundleError(f"{source} is not a valid run bundle: the key {key!r} appears twice.")
                    continue
                if token == "end_map":
                    break
                if key == "events":
                    if token != "start_array":
                        raise BundleError(f"{source} is not a valid run bundle: events: it must be a list of events.")
                    header["events"] = None
                    in_events, depth = True, 1
                    continue
                if token in ("start_map", "start_array"):
                    builder, depth = ObjectBuilder(), 1
                    builder.event(token, value)
                    continue
                header[str(key)] = value
                continue
            if in_events and depth == 1:
                if token == "end_array":
                    in_events, depth = False, 0
                    continue
                if len(events) >= max_events:
                    raise BundleError(
                        f"{source} holds more than {max_events:,} events; runs of up to {max_events:,} events "
                        "(about 20,000 map batches) can be opened."
                    )
                if token not in ("start_map", "start_array"):
                    raise BundleError(f"{source}: event {len(events) + 1} is not a JSON object.")
                builder, depth = ObjectBuilder(), 2
                builder.event(token, value)
                continue
            assert builder is not None
            builder.event(token, value)
            depth += _NESTED.get(token, 0)
            if in_events and depth == 1:
                events.append(_event_at(builder.value, len(events) + 1, source))
                builder = None
            elif not in_events and depth == 0:
                header[str(key)] = builder.value
                builder = None
        for _ in tokens:  # anything after the bundle's closing brace is an error (ijson raises)
            pass
    except StopIteration:
        raise BundleError(f"{source} is not JSON: it is empty.") from None
    except (ijson.JSONError, UnicodeDecodeError) as exc:  # UnicodeDecodeError: an escaped lone surrogate ("\\udcff")
        said = exc.args[0] if isinstance(exc, ijson.JSONError) and exc.args else ""
        said = (said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)).strip()
        if isinstance(exc, UnicodeDecodeError) or "UTF8" in said:
            raise BundleError(f"{source} holds text that is not valid Unicode (UTF-8).") from None
        raise BundleError(f"{source} is not JSON: {(said.splitlines() or ['unreadable'])[0].rstrip('.')}.") from None
    return header, events


def read_bundle(data: str | bytes | BinaryIO, *, source: str = "the run bundle", max_events: int = MAX_BUNDLE_EVENTS) -> RunBundle:
    """A bundle from its JSON (text, bytes or a binary file object, read as a stream); raises
    :class:`BundleError` naming ``source`` and the problem (see the module's docstring)."""
    header, events = _parse(_stream_of(data), source=source, max_events=max_events)
    if header.get("format") != BUNDLE_FORMAT:
        raise BundleError(f"{source} is not a run bundle (its format is not {BUNDLE_FORMAT!r}).")
    if not events:
        raise BundleError(f"{source} holds no events, so there is nothing to redraw.")
    try:
        check_references(events)
    except EventReferenceError as exc:
        raise BundleError(f"{source}: {exc}") from None
    try:
        bundle = RunBundle.model_validate({**header, "events": events})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the top level"
        raise BundleError(f"{source} is not a valid run bundle: {where}: {first.get('msg')} ({exc.error_count()} problem(s)).") from None
    if bundle.format_version > BUNDLE_VERSION:
        raise BundleError(f"{source} is a version {bundle.format_version} run bundle; this version reads up to {BUNDLE_VERSION}.")
    if disagreement := _header_disagreement(bundle):
        raise BundleError(f"{source}: its header and its events disagree about the {disagreement}, so it cannot be trusted.")
    return bundle


def _header_disagreement(bundle: RunBundle) -> str | None:
    """What the header says that the events do not (``"run id"``, ``"model"``...), or None."""
    started = bundle.events[0]
    assert isinstance(started, RunStarted)  # check_references
    if bundle.run_id != started.run_id:
        return f"run id ({bundle.run_id[:12]} in the header, {started.run_id[:12]} in the events)"
    if bundle.model != started.model:
        return "model"
    if bundle.seed is not None and bundle.seed != started.seed:
        return "seed"
    if bundle.request != started.request:
        return "request"
    record = bundle.to_record()
    stated = bundle.status
    if stated != record.status and not (record.status == RunStatus.INTERRUPTED and stated == RunStatus.RUNNING):
        return f"status ({stated} in the header, {record.status} in the events)"
    if bundle.result is not None and bundle.result != record.result:
        return "result"
    if bundle.support is not None and not _points_in(bundle.support, record.result.answer if record.result is not None else None):
        return "support check (its points are not in the run's answer)"
    return None


def _points_in(check: SupportCheck, answer: str | None) -> bool:
    """Whether every point of ``check`` stands in ``answer`` where it says it does (whitespace aside)."""
    if answer is None:
        return not check.points
    return all(answer[p.start : p.end].split() == p.text.split() for p in check.points)


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
    "MAX_BUNDLE_EVENTS",
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
