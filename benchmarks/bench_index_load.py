"""Benchmark: opening a 20,000-community Microsoft GraphRAG output, against pyarrow reading its
tables (target: opening at most 2x), and what each further step costs.

The output is the Christmas Carol output scaled to 20,000 communities by
``benchmarks/synthetic_msgraphrag.py`` (same schema, written to ``benchmarks/.data/``, never
committed); ``--index DIR`` measures another output, ``--synthetic`` the built-in synthetic one
(200,000 claims, short made-up texts). Every figure is taken in a fresh child process, imports
done before the clock starts, and is the best of ``--repeat`` runs (on a busy machine every
figure grows; the ratios hold better):

* pyarrow: every table file read whole (``ParquetFile.read``), and the two a search needs first;
* open: ``load_index`` (the communities and their reports; every other table's columns checked);
* open + a search's tables: then the claims and source chunks a level's map texts read;
* every table: then everything (entities, relationships, documents, warnings);
* ``--baseline DIR``: ``load_index`` of another checkout (e.g. ``/work/main``, which reads every
  table when it opens);
* ``--peer``: what Microsoft GraphRAG 3.3.0's global search reads before its first call (pandas
  reads of entities, communities and reports, then ``read_indexer_communities``,
  ``read_indexer_reports`` and ``read_indexer_entities`` at the level), run in its own virtual
  environment (``--venv``, default ``benchmarks/.venv-peer``, installed once when missing; never
  a dependency). The whole first query side by side is ``benchmarks/bench_peer.py``'s.

    python benchmarks/bench_index_load.py [--index DIR | --synthetic [--keep DIR]] [--repeat 3]
        [--baseline /work/main] [--peer [--venv DIR]] [--level 2] [--native]
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
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEER = "graphrag==3.3.0"

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
    """Write the synthetic GraphRAG v3 tables into ``folder``; return the row count of each.

    20,000 communities (2,000 roots, 6,000 at level 1, 12,000 leaves at level 2), 200,000 claims,
    50,000 text units, 48,000 entities and 60,000 relationships, with short made-up texts."""
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


# -- one measurement, in a child process ----------------------------------------------------------------

STEPS = ("pyarrow", "pyarrow-search", "open", "open-search", "every-table", "baseline")


def measure(step: str, folder: Path) -> dict[str, object]:
    """One step, timed in this (fresh) process after its imports."""
    started = time.perf_counter()
    if step.startswith("pyarrow"):
        files = sorted(folder.glob("*.parquet"))
        if step == "pyarrow-search":
            files = [f for f in files if f.name in ("communities.parquet", "community_reports.parquet")]
        imported = time.perf_counter() - started
        start = time.perf_counter()
        rows = sum(pq.ParquetFile(path).read().num_rows for path in files)
        return _figures(start, imported, rows=rows)
    from graphrag_core.index import load_index

    if step == "baseline":  # another checkout: its load_index, whatever it reads
        imported = time.perf_counter() - started
        start = time.perf_counter()
        load_index(folder)
        return _figures(start, imported)
    from graphrag_core.deferred import DEFERRED_TABLES
    from graphrag_core.models import MAP_TEXT_TABLES

    imported = time.perf_counter() - started
    start = time.perf_counter()
    index = load_index(folder)
    if step == "open-search":
        index.load_tables(*MAP_TEXT_TABLES)
    elif step == "every-table":
        index.load_tables(*DEFERRED_TABLES)
    figures = _figures(start, imported)
    figures["loaded"] = {table: len(getattr(index, table)) for table in ("communities", *DEFERRED_TABLES) if table in index.__dict__}
    return figures


def _figures(start: float, imported: float, **more: object) -> dict[str, object]:
    return {
        "seconds": time.perf_counter() - start,
        "import_seconds": imported,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        **more,
    }


def _in_child(step: str, folder: Path, *, code_root: Path = ROOT) -> dict[str, object]:
    command = [sys.executable, __file__, "--measure", step, "--index", str(folder), "--code-root", str(code_root)]
    output = subprocess.run(command, check=True, capture_output=True, text=True, cwd=code_root).stdout
    return json.loads(output.strip().splitlines()[-1])


def best(step: str, folder: Path, repeat: int, **options: Path) -> dict[str, object]:
    runs = [_in_child(step, folder, **options) for _ in range(repeat)]
    return min(runs, key=lambda run: run["seconds"])  # type: ignore[arg-type, return-value]


# -- the peer ---------------------------------------------------------------------------------------------

PEER_SCRIPT = r"""
import json, sys, time
started = time.perf_counter()
import pandas as pd
from graphrag.query.indexer_adapters import read_indexer_communities, read_indexer_entities, read_indexer_reports
imported = time.perf_counter() - started
folder, level = sys.argv[1], int(sys.argv[2])
start = time.perf_counter()
entities = pd.read_parquet(f"{folder}/entities.parquet")
communities = pd.read_parquet(f"{folder}/communities.parquet")
reports = pd.read_parquet(f"{folder}/community_reports.parquet")
read = time.perf_counter() - start
read_indexer_communities(communities, reports)
read_indexer_reports(reports, communities, community_level=level, dynamic_community_selection=False)
read_indexer_entities(entities, communities, community_level=level)
print(json.dumps({"seconds": time.perf_counter() - start, "read_seconds": read, "import_seconds": imported}))
"""


def peer_python(venv: Path) -> Path:
    """The peer's Python, installing it into ``venv`` first when it is not there."""
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"installing {PEER} into {venv} (once) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if subprocess.run([str(python), "-c", "import graphrag.query.indexer_adapters"], capture_output=True).returncode:
        subprocess.run([str(python), "-m", "pip", "install", "-q", PEER], check=True)
    return python


