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
  community (all levels, in ``communities`` order) whose ``entity_ids`` holds the entity, and
  ``Relationship.community_ids`` every one whose ``relationship_ids`` holds the relationship.
  Entities and relationships keep their ``text_unit_ids`` as ``chunk_ids``; every record keeps
  its ``human_readable_id`` as ``short_id``, the number reports cite (``[Data: Entities (5)]``).

Columns are read whole with pyarrow (``to_pylist`` per column); there is no per-row pandas.
Errors name the file, the row (counted from 0) and the column.

Why this module is long: it is the one place that knows every Microsoft GraphRAG layout; the
column mapping of each table, for each version, reads side by side with the links between
the tables that the mapping depends on (claims to leaves, entities to communities).
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
from ..validation import WARNING_EXAMPLES, RecordSource, structure_warnings

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
    """Some checked columns of one parquet file; absent optional columns read as all-null."""

    file: str
    path: Path
    table: pa.Table

    @property
    def rows(self) -> int:
        return self.table.num_rows

    def has(self, name: str) -> bool:
        return name in self.table.column_names

    def array(self, name: str, dtype: pa.DataType | None = None) -> pa.Array:
        """The column as one arrow array (all nulls of ``dtype`` when the column is absent)."""
        if not self.has(name):
            return pa.nulls(self.rows, dtype or pa.null())
        column = self.table.column(name).combine_chunks()
        return column if dtype is None or column.type == dtype else pc.cast(column, dtype)

    def get(self, name: str, default: Any = None) -> list[Any]:
        """The column as a Python list (``[default] * rows`` when the column is absent)."""
        if not self.has(name):
            return [default] * self.rows
        return self.table.column(name).to_pylist()

    def ids(self, name: str) -> list[str]:
        """An id column (integers or strings, no nulls) as strings: 12 becomes "12"."""
        return self.array(name, pa.string()).to_pylist()

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
    return _Columns(path.name, path, table)


def _examples(ids: Sequence[str]) -> str:
    shown = ", ".join(f'"{i}"' for i in ids[:WARNING_EXAMPLES])
    return shown + (f", ... ({len(ids) - WARNING_EXAMPLES} more)" if len(ids) > WARNING_EXAMPLES else "")


OLD_LAYOUT_HINT = (
    " This looks like the output of a GraphRAG older than 1.0, which this program does not read;"
    " re-index with GraphRAG 1.x or later."
)


def _first_owner(keys: pa.Array, owner_ids: pa.Array, members: pa.Array) -> pa.Array:
    """For each key, the id of the first owner (in ``owner_ids`` order) whose member list holds it.

    ``members[i]`` is the list of member ids of owner ``owner_ids[i]``; the result is a string
    array aligned with ``keys``, null where no owner holds the key (or the key is null).
    """
    flat = pc.cast(pc.list_flatten(members), pa.string())
    owner_of_flat = pc.take(owner_ids, pc.list_parent_indices(members))
    return pc.take(owner_of_flat, pc.index_in(keys, value_set=flat))


def _numbers(columns: _Columns, name: str) -> list[float | None]:
    """A float column as a list (null: missing). NaN and infinities are refused with the file,
    row and column: they are no rank or weight, and would otherwise load without a word."""
    column = columns.array(name, pa.float64())
    bad = _first_bad_row(pc.invert(pc.is_finite(column)))
    if bad is not None:
        raise columns.error(bad, name, f"{column[bad].as_py()} is not a finite number.")
    return column.to_pylist()


def _first_bad_row(mask: pa.Array) -> int | None:
    """The first row where ``mask`` is true, or None."""
    row = pc.index(pc.fill_null(mask, False), True).as_py()
    return None if row < 0 else row


@dataclass
class _Reading:
    """One folder being read: where its tables are, which optional ones exist, the warnings so far."""

    folder: Path
    version: MsVersion
    warnings: list[str]

    def file(self, table: str) -> Path:
        return self.folder / _table_file(self.version, table)

    def present(self, table: str) -> bool:
        return self.file(table).is_file()


@dataclass(frozen=True)
class _CommunityTable:
    """The communities (with their reports' titles and summaries), and what later joins need."""

    communities: list[Community]
    columns: _Columns
    ids: list[str]
    parents: list[str | None]
    row_of: dict[str, int]
    members: list[tuple[str, ...]]


