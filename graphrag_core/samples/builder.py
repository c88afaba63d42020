"""Build a GraphRAG index from a corpus of cross-referenced articles, with no model.

The pipeline, each step deterministic (fixed seeds, sorted iteration, no clock):

1. articles -> documents, and source chunks of at most ``max_chunk_chars`` characters, split at
   paragraph, then sentence, then word boundaries; every chunk starts with its article's
   heading line so it reads on its own;
2. article titles -> entities, each citing its article's chunks (every chunk opens with the
   title); cross-references between articles -> relationships, each citing the chunks that
   hold the reference, and an undirected networkx graph (weight = number of directions in
   which the pair refer);
3. articles outside the largest connected piece are joined to their most similar article of
   it by wording (TF-IDF cosine), so community detection does not leave hundreds of
   one-article roots; those links are recorded as relationships that say so;
4. hierarchical communities by recursive Louvain: the roots are the Louvain communities of the
   whole graph (``root_resolution``), and every community larger than ``max_leaf_size`` is split
   again by Louvain on its own subgraph, down to ``max_levels`` levels; children are always
   strictly smaller than their parent and nest inside it;
5. claims: one definitional statement per sense of each article (up to ``max_claims_per_article``),
   citing the chunk that holds it, attached to the article's leaf community;
6. titles and summaries, extractive by default (see :mod:`.summarize`) or written by a model.

Why this module is long: the six steps share the build's options and its seeded order, and a
sample must rebuild byte for byte; one module keeps the pipeline readable top to bottom.
"""

from __future__ import annotations

import importlib.util

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import networkx as nx

from ..llm.base import ChatModel
from ..models import Claim, Community, Document, Entity, Index, Relationship, SourceChunk
from .summarize import CommunityDigest, MemberDigest, Summary, extractive_summary, model_summaries
from .text import REFERENCE_RE, Language, first_sentences, split_sentences, strip_reference_braces, word_tokens

SummaryMode = Literal["extractive", "model"]

DEFAULT_SEED = 42
DEFAULT_MAX_CHUNK_CHARS = 1500
DEFAULT_MAX_LEAF_SIZE = 20
DEFAULT_MAX_LEVELS = 4
DEFAULT_ROOT_RESOLUTION = 0.5
DEFAULT_SPLIT_RESOLUTION = 1.0
DEFAULT_MAX_CLAIMS_PER_ARTICLE = 4
CLAIM_MAX_CHARS = 400
ENTITY_DESCRIPTION_MAX_CHARS = 200
SIMILARITY_LINK_WEIGHT = 0.5


class SampleBuildError(ValueError):
    """The corpus or the options cannot give an index with the promised shape."""


SCIPY_HINT = "pip install 'graphrag-global-explorer[samples]'"


def require_scipy() -> None:
    """The builder ranks members with networkx's PageRank, which needs scipy (an optional
    dependency: the app and the command line do not); a clear error when it is missing."""
    if importlib.util.find_spec("scipy") is None:
        raise SampleBuildError(f"Building a sample needs scipy, which is not installed: {SCIPY_HINT}.")


@dataclass(frozen=True, slots=True)
class Paragraph:
    """A paragraph of an article; ``sense`` is the numbered meaning it belongs to (from 1)."""

    text: str
    sense: int = 1
    opens_sense: bool = False


@dataclass(frozen=True, slots=True)
class Article:
    """One source article: it becomes a document, its chunks, an entity and its claims.

    ``links`` are the titles this article cross-references (matched case-insensitively to
    other articles' titles; unknown ones are ignored). ``heading`` opens every chunk.
    ``aliases`` name, for a ``{reference}`` in the text that is not itself a title (a redirect),
    the title it stands for, so the reference's chunk can be found.
    """

    title: str
    heading: str
    paragraphs: tuple[Paragraph, ...]
    links: tuple[str, ...] = ()
    kind: str = "term"
    aliases: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """Every knob of a sample build, with its default in one place."""

    name: str
    description: str = ""
    language: Language = "en"
    seed: int = DEFAULT_SEED
    max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS
    max_leaf_size: int = DEFAULT_MAX_LEAF_SIZE
    max_levels: int = DEFAULT_MAX_LEVELS
    min_levels: int = 2
    root_resolution: float = DEFAULT_ROOT_RESOLUTION
    split_resolution: float = DEFAULT_SPLIT_RESOLUTION
    max_claims_per_article: int = DEFAULT_MAX_CLAIMS_PER_ARTICLE
    summaries: SummaryMode = "extractive"
    summary_concurrency: int = 4


