"""An experiment's model calls sent as OpenAI Batch API jobs, in waves (``eval --via batch``).

The experiment runs as it does with direct calls, every item of a stage at once; each call of a
:class:`BatchedModel` waits instead of going out. When no new call has come for ``settle_s``,
every waiting call is one wave: one job per model (split at ``max_lines``), uploaded as JSON
Lines, created, polled every ``poll_s`` and downloaded; each reply goes back to the call that
waits for it, and the experiment moves on to the calls that follow (dynamic selection's ratings
round by round, then the maps, the reduces, the claims, the judgments).

Invariants:

- a line's ``custom_id`` is its purpose, the digest of its exact body and which occurrence of
  that body it is in this run of the experiment, so a rerun asks for the same lines;
- every job (its wave, its lines, its state and counts) and every reply is in the experiment's
  store (:class:`BatchStore`, the evaluation store's file) as soon as it is known: a rerun after
  a restart serves the replies it has, follows the jobs it left unfinished, and sends only what
  is missing;
- a line that failed, or that an expired, failed or cancelled job did not run, goes into the
  next job, up to ``line_attempts`` jobs; then its call fails as a model call fails (the
  engine's own retry may send it once more);
- progress names the wave, the job, its state and its counts at every poll.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import BatchAPIError, EvaluationError, RetryableModelError
from ..llm.base import ChatModel, ChatRequest, ChatResponse, model_identity
from ..llm.batch_api import BatchClient, BatchJob, request_line

if TYPE_CHECKING:
    from ..llm.openai_model import OpenAIChatModel

T = TypeVar("T")

DEFAULT_POLL_S = 30.0
DEFAULT_SETTLE_S = 0.5
DEFAULT_LINE_ATTEMPTS = 2
MAX_LINES_PER_JOB = 50_000
"""OpenAI's limit on the requests of one batch."""
SQLITE_TIMEOUT_S = 30.0

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS batch_jobs (id TEXT PRIMARY KEY, experiment_id TEXT NOT NULL, model TEXT NOT NULL, wave INTEGER NOT NULL, "
    "status TEXT NOT NULL, lines TEXT NOT NULL, counts TEXT NOT NULL, collected INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL, "
    "updated_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS batch_replies (experiment_id TEXT NOT NULL, custom_id TEXT NOT NULL, body TEXT NOT NULL, "
    "PRIMARY KEY (experiment_id, custom_id))",
)


@dataclass(frozen=True)
class StoredJob:
    id: str
    model: str
    wave: int
    status: str
    lines: tuple[str, ...]


class BatchStore:
    """The Batch API state of experiments in the evaluation store's SQLite file: each job with
    its wave, lines and last known state, and each line's reply body."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._connection = sqlite3.connect(self.path, timeout=SQLITE_TIMEOUT_S, check_same_thread=False)
        with self._connect() as connection:
            connection.execute("PRAGMA journal_mode=WAL")
            for statement in _SCHEMA:
                connection.execute(statement)

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._connection:
            yield self._connection

    def put_job(self, experiment_id: str, model: str, wave: int, job: BatchJob, lines: list[str]) -> None:
        now = time.time()
        with self._connect() as c:
            c.execute(
                "INSERT OR REPLACE INTO batch_jobs VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
                (job.id, experiment_id, model, wave, job.status, json.dumps(lines), job.request_counts.model_dump_json(), now, now),
            )

    def update_job(self, job: BatchJob, *, collected: bool = False) -> None:
        """A job's state at a poll; ``collected`` once its replies are kept."""
        with self._connect() as c:
            c.execute(
                "UPDATE batch_jobs SET status = ?, counts = ?, collected = ?, updated_at = ? WHERE id = ?",
                (job.status, job.request_counts.model_dump_json(), int(collected), time.time(), job.id),
            )

    def jobs(self, experiment_id: str, *, unfinished: bool = False) -> list[StoredJob]:
        """The experiment's jobs, oldest first (with ``unfinished``: those whose replies are not
        collected yet, whatever the job's own state)."""
        query = "SELECT id, model, wave, status, lines FROM batch_jobs WHERE experiment_id = ?"
        if unfinished:
            query += " AND collected = 0"
        with self._connect() as c:
            rows = c.execute(query + " ORDER BY created_at", (experiment_id,)).fetchall()
        return [StoredJob(id=r[0], model=r[1], wave=int(r[2]), status=r[3], lines=tuple(json.loads(r[4]))) for r in rows]

    def last_wave(self, experiment_id: str) -> int:
        with self._connect() as c:
            row = c.execute("SELECT MAX(wave) FROM batch_jobs WHERE experiment_id = ?", (experiment_id,)).fetchone()
        return int(row[0] or 0)

    def put_replies(self, experiment_id: str, replies: dict[str, dict[str, Any]]) -> None:
        with self._connect() as c:
            c.executemany(
                "INSERT OR REPLACE INTO batch_replies VALUES (?, ?, ?)", [(experiment_id, cid, json.dumps(body)) for cid, body in replies.items()]
            )

    def reply(self, experiment_id: str, custom_id: str) -> dict[str, Any] | None:
        with self._connect() as c:
            row = c.execute("SELECT body FROM batch_replies WHERE experiment_id = ? AND custom_id = ?", (experiment_id, custom_id)).fetchone()
        return None if row is None else json.loads(row[0])


