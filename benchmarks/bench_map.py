"""The map phase with a fake model of fixed latency: wall time over the ideal schedule.

400 batches at concurrency 16 with a 20 ms model: the ideal is ceil(400 / 16) x 20 ms = 500 ms.
Prints the measured time and the ratio. Target: at most 1.15.

    python benchmarks/bench_map.py [--batches 400] [--concurrency 16] [--latency-ms 20]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import time

from graphrag_core import ScriptedChatModel, SummaryBatch, run_global_map


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    batches = [
        SummaryBatch(content=f"[Community ID: {i} | summary part 1]\nsummary text {i}", community_ids=(str(i),))
        for i in range(args.batches)
    ]
    latency = args.latency_ms / 1000
    ideal = math.ceil(args.batches / args.concurrency) * latency

    best = float("inf")
    for _ in range(args.repeat):
        model = ScriptedChatModel('{"answer": "points", "usefulness": 42}', latency=latency)
        start = time.perf_counter()
        result = asyncio.run(run_global_map("q", batches, model, concurrency=args.concurrency))
        best = min(best, time.perf_counter() - start)
        assert len(result.answers) == args.batches and model.max_in_flight == args.concurrency
    print(f"batches: {args.batches}, concurrency: {args.concurrency}, model latency: {args.latency_ms:.0f} ms")
    print(f"ideal: {ideal * 1000:.0f} ms; measured: {best * 1000:.0f} ms (best of {args.repeat})")
    print(f"ratio: {best / ideal:.3f} (target <= 1.15)")


if __name__ == "__main__":
    main()
