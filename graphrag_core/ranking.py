"""Source chunks ranked by relevance to a question: what the ``vector`` method (naive RAG, the
paper's SS) answers from (evaluation spec section 7).

- With an embedding model: the cosine similarity of the question's embedding and each chunk's
  (a chunk at cosine 0 or below is not relevant).
  Embeddings are cached like map answers, in the map cache, keyed by the embedding model's
  identity and the exact text (:func:`embedding_key`), so a second experiment on the same index
  embeds nothing again; within a process the chunk vectors of an index are also kept in memory.
- Without one (and always offline): BM25 over the chunks' terms (English words, Chinese
  characters and bigrams; the offline model's retrieval kit). A chunk sharing no term with the
  question is not relevant, nor one sharing only single Chinese characters with a question that
  has stronger terms (words, bigrams): nearly every Chinese chunk shares a character or two
  with any Chinese question. A question with no content words ("What are the main themes?")
  ranks the chunks by how typical they are of the corpus instead (centrality), so it still
  gets an answer.

Invariants: the ranking is a function of the index, the question and the embedding model
(ties keep index order); every relevance is > 0; an embedding call that fails is retried as a
chat call is (:class:`~graphrag_core.retry.RetryPolicy`), and a failure that outlasts the retries
raises. The figures (calls, cache hits, tokens) say what this ranking spent.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import math
import time
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import EmbeddingError, ModelError
from .llm.base import TokenUsage
from .llm.embeddings import BM25_RANKER, EmbeddingModel
from .llm.offline.retrieval import BM25_B, BM25_K1, Terms, centrality, terms
from .retry import DEFAULT_RETRY_POLICY, RetryPolicy
from .methods import VECTOR
from .sources import source_units
from .models import Index

if TYPE_CHECKING:
    from .cache import MapCache

CENTRALITY_RANKER = "bm25 (no content words: the most typical chunks)"


@dataclass(frozen=True)
class RankedChunk:
    """One source chunk and its relevance to the question (> 0; higher is more relevant)."""

    reference: str
    chunk_id: str
    text: str
    score: float


@dataclass(frozen=True)
class Ranking:
    """The relevant chunks, most relevant first, and what ranking them spent."""

    ranker: str
    chunks: list[RankedChunk]
    unit_count: int
    """Chunks with text in the index (ranked or not)."""
    embedding_calls: int = 0
    embedding_cache_hits: int = 0
    """Texts whose vectors came from the cache (or this process's memory) instead of the model."""
    usage: TokenUsage = field(default_factory=TokenUsage)
    duration_s: float = 0.0


# -- what is kept per index in this process -------------------------------------------------------

_PER_INDEX: dict[tuple[int, str], Any] = {}


def _per_index(index: Index, name: str, build: Callable[[], Any]) -> Any:
    """``build()`` once per live index and ``name`` (dropped when the index is collected)."""
    key = (id(index), name)
    if key not in _PER_INDEX:
        _PER_INDEX[key] = build()
        weakref.finalize(index, _PER_INDEX.pop, key, None)
    return _PER_INDEX[key]


@dataclass(frozen=True)
class _Corpus:
    """An index's chunks as BM25 reads them."""

    references: list[str]
    chunk_ids: list[str]
    texts: list[str]
    counts: list[Counter[str]]
    lengths: list[int]
    document_frequency: Counter[str]
    centrality: list[float]


def _corpus(index: Index) -> _Corpus:
    def build() -> _Corpus:
        units = source_units(index, method=VECTOR)
        chunk_terms: list[Terms] = [terms(chunk.text) for _, chunk in units]
        counts = [Counter(t.all) for t in chunk_terms]
        df: Counter[str] = Counter()
        for count in counts:
            df.update(count.keys())
        return _Corpus(
            references=[ref for ref, _ in units],
            chunk_ids=[chunk.id for _, chunk in units],
            texts=[chunk.text for _, chunk in units],
            counts=counts,
            lengths=[len(t.all) for t in chunk_terms],
            document_frequency=df,
            centrality=centrality(chunk_terms),
        )

    source_units(index, method=VECTOR)  # refuse an index without chunks before anything is kept
    return _per_index(index, "bm25", build)


def _bm25(corpus: _Corpus, query: Counter[str]) -> list[float]:
    n = len(corpus.counts)
    average = (sum(corpus.lengths) / n) or 1.0
    idf = {t: math.log(1.0 + (n - corpus.document_frequency[t] + 0.5) / (corpus.document_frequency[t] + 0.5)) for t in query}
    scores = []
    for count, length in zip(corpus.counts, corpus.lengths):
        score = 0.0
        for term, weight in query.items():
            tf = count.get(term, 0)
            if tf:
                score += weight * idf[term] * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
        scores.append(score)
    return scores


def _ordered(corpus: _Corpus, scores: Sequence[float]) -> list[RankedChunk]:
    """The chunks with a positive score, best first (ties keep index order)."""
    order = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: -scores[i])
    return [RankedChunk(corpus.references[i], corpus.chunk_ids[i], corpus.texts[i], float(scores[i])) for i in order]


def rank_by_bm25(index: Index, question: str) -> Ranking:
    """BM25 ranking of the index's chunks (see the module docstring)."""
    corpus = _corpus(index)
    query = terms(question, keep_generic=False)
    if not query.all:
        return Ranking(ranker=CENTRALITY_RANKER, chunks=_ordered(corpus, [c + 1e-9 for c in corpus.centrality]), unit_count=len(corpus.texts))
    scores = _bm25(corpus, query.weights())
    strong = set(query.strong)
    if strong:  # single Chinese characters alone do not make a chunk relevant, as in the map
        scores = [score if strong.intersection(count) else 0.0 for score, count in zip(scores, corpus.counts)]
    return Ranking(ranker=BM25_RANKER, chunks=_ordered(corpus, scores), unit_count=len(corpus.texts))


