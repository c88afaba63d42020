"""Benchmark: aligning two answers point by point (Compare, Evaluate's drill-down), against
computing ROUGE-L for every pair of points (what the alignment skips with its bound).

    PYTHONPATH=$PWD python benchmarks/bench_answer_points.py

Prints, per answer size, the seconds to align two answers (English words and Chinese
characters, half their points shared) and the ratio to the all-pairs ROUGE-L.
"""

from __future__ import annotations

import random
import time

from graphrag_core.answer_points import align_answers, answer_points
from graphrag_core.evaluation.claims import rouge_l_f1

WORDS = [f"term{i}" for i in range(400)]
CHARACTERS = [chr(0x4E00 + i) for i in range(600)]


def english(rng: random.Random, points: int) -> str:
    return "\n".join("- " + " ".join(rng.choice(WORDS) for _ in range(30)) + f" [Data: Reports ({i})]." for i in range(points))


def chinese(rng: random.Random, points: int) -> str:
    return "\n".join("- " + "".join(rng.choice(CHARACTERS) for _ in range(60)) + f"。 [Data: Reports ({i})]" for i in range(points))


def all_pairs(left: str, right: str) -> None:
    ours, theirs = answer_points(left), answer_points(right)
    [rouge_l_f1(a.plain, b.plain) for a in ours for b in theirs]


def seconds(work) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    rng = random.Random(7)
    print(f"{'text':<8}{'points':>8}{'aligned (s)':>14}{'all pairs (s)':>16}{'ratio':>8}")
    for name, make in (("english", english), ("chinese", chinese)):
        for points in (10, 30, 60):
            left, right = make(rng, points), make(rng, points)
            right = "\n".join(left.splitlines()[: points // 2] + right.splitlines()[points // 2 :])
            aligned = seconds(lambda: align_answers(left, right))
            full = seconds(lambda: all_pairs(left, right))
            print(f"{name:<8}{points:>8}{aligned:>14.3f}{full:>16.3f}{full / aligned:>8.1f}")


if __name__ == "__main__":
    main()
