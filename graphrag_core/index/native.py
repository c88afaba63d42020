"""The native index format: a folder of JSON Lines files and a manifest.

Layout (see ``docs/index-format.md``)::

    manifest.json        {"format": "graphrag-explorer-index", "format_version": 1, "name", ...}
    communities.jsonl    one Community per line
    claims.jsonl         one Claim per line
    chunks.jsonl         one SourceChunk per line
    documents.jsonl      one Document per line
    entities.jsonl       optional: one Entity per line
    relationships.jsonl  optional: one Relationship per line

Every line is one JSON object whose keys are the model's fields in declaration order, written
with ``ensure_ascii=False``; every file ends with a newline. Blank lines are ignored on reading.

Opening an index reads the manifest and ``communities.jsonl``; each other file is parsed when
the index first needs it. Every line is parsed into its record, and the structural checks
(``graphrag_core.validation``) run as each table arrives, a failure naming the file, the line
and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..deferred import TableRead
from ..errors import IndexFormatError, IndexValidationError
from ..files import write_files
from ..models import Claim, Community, Document, Entity, Index, Relationship, SourceChunk
from ..validation import WARNING_EXAMPLES, RecordSource, check_structure, locate, structure_warnings  # noqa: F401 - re-exported
from ..validation import quote as _q

NATIVE_FORMAT = "graphrag-explorer-index"
"""The value of ``manifest.json``'s ``format`` key."""

NATIVE_FORMAT_VERSION = 1
"""The newest ``format_version`` this code reads, and the one it writes."""

MANIFEST_FILE = "manifest.json"
COMMUNITIES_FILE = "communities.jsonl"
CLAIMS_FILE = "claims.jsonl"
CHUNKS_FILE = "chunks.jsonl"
DOCUMENTS_FILE = "documents.jsonl"
ENTITIES_FILE = "entities.jsonl"
RELATIONSHIPS_FILE = "relationships.jsonl"

REQUIRED_FILES: tuple[str, ...] = (COMMUNITIES_FILE, CLAIMS_FILE, CHUNKS_FILE, DOCUMENTS_FILE)
OPTIONAL_FILES: tuple[str, ...] = (ENTITIES_FILE, RELATIONSHIPS_FILE)

R = TypeVar("R", bound=BaseModel)


class Manifest(BaseModel):
    """The contents of ``manifest.json``.

    ``counts`` is informative: a mismatch with the files becomes a warning, not a failure, so a
    hand-edited file still loads. ``warnings`` carries the oddities found when the index was
    first built (e.g. claims an importer could not attach), so they survive a save and a load.
    """

    model_config = ConfigDict(extra="forbid")

    format: Literal["graphrag-explorer-index"] = NATIVE_FORMAT
    format_version: int = Field(default=NATIVE_FORMAT_VERSION, ge=1)
    name: str = ""
    description: str = ""
    counts: dict[str, int] = Field(default_factory=dict)
    warnings: tuple[str, ...] = ()


# -- reading ---------------------------------------------------------------------------------------


def _field_name(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) if loc else "(record)"


def _describe_validation_error(exc: ValidationError, model: type[BaseModel]) -> tuple[str, str]:
    """(field, message) for the first problem pydantic found in one record."""
    error = exc.errors(include_url=False)[0]
    field = _field_name(error["loc"])
    kind = error["type"]
    more = f" ({exc.error_count() - 1} more problems on this line)" if exc.error_count() > 1 else ""
    if kind == "missing":
        return field, f"this required field is missing{more}."
    if kind == "extra_forbidden":
        allowed = ", ".join(model.model_fields)
        return field, f"unknown field (a {model.__name__} has: {allowed}){more}."
    return field, f"{error['msg']} (found {_q(error.get('input'))}){more}."


