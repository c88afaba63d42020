"""The Provenance page's panels: a community, its place in the hierarchy, its summary, the claims
of its leaf descendants with their source chunks and documents, and what a run did with it.

Everything comes from the URL (``index``, ``community``, ``run``) so a link can be shared and
reloaded. Index text is drawn with ``st.text`` only.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.citations import citation_count, citing_sentences, find_citations, references_of_kind
from graphrag_core.deferred import DEFERRED_TABLES
from graphrag_core.models import Claim, Community, Index, SourceChunk
from graphrag_core.records import IndexRecords, mention_excerpt, record_ref
from graphrag_core.state import BatchStatus, RunState
from graphrag_core.history import RunStore, StoreError
from graphrag_core.levels import level_label
from graphrag_core.status import RunStatus
from graphrag_core.wording import counted

from ..explore import selection_charts
from . import records as record_views
from ..labels import FATE_LABELS
from ..text import cited_markdown, community_linker, demote_headings, either, link, linked_markdown, record_linker
from ..explore.sidebar import open_index, show_index_problem
from ..explore.actions import open_run
from ..panels.evidence import sets_of
from ..loaders import default_index_key
from ..session import ExploreState, ProvenanceState
from ..settings import AppSettings
from ..urls import COMMUNITY_PARAM, INDEX_PARAM, RECORDS_ANCHOR, RUN_PARAM, index_param, provenance_params, provenance_url, record_url, to_query_params
from ..text import escape_markdown

EXPLORE_PAGE = "pages/explore.py"
PROVENANCE_PAGE = "pages/provenance.py"
CLAIMS_PER_PAGE = 20
COMMUNITY_KEY = "provenance_community"
CLAIM_FILTER_KEY = "provenance_claim_filter"
BACK_KEY = "provenance_back"
REPORT_HEADING_SHIFT = 3
"""A report's ``#`` becomes ``####``: below the page's Summary heading."""
CLAIM_PAGE_KEY = "provenance_claim_page"


def _run_state(run_id: str, *, app: AppSettings, session: ExploreState) -> tuple[RunState | None, str | None, str | None]:
    """The run's state (from this session when it shows it, else from the history), its index, and an error."""
    view = session.view
    if view is not None and view.run_id == run_id:
        return view.state, view.index_key, None
    try:
        record = RunStore(app.store_path).get(run_id)
    except StoreError as exc:  # its message names the file and what is wrong with it
        return None, None, str(exc)
    except Exception as exc:  # noqa: BLE001 - page boundary: the rest of the page still works
        return None, None, f"The run history could not be read ({type(exc).__name__}): {exc}"
    if record is None:
        return None, None, f"Run {run_id} is not in this app's run history."
    return record.replay(), index_param(record.index_path, name=record.index_name), None


def go_to(community_id: str) -> None:
    """Show another community: the picker follows, and the script puts it in the URL (a new
    history entry, so Back returns here)."""
    st.session_state[COMMUNITY_KEY] = community_id


def _link(container: DeltaGenerator, community: Community, *, index_key: str, run_id: str | None, prefix: str = "") -> None:
    """A link-styled button to another community of this page. (A ``page_link`` to the page
    already shown would change the view without changing the URL; see :func:`go_to`.)"""
    label = f"{prefix}{community.id} · {community.title or 'untitled'}"
    container.button(
        escape_markdown(label),
        key=f"goto-{prefix}-{community.id}",
        type="tertiary",
        on_click=go_to,
        args=(community.id,),
        icon=":material/account_tree:",
        help=provenance_url(index_key, community.id, run_id),
    )