@dataclass(frozen=True)
class BatchOptions:
    """How an experiment uses the Batch API (the defaults suit OpenAI's; tests shorten the waits)."""

    poll_s: float = DEFAULT_POLL_S
    settle_s: float = DEFAULT_SETTLE_S
    line_attempts: int = DEFAULT_LINE_ATTEMPTS
    max_lines: int = MAX_LINES_PER_JOB


@dataclass(frozen=True)
class BatchProgress:
    """A job's state at one poll: its wave, what its lines ask (purposes), its counts."""

    wave: int
    job_id: str
    status: str
    purposes: tuple[str, ...]
    done: int
    failed: int
    total: int

    def text(self) -> str:
        failed = f", {self.failed:,} failed" if self.failed else ""
        return f"wave {self.wave} ({', '.join(self.purposes)}): batch {self.job_id} {self.status}, {self.done:,}/{self.total:,} done{failed}"


@dataclass
class _Waiting:
    custom_id: str
    purpose: str
    body: dict[str, Any]
    future: asyncio.Future[dict[str, Any]]
    attempts: int = 0
    errors: list[str] = field(default_factory=list)


class BatchedModel:
    """A chat model whose calls wait for the next wave of :class:`BatchWaves` (the same identity
    and tokenizers as the model it sends for, so keys and caches are the direct calls' own)."""

    def __init__(self, inner: OpenAIChatModel, waves: BatchWaves) -> None:
        self.inner, self.waves = inner, waves
        self.identity = model_identity(inner)
        self._seen: Counter[str] = Counter()

    @property
    def default_tokenizer(self) -> str:
        return self.inner.default_tokenizer

    def endpoint_tokenizer(self) -> Any:
        return self.inner.endpoint_tokenizer()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        body = self.inner.batch_body(request)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:24]
        occurrence = self._seen[digest]
        self._seen[digest] += 1
        custom_id = f"{request.purpose}-{digest}-{occurrence}"
        stored = self.waves.store.reply(self.waves.experiment_id, custom_id)
        if stored is None:
            stored = await self.waves.wait(self, custom_id, request.purpose, body)
        return self.inner.batch_reply(stored)


