"""Import the outputs of Microsoft GraphRAG: 0.3-0.9 and 1.x (``create_final_*``), 2.x and 3.x,
as parquet files or as CSV (3.x's ``csv`` table storage).

How the tables become records (see ``shared/data/msgraphrag/README.md`` for the links):

* Community ids are the integer ``community`` numbers that reports cite, as text: the citation
  ``[Data: Reports (12)]`` resolves to community ``"12"``. ``parent`` -1 (or null) is a root;
  0.x outputs have no ``parent``, and their links come from ``create_final_nodes``
  (:mod:`.msgraphrag_v0`). A community's summary is its report's ``full_content`` (default) or
  ``summary``; its title is the report's title, else the community's own.
* Claims are the ``covariates``. Each is attached to the leaf community (a community that no
  community names as parent) holding its subject entity (subjects are entity *titles*); when
  the subject is no entity, or no leaf holds it, to a leaf holding its text unit. When several
  leaves qualify, the first in ``communities`` order wins. Claims that fit nowhere are left
  out and counted in a warning on ``Index.warnings`` that names some of their ids.
* Text units are the chunks (a 0.x-2.x unit's first ``document_ids`` entry is its document);
  entities and relationships come along for graph views, ``Entity.community_ids`` being every
  community (all levels, in ``communities`` order) whose ``entity_ids`` holds the entity, and
  ``Relationship.community_ids`` every one whose ``relationship_ids`` holds the relationship.
  Entities and relationships keep their ``text_unit_ids`` as ``chunk_ids``; every record keeps
  its ``human_readable_id`` as ``short_id``, the number reports cite (``[Data: Entities (5)]``).

Opening an output reads the communities and their reports (what a search needs first) and
checks that every other table is there with the columns it needs (file footers and CSV
headers only); each other table is read, with the same checks and errors, when the index
first needs it (:meth:`~graphrag_core.models.Index.open`). Columns are read whole with pyarrow
(:mod:`.tables`), joins run as pyarrow lookups; there is no per-row pandas. Errors name the
file, the row (counted from 0) and the column.

Why this module is long: it is the one place that knows every Microsoft GraphRAG layout; the
column mapping of each table, for each version, reads side by side with the links between
the tables that the mapping depends on (claims to leaves, entities to communities).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.compute as pc

from ..deferred import TableRead
from ..errors import IndexFormatError
from ..models import Claim, Community, Document, Entity, Index, Relationship, SourceChunk
from ..validation import WARNING_EXAMPLES, RecordSource
from .tables import SUFFIXES, Columns, Kind, check_columns, first_true, read_columns, read_schema

SummaryChoice = Literal["full_content", "summary"]
"""Which report text becomes a community's summary."""

MsVersion = Literal["msgraphrag-v3", "msgraphrag-v2", "msgraphrag-v1", "msgraphrag-v0"]

V1_PREFIX = "create_final_"
V3_REQUIRED: tuple[str, ...] = ("communities.parquet", "community_reports.parquet")
V1_REQUIRED: tuple[str, ...] = tuple(V1_PREFIX + name for name in V3_REQUIRED)
OPTIONAL_TABLES: tuple[str, ...] = ("entities", "relationships", "covariates", "text_units", "documents")

ROOT_PARENT = "-1"
"""The ``parent`` value GraphRAG writes for a root community."""

NO_OBJECT = frozenset({"", "NONE"})
"""``object_id`` values that mean the claim has no object."""

_LABELS: dict[str, str] = {"": "Microsoft GraphRAG 2.x/3.x", V1_PREFIX: "Microsoft GraphRAG 1.x"}


@dataclass(frozen=True)
class TableSpec:
    """The columns read from one table: required, optional (read when present) and never null."""

    required: Mapping[str, Kind]
    optional: Mapping[str, Kind] = field(default_factory=dict)
    not_null: tuple[str, ...] = ()


# -- where the tables are ------------------------------------------------------------------------------


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
        return _table_path(self.folder, self.prefix + table)

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


