"""The index itself, drawn: the community hierarchy, counts and tokens per level, the community
table and a community's entity graph. Pure functions of an :class:`Index` (no streamlit).

Index text is untrusted. It reaches a figure only through :func:`plot_text` (Plotly interprets
``<b>``, ``<a href>`` and friends in labels and hover text), and the table helpers return plain
values for ``st.dataframe``, which shows text as text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from graphrag_core.levels import level_label
from graphrag_core.models import Community, Index
from graphrag_core.statistics import LevelStats, level_statistics
from graphrag_core.tokens import estimate_tokens

from ..text import hover_paragraph, one_line, plot_text
from ..urls import provenance_url

if TYPE_CHECKING:
    import networkx as nx

SizeBy = Literal["members", "tokens"]
HierarchyKind = Literal["sunburst", "treemap"]
SIZE_CHOICES: tuple[SizeBy, ...] = ("members", "tokens")
KIND_CHOICES: tuple[HierarchyKind, ...] = ("sunburst", "treemap")

CHART_HEIGHT = 360
HIERARCHY_HEIGHT = 620
GRAPH_HEIGHT = 620
GRAPH_LAYOUT_SEED = 7
"""The spring layout's seed: the same community always draws the same picture."""
GRAPH_MAX_NODES = 80
"""A bigger community shows its best-connected entities only (the title says how many)."""
GRAPH_LABELLED_NODES = 20
SUMMARY_EXCERPT_CHARS = 160
LABEL_CHARS = 40


def community_label(community: Community) -> str:
    return one_line(community.title or f"Community {community.id}", LABEL_CHARS)


# -- sizes ----------------------------------------------------------------------------------


def own_members(index: Index, community: Community, entity_counts: dict[str, int] | None = None) -> int:
    """A community's member count: its ``size``, else its entity ids, else the entities that name
    it; at least 1 so every community has an area."""
    if community.size:
        return community.size
    if community.entity_ids:
        return len(community.entity_ids)
    if entity_counts is not None:
        return max(entity_counts.get(community.id, 0), 1)
    return 1


def _entity_counts(index: Index) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entity in index.entities:
        for community_id in entity.community_ids:
            counts[community_id] = counts.get(community_id, 0) + 1
    return counts


def hierarchy_values(index: Index, size_by: SizeBy = "members") -> dict[str, int]:
    """Each community's area, consistent for ``branchvalues="total"`` (a parent is at least the
    sum of its children).

    ``members``: the larger of the community's own member count and its children's sum.
    ``tokens``: the estimated tokens of the community's own summary plus its children's.
    """
    if size_by not in SIZE_CHOICES:
        raise ValueError(f"size_by must be one of {', '.join(SIZE_CHOICES)}, not {size_by!r}.")
    counts = _entity_counts(index) if size_by == "members" else None
    values: dict[str, int] = {}
    # Deepest first, so every child is done before its parent.
    for community in sorted(index.communities, key=lambda c: -c.level):
        children = sum(values[child.id] for child in index.children(community.id))
        if size_by == "members":
            values[community.id] = max(own_members(index, community, counts), children)
        else:
            values[community.id] = max(estimate_tokens(community.summary), 1 if not children else 0) + children
    return values


