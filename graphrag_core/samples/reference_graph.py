"""Steps 2 and 3 of a sample build: article titles' cross-references -> relationships, each
citing the chunks that hold the reference, and an undirected networkx graph (weight = number of
directions in which the pair refer); then every article outside the largest connected piece
joined to its most similar article of it by wording (TF-IDF cosine), so community detection does
not leave hundreds of one-article roots. Those links are recorded as relationships that say so.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

import networkx as nx

from ..models import Relationship, SourceChunk
from .corpus import Article, document_id
from .text import REFERENCE_RE, Language, strip_reference_braces, word_tokens

SIMILARITY_LINK_WEIGHT = 0.5


def _title_key(text: str) -> str:
    return " ".join(text.split()).casefold()


def reference_chunks(
    articles: Sequence[Article], chunks: Sequence[SourceChunk], by_title: dict[str, int]
) -> dict[tuple[int, int], tuple[str, ...]]:
    """For each (source, target) pair of article numbers, the chunks of the source whose text
    holds a ``{reference}`` to the target (directly or through one of the source's aliases), in
    chunk order: the chunks a relationship was extracted from."""
    numbers = {document_id(n): n for n in range(len(articles))}
    found: dict[tuple[int, int], list[str]] = defaultdict(list)
    for chunk in chunks:
        source = numbers[chunk.document_id or ""]
        aliases = {_title_key(raw): title for raw, title in articles[source].aliases}
        for match in REFERENCE_RE.finditer(chunk.text):
            key = _title_key(match.group(1))
            target = by_title.get(_title_key(aliases.get(key, match.group(1))))
            if target is not None and target != source and chunk.id not in found[(source, target)]:
                found[(source, target)].append(chunk.id)
    return {pair: tuple(ids) for pair, ids in found.items()}


def reference_graph(
    articles: Sequence[Article], by_title: dict[str, int], reference_chunks: dict[tuple[int, int], tuple[str, ...]]
) -> tuple[nx.Graph, list[Relationship], int]:
    """The undirected reference graph on article numbers, the directed relationships behind it
    (source article names target; descriptions left empty, the pair says it all; each cites the
    source's chunks that hold the reference), and the number of links naming no article.
    Self-references are ignored."""
    graph = nx.Graph()
    graph.add_nodes_from(range(len(articles)))
    pairs: dict[tuple[int, int], None] = {}
    unresolved = 0
    for number, article in enumerate(articles):
        for link in article.links:
            target = by_title.get(_title_key(link))
            if target is None:
                unresolved += 1
            elif target != number:
                pairs.setdefault((number, target), None)
    for source, target in pairs:
        if graph.has_edge(source, target):
            graph[source][target]["weight"] += 1.0
        else:
            graph.add_edge(source, target, weight=1.0)
    relationships = [
        Relationship(
            id=f"r{n + 1:05d}",
            source=articles[s].title,
            target=articles[t].title,
            description="",
            weight=1.0,
            chunk_ids=reference_chunks.get((s, t), ()),
        )
        for n, (s, t) in enumerate(sorted(pairs))
    ]
    return graph, relationships, unresolved


def join_stray_articles(graph: nx.Graph, articles: Sequence[Article], language: Language) -> list[Relationship]:
    """Link every article outside the largest connected component to the most similar article
    inside it (TF-IDF cosine over words, or character pairs for Chinese), so that the graph is
    connected. Ties go to the earlier article; an article sharing no word gets no link."""
    components = sorted(nx.connected_components(graph), key=lambda c: (-len(c), min(c)))
    if len(components) <= 1:
        return []
    main = components[0]
    vectors = _tfidf([" ".join(p.text for p in a.paragraphs) + " " + a.title for a in articles], language)
    postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for number in sorted(main):
        for word, value in vectors[number].items():
            postings[word].append((number, value))
    links: list[Relationship] = []
    for number in sorted(set(graph) - main):
        scores: Counter[int] = Counter()
        for word, value in vectors[number].items():
            for other, weight in postings.get(word, ()):
                scores[other] += value * weight
        if not scores:
            continue
        best, score = min(scores.items(), key=lambda item: (-item[1], item[0]))
        graph.add_edge(number, best, weight=SIMILARITY_LINK_WEIGHT)
        links.append(
            Relationship(
                id=f"s{len(links) + 1:05d}",
                source=articles[number].title,
                target=articles[best].title,
                description=(
                    f"Similar wording (cosine {score:.2f}); no cross-reference in the source. "
                    "Added so that community detection can place this article."
                ),
                weight=SIMILARITY_LINK_WEIGHT,
            )
        )
    return links


def _tfidf(texts: Sequence[str], language: Language) -> list[dict[str, float]]:
    counts = [Counter(word_tokens(strip_reference_braces(text), language)) for text in texts]
    document_frequency = Counter(word for count in counts for word in count)
    total = len(texts)
    vectors: list[dict[str, float]] = []
    for count in counts:
        weights = {w: (1.0 + math.log(n)) * math.log(total / document_frequency[w]) for w, n in count.items()}
        norm = math.sqrt(sum(v * v for v in weights.values())) or 1.0
        vectors.append({w: v / norm for w, v in sorted(weights.items()) if v > 0})
    return vectors


__all__ = ["SIMILARITY_LINK_WEIGHT", "join_stray_articles", "reference_chunks", "reference_graph"]
