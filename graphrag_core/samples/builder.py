"""Build a GraphRAG index from a corpus of cross-referenced articles, with no model.

The pipeline, each step deterministic (fixed seeds, sorted iteration, no clock), each in its
module:

1. articles -> documents, and source chunks of at most ``max_chunk_chars`` characters, split at
   paragraph, then sentence, then word boundaries; every chunk starts with its article's
   heading line so it reads on its own (:mod:`.chunking`);
2. article titles -> entities, each citing its article's chunks (every chunk opens with the
   title); cross-references between articles -> relationships, each citing the chunks that
   hold the reference, and an undirected networkx graph (weight = number of directions in
   which the pair refer) (:mod:`.reference_graph`);
3. articles outside the largest connected piece are joined to their most similar article of
   it by wording (TF-IDF cosine), so community detection does not leave hundreds of
   one-article roots; those links are recorded as relationships that say so (:mod:`.reference_graph`);
4. hierarchical communities by recursive Louvain: the roots are the Louvain communities of the
   whole graph (``root_resolution``), and every community larger than ``max_leaf_size`` is split
   again by Louvain on its own subgraph, down to ``max_levels`` levels; children are always
   strictly smaller than their parent and nest inside it (:mod:`.hierarchy`);
5. claims: one definitional statement per sense of each article (up to ``max_claims_per_article``),
   citing the chunk that holds it, attached to the article's leaf community (:mod:`.definitions`);
6. titles and summaries, extractive by default (see :mod:`.summarize`) or written by a model.

The articles and options are :mod:`.corpus`'s (Article, Paragraph, BuildOptions, SampleBuildError
and DEFAULT_SEED are importable from here too).
"""

from __future__ import annotations

import importlib.util
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx

from ..llm.base import ChatModel
from ..models import Community, Document, Entity, Index, SourceChunk
from .chunking import chunk_articles
from .corpus import DEFAULT_SEED, Article, BuildOptions, Paragraph, SampleBuildError, document_id, entity_id
from .definitions import community_claims, definition
from .hierarchy import CommunityNode, central_order, hierarchy, max_rank, number_communities, path_to_root
from .reference_graph import join_stray_articles, reference_chunks, reference_graph
from .summarize import CommunityDigest, MemberDigest, Summary, extractive_summary, model_summaries
from .text import first_sentences

ENTITY_DESCRIPTION_MAX_CHARS = 200

SCIPY_HINT = "pip install 'graphrag-global-explorer[samples]'"


def require_scipy() -> None:
    """The builder ranks members with networkx's PageRank, which needs scipy (an optional
    dependency: the app and the command line do not); a clear error when it is missing."""
    if importlib.util.find_spec("scipy") is None:
        raise SampleBuildError(f"Building a sample needs scipy, which is not installed: {SCIPY_HINT}.")


@dataclass(frozen=True, slots=True)
class BuildReport:
    """What a build produced, for the command line and the README."""

    articles: int
    unresolved_links: int
    similarity_links: int
    levels: dict[int, int]
    leaves: int


async def build_index(
    articles: Sequence[Article], options: BuildOptions, *, model: ChatModel | None = None
) -> tuple[Index, BuildReport]:
    """The index of ``articles`` and a report of the build.

    Articles keep their order for document, chunk and entity ids; titles must be unique
    case-insensitively. ``model`` is required when ``options.summaries == "model"`` and unused
    otherwise.
    """
    by_title = _checked_titles(articles, options, model)
    documents = [Document(id=document_id(n), title=a.title) for n, a in enumerate(articles)]
    chunks, paragraph_chunks = chunk_articles(articles, options)  # step 1

    graph, relationships, unresolved = reference_graph(articles, by_title, reference_chunks(articles, chunks, by_title))  # step 2
    similarity = join_stray_articles(graph, articles, options.language)  # step 3
    relationships.extend(similarity)

    ordered = _community_tree(graph, options)  # step 4
    centrality = {id(node): central_order(graph, node.members, articles) for node in ordered}
    definitions = [definition(article, options.language) for article in articles]
    claims = community_claims(articles, ordered, centrality, paragraph_chunks, options)  # step 5

    summaries = await _summaries(ordered, _digests(ordered, articles, centrality, definitions), options, model)  # step 6
    index = Index.from_records(
        communities=_communities(ordered, graph, centrality, summaries),
        claims=claims,
        chunks=chunks,
        documents=documents,
        entities=_entities(articles, ordered, chunks, definitions, options),
        relationships=relationships,
        name=options.name,
        description=options.description,
    )
    report = BuildReport(
        articles=len(articles),
        unresolved_links=unresolved,
        similarity_links=len(similarity),
        levels=index.levels(),
        leaves=len(index.leaves),
    )
    return index, report


