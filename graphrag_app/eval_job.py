"""An evaluation running beside the Streamlit script, in its own thread and event loop.

It runs on :mod:`graphrag_app.runner`'s one job runner (a daemon thread, a loop of its own,
models built inside it, the page following the handle across reruns), for an experiment
instead of one search. Stop is graceful: the experiment checks between items and ends with what it made;
everything made so far is already in the evaluation store, so starting again resumes.
No streamlit import here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from graphrag_core.cache import MapCache
from graphrag_core.evaluation import EvalProgress, EvaluationStore, ExperimentResult, ExperimentSpec, run_experiment
from graphrag_core.llm.base import ChatModel
from graphrag_core.models import Index
from graphrag_core.history import RunStore

from .runner import JobHandle, start_job

ModelFactory = Callable[[], ChatModel]


@dataclass(kw_only=True)
class EvalJob(JobHandle):
    """An experiment in progress on the one job runner (:func:`~graphrag_app.runner.start_job`):
    its latest progress per stage, its result or error, and a graceful Stop."""

    spec: ExperimentSpec
    progress: dict[str, EvalProgress] = field(default_factory=dict)
    result: ExperimentResult | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def request_stop(self) -> None:
        """Ask the experiment to end after the item in hand (it keeps what it made: no cancel)."""
        self._stop.set()

    def snapshot(self) -> dict[str, EvalProgress]:
        with self._lock:
            return dict(self.progress)

    def _on_progress(self, progress: EvalProgress) -> None:
        with self._lock:
            self.progress[progress.stage] = progress


def start_evaluation(
    index: Index,
    spec: ExperimentSpec,
    model_factory: ModelFactory,
    judge_factory: ModelFactory,
    *,
    eval_store_path: Path,
    run_store_path: Path | None,
    cache_factory: Callable[[], MapCache] | None = None,
    index_path: str | None = None,
) -> EvalJob:
    """Start an experiment in a daemon thread and return its job at once."""
    job = EvalJob(spec=spec)

    async def work() -> None:
        model, judge = model_factory(), judge_factory()
        job.result = await run_experiment(
            index,
            spec,
            model,
            judge,
            store=EvaluationStore(eval_store_path),
            cache=cache_factory() if cache_factory is not None else None,
            run_store=RunStore(run_store_path) if run_store_path is not None else None,
            index_path=index_path,
            on_progress=job._on_progress,
            should_stop=lambda: job.stop_requested,
        )

    def failed(exc: BaseException) -> None:
        job.error = f"{type(exc).__name__}: {exc}"

    start_job(job, work, name="graphrag-eval", on_failed=failed)
    return job


__all__ = ["EvalJob", "start_evaluation"]
