"""Splitting one huge community summary into budgeted parts (issue 10: a 400 MB summary once
took 13 minutes in ``_split_parts``). Prints the time and the throughput; splitting is linear
in the text's length, so the MB/s figure should not fall as --mb grows.

    python benchmarks/bench_split_large.py [--mb 40] [--budget 8000]
"""

from __future__ import annotations

import argparse
import time

from graphrag_core.batching import MapText, _Fitter, _split_parts
from graphrag_core.prompts import map_prompt_skeleton
from graphrag_core.tokens import get_tokenizer

PARAGRAPH = "The hacker ethic holds that information should be free. 黑客文化强调分享知识与动手实践。\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=40.0, help="summary size in millions of code points")
    parser.add_argument("--budget", type=int, default=8000)
    args = parser.parse_args()
    size = int(args.mb * 1_000_000)
    text = (PARAGRAPH * (size // len(PARAGRAPH) + 1))[:size]
    fitter = _Fitter(map_prompt_skeleton("What are the main themes?"), args.budget - 512, get_tokenizer())
    for mb in (args.mb / 4, args.mb):
        body = text[: int(mb * 1_000_000)]
        started = time.perf_counter()
        parts = _split_parts(MapText(community_id="huge", text=body), fitter)
        elapsed = time.perf_counter() - started
        print(f"{mb:8.1f} M code points -> {len(parts):7d} parts in {elapsed:7.2f} s ({mb / elapsed:6.1f} M code points/s)")


if __name__ == "__main__":
    main()