def _checked_titles(articles: Sequence[Article], options: BuildOptions, model: ChatModel | None) -> dict[str, int]:
    """Each article's number by its case-folded title, once the corpus and options are known to
    be buildable (articles, unique titles, a model for model-written summaries, scipy)."""
    if options.summaries == "model" and model is None:
        raise SampleBuildError("Model-written summaries need a chat model; pass one or use extractive summaries.")
    if not articles:
        raise SampleBuildError("The corpus has no articles.")
    require_scipy()
    by_title: dict[str, int] = {}
    for number, article in enumerate(articles):
        key = article.title.casefold()
        if key in by_title:
            raise SampleBuildError(f"Two articles share the title {article.title!r} (ignoring case).")
        by_title[key] = number
    return by_title


def _community_tree(graph: nx.Graph, options: BuildOptions) -> list[CommunityNode]:
    """Every community of the hierarchy, numbered, once it has at least ``min_levels`` levels."""
    ordered = number_communities(hierarchy(graph, options))
    depth = max(node.level for node in ordered) + 1
    if depth < options.min_levels:
        raise SampleBuildError(
            f"Community detection gave {depth} level(s), fewer than the {options.min_levels} asked for; "
            "lower max_leaf_size or add cross-references."
        )
    return ordered


def _digests(
    ordered: Sequence[CommunityNode], articles: Sequence[Article], centrality: dict[int, list[int]], definitions: Sequence[str]
) -> dict[int, CommunityDigest]:
    """What each community's title and summary are written from: its members, most central first."""
    return {
        id(node): CommunityDigest(
            size=len(node.members),
            level=node.level,
            members=tuple(
                MemberDigest(title=articles[m].title, definition=definitions[m]) for m in centrality[id(node)]
            ),
            child_count=len(node.children),
        )
        for node in ordered
    }


def _communities(
    ordered: Sequence[CommunityNode], graph: nx.Graph, centrality: dict[int, list[int]], summaries: dict[int, Summary]
) -> list[Community]:
    """The index's communities, each ranked by its members' PageRank (the top one at 10)."""
    pagerank = nx.pagerank(graph, weight="weight") if graph.number_of_edges() else {}
    top_rank = max(1e-12, max_rank(ordered, pagerank))
    return [
        Community(
            id=node.id,
            level=node.level,
            parent_id=node.parent.id if node.parent else None,
            title=summaries[id(node)].title,
            summary=summaries[id(node)].summary,
            rank=round(10.0 * sum(pagerank.get(m, 0.0) for m in node.members) / top_rank, 4),
            size=len(node.members),
            entity_ids=tuple(entity_id(m) for m in centrality[id(node)]),
        )
        for node in ordered
    ]


def _entities(
    articles: Sequence[Article], ordered: Sequence[CommunityNode], chunks: Sequence[SourceChunk], definitions: Sequence[str], options: BuildOptions
) -> list[Entity]:
    """One entity per article: its definition, its communities from the root down, its chunks."""
    leaf_of: dict[int, CommunityNode] = {}
    for node in ordered:
        if not node.children:
            for member in node.members:
                leaf_of[member] = node
    chunk_ids_of: dict[str | None, tuple[str, ...]] = defaultdict(tuple)
    for chunk in chunks:  # an entity is its article's title: every chunk of the article holds it
        chunk_ids_of[chunk.document_id] += (chunk.id,)
    return [
        Entity(
            id=entity_id(n),
            title=article.title,
            type=article.kind,
            description=first_sentences(definitions[n], options.language, max_chars=ENTITY_DESCRIPTION_MAX_CHARS),
            community_ids=tuple(c.id for c in reversed(path_to_root(leaf_of[n]))),
            chunk_ids=chunk_ids_of[document_id(n)],
        )
        for n, article in enumerate(articles)
    ]


async def _summaries(
    ordered: Sequence[CommunityNode],
    digests: dict[int, CommunityDigest],
    options: BuildOptions,
    model: ChatModel | None,
) -> dict[int, Summary]:
    """A title and summary per community, leaves first so that parents can name their children."""
    summaries: dict[int, Summary] = {}
    for level in sorted({node.level for node in ordered}, reverse=True):
        nodes = [node for node in ordered if node.level == level]
        filled = [
            digests[id(node)].with_children(tuple(summaries[id(child)].title for child in node.children))
            for node in nodes
        ]
        if options.summaries == "model" and model is not None:
            written = await model_summaries(
                [(node.id, digest) for node, digest in zip(nodes, filled, strict=True)],
                model,
                language=options.language,
                concurrency=options.summary_concurrency,
            )
        else:
            written = [extractive_summary(digest, options.language) for digest in filled]
        for node, summary in zip(nodes, written, strict=True):
            summaries[id(node)] = summary
    return summaries


__all__ = [
    "ENTITY_DESCRIPTION_MAX_CHARS",
    "SCIPY_HINT",
    "BuildReport",
    "build_index",
    "require_scipy",
    # defined in corpus, importable from here as before
    "DEFAULT_SEED",
    "Article",
    "BuildOptions",
    "Paragraph",
    "SampleBuildError",
]