def _read_communities(reading: _Reading, summary: SummaryChoice) -> _CommunityTable:
    """``communities`` joined with ``community_reports``: one community per row, in file order."""
    comms = _read_columns(
        reading.file("communities"),
        required={"community": "id", "level": "int", "parent": "id"},
        optional={"title": "str", "size": "int", "entity_ids": "str_list", "text_unit_ids": "str_list", "relationship_ids": "str_list"},
        not_null=("community", "level"),
        hint=OLD_LAYOUT_HINT,
    )
    reports = _read_columns(
        reading.file("community_reports"),
        required={"community": "id", summary: "str"},
        optional={"title": "str", "rank": "float"},
        not_null=("community",),
        hint=OLD_LAYOUT_HINT,
    )
    for table in (comms, reports):
        if table.rows == 0:
            raise IndexFormatError(
                f"{table.path}: the table has no rows, so the index holds no "
                f"{'communities' if table is comms else 'community reports (no summaries)'}; "
                "was the GraphRAG indexing run complete?",
                path=str(table.path),
            )
    negative = _first_bad_row(pc.less(comms.array("level"), 0))
    if negative is not None:
        raise comms.error(negative, "level", f"level {comms.get('level')[negative]} is negative; levels count from 0.")

    ids = comms.ids("community")
    parents = [None if p is None or p == ROOT_PARENT else p for p in comms.ids("parent")]
    row_of = {cid: row for row, cid in enumerate(ids)}
    if len(row_of) != len(ids):
        seen: dict[str, int] = {}
        for row, cid in enumerate(ids):
            if cid in seen:
                raise comms.error(row, "community", f'duplicate community "{cid}" (first at row {seen[cid]}).')
            seen[cid] = row

    report_of: dict[str, int] = {}
    for row, cid in enumerate(reports.ids("community")):
        if cid in report_of:
            raise reports.error(row, "community", f'a second report for community "{cid}" (first at row {report_of[cid]}).')
        if cid not in row_of:
            raise reports.error(row, "community", f'the report is for community "{cid}", which {comms.file} does not hold.')
        report_of[cid] = row

    report_titles, report_texts = reports.get("title"), reports.get(summary)
    report_ranks = _numbers(reports, "rank")
    community_titles, sizes, levels = comms.get("title"), comms.get("size"), comms.get("level")
    members = _id_lists(comms, "entity_ids")
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
                entity_ids=members[row],
            )
        )
    if unreported:
        reading.warnings.append(f"{len(unreported)} communities have no report, so no summary: {_examples(unreported)}.")
    return _CommunityTable(communities, comms, ids, parents, row_of, members)


def _id_lists(columns: _Columns, name: str) -> list[tuple[str, ...]]:
    """A list-of-ids column as tuples of text ids (empty where absent or null)."""
    return [tuple(ids) if ids else () for ids in columns.array(name, pa.list_(pa.string())).to_pylist()]


def _communities_holding(table: _CommunityTable, member_column: str) -> dict[str, list[str]]:
    """Member id -> the communities (in ``communities`` order) whose ``member_column`` lists it."""
    holders: dict[str, list[str]] = {}
    for cid, members in zip(table.ids, _id_lists(table.columns, member_column)):
        for member in members:
            holders.setdefault(member, []).append(cid)
    return holders


@dataclass(frozen=True)
class _EntityTable:
    entities: list[Entity]
    ids: pa.Array
    titles: pa.Array


def _read_entities(reading: _Reading, table: _CommunityTable) -> _EntityTable:
    """``entities`` (optional), each with the communities that list it as a member."""
    if not reading.present("entities"):
        return _EntityTable([], pa.array([], pa.string()), pa.array([], pa.string()))
    ents = _read_columns(
        reading.file("entities"),
        required={"id": "id", "title": "str"},
        optional={"type": "str", "description": "str", "human_readable_id": "id", "text_unit_ids": "str_list"},
        not_null=("id", "title"),
    )
    entity_ids = ents.array("id", pa.string())
    entity_titles = ents.array("title", pa.string())
    communities_of = _communities_holding(table, "entity_ids")
    types, descriptions = ents.get("type"), ents.get("description")
    short_ids = ents.array("human_readable_id", pa.string()).to_pylist()
    units = _id_lists(ents, "text_unit_ids")
    entities = [
        Entity(
            id=entity_id,
            title=title,
            type=types[row],
            description=descriptions[row] or "",
            community_ids=tuple(communities_of.get(entity_id, ())),
            short_id=short_ids[row],
            chunk_ids=units[row],
        )
        for row, (entity_id, title) in enumerate(zip(entity_ids.to_pylist(), entity_titles.to_pylist()))
    ]
    return _EntityTable(entities, entity_ids, entity_titles)