def read_jsonl(path: Path, model: type[R]) -> tuple[list[R], RecordSource]:
    """Parse one JSON Lines file into records; errors name the file, the line and the field.

    Invariant: ``records[i]`` came from line ``source.numbers[i]``. Blank lines are skipped.
    """
    records: list[R] = []
    numbers: list[int] = []
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IndexValidationError(f"{path.name}: cannot be read ({exc.strerror}).", path=str(path)) from exc
    try:
        text = raw.decode("utf-8-sig")  # a byte order mark (some editors write one) is not data
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise IndexValidationError(
            f"{path.name} line {line}: not valid UTF-8 text.", path=str(path), row=line
        ) from exc
    validate = model.model_validate_json
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append(validate(line))
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            if first["type"] == "json_invalid":
                raise IndexValidationError(
                    f"{path.name} line {number}: invalid JSON ({first['ctx'].get('error', first['msg'])}).",
                    path=str(path),
                    row=number,
                ) from exc
            if not first["loc"]:  # the line is valid JSON but not an object
                raise IndexValidationError(
                    f"{path.name} line {number}: expected a JSON object (a {model.__name__}).",
                    path=str(path),
                    row=number,
                ) from exc
            field, message = _describe_validation_error(exc, model)
            raise IndexValidationError(
                f'{path.name} line {number}, field "{field}": {message}', path=str(path), row=number, field=field
            ) from exc
        numbers.append(number)
    return records, RecordSource(path.name, "line", numbers, str(path))


