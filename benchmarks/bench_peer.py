"""A global query side by side with Microsoft GraphRAG 3.3.0 (``graphrag.api.global_search``).

Both answer one question over the same index (the 20,000-community output that
``benchmarks/synthetic_msgraphrag.py`` scales from a real one), at the same level, with budgets
12,000 and 8 calls in flight, against the same fake OpenAI-compatible server
(``benchmarks/fake_openai_server.py``: instant replies each side accepts, every prompt counted
with o200k_base). Prints, per side, the time to open the index, the query's time, the model calls
and the largest prompt in the server's count, then the ratios.

This engine runs twice: with the map texts the peer reads (the reports alone: claims and source
excerpts off) and with its defaults (claims and excerpts in). Its tokenizer is the default,
``auto``, which counts exactly (o200k_base) against a real endpoint; ``--heuristic`` adds a run
with the spec's estimate.

The peer is never a dependency: ``--peer`` installs it (``pip install graphrag==3.3.0``) into its
own virtual environment, ``benchmarks/.venv-peer`` (git-ignored) or ``--venv DIR``, once, and runs
it there. Its tokenizer (tiktoken) would download o200k_base at run time; the benchmark writes the
encoding that ships inside bpe-openai into tiktoken's cache first, so nothing is downloaded.

    python benchmarks/bench_peer.py [--peer] [--venv DIR] [--level 2] [--heuristic]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from synthetic_msgraphrag import DEFAULT_SOURCE, default_out, write_scaled  # noqa: E402

from graphrag_core import GlobalSearchRequest, retrieve_global  # noqa: E402
from graphrag_core.index import load_index  # noqa: E402
from graphrag_core.llm.openai_model import OpenAIChatModel  # noqa: E402
from graphrag_core.llm.settings import ModelSettings  # noqa: E402

PEER = "graphrag==3.3.0"
QUESTION = "What are the main themes of this story?"
BUDGET = 12_000
CONCURRENCY = 8
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
"""Where tiktoken would fetch an encoding from: its cache file is named by this address's sha1."""

PEER_SCRIPT = r'''
import asyncio, json, sys, time
started = time.perf_counter()
import pandas as pd
import graphrag.api as api
from graphrag.config.models.graph_rag_config import GraphRagConfig
imported = time.perf_counter() - started
folder, base_url, level, budget, concurrency, question, root = sys.argv[1:8]
config = GraphRagConfig(
    completion_models={"default_completion_model": {
        "model_provider": "openai", "model": "gpt-4o-mini", "api_base": base_url, "api_key": "not-needed",
    }},
    embedding_models={"default_embedding_model": {
        "model_provider": "openai", "model": "text-embedding-3-small", "api_base": base_url, "api_key": "not-needed",
    }},
    concurrent_requests=int(concurrency),
    global_search={"max_context_tokens": int(budget), "data_max_tokens": int(budget)},
    reporting={"base_dir": root}, output_storage={"base_dir": root}, cache={"storage": {"base_dir": root}},
)
started = time.perf_counter()
entities = pd.read_parquet(f"{folder}/entities.parquet")
communities = pd.read_parquet(f"{folder}/communities.parquet")
reports = pd.read_parquet(f"{folder}/community_reports.parquet")
opened = time.perf_counter() - started
started = time.perf_counter()
answer, context = asyncio.run(api.global_search(
    config=config, entities=entities, communities=communities, community_reports=reports,
    community_level=int(level), dynamic_community_selection=False, response_type="multiple paragraphs", query=question,
))
queried = time.perf_counter() - started
print(json.dumps({"import_s": imported, "open_s": opened, "query_s": queried, "answer": str(answer)[:200]}))
'''


