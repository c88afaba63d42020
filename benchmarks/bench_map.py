"""The map phase with a fake model of fixed latency: wall time over the ideal schedule.

400 batches at concurrency 16 with a 20 ms model: the ideal is ceil(400 / 16) x 20 ms = 500 ms.
Prints the measured time and its ratio to the ideal (target: at most 1.05), and the floor: the
same schedule of bare ``asyncio.sleep`` calls under a semaphore, which shows how much of the gap is
the event loop's own timer slack on this machine rather than the engine.

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

    async def floor_schedule() -> None:
        slot = asyncio.Semaphore(args.concurrency)

        async def one() -> None:
            async with slot:
                await asyncio.sleep(latency)

        await asyncio.gather(*(one() for _ in range(args.batches)))

    floor = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        asyncio.run(floor_schedule())
        floor = min(floor, time.perf_counter() - start)

    best = float("inf")
    for _ in range(args.repeat):
        model = ScriptedChatModel('{"answer": "points", "usefulness": 42}', latency=latency)
        start = time.perf_counter()
        result = asyncio.run(run_global_map("q", batches, model, concurrency=args.concurrency))
        best = min(best, time.perf_counter() - start)
        assert len(result.answers) == args.batches and model.max_in_flight == args.concurrency
    print(f"batches: {args.batches}, concurrency: {args.concurrency}, model latency: {args.latency_ms:.0f} ms")
    print(f"ideal: {ideal * 1000:.0f} ms; measured: {best * 1000:.0f} ms (best of {args.repeat})")
    print(f"floor (bare asyncio.sleep schedule): {floor * 1000:.0f} ms, {floor / ideal:.3f} x ideal")
    print(f"ratio: {best / ideal:.3f} (target <= 1.05); engine overhead over the floor: {best / floor:.3f}")


if __name__ == "__main__":
    main()