# -- embeddings -----------------------------------------------------------------------------------


def embedding_key(identity: str, text: str) -> str:
    """The cache key of ``text``'s embedding by the model named ``identity``."""
    digest = hashlib.sha256()
    for part in ("embedding", identity, text):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def encode_vector(vector: Sequence[float]) -> str:
    """A vector as cache text: little-endian float32, base64."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: str) -> np.ndarray | None:
    """The vector of :func:`encode_vector`'s text; None for text that is not one."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        return None
    if not raw or len(raw) % 4:
        return None
    return np.frombuffer(raw, dtype="<f4").astype(np.float64)


@dataclass
class _Spend:
    calls: int = 0
    hits: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)


async def _embed_with_retry(embedder: EmbeddingModel, texts: list[str], policy: RetryPolicy, spend: _Spend) -> list[list[float]]:
    attempt = 0
    while True:
        attempt += 1
        spend.calls += 1
        try:
            result = await embedder.embed(texts)
        except (ModelError, EmbeddingError) as exc:
            fatal = isinstance(exc, ModelError) and not exc.retryable
            if attempt >= policy.max_attempts or fatal:
                raise
            await policy.sleep(policy.delay_after(attempt, exc))
            continue
        spend.usage = spend.usage + result.usage
        if len(result.vectors) != len(texts):
            raise EmbeddingError(f"The embedding model {embedder.identity} answered {len(result.vectors)} vectors for {len(texts)} texts.")
        return result.vectors


async def embed_texts(
    texts: Sequence[str], embedder: EmbeddingModel, *, cache: MapCache | None, policy: RetryPolicy, spend: _Spend
) -> list[np.ndarray]:
    """Each text's unit vector: from the cache when it holds it, else from the model (cached then)."""
    identity = str(embedder.identity)
    found: list[np.ndarray | None] = [None] * len(texts)
    if cache is not None:
        for i, text in enumerate(texts):
            kept = await asyncio.to_thread(cache.get, embedding_key(identity, text))
            found[i] = decode_vector(kept) if kept is not None else None
    missing = [i for i, v in enumerate(found) if v is None]
    spend.hits += len(texts) - len(missing)
    if missing:
        vectors = await _embed_with_retry(embedder, [texts[i] for i in missing], policy, spend)
        for i, vector in zip(missing, vectors):
            found[i] = np.asarray(vector, dtype=np.float64)
            if cache is not None:
                await asyncio.to_thread(cache.put, embedding_key(identity, texts[i]), encode_vector(vector))
    return [_unit(v) for v in found if v is not None]


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


async def rank_by_embeddings(
    index: Index, question: str, embedder: EmbeddingModel, *, cache: MapCache | None = None, policy: RetryPolicy = DEFAULT_RETRY_POLICY
) -> Ranking:
    """Cosine ranking of the index's chunks by ``embedder`` (see the module docstring)."""
    corpus = _corpus(index)
    spend = _Spend()
    memory: dict[str, np.ndarray] = _per_index(index, f"vectors:{embedder.identity}", dict)
    if len(memory) == len(corpus.texts):
        spend.hits += len(corpus.texts)
    else:
        vectors = await embed_texts(corpus.texts, embedder, cache=cache, policy=policy, spend=spend)
        memory.update(zip(corpus.chunk_ids, vectors))
    [query] = await embed_texts([question], embedder, cache=cache, policy=policy, spend=spend)
    matrix = np.vstack([memory[cid] for cid in corpus.chunk_ids])
    if matrix.shape[1] != query.shape[0]:
        raise EmbeddingError(f"The embedding model {embedder.identity} gave vectors of {query.shape[0]} dimensions for the question and {matrix.shape[1]} for the chunks.")
    similarity = matrix @ query
    scores = [float(s) for s in similarity]  # a chunk pointing away from the question (cosine <= 0) is not relevant
    return Ranking(
        ranker=str(embedder.identity), chunks=_ordered(corpus, scores), unit_count=len(corpus.texts),
        embedding_calls=spend.calls, embedding_cache_hits=spend.hits, usage=spend.usage,
    )


async def rank_chunks(
    index: Index,
    question: str,
    *,
    embedder: EmbeddingModel | None = None,
    cache: MapCache | None = None,
    policy: RetryPolicy = DEFAULT_RETRY_POLICY,
) -> Ranking:
    """The index's chunks ranked for ``question``: by ``embedder`` when given, else by BM25.

    Raises :class:`~graphrag_core.errors.NoSourceChunksError` for an index without chunks, and
    the embedding model's last error when it failed every attempt."""
    started = time.monotonic()
    if embedder is None:
        ranking = rank_by_bm25(index, question)
    else:
        ranking = await rank_by_embeddings(index, question, embedder, cache=cache, policy=policy)
    return Ranking(**{**ranking.__dict__, "duration_s": time.monotonic() - started})


__all__ = [
    "CENTRALITY_RANKER",
    "RankedChunk",
    "Ranking",
    "decode_vector",
    "embed_texts",
    "embedding_key",
    "encode_vector",
    "rank_by_bm25",
    "rank_by_embeddings",
    "rank_chunks",
]