def start_server() -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([sys.executable, str(HERE / "fake_openai_server.py")], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def server_stats(base_url: str, *, reset: bool = False) -> dict:
    root = base_url.rsplit("/v1", 1)[0]
    if reset:
        urllib.request.urlopen(urllib.request.Request(root + "/reset", data=b"{}", method="POST")).read()
        return {}
    return json.loads(urllib.request.urlopen(root + "/stats").read())


def ours(folder: Path, base_url: str, level: int, *, summaries_only: bool, tokenizer: str = "auto") -> dict:
    server_stats(base_url, reset=True)
    started = time.perf_counter()
    index = load_index(folder)
    opened = time.perf_counter() - started
    request = GlobalSearchRequest(
        query=QUESTION, community_level=level, map_token_budget=BUDGET, reduce_token_budget=BUDGET, map_concurrency=CONCURRENCY,
        include_claims=not summaries_only, include_sources=not summaries_only, tokenizer=tokenizer, seed=1,
    )
    model = OpenAIChatModel(ModelSettings(provider="openai", base_url=base_url, model="gpt-4o-mini", api_key="not-needed"))
    started = time.perf_counter()
    result = asyncio.run(retrieve_global(index, request, model))
    queried = time.perf_counter() - started
    stats = server_stats(base_url)
    return {"open_s": opened, "query_s": queried, "calls": stats["calls"], "largest_prompt": max(stats["prompt_tokens"], default=0),
            "peak_in_flight": stats["peak_in_flight"], "status": str(result.status)}


def seed_tiktoken_cache(cache: Path) -> None:
    """Write o200k_base and cl100k_base (the copies inside bpe-openai's wheel) where tiktoken
    looks before downloading."""
    import bpe_openai

    cache.mkdir(parents=True, exist_ok=True)
    for name in ("o200k_base", "cl100k_base"):
        packed = Path(bpe_openai.__file__).parent / "data" / f"{name}.tiktoken.gz"
        target = cache / hashlib.sha1(TIKTOKEN_URL.format(name=name).encode()).hexdigest()
        if not target.exists():
            data = gzip.decompress(packed.read_bytes())
            base64.b64decode(data.split(b"\n", 1)[0].split()[0])  # a tiktoken file: a base64 token and its rank per line
            target.write_bytes(data)


def ensure_peer(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"installing {PEER} into {venv} (once) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    check = subprocess.run([str(python), "-c", "import graphrag.api"], capture_output=True)
    if check.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", PEER], check=True)
    return python


def peer(python: Path, folder: Path, base_url: str, level: int) -> dict:
    server_stats(base_url, reset=True)
    with tempfile.TemporaryDirectory() as work:
        cache = Path(work) / "tiktoken"
        seed_tiktoken_cache(cache)
        environment = {
            **os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "OPENAI_API_KEY": "not-needed", "GRAPHRAG_API_KEY": "not-needed",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm would fetch its model prices at import
        }
        environment.pop("PYTHONPATH", None)
        done = subprocess.run(
            [str(python), "-c", PEER_SCRIPT, str(folder), base_url, str(level), str(BUDGET), str(CONCURRENCY), QUESTION, work],
            capture_output=True, text=True, env=environment, cwd=work,
        )
    if done.returncode != 0:
        raise SystemExit(f"the peer failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    stats = server_stats(base_url)
    figures.update(calls=stats["calls"], largest_prompt=max(stats["prompt_tokens"], default=0), peak_in_flight=stats["peak_in_flight"])
    return figures


def line(label: str, figures: dict) -> str:
    return (f"  {label:44s} open {figures['open_s']:6.2f} s  query {figures['query_s']:6.2f} s  "
            f"calls {figures['calls']:5d}  largest prompt {figures['largest_prompt']:6,d} (o200k)  in flight <= {figures['peak_in_flight']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", action="store_true", help=f"install {PEER} into its own environment (once) and run it too")
    parser.add_argument("--venv", type=Path, default=HERE / ".venv-peer", help="the peer's virtual environment")
    parser.add_argument("--level", type=int, default=2)
    parser.add_argument("--heuristic", action="store_true", help="also run this engine with the spec's estimate")
    parser.add_argument("--out", type=Path, default=None, help="where the synthetic output is (made when missing)")
    parser.add_argument("--index", type=Path, default=None, help="another Microsoft GraphRAG v2/v3 output instead of the synthetic one")
    args = parser.parse_args()
    folder = args.index or args.out or default_out(20_000)
    if args.index is None:
        write_scaled(DEFAULT_SOURCE, folder, communities=20_000)
    python = ensure_peer(args.venv) if args.peer else None
    server, base_url = start_server()
    try:
        print(f"{folder.name}, level {args.level}, budgets {BUDGET:,}, concurrency {CONCURRENCY}, fake server {base_url}")
        rows = {"reports only": ours(folder, base_url, args.level, summaries_only=True)}
        print(line("this engine, reports only (as the peer reads)", rows["reports only"]), flush=True)
        rows["defaults"] = ours(folder, base_url, args.level, summaries_only=False)
        print(line("this engine, claims and excerpts in (defaults)", rows["defaults"]), flush=True)
        if args.heuristic:
            rows["heuristic"] = ours(folder, base_url, args.level, summaries_only=True, tokenizer="heuristic")
            print(line("this engine, reports only, the estimate", rows["heuristic"]), flush=True)
        if python is not None:
            rows["peer"] = peer(python, folder, base_url, args.level)
            print(line(f"{PEER} (graphrag.api.global_search)", rows["peer"]), flush=True)
            mine, theirs = rows["reports only"], rows["peer"]
            print(f"  ratios (this engine / peer, reports only): open {mine['open_s'] / theirs['open_s']:.2f}x, "
                  f"query {mine['query_s'] / theirs['query_s']:.2f}x, first query (open + query) "
                  f"{(mine['open_s'] + mine['query_s']) / (theirs['open_s'] + theirs['query_s']):.2f}x")
        budget_prompt = BUDGET - 512
        print(f"  no prompt over its budget in o200k: {'yes' if rows['reports only']['largest_prompt'] <= BUDGET and rows['defaults']['largest_prompt'] <= BUDGET else 'NO'} "
              f"(map prompt budget {budget_prompt:,}, reduce {BUDGET - 1024:,})")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
