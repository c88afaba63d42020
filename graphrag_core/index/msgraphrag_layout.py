"""Where a Microsoft GraphRAG output's tables are, and what each must hold: the layout of a
folder (0.x, 1.x, 2.x or 3.x; parquet or CSV tables), detected from its file names and
columns, and the columns read from each optional table in that layout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import IndexFormatError
from .tables import SUFFIXES, Kind, check_columns, read_schema

SummaryChoice = Literal["full_content", "summary"]
"""Which report text becomes a community's summary."""

MsVersion = Literal["msgraphrag-v3", "msgraphrag-v2", "msgraphrag-v1", "msgraphrag-v0"]

V1_PREFIX = "create_final_"
V3_REQUIRED: tuple[str, ...] = ("communities.parquet", "community_reports.parquet")
V1_REQUIRED: tuple[str, ...] = tuple(V1_PREFIX + name for name in V3_REQUIRED)
OPTIONAL_TABLES: tuple[str, ...] = ("entities", "relationships", "covariates", "text_units", "documents")

_LABELS: dict[str, str] = {"": "Microsoft GraphRAG 2.x/3.x", V1_PREFIX: "Microsoft GraphRAG 1.x"}


@dataclass(frozen=True)
class TableSpec:
    """The columns read from one table: required, optional (read when present) and never null."""

    required: Mapping[str, Kind]
    optional: Mapping[str, Kind] = field(default_factory=dict)
    not_null: tuple[str, ...] = ()


@dataclass(frozen=True)
class Layout:
    """One output folder and its GraphRAG version. Each table is a ``.parquet`` file, else a
    ``.csv`` one (GraphRAG 3.x's CSV table storage); a missing table is named as parquet."""

    folder: Path
    version: MsVersion

    @property
    def prefix(self) -> str:
        return V1_PREFIX if self.version in ("msgraphrag-v1", "msgraphrag-v0") else ""

    def file(self, table: str) -> Path:
        return table_path(self.folder, self.prefix + table)

    def name(self, table: str) -> str:
        return self.file(table).name

    def present(self, table: str) -> bool:
        return self.file(table).is_file()

    @property
    def text(self) -> str:
        """How a description names the layout: ``v3 layout``, ``v3 layout, CSV tables``."""
        shown = self.version.removeprefix("msgraphrag-")
        csv = self.file("communities").suffix == ".csv"
        return f"{shown} layout" + (", CSV tables" if csv else "")


def table_path(folder: Path, stem: str) -> Path:
    """The file of one table: the first of :data:`~.tables.SUFFIXES` that exists, else parquet."""
    for suffix in SUFFIXES:
        path = folder / (stem + suffix)
        if path.is_file():
            return path
    return folder / (stem + SUFFIXES[0])


def missing_error(folder: Path, found: Sequence[str], missing: Sequence[str], label: str) -> IndexFormatError:
    return IndexFormatError(
        f"{folder}: looks like a {label} output (found {', '.join(found)}) but is missing "
        f"{', '.join(missing)}.",
        path=str(folder / missing[0]),
    )


def detect_layout(folder: Path) -> Layout | None:
    """The GraphRAG layout of ``folder``, or None when it holds no GraphRAG community tables.

    v2 and v3 share table names; v2's ``text_units`` has ``document_ids`` (a list) where v3 has
    ``document_id``. 0.x and 1.x share the ``create_final_`` names; 0.x communities have no
    ``parent``. Raises :class:`IndexFormatError` when some but not all required tables exist.
    """
    for prefix, label in _LABELS.items():
        required = [table_path(folder, prefix + name) for name in ("communities", "community_reports")]
        found = [path.name for path in required if path.is_file()]
        if not found:
            continue
        missing = [path.name for path in required if not path.is_file()]
        if missing:
            raise missing_error(folder, found, missing, label)
        if prefix:
            columns = read_schema(required[0]).names
            return Layout(folder, "msgraphrag-v1" if "parent" in columns else "msgraphrag-v0")
        units = table_path(folder, "text_units")
        if units.is_file() and "document_ids" in read_schema(units).names:
            return Layout(folder, "msgraphrag-v2")
        return Layout(folder, "msgraphrag-v3")
    return None


def detect_version(folder: Path) -> MsVersion | None:
    """The GraphRAG version of the output in ``folder`` (:func:`detect_layout`), or None."""
    layout = detect_layout(folder)
    return None if layout is None else layout.version


def document_field_of(version: MsVersion) -> str:
    """The text units' column naming their document: one id from v3 on, a list before."""
    return "document_id" if version == "msgraphrag-v3" else "document_ids"


def table_specs(layout: Layout) -> dict[str, TableSpec]:
    """What each optional table must and may hold, in this layout."""
    document_field = document_field_of(layout.version)
    title = entity_title(layout)
    return {
        "entities": TableSpec(
            {"id": "id", title: "str"},
            {"type": "str", "description": "str", "human_readable_id": "id", "text_unit_ids": "str_list"},
            ("id", title),
        ),
        "relationships": TableSpec(
            {"id": "id", "source": "str", "target": "str"},
            {"description": "str", "weight": "float", "human_readable_id": "id", "text_unit_ids": "str_list"},
            ("id", "source", "target"),
        ),
        "documents": TableSpec({"id": "id"}, {"title": "str"}, ("id",)),
        "text_units": TableSpec(
            {"id": "id", "text": "str"},
            {document_field: "id" if document_field == "document_id" else "str_list", "human_readable_id": "id"},
            ("id",),
        ),
        "covariates": TableSpec(
            {"id": "id", "subject_id": "str", "text_unit_id": "id"},
            {"object_id": "str", "description": "str", "human_readable_id": "id"},
            ("id", "subject_id"),
        ),
    }


def entity_title(layout: Layout) -> str:
    """The entities' title column: ``title``, or ``name`` in the early 0.x outputs."""
    if layout.version == "msgraphrag-v0" and layout.present("entities"):
        names = read_schema(layout.file("entities")).names
        if "title" not in names and "name" in names:
            return "name"
    return "title"


def check_tables(layout: Layout, specs: Mapping[str, TableSpec]) -> None:
    """Every optional table the output has holds the columns it must (footers and headers only)."""
    for table in OPTIONAL_TABLES:
        if layout.present(table):
            spec = specs[table]
            check_columns(layout.file(table), required=spec.required, optional=spec.optional)
    if layout.present("covariates") and not layout.present("text_units"):
        raise missing_error(
            layout.folder, [layout.name("covariates")], [layout.name("text_units")], "Microsoft GraphRAG output with claims"
        )


__all__ = [
    "OPTIONAL_TABLES",
    "V1_PREFIX",
    "V1_REQUIRED",
    "V3_REQUIRED",
    "Layout",
    "MsVersion",
    "SummaryChoice",
    "TableSpec",
    "check_tables",
    "detect_layout",
    "detect_version",
    "document_field_of",
    "entity_title",
    "missing_error",
    "table_path",
    "table_specs",
]
