"""The Provenance page's record views: one entity, relationship, claim or source chunk of the index,
addressed by its URL (``provenance?index=...&entity=5&run=...``), so Back and Reload work.

A view shows the record's description, the communities that hold it (with what the run did with
each, when a run is named) and the source text it was extracted from. Links to other records and
to communities change the URL in this tab (a new history entry). Index text is drawn with
``st.text`` only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.citations import CommunitySets
from graphrag_core.levels import level_label
from graphrag_core.models import Claim, Entity, Index, Relationship, SourceChunk
from graphrag_core.records import RECORD_NAMES, IndexRecords, RecordKind, mention_excerpt, record_ref
from graphrag_core.state import RunState
from graphrag_core.wording import counted

from ..text import escape_markdown
from ..navigation import PROVENANCE_PAGE
from ..panels.evidence import run_mark, sets_of
from ..panels.link_tables import link_table
from ..urls import RECORD_PARAMS, provenance_params, provenance_url, record_params, record_url

if TYPE_CHECKING:
    import pandas as pd  # imported where a table is built: a page that draws none does not load it

EXCERPT_CHARS = 320
SOURCE_TEXT_HEIGHT_PX = 420


def wanted_record(params: Mapping[str, str]) -> tuple[RecordKind, str] | None:
    """The record the URL names (``entity``, ``relationship``, ``claim`` or ``source``), if any."""
    for kind in RECORD_PARAMS:
        ref = params.get(kind)
        if ref:
            return kind, ref  # type: ignore[return-value]
    return None


def go_to(params: dict[str, str]) -> None:
    """Show another view in this tab: the URL changes (the browser keeps a history entry)."""
    st.query_params.from_dict(params)


def _button(container: DeltaGenerator, label: str, params: dict[str, str], *, key: str, icon: str, url: str) -> None:
    container.button(escape_markdown(label), key=key, type="tertiary", on_click=go_to, args=(params,), icon=icon, help=url)


def draw_communities(
    container: DeltaGenerator, index: Index, community_ids: Sequence[str], *, index_key: str, run_id: str | None,
    sets: CommunitySets | None, empty: str,
) -> None:
    """The communities holding a record, each a link to its view, with the run's use of it."""
    known = [cid for cid in dict.fromkeys(community_ids) if index.has_community(cid)]  # once each: an id is a widget key
    with container:
        st.subheader(f"Communities ({len(known)})")
        if not known:
            st.caption(empty)
            return
        for cid in known:
            community = index.community(cid)
            label = f"{level_label(community.level)}: {cid} · {community.title or 'untitled'}{run_mark(cid, sets)}"
            _button(st.container(), label, provenance_params(index_key, cid, run_id), key=f"record-community-{cid}",
                    icon=":material/account_tree:", url=provenance_url(index_key, cid, run_id))


def _record_label(kind: RecordKind, record: Entity | Relationship | Claim | SourceChunk) -> str:
    if isinstance(record, Entity):
        return record.title
    if isinstance(record, Relationship):
        return f"{record.source} → {record.target}"
    if isinstance(record, Claim):
        return f"{record.subject} → {record.object}" if record.object else record.subject
    return f"text unit {record.id[:16]}"


def records_frame(kind: RecordKind, records: Sequence[Entity | Relationship | Claim | SourceChunk], *, index_key: str, run_id: str | None) -> pd.DataFrame:
    """One row per record: its reference, what it is, its description, a link to its view."""
    import pandas as pd

    return pd.DataFrame(
        {
            "record": [f"{RECORD_NAMES[kind]} {record_ref(r)}" for r in records],
            "name": [_record_label(kind, r) for r in records],
            "description": [getattr(r, "description", "") or getattr(r, "text", "") for r in records],
            "view": [record_url(index_key, kind, record_ref(r), run_id) for r in records],
        }
    )


RECORD_HELP = "This record's provenance view"


