"""A cold command line: ``query`` with the offline model, in fresh interpreters.

For each variant (the default tokenizer, then ``--tokenizer o200k_base``) runs
``python -X importtime -m graphrag_core query jargon ...`` ``--runs`` times and prints the median
wall time, the median import time of the command line, the largest imports, and which heavy
packages were loaded (an offline query with the estimate should load neither the exact encoder,
the OpenAI SDK nor scipy).

    python benchmarks/bench_cold_cli.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("bpe_openai", "openai", "scipy", "pyarrow", "networkx", "pydantic")
LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def cold_query(extra: list[str], store: Path) -> tuple[float, dict[str, int]]:
    """One cold run: its wall time and the cumulative import time (µs) of each top-level module."""
    command = [sys.executable, "-X", "importtime", "-m", "graphrag_core", "query", "jargon", "What are the main themes?",
               "--level", "1", "--seed", "7", "--no-cache", "--store", str(store), *extra]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    tops: dict[str, int] = {}
    for line in done.stderr.splitlines():
        match = LINE.match(line)
        if match:
            name = match[4]
            top = name.split(".")[0]
            tops[top] = max(tops.get(top, 0), int(match[2])) if len(match[3]) // 2 <= 8 else tops.get(top, 0)
            tops.setdefault(name, int(match[2]))
    return elapsed, tops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "runs.sqlite3"
        for label, extra in (("default tokenizer (offline: the estimate)", []), ("--tokenizer o200k_base", ["--tokenizer", "o200k_base"])):
            runs = [cold_query(extra, store) for _ in range(args.runs)]
            wall = statistics.median(r[0] for r in runs)
            cli = statistics.median(r[1].get("graphrag_cli.main", 0) for r in runs) / 1e6
            last = runs[-1][1]
            loaded = [name for name in HEAVY if name in last]
            biggest = sorted(((us, name) for name, us in last.items() if "." not in name and name not in ("graphrag_cli", "graphrag_core")), reverse=True)[:5]
            print(f"{label}: wall {wall:.2f} s, command line imports {cli:.2f} s (median of {args.runs})")
            print(f"  heavy packages loaded: {', '.join(loaded) or 'none'}; not loaded: {', '.join(n for n in HEAVY if n not in last) or 'none'}")
            print("  largest imports: " + ", ".join(f"{name} {us / 1e6:.2f} s" for us, name in biggest))


if __name__ == "__main__":
    main()