def draw_hierarchy(container: DeltaGenerator, index: Index, community: Community, *, index_key: str, run_id: str | None) -> None:
    with container:
        path = index.path_to_root(community.id)
        st.text(f"Level {community.level} · {'leaf' if index.is_leaf(community.id) else 'inner'} community" + (f" · {community.size} members" if community.size else ""))
        if len(path) > 1:
            st.markdown("**Path to the root**")
            for depth, ancestor in enumerate(reversed(path[1:])):
                _link(st.container(), ancestor, index_key=index_key, run_id=run_id, prefix=f"{'  ' * depth}{level_label(ancestor.level)}: ")
        else:
            st.caption("A root community.")
        children = index.children(community.id)
        if children:
            with st.expander(f"Sub-communities ({len(children)})"):
                for child in children:
                    _link(st.container(), child, index_key=index_key, run_id=run_id, prefix=f"{level_label(child.level)}: ")


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


def draw_community_records(container: DeltaGenerator, index: Index, community: Community, *, index_key: str, run_id: str | None) -> None:
    """Every entity and relationship of the community, those its report cites first, each a link to its view."""
    import pandas as pd

    records = IndexRecords(index)
    citations = find_citations(community.summary) if is_report_markdown(community.summary) else []
    cited = {kind: references_of_kind(citations, kind) for kind in ("entity", "relationship")}
    members = {"entity": records.community_entities(community.id), "relationship": records.community_relationships(community.id)}
    frames = []
    for kind in ("entity", "relationship"):
        listed = [r for ref in cited[kind] if (r := records.get(kind, ref)) is not None]
        seen = {r.id for r in listed}
        rest = [r for r in members[kind] if r.id not in seen]
        frame = record_views.records_frame(kind, listed + rest, index_key=index_key, run_id=run_id)
        frame.insert(1, "cited by the report", [True] * len(listed) + [False] * len(rest))
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    if table.empty:
        if any(c.more for c in citations):  # the report's "+more" leads here: say what is here
            with container:
                st.subheader("Entities and relationships of this community (0)", anchor=RECORDS_ANCHOR)
                st.caption("The index holds no entity or relationship records for this community.")
        return
    with container:
        st.subheader(f"Entities and relationships of this community ({len(table)})", anchor=RECORDS_ANCHOR)
        cited_count = int(table["cited by the report"].sum())
        cited_note = f"{cited_count} cited by the report (listed first) · " if cited_count else ""
        st.caption(f"{cited_note}Open one for its description, communities and source text.")
        record_views.records_table(st.container(), table, key=f"community-records-{community.id}")


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
        needle = st.text_input("Filter claims", key=CLAIM_FILTER_KEY, placeholder="words in the subject or description").strip().lower()
        if needle:
            claims = [c for c in claims if needle in _claim_line(c).lower()]
        pages = max(1, -(-len(claims) // CLAIMS_PER_PAGE))
        if st.session_state.get(CLAIM_PAGE_KEY, 1) > pages:
            st.session_state[CLAIM_PAGE_KEY] = 1
        page = st.number_input(f"Page (of {pages})", min_value=1, max_value=pages, step=1, key=CLAIM_PAGE_KEY) if pages > 1 else 1
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
        if (walk := selection_charts.walk_line(state, community.id)) is not None:  # a dynamic run
            st.markdown(f"**Dynamic selection:** {escape_markdown(walk)}")
            rated = state.selection.ratings.get(community.id)
            if rated is not None and rated.reason:
                st.text(f"Reason: {rated.reason}")
        sets = sets_of(state, index)
        if sets is not None:  # the three sets, named as on Explore
            st.markdown(f"**This community in the run:** {escape_markdown(record_views.run_mark(community.id, sets).removeprefix(' · '))}")
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


def back_clicked(app: AppSettings, session: ExploreState, run_id: str | None) -> None:
    """Runs before the script: open this page's run for Explore (from the history when this
    browser session has not seen it, e.g. a link opened in a new tab)."""
    ProvenanceState.get().back_to = run_id or ""
    if session.settings is not None and run_id and not session.running and (session.view is None or session.view.run_id != run_id):
        open_run(session, run_id, app=app)


def back_to_explore(session: ExploreState, run_id: str | None) -> None:
    """Switch to Explore with the URL of the run it shows."""
    if session.settings is None:  # a fresh session: Explore's first run opens the run from its URL
        st.switch_page(EXPLORE_PAGE, query_params={RUN_PARAM: run_id} if run_id else None)
    assert session.settings is not None
    st.switch_page(EXPLORE_PAGE, query_params=to_query_params(session.settings, run_id=session.view.run_id if session.view else None))


def draw_page(app: AppSettings, session: ExploreState) -> None:
    params = st.query_params
    page = ProvenanceState.get()
    run_id = params.get(RUN_PARAM) or None
    state, run_index, run_error = _run_state(run_id, app=app, session=session) if run_id else (None, None, None)
    index_key = params.get(INDEX_PARAM) or run_index or (session.settings.index if session.settings else "") or default_index_key()

    st.title("Provenance")
    st.button("Back to Explore", key=BACK_KEY, icon=":material/arrow_back:", type="tertiary", on_click=back_clicked, args=(app, session, run_id))
    if page.back_to is not None:
        page.back_to = None
        back_to_explore(session, run_id)
    if run_error:
        st.warning(escape_markdown(run_error), icon=":material/history:")

    opened = open_index(index_key, app, tables=DEFERRED_TABLES)  # claims, sources, entities and relationships shown
    if show_index_problem(opened):
        return
    index = opened.index

    if (record := record_views.wanted_record(params)) is not None:  # an entity, relationship, claim or source
        page.url_community = (index_key, None)  # a community link from here is a URL change
        st.caption(f"Index: {escape_markdown(opened.source.label if opened.source else index_key)}")
        record_views.draw_record(index, *record, index_key=index_key, run_id=run_id, state=state)
        return

    wanted = params.get(COMMUNITY_PARAM, "")
    ids = [c.id for c in index.communities]
    # The URL wins only when it changed since this page last wrote it (a link, Back, Reload);
    # otherwise the picker (or a hierarchy link) has just chosen and the URL follows below.
    url_changed = page.url_community != (index_key, wanted)
    if wanted and wanted in ids and (url_changed or st.session_state.get(COMMUNITY_KEY) is None):
        st.session_state[COMMUNITY_KEY] = wanted
    page.url_community = (index_key, wanted)
    if wanted and wanted not in ids:
        st.error(f"No community {escape_markdown(wanted)} in the index {escape_markdown(index_key)}.", icon=":material/search_off:")
    st.session_state.setdefault(COMMUNITY_KEY, None)
    chosen = st.selectbox(
        "Community",
        ids,
        key=COMMUNITY_KEY,
        placeholder="Choose a community",
        format_func=lambda cid: f"{cid} · {level_label(index.community(cid).level)} · {index.community(cid).title or 'untitled'}",
    )
    if chosen is None:
        st.info("Choose a community, or follow a community link from an answer on the Explore page.")
        return
    wanted_params = provenance_params(index_key, chosen, run_id)
    if params.to_dict() != wanted_params:
        params.from_dict(wanted_params)  # the browser pushes a history entry: Back returns
        page.url_community = (index_key, chosen)

    community = index.community(chosen)
    st.header(f"Community {escape_markdown(community.id)}: {escape_markdown(community.title or 'untitled')}")
    st.caption(f"Index: {escape_markdown(opened.source.label if opened.source else index_key)}")
    left, right = st.columns([3, 2])
    draw_hierarchy(right.container(), index, community, index_key=index_key, run_id=run_id)
    with left:
        st.subheader("Summary")
        draw_summary(st.container(), index, community, index_key=index_key, run_id=run_id)
    draw_community_records(st.container(), index, community, index_key=index_key, run_id=run_id)
    if state is not None and run_id:
        draw_run_use(st.container(), index, community, state, run_id, index_key=index_key)
    draw_claims(st.container(), index, community, index_key=index_key, run_id=run_id)