def hierarchy_figure(index: Index, *, size_by: SizeBy = "members", kind: HierarchyKind = "sunburst", max_depth: int | None = None) -> go.Figure:
    """The community hierarchy as a sunburst or treemap, areas sized by members or tokens.

    Roots sit in the centre (sunburst) or at the top (treemap); clicking a community zooms in."""
    if kind not in KIND_CHOICES:
        raise ValueError(f"kind must be one of {', '.join(KIND_CHOICES)}, not {kind!r}.")
    values = hierarchy_values(index, size_by)
    communities = index.communities
    ids = [c.id for c in communities]
    parents = [c.parent_id or "" for c in communities]
    labels = [plot_text(community_label(c)) for c in communities]
    custom = [[plot_text(c.id), c.level, len(index.children(c.id)), hover_paragraph(c.summary, limit=200)] for c in communities]
    unit = "members" if size_by == "members" else "tokens (summaries, with those below)"
    hover = (
        "<b>%{label}</b><br>id %{customdata[0]} · level %{customdata[1]} · %{customdata[2]} children"
        "<br>%{value:,} " + unit + "<br>%{customdata[3]}<extra></extra>"
    )
    common = dict(
        ids=ids,
        labels=labels,
        parents=parents,
        values=[values[c.id] for c in communities],
        branchvalues="total",
        customdata=custom,
        hovertemplate=hover,
        maxdepth=max_depth if max_depth is not None else -1,
    )
    trace = go.Sunburst(**common, insidetextorientation="radial") if kind == "sunburst" else go.Treemap(**common, root={"color": "#f4f5f8"})
    fig = go.Figure(trace)
    roots = sum(1 for c in communities if c.parent_id is None)
    fig.update_layout(
        title={"text": f"{len(communities)} communities in {len(index.levels())} levels ({roots} roots), sized by {size_by}", "font": {"size": 14}},
        height=HIERARCHY_HEIGHT,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return fig


# -- levels ---------------------------------------------------------------------------------


def level_stats(index: Index) -> list[LevelStats]:
    """One row per level (in order), then the ``leaf`` choice (the engine's
    :func:`~graphrag_core.statistics.level_statistics`, heuristic tokens)."""
    return level_statistics(index)


def level_figure(stats: Sequence[LevelStats]) -> go.Figure:
    """Communities per level (left) and their tokens per level (right)."""
    names = [level_label(s.level) for s in stats]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Communities", "Tokens a search would map"), horizontal_spacing=0.12)
    fig.add_trace(go.Bar(name="communities", x=names, y=[s.communities for s in stats], marker={"color": "#9aa0aa"}), row=1, col=1)
    fig.add_trace(go.Bar(name="with summary", x=names, y=[s.summaries for s in stats], marker={"color": "#4c8bf5"}), row=1, col=1)
    fig.add_trace(go.Bar(name="summary tokens", x=names, y=[s.summary_tokens for s in stats], marker={"color": "#8e7cc3"}), row=1, col=2)
    fig.add_trace(
        go.Bar(name="map text tokens (with claims, sources)", x=names, y=[s.map_text_tokens for s in stats], marker={"color": "#f0a030"}),
        row=1,
        col=2,
    )
    fig.update_layout(
        barmode="group",
        height=CHART_HEIGHT,
        margin={"l": 50, "r": 20, "t": 60, "b": 40},
        legend={"orientation": "h", "yanchor": "top", "y": -0.12, "xanchor": "left", "x": 0},
    )
    fig.update_yaxes(rangemode="tozero")
    return fig


# -- the community table ----------------------------------------------------------------------


def community_rows(index: Index, *, index_key: str) -> list[dict[str, object]]:
    """One row per community for a searchable table, with a link to its provenance page."""
    counts = _entity_counts(index)
    rows = []
    for community in index.communities:
        rows.append(
            {
                "id": community.id,
                "level": community.level,
                "title": community.title,
                "members": own_members(index, community, counts),
                "children": len(index.children(community.id)),
                "claims": len(index.leaf_claims(community.id)),
                "summary tokens": estimate_tokens(community.summary),
                "summary": one_line(community.summary, SUMMARY_EXCERPT_CHARS),
                "provenance": provenance_url(index_key, community.id),
            }
        )
    return rows


def filter_communities(index: Index, rows: Sequence[dict[str, object]], text: str) -> list[dict[str, object]]:
    """The rows whose community's id, title or full summary contains every word of ``text``
    (case-insensitive); all rows for blank text."""
    words = text.casefold().split()
    if not words:
        return list(rows)
    kept = []
    for row in rows:
        community = index.community(str(row["id"]))
        haystack = f"{community.id}\n{community.title}\n{community.summary}".casefold()
        if all(word in haystack for word in words):
            kept.append(row)
    return kept


# -- a community's entity graph ----------------------------------------------------------------


def community_entities(index: Index, community_id: str) -> list[str]:
    """The ids of the entities in a community (named by the community, or naming it), in index order."""
    community = index.community(community_id)
    named = set(community.entity_ids)
    return [e.id for e in index.entities if e.id in named or community.id in e.community_ids]


def entity_graph(index: Index, community_id: str) -> nx.Graph:
    """The community's entities as nodes (keyed by entity id, with ``title``, ``type`` and
    ``description``) and the relationships between two of them as edges."""
    import networkx as nx  # only a community's entity graph needs it: Explore opens without loading it

    wanted = set(community_entities(index, community_id))
    graph = nx.Graph()
    by_title: dict[str, str] = {}
    for entity in index.entities:
        if entity.id in wanted:
            graph.add_node(entity.id, title=entity.title, type=entity.type or "", description=entity.description)
            by_title.setdefault(entity.title, entity.id)
    for rel in index.relationships:
        source, target = by_title.get(rel.source), by_title.get(rel.target)
        if source is not None and target is not None and source != target:
            graph.add_edge(source, target, description=rel.description, weight=rel.weight or 1.0)
    return graph


def _biggest(graph: nx.Graph, limit: int) -> nx.Graph:
    if graph.number_of_nodes() <= limit:
        return graph
    keep = sorted(graph.nodes, key=lambda n: (-graph.degree(n), str(n)))[:limit]
    return graph.subgraph(keep).copy()


def node_size(degree: int) -> float:
    """Marker size by degree: 8 for an isolated entity, growing with the square root."""
    return 8.0 + 5.0 * math.sqrt(degree)


def entity_graph_figure(index: Index, community_id: str, *, max_nodes: int = GRAPH_MAX_NODES, seed: int = GRAPH_LAYOUT_SEED) -> go.Figure:
    """The community's entity graph in a spring layout (fixed seed): nodes sized and coloured by
    degree, the best-connected ones labelled, each entity's description in its hover text."""
    full = entity_graph(index, community_id)
    graph = _biggest(full, max_nodes)
    community = index.community(community_id)
    fig = go.Figure()
    if graph.number_of_nodes() == 0:
        fig.add_annotation(text="No entities in this community.", showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    else:
        import networkx as nx

        positions = nx.spring_layout(graph, seed=seed, k=1.5 / math.sqrt(graph.number_of_nodes()))
        edge_x: list[float | None] = []
        edge_y: list[float | None] = []
        for a, b in graph.edges:
            edge_x += [float(positions[a][0]), float(positions[b][0]), None]
            edge_y += [float(positions[a][1]), float(positions[b][1]), None]
        fig.add_trace(go.Scatter(x=edge_x, y=edge_y, mode="lines", line={"width": 0.7, "color": "#b0b5c0"}, hoverinfo="skip", name="relationships"))
        nodes = list(graph.nodes)
        degrees = [graph.degree(n) for n in nodes]
        labelled = set(sorted(nodes, key=lambda n: (-graph.degree(n), str(n)))[:GRAPH_LABELLED_NODES])
        data = graph.nodes
        fig.add_trace(
            go.Scatter(
                x=[float(positions[n][0]) for n in nodes],
                y=[float(positions[n][1]) for n in nodes],
                mode="markers+text",
                text=[plot_text(one_line(data[n]["title"], 24)) if n in labelled else "" for n in nodes],
                textposition="top center",
                textfont={"size": 11, "color": "#222"},
                marker={
                    "size": [node_size(d) for d in degrees],
                    "color": degrees,
                    "colorscale": "Viridis",
                    "showscale": True,
                    "colorbar": {"title": {"text": "degree"}, "thickness": 12},
                    "line": {"width": 0.5, "color": "#333"},
                },
                customdata=[
                    [plot_text(data[n]["title"]), plot_text(data[n]["type"] or "-"), graph.degree(n), hover_paragraph(data[n]["description"])]
                    for n in nodes
                ],
                hovertemplate="<b>%{customdata[0]}</b> (%{customdata[1]})<br>degree %{customdata[2]}<br>%{customdata[3]}<extra></extra>",
                name="entities",
            )
        )
    shown = graph.number_of_nodes()
    total = full.number_of_nodes()
    extent = f"{shown} entities, {graph.number_of_edges()} relationships"
    if shown < total:
        extent = f"the {shown} best-connected of {total} entities, {graph.number_of_edges()} relationships"
    fig.update_layout(
        title={"text": f"Entity graph of {plot_text(community_label(community))}: {extent}", "font": {"size": 14}},
        height=GRAPH_HEIGHT,
        showlegend=False,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        xaxis={"visible": False},
        yaxis={"visible": False},
        plot_bgcolor="white",
    )
    return fig


def communities_with_entities(index: Index) -> list[str]:
    """The ids of communities that have at least one entity (the graph picker's options)."""
    has: set[str] = set()
    for entity in index.entities:
        has.update(entity.community_ids)
    return [c.id for c in index.communities if c.id in has or c.entity_ids]


__all__ = [
    "KIND_CHOICES",
    "LevelStats",
    "SIZE_CHOICES",
    "communities_with_entities",
    "community_entities",
    "community_rows",
    "entity_graph",
    "entity_graph_figure",
    "filter_communities",
    "hierarchy_figure",
    "hierarchy_values",
    "level_figure",
    "level_stats",
    "plot_text",
]
