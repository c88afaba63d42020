"""Issue 27: the map cache is an optimisation. A read or write that fails (disk full, a file
another process holds locked) is skipped with one warning and the run completes, on the
command line and on the Explore page."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

import graphrag_core.cache as cache_module
from graphrag_core.cache import GuardedCache, MemoryMapCache, SqliteMapCache
from graphrag_core.events import RunWarning
from graphrag_core.history import RunStore
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.search import retrieve_global
from graphrag_core.state import RunState
from graphrag_core.status import RunStatus

from .apptest_support import app, run_question
from .cli_support import run_cli
from .factories import small_index


class FailingCache(MemoryMapCache):
    """A cache whose reads and/or writes fail as a full or locked SQLite file does."""

    def __init__(self, *, reads: bool, writes: bool, error: Exception) -> None:
        super().__init__()
        self.reads, self.writes, self.error = reads, writes, error
        self.gets = self.puts = 0

    def get(self, key: str) -> str | None:
        self.gets += 1
        if self.reads:
            raise self.error
        return super().get(key)

    def put(self, key: str, text: str) -> None:
        self.puts += 1
        if self.writes:
            raise self.error
        super().put(key, text)


REQUEST = GlobalSearchRequest(query="What is a hacker?", seed=3, map_token_budget=300, map_output_reserve=50)


@pytest.mark.parametrize(
    ("reads", "writes", "error", "said"),
    [
        (False, True, sqlite3.OperationalError("database or disk is full"), "could not be written"),
        (False, True, sqlite3.OperationalError("database is locked"), "could not be written"),
        (True, False, sqlite3.DatabaseError("database disk image is malformed"), "could not be read"),
        (True, True, OSError(28, "No space left on device"), "could not be read"),
    ],
)
def test_a_failing_cache_gives_one_warning_and_the_run_completes(reads: bool, writes: bool, error: Exception, said: str) -> None:
    cache = FailingCache(reads=reads, writes=writes, error=error)
    events: list = []
    result = asyncio.run(retrieve_global(small_index(), REQUEST, OfflineChatModel(), on_event=events.append, cache=cache))
    assert result.status == "completed" and result.answer
    warnings = [e for e in events if isinstance(e, RunWarning)]
    assert len(warnings) == 1, warnings
    assert "map cache" in warnings[0].message and said in warnings[0].message and str(error) in warnings[0].message
    assert (cache.gets if reads else cache.puts) == 1, "the cache is left alone after its first failure"
    state = RunState.replay(events)
    assert state.warnings == [warnings[0].message] and state.status == RunStatus.COMPLETED
    assert not [b for b in state.batches if not b.status.succeeded]


def test_the_guard_reports_only_the_first_failure_and_then_stays_out_of_the_way() -> None:
    said: list[str] = []
    inner = FailingCache(reads=False, writes=True, error=sqlite3.OperationalError("database is locked"))
    guarded = GuardedCache(inner, on_failure=said.append)
    guarded.put("k", "v")
    guarded.put("k2", "v2")
    assert guarded.get("k") is None and inner.puts == 1 and inner.gets == 0 and len(said) == 1
    healthy = GuardedCache(MemoryMapCache(), on_failure=said.append)
    healthy.put("k", "v")
    assert healthy.get("k") == "v" and len(said) == 1


@pytest.fixture
def locked_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A map cache file another connection holds locked for writing (``BEGIN EXCLUSIVE``)."""
    monkeypatch.setattr(cache_module, "CACHE_BUSY_TIMEOUT_S", 0.2)
    path = tmp_path / "map-cache.sqlite3"
    SqliteMapCache(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO map_cache (key, text, created_at) VALUES ('held', 'x', 0)")
    try:
        yield path
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_query_with_a_locked_cache_answers_records_the_run_and_warns_once(capsys, index_dir: Path, tmp_path: Path, locked_cache: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    code, out, err = run_cli(capsys, "query", index_dir, "What shapes the town?", "--store", store, "--cache", locked_cache, "-q")
    assert code == 0, err
    assert out.strip() and "Traceback" not in err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "map cache" in warnings[0] and "database is locked" in warnings[0], err
    (summary,) = RunStore(store).list_runs()
    assert summary.status in (RunStatus.COMPLETED, RunStatus.NO_RESULTS)


def test_explore_with_a_locked_cache_shows_the_answer_a_warning_and_no_failed_batch(run_db: Path, locked_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHRAG_EXPLORER_CACHE", str(locked_cache))
    at = run_question(app({"level": "1"}).run())
    assert not at.exception
    record = RunStore(run_db).get(at.query_params["run"])
    assert record is not None and record.status == RunStatus.COMPLETED, record and record.error
    shown = [w.value for w in at.warning]
    assert any("map cache" in w and "database is locked" in w for w in shown), shown
    assert not any(e.label.startswith("Errors:") for e in at.expander)
    from graphrag_app.explore.charts import timeline_figure

    assert_within_limit(timeline_figure(record.replay()).layout.title.text)


def test_a_run_that_fails_mid_map_says_why_each_unfinished_batch_has_no_answer() -> None:
    """Batches still in flight when a run ends never read "batch 5: None": the fold, the failed
    batches and the reasons name the run's end; the timeline ends their calls there."""
    from graphrag_app.explore.charts import timeline_figure
    from graphrag_core.calls import why_no_answer
    from graphrag_core.figures import run_figures
    from graphrag_core.llm.scripted import ScriptedChatModel

    async def reply(request):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.02)
        return '{"answer": "An answer.", "usefulness": 50}'

    events: list = []

    def on_event(event) -> None:  # type: ignore[no-untyped-def]
        events.append(event)
        if sum(1 for e in events if e.kind == "map_batch_succeeded") == 3 and event.kind == "map_batch_succeeded":
            raise RuntimeError("the disk went away")

    request = REQUEST.model_copy(update={"map_concurrency": 2})
    with pytest.raises(RuntimeError):
        asyncio.run(retrieve_global(small_index(), request, ScriptedChatModel(reply), on_event=on_event))
    state = RunState.replay(events)
    cut = [b for b in state.batches if b.status.finished and not b.status.succeeded]
    assert cut and all(b.errors and "the run ended" in b.errors[-1] and "the disk went away" in b.errors[-1] for b in cut)
    assert all(f.error and "None" not in f.error for f in run_figures(events).failures)
    texts = [t for item in why_no_answer(events) for t in item.texts]
    assert texts and not any(t.endswith(": None") for t in texts), texts
    assert_within_limit(timeline_figure(state).layout.title.text)


def assert_within_limit(title: str) -> None:
    """The call timeline's title never shows more calls in flight than the limit."""
    import re

    found = re.search(r"at most (\d+) in flight \(limit (\d+)\)", title)
    assert found is not None and int(found.group(1)) <= int(found.group(2)), title


def test_a_cache_file_that_cannot_be_opened_is_one_warning_too(capsys, index_dir: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    code, out, err = run_cli(capsys, "query", index_dir, "What shapes the town?", "--store", tmp_path / "runs.sqlite3", "--cache", blocker / "c.sqlite3", "-q")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "map cache" in warnings[0] and "Traceback" not in err, err


@pytest.mark.parametrize("command", ["sweep", "eval"])
def test_a_sweep_or_an_evaluation_with_a_locked_cache_warns_once_and_finishes(capsys, index_dir: Path, tmp_path: Path, locked_cache: Path, command: str) -> None:
    if command == "sweep":
        argv = ["sweep", index_dir, "What shapes the town?", "--levels", "leaf,0", "--seeds", "1,2"]
    else:
        questions = tmp_path / "q.jsonl"
        questions.write_text('{"question": "What shapes the town?"}\n{"question": "Where is the mill?"}\n', encoding="utf-8")
        argv = ["eval", questions, "--index", index_dir, "--condition", "A:level=0", "--condition", "B:level=1", "--judge", "offline", "--model", "offline", "--eval-db", tmp_path / "e.sqlite3"]
    code, out, err = run_cli(capsys, *argv, "--store", tmp_path / "runs.sqlite3", "--cache", locked_cache, "-q")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "map cache" in warnings[0] and "database is locked" in warnings[0], err
    assert out.strip() and "Traceback" not in err
