"""Benchmark: load a large Microsoft GraphRAG (v3 layout) index, and its native copy.

Writes a synthetic index of 20,000 communities (2,000 roots, 6,000 at level 1, 12,000 leaves at
level 2), 200,000 claims, 50,000 text units, 48,000 entities and 60,000 relationships to a temp
folder, then loads it in a fresh child process (so the figures are not inflated by generating
the data) and prints the load time, the peak resident memory (``ru_maxrss``) and, in a second
run, the peak Python heap (``tracemalloc``; slower, so its time is not the one to quote).

    python benchmarks/bench_index_load.py [--keep DIR] [--native]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOTS, PER_ROOT, PER_MID = 2_000, 3, 2
CLAIMS = 200_000
CHUNKS = 50_000
ENTITIES_PER_LEAF = 4
RELATIONSHIPS = 60_000
REPORT_WORDS = 250
CHUNK_WORDS = 150
UNKNOWN_SUBJECT_SHARE = 0.1

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma".split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(WORDS, k=words))


def write_synthetic_v3(folder: Path, *, seed: int = 7) -> dict[str, int]:
    """Write the synthetic GraphRAG v3 tables into ``folder``; return the row count of each."""
    rng = random.Random(seed)
    community, parent, level = [], [], []
    for root in range(ROOTS):
        community.append(root)
        parent.append(-1)
        level.append(0)
    mids = []
    for root in range(ROOTS):
        for _ in range(PER_ROOT):
            mids.append(len(community))
            community.append(len(community))
            parent.append(root)
            level.append(1)
    leaves = []
    for mid in mids:
        for _ in range(PER_MID):
            leaves.append(len(community))
            community.append(len(community))
            parent.append(mid)
            level.append(2)
    n = len(community)

    entity_ids: list[list[str]] = [[] for _ in range(n)]
    unit_ids: list[list[str]] = [[] for _ in range(n)]
    units = [f"unit-{i:06d}" for i in range(CHUNKS)]
    entities = []
    for leaf in leaves:
        for _ in range(ENTITIES_PER_LEAF):
            entities.append(f"ent-{len(entities):06d}")
            entity_ids[leaf].append(entities[-1])
        unit_ids[leaf] = rng.sample(units, 5)
    for child in reversed(range(n)):  # children come after parents, so this fills bottom-up
        if parent[child] >= 0:
            entity_ids[parent[child]].extend(entity_ids[child])
            unit_ids[parent[child]].extend(unit_ids[child])
    titles = [f"ENTITY {i}" for i in range(len(entities))]

    pq.write_table(
        pa.table(
            {
                "id": [f"c-{i}" for i in range(n)],
                "human_readable_id": community,
                "community": community,
                "level": level,
                "parent": parent,
                "title": [f"Community {i}" for i in community],
                "entity_ids": entity_ids,
                "text_unit_ids": unit_ids,
                "size": [len(e) for e in entity_ids],
            }
        ),
        folder / "communities.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "id": [f"r-{i}" for i in range(n)],
                "community": community,
                "level": level,
                "parent": parent,
                "title": [f"Report {i}" for i in community],
                "summary": [_text(rng, 40) for _ in range(n)],
                "full_content": [f"# Report {i}\n\n" + _text(rng, REPORT_WORDS) for i in community],
                "rank": [rng.uniform(0, 10) for _ in range(n)],
            }
        ),
        folder / "community_reports.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "id": entities,
                "title": titles,
                "type": rng.choices(["PERSON", "ORGANIZATION", "GEO", "EVENT"], k=len(entities)),
                "description": [_text(rng, 20) for _ in entities],
            }
        ),
        folder / "entities.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "id": [f"rel-{i}" for i in range(RELATIONSHIPS)],
                "source": rng.choices(titles, k=RELATIONSHIPS),
                "target": rng.choices(titles, k=RELATIONSHIPS),
                "description": [_text(rng, 12) for _ in range(RELATIONSHIPS)],
                "weight": [float(rng.randint(1, 10)) for _ in range(RELATIONSHIPS)],
            }
        ),
        folder / "relationships.parquet",
    )
    subjects = [
        f"UNKNOWN {i}" if rng.random() < UNKNOWN_SUBJECT_SHARE else rng.choice(titles) for i in range(CLAIMS)
    ]
    pq.write_table(
        pa.table(
            {
                "id": [f"claim-{i}" for i in range(CLAIMS)],
                "covariate_type": ["claim"] * CLAIMS,
                "subject_id": subjects,
                "object_id": ["NONE"] * CLAIMS,
                "description": [_text(rng, 25) for _ in range(CLAIMS)],
                "text_unit_id": rng.choices(units, k=CLAIMS),
            }
        ),
        folder / "covariates.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "id": units,
                "text": [_text(rng, CHUNK_WORDS) for _ in range(CHUNKS)],
                "document_id": [f"doc-{i % 100}" for i in range(CHUNKS)],
            }
        ),
        folder / "text_units.parquet",
    )
    pq.write_table(
        pa.table({"id": [f"doc-{i}" for i in range(100)], "title": [f"Document {i}" for i in range(100)]}),
        folder / "documents.parquet",
    )
    return {"communities": n, "claims": CLAIMS, "chunks": CHUNKS, "entities": len(entities), "relationships": RELATIONSHIPS}


def measure(folder: Path, *, trace: bool) -> dict[str, object]:
    """Load ``folder`` once in this process; the time, peak RSS and (when tracing) peak heap."""
    from graphrag_core.index import load_index

    if trace:
        tracemalloc.start()
    start = time.perf_counter()
    index = load_index(folder)
    seconds = time.perf_counter() - start
    result: dict[str, object] = {
        "seconds": round(seconds, 2),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "stats": index.stats(),
        "warnings": len(index.warnings),
    }
    if trace:
        result["peak_heap_mib"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
        tracemalloc.stop()
    return result


def _in_child(folder: Path, *, trace: bool) -> dict[str, object]:
    command = [sys.executable, __file__, "--measure", str(folder)] + (["--trace"] if trace else [])
    repo = Path(__file__).resolve().parents[1]
    output = subprocess.run(command, check=True, capture_output=True, text=True, cwd=repo).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="write the index here and keep it")
    parser.add_argument("--native", action="store_true", help="also save and load the native copy")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        print(json.dumps(measure(args.measure, trace=args.trace)))
        return

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch) / "msgraphrag-v3"
        folder.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        counts = write_synthetic_v3(folder)
        size = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
        print(f"wrote {counts} ({size:.0f} MiB parquet) in {time.perf_counter() - start:.1f}s to {folder}")
        plain = _in_child(folder, trace=False)
        traced = _in_child(folder, trace=True)
        print(f"GraphRAG v3 load: {plain['seconds']}s, peak RSS {plain['peak_rss_mib']} MiB, "
              f"peak Python heap {traced['peak_heap_mib']} MiB (tracemalloc run: {traced['seconds']}s)")
        print(f"  loaded {plain['stats']}, {plain['warnings']} warning(s)")
        if args.native:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from graphrag_core.index import load_index, save_index

            native = Path(scratch) / "native"
            start = time.perf_counter()
            save_index(load_index(folder), native)
            print(f"native save (with a load): {time.perf_counter() - start:.2f}s")
            plain = _in_child(native, trace=False)
            print(f"native load: {plain['seconds']}s, peak RSS {plain['peak_rss_mib']} MiB")


if __name__ == "__main__":
    main()
