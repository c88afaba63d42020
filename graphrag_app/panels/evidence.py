"""A run's evidence, as several pages draw it: the answer as safe Markdown with every citation a
link, the three community sets and their words, and one community's evidence (its summary, the
claims of its leaf descendants with their sources, and what a run did with it), which Explore's
evidence dialog and the Provenance page both show; and a run's support check (issue 41): each
point with its verdict as a badge (icon and word, its reason on hover), the summary line, and a
supporting quote highlighted inside its unit's text at the position the engine verified.

One draw function per panel, each taking the container to draw into. Model and index text is
drawn with ``st.text`` (verbatim) or through :mod:`graphrag_app.text` (safe Markdown); no panel
uses ``unsafe_allow_html``.

Why this module is long: a support check's quotes are drawn inside the same community evidence
(the dialog beside the answer), and a module of their own would take Explore past the modules a
page may reach (architecture rule 10).
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core import citations
from graphrag_core.citations import CommunitySets, citation_count, citing_sentences, community_sets
from graphrag_core.levels import level_label
from graphrag_core.methods import UnitKind, unit_kind
from graphrag_core.models import Claim, Community, Index, SourceChunk
from graphrag_core.records import IndexRecords, mention_excerpt, record_ref
from graphrag_core.sources import source_table, unit_ids
from graphrag_core.state import BatchStatus, RunState
from graphrag_core.status import RunStatus
from graphrag_core.support import VERDICT_LABELS, SupportCheck, SupportEvidence, SupportPoint, find_quote, unit_text
from graphrag_core.wording import counted

from ..text import (
    FATE_LABELS,
    WALK_LABELS,
    cited_markdown,
    community_linker,
    demote_headings,
    either,
    escape_markdown,
    highlighted_markdown,
    link,
    linked_markdown,
    record_linker,
    verdict_badge,
)
from ..loaders import open_index
from ..session import Widget
from ..settings import load_settings
from ..urls import RECORDS_ANCHOR, provenance_url, record_url


SET_NAMES = {key: name.capitalize() for key, name in citations.SET_NAMES.items()}
"""The three sets as tab titles: Cited, Behind, Read but unused."""


SET_HELP = {
    "cited": "Communities the answer cites.",
    "behind": "Communities of the map answers selected for the reduce: what the reduce read.",
    "read_but_unused": "Communities whose batches' answers were dropped (usefulness 0), skipped (over the reduce budget) or not tried.",
}


SOURCE_SET_HELP = {
    "cited": "Source chunks the answer cites.",
    "behind": "Source chunks behind the answer: those of the map answers the reduce read, or the chunks naive RAG put in its prompt.",
    "read_but_unused": "Source chunks read whose answers did not reach the answer (dropped, skipped over the budget or not tried).",
}
"""The three sets' help for a run whose units are source chunks (the ``text`` and ``vector`` methods)."""


ANSWER_BOX_KEY = "answer-box"
"""The key of the answer's box: its citations are the ones a click opens beside the answer."""


ANSWER_HEADING_SHIFT = 2
"""A model's ``# Heading`` in the answer becomes ``###``: below the page's Answer heading."""


EVIDENCE_OPEN = Widget[str]("evidence_community")
"""The community whose evidence is open beside the answer on Explore (None: none)."""


CLAIM_FILTER = Widget[str]("provenance_claim_filter", "")


CLAIM_PAGE = Widget[int]("provenance_claim_page", 1)


REPORT_HEADING_SHIFT = 3
"""A report's ``#`` becomes ``####``: below the page's Summary heading."""


CLAIMS_PER_PAGE = 20


def index_for(index_key: str) -> Index | None:
    """The index ``index_key`` names (cached), or None when it cannot be opened here."""
    try:
        return open_index(index_key, load_settings()).index
    except Exception:  # noqa: BLE001 - titles are a nicety; the panel works without the index
        return None


