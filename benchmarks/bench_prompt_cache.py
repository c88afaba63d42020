"""Prompts a provider can cache: how much of a second question's map prompts an endpoint serves
from its prompt cache, with and without ``question_reserve``, and what that does to wall time.

The endpoint is ``benchmarks/fake_openai_server.py`` with ``--prompt-cache`` (OpenAI's rule:
a shared prefix from 1,024 tokens, in steps of 128, reported as
``prompt_tokens_details.cached_tokens``) and a prefill pace per uncached token, as a local
llama.cpp or vLLM server spends computing what it has not cached. For each layout the server
starts cold, answers question A, then question B at the same index, level and seed; printed:
B's map prompt tokens, the share served from the cache, and B's wall time against A's.

    PYTHONPATH=$PWD python benchmarks/bench_prompt_cache.py [--index jargon] [--level 1] [--prefill-ms-per-1k 20]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_openai_server import serve  # noqa: E402

from graphrag_core import GlobalSearchRequest, retrieve_global  # noqa: E402
from graphrag_core.index import load_index  # noqa: E402
from graphrag_core.llm.openai_model import OpenAIChatModel  # noqa: E402
from graphrag_core.llm.settings import ModelSettings  # noqa: E402
from graphrag_core.samples import SAMPLES  # noqa: E402

QUESTIONS = ("What are the main themes of this corpus?", "Which people and organisations matter most, and why?")


def ask(index, question: str, *, base_url: str, level: int, reserve: int, seed: int) -> tuple[float, int, int, int]:
    """One run: its wall time, its map prompt tokens, the cached part, its map batches."""
    request = GlobalSearchRequest(
        query=question, community_level=level, seed=seed, question_reserve=reserve, tokenizer="heuristic", map_concurrency=4,
    )
    model = OpenAIChatModel(ModelSettings(provider="openai", base_url=base_url, model="gpt-4o-mini", api_key="not-needed"))
    started = time.perf_counter()
    result = asyncio.run(retrieve_global(index, request, model))
    took = time.perf_counter() - started
    usage = result.diagnostics.map_usage
    return took, usage.prompt_tokens, usage.cached_tokens, result.diagnostics.batch_count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default="jargon", help="a bundled sample's name or an index folder")
    parser.add_argument("--level", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--prefill-ms-per-1k", type=float, default=20.0, help="the server's wait per 1,000 uncached prompt tokens")
    args = parser.parse_args()
    index = load_index(SAMPLES.get(args.index, args.index))
    print(f"index {args.index}, level {args.level}, seed {args.seed}; server: prompt cache, {args.prefill_ms_per_1k:g} ms per 1,000 uncached prompt tokens")
    for reserve, layout in ((0, "question first, batches packed around it (question_reserve 0)"), (256, "data first, question last (question_reserve 256)")):
        server = serve(prompt_cache=True, prefill_ms_per_1k=args.prefill_ms_per_1k)  # a cold cache for each layout
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        try:
            a = ask(index, QUESTIONS[0], base_url=base_url, level=args.level, reserve=reserve, seed=args.seed)
            b = ask(index, QUESTIONS[1], base_url=base_url, level=args.level, reserve=reserve, seed=args.seed)
        finally:
            server.shutdown()
            server.server_close()
        share = b[2] / b[1] if b[1] else 0.0
        print(f"{layout}:")
        print(f"  question A: {a[3]} batches, {a[1]:,} map prompt tokens, {a[0]:.2f} s")
        print(f"  question B: {b[3]} batches, {b[1]:,} map prompt tokens, {b[2]:,} cached ({share:.1%}), {b[0]:.2f} s "
              f"(B/A wall time {b[0] / a[0]:.2f})")


if __name__ == "__main__":
    main()