def _read_relationships(reading: _Reading, table: _CommunityTable) -> list[Relationship]:
    """``relationships`` (optional), one per row, each with the communities whose
    ``relationship_ids`` hold it and its text units."""
    if not reading.present("relationships"):
        return []
    rels = _read_columns(
        reading.file("relationships"),
        required={"id": "id", "source": "str", "target": "str"},
        optional={"description": "str", "weight": "float", "human_readable_id": "id", "text_unit_ids": "str_list"},
        not_null=("id", "source", "target"),
    )
    descriptions = rels.get("description")
    weights = _numbers(rels, "weight")
    short_ids = rels.array("human_readable_id", pa.string()).to_pylist()
    communities_of = _communities_holding(table, "relationship_ids")
    units = _id_lists(rels, "text_unit_ids")
    return [
        Relationship(
            id=rid, source=source, target=target, description=descriptions[row] or "", weight=weights[row], short_id=short_ids[row],
            community_ids=tuple(communities_of.get(rid, ())), chunk_ids=units[row],
        )
        for row, (rid, source, target) in enumerate(zip(rels.ids("id"), rels.get("source"), rels.get("target")))
    ]


def _read_documents(reading: _Reading) -> list[Document]:
    """``documents`` (optional), one per row."""
    if not reading.present("documents"):
        return []
    docs = _read_columns(reading.file("documents"), required={"id": "id"}, optional={"title": "str"}, not_null=("id",))
    titles = docs.get("title")
    return [Document(id=did, title=titles[row] or "") for row, did in enumerate(docs.ids("id"))]


def _document_field(version: MsVersion) -> str:
    """The text units' column naming their document: one id from v3 on, a list before."""
    return "document_id" if version == "msgraphrag-v3" else "document_ids"


def _read_text_units(reading: _Reading) -> tuple[list[SourceChunk], pa.Array]:
    """``text_units`` (optional) as source chunks, each with its (first) document; and their ids."""
    if not reading.present("text_units"):
        return [], pa.array([], pa.string())
    document_field = _document_field(reading.version)
    units = _read_columns(
        reading.file("text_units"),
        required={"id": "id", "text": "str"},
        optional={document_field: "id" if document_field == "document_id" else "str_list", "human_readable_id": "id"},
        not_null=("id",),
    )
    chunk_ids = units.array("id", pa.string())
    if document_field == "document_ids" and units.has(document_field):
        owner_lists = units.array(document_field, pa.list_(pa.string()))
        shared = pc.greater(pc.list_value_length(owner_lists), 1)
        if pc.any(shared).as_py():
            shared_units = pc.filter(chunk_ids, shared).to_pylist()
            reading.warnings.append(
                f"{len(shared_units)} text units belong to several documents; each keeps its first: "
                f"{_examples(shared_units)}."
            )
        owners = pa.array([owned[0] if owned else None for owned in owner_lists.to_pylist()], pa.string())
    else:
        owners = units.array(document_field, pa.string())
    texts = units.get("text")
    short_ids = units.array("human_readable_id", pa.string()).to_pylist()
    chunks = [
        SourceChunk(id=chunk_id, document_id=owner, text=texts[row] or "", short_id=short_ids[row])
        for row, (chunk_id, owner) in enumerate(zip(chunk_ids.to_pylist(), owners.to_pylist()))
    ]
    return chunks, chunk_ids