def unit_title(index: Index | None, community_id: str, unit: UnitKind = "community") -> str | None:
    """A unit's title: a community's, or a source chunk's document title."""
    if index is None:
        return None
    if unit == "source":
        chunk = source_table(index).get(community_id)
        document = index.document(chunk.document_id) if chunk is not None and chunk.document_id is not None else None
        return (document.title or None) if document is not None else None
    try:
        return index.community(community_id).title or None
    except (KeyError, ValueError):
        return None


def unit_url(index_key: str, unit_id: str, run_id: str | None, unit: UnitKind = "community") -> str:
    """The view of a run's unit: a community's provenance, or a source chunk's record view."""
    return record_url(index_key, "source", unit_id, run_id) if unit == "source" else provenance_url(index_key, unit_id, run_id)


def run_unit(state: RunState) -> UnitKind:
    """What a run's units are (``community``, or ``source`` for the ``text`` and ``vector`` methods)."""
    return unit_kind(state.request.method) if state.request is not None else "community"


def sets_of(state: RunState, index: Index | None) -> CommunitySets | None:
    if state.result is None:
        return None
    method = state.result.request.method
    return community_sets(state.result, index_ids=unit_ids(index, method) if index is not None else None)


def answer_markdown(text: str, sets: CommunitySets | None, *, index: Index | None, index_key: str, run_id: str | None) -> str:
    """``text`` as safe Markdown, every citation a link or flagged (see
    :func:`~graphrag_app.text.cited_markdown`): to their communities' provenance views (or,
    for a run over source chunks, to the chunks' views); unsupported ids as ``sets`` say."""
    unit: UnitKind = sets.unit if sets is not None and sets.unit == "source" else "community"
    return cited_markdown(
        demote_headings(text, by=ANSWER_HEADING_SHIFT),
        index=index,
        index_key=index_key,
        run_id=run_id,
        unsupported=(lambda cid: sets.reason(cid)) if sets is not None else (lambda cid: None),
        title_for=lambda cid: unit_title(index, cid, unit),
        unit=unit,
    )


def sets_caption(sets: CommunitySets) -> str:
    """``"8 cited · 129 behind · 133 read but unused · 1 unsupported"`` (Markdown)."""
    flagged = f" · **{sets.unsupported_count} unsupported** citations (flagged in place)" if sets.unsupported_count else ""
    noun = "Source chunks" if sets.unit == "source" else "Communities"
    return (
        f"{noun}: {len(sets.cited)} {SET_NAMES['cited'].lower()} · {len(sets.behind)} {SET_NAMES['behind'].lower()} the answer · "
        f"{len(sets.read_but_unused)} {SET_NAMES['read_but_unused'].lower()}{flagged}"
    )


def close_evidence() -> None:
    """Close the evidence dialog (a page that the dialog's link led to calls this, so Back
    returns to the answer, not to the dialog)."""
    EVIDENCE_OPEN.set(None)


# -- one community's evidence ----------------------------------------------------------------------


def draw_summary(container: DeltaGenerator, index: Index, community: Community, *, index_key: str, run_id: str | None) -> None:
    """The summary as safe Markdown (Microsoft GraphRAG reports are Markdown): its
    ``[Data: Reports (3)]`` references link to those communities, ``Entities``,
    ``Relationships``, ``Claims`` and ``Sources`` to those records' views (the record on
    hover), and ``+more`` to the list of this community's records."""
    with container:
        if not community.summary.strip():
            st.text("(no summary)")
        elif is_report_markdown(community.summary):
            report = demote_headings(community.summary, by=REPORT_HEADING_SHIFT)
            st.markdown(report_markdown(report, IndexRecords(index), index=index, index_key=index_key, run_id=run_id))
        else:  # plain prose stays verbatim
            st.text(community.summary)


