"""Drawing the run charts of a 1,000-batch run, and running a 1,000-batch offline search.

Prints how long ``usefulness_figure``, ``timeline_figure`` and ``reduce_figure`` take on the
replayed state of a 1,000-batch run (target: well under 2 s together), and how long a
1,000-batch global search over the jargon sample takes with the offline model (target: under
60 s). The tests check what these produce; the times live here, since a shared test machine
cannot promise them.

    python benchmarks/bench_charts.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from graphrag_app.explore import charts
from graphrag_core import GlobalSearchRequest, retrieve_global
from graphrag_core.events import BatchesPlanned, MapBatchStarted, MapBatchSucceeded, PlannedBatch, RunStarted
from graphrag_core.index import load_index
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.samples import sample_path
from graphrag_core.state import RunState

BATCHES = 1000


def thousand_batch_state() -> RunState:
    request = GlobalSearchRequest(query="q", seed=1)
    events: list = [RunStarted(run_id="r", request=request, seed=1, model="m", tokenizer="heuristic")]
    planned = tuple(PlannedBatch(index=i, community_ids=(str(i),), token_estimate=100) for i in range(BATCHES))
    events.append(BatchesPlanned(batches=planned, map_prompt_budget=7488, concurrency=8))
    for i in range(BATCHES):
        events.append(MapBatchStarted(at=i * 0.01, batch_index=i, attempt=1))
        events.append(MapBatchSucceeded(at=i * 0.01 + 0.05, batch_index=i, answer="a", usefulness=i % 100, attempt=1, duration_s=0.05))
    return RunState.replay(events)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    state = thousand_batch_state()
    best = float("inf")
    for _ in range(args.repeat):
        started = time.perf_counter()
        charts.usefulness_figure(state), charts.timeline_figure(state), charts.reduce_figure(state)
        best = min(best, time.perf_counter() - started)
    print(f"charts of a {BATCHES}-batch run: {best:.3f} s (best of {args.repeat}; target < 2 s)")

    index = load_index(sample_path("jargon"))
    request = GlobalSearchRequest(query="What is a hacker?", seed=5, map_token_budget=700, map_output_reserve=0)
    started = time.perf_counter()
    result = asyncio.run(retrieve_global(index, request, OfflineChatModel()))
    took = time.perf_counter() - started
    print(f"offline search, {result.diagnostics.batch_count} batches: {took:.1f} s, status {result.status} (target < 60 s)")


if __name__ == "__main__":
    main()
