"""Benchmark: the SQLite map cache's ``put`` and ``get``, as a 1,000-batch run uses them.

Prints the mean time of a put (one 500-character reply) and of a get over ``--entries`` keys in
a fresh file (target: a few ms each, so the cache adds seconds, not a minute, to a 1,000-batch
run; a put that waits for the disk costs about 20 ms).

    python benchmarks/bench_cache.py [--entries 1000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from graphrag_core.cache import SqliteMapCache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cache = SqliteMapCache(Path(folder) / "cache.sqlite3")
        started = time.perf_counter()
        for i in range(args.entries):
            cache.put(f"key-{i}", "x" * 500)
        put_s = (time.perf_counter() - started) / args.entries
        started = time.perf_counter()
        for i in range(args.entries):
            cache.get(f"key-{i}")
        get_s = (time.perf_counter() - started) / args.entries
    print(f"map cache, {args.entries} entries: put {put_s * 1000:.2f} ms, get {get_s * 1000:.2f} ms (mean)")


if __name__ == "__main__":
    main()