def report_markdown(report: str, records: IndexRecords, *, index: Index, index_key: str, run_id: str | None) -> str:
    """A report as safe Markdown, every reference a link: communities to their view, records to
    theirs, ``+more`` to this community's records below; a record the index lacks is flagged."""
    communities = community_linker(
        lambda cid: provenance_url(index_key, cid, run_id),
        title_for=lambda cid: index.community(cid).title or None if index.has_community(cid) else None,
        unsupported=lambda cid: None if index.has_community(cid) else "not_in_index",
    )
    linker = either(communities, record_linker(records, lambda kind, ref: record_url(index_key, kind, ref, run_id), flag_missing_tables=False))
    more = link("+more", f"#{RECORDS_ANCHOR}", title="The report cites more records than it lists: all records of this community")
    return linked_markdown(report, linker, more=lambda _citation: more)


def is_report_markdown(text: str) -> bool:
    """A Microsoft GraphRAG report (Markdown headings, ``[Data: ...]`` references), not plain prose."""
    return text.lstrip().startswith("#") or "\n#" in text or "[Data:" in text


def _claim_line(claim: Claim) -> str:
    head = claim.subject if not claim.object else f"{claim.subject} → {claim.object}"
    return f"{head}: {claim.description}" if claim.description else head


CLAIM_EXCERPT_CHARS = 600
"""A claim's source chunk longer than this shows the passage naming its subject, the rest on demand."""


