"""The Index browser's panels: the community hierarchy, counts and tokens per level, a searchable
community table linking to provenance, and a community's entity graph.

Each panel takes the container to draw into; the page only lays them out. Index text is shown
as text.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.index import index_display_name
from graphrag_core.levels import level_label
from graphrag_core.models import Index

from . import charts as ic
from ..loaders import OpenedIndex
from ..text import escape_markdown
from ..panels.link_tables import link_table
from .state import DEPTH, FILTER, GRAPH_COMMUNITY, KIND, SIZE_BY, BrowseState
from ..urls import COMMUNITY_PARAM, INDEX_PARAM

PLOTLY_CONFIG = {"displaylogo": False}
TABLE_HEIGHT = 420
STAT_NAMES = ("communities", "claims", "chunks", "documents", "entities", "relationships")


@st.cache_data(max_entries=8, show_spinner=False)
def cached_level_stats(_index: Index, key: str, signature: int) -> list[ic.LevelStats]:
    return ic.level_stats(_index)


@st.cache_data(max_entries=8, show_spinner=False)
def cached_community_rows(_index: Index, key: str, signature: int) -> list[dict[str, object]]:
    return ic.community_rows(_index, index_key=key)


def url_index() -> str:
    return str(st.query_params.get(INDEX_PARAM, "") or "").strip()


def keep_url(key: str) -> None:
    """The URL names the index shown, so a link reopens it."""
    if st.query_params.get(INDEX_PARAM) != key:
        st.query_params[INDEX_PARAM] = key


def draw_overview(container: DeltaGenerator, opened: OpenedIndex) -> None:
    """The index's name, description, counts and warnings."""
    index = opened.index
    if index is None or opened.source is None:
        return
    stats = index.stats()
    with container:
        st.markdown(f"**{escape_markdown(index_display_name(opened.source.path, index))}**")
        if index.description:
            st.caption(escape_markdown(index.description))
        for col, name in zip(st.columns(len(STAT_NAMES)), STAT_NAMES):
            col.metric(name.capitalize(), f"{stats[name]:,}")
        for warning in index.warnings:
            st.warning(escape_markdown(warning), icon=":material/warning:")


def draw_hierarchy(container: DeltaGenerator, index: Index) -> None:
    with container:
        st.subheader("Community hierarchy")
        row = st.container(horizontal=True, vertical_alignment="bottom")  # each control as wide as its choices
        cols = [row, row, row, st.container()]
        size_by = cols[0].segmented_control("Size by", list(ic.SIZE_CHOICES), key=SIZE_BY.key, default="members")
        kind = cols[1].segmented_control("Chart", list(ic.KIND_CHOICES), key=KIND.key, default="sunburst")
        depth_options = list(range(1, len(index.levels()) + 1))
        depth = cols[2].selectbox("Levels shown at once", depth_options, index=min(1, len(depth_options) - 1), key=DEPTH.key, width=180)
        cols[3].caption("Click a community to zoom in; click the centre (or the top bar) to zoom out.")
        fig = ic.hierarchy_figure(index, size_by=size_by or "members", kind=kind or "sunburst", max_depth=depth)
        st.plotly_chart(fig, key="browse_hierarchy", config=PLOTLY_CONFIG)


def draw_levels(container: DeltaGenerator, index: Index, key: str, signature: int) -> None:
    with container:
        st.subheader("Levels")
        stats = cached_level_stats(index, key, signature)
        left, right = st.columns([1, 1])
        left.dataframe(pd.DataFrame([row.as_row() for row in stats]), hide_index=True, width="stretch", key="browse_levels_table")
        left.caption(
            "Summary tokens: the community summaries at that level. Map text tokens: what a search at that "
            "level packs into its map batches (summaries, plus claims and source excerpts)."
        )
        right.plotly_chart(ic.level_figure(stats), key="browse_levels_chart", config=PLOTLY_CONFIG)


def draw_table(container: DeltaGenerator, index: Index, key: str, signature: int) -> None:
    with container:
        st.subheader("Communities")
        text = st.text_input("Filter communities", key=FILTER.key, placeholder="Words in the id, title or summary, e.g. wizard")
        rows = ic.filter_communities(index, cached_community_rows(index, key, signature), text)
        st.caption(f"{len(rows)} of {len(index.communities)} communities. “open” opens a community's provenance page.")
        link_table(
            st.container(),
            pd.DataFrame(rows, columns=["id", "level", "title", "provenance", "members", "children", "claims", "summary tokens", "summary"]),
            link_column="provenance",
            key="browse_communities",
            open_help="This community's provenance page",
            hide_index=True,
            width="stretch",
            height=TABLE_HEIGHT,
            column_config={"summary": st.column_config.TextColumn("summary", width="large")},
        )


def draw_graph(container: DeltaGenerator, index: Index, index_key: str) -> None:
    """A community's entity graph; ``?community=`` picks the community first shown."""
    with container:
        st.subheader("Entity graph")
        if not index.entities:
            st.caption("This index has no entities, so there is no graph to draw.")
            return
        options = ic.communities_with_entities(index)
        if not options:
            st.caption("No community of this index names an entity.")
            return
        page = BrowseState.get()
        wanted = str(st.query_params.get(COMMUNITY_PARAM, "") or "")
        if page.graph_index not in (None, index_key):  # another index: its community ids mean other communities
            wanted = ""
            GRAPH_COMMUNITY.pop()
        page.graph_index = index_key
        if GRAPH_COMMUNITY.value not in options:
            GRAPH_COMMUNITY.set(wanted if wanted in options else options[0])

        def label(community_id: str) -> str:
            community = index.community(community_id)
            return f"{community_id} · {level_label(community.level)} · {ic.community_label(community)}"

        community_id = st.selectbox("Community", options, key=GRAPH_COMMUNITY.key, format_func=label)
        st.plotly_chart(ic.entity_graph_figure(index, community_id), key="browse_graph", config=PLOTLY_CONFIG)
        community = index.community(community_id)
        with st.expander("Summary of this community"):
            st.text(community.summary or "(no summary)")


__all__ = [
    "draw_graph",
    "draw_hierarchy",
    "draw_levels",
    "draw_overview",
    "draw_table",
    "keep_url",
    "url_index",
]