def peer_open(python: Path, folder: Path, level: int, repeat: int) -> dict[str, float]:
    runs = []
    for _ in range(repeat):
        done = subprocess.run(
            [str(python), "-c", PEER_SCRIPT, str(folder), str(level)], capture_output=True, text=True,
            env={"PATH": "/usr/bin:/bin", "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        )
        if done.returncode:
            raise SystemExit(f"the peer failed:\n{done.stderr[-3000:]}")
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return min(runs, key=lambda run: run["seconds"])


# -- the report ------------------------------------------------------------------------------------------


def _row(label: str, figures: dict[str, object], *, ratio: str = "") -> str:
    return (f"  {label:46s} {figures['seconds']:7.2f} s   (imports {figures['import_seconds']:5.2f} s, "
            f"peak RSS {figures.get('peak_rss_mib', 0):7.1f} MiB){ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, help="a Microsoft GraphRAG output to measure instead of the scaled one")
    parser.add_argument("--synthetic", action="store_true", help="measure the built-in synthetic output (200,000 claims)")
    parser.add_argument("--keep", type=Path, help="with --synthetic: write it here and keep it")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best is printed")
    parser.add_argument("--baseline", type=Path, help="another checkout whose load_index is measured too (e.g. /work/main)")
    parser.add_argument("--peer", action="store_true", help=f"also measure {PEER}'s reading (its own venv, installed once)")
    parser.add_argument("--venv", type=Path, default=HERE / ".venv-peer", help="the peer's virtual environment")
    parser.add_argument("--level", type=int, default=2, help="the level the peer reads its reports at")
    parser.add_argument("--native", action="store_true", help="also save the index natively and open that")
    parser.add_argument("--measure", choices=STEPS, help=argparse.SUPPRESS)
    parser.add_argument("--code-root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        sys.path.insert(0, str(args.code_root))
        print(json.dumps(measure(args.measure, args.index)))
        return

    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(HERE))
    with tempfile.TemporaryDirectory() as scratch:
        if args.synthetic:
            folder = args.keep or Path(scratch) / "msgraphrag-v3"
            folder.mkdir(parents=True, exist_ok=True)
            counts = write_synthetic_v3(folder)
        elif args.index:
            folder, counts = args.index, {}
        else:
            from synthetic_msgraphrag import DEFAULT_SOURCE, default_out, write_scaled

            folder = default_out(20_000)
            counts = write_scaled(DEFAULT_SOURCE, folder, communities=20_000)
        size = sum(p.stat().st_size for p in folder.glob("*.parquet")) / 2**20
        print(f"{folder}: {size:.0f} MiB of parquet" + (f"; {counts}" if counts else ""))
        print(f"best of {args.repeat} runs, each in a fresh process, imports before the clock:")

        arrow = best("pyarrow", folder, args.repeat)
        arrow_search = best("pyarrow-search", folder, args.repeat)
        opened = best("open", folder, args.repeat)
        search = best("open-search", folder, args.repeat)
        every = best("every-table", folder, args.repeat)
        print(_row("pyarrow: every table read whole", arrow))
        print(_row("pyarrow: communities + reports", arrow_search))
        print(_row("open (communities and reports)", opened, ratio=f"  {opened['seconds'] / arrow['seconds']:.2f}x pyarrow's every table (target <= 2)"))
        print(_row("open + a search's tables (claims, chunks)", search))
        print(_row("open + every table", every, ratio=f"  {every['seconds'] / arrow['seconds']:.2f}x pyarrow's"))
        print(f"  loaded: {every.get('loaded')}")
        if args.baseline:
            base = best("baseline", folder, args.repeat, code_root=args.baseline)
            print(_row(f"baseline load_index ({args.baseline})", base, ratio=f"  open is {base['seconds'] / opened['seconds']:.1f}x faster"))
        if args.peer:
            theirs = peer_open(peer_python(args.venv), folder, args.level, args.repeat)
            print(f"  {PEER + ' reads for global search (level ' + str(args.level) + ')':46s} {theirs['seconds']:7.2f} s   "
                  f"(imports {theirs['import_seconds']:5.2f} s; pandas reads {theirs['read_seconds']:.2f} s)")
            print(f"  ratios to the peer: open {opened['seconds'] / theirs['seconds']:.2f}x, "
                  f"open + a search's tables {search['seconds'] / theirs['seconds']:.2f}x")
        if args.native:
            from graphrag_core.index import load_index, save_index

            native = Path(scratch) / "native"
            save_index(load_index(folder), native)
            print(_row("native copy: open", best("open", native, args.repeat)))
            print(_row("native copy: open + every table", best("every-table", native, args.repeat)))


if __name__ == "__main__":
    main()
