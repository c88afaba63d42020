"""A Microsoft GraphRAG output's other tables as records, each read when the index first needs
it (:meth:`~graphrag_core.models.Index.open`), with the same checks and errors as at opening:
text units as chunks, entities and relationships with the communities that list them, and
covariates as claims attached to a leaf community (by subject entity, else by text unit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ..deferred import TableRead
from ..models import Claim, Document, Entity, Index, Relationship, SourceChunk
from ..validation import RecordSource
from .msgraphrag_communities import CommunityTable, communities_holding, first_owner, warning_examples
from .msgraphrag_layout import Layout, document_field_of, entity_title, table_specs
from .tables import Columns, Kind, first_true, read_columns

NO_OBJECT = frozenset({"", "NONE"})
"""``object_id`` values that mean the claim has no object."""


class OutputTables:
    """Reads an opened output's other tables for :class:`~graphrag_core.models.Index` (a
    :class:`~graphrag_core.deferred.TableReader`), each file once."""

    def __init__(self, layout: Layout, communities: CommunityTable) -> None:
        self.layout = layout
        self.communities = communities
        self.specs = table_specs(layout)
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
        document_field = document_field_of(self.layout.version)
        chunk_ids = units.ids("id")
        warnings: list[str] = []
        if document_field == "document_ids" and units.has(document_field):
            owned = units.id_lists(document_field)
            owners: list[str | None] = [documents[0] if documents else None for documents in owned]
            shared_units = [unit for unit, documents in zip(chunk_ids, owned) if len(documents) > 1]
            if shared_units:
                warnings.append(
                    f"{len(shared_units)} text units belong to several documents; each keeps its first: "
                    f"{warning_examples(shared_units)}."
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
        title = entity_title(self.layout)
        entity_ids = ents.array("id", pa.string())
        communities_of = communities_holding(self.communities, "entity_ids", entity_ids)
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
        communities_of = communities_holding(self.communities, "relationship_ids", relationship_ids)
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
            title = entity_title(self.layout)
            ents = self.some("entities", {"id": "id", title: "str"})
            titles = ents.array(title, pa.string())
            subject_entities = pc.take(ents.array("id", pa.string()), pc.index_in(subjects, value_set=titles))
        by_entity = first_owner(subject_entities, leaf_ids, leaf_members("entity_ids"))
        by_unit = first_owner(claim_units, leaf_ids, leaf_members("text_unit_ids"))
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
                f"{warning_examples(unattached)}."
            )
        return TableRead(claims, self.source("covariates", claim_rows, {"chunk_ids": "text_unit_id"}), warnings)


__all__ = ["NO_OBJECT", "OutputTables"]
