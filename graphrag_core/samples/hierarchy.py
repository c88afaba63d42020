"""Step 4 of a sample build: hierarchical communities by recursive Louvain. The roots are the
Louvain communities of the whole graph (``root_resolution``), and every community larger than
``max_leaf_size`` is split again by Louvain on its own subgraph, down to ``max_levels`` levels;
children are always strictly smaller than their parent and nest inside it. Members are ranked
by PageRank (which needs scipy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx

from .corpus import Article, BuildOptions


@dataclass(slots=True)
class CommunityNode:
    """A community while it is being built: its members, children and place in the tree."""

    members: list[int]
    level: int
    parent: CommunityNode | None = None
    children: list[CommunityNode] = field(default_factory=list)
    id: str = ""


def _louvain(graph: nx.Graph, members: Sequence[int], resolution: float, seed: int) -> list[list[int]]:
    """Louvain communities of the subgraph on ``members``, each sorted, largest first."""
    subgraph = graph.subgraph(sorted(members))
    found = nx.community.louvain_communities(subgraph, weight="weight", resolution=resolution, seed=seed)
    return sorted((sorted(c) for c in found), key=lambda c: (-len(c), c[0]))


def hierarchy(graph: nx.Graph, options: BuildOptions) -> list[CommunityNode]:
    """The root communities, with their children filled in (see the module docstring)."""
    roots = [CommunityNode(members=c, level=0) for c in _louvain(graph, list(graph), options.root_resolution, options.seed)]
    frontier = list(roots)
    while frontier:
        node = frontier.pop(0)
        if len(node.members) <= options.max_leaf_size or node.level + 1 >= options.max_levels:
            continue
        parts = _louvain(graph, node.members, options.split_resolution, options.seed)
        if len(parts) < 2:
            continue
        node.children = [CommunityNode(members=p, level=node.level + 1, parent=node) for p in parts]
        frontier.extend(node.children)
    return roots


def number_communities(roots: list[CommunityNode]) -> list[CommunityNode]:
    """Every community, level by level (roots first), children in their parent's order; ids
    are the decimal position in that order."""
    ordered: list[CommunityNode] = []
    level = roots
    while level:
        ordered.extend(level)
        level = [child for node in level for child in node.children]
    for number, node in enumerate(ordered):
        node.id = str(number)
    return ordered


def path_to_root(node: CommunityNode) -> list[CommunityNode]:
    path = [node]
    while path[-1].parent is not None:
        path.append(path[-1].parent)
    return path


def central_order(graph: nx.Graph, members: Sequence[int], articles: Sequence[Article]) -> list[int]:
    """Members by PageRank within the community's subgraph, highest first; ties by article order.

    Scores are rounded before sorting so that floating-point noise cannot reorder equals.
    """
    subgraph = graph.subgraph(members)
    if subgraph.number_of_edges() == 0:
        return sorted(members)
    scores = nx.pagerank(subgraph, weight="weight")
    return sorted(members, key=lambda m: (-round(scores[m], 9), m))


def max_rank(ordered: Sequence[CommunityNode], pagerank: dict[int, float]) -> float:
    return max(sum(pagerank.get(m, 0.0) for m in node.members) for node in ordered)


__all__ = ["CommunityNode", "central_order", "hierarchy", "max_rank", "number_communities", "path_to_root"]
