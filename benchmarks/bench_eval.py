"""An offline evaluation: 10 questions x 4 conditions, answered, judged pairwise, then rerun.

Uses a bundled sample's question set and the offline model (answers and heuristic judge) in a
fresh temporary store and map cache. Prints the time and model calls of each stage, the same
for a second run over the same store (which should reuse everything: no calls), and the
estimate made beforehand.

    python benchmarks/bench_eval.py [--sample jargon|zh-tea] [--seeds 1] [--questions 10]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from pathlib import Path

from graphrag_core.cache import SqliteMapCache
from graphrag_core.evaluation.questions import bundled_question_set
from graphrag_core.evaluation import Condition, EvaluationStore, ExperimentSpec, estimate_experiment, load_questions, run_experiment
from graphrag_core.index import load_index
from graphrag_core.llm.base import ChatRequest, ChatResponse
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.samples import sample_path

CONDITIONS = ("C0:level=0", "C1:level=1", "C0-small:level=0,map_budget=2000", "C1-stop:level=1,strategy=stop")


class Counting:
    """The offline model, counting calls by purpose."""

    def __init__(self) -> None:
        self._model = OfflineChatModel()
        self.identity = self._model.identity
        self.calls: Counter[str] = Counter()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls[request.purpose] += 1
        return await self._model.complete(request)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", default="jargon", choices=("jargon", "zh-tea"))
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--questions", type=int, default=10)
    args = parser.parse_args()

    index = load_index(sample_path(args.sample))
    questions = load_questions(bundled_question_set(args.sample))[: args.questions]
    spec = ExperimentSpec(
        questions=questions,
        conditions=[Condition.parse(c) for c in CONDITIONS],
        seeds=[int(s) for s in args.seeds.split(",")],
    )
    estimate = estimate_experiment(index, spec)
    print(f"{args.sample}: {len(questions)} questions x {len(spec.conditions)} conditions x {len(spec.seeds)} seeds")
    print(f"estimate: {estimate}")
    with tempfile.TemporaryDirectory() as folder:
        store = EvaluationStore(Path(folder) / "eval.sqlite3")
        cache = SqliteMapCache(Path(folder) / "cache.sqlite3")
        for label in ("first run", "rerun (resume)"):
            counting = Counting()
            marks: dict[str, float] = {}
            started = time.perf_counter()

            def on_progress(progress) -> None:  # noqa: ANN001
                marks[progress.stage] = time.perf_counter() - started

            result = asyncio.run(run_experiment(index, spec, counting, counting, store=store, cache=cache, on_progress=on_progress))
            total = time.perf_counter() - started
            print(
                f"{label}: {total:.2f} s (answers done at {marks.get('answers', 0):.2f} s); "
                f"model calls {sum(counting.calls.values())} {dict(counting.calls)}; "
                f"judgments {len(result.judgments)}, judge calls recorded {result.judge_calls}"
            )


if __name__ == "__main__":
    main()
