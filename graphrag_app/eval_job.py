"""An evaluation running beside the Streamlit script, in its own thread and event loop.

The same pattern as :mod:`graphrag_app.runner` (a daemon thread, a loop of its own, models
built inside it, the page following the handle across reruns), for an experiment instead of
one search. Stop is graceful: the experiment checks between items and ends with what it made;
everything made so far is already in the evaluation store, so starting again resumes.
No streamlit import here.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from graphrag_core.cache import MapCache
from graphrag_core.evaluation import EvalProgress, EvaluationStore, ExperimentResult, ExperimentSpec, run_experiment
from graphrag_core.llm.base import ChatModel
from graphrag_core.models import Index
from graphrag_core.store import RunStore

ModelFactory = Callable[[], ChatModel]


@dataclass
class EvalJob:
    """An experiment in progress: its latest progress per stage, its result or error, and Stop."""

    spec: ExperimentSpec
    started_at: float = field(default_factory=time.monotonic)
    progress: dict[str, EvalProgress] = field(default_factory=dict)
    result: ExperimentResult | None = None
    error: str | None = None
    _done: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    def request_stop(self) -> None:
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

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

    async def main() -> None:
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

    def work() -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(main())
        except Exception as exc:  # noqa: BLE001 - the app boundary: any failure becomes a shown error
            job.error = f"{type(exc).__name__}: {exc}"
        finally:
            loop.close()
            job._done.set()

    threading.Thread(target=work, name="graphrag-eval", daemon=True).start()
    return job


__all__ = ["EvalJob", "start_evaluation"]
