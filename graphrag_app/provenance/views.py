"""The Provenance page: a community, its place in the hierarchy, its summary, its records, the
claims of its leaf descendants with their source chunks and documents, and what a run did with
it; or one record of the index (:mod:`graphrag_app.provenance.records`).

Everything comes from the URL (``index``, ``community``, ``run``) so a link can be shared and
reloaded. Index text is drawn with ``st.text`` only.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.citations import find_citations, references_of_kind
from graphrag_core.deferred import DEFERRED_TABLES
from graphrag_core.history import RunStore, StoreError
from graphrag_core.levels import level_label
from graphrag_core.models import Community, Index
from graphrag_core.records import IndexRecords
from graphrag_core.state import RunState

from ..live import ShownRun, open_run
from ..loaders import default_index_key, open_index, show_index_problem
from ..navigation import EXPLORE_PAGE
from ..panels.evidence import draw_claims, draw_run_use, draw_summary, is_report_markdown
from ..settings import AppSettings
from ..text import escape_markdown
from ..urls import COMMUNITY_PARAM, INDEX_PARAM, RECORDS_ANCHOR, RUN_PARAM, index_param, provenance_params, provenance_url, to_query_params
from . import records as record_views
from .state import BACK_KEY, COMMUNITY, ProvenanceState


def _run_state(run_id: str, *, app: AppSettings, session: ShownRun) -> tuple[RunState | None, str | None, str | None]:
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
    COMMUNITY.set(community_id)


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


def back_clicked(app: AppSettings, session: ShownRun, run_id: str | None) -> None:
    """Runs before the script: open this page's run for Explore (from the history when this
    browser session has not seen it, e.g. a link opened in a new tab)."""
    ProvenanceState.get().back_to = run_id or ""
    if session.settings is not None and run_id and not session.running and (session.view is None or session.view.run_id != run_id):
        open_run(session, run_id, app=app)


def back_to_explore(session: ShownRun, run_id: str | None) -> None:
    """Switch to Explore with the URL of the run it shows."""
    if session.settings is None:  # a fresh session: Explore's first run opens the run from its URL
        st.switch_page(EXPLORE_PAGE, query_params={RUN_PARAM: run_id} if run_id else None)
    assert session.settings is not None
    st.switch_page(EXPLORE_PAGE, query_params=to_query_params(session.settings, run_id=session.view.run_id if session.view else None))


def draw_page(app: AppSettings, session: ShownRun) -> None:
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
    if wanted and wanted in ids and (url_changed or COMMUNITY.value is None):
        COMMUNITY.set(wanted)
    page.url_community = (index_key, wanted)
    if wanted and wanted not in ids:
        st.error(f"No community {escape_markdown(wanted)} in the index {escape_markdown(index_key)}.", icon=":material/search_off:")
    COMMUNITY.setdefault(None)  # type: ignore[arg-type]
    chosen = st.selectbox(
        "Community",
        ids,
        key=COMMUNITY.key,
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


__all__ = ["back_clicked", "back_to_explore", "draw_community_records", "draw_hierarchy", "draw_page", "go_to"]
