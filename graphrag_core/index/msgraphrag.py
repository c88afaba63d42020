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

Where the tables are and what each must hold is :mod:`.msgraphrag_layout`; the communities and
the joins to them :mod:`.msgraphrag_communities`; the other tables as records
:mod:`.msgraphrag_records` (their public names are importable from here too).
"""

from __future__ import annotations

from pathlib import Path

from ..models import Index
from ..validation import RecordSource
from .msgraphrag_communities import ROOT_PARENT, CommunityTable, read_communities
from .msgraphrag_layout import (
    OPTIONAL_TABLES,
    V1_PREFIX,
    V1_REQUIRED,
    V3_REQUIRED,
    Layout,
    MsVersion,
    SummaryChoice,
    TableSpec,
    check_tables,
    detect_layout,
    detect_version,
    table_specs,
)
from .msgraphrag_records import NO_OBJECT, OutputTables


def load_msgraphrag(folder: Path, *, version: MsVersion, summary: SummaryChoice = "full_content") -> Index:
    """Open a GraphRAG output folder as an :class:`Index` (see the module docstring for the mapping).

    Invariants of the result: one community per ``communities`` row, in file order; every
    report's ``community`` is a community id; one chunk per text unit, one entity, relationship
    and document per row; one claim per covariate row except those counted in a warning.
    The communities are checked now; each other table when it is first read.
    """
    layout = Layout(folder, version)
    check_tables(layout, table_specs(layout))
    table = read_communities(layout, summary)
    name = _project_name(folder)
    return Index.open(
        communities=table.communities,
        reader=OutputTables(layout, table),
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
