"""The rows of an index: communities, claims, source chunks, documents, entities and
relationships, as frozen pydantic records.

Ids are strings; integers are accepted and turned into their decimal text, so a Microsoft
GraphRAG community number ``12`` is the id ``"12"``. How the rows fit together (parents that
exist, claims that name existing chunks) is checked by :class:`~graphrag_core.models.Index`.
"""

from __future__ import annotations

from typing import Annotated, Any, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def _no_float_id(value: Any) -> Any:
    """Ids are text or integers; a float (``1.5``, or ``12.0`` from a float column) is refused
    rather than silently becoming the text ``"1.5"``."""
    if isinstance(value, float):
        raise ValueError(f"an id must be a string or an integer, not the number {value!r}")
    return value


Id = Annotated[str, BeforeValidator(_no_float_id)]
"""An identifier: a string; an integer is taken as its decimal text (booleans and floats are
rejected)."""


_new_object = object.__new__
_set_attribute = object.__setattr__
_EVERY_FIELD: dict[type, set[str]] = {}
"""Each record type's field names, shared by the records :meth:`Record.from_checked` makes."""


class Record(BaseModel):
    # coerce_numbers_to_str: an integer id becomes its decimal text, in pydantic's core.
    model_config = ConfigDict(frozen=True, extra="forbid", coerce_numbers_to_str=True)

    @classmethod
    def from_checked(cls, **values: Any) -> Self:
        """The record of ``values`` that a reader has already checked against this model's
        fields at the border (every field given, of its final type: ids as text, lists as
        tuples, numbers finite and in range), so pydantic's validation, a Python call per id,
        is not run again. Equal to ``cls(**values)`` for such values.

        Records made so share one set of field names (every field is set); pydantic copies it
        before changing it (``model_copy(update=...)``), and frozen records never change it."""
        record = _new_object(cls)
        _set_attribute(record, "__dict__", values)
        _set_attribute(record, "__pydantic_fields_set__", _EVERY_FIELD.get(cls) or _EVERY_FIELD.setdefault(cls, set(cls.model_fields)))
        _set_attribute(record, "__pydantic_extra__", None)
        _set_attribute(record, "__pydantic_private__", None)
        return record


class Community(Record):
    """One community of the hierarchy. Level 0 is the root level (coarsest)."""

    id: Id
    level: int = Field(ge=0)
    parent_id: Id | None = None
    title: str = ""
    summary: str = ""
    rank: float | None = Field(default=None, allow_inf_nan=False)
    size: int | None = None
    entity_ids: tuple[Id, ...] = ()


class Claim(Record):
    """A fact about a subject, attached to the leaf community that holds it."""

    id: Id
    community_id: Id
    subject: str
    object: str | None = None
    description: str = ""
    chunk_ids: tuple[Id, ...] = ()
    short_id: Id | None = None
    """Microsoft GraphRAG's ``human_readable_id``: the number reports cite as ``[Data: Claims (N)]``."""


class SourceChunk(Record):
    """A piece of source text that claims cite."""

    id: Id
    document_id: Id | None = None
    text: str
    short_id: Id | None = None
    """Microsoft GraphRAG's ``human_readable_id``: the number reports cite as ``[Data: Sources (N)]``."""


class Document(Record):
    """A source document."""

    id: Id
    title: str = ""


class Entity(Record):
    """A node of the knowledge graph (optional; for graph views)."""

    id: Id
    title: str
    type: str | None = None
    description: str = ""
    community_ids: tuple[Id, ...] = ()
    short_id: Id | None = None
    """Microsoft GraphRAG's ``human_readable_id``: the number its reports cite as ``[Data: Entities (N)]``."""
    chunk_ids: tuple[Id, ...] = ()
    """The source chunks (text units) the entity was extracted from."""


class Relationship(Record):
    """An edge of the knowledge graph between two entity titles (optional; for graph views)."""

    id: Id
    source: str
    target: str
    description: str = ""
    weight: float | None = Field(default=None, allow_inf_nan=False)
    short_id: Id | None = None
    """Microsoft GraphRAG's ``human_readable_id``: the number its reports cite as ``[Data: Relationships (N)]``."""
    community_ids: tuple[Id, ...] = ()
    """The communities that hold the relationship (Microsoft GraphRAG's ``relationship_ids`` of a community)."""
    chunk_ids: tuple[Id, ...] = ()
    """The source chunks (text units) the relationship was extracted from."""


__all__ = ["Claim", "Record", "Community", "Document", "Entity", "Id", "Relationship", "SourceChunk"]
