"""The Index browser's figures and tables, on indexes built in code."""

import plotly.graph_objects as go
import pytest

from graphrag_app.index_browser import charts as ic
from graphrag_core import Community, Entity, Index, Relationship
from graphrag_core.tokens import estimate_tokens
from tests.factories import small_index


def graph_index() -> Index:
    """Root r -> {a, b}; entities in a (x, y, z: a triangle plus a tail to w) and b (w)."""
    communities = [
        Community(id="r", level=0, title="Root", summary="All of it."),
        Community(id="a", level=1, parent_id="r", title="<b>Alpha</b>", summary="Alpha things.", size=3),
        Community(id="b", level=1, parent_id="r", title="Beta", summary="Beta things, and wizards."),
    ]
    entities = [
        Entity(id="x", title="X", type="term", description="<script>alert(1)</script> an X", community_ids=("a", "r")),
        Entity(id="y", title="Y", description="a Y", community_ids=("a", "r")),
        Entity(id="z", title="Z", description="a Z", community_ids=("a", "r")),
        Entity(id="w", title="W", description="a W", community_ids=("b", "r")),
    ]
    relationships = [
        Relationship(id="1", source="X", target="Y"),
        Relationship(id="2", source="Y", target="Z"),
        Relationship(id="3", source="Z", target="X"),
        Relationship(id="4", source="Z", target="W"),
        Relationship(id="5", source="X", target="Nobody"),
    ]
    return Index(communities=communities, entities=entities, relationships=relationships, name="graph")


def test_member_values_are_consistent_totals():
    index = graph_index()
    values = ic.hierarchy_values(index, "members")
    assert values == {"a": 3, "b": 1, "r": 4}
    small = small_index()
    values = ic.hierarchy_values(small, "members")
    for community in small.communities:
        children = small.children(community.id)
        if children:
            assert values[community.id] >= sum(values[c.id] for c in children)


def test_token_values_add_each_summary_to_those_below():
    index = small_index()
    values = ic.hierarchy_values(index, "tokens")
    assert values["3"] == estimate_tokens(index.community("3").summary)
    assert values["1"] == estimate_tokens(index.community("1").summary) + values["3"] + values["4"]
    assert values["6"] == 1  # a blank summary still gets an area
    with pytest.raises(ValueError, match="size_by"):
        ic.hierarchy_values(index, "pages")


@pytest.mark.parametrize("kind", ["sunburst", "treemap"])
@pytest.mark.parametrize("size_by", ["members", "tokens"])
def test_hierarchy_figure(kind, size_by):
    index = small_index()
    fig = ic.hierarchy_figure(index, size_by=size_by, kind=kind)
    assert isinstance(fig, go.Figure) and fig.data[0].type == kind
    trace = fig.data[0]
    assert list(trace.ids) == [c.id for c in index.communities]
    assert list(trace.parents) == [c.parent_id or "" for c in index.communities]
    assert trace.branchvalues == "total"


def test_hierarchy_labels_are_escaped():
    fig = ic.hierarchy_figure(graph_index())
    assert "&lt;b&gt;Alpha&lt;/b&gt;" in fig.data[0].labels
    assert not any("<b>Alpha" in label for label in fig.data[0].labels)


def test_level_stats_and_figure():
    index = small_index()
    stats = ic.level_stats(index)
    assert [s.level for s in stats] == [0, 1, 2, "leaf"]
    assert [s.communities for s in stats] == [1, 2, 4, 4]
    assert [s.summaries for s in stats] == [1, 2, 3, 3]  # community 6's summary is blank
    leaf = stats[-1]
    assert leaf.map_text_tokens == sum(estimate_tokens(index.map_text(c.id)) for c in index.select_communities("leaf"))
    assert leaf.map_text_tokens > leaf.summary_tokens
    fig = ic.level_figure(stats)
    assert len(fig.data) == 4 and list(fig.data[0].x) == ["level 0", "level 1", "level 2", "leaf"]


def test_community_rows_link_to_provenance_and_filter():
    index = small_index()
    rows = ic.community_rows(index, index_key="my index")
    assert len(rows) == len(index.communities)
    row = next(r for r in rows if r["id"] == "4")
    assert row["provenance"] == "provenance?index=my+index&community=4"
    assert row["claims"] == 1 and row["level"] == 2
    assert [r["id"] for r in ic.filter_communities(index, rows, "WIZARD")] == ["1", "3"]
    assert [r["id"] for r in ic.filter_communities(index, rows, "hackers people")] == ["1"]
    assert ic.filter_communities(index, rows, "  ") == rows


def test_entity_graph_nodes_and_edges():
    index = graph_index()
    graph = ic.entity_graph(index, "a")
    assert set(graph.nodes) == {"x", "y", "z"}
    assert graph.number_of_edges() == 3  # Z-W leaves the community; "Nobody" is no entity
    assert ic.entity_graph(index, "r").number_of_edges() == 4
    assert ic.communities_with_entities(index) == ["r", "a", "b"]


def test_entity_graph_figure_sizes_by_degree_and_escapes_hover():
    index = graph_index()
    fig = ic.entity_graph_figure(index, "r")
    edges, nodes = fig.data
    assert edges.mode == "lines" and len(nodes.x) == 4
    degrees = {row[0]: row[2] for row in nodes.customdata}
    assert degrees == {"X": 2, "Y": 2, "Z": 3, "W": 1}
    sizes = dict(zip((row[0] for row in nodes.customdata), nodes.marker.size))
    assert sizes["Z"] > sizes["X"] > sizes["W"]
    hover = " ".join(row[3] for row in nodes.customdata)
    assert "<script>" not in hover and "&lt;script&gt;" in hover


def test_entity_graph_layout_is_deterministic_and_capped():
    index = graph_index()
    first, second = ic.entity_graph_figure(index, "r"), ic.entity_graph_figure(index, "r")
    assert list(first.data[1].x) == list(second.data[1].x)
    capped = ic.entity_graph_figure(index, "r", max_nodes=2)
    assert len(capped.data[1].x) == 2
    assert "the 2 best-connected of 4 entities" in capped.layout.title.text


def test_entity_graph_of_a_community_without_entities():
    fig = ic.entity_graph_figure(small_index(), "3")
    assert fig.data == () and "No entities" in fig.layout.annotations[0].text