@dataclass(slots=True)
class _Node:
    """A community while it is being built: its members, children and place in the tree."""

    members: list[int]
    level: int
    parent: _Node | None = None
    children: list[_Node] = field(default_factory=list)
    id: str = ""


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

    documents = [Document(id=_document_id(n), title=a.title) for n, a in enumerate(articles)]
    chunks, paragraph_chunks = _chunk_articles(articles, options)

    graph, relationships, unresolved = _reference_graph(articles, by_title, _reference_chunks(articles, chunks, by_title))
    similarity = _join_stray_articles(graph, articles, options.language)
    relationships.extend(similarity)

    roots = _hierarchy(graph, options)
    ordered = _number_communities(roots)
    depth = max(node.level for node in ordered) + 1
    if depth < options.min_levels:
        raise SampleBuildError(
            f"Community detection gave {depth} level(s), fewer than the {options.min_levels} asked for; "
            "lower max_leaf_size or add cross-references."
        )

    leaf_of: dict[int, _Node] = {}
    for node in ordered:
        if not node.children:
            for member in node.members:
                leaf_of[member] = node

    centrality = {id(node): _central_order(graph, node.members, articles) for node in ordered}
    definitions = [_definition(article, options.language) for article in articles]
    claims = _claims(articles, ordered, centrality, paragraph_chunks, options)

    digests = {
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
    summaries = await _summaries(ordered, digests, options, model)

    pagerank = nx.pagerank(graph, weight="weight") if graph.number_of_edges() else {}
    top_rank = max(1e-12, _max_rank(ordered, pagerank))
    communities = [
        Community(
            id=node.id,
            level=node.level,
            parent_id=node.parent.id if node.parent else None,
            title=summaries[id(node)].title,
            summary=summaries[id(node)].summary,
            rank=round(10.0 * sum(pagerank.get(m, 0.0) for m in node.members) / top_rank, 4),
            size=len(node.members),
            entity_ids=tuple(_entity_id(m) for m in centrality[id(node)]),
        )
        for node in ordered
    ]
    chunk_ids_of: dict[str | None, tuple[str, ...]] = defaultdict(tuple)
    for chunk in chunks:  # an entity is its article's title: every chunk of the article holds it
        chunk_ids_of[chunk.document_id] += (chunk.id,)
    entities = [
        Entity(
            id=_entity_id(n),
            title=article.title,
            type=article.kind,
            description=first_sentences(definitions[n], options.language, max_chars=ENTITY_DESCRIPTION_MAX_CHARS),
            community_ids=tuple(c.id for c in reversed(_path(leaf_of[n]))),
            chunk_ids=chunk_ids_of[_document_id(n)],
        )
        for n, article in enumerate(articles)
    ]
    index = Index.from_records(
        communities=communities,
        claims=claims,
        chunks=chunks,
        documents=documents,
        entities=entities,
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


# -- ids ---------------------------------------------------------------------------------------


def _document_id(number: int) -> str:
    return f"d{number + 1:04d}"


def _entity_id(number: int) -> str:
    return f"e{number + 1:04d}"


def _chunk_id(number: int, part: int) -> str:
    return f"d{number + 1:04d}-{part + 1}"


# -- chunks ------------------------------------------------------------------------------------


def _chunk_articles(
    articles: Sequence[Article], options: BuildOptions
) -> tuple[list[SourceChunk], list[list[str]]]:
    """Chunks of every article, and for each article the chunk id holding each paragraph.

    Every chunk is at most ``max_chunk_chars`` long and starts with the article's heading; a
    paragraph split across chunks is attributed to the chunk holding its start.
    """
    chunks: list[SourceChunk] = []
    paragraph_chunks: list[list[str]] = []
    for number, article in enumerate(articles):
        heading = article.heading.strip()
        room = options.max_chunk_chars - len(heading) - 2
        if room < 200:
            raise SampleBuildError(f"The heading of {article.title!r} leaves no room in a chunk.")
        pieces: list[list[str]] = [[]]
        used = 0
        where: list[int] = []
        for paragraph in article.paragraphs:
            where.append(-1)
            for piece in _fit(paragraph.text, room, options.language):
                if pieces[-1] and used + 2 + len(piece) > room:
                    pieces.append([])
                    used = 0
                if where[-1] < 0:
                    where[-1] = len(pieces) - 1
                used += (2 if pieces[-1] else 0) + len(piece)
                pieces[-1].append(piece)
        ids = [_chunk_id(number, part) for part in range(len(pieces))]
        for chunk_id, parts in zip(ids, pieces, strict=True):
            chunks.append(
                SourceChunk(id=chunk_id, document_id=_document_id(number), text="\n\n".join([heading, *parts]))
            )
        paragraph_chunks.append([ids[max(0, w)] for w in where])
    return chunks, paragraph_chunks


def _fit(text: str, room: int, language: Language) -> list[str]:
    """``text`` cut into pieces of at most ``room`` characters: whole sentences when they fit,
    else words, else characters. Joining the pieces with spaces gives back the words of ``text``."""
    if len(text) <= room:
        return [text]
    pieces: list[str] = []
    current = ""
    joiner = "" if language == "zh" else " "
    for sentence in split_sentences(text, language):
        for unit in _hard_split(sentence, room):
            candidate = f"{current}{joiner}{unit}" if current else unit
            if len(candidate) <= room:
                current = candidate
            else:
                pieces.append(current)
                current = unit
    if current:
        pieces.append(current)
    return pieces


def _hard_split(sentence: str, room: int) -> list[str]:
    if len(sentence) <= room:
        return [sentence]
    parts: list[str] = []
    current = ""
    for word in re.split(r"(?<=\s)", sentence):
        while len(word) > room:
            if current:
                parts.append(current.rstrip())
                current = ""
            parts.append(word[:room])
            word = word[room:]
        if len(current) + len(word) > room:
            parts.append(current.rstrip())
            current = ""
        current += word
    if current.strip():
        parts.append(current.rstrip())
    return parts


# -- graph -------------------------------------------------------------------------------------


def _title_key(text: str) -> str:
    return " ".join(text.split()).casefold()


def _reference_chunks(
    articles: Sequence[Article], chunks: Sequence[SourceChunk], by_title: dict[str, int]
) -> dict[tuple[int, int], tuple[str, ...]]:
    """For each (source, target) pair of article numbers, the chunks of the source whose text
    holds a ``{reference}`` to the target (directly or through one of the source's aliases), in
    chunk order: the chunks a relationship was extracted from."""
    numbers = {_document_id(n): n for n in range(len(articles))}
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


def _reference_graph(
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


def _join_stray_articles(graph: nx.Graph, articles: Sequence[Article], language: Language) -> list[Relationship]:
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


# -- hierarchy ---------------------------------------------------------------------------------


def _louvain(graph: nx.Graph, members: Sequence[int], resolution: float, seed: int) -> list[list[int]]:
    """Louvain communities of the subgraph on ``members``, each sorted, largest first."""
    subgraph = graph.subgraph(sorted(members))
    found = nx.community.louvain_communities(subgraph, weight="weight", resolution=resolution, seed=seed)
    return sorted((sorted(c) for c in found), key=lambda c: (-len(c), c[0]))


def _hierarchy(graph: nx.Graph, options: BuildOptions) -> list[_Node]:
    """The root communities, with their children filled in (see the module docstring)."""
    roots = [_Node(members=c, level=0) for c in _louvain(graph, list(graph), options.root_resolution, options.seed)]
    frontier = list(roots)
    while frontier:
        node = frontier.pop(0)
        if len(node.members) <= options.max_leaf_size or node.level + 1 >= options.max_levels:
            continue
        parts = _louvain(graph, node.members, options.split_resolution, options.seed)
        if len(parts) < 2:
            continue
        node.children = [_Node(members=p, level=node.level + 1, parent=node) for p in parts]
        frontier.extend(node.children)
    return roots


def _number_communities(roots: list[_Node]) -> list[_Node]:
    """Every community, level by level (roots first), children in their parent's order; ids
    are the decimal position in that order."""
    ordered: list[_Node] = []
    level = roots
    while level:
        ordered.extend(level)
        level = [child for node in level for child in node.children]
    for number, node in enumerate(ordered):
        node.id = str(number)
    return ordered


def _path(node: _Node) -> list[_Node]:
    path = [node]
    while path[-1].parent is not None:
        path.append(path[-1].parent)
    return path


def _central_order(graph: nx.Graph, members: Sequence[int], articles: Sequence[Article]) -> list[int]:
    """Members by PageRank within the community's subgraph, highest first; ties by article order.

    Scores are rounded before sorting so that floating-point noise cannot reorder equals.
    """
    subgraph = graph.subgraph(members)
    if subgraph.number_of_edges() == 0:
        return sorted(members)
    scores = nx.pagerank(subgraph, weight="weight")
    return sorted(members, key=lambda m: (-round(scores[m], 9), m))


def _max_rank(ordered: Sequence[_Node], pagerank: dict[int, float]) -> float:
    return max(sum(pagerank.get(m, 0.0) for m in node.members) for node in ordered)


# -- claims ------------------------------------------------------------------------------------


def _definition(article: Article, language: Language) -> str:
    """The article's first definitional sentence(s), without etymology brackets or braces."""
    for paragraph in article.paragraphs:
        text = _definitional_text(paragraph.text)
        if text:
            return first_sentences(text, language, max_chars=CLAIM_MAX_CHARS)
    return ""


def _definitional_text(text: str) -> str:
    """A paragraph without its sense number, leading etymology brackets, a repeated part of
    speech (``n.``, ``vt.``) or cross-reference braces."""
    text = re.sub(r"^\d{1,2}\.\s+", "", text.strip())
    text = re.sub(r"^(?:\[[^\]]*\]\s*)+", "", text)
    text = re.sub(r"^(?:(?:n|v|vt|vi|adj|adv|interj)\.,?\s+)+", "", text)
    return strip_reference_braces(text).strip()


def _claims(
    articles: Sequence[Article],
    ordered: Sequence[_Node],
    centrality: dict[int, list[int]],
    paragraph_chunks: Sequence[Sequence[str]],
    options: BuildOptions,
) -> list[Claim]:
    """One claim per sense of each article (its first definitional paragraph), leaf by leaf in
    community order, most central article first; each cites the chunk holding that paragraph."""
    claims: list[Claim] = []
    for node in ordered:
        if node.children:
            continue
        for member in centrality[id(node)]:
            article = articles[member]
            seen_senses: set[int] = set()
            for position, paragraph in enumerate(article.paragraphs):
                if paragraph.sense in seen_senses or len(seen_senses) >= options.max_claims_per_article:
                    continue
                text = _definitional_text(paragraph.text)
                if not text:
                    continue
                seen_senses.add(paragraph.sense)
                claims.append(
                    Claim(
                        id=f"c{len(claims) + 1:05d}",
                        community_id=node.id,
                        subject=article.title,
                        description=first_sentences(text, options.language, max_chars=CLAIM_MAX_CHARS),
                        chunk_ids=(paragraph_chunks[member][position],),
                    )
                )
    return claims


# -- summaries ---------------------------------------------------------------------------------


async def _summaries(
    ordered: Sequence[_Node],
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
