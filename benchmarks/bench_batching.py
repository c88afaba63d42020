"""Batching 5,000 map texts of 1-4 kB (mixed English and Chinese) at the default budget.

Prints the time of ``build_summary_batches`` and its ratio against a straightforward reference
implementation of the same algorithm that re-estimates whole strings at every step. The two
must produce identical batches. Target: at least 20x faster than the reference.

    python benchmarks/bench_batching.py [--texts 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import random
import time

from graphrag_core import GlobalSearchRequest, SummaryBatch, build_summary_batches
from graphrag_core.prompts import map_prompt_skeleton

ENGLISH = (
    "The hacker ethic holds that information should be free and that computers can change life for the better. "
    "A kludge is a clever but ugly solution that works anyway. Wizards know how complex systems really work. "
)
CHINESE = "黑客文化强调分享知识与动手实践。社区摘要把相关实体与关系组织成层级结构，便于全局检索。"


def make_texts(n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    texts = []
    for i in range(n):
        target = rng.randint(1000, 4000)  # code points, roughly 1-4 kB
        pieces: list[str] = []
        size = 0
        while size < target:
            piece = ENGLISH if rng.random() < 0.6 else CHINESE
            cut = piece[: rng.randint(20, len(piece))]
            pieces.append(cut)
            size += len(cut)
        texts.append((f"c{i}", "".join(pieces)[:target]))
    return texts


# -- the reference: the same algorithm, estimating whole strings at every step --------------


def reference_estimate(text: str) -> int:
    cjk = sum(1 for ch in text if ord(ch) >= 128)
    ascii_count = len(text) - cjk
    return math.ceil(cjk / 1.8 + ascii_count / 4) if text else 0


def reference_batches(texts, skeleton: str, budget: int, rng: random.Random) -> list[SummaryBatch]:
    def fits(content: str) -> bool:
        return reference_estimate(skeleton + "\n" + content) <= budget

    if not fits(""):
        raise ValueError("Map token budget cannot fit the Map prompt.")
    items = list(texts)
    for i in range(len(items) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        items[i], items[j] = items[j], items[i]
    batches: list[SummaryBatch] = []
    current: list[str] = []
    ids: list[str] = []
    for cid, text in items:
        offset, number = 0, 0
        header = f"[Community ID: {cid} | summary part 9999999]\n"
        while offset < len(text):
            lo, hi = 0, len(text) - offset
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if fits(header + text[offset : offset + mid]):
                    lo = mid
                else:
                    hi = mid - 1
            if lo == 0:
                raise ValueError(f"Map token budget is too small for community summary {cid}.")
            number += 1
            part = f"[Community ID: {cid} | summary part {number}]\n" + text[offset : offset + lo]
            offset += lo
            if current and not fits("\n".join(current + [part])):
                batches.append(SummaryBatch(content="\n".join(current), community_ids=tuple(dict.fromkeys(ids))))
                current, ids = [], []
            current.append(part)
            ids.append(cid)
    if current:
        batches.append(SummaryBatch(content="\n".join(current), community_ids=tuple(dict.fromkeys(ids))))
    return batches


def best_of(repeat: int, fn):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    texts = make_texts(args.texts)
    request = GlobalSearchRequest(query="What are the main themes of this corpus?")
    skeleton = map_prompt_skeleton(request.query)
    budget = request.map_prompt_budget
    kb = sum(len(t.encode()) for _, t in texts) / 1024

    fast_s, fast = best_of(args.repeat, lambda: build_summary_batches(texts, skeleton, budget, rng=random.Random(7)))
    ref_s, ref = best_of(1, lambda: reference_batches(texts, skeleton, budget, random.Random(7)))
    assert fast == ref, "the engine and the reference disagree"
    print(f"texts: {len(texts)} ({kb:,.0f} KiB UTF-8), budget {budget} tokens -> {len(fast)} batches")
    print(f"build_summary_batches: {fast_s * 1000:.1f} ms (best of {args.repeat})")
    print(f"reference:             {ref_s * 1000:.1f} ms")
    print(f"speed-up: {ref_s / fast_s:.1f}x (target >= 20x); batches identical: yes")


if __name__ == "__main__":
    main()
