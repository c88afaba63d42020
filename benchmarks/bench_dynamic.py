"""Dynamic community selection against each fixed level, on the Jargon sample with the offline model.

For a few questions, prints the model calls and the tokens (as the offline model reports them:
the heuristic estimate of each prompt and reply) of dynamic selection and of every fixed level
and leaf, with the summaries the map read. Dynamic selection's cost is split into rating and
map + reduce. No cache, so every figure is a real call count.

    python benchmarks/bench_dynamic.py [--index jargon] [--threshold 1] [--repeats 1]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from graphrag_core import GlobalSearchRequest, GlobalSearchResult, retrieve_global
from graphrag_core.index import load_index
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.samples import sample_path

QUESTIONS = (
    "Who are the wizards?",
    "What do hackers call a clever but ugly fix?",
    "What is the hacker attitude towards Microsoft?",
    "What are the main themes of this corpus?",
)


def run(index, request: GlobalSearchRequest) -> tuple[GlobalSearchResult, float]:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = asyncio.run(retrieve_global(index, request, OfflineChatModel()))
    return result, time.perf_counter() - started


def row(label: str, result: GlobalSearchResult, seconds: float) -> str:
    d = result.diagnostics
    calls = d.rating_calls + d.map_calls + d.reduce_calls
    return (
        f"  {label:<10} {result.status:<10} {d.summary_count:>9} {d.rating_calls:>7} {d.map_calls + d.reduce_calls:>9} {calls:>6}"
        f" {d.rating_usage.total_tokens:>10,} {d.usage.total_tokens - d.rating_usage.total_tokens:>12,} {d.usage.total_tokens:>10,} {seconds:>7.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default="jargon")
    parser.add_argument("--threshold", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    index = load_index(sample_path(args.index))
    print(f"index {args.index}: {len(index.communities)} communities, levels {dict(index.levels())}; offline model, no cache")
    header = f"  {'selection':<10} {'status':<10} {'summaries':>9} {'rating':>7} {'map+red.':>9} {'calls':>6} {'rating tok':>10} {'map+red. tok':>12} {'total tok':>10} {'seconds':>7}"
    totals: dict[str, list[int]] = {}
    for question in QUESTIONS:
        print(f"\n{question}")
        print(header)
        choices: list[tuple[str, GlobalSearchRequest]] = [
            ("dynamic", GlobalSearchRequest(query=question, community_selection="dynamic", rating_threshold=args.threshold, rating_repeats=args.repeats, seed=1))
        ]
        choices += [(f"level {level}", GlobalSearchRequest(query=question, community_level=level, seed=1)) for level in index.levels()]
        choices.append(("leaf", GlobalSearchRequest(query=question, seed=1)))
        for label, request in choices:
            result, seconds = run(index, request)
            print(row(label, result, seconds))
            d = result.diagnostics
            total = totals.setdefault(label, [0, 0])
            total[0] += d.rating_calls + d.map_calls + d.reduce_calls
            total[1] += d.usage.total_tokens
    print(f"\nover {len(QUESTIONS)} questions (calls, total tokens):")
    for label, (calls, tokens) in totals.items():
        print(f"  {label:<10} {calls:>6} calls {tokens:>12,} tokens")


if __name__ == "__main__":
    main()
