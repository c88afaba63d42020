"""The SQLite map cache: hits, misses, persistence, keys, and its use by the engine."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest
from collections import Counter
from pathlib import Path

from graphrag_core.cache import MapCache, MemoryMapCache, SqliteMapCache, cache_key
from graphrag_core.llm.base import ChatRequest, ChatResponse
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.models import Claim, Community, Index, SourceChunk
from graphrag_core.prompts import render_map_messages


def _request(query: str = "q", *, max_tokens: int | None = 512) -> ChatRequest:
    return ChatRequest(purpose="map", messages=render_map_messages(query, "[Community ID: 1 | summary part 1]\nx"), max_tokens=max_tokens)


class _Named:
    def __init__(self, identity: str) -> None:
        self.identity = identity


def test_cache_key_is_stable_and_sensitive() -> None:
    key = cache_key(_Named("openai:gpt-4o@api.openai.com"), _request())
    assert len(key) == 64 and int(key, 16) >= 0
    assert key == cache_key(_Named("openai:gpt-4o@api.openai.com"), _request())
    assert key != cache_key(_Named("openai:gpt-4o-mini@api.openai.com"), _request())
    assert key != cache_key(_Named("openai:gpt-4o@api.openai.com"), _request("other"))
    assert key != cache_key(_Named("openai:gpt-4o@api.openai.com"), _request(max_tokens=100))


def test_hits_and_misses(tmp_path: Path) -> None:
    cache = SqliteMapCache(tmp_path / "cache.sqlite")
    assert isinstance(cache, MapCache)
    assert cache.get("k") is None
    cache.put("k", '{"answer": "a", "usefulness": 5}')
    assert cache.get("k") == '{"answer": "a", "usefulness": 5}'
    cache.put("k", "replaced")
    assert cache.get("k") == "replaced"
    stats = cache.stats()
    assert stats["entries"] == 1 and stats["hits"] == 2 and stats["misses"] == 1
    assert cache.clear() == 1
    assert cache.get("k") is None and len(cache) == 0


def test_persists_across_instances_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "cache.sqlite"
    SqliteMapCache(path).put("k", "中文 text")
    assert SqliteMapCache(path).get("k") == "中文 text"
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_put_does_not_wait_for_the_disk(tmp_path: Path) -> None:
    # How long a put takes is printed by benchmarks/bench_cache.py; here, the two settings that
    # make it fast: commits in WAL mode with synchronous=NORMAL (no fsync per commit), and the
    # WAL is not checkpointed when a put's connection closes (another connection stays open).
    cache = SqliteMapCache(tmp_path / "cache.sqlite")
    with cache._connect() as connection:
        assert connection.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    cache.put("k", "v")
    assert (tmp_path / "cache.sqlite-wal").stat().st_size > 0, "the put's commit is still in the WAL"
    assert SqliteMapCache(tmp_path / "cache.sqlite").get("k") == "v"


def test_concurrent_threads(tmp_path: Path) -> None:
    cache = SqliteMapCache(tmp_path / "cache.sqlite")

    def work(n: int) -> None:
        for i in range(20):
            cache.put(f"{n}-{i}", str(i))
            assert cache.get(f"{n}-{i}") == str(i)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) == 80


def test_memory_cache() -> None:
    cache = MemoryMapCache()
    assert isinstance(cache, MapCache)
    cache.put("k", "v")
    assert cache.get("k") == "v" and cache.get("x") is None and len(cache) == 1


class _Counting:
    """The offline model, counting calls per purpose (same identity, so same cache keys)."""

    def __init__(self) -> None:
        self.inner = OfflineChatModel()
        self.identity = self.inner.identity
        self.calls: Counter[str] = Counter()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls[request.purpose] += 1
        return await self.inner.complete(request)


def _index() -> Index:
    communities = [Community(id="0", level=0, summary="Farming, floods and music in the valley.")]
    for i in range(1, 7):
        topic = "The river floods and farmers build levees." if i % 2 else "A jazz festival fills the harbour with concerts."
        communities.append(Community(id=str(i), level=1, parent_id="0", summary=f"{topic} Detail number {i} " + "filler words " * 40))
    return Index(
        communities=tuple(communities),
        claims=(Claim(id="c1", community_id="1", subject="Levee", description="Levees cut flood damage.", chunk_ids=("k1",)),),
        chunks=(SourceChunk(id="k1", text="In 2021 the levees held back the spring flood."),),
    )


def test_rerun_changing_only_reduce_settings_makes_zero_map_calls(tmp_path: Path) -> None:
    from graphrag_core.request import GlobalSearchRequest
    from graphrag_core.search import retrieve_global

    cache = SqliteMapCache(tmp_path / "cache.sqlite")
    model = _Counting()
    first_request = GlobalSearchRequest(query="How do farmers deal with floods?", seed=7, map_token_budget=1200)
    first = asyncio.run(retrieve_global(_index(), first_request, model, cache=cache))
    assert first.diagnostics.batch_count > 1
    assert first.diagnostics.map_calls == first.diagnostics.batch_count
    assert model.calls["map"] == first.diagnostics.batch_count

    model.calls.clear()
    rerun = first_request.model_copy(update={"reduce_token_budget": 6000, "reduce_strategy": "stop"})
    second = asyncio.run(retrieve_global(_index(), rerun, model, cache=SqliteMapCache(tmp_path / "cache.sqlite")))
    assert model.calls["map"] == 0
    assert second.diagnostics.map_calls == 0
    assert second.diagnostics.cache_hits == second.diagnostics.batch_count
    assert [a.answer for a in second.map_answers] == [a.answer for a in first.map_answers]
    assert second.status == first.status == "completed"


def test_the_kept_connection_closes_and_the_cache_still_works(tmp_path):
    from graphrag_core.cache import SqliteMapCache

    cache = SqliteMapCache(tmp_path / "c.sqlite3")
    cache.put("k", "v")
    keeper = cache._keeper
    cache.close()
    with pytest.raises(sqlite3.ProgrammingError):
        keeper.execute("SELECT 1")
    assert cache.get("k") == "v"  # each operation opens its own connection
