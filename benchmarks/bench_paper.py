"""The paper's experiment, offline, on both bundled samples: every level, TS, SS and dynamic
selection (``eval --preset paper``) over each sample's question set, answered and judged by the
offline model, in a fresh store and map cache.

Prints, per sample and condition, what the GraphRAG paper's Table 2 reports: the units read per
answer (community summaries, or source chunks), the prompt tokens per answer and their share of
TS's; then the wall time of the answers and of the judgments, and the recommended condition per
criterion (heuristic: the offline judge is not an LLM). The paper's own shares are printed
beside, for the levels it has (its two corpora, about 1M tokens each).

    python benchmarks/bench_paper.py [--samples jargon,zh-tea] [--questions 10] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from graphrag_core.cache import SqliteMapCache
from graphrag_core.evaluation import EvaluationStore, ExperimentSpec, choose, load_questions, paper_conditions, run_experiment
from graphrag_core.evaluation.experiment import EvalProgress
from graphrag_core.evaluation.questions import bundled_question_set
from graphrag_core.index import load_index
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.methods import method_label
from graphrag_core.samples import sample_path

PAPER_SHARES = {
    "podcast": {"C0": 2.6, "C1": 22.2, "C2": 55.8, "C3": 73.5, "TS": 100.0},
    "news": {"C0": 2.3, "C1": 20.7, "C2": 57.4, "C3": 66.8, "TS": 100.0},
}
"""The paper's Table 2 (arXiv 2404.16130v1): each level's context tokens as a % of TS's, on its
podcast transcripts and news articles."""


def run_sample(sample: str, *, questions: int, seed: int) -> None:
    index = load_index(sample_path(sample))
    spec = ExperimentSpec(
        questions=load_questions(bundled_question_set(sample))[:questions], conditions=paper_conditions(index), seeds=[seed], include_aa=False
    )
    stage_ends: dict[str, float] = {}
    started = time.perf_counter()

    def on_progress(progress: EvalProgress) -> None:
        stage_ends[progress.stage] = time.perf_counter() - started

    with tempfile.TemporaryDirectory() as folder:
        store, cache = EvaluationStore(Path(folder) / "e.sqlite3"), SqliteMapCache(Path(folder) / "cache.sqlite3")
        result = asyncio.run(
            run_experiment(index, spec, OfflineChatModel(), OfflineChatModel(), store=store, cache=cache, on_progress=on_progress)
        )
        cache.close()
    total = time.perf_counter() - started
    print(f"\n{sample}: {len(spec.questions)} questions x {len(spec.conditions)} conditions, seed {seed} (offline model and heuristic judge)")
    header = f"{'condition':<10} {'method':<12} {'units/answer':>22} {'prompt tokens/answer':>21} {'share of TS':>12}   paper (podcast / news)"
    print(header)
    print("-" * len(header))
    for cost in result.costs:
        noun = "summaries" if cost.method == "global" else "source chunks"
        paper = " / ".join(f"{PAPER_SHARES[corpus][cost.condition]:.1f}%" for corpus in PAPER_SHARES if cost.condition in PAPER_SHARES[corpus])
        share = "–" if cost.share is None else f"{100 * cost.share:.1f}%"
        print(
            f"{cost.condition:<10} {method_label(cost.method):<12} {cost.units_read:>8,.1f} {noun:<13} {cost.total_prompt_tokens:>21,.0f} {share:>12}   {paper or '–'}"
        )
    by_name = {c.condition: c for c in result.costs}
    if "C0" in by_name and "TS" in by_name and by_name["C0"].total_prompt_tokens:
        print(f"TS / C0 prompt tokens: {by_name['TS'].total_prompt_tokens / by_name['C0'].total_prompt_tokens:.1f}x (the paper: 38x podcast, 43x news)")
    answers_s = stage_ends.get("answers", 0.0)
    print(f"wall time: {total:.1f} s ({answers_s:.1f} s answering {len(result.answers)} answers, {total - answers_s:.1f} s judging {len(result.judgments)} pairs)")
    for choice in choose(result):
        print(f"  {choice.sentence}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", default="jargon,zh-tea")
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for sample in args.samples.split(","):
        run_sample(sample.strip(), questions=args.questions, seed=args.seed)


if __name__ == "__main__":
    main()
