"""A Microsoft GraphRAG output's communities joined with their reports (read when the output is
opened: what a search needs first), and the joins of later tables to them: which communities
hold a member, which leaf first holds a key. Joins run as pyarrow lookups, never per row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import IndexFormatError
from ..models import Community
from ..validation import WARNING_EXAMPLES
from .msgraphrag_layout import Layout, SummaryChoice
from .tables import Columns, read_columns

ROOT_PARENT = "-1"
"""The ``parent`` value GraphRAG writes for a root community."""


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


def warning_examples(ids: Sequence[str]) -> str:
    shown = ", ".join(f'"{i}"' for i in ids[:WARNING_EXAMPLES])
    return shown + (f", ... ({len(ids) - WARNING_EXAMPLES} more)" if len(ids) > WARNING_EXAMPLES else "")


def community_columns(layout: Layout) -> tuple[Columns, Members, list[str], str]:
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


def read_communities(layout: Layout, summary: SummaryChoice) -> CommunityTable:
    """``communities`` joined with ``community_reports``: one community per row, in file order."""
    comms, members, warnings, number_column = community_columns(layout)
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
        warnings.append(f"{len(unreported)} communities have no report, so no summary: {warning_examples(unreported)}.")
    return CommunityTable(communities, ids, row_of, comms, members, warnings, number_column)


def communities_holding(table: CommunityTable, member_column: str, keys: pa.Array) -> list[tuple[str, ...]]:
    """For each key, the communities (in ``communities`` order) whose ``member_column`` lists it.

    One arrow group-by over every (member, community) pair; single-threaded, so each group
    keeps the pairs' order, which is the communities' order."""
    members = table.members.array(member_column)
    owners = pc.take(table.columns.array("community", pa.string()), pc.list_parent_indices(members))
    pairs = pa.Table.from_arrays([pc.cast(pc.list_flatten(members), pa.string()), owners], names=["member", "owner"])
    grouped = pairs.group_by("member", use_threads=False).aggregate([("owner", "list")])
    found = pc.take(grouped.column("owner_list"), pc.index_in(keys, value_set=grouped.column("member")))
    return [tuple(owned) if owned else () for owned in found.to_pylist()]


def first_owner(keys: pa.Array, owner_ids: pa.Array, members: pa.Array) -> pa.Array:
    """For each key, the id of the first owner (in ``owner_ids`` order) whose member list holds it.

    ``members[i]`` is the list of member ids of owner ``owner_ids[i]``; the result is a string
    array aligned with ``keys``, null where no owner holds the key (or the key is null).
    """
    flat = pc.cast(pc.list_flatten(members), pa.string())
    owner_of_flat = pc.take(owner_ids, pc.list_parent_indices(members))
    return pc.take(owner_of_flat, pc.index_in(keys, value_set=flat))


__all__ = [
    "ROOT_PARENT",
    "CommunityTable",
    "Members",
    "communities_holding",
    "community_columns",
    "first_owner",
    "read_communities",
    "warning_examples",
]