def records_table(container: DeltaGenerator, frame: pd.DataFrame, *, key: str) -> None:
    """A table of records whose "open" cells open each record's view in one click, in this tab."""
    link_table(container, frame, link_column="view", key=key, here=PROVENANCE_PAGE, open_help=RECORD_HELP, hide_index=True, width="stretch")


def draw_record_table(container: DeltaGenerator, kind: RecordKind, records: Sequence, *, title: str, index_key: str, run_id: str | None) -> None:
    with container:
        st.subheader(f"{title} ({len(records)})")
        if not records:
            st.caption("None.")
            return
        records_table(st.container(), records_frame(kind, records, index_key=index_key, run_id=run_id), key=f"records-{kind}-{title}")


def draw_sources(container: DeltaGenerator, index: Index, chunks: Sequence[SourceChunk], missing: Sequence[str],
                 *, terms: Sequence[str], index_key: str, run_id: str | None) -> None:
    """The source text units, each with the passage that mentions the record and its full text."""
    with container:
        st.subheader(f"Source text units ({len(chunks)})")
        if not chunks and not missing:
            st.caption("The index names no source text for this record.")
        for chunk in chunks:
            with st.container(border=True):
                document = index.document(chunk.document_id) if chunk.document_id is not None else None
                label = f"Source {record_ref(chunk)}"
                if document is not None:
                    label += f" · document {document.title or document.id}"
                label += f" · {len(chunk.text):,} characters"
                _button(st.container(), label, record_params(index_key, "source", record_ref(chunk), run_id),
                        key=f"record-source-{chunk.id}", icon=":material/description:",
                        url=record_url(index_key, "source", record_ref(chunk), run_id))
                excerpt = mention_excerpt(chunk.text, terms, width=EXCERPT_CHARS)
                if excerpt is not None:
                    st.text(excerpt)
                with st.expander("Full text", expanded=excerpt is None and len(chunks) == 1):
                    st.text(chunk.text)
        if missing:
            st.caption(escape_markdown(f"{counted(len(missing), 'text unit')} named by the record {'is' if len(missing) == 1 else 'are'} not in this index: {', '.join(m[:16] for m in missing[:5])}"))


def _entity_button(container: DeltaGenerator, records: IndexRecords, title: str, *, index_key: str, run_id: str | None, key: str) -> None:
    entity = records.entity_titled(title)
    if entity is None:
        container.text(f"{title} (no entity of that title in the index)")
        return
    ref = record_ref(entity)
    _button(container, f"Entity {ref}: {entity.title}", record_params(index_key, "entity", ref, run_id), key=key,
            icon=":material/label:", url=record_url(index_key, "entity", ref, run_id))


def draw_entity(index: Index, records: IndexRecords, entity: Entity, *, index_key: str, run_id: str | None, sets: CommunitySets | None) -> None:
    st.header(f"Entity {escape_markdown(record_ref(entity))}: {escape_markdown(entity.title)}")
    st.caption(escape_markdown(" · ".join(p for p in (entity.type or "", f"cited as Entities ({record_ref(entity)})") if p)))
    left, right = st.columns([3, 2])
    with left:
        st.subheader("Description")
        st.text(entity.description or "(no description)")
    draw_communities(right.container(), index, entity.community_ids, index_key=index_key, run_id=run_id, sets=sets,
                     empty="No community lists this entity as a member.")
    draw_record_table(st.container(), "relationship", records.relationships_of(entity), title="Relationships", index_key=index_key, run_id=run_id)
    chunks, missing = records.chunks_of(entity)
    draw_sources(st.container(), index, chunks, missing, terms=[entity.title], index_key=index_key, run_id=run_id)


