"""Import the parquet outputs of Microsoft GraphRAG (1.x as ``create_final_*``, 2.x and 3.x).

How the tables become records (see ``shared/data/msgraphrag/README.md`` for the links):

* Community ids are the integer ``community`` numbers that reports cite, as text: the citation
  ``[Data: Reports (12)]`` resolves to community ``"12"``. ``parent`` -1 (or null) is a root.
  A community's summary is its report's ``full_content`` (default) or ``summary``; its title
  is the report's title, else the community's own.
* Claims are the ``covariates``. Each is attached to the leaf community (a community that no
  community names as parent) holding its subject entity (subjects are entity *titles*); when
  the subject is no entity, or no leaf holds it, to a leaf holding its text unit. When several
  leaves qualify, the first in ``communities`` order wins. Claims that fit nowhere are left
  out and counted in a warning on ``Index.warnings`` that names some of their ids.
* Text units are the chunks (a v1/v2 unit's first ``document_ids`` entry is its document);
  entities and relationships come along for graph views, ``Entity.community_ids`` being every
  community (all levels, in ``communities`` order) whose ``entity_ids`` holds the entity.

Columns are read whole with pyarrow (``to_pylist`` per column); there is no per-row pandas.
Errors name the file, the row (counted from 0) and the column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import IndexFormatError, IndexValidationError
from ..models import Claim, Community, Document, Entity, Index, Relationship, SourceChunk
from .native import WARNING_EXAMPLES, RecordSource, check_structure

SummaryChoice = Literal["full_content", "summary"]
"""Which report text becomes a community's summary."""

MsVersion = Literal["msgraphrag-v3", "msgraphrag-v2", "msgraphrag-v1"]

V1_PREFIX = "create_final_"
V3_REQUIRED: tuple[str, ...] = ("communities.parquet", "community_reports.parquet")
V1_REQUIRED: tuple[str, ...] = tuple(V1_PREFIX + name for name in V3_REQUIRED)
OPTIONAL_TABLES: tuple[str, ...] = ("entities", "relationships", "covariates", "text_units", "documents")

ROOT_PARENT = "-1"
"""The ``parent`` value GraphRAG writes for a root community."""

NO_OBJECT = frozenset({"", "NONE"})
"""``object_id`` values that mean the claim has no object."""

Kind = Literal["int", "float", "str", "id", "str_list"]
"""Column kinds: ``id`` accepts integers or strings (taken as text); ``float`` accepts integers."""


def _table_file(version: MsVersion, table: str) -> str:
    return (V1_PREFIX if version == "msgraphrag-v1" else "") + table + ".parquet"


def _missing_error(folder: Path, found: Sequence[str], missing: Sequence[str], label: str) -> IndexFormatError:
    return IndexFormatError(
        f"{folder}: looks like a {label} output (found {', '.join(found)}) but is missing "
        f"{', '.join(missing)}.",
        path=str(folder / missing[0]),
    )


def detect_version(folder: Path) -> MsVersion | None:
    """The GraphRAG layout of ``folder``, or None when it holds no GraphRAG community tables.

    v2 and v3 share table names; v2's ``text_units`` has ``document_ids`` (a list) where v3 has
    ``document_id``. Raises :class:`IndexFormatError` when some but not all required tables exist.
    """
    for required, label, version in (
        (V3_REQUIRED, "Microsoft GraphRAG 2.x/3.x", "msgraphrag-v3"),
        (V1_REQUIRED, "Microsoft GraphRAG 1.x", "msgraphrag-v1"),
    ):
        found = [name for name in required if (folder / name).is_file()]
        if not found:
            continue
        missing = [name for name in required if name not in found]
        if missing:
            raise _missing_error(folder, found, missing, label)
        if version == "msgraphrag-v3" and (folder / "text_units.parquet").is_file():
            if "document_ids" in _schema(folder / "text_units.parquet").names:
                return "msgraphrag-v2"
        return version  # type: ignore[return-value]
    return None