def read_manifest(folder: Path) -> Manifest:
    """Parse ``manifest.json``; an unknown ``format`` or a newer ``format_version`` is an IndexFormatError."""
    path = folder / MANIFEST_FILE
    if path.is_dir():
        raise IndexFormatError(
            f"{path}: is a folder, but a native index's {MANIFEST_FILE} must be a JSON file.", path=str(path)
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError as exc:
        raise IndexFormatError(f"{folder}: no {MANIFEST_FILE} found.", path=str(path)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise IndexValidationError(f"{MANIFEST_FILE}: cannot be read ({exc}).", path=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise IndexValidationError(
            f"{MANIFEST_FILE} line {exc.lineno}: invalid JSON ({exc.msg}).", path=str(path), row=exc.lineno
        ) from exc
    if not isinstance(data, dict):
        raise IndexFormatError(f"{MANIFEST_FILE}: expected a JSON object.", path=str(path))
    if data.get("format") != NATIVE_FORMAT:
        raise IndexFormatError(
            f'{MANIFEST_FILE}, field "format": expected {_q(NATIVE_FORMAT)}, found {_q(data.get("format"))}.',
            path=str(path),
            field="format",
        )
    version = data.get("format_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > NATIVE_FORMAT_VERSION:
        raise IndexFormatError(
            f'{MANIFEST_FILE}, field "format_version": this index has format version {version}, but this '
            f"program reads versions up to {NATIVE_FORMAT_VERSION}; upgrade graphrag-global-explorer.",
            path=str(path),
            field="format_version",
        )
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        field, message = _describe_validation_error(exc, Manifest)
        raise IndexValidationError(
            f'{MANIFEST_FILE}, field "{field}": {message}', path=str(path), field=field
        ) from exc


class _NativeReader:
    """Reads a native index's other tables, each file when the index first needs it."""

    FILES: dict[str, tuple[str, type[BaseModel]]] = {
        "documents": (DOCUMENTS_FILE, Document),
        "chunks": (CHUNKS_FILE, SourceChunk),
        "claims": (CLAIMS_FILE, Claim),
        "entities": (ENTITIES_FILE, Entity),
        "relationships": (RELATIONSHIPS_FILE, Relationship),
    }

    def __init__(self, folder: Path, manifest: Manifest) -> None:
        self.folder = folder
        self.manifest = manifest

    def read(self, table: str, index: Index) -> TableRead:
        name, model = self.FILES[table]
        path = self.folder / name
        if name in OPTIONAL_FILES and not path.is_file():
            return TableRead((), RecordSource(name, "line", ()))
        records, source = read_jsonl(path, model)
        return TableRead(records, source)

    def final_warnings(self, index: Index) -> list[str]:
        """A manifest whose counts differ from the files (a hand-edited index still loads)."""
        actual = index.stats()
        counts = self.manifest.counts
        mismatched = [
            f"{table} {counts[table]} (files hold {actual[table]})"
            for table in actual
            if table in counts and counts[table] != actual[table]
        ]
        return [f"{MANIFEST_FILE} counts differ from the files: {', '.join(mismatched)}."] if mismatched else []


def load_native(folder: Path) -> Index:
    """Open a native index folder (the manifest must exist; entities and relationships are optional).

    The manifest and the communities are read and checked now, and every required file must be
    there; each other file is read when the index first needs it, its failures naming
    ``<file> line <n>, field "<name>"``. Warnings stored in the manifest come first on the
    index, followed by any new ones found now (each text once).
    """
    manifest = read_manifest(folder)
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if missing:
        raise IndexValidationError(
            f"{folder}: the native index is missing {', '.join(missing)} (next to {MANIFEST_FILE}).",
            path=str(folder / missing[0]),
        )
    communities, community_src = read_jsonl(folder / COMMUNITIES_FILE, Community)
    return Index.open(
        communities=communities,
        reader=_NativeReader(folder, manifest),
        name=manifest.name,
        description=manifest.description,
        warnings=manifest.warnings,
        source=community_src,
    )


# -- writing ---------------------------------------------------------------------------------------


OMITTED_WHEN_NONE = ("short_id",)
"""Optional fields written only when set, so indexes without them keep their bytes."""
OMITTED_WHEN_EMPTY: dict[str, tuple[str, ...]] = {"Entity": ("chunk_ids",), "Relationship": ("community_ids", "chunk_ids")}
"""Fields added later to a record type, written only when not empty (the same reason)."""


def _record_lines(records: Iterable[BaseModel]) -> Iterable[str]:
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    for record in records:
        data = record.model_dump(mode="json")
        for name in OMITTED_WHEN_NONE:
            if name in data and data[name] is None:
                del data[name]
        for name in OMITTED_WHEN_EMPTY.get(type(record).__name__, ()):
            if data.get(name) == []:
                del data[name]
        yield dumps(data)


def manifest_for(index: Index) -> Manifest:
    """The manifest that describes ``index`` (name, description, counts, warnings)."""
    return Manifest(
        name=index.name,
        description=index.description,
        counts=index.stats(),
        warnings=index.warnings,
    )


def save_native(index: Index, folder: Path) -> None:
    """Write ``index`` as a native folder, creating it if needed and replacing the index files in it.

    All six record files are written (entities and relationships possibly empty), all or none
    (:func:`graphrag_core.files.write_files`: a full disk leaves the old index whole); the
    manifest is replaced last, so a folder whose manifest is present holds a complete set of
    files. Other files in the folder are left alone.
    """
    if folder.exists() and not folder.is_dir():
        raise IndexValidationError(f"{folder}: exists and is not a folder; cannot save an index there.", path=str(folder))
    folder.mkdir(parents=True, exist_ok=True)
    tables: list[tuple[str, Sequence[BaseModel]]] = [
        (COMMUNITIES_FILE, index.communities),
        (CLAIMS_FILE, index.claims),
        (CHUNKS_FILE, index.chunks),
        (DOCUMENTS_FILE, index.documents),
        (ENTITIES_FILE, index.entities),
        (RELATIONSHIPS_FILE, index.relationships),
    ]
    files: dict[Path, Iterable[str]] = {folder / name: (line + "\n" for line in _record_lines(records)) for name, records in tables}
    files[folder / MANIFEST_FILE] = json.dumps(manifest_for(index).model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n"
    write_files(files)


def looks_native(folder: Path) -> bool:
    """True when ``folder`` holds a ``manifest.json`` (whatever it is; reading checks it, and
    says so when it is a folder)."""
    return (folder / MANIFEST_FILE).exists()