def draw_relationship(index: Index, records: IndexRecords, rel: Relationship, *, index_key: str, run_id: str | None, sets: CommunitySets | None) -> None:
    st.header(f"Relationship {escape_markdown(record_ref(rel))}: {escape_markdown(rel.source)} → {escape_markdown(rel.target)}")
    st.caption(escape_markdown(f"cited as Relationships ({record_ref(rel)})" + (f" · weight {rel.weight:g}" if rel.weight is not None else "")))
    left, right = st.columns([3, 2])
    with left:
        st.subheader("Description")
        st.text(rel.description or "(no description)")
        st.markdown("**Its ends**")
        _entity_button(st.container(), records, rel.source, index_key=index_key, run_id=run_id, key="record-end-source")
        _entity_button(st.container(), records, rel.target, index_key=index_key, run_id=run_id, key="record-end-target")
    draw_communities(right.container(), index, rel.community_ids, index_key=index_key, run_id=run_id, sets=sets,
                     empty="No community lists this relationship (its ends may sit in different communities).")
    chunks, missing = records.chunks_of(rel)
    draw_sources(st.container(), index, chunks, missing, terms=[rel.source, rel.target], index_key=index_key, run_id=run_id)


def draw_claim(index: Index, records: IndexRecords, claim: Claim, *, index_key: str, run_id: str | None, sets: CommunitySets | None) -> None:
    st.header(f"Claim {escape_markdown(record_ref(claim))}: {escape_markdown(_record_label('claim', claim))}")
    st.caption(escape_markdown(f"cited as Claims ({record_ref(claim)})"))
    left, right = st.columns([3, 2])
    with left:
        st.subheader("Description")
        st.text(claim.description or "(no description)")
        st.markdown("**Its subject**")
        _entity_button(st.container(), records, claim.subject, index_key=index_key, run_id=run_id, key="record-claim-subject")
    draw_communities(right.container(), index, [claim.community_id], index_key=index_key, run_id=run_id, sets=sets, empty="")
    chunks, missing = records.chunks_of(claim)
    draw_sources(st.container(), index, chunks, missing, terms=[claim.subject], index_key=index_key, run_id=run_id)


def draw_source(index: Index, records: IndexRecords, chunk: SourceChunk, *, index_key: str, run_id: str | None) -> None:
    st.header(f"Source {escape_markdown(record_ref(chunk))}")
    document = index.document(chunk.document_id) if chunk.document_id is not None else None
    st.caption(escape_markdown(" · ".join(
        p for p in (f"cited as Sources ({record_ref(chunk)})", f"document {document.title or document.id}" if document else "",
                    f"text unit {chunk.id}") if p
    )))
    with st.container(height=SOURCE_TEXT_HEIGHT_PX if len(chunk.text) > EXCERPT_CHARS * 4 else "content", border=True):
        st.text(chunk.text)  # a long text scrolls in its box, so what was extracted from it stays in view
    entities, relationships, claims = records.from_chunk(chunk.id)
    draw_record_table(st.container(), "entity", entities, title="Entities extracted from it", index_key=index_key, run_id=run_id)
    draw_record_table(st.container(), "relationship", relationships, title="Relationships extracted from it", index_key=index_key, run_id=run_id)
    if claims:
        draw_record_table(st.container(), "claim", claims, title="Claims extracted from it", index_key=index_key, run_id=run_id)


def draw_record(index: Index, kind: RecordKind, ref: str, *, index_key: str, run_id: str | None, state: RunState | None) -> bool:
    """The view of the record ``kind``/``ref``; False (after saying so) when the index has no such record."""
    records = IndexRecords(index)
    record = records.get(kind, ref)
    if record is None:
        name = RECORD_NAMES[kind].lower()
        why = "" if records.has_kind(kind) else f" (it holds no {name} records)"
        st.error(escape_markdown(f"No {name} {ref} in the index {index_key}{why}."), icon=":material/search_off:")
        return False
    sets = sets_of(state, index) if state is not None else None
    if isinstance(record, Entity):
        draw_entity(index, records, record, index_key=index_key, run_id=run_id, sets=sets)
    elif isinstance(record, Relationship):
        draw_relationship(index, records, record, index_key=index_key, run_id=run_id, sets=sets)
    elif isinstance(record, Claim):
        draw_claim(index, records, record, index_key=index_key, run_id=run_id, sets=sets)
    else:
        draw_source(index, records, record, index_key=index_key, run_id=run_id)
    return True


__all__ = ["draw_record", "go_to", "records_frame", "records_table", "wanted_record"]