def _schema(path: Path) -> pa.Schema:
    try:
        return pq.read_schema(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise IndexValidationError(f"{path.name}: not a readable parquet file ({exc}).", path=str(path)) from exc


def _kind_matches(kind: Kind, dtype: pa.DataType) -> bool:
    if kind == "int":
        return pa.types.is_integer(dtype)
    if kind == "float":
        return pa.types.is_integer(dtype) or pa.types.is_floating(dtype)
    if kind == "str":
        return pa.types.is_string(dtype) or pa.types.is_large_string(dtype)
    if kind == "id":
        return pa.types.is_integer(dtype) or pa.types.is_string(dtype) or pa.types.is_large_string(dtype)
    value = getattr(dtype, "value_type", None)
    return (pa.types.is_list(dtype) or pa.types.is_large_list(dtype)) and value is not None and (
        pa.types.is_string(value) or pa.types.is_large_string(value) or pa.types.is_integer(value)
    )


_KIND_TEXT: dict[Kind, str] = {
    "int": "integers",
    "float": "numbers",
    "str": "strings",
    "id": "integers or strings",
    "str_list": "lists of ids",
}


@dataclass(frozen=True)
class _Columns:
    """Some columns of one parquet file as Python lists; absent optional columns are not keys."""

    file: str
    path: Path
    rows: int
    data: Mapping[str, list[Any]]

    def get(self, name: str, default: Any = None) -> list[Any]:
        column = self.data.get(name)
        return column if column is not None else [default] * self.rows

    def error(self, row: int, column: str, message: str) -> IndexValidationError:
        return IndexValidationError(
            f'{self.file} row {row}, field "{column}": {message}', path=str(self.path), row=row, field=column
        )


def _read_columns(
    path: Path,
    *,
    required: Mapping[str, Kind],
    optional: Mapping[str, Kind] = {},
    not_null: Sequence[str] = (),
    hint: str = "",
) -> _Columns:
    """Read the named columns, checking presence, types and nulls before any value is used.

    ``required`` columns must exist (else :class:`IndexFormatError` listing the columns found);
    columns in ``not_null`` must hold no null (else an error naming the first null row).
    """
    schema = _schema(path)
    missing = [name for name in required if name not in schema.names]
    if missing:
        raise IndexFormatError(
            f"{path.name}: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(found: {', '.join(schema.names)}).{hint}",
            path=str(path),
            field=missing[0],
        )
    wanted = {**{k: v for k, v in optional.items() if k in schema.names}, **required}
    for name, kind in wanted.items():
        dtype = schema.field(name).type
        if not _kind_matches(kind, dtype):
            raise IndexValidationError(
                f'{path.name}, field "{name}": expected {_KIND_TEXT[kind]}, found column type {dtype}.',
                path=str(path),
                field=name,
            )
    try:
        table = pq.read_table(path, columns=list(wanted))
    except (OSError, pa.ArrowInvalid) as exc:
        raise IndexValidationError(f"{path.name}: not a readable parquet file ({exc}).", path=str(path)) from exc
    for name in not_null:
        column = table.column(name)
        if column.null_count:
            row = pc.index(pc.is_null(column), True).as_py()
            raise IndexValidationError(
                f'{path.name} row {row}, field "{name}": missing value (null).', path=str(path), row=row, field=name
            )
    data = {name: table.column(name).to_pylist() for name in wanted}
    return _Columns(path.name, path, table.num_rows, data)


def _as_id(value: Any) -> str:
    return str(value)


def _examples(ids: Sequence[str]) -> str:
    shown = ", ".join(f'"{i}"' for i in ids[:WARNING_EXAMPLES])
    return shown + (f", ... ({len(ids) - WARNING_EXAMPLES} more)" if len(ids) > WARNING_EXAMPLES else "")


OLD_LAYOUT_HINT = (
    " This looks like the output of a GraphRAG older than 1.0, which this program does not read;"
    " re-index with GraphRAG 1.x or later."
)


def load_msgraphrag(folder: Path, *, version: MsVersion, summary: SummaryChoice = "full_content") -> Index:
    """Build an :class:`Index` from a GraphRAG output folder (see the module docstring for the mapping).

    Invariants of the result: one community per ``communities`` row, in file order; every
    report's ``community`` is a community id; one chunk per text unit, one entity, relationship
    and document per row; one claim per covariate row except those counted in a warning.
    """
    file = lambda table: folder / _table_file(version, table)  # noqa: E731
    present = {table: file(table).is_file() for table in OPTIONAL_TABLES}

    comms = _read_columns(
        file("communities"),
        required={"community": "id", "level": "int", "parent": "id"},
        optional={"title": "str", "size": "int", "entity_ids": "str_list", "text_unit_ids": "str_list"},
        not_null=("community", "level"),
        hint=OLD_LAYOUT_HINT,
    )
    reports = _read_columns(
        file("community_reports"),
        required={"community": "id", summary: "str"},
        optional={"title": "str", "rank": "float"},
        not_null=("community",),
        hint=OLD_LAYOUT_HINT,
    )

    ids = [_as_id(c) for c in comms.get("community")]
    parents = [None if p is None or _as_id(p) == ROOT_PARENT else _as_id(p) for p in comms.get("parent")]
    row_of = {cid: row for row, cid in enumerate(ids)}
    if len(row_of) != len(ids):
        seen: dict[str, int] = {}
        for row, cid in enumerate(ids):
            if cid in seen:
                raise comms.error(row, "community", f'duplicate community "{cid}" (first at row {seen[cid]}).')
            seen[cid] = row

    report_of: dict[str, int] = {}
    for row, value in enumerate(reports.get("community")):
        cid = _as_id(value)
        if cid in report_of:
            raise reports.error(row, "community", f'a second report for community "{cid}" (first at row {report_of[cid]}).')
        if cid not in row_of:
            raise reports.error(
                row, "community", f'the report is for community "{cid}", which {comms.file} does not hold.'
            )
        report_of[cid] = row

    warnings: list[str] = []
    report_titles, report_texts, report_ranks = reports.get("title"), reports.get(summary), reports.get("rank")
    community_titles, sizes, levels = comms.get("title"), comms.get("size"), comms.get("level")
    members = comms.get("entity_ids")
    communities: list[Community] = []
    unreported: list[str] = []
    for row, cid in enumerate(ids):
        report = report_of.get(cid)
        if report is None:
            unreported.append(cid)
        communities.append(
            Community(
                id=cid,
                level=levels[row],
                parent_id=parents[row],
                title=(report is not None and report_titles[report]) or community_titles[row] or "",
                summary=(report is not None and report_texts[report]) or "",
                rank=None if report is None else report_ranks[report],
                size=sizes[row],
                entity_ids=tuple(members[row] or ()),
            )
        )
    if unreported:
        warnings.append(f"{len(unreported)} communities have no report, so no summary: {_examples(unreported)}.")

    # -- entities and relationships ---------------------------------------------------------
    entities: list[Entity] = []
    entity_rows: list[int] = []
    title_to_entity: dict[str, str] = {}
    if present["entities"]:
        ents = _read_columns(
            file("entities"),
            required={"id": "id", "title": "str"},
            optional={"type": "str", "description": "str"},
            not_null=("id", "title"),
        )
        communities_of: dict[str, list[str]] = {}
        for cid, entity_ids in zip(ids, members):
            for entity_id in entity_ids or ():
                communities_of.setdefault(entity_id, []).append(cid)
        types, descriptions = ents.get("type"), ents.get("description")
        for row, (entity_id, title) in enumerate(zip(ents.get("id"), ents.get("title"))):
            entity_id = _as_id(entity_id)
            title_to_entity.setdefault(title, entity_id)
            entities.append(
                Entity(
                    id=entity_id,
                    title=title,
                    type=types[row],
                    description=descriptions[row] or "",
                    community_ids=tuple(communities_of.get(entity_id, ())),
                )
            )
        entity_rows = list(range(ents.rows))

    relationships: list[Relationship] = []
    if present["relationships"]:
        rels = _read_columns(
            file("relationships"),
            required={"id": "id", "source": "str", "target": "str"},
            optional={"description": "str", "weight": "float"},
            not_null=("id", "source", "target"),
        )
        descriptions, weights = rels.get("description"), rels.get("weight")
        relationships = [
            Relationship(id=_as_id(rid), source=source, target=target, description=descriptions[row] or "", weight=weights[row])
            for row, (rid, source, target) in enumerate(zip(rels.get("id"), rels.get("source"), rels.get("target")))
        ]

    # -- documents and chunks ---------------------------------------------------------------
    documents: list[Document] = []
    if present["documents"]:
        docs = _read_columns(file("documents"), required={"id": "id"}, optional={"title": "str"}, not_null=("id",))
        titles = docs.get("title")
        documents = [Document(id=_as_id(did), title=titles[row] or "") for row, did in enumerate(docs.get("id"))]

    chunks: list[SourceChunk] = []
    document_field = "document_id" if version == "msgraphrag-v3" else "document_ids"
    if present["text_units"]:
        units = _read_columns(
            file("text_units"),
            required={"id": "id", "text": "str"},
            optional={document_field: "str" if document_field == "document_id" else "str_list"},
            not_null=("id",),
        )
        texts, owners = units.get("text"), units.get(document_field)
        shared_units: list[str] = []
        for row, unit_id in enumerate(units.get("id")):
            owner = owners[row]
            if isinstance(owner, list):
                if len(owner) > 1:
                    shared_units.append(_as_id(unit_id))
                owner = owner[0] if owner else None
            chunks.append(
                SourceChunk(id=_as_id(unit_id), document_id=None if owner is None else _as_id(owner), text=texts[row] or "")
            )
        if shared_units:
            warnings.append(
                f"{len(shared_units)} text units belong to several documents; each keeps its first: "
                f"{_examples(shared_units)}."
            )

    # -- claims -----------------------------------------------------------------------------
    claims: list[Claim] = []
    claim_rows: list[int] = []
    if present["covariates"]:
        covs = _read_columns(
            file("covariates"),
            required={"id": "id", "subject_id": "str", "text_unit_id": "id"},
            optional={"object_id": "str", "description": "str"},
            not_null=("id", "subject_id"),
        )
        if not present["text_units"]:
            raise _missing_error(
                folder, [covs.file], [_table_file(version, "text_units")], "Microsoft GraphRAG output with claims"
            )
        chunk_ids = {chunk.id for chunk in chunks}
        leaves = set(ids).difference(p for p in parents if p is not None)
        leaf_of_entity: dict[str, str] = {}
        leaf_of_unit: dict[str, str] = {}
        unit_lists = comms.get("text_unit_ids")
        for row, cid in enumerate(ids):
            if cid in leaves:
                for entity_id in members[row] or ():
                    leaf_of_entity.setdefault(entity_id, cid)
                for unit_id in unit_lists[row] or ():
                    leaf_of_unit.setdefault(unit_id, cid)
        objects, descriptions = covs.get("object_id"), covs.get("description")
        unattached: list[str] = []
        for row, (claim_id, subject, unit) in enumerate(zip(covs.get("id"), covs.get("subject_id"), covs.get("text_unit_id"))):
            claim_id = _as_id(claim_id)
            unit = None if unit is None else _as_id(unit)
            if unit is not None and unit not in chunk_ids:
                raise covs.error(
                    row, "text_unit_id", f'claim "{claim_id}" names text unit "{unit}", which does not exist.'
                )
            entity_id = title_to_entity.get(subject)
            community_id = leaf_of_entity.get(entity_id) if entity_id is not None else None
            if community_id is None and unit is not None:
                community_id = leaf_of_unit.get(unit)
            if community_id is None:
                unattached.append(claim_id)
                continue
            obj = objects[row]
            claims.append(
                Claim(
                    id=claim_id,
                    community_id=community_id,
                    subject=subject,
                    object=None if obj is None or obj.strip() in NO_OBJECT else obj,
                    description=descriptions[row] or "",
                    chunk_ids=() if unit is None else (unit,),
                )
            )
            claim_rows.append(row)
        if unattached:
            warnings.append(
                f"{len(unattached)} of {covs.rows} claims could not be attached to a leaf community "
                f"(neither their subject entity nor their text unit is in one) and were left out: "
                f"{_examples(unattached)}."
            )

    renamed = {"id": "community", "parent_id": "parent"}
    warnings += check_structure(
        communities=communities,
        claims=claims,
        chunks=chunks,
        documents=documents,
        entities=entities,
        relationships=relationships,
        sources={
            "communities": RecordSource(comms.file, "row", range(len(communities)), str(comms.path), renamed),
            "claims": RecordSource(
                _table_file(version, "covariates"), "row", claim_rows, None, {"chunk_ids": "text_unit_id"}
            ),
            "chunks": RecordSource(
                _table_file(version, "text_units"), "row", range(len(chunks)), None, {"document_id": document_field}
            ),
            "documents": RecordSource(_table_file(version, "documents"), "row", range(len(documents))),
            "entities": RecordSource(_table_file(version, "entities"), "row", entity_rows),
            "relationships": RecordSource(_table_file(version, "relationships"), "row", range(len(relationships))),
        },
    )
    name = folder.parent.name if folder.name in ("output", "artifacts") else folder.name
    return Index(
        communities=tuple(communities),
        claims=tuple(claims),
        chunks=tuple(chunks),
        documents=tuple(documents),
        entities=tuple(entities),
        relationships=tuple(relationships),
        name=name,
        description=f"Imported from a Microsoft GraphRAG output ({version.removeprefix('msgraphrag-')} layout); "
        f"community summaries are the reports' {summary}.",
        warnings=tuple(warnings),
    )
