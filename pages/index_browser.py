"""Index browser: the community hierarchy, counts and tokens per level, a searchable community
table linking to provenance, and a community's entity graph.

Opens the index named by ``?index=`` (a sample name or a folder, as on the Explore page), and
``?community=`` picks the community whose entity graph is drawn. Index text is shown as text.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from graphrag_app import index_charts as ic
from graphrag_app.controls import open_picked_index
from graphrag_app.loaders import default_index_key, folder_signature, sample_names
from graphrag_app.navigation import ensure_app_navigation
from graphrag_app.session import FOLDER_CHOICE
from graphrag_app.settings import load_settings
from graphrag_app.urls import COMMUNITY_PARAM, PARAM_NAMES
from graphrag_app.views import escape_markdown
from graphrag_core.index import index_display_name
from graphrag_core.models import Index

ensure_app_navigation()

INDEX_PARAM = PARAM_NAMES["index"]
INDEX_KEY = "browse_index"
FOLDER_KEY = "browse_folder"
FILTER_KEY = "browse_filter"
GRAPH_KEY = "browse_graph_community"
GRAPH_INDEX_KEY = "browse_graph_index"  # the index the community box was set for: another resets it
SIZE_KEY = "browse_size_by"
KIND_KEY = "browse_kind"
DEPTH_KEY = "browse_depth"
PLOTLY_CONFIG = {"displaylogo": False}
TABLE_HEIGHT = 420


@st.cache_data(max_entries=8, show_spinner=False)
def cached_level_stats(_index: Index, key: str, signature: int) -> list[ic.LevelStats]:
    return ic.level_stats(_index)


@st.cache_data(max_entries=8, show_spinner=False)
def cached_community_rows(_index: Index, key: str, signature: int) -> list[dict[str, object]]:
    return ic.community_rows(_index, index_key=key)


def seed_index_widgets() -> None:
    """On first load, the URL's ``index`` chooses the index (a sample, else a folder path)."""
    if INDEX_KEY in st.session_state:
        return
    wanted = str(st.query_params.get(INDEX_PARAM, "") or "").strip() or default_index_key()
    if wanted in sample_names():
        st.session_state[INDEX_KEY] = wanted
    else:
        st.session_state[INDEX_KEY], st.session_state[FOLDER_KEY] = FOLDER_CHOICE, wanted


def draw_hierarchy(index: Index) -> None:
    st.subheader("Community hierarchy")
    cols = st.columns([2, 2, 2, 4], vertical_alignment="bottom")
    size_by = cols[0].segmented_control("Size by", list(ic.SIZE_CHOICES), key=SIZE_KEY, default="members")
    kind = cols[1].segmented_control("Chart", list(ic.KIND_CHOICES), key=KIND_KEY, default="sunburst")
    depth_options = list(range(1, len(index.levels()) + 1))
    depth = cols[2].selectbox("Levels shown at once", depth_options, index=min(1, len(depth_options) - 1), key=DEPTH_KEY)
    cols[3].caption("Click a community to zoom in; click the centre (or the top bar) to zoom out.")
    fig = ic.hierarchy_figure(index, size_by=size_by or "members", kind=kind or "sunburst", max_depth=depth)
    st.plotly_chart(fig, key="browse_hierarchy", config=PLOTLY_CONFIG)


def draw_levels(index: Index, key: str, signature: int) -> None:
    st.subheader("Levels")
    stats = cached_level_stats(index, key, signature)
    left, right = st.columns([1, 1])
    left.dataframe(pd.DataFrame([row.as_row() for row in stats]), hide_index=True, width="stretch", key="browse_levels_table")
    left.caption(
        "Summary tokens: the community summaries at that level. Map text tokens: what a search at that "
        "level packs into its map batches (summaries, plus claims and source excerpts)."
    )
    right.plotly_chart(ic.level_figure(stats), key="browse_levels_chart", config=PLOTLY_CONFIG)


def draw_table(index: Index, key: str, signature: int) -> None:
    st.subheader("Communities")
    text = st.text_input("Filter communities", key=FILTER_KEY, placeholder="Words in the id, title or summary, e.g. wizard")
    rows = ic.filter_communities(index, cached_community_rows(index, key, signature), text)
    st.caption(f"{len(rows)} of {len(index.communities)} communities. The provenance column opens a community's provenance page.")
    st.dataframe(
        pd.DataFrame(rows, columns=["id", "level", "title", "provenance", "members", "children", "claims", "summary tokens", "summary"]),
        hide_index=True,
        width="stretch",
        height=TABLE_HEIGHT,
        key="browse_communities",
        column_config={
            "summary": st.column_config.TextColumn("summary", width="large"),
            "provenance": st.column_config.LinkColumn("provenance", display_text="open", width="small"),
        },
    )


def draw_graph(index: Index, index_key: str) -> None:
    st.subheader("Entity graph")
    if not index.entities:
        st.caption("This index has no entities, so there is no graph to draw.")
        return
    options = ic.communities_with_entities(index)
    if not options:
        st.caption("No community of this index names an entity.")
        return
    wanted = str(st.query_params.get(COMMUNITY_PARAM, "") or "")
    owner = st.session_state.get(GRAPH_INDEX_KEY)
    if owner not in (None, index_key):  # another index: its community ids mean other communities
        wanted = ""
        st.session_state.pop(GRAPH_KEY, None)
    st.session_state[GRAPH_INDEX_KEY] = index_key
    if st.session_state.get(GRAPH_KEY) not in options:
        st.session_state[GRAPH_KEY] = wanted if wanted in options else options[0]

    def label(community_id: str) -> str:
        community = index.community(community_id)
        return f"{community_id} · level {community.level} · {ic.community_label(community)}"

    community_id = st.selectbox("Community", options, key=GRAPH_KEY, format_func=label)
    st.plotly_chart(ic.entity_graph_figure(index, community_id), key="browse_graph", config=PLOTLY_CONFIG)
    community = index.community(community_id)
    with st.expander("Summary of this community"):
        st.text(community.summary or "(no summary)")


st.title("Index browser")
st.caption("The index itself: how its communities nest, what each level costs, and what is inside a community.")

app = load_settings()
seed_index_widgets()
opened = open_picked_index(app, index_key=INDEX_KEY, folder_key=FOLDER_KEY)
key = opened.source.key
if st.query_params.get(INDEX_PARAM) != key:
    st.query_params[INDEX_PARAM] = key

index = opened.index
signature = folder_signature(opened.source.path)
stats = index.stats()
st.markdown(f"**{escape_markdown(index_display_name(opened.source.path, index))}**")
if index.description:
    st.caption(escape_markdown(index.description))
metric_cols = st.columns(6)
for col, name in zip(metric_cols, ("communities", "claims", "chunks", "documents", "entities", "relationships")):
    col.metric(name.capitalize(), f"{stats[name]:,}")
for warning in index.warnings:
    st.warning(escape_markdown(warning), icon=":material/warning:")

draw_hierarchy(index)
draw_levels(index, key, signature)
draw_table(index, key, signature)
draw_graph(index, key)