def _table_path(folder: Path, stem: str) -> Path:
    """The file of one table: the first of :data:`~.tables.SUFFIXES` that exists, else parquet."""
    for suffix in SUFFIXES:
        path = folder / (stem + suffix)
        if path.is_file():
            return path
    return folder / (stem + SUFFIXES[0])


def _missing_error(folder: Path, found: Sequence[str], missing: Sequence[str], label: str) -> IndexFormatError:
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
        required = [_table_path(folder, prefix + name) for name in ("communities", "community_reports")]
        found = [path.name for path in required if path.is_file()]
        if not found:
            continue
        missing = [path.name for path in required if not path.is_file()]
        if missing:
            raise _missing_error(folder, found, missing, label)
        if prefix:
            columns = read_schema(required[0]).names
            return Layout(folder, "msgraphrag-v1" if "parent" in columns else "msgraphrag-v0")
        units = _table_path(folder, "text_units")
        if units.is_file() and "document_ids" in read_schema(units).names:
            return Layout(folder, "msgraphrag-v2")
        return Layout(folder, "msgraphrag-v3")
    return None


def detect_version(folder: Path) -> MsVersion | None:
    """The GraphRAG version of the output in ``folder`` (:func:`detect_layout`), or None."""
    layout = detect_layout(folder)
    return None if layout is None else layout.version


def _document_field(version: MsVersion) -> str:
    """The text units' column naming their document: one id from v3 on, a list before."""
    return "document_id" if version == "msgraphrag-v3" else "document_ids"


