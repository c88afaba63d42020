"""The Provenance page's panels: a community, its place in the hierarchy, its summary, the claims
of its leaf descendants with their source chunks and documents, and what a run did with it.

Everything comes from the URL (``index``, ``community``, ``run``) so a link can be shared and
reloaded. Index text is drawn with ``st.text`` only.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.models import Claim, Community, Index
from graphrag_core.state import RunState
from graphrag_core.store import RunStore

from . import charts, selection_charts
from .compare_charts import index_key_for
from .controls import open_index
from .loaders import default_index_key
from .session import ExplorerSession
from .settings import AppSettings
from .urls import COMMUNITY_PARAM, RUN_PARAM, provenance_params, to_query_params
from .views import escape_markdown

EXPLORE_PAGE = "pages/explore.py"
PROVENANCE_PAGE = "pages/provenance.py"
CLAIMS_PER_PAGE = 20
COMMUNITY_KEY = "provenance_community"
CLAIM_FILTER_KEY = "provenance_claim_filter"
CLAIM_PAGE_KEY = "provenance_claim_page"


def _run_state(run_id: str, *, app: AppSettings, session: ExplorerSession) -> tuple[RunState | None, str | None, str | None]:
    """The run's state (from this session when it shows it, else from the history), its index, and an error."""
    view = session.view
    if view is not None and view.run_id == run_id:
        return view.state, view.index_key, None
    try:
        record = RunStore(app.store_path).get(run_id)
    except Exception as exc:  # noqa: BLE001 - page boundary: the rest of the page still works
        return None, None, f"The run history could not be read ({type(exc).__name__}): {exc}"
    if record is None:
        return None, None, f"Run {run_id} is not in this app's run history."
    return record.replay(), index_key_for(record), None


def _link(container: DeltaGenerator, community: Community, *, index_key: str, run_id: str | None, prefix: str = "") -> None:
    label = f"{prefix}{community.id} · {community.title or 'untitled'}"
    container.page_link(
        PROVENANCE_PAGE,
        label=escape_markdown(label),
        query_params=provenance_params(index_key, community.id, run_id),
        icon=":material/account_tree:",
    )


def draw_hierarchy(container: DeltaGenerator, index: Index, community: Community, *, index_key: str, run_id: str | None) -> None:
    with container:
        path = index.path_to_root(community.id)
        st.text(f"Level {community.level} · {'leaf' if index.is_leaf(community.id) else 'inner'} community" + (f" · {community.size} members" if community.size else ""))
        if len(path) > 1:
            st.markdown("**Path to the root**")
            for depth, ancestor in enumerate(reversed(path[1:])):
                _link(st.container(), ancestor, index_key=index_key, run_id=run_id, prefix=f"{'  ' * depth}level {ancestor.level}: ")
        else:
            st.caption("A root community.")
        children = index.children(community.id)
        if children:
            with st.expander(f"Sub-communities ({len(children)})"):
                for child in children:
                    _link(st.container(), child, index_key=index_key, run_id=run_id, prefix=f"level {child.level}: ")


def _claim_line(claim: Claim) -> str:
    head = claim.subject if not claim.object else f"{claim.subject} → {claim.object}"
    return f"{head}: {claim.description}" if claim.description else head


def draw_claims(container: DeltaGenerator, index: Index, community: Community) -> None:
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
        for claim in claims[start : start + CLAIMS_PER_PAGE]:
            with st.container(border=True):
                st.caption(f"Claim {escape_markdown(claim.id)} · leaf community {escape_markdown(claim.community_id)}")
                st.text(_claim_line(claim))
                for chunk in index.claim_chunks(claim):
                    document = index.document(chunk.document_id) if chunk.document_id is not None else None
                    source = f"Source chunk {chunk.id}"
                    if document is not None:
                        source += f" · document {document.id}: {document.title}" if document.title else f" · document {document.id}"
                    st.caption(escape_markdown(source))
                    st.text(chunk.text)


