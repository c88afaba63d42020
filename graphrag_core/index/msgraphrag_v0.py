"""The communities of a Microsoft GraphRAG 0.x output (0.3-0.9), in the shape 1.x writes them.

0.x ``create_final_communities`` has no ``parent``. Its community number is ``community``
(0.5-0.9) or ``raw_community``/``id`` (0.3-0.4, as text), and 0.3-0.4 list no ``entity_ids``
and write ``text_unit_ids`` as comma-joined strings. ``create_final_nodes`` gives each entity
(node) its community at every level, and GraphRAG's hierarchical Leiden nests each community
in one community of the level above, so:

* a community's members are the nodes with its number at its level (where the table lists no
  ``entity_ids``);
* its parent is the community one level up that holds its members (when members disagree,
  the one holding most of them, counted in a warning; when none is found, the community is a
  root, counted in a warning). Level 0 communities are roots.

The result is the communities table as 1.x has it (``community``, ``level``, ``parent``,
``title``, ``size``, ``entity_ids``) plus every row's members, so the rest of the import reads
0.x as it reads 1.x.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ..errors import IndexFormatError
from .tables import Columns, read_columns, read_schema

NUMBER_COLUMNS: tuple[str, ...] = ("community", "raw_community", "id")
"""Where a 0.x communities table keeps the community number, in order of preference."""

NO_COMMUNITY = frozenset({"", "-1", "nan", "None"})
"""Node ``community`` values that mean the node is in no community at that level."""

EXAMPLES = 5


@dataclass(frozen=True)
class DerivedCommunities:
    """A 0.x communities table as 1.x writes it, every row's members, and what was odd."""

    columns: Columns
    members: Callable[[str], list[tuple[str, ...]]]
    warnings: list[str]
    number_column: str


def _examples(ids: list[str]) -> str:
    shown = ", ".join(f'"{i}"' for i in ids[:EXAMPLES])
    return shown + (f", ... ({len(ids) - EXAMPLES} more)" if len(ids) > EXAMPLES else "")


def _split(ids: tuple[str, ...]) -> tuple[str, ...]:
    """0.3-0.4 write a community's text units as comma-joined strings inside its list."""
    return tuple(dict.fromkeys(part.strip() for item in ids for part in item.split(",") if part.strip()))


def read_v0_communities(communities_file: Path, nodes_file: Path) -> DerivedCommunities:
    """The communities of a 0.x output, their parents and members from ``create_final_nodes``."""
    names = read_schema(communities_file).names
    number = next((name for name in NUMBER_COLUMNS if name in names), None)
    if number is None:
        raise IndexFormatError(
            f"{communities_file.name}: missing column community (found: {', '.join(names)}); a GraphRAG 0.x "
            "communities table names each community by community, raw_community or id.",
            path=str(communities_file),
            field="community",
        )
    if not nodes_file.is_file():
        raise IndexFormatError(
            f"{communities_file.parent}: a Microsoft GraphRAG 0.x output ({communities_file.name} has no parent "
            f"column); its parent links come from {nodes_file.name}, which is missing.",
            path=str(nodes_file),
        )
    comms = read_columns(
        communities_file,
        required={number: "id", "level": "int"},
        optional={
            "title": "str", "size": "int", "entity_ids": "str_list", "relationship_ids": "str_list", "text_unit_ids": "str_list",
        },
        not_null=(number, "level"),
    )
    node_names = read_schema(nodes_file).names
    key = "id" if "id" in node_names else "title"
    nodes = read_columns(
        nodes_file, required={key: "id", "level": "int", "community": "id"}, not_null=(key, "level")
    )

    ids, levels = comms.ids(number), comms.get("level")
    at_level: dict[tuple[int, str], list[str]] = {}  # (level, community) -> node keys, in node order
    community_of: dict[tuple[str, int], str] = {}  # (node, level) -> community
    for node, level, community in zip(nodes.ids(key), nodes.get("level"), nodes.ids("community")):
        if community is None or community in NO_COMMUNITY:
            continue
        community_of[(node, level)] = community
        at_level.setdefault((level, community), []).append(node)
    exists = set(zip(levels, ids))

    parents: list[str] = []
    unlinked: list[str] = []
    split: list[str] = []
    for cid, level in zip(ids, levels):
        if level == 0:
            parents.append("-1")
            continue
        votes = Counter(
            up
            for node in dict.fromkeys(at_level.get((level, cid), ()))
            if (up := community_of.get((node, level - 1))) is not None and (level - 1, up) in exists
        )
        if not votes:
            unlinked.append(cid)
            parents.append("-1")
            continue
        if len(votes) > 1:
            split.append(cid)
        parents.append(votes.most_common(1)[0][0])

    if comms.has("entity_ids"):
        entity_ids = comms.id_lists("entity_ids")
    else:
        entity_ids = [tuple(dict.fromkeys(at_level.get((level, cid), ()))) for cid, level in zip(ids, levels)]
    members: dict[str, list[tuple[str, ...]]] = {
        "entity_ids": entity_ids,
        "relationship_ids": comms.id_lists("relationship_ids"),
        "text_unit_ids": [_split(units) for units in comms.id_lists("text_unit_ids")],
    }
    sizes = comms.get("size") if comms.has("size") else [len(e) for e in entity_ids]
    titles = comms.get("title")
    table = pa.table(
        {
            "community": pa.array(ids, pa.string()),
            "level": pa.array(levels, pa.int64()),
            "parent": pa.array(parents, pa.string()),
            "title": pa.array(titles, pa.string()),
            "size": pa.array(sizes, pa.int64()),
        }
    )
    warnings: list[str] = []
    if unlinked:
        warnings.append(
            f"{len(unlinked)} communities above level 0 have no parent: none of their nodes in {nodes_file.name} "
            f"is in a community one level up, so they are read as roots: {_examples(unlinked)}."
        )
    if split:
        warnings.append(
            f"{len(split)} communities have nodes in several communities one level up ({nodes_file.name}); each "
            f"takes the one holding most of them as its parent: {_examples(split)}."
        )
    return DerivedCommunities(
        Columns(comms.file, comms.path, table, {"community": number}), members.__getitem__, warnings, number
    )


__all__ = ["NO_COMMUNITY", "NUMBER_COLUMNS", "DerivedCommunities", "read_v0_communities"]