def _read_covariates(
    reading: _Reading, table: _CommunityTable, entities: _EntityTable, chunk_ids: pa.Array
) -> tuple[list[Claim], list[int]]:
    """``covariates`` (optional) as claims attached to a leaf community (by subject entity, else
    by text unit); returns the claims and the row each came from. Claims that attach nowhere
    are left out with a warning."""
    if not reading.present("covariates"):
        return [], []
    covs = _read_columns(
        reading.file("covariates"),
        required={"id": "id", "subject_id": "str", "text_unit_id": "id"},
        optional={"object_id": "str", "description": "str", "human_readable_id": "id"},
        not_null=("id", "subject_id"),
    )
    if not reading.present("text_units"):
        raise _missing_error(
            reading.folder, [covs.file], [_table_file(reading.version, "text_units")], "Microsoft GraphRAG output with claims"
        )
    claim_ids = covs.ids("id")
    claim_units = covs.array("text_unit_id", pa.string())
    unknown = _first_bad_row(pc.and_(pc.is_valid(claim_units), pc.invert(pc.is_in(claim_units, value_set=chunk_ids))))
    if unknown is not None:
        raise covs.error(
            unknown,
            "text_unit_id",
            f'claim "{claim_ids[unknown]}" names text unit "{claim_units[unknown].as_py()}", which does not exist.',
        )
    # unknown parents are reported by the index's structure check, after this join
    ids, row_of = table.ids, table.row_of
    leaf_rows = sorted(set(range(len(ids))) - {row_of[p] for p in table.parents if p in row_of})
    leaf_table = table.columns.table.take(leaf_rows)
    leaf_ids = pa.array([ids[row] for row in leaf_rows], pa.string())
    list_of_ids = pa.list_(pa.string())

    def leaf_members(column: str) -> pa.Array:
        if column not in leaf_table.column_names:
            return pa.array([[]] * len(leaf_rows), list_of_ids)
        return pc.cast(leaf_table.column(column).combine_chunks(), list_of_ids)

    subjects = covs.array("subject_id", pa.string())
    subject_entities = pc.take(entities.ids, pc.index_in(subjects, value_set=entities.titles))
    by_entity = _first_owner(subject_entities, leaf_ids, leaf_members("entity_ids"))
    by_unit = _first_owner(claim_units, leaf_ids, leaf_members("text_unit_ids"))
    targets = pc.coalesce(by_entity, by_unit)

    objects = covs.array("object_id", pa.string())
    objects = pc.if_else(pc.is_in(pc.utf8_trim_whitespace(objects), value_set=pa.array(sorted(NO_OBJECT))), None, objects)
    descriptions = covs.get("description")
    short_ids = covs.array("human_readable_id", pa.string()).to_pylist()
    claims: list[Claim] = []
    claim_rows: list[int] = []
    unattached: list[str] = []
    for row, (claim_id, community_id, subject, obj, unit) in enumerate(
        zip(claim_ids, targets.to_pylist(), subjects.to_pylist(), objects.to_pylist(), claim_units.to_pylist())
    ):
        if community_id is None:
            unattached.append(claim_id)
            continue
        claims.append(
            Claim(
                id=claim_id,
                community_id=community_id,
                subject=subject,
                object=obj,
                description=descriptions[row] or "",
                chunk_ids=() if unit is None else (unit,),
                short_id=short_ids[row],
            )
        )
        claim_rows.append(row)
    if unattached:
        reading.warnings.append(
            f"{len(unattached)} of {covs.rows} claims could not be attached to a leaf community "
            f"(neither their subject entity nor their text unit is in one) and were left out: "
            f"{_examples(unattached)}."
        )
    return claims, claim_rows


def load_msgraphrag(folder: Path, *, version: MsVersion, summary: SummaryChoice = "full_content") -> Index:
    """Build an :class:`Index` from a GraphRAG output folder (see the module docstring for the mapping).

    Invariants of the result: one community per ``communities`` row, in file order; every
    report's ``community`` is a community id; one chunk per text unit, one entity, relationship
    and document per row; one claim per covariate row except those counted in a warning.
    Joins (claims to leaves, entities to communities) run as pyarrow lookups, not row loops.
    One reader per table; the index's structure check runs once, when the :class:`Index` is built.
    """
    reading = _Reading(folder, version, [])
    community_table = _read_communities(reading, summary)
    entity_table = _read_entities(reading, community_table)
    relationships = _read_relationships(reading, community_table)
    documents = _read_documents(reading)
    chunks, chunk_ids = _read_text_units(reading)
    claims, claim_rows = _read_covariates(reading, community_table, entity_table, chunk_ids)
    communities, entities, warnings = community_table.communities, entity_table.entities, reading.warnings
    document_field = _document_field(version)
    file = reading.file

    def source(table: str, numbers: Sequence[int], fields: Mapping[str, str] | None = None) -> RecordSource:
        return RecordSource(_table_file(version, table), "row", numbers, str(file(table)), fields or {})

    sources = {
        "communities": source("communities", range(len(communities)), {"id": "community", "parent_id": "parent"}),
        "claims": source("covariates", claim_rows, {"chunk_ids": "text_unit_id"}),
        "chunks": source("text_units", range(len(chunks)), {"document_id": document_field}),
        "documents": source("documents", range(len(documents))),
        "entities": source("entities", range(len(entities))),
        "relationships": source("relationships", range(len(relationships))),
    }
    warnings += structure_warnings(communities=communities, entities=entities, relationships=relationships)
    name = folder.parent.name if folder.name in ("output", "artifacts") else folder.name
    return Index.from_records(
        communities=communities,
        claims=claims,
        chunks=chunks,
        documents=documents,
        entities=entities,
        relationships=relationships,
        name=name,
        description=f"Imported from a Microsoft GraphRAG output ({version.removeprefix('msgraphrag-')} layout); "
        f"community summaries are the reports' {summary}.",
        warnings=warnings,
        sources=sources,
    )