def _specs(layout: Layout) -> dict[str, TableSpec]:
    """What each optional table must and may hold, in this layout."""
    document_field = _document_field(layout.version)
    entity_title = _entity_title(layout)
    return {
        "entities": TableSpec(
            {"id": "id", entity_title: "str"},
            {"type": "str", "description": "str", "human_readable_id": "id", "text_unit_ids": "str_list"},
            ("id", entity_title),
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


def _entity_title(layout: Layout) -> str:
    """The entities' title column: ``title``, or ``name`` in the early 0.x outputs."""
    if layout.version == "msgraphrag-v0" and layout.present("entities"):
        names = read_schema(layout.file("entities")).names
        if "title" not in names and "name" in names:
            return "name"
    return "title"


# -- communities and their reports (read when the output is opened) ------------------------------------


class Members:
    """Each community row's members (``entity_ids``, ``relationship_ids``, ``text_unit_ids``), as
    arrow list arrays and as tuples, each column read once when first asked for."""

    def __init__(self, read: Callable[[str], pa.Array]) -> None:
        self._read = read
        self._arrays: dict[str, pa.Array] = {}
        self._lists: dict[str, list[tuple[str, ...]]] = {}

    def array(self, column: str) -> pa.Array:
        if column not in self._arrays:
            self._arrays[column] = self._read(column)
        return self._arrays[column]

    def lists(self, column: str) -> list[tuple[str, ...]]:
        if column not in self._lists:
            self._lists[column] = [tuple(ids) if ids else () for ids in self.array(column).to_pylist()]
        return self._lists[column]


@dataclass(frozen=True)
class CommunityTable:
    """The communities (with their reports' titles and summaries), and what later joins need:
    the id and parent columns and each row's members (:class:`Members`)."""

    communities: list[Community]
    ids: list[str]
    row_of: dict[str, int]
    columns: Columns
    members: Members
    warnings: list[str]
    number_column: str = "community"
    """The column of the communities file that holds the community number."""

    def leaf_mask(self) -> pa.Array:
        """True for each row no community names as its parent."""
        ids = self.columns.array("community", pa.string())
        return pc.invert(pc.is_in(ids, value_set=self.columns.array("parent", pa.string())))


def _examples(ids: Sequence[str]) -> str:
    shown = ", ".join(f'"{i}"' for i in ids[:WARNING_EXAMPLES])
    return shown + (f", ... ({len(ids) - WARNING_EXAMPLES} more)" if len(ids) > WARNING_EXAMPLES else "")


def _community_columns(layout: Layout) -> tuple[Columns, Members, list[str], str]:
    """The communities table as columns ``community``, ``level``, ``parent``, ``title``, ``size``
    and ``entity_ids``; the members of each row; the warnings found deriving them; the column
    that holds the community number."""
    if layout.version == "msgraphrag-v0":
        from .msgraphrag_v0 import read_v0_communities  # only 0.x outputs need it

        derived = read_v0_communities(layout.file("communities"), layout.file("nodes"))
        lists = pa.list_(pa.string())
        return derived.columns, Members(lambda column: pa.array(derived.members(column), lists)), derived.warnings, derived.number_column
    comms = read_columns(
        layout.file("communities"),
        required={"community": "id", "level": "int", "parent": "id"},
        optional={"title": "str", "size": "int", "entity_ids": "str_list"},
        not_null=("community", "level"),
    )

    def read(column: str) -> pa.Array:
        columns = comms if column == "entity_ids" else read_columns(layout.file("communities"), required={}, optional={column: "str_list"})
        return columns.id_list_array(column)

    return comms, Members(read), [], "community"


def _read_communities(layout: Layout, summary: SummaryChoice) -> CommunityTable:
    """``communities`` joined with ``community_reports``: one community per row, in file order."""
    comms, members, warnings, number_column = _community_columns(layout)
    reports = read_columns(
        layout.file("community_reports"),
        required={"community": "id", summary: "str"},
        optional={"title": "str", "rank": "float"},
        not_null=("community",),
    )
    for table in (comms, reports):
        if table.rows == 0:
            raise IndexFormatError(
                f"{table.path}: the table has no rows, so the index holds no "
                f"{'communities' if table is comms else 'community reports (no summaries)'}; "
                "was the GraphRAG indexing run complete?",
                path=str(table.path),
            )
    community_titles, sizes, levels = comms.get("title"), comms.get("size"), comms.get("level")
    negative = next((row for row, level in enumerate(levels) if level < 0), None)
    if negative is not None:
        raise comms.error(negative, "level", f"level {levels[negative]} is negative; levels count from 0.")

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
    unclustered: list[int] = []
    for row, cid in enumerate(reports.ids("community")):
        if cid in report_of:
            raise reports.error(row, "community", f'a second report for community "{cid}" (first at row {report_of[cid]}).')
        if cid == ROOT_PARENT and cid not in row_of:
            unclustered.append(row)
            continue
        if cid not in row_of:
            raise reports.error(row, "community", f'the report is for community "{cid}", which {comms.file} does not hold.')
        report_of[cid] = row
    if unclustered:
        warnings.append(
            f"{reports.file} has a report for community -1 (the entities in no community; row "
            f"{', '.join(map(str, unclustered))}), which is no community of the hierarchy; it is left out."
        )

    report_titles, report_texts = reports.get("title"), reports.get(summary)
    report_ranks = reports.numbers("rank")
    entity_ids = members.lists("entity_ids")
    communities: list[Community] = []
    unreported: list[str] = []
    for row, cid in enumerate(ids):
        report = report_of.get(cid)
        if report is None:
            unreported.append(cid)
        communities.append(
            Community.from_checked(
                id=cid,
                level=levels[row],
                parent_id=parents[row],
                title=(report is not None and report_titles[report]) or community_titles[row] or "",
                summary=(report is not None and report_texts[report]) or "",
                rank=None if report is None else report_ranks[report],
                size=sizes[row],
                entity_ids=entity_ids[row],
            )
        )
    if unreported:
        warnings.append(f"{len(unreported)} communities have no report, so no summary: {_examples(unreported)}.")
    return CommunityTable(communities, ids, row_of, comms, members, warnings, number_column)


def _communities_holding(table: CommunityTable, member_column: str, keys: pa.Array) -> list[tuple[str, ...]]:
    """For each key, the communities (in ``communities`` order) whose ``member_column`` lists it.

    One arrow group-by over every (member, community) pair; single-threaded, so each group
    keeps the pairs' order, which is the communities' order."""
    members = table.members.array(member_column)
    owners = pc.take(table.columns.array("community", pa.string()), pc.list_parent_indices(members))
    pairs = pa.Table.from_arrays([pc.cast(pc.list_flatten(members), pa.string()), owners], names=["member", "owner"])
    grouped = pairs.group_by("member", use_threads=False).aggregate([("owner", "list")])
    found = pc.take(grouped.column("owner_list"), pc.index_in(keys, value_set=grouped.column("member")))
    return [tuple(owned) if owned else () for owned in found.to_pylist()]


def _first_owner(keys: pa.Array, owner_ids: pa.Array, members: pa.Array) -> pa.Array:
    """For each key, the id of the first owner (in ``owner_ids`` order) whose member list holds it.

    ``members[i]`` is the list of member ids of owner ``owner_ids[i]``; the result is a string
    array aligned with ``keys``, null where no owner holds the key (or the key is null).
    """
    flat = pc.cast(pc.list_flatten(members), pa.string())
    owner_of_flat = pc.take(owner_ids, pc.list_parent_indices(members))
    return pc.take(owner_of_flat, pc.index_in(keys, value_set=flat))


# -- the other tables (read when the index first needs them) ------------------------------------------


class _Reader:
    """Reads an opened output's other tables for :class:`~graphrag_core.models.Index`, each file once."""

    def __init__(self, layout: Layout, communities: CommunityTable) -> None:
        self.layout = layout
        self.communities = communities
        self.specs = _specs(layout)
        self._columns: dict[str, Columns] = {}

    def columns(self, table: str) -> Columns | None:
        """The table's checked columns (None when the output has no such table)."""
        if not self.layout.present(table):
            return None
        if table not in self._columns:
            spec = self.specs[table]
            self._columns[table] = read_columns(
                self.layout.file(table), required=spec.required, optional=spec.optional, not_null=spec.not_null
            )
        return self._columns[table]

    def some(self, table: str, names: Mapping[str, Kind]) -> Columns:
        """Some columns of a table the output has: from the whole table when it is read, else alone."""
        if table in self._columns:
            return self._columns[table]
        return read_columns(self.layout.file(table), required=names, not_null=tuple(names))

    def source(self, table: str, numbers: Sequence[int], fields: Mapping[str, str] | None = None) -> RecordSource:
        return RecordSource(self.layout.name(table), "row", numbers, str(self.layout.file(table)), fields or {})

    def read(self, table: str, index: Index) -> TableRead:
        readers = {
            "documents": self._documents,
            "chunks": self._text_units,
            "claims": self._covariates,
            "entities": self._entities,
            "relationships": self._relationships,
        }
        read = readers[table]()
        self._columns.pop({"chunks": "text_units", "claims": "covariates"}.get(table, table), None)
        return read

    def final_warnings(self, index: Index) -> Sequence[str]:
        return ()

    def _documents(self) -> TableRead:
        docs = self.columns("documents")
        if docs is None:
            return TableRead(())
        titles = docs.get("title")
        records = [Document.from_checked(id=did, title=titles[row] or "") for row, did in enumerate(docs.ids("id"))]
        return TableRead(records, self.source("documents", range(len(records))))

    def _text_units(self) -> TableRead:
        """``text_units`` as source chunks, each with its document: ``document_id``, or the first
        of ``document_ids`` (a unit listing several is counted in a warning)."""
        units = self.columns("text_units")
        if units is None:
            return TableRead(())
        document_field = _document_field(self.layout.version)
        chunk_ids = units.ids("id")
        warnings: list[str] = []
        if document_field == "document_ids" and units.has(document_field):
            owned = units.id_lists(document_field)
            owners: list[str | None] = [documents[0] if documents else None for documents in owned]
            shared_units = [unit for unit, documents in zip(chunk_ids, owned) if len(documents) > 1]
            if shared_units:
                warnings.append(
                    f"{len(shared_units)} text units belong to several documents; each keeps its first: "
                    f"{_examples(shared_units)}."
                )
        else:
            owners = units.ids(document_field)
        texts = units.get("text")
        short_ids = units.ids("human_readable_id")
        records = [
            SourceChunk.from_checked(id=chunk_id, document_id=owner, text=texts[row] or "", short_id=short_ids[row])
            for row, (chunk_id, owner) in enumerate(zip(chunk_ids, owners))
        ]
        return TableRead(records, self.source("text_units", range(len(records)), {"document_id": document_field}), warnings)

    def _entities(self) -> TableRead:
        """``entities``, each with the communities that list it as a member."""
        ents = self.columns("entities")
        if ents is None:
            return TableRead(())
        title = _entity_title(self.layout)
        entity_ids = ents.array("id", pa.string())
        communities_of = _communities_holding(self.communities, "entity_ids", entity_ids)
        types, descriptions = ents.get("type"), ents.get("description")
        short_ids = ents.array("human_readable_id", pa.string()).to_pylist()
        units = ents.id_lists("text_unit_ids")
        records = [
            Entity.from_checked(
                id=entity_id,
                title=name,
                type=types[row],
                description=descriptions[row] or "",
                community_ids=communities_of[row],
                short_id=short_ids[row],
                chunk_ids=units[row],
            )
            for row, (entity_id, name) in enumerate(zip(entity_ids.to_pylist(), ents.get(title)))
        ]
        return TableRead(records, self.source("entities", range(len(records)), {"title": title}))

    def _relationships(self) -> TableRead:
        """``relationships``, each with the communities whose ``relationship_ids`` hold it."""
        rels = self.columns("relationships")
        if rels is None:
            return TableRead(())
        descriptions = rels.get("description")
        weights = rels.numbers("weight")
        short_ids = rels.array("human_readable_id", pa.string()).to_pylist()
        relationship_ids = rels.array("id", pa.string())
        communities_of = _communities_holding(self.communities, "relationship_ids", relationship_ids)
        units = rels.id_lists("text_unit_ids")
        records = [
            Relationship.from_checked(
                id=rid, source=source, target=target, description=descriptions[row] or "", weight=weights[row],
                short_id=short_ids[row], community_ids=communities_of[row], chunk_ids=units[row],
            )
            for row, (rid, source, target) in enumerate(zip(relationship_ids.to_pylist(), rels.get("source"), rels.get("target")))
        ]
        return TableRead(records, self.source("relationships", range(len(records))))

    def _covariates(self) -> TableRead:
        """``covariates`` as claims attached to a leaf community (by subject entity, else by text
        unit). Claims that attach nowhere are left out with a warning."""
        covs = self.columns("covariates")
        if covs is None:
            return TableRead(())
        chunk_ids = self.some("text_units", {"id": "id"}).array("id", pa.string())  # present: checked at opening
        claim_ids = covs.ids("id")
        claim_units = covs.array("text_unit_id", pa.string())
        unknown = first_true(pc.and_(pc.is_valid(claim_units), pc.invert(pc.is_in(claim_units, value_set=chunk_ids))))
        if unknown is not None:
            raise covs.error(
                unknown,
                "text_unit_id",
                f'claim "{claim_ids[unknown]}" names text unit "{claim_units[unknown].as_py()}", which does not exist.',
            )
        table = self.communities
        leaves = table.leaf_mask()
        leaf_ids = pc.filter(table.columns.array("community", pa.string()), leaves)

        def leaf_members(column: str) -> pa.Array:
            return pc.filter(table.members.array(column), leaves)

        subjects = covs.array("subject_id", pa.string())
        if not self.layout.present("entities"):
            subject_entities = pa.nulls(len(subjects), pa.string())
        else:
            title = _entity_title(self.layout)
            ents = self.some("entities", {"id": "id", title: "str"})
            titles = ents.array(title, pa.string())
            subject_entities = pc.take(ents.array("id", pa.string()), pc.index_in(subjects, value_set=titles))
        by_entity = _first_owner(subject_entities, leaf_ids, leaf_members("entity_ids"))
        by_unit = _first_owner(claim_units, leaf_ids, leaf_members("text_unit_ids"))
        targets = pc.coalesce(by_entity, by_unit)

        objects = [None if o is None or o.strip() in NO_OBJECT else o for o in covs.get("object_id")]
        descriptions = covs.get("description")
        short_ids = covs.array("human_readable_id", pa.string()).to_pylist()
        claims: list[Claim] = []
        claim_rows: list[int] = []
        unattached: list[str] = []
        for row, (claim_id, community_id, subject, obj, unit) in enumerate(
            zip(claim_ids, targets.to_pylist(), subjects.to_pylist(), objects, claim_units.to_pylist())
        ):
            if community_id is None:
                unattached.append(claim_id)
                continue
            claims.append(
                Claim.from_checked(
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
        warnings = []
        if unattached:
            warnings.append(
                f"{len(unattached)} of {covs.rows} claims could not be attached to a leaf community "
                f"(neither their subject entity nor their text unit is in one) and were left out: "
                f"{_examples(unattached)}."
            )
        return TableRead(claims, self.source("covariates", claim_rows, {"chunk_ids": "text_unit_id"}), warnings)


def _check_tables(layout: Layout, specs: Mapping[str, TableSpec]) -> None:
    """Every optional table the output has holds the columns it must (footers and headers only)."""
    for table in OPTIONAL_TABLES:
        if layout.present(table):
            spec = specs[table]
            check_columns(layout.file(table), required=spec.required, optional=spec.optional)
    if layout.present("covariates") and not layout.present("text_units"):
        raise _missing_error(
            layout.folder, [layout.name("covariates")], [layout.name("text_units")], "Microsoft GraphRAG output with claims"
        )


def load_msgraphrag(folder: Path, *, version: MsVersion, summary: SummaryChoice = "full_content") -> Index:
    """Open a GraphRAG output folder as an :class:`Index` (see the module docstring for the mapping).

    Invariants of the result: one community per ``communities`` row, in file order; every
    report's ``community`` is a community id; one chunk per text unit, one entity, relationship
    and document per row; one claim per covariate row except those counted in a warning.
    The communities are checked now; each other table when it is first read.
    """
    layout = Layout(folder, version)
    _check_tables(layout, _specs(layout))
    table = _read_communities(layout, summary)
    name = _project_name(folder)
    return Index.open(
        communities=table.communities,
        reader=_Reader(layout, table),
        name=name,
        description=f"Imported from a Microsoft GraphRAG output ({layout.text}); "
        f"community summaries are the reports' {summary}.",
        warnings=table.warnings,
        source=RecordSource(
            layout.name("communities"), "row", range(len(table.communities)), str(layout.file("communities")),
            {"id": table.number_column, "parent_id": "parent"},
        ),
    )


def _project_name(folder: Path) -> str:
    """An output's name: its GraphRAG project's folder for ``output/`` (and 0.x's
    ``output/<run>/artifacts``), else its own folder's."""
    if folder.name == "artifacts" and folder.parent.parent.name == "output":
        return folder.parent.parent.parent.name
    return folder.parent.name if folder.name in ("output", "artifacts") else folder.name


__all__ = [
    "NO_OBJECT",
    "OPTIONAL_TABLES",
    "ROOT_PARENT",
    "V1_PREFIX",
    "V1_REQUIRED",
    "V3_REQUIRED",
    "CommunityTable",
    "Layout",
    "MsVersion",
    "SummaryChoice",
    "TableSpec",
    "detect_layout",
    "detect_version",
    "load_msgraphrag",
]