def draw_run_use(container: DeltaGenerator, index: Index, community: Community, state: RunState, run_id: str) -> None:
    """Which batch of the run carried the community (or an ancestor), its answer and score, and its reduce fate."""
    with container:
        st.subheader("In this run")
        query = state.request.query if state.request else ""
        st.caption(f"Run {escape_markdown(run_id)} · status: {escape_markdown(state.result.status if state.result else state.status)}")
        if query:
            st.text(f"Question: {query}")
        if (walk := selection_charts.walk_line(state, community.id)) is not None:  # a dynamic run
            st.markdown(f"**Dynamic selection:** {escape_markdown(walk)}")
            rated = state.selection.ratings.get(community.id)
            if rated is not None and rated.reason:
                st.text(f"Reason: {rated.reason}")
        lineage = {c.id: c for c in index.path_to_root(community.id)}
        carried = [(batch, cid) for batch in state.batches for cid in batch.community_ids if cid in lineage]
        if not carried:
            st.info("No map batch of this run carried this community or any of its ancestors.")
            return
        fates = {c.answer.batch_index: c for c in state.candidates}
        cited = set(state.result.community_ids) if state.result else set()
        for batch, cid in carried:
            with st.container(border=True):
                relation = "this community" if cid == community.id else f"its ancestor {cid} (level {lineage[cid].level})"
                score = "-" if batch.usefulness is None else f"{batch.usefulness:g}"
                st.markdown(
                    f"**Batch {batch.index}** carried {escape_markdown(relation)} · status: {batch.status} · "
                    f"usefulness: {score} · attempts: {batch.attempts} · {len(batch.community_ids)} communities"
                )
                candidate = fates.get(batch.index)
                if candidate is not None:
                    used = "used by the reduce" if candidate.fate == "selected" else "not used by the reduce"
                    tokens = f", reduce tokens {candidate.tokens}" if candidate.tokens is not None else ""
                    st.markdown(f"Reduce: **{used}** ({charts.FATE_LABELS[candidate.fate]}{tokens})")
                elif batch.status == "failed":
                    st.markdown("Reduce: **not used** (the batch failed)")
                elif state.phase != "done":
                    st.caption("The reduce has not happened yet.")
                if cid in cited:
                    st.caption("Cited in the final answer.")
                if batch.answer:
                    st.text(batch.answer)
                for error in batch.errors:
                    st.text(f"error: {error}")


def draw_page(app: AppSettings, session: ExplorerSession) -> None:
    params = st.query_params
    run_id = params.get(RUN_PARAM) or None
    state, run_index, run_error = _run_state(run_id, app=app, session=session) if run_id else (None, None, None)
    index_key = params.get("index") or run_index or (session.settings.index if session.settings else "") or default_index_key()

    st.title("Provenance")
    back_params = to_query_params(session.settings, run_id=session.view.run_id if session.view else None) if session.settings else {}
    st.page_link(EXPLORE_PAGE, label="Back to Explore", icon=":material/arrow_back:", query_params=back_params)
    if run_error:
        st.warning(escape_markdown(run_error), icon=":material/history:")

    opened = open_index(index_key, app)
    if opened.index is None:
        st.error(escape_markdown(opened.error or "The index could not be opened."), icon=":material/folder_off:")
        return
    index = opened.index

    wanted = params.get(COMMUNITY_PARAM, "")
    ids = [c.id for c in index.communities]
    if wanted and wanted in ids and st.session_state.get(COMMUNITY_KEY) != wanted:
        st.session_state[COMMUNITY_KEY] = wanted
    if wanted and wanted not in ids:
        st.error(f"No community {escape_markdown(wanted)} in the index {escape_markdown(index_key)}.", icon=":material/search_off:")
    st.session_state.setdefault(COMMUNITY_KEY, None)
    chosen = st.selectbox(
        "Community",
        ids,
        key=COMMUNITY_KEY,
        placeholder="Choose a community",
        format_func=lambda cid: f"{cid} · level {index.community(cid).level} · {index.community(cid).title or 'untitled'}",
    )
    if chosen is None:
        st.info("Choose a community, or follow a community link from an answer on the Explore page.")
        return
    wanted_params = provenance_params(index_key, chosen, run_id)
    if params.to_dict() != wanted_params:
        params.from_dict(wanted_params)

    community = index.community(chosen)
    st.header(f"Community {escape_markdown(community.id)}: {escape_markdown(community.title or 'untitled')}")
    st.caption(f"Index: {escape_markdown(opened.source.label if opened.source else index_key)}")
    left, right = st.columns([3, 2])
    draw_hierarchy(right.container(), index, community, index_key=index_key, run_id=run_id)
    with left:
        st.subheader("Summary")
        st.text(community.summary or "(no summary)")
    if state is not None and run_id:
        draw_run_use(st.container(), index, community, state, run_id)
    draw_claims(st.container(), index, community)