def draw_claims(container: DeltaGenerator, index: Index, community: Community, *, index_key: str = "", run_id: str | None = None) -> None:
    """The claims of the community's leaf descendants, each with its source chunks and documents."""
    claims = index.leaf_claims(community.id)
    with container:
        st.subheader(f"Claims from leaf descendants ({len(claims)})")
        if not claims:
            st.caption("No claims are attached to this community's leaves.")
            return
        needle = st.text_input("Filter claims", key=CLAIM_FILTER.key, placeholder="words in the subject or description").strip().lower()
        if needle:
            claims = [c for c in claims if needle in _claim_line(c).lower()]
        pages = max(1, -(-len(claims) // CLAIMS_PER_PAGE))
        if CLAIM_PAGE.value > pages:
            CLAIM_PAGE.set(1)
        page = st.number_input(f"Page (of {pages})", min_value=1, max_value=pages, step=1, key=CLAIM_PAGE.key) if pages > 1 else 1
        start = (int(page) - 1) * CLAIMS_PER_PAGE
        shown_with: dict[str, str] = {}  # chunk id -> the claim it is shown with on this page
        for claim in claims[start : start + CLAIMS_PER_PAGE]:
            with st.container(border=True):
                claim_ref = record_ref(claim)
                st.caption(f"Claim {escape_markdown(claim_ref)} · leaf community {escape_markdown(claim.community_id)}")
                st.text(_claim_line(claim))
                for chunk in index.claim_chunks(claim):
                    source = source_label(index, chunk)
                    if chunk.id in shown_with:  # each chunk's text once per page; later uses refer to it
                        st.caption(escape_markdown(f"{source} · shown above with claim {shown_with[chunk.id]}"))
                        continue
                    shown_with[chunk.id] = claim_ref
                    opened = f" · {link('open', record_url(index_key, 'source', record_ref(chunk), run_id), title='This source and the records extracted from it')}" if index_key else ""
                    st.caption(escape_markdown(source) + opened)
                    excerpt = mention_excerpt(chunk.text, [claim.subject, claim.object or ""], width=CLAIM_EXCERPT_CHARS) if len(chunk.text) > CLAIM_EXCERPT_CHARS else None
                    if excerpt is None:
                        st.text(chunk.text)
                        continue
                    st.text(excerpt)  # the passage naming the claim's subject; the whole chunk on demand
                    with st.expander(f"Full text ({len(chunk.text):,} characters)"):
                        st.text(chunk.text)


def _short(text: str, chars: int = 16) -> str:
    """A long hash-like id cut to its start (the full id is in the record's view)."""
    return text if len(text) <= chars + 2 else text[:chars] + "…"


def source_label(index: Index, chunk: SourceChunk) -> str:
    """``Source chunk 3 · document dulce.txt``: the chunk as reports cite it, and its document."""
    label = f"Source chunk {_short(record_ref(chunk))}"
    document = index.document(chunk.document_id) if chunk.document_id is not None else None
    if document is not None:
        label += f" · document {document.title or _short(document.id)}"
    return label


FINAL_ANSWER_HEADING = "Cited in the final answer."
"""The caption over the final answer's sentences that cite the community (only those)."""


MAP_ANSWER_LABEL = "Map answer of batch {index} (an intermediate answer, not the final one)"


def _linked(text: str, index: Index, *, index_key: str, run_id: str) -> str:
    """Model text as safe Markdown, every citation a link or flagged, as in the answer on Explore."""
    return cited_markdown(
        text,
        index=index,
        index_key=index_key,
        run_id=run_id,
        unsupported=lambda cid: None if index.has_community(cid) else "not_in_index",
        title_for=lambda cid: index.community(cid).title or None if index.has_community(cid) else None,
    )


def draw_final_citations(container: DeltaGenerator, index: Index, community: Community, state: RunState, run_id: str, *, index_key: str) -> None:
    """The sentences of the final answer that cite the community, and only those: a map
    answer's sentences are shown under their batch, labelled as such."""
    result = state.result
    if result is None or not RunStatus(result.status).answered:
        return
    sentences = citing_sentences(result.answer, community.id)
    with container:
        if not sentences:
            st.caption("The final answer does not cite this community.")
            return
        times = citation_count(result.answer, community.id)
        st.caption(FINAL_ANSWER_HEADING)
        with st.container(border=True):
            st.markdown("\n".join(f"- {_linked(sentence, index, index_key=index_key, run_id=run_id)}" for sentence in sentences))
        st.caption(f"The final answer cites this community {'once' if times == 1 else f'{times:,} times'}, in {counted(len(sentences), 'sentence')}.")


def run_mark(community_id: str, sets: CommunitySets | None) -> str:
    """What the run did with a community, in the three sets' words."""
    if sets is None:
        return ""
    marks = []
    if community_id in sets.cited:
        marks.append("cited")
    if community_id in sets.behind:
        marks.append("behind the answer")
    unused = next((u for u in sets.read_but_unused if u.community_id == community_id), None)
    if unused is not None:
        marks.append(f"read but unused (best score {unused.best_score:g})")
    return " · " + ", ".join(marks) if marks else " · not read by this run"


def walk_line(state: RunState, community_id: str) -> str | None:
    """One community's part in a run's dynamic selection, as a plain line (None for a fixed level)."""
    selection = state.selection
    if not selection.active:
        return None
    fate = selection.fate_of(community_id)
    event = selection.ratings.get(community_id)
    if event is None:
        return WALK_LABELS[fate]
    rating = "every rating call failed" if event.failed else f"rated {event.rating} of 5"
    repeats = f" (repeats: {', '.join('failed' if r is None else str(r) for r in event.repeat_ratings)})" if len(event.repeat_ratings) > 1 else ""
    return f"{WALK_LABELS[fate]}: {rating}{repeats} in round {event.round}, threshold {selection.rating_threshold}"


def draw_run_use(container: DeltaGenerator, index: Index, community: Community, state: RunState, run_id: str, *, index_key: str = "") -> None:
    """What the run did with the community: the final answer's sentences that cite it, then
    which batch carried it (or an ancestor), that batch's map answer (labelled as a map answer)
    and score, and its reduce fate."""
    with container:
        st.subheader("In this run")
        query = state.request.query if state.request else ""
        status = RunStatus(state.result.status if state.result else state.status)
        st.caption(f"Run {escape_markdown(run_id)} · status: {status.word}")
        if query:
            st.text(f"Question: {query}")
        if (walk := walk_line(state, community.id)) is not None:  # a dynamic run
            st.markdown(f"**Dynamic selection:** {escape_markdown(walk)}")
            rated = state.selection.ratings.get(community.id)
            if rated is not None and rated.reason:
                st.text(f"Reason: {rated.reason}")
        sets = sets_of(state, index)
        if sets is not None:  # the three sets, named as on Explore
            st.markdown(f"**This community in the run:** {escape_markdown(run_mark(community.id, sets).removeprefix(' · '))}")
        draw_final_citations(st.container(), index, community, state, run_id, index_key=index_key)
        lineage = {c.id: c for c in index.path_to_root(community.id)}
        carried = [(batch, cid) for batch in state.batches for cid in batch.community_ids if cid in lineage]
        if not carried:
            st.info("No map batch of this run carried this community or any of its ancestors.")
            return
        fates = {c.answer.batch_index: c for c in state.candidates}
        st.markdown(f"**The map batches that read it** ({counted(len(carried), 'batch')})")
        for batch, cid in carried:
            with st.container(border=True):
                relation = "this community" if cid == community.id else f"its ancestor {cid} ({level_label(lineage[cid].level)})"
                score = "-" if batch.usefulness is None else f"{batch.usefulness:g}"
                st.markdown(
                    f"**Batch {batch.index}** carried {escape_markdown(relation)} · status: {batch.status.word} · "
                    f"usefulness: {score} · {counted(batch.attempts, 'attempt')} · {counted(len(batch.community_ids), 'community')}"
                )
                candidate = fates.get(batch.index)
                if candidate is not None:
                    used = "used by the reduce" if candidate.fate == "selected" else "not used by the reduce"
                    tokens = f", reduce tokens {candidate.tokens}" if candidate.tokens is not None else ""
                    st.markdown(f"Reduce: **{used}** ({FATE_LABELS[candidate.fate]}{tokens})")
                elif batch.status == BatchStatus.FAILED:
                    st.markdown("Reduce: **not used** (the batch failed)")
                elif state.phase != "done":
                    st.caption("The reduce has not happened yet.")
                if batch.answer:  # model text: safe Markdown, its citations linked
                    st.caption(MAP_ANSWER_LABEL.format(index=batch.index))
                    with st.container(border=True):
                        st.markdown(_linked(batch.answer, index, index_key=index_key, run_id=run_id))
                for error in batch.errors:
                    st.text(f"error: {error}")


# -- a run's support check -------------------------------------------------------------------------

SUPPORT_HEADING = "Support check"
EVIDENCE_NAMES = {"summary": "Summary", "claim": "Claim", "chunk": "Source chunk"}
"""How a quote's unit is named over its text."""


def judge_caption(check: SupportCheck) -> str:
    """Who judged and what the summary line leaves out, on one line (plain text)."""
    judge = "the offline (lexical) judge" if check.judge == "offline" else f"the model judge ({check.judged_by})"
    detail = check.detail_line()
    return f"Checked by {judge}" + (f" · {detail}" if detail else "") + "."


def point_tooltip(point: SupportPoint) -> str:
    """What a point's badge says on hover: its verdict in words, why, and who says it instead."""
    words = [VERDICT_LABELS[point.verdict].capitalize() + ".", point.reason]
    if point.error:
        words.append(f"Not judged: {point.error}")
    return " ".join(w for w in words if w)


def point_markdown(point: SupportPoint) -> str:
    """A point as one line of Markdown: its badge, then its text (escaped)."""
    return f"{verdict_badge(point.verdict)} {escape_markdown(point.text)}"


def draw_support(container: DeltaGenerator, check: SupportCheck) -> None:
    """The check under the answer: the summary line (``7 of 8 points supported``), who judged,
    then each point with its badge (its reason on hover)."""
    with container:
        st.markdown(f"**{SUPPORT_HEADING}:** {escape_markdown(check.summary_line())}")
        st.caption(escape_markdown(judge_caption(check)))
        for point in check.points:
            st.markdown(point_markdown(point), help=point_tooltip(point))


def quote_position(text: str, evidence: SupportEvidence) -> tuple[int, int] | None:
    """Where ``evidence``'s quote is in its unit's ``text``: the position the engine verified when
    it still holds, else where the quote is found (whitespace aside); None when it is not there."""
    if 0 <= evidence.start < evidence.end <= len(text) and text[evidence.start : evidence.end] == evidence.quote:
        return evidence.start, evidence.end
    return find_quote(text, evidence.quote)


def evidence_title(evidence: SupportEvidence) -> str:
    """``Summary of community 3``, ``Claim 12``, ``Source chunk 4`` (plain text)."""
    if evidence.kind == "summary":
        return f"Summary of community {evidence.id}"
    return f"{EVIDENCE_NAMES[evidence.kind]} {evidence.id}"


def draw_quote(container: DeltaGenerator, index: Index, evidence: SupportEvidence) -> bool:
    """One quote highlighted in its unit's text; False (nothing drawn) when the unit or the quote is not there."""
    text = unit_text(index, evidence.kind, evidence.id)
    position = quote_position(text, evidence) if text is not None else None
    if text is None or position is None:
        return False
    with container:
        st.caption(escape_markdown(evidence_title(evidence)))
        st.markdown(highlighted_markdown(text, *position))
    return True


def points_citing(check: SupportCheck, unit_id: str) -> list[SupportPoint]:
    """The points that cite ``unit_id``, or that it supports though they cite others."""
    return [p for p in check.points if unit_id in p.communities or unit_id in p.supported_by]


def quotes_from(point: SupportPoint, unit_id: str) -> list[SupportEvidence]:
    """A point's quotes reached through ``unit_id`` (its own evidence, or what ``unit_id`` says for it elsewhere)."""
    return [e for e in (*point.evidence, *point.elsewhere) if (e.community_id or e.id) == unit_id]


def draw_unit_support(container: DeltaGenerator, index: Index, check: SupportCheck, unit_id: str) -> None:
    """The check in a cited unit's evidence dialog: each point citing it (or supported by it)
    with its badge, and its supporting quotes highlighted in their texts."""
    points = points_citing(check, unit_id)
    if not points:
        return
    with container:
        st.markdown(f"**{SUPPORT_HEADING}** of the points citing it")
        for point in points:
            with st.container(border=True):
                st.markdown(point_markdown(point), help=point_tooltip(point))
                if unit_id not in point.communities:
                    st.caption("The point does not cite it, but it says what the point says.")
                if not sum(draw_quote(st.container(), index, e) for e in quotes_from(point, unit_id)):
                    st.caption("No words of its texts support this point.")


__all__ = [
    "ANSWER_BOX_KEY",
    "CLAIM_FILTER",
    "CLAIM_PAGE",
    "EVIDENCE_NAMES",
    "EVIDENCE_OPEN",
    "FINAL_ANSWER_HEADING",
    "MAP_ANSWER_LABEL",
    "SET_HELP",
    "SET_NAMES",
    "SOURCE_SET_HELP",
    "SUPPORT_HEADING",
    "answer_markdown",
    "close_evidence",
    "draw_claims",
    "draw_quote",
    "draw_support",
    "draw_unit_support",
    "evidence_title",
    "judge_caption",
    "point_markdown",
    "point_tooltip",
    "points_citing",
    "quote_position",
    "quotes_from",
    "draw_final_citations",
    "draw_run_use",
    "draw_summary",
    "index_for",
    "is_report_markdown",
    "report_markdown",
    "run_mark",
    "run_unit",
    "sets_caption",
    "sets_of",
    "source_label",
    "unit_title",
    "unit_url",
    "walk_line",
]