class BatchWaves:
    """The waves of one experiment: the calls its :class:`BatchedModel` objects wait on, sent as
    Batch API jobs when no new call has come for ``settle_s`` (see the module docstring)."""

    def __init__(
        self,
        store: BatchStore,
        experiment_id: str,
        *,
        options: BatchOptions = BatchOptions(),
        on_progress: Callable[[BatchProgress], None] | None = None,
        client_for: Callable[[OpenAIChatModel], BatchClient] | None = None,
    ) -> None:
        self.store, self.experiment_id, self.options = store, experiment_id, options
        self.emit = on_progress or (lambda progress: None)
        self.client_for = client_for or (lambda model: BatchClient(model.settings))
        self.waiting: dict[BatchedModel, dict[str, _Waiting]] = {}
        self.last_call = time.monotonic()
        self.wave = store.last_wave(experiment_id)
        self.jobs_sent = 0

    def model(self, inner: ChatModel) -> ChatModel:
        """``inner`` sending through the Batch API, when it can (an OpenAI-compatible model)."""
        if not hasattr(inner, "batch_body"):
            return inner
        return BatchedModel(inner, self)  # type: ignore[arg-type]

    async def wait(self, model: BatchedModel, custom_id: str, purpose: str, body: dict[str, Any]) -> dict[str, Any]:
        """The reply body of a line, once a job has brought it."""
        group = self.waiting.setdefault(model, {})
        line = group.get(custom_id)
        if line is None:
            line = group[custom_id] = _Waiting(custom_id, purpose, body, asyncio.get_running_loop().create_future())
        self.last_call = time.monotonic()
        return await asyncio.shield(line.future)

    async def drive(self, work: Awaitable[T]) -> T:
        """Run ``work`` (the experiment), sending a wave each time its calls settle."""
        task = asyncio.ensure_future(work)
        try:
            while not task.done():
                await asyncio.wait({task}, timeout=self.options.settle_s)
                if not task.done() and any(self.waiting.values()) and time.monotonic() - self.last_call >= self.options.settle_s:
                    await self.flush()
            return task.result()
        finally:
            if not task.done():
                task.cancel()

    async def flush(self) -> None:
        """Send every waiting line (one job per model and ``max_lines``) until each has its reply
        or has failed ``line_attempts`` jobs; follow the jobs a previous run left unfinished first."""
        for model, group in list(self.waiting.items()):
            client = self.client_for(model.inner)
            for stored in self.store.jobs(self.experiment_id, unfinished=True):
                if stored.model == model.identity:
                    await self.follow(client, stored.id, stored.wave, stored.lines, group)
            self.resolve_stored(group)
            while group:
                self.wave += 1
                lines = list(group.values())
                chunks = [lines[i : i + self.options.max_lines] for i in range(0, len(lines), self.options.max_lines)]
                sent = []
                for chunk in chunks:
                    file_id = await client.upload(request_line(w.custom_id, w.body) for w in chunk)
                    job = await client.create(file_id, metadata={"experiment": self.experiment_id[:64], "wave": str(self.wave)})
                    self.store.put_job(self.experiment_id, model.identity, self.wave, job, [w.custom_id for w in chunk])
                    self.jobs_sent += 1
                    sent.append((job.id, chunk))
                for job_id, chunk in sent:
                    errors = await self.follow(client, job_id, self.wave, [w.custom_id for w in chunk], group)
                    for line in chunk:
                        if line.custom_id in group:  # no reply: into the next job, or failed for good
                            line.attempts += 1
                            line.errors.append(errors.get(line.custom_id, "the job brought no reply for the line"))
                            if line.attempts >= self.options.line_attempts:
                                del group[line.custom_id]
                                detail = "; ".join(line.errors)
                                line.future.set_exception(RetryableModelError(f"Batch line {line.custom_id} failed in {line.attempts} jobs: {detail}"))

    def resolve_stored(self, group: dict[str, _Waiting]) -> None:
        for custom_id in list(group):
            body = self.store.reply(self.experiment_id, custom_id)
            if body is not None:
                line = group.pop(custom_id)
                if not line.future.done():
                    line.future.set_result(body)

    async def follow(self, client: BatchClient, job_id: str, wave: int, lines: Sequence[str], group: dict[str, _Waiting]) -> dict[str, str]:
        """Poll a job until it is finished, keep its replies, hand them to the lines that wait;
        the errors of its lines that brought no reply, by custom id."""
        purposes = tuple(sorted({custom_id.split("-", 1)[0] for custom_id in lines}))
        while True:
            job = await self.poll(client, job_id)
            self.store.update_job(job)
            c = job.request_counts
            self.emit(BatchProgress(wave=wave, job_id=job.id, status=job.status, purposes=purposes, done=c.completed, failed=c.failed, total=c.total))
            if job.finished:
                break
            await asyncio.sleep(self.options.poll_s)
        results = await client.results(job)
        self.store.put_replies(self.experiment_id, {r.custom_id: r.body for r in results if r.body is not None})
        self.store.update_job(job, collected=True)
        self.resolve_stored(group)
        errors = {r.custom_id: r.error or "" for r in results if r.body is None}
        unrun = f"the job was {job.status} before it ran the line" if not job.completed else "the job brought no reply for the line"
        return {cid: errors.get(cid, unrun) for cid in lines}

    async def poll(self, client: BatchClient, job_id: str) -> BatchJob:
        """The job now; a failed poll is tried again after ``poll_s`` (a few times)."""
        for attempt in range(5):
            try:
                return await client.get(job_id)
            except BatchAPIError as exc:
                if not exc.retryable or attempt == 4:
                    raise
                await asyncio.sleep(self.options.poll_s)
        raise EvaluationError("unreachable")  # pragma: no cover


__all__ = ["BatchOptions", "BatchProgress", "BatchStore", "BatchWaves", "BatchedModel", "StoredJob"]
