"""A large Microsoft GraphRAG output, scaled from a real one: same tables, same schema.

Copies every table of a real output (default: ``../shared/data/msgraphrag/v2-christmas-carol``)
until it holds at least ``--communities`` communities (whole copies only). Each copy is its own corpus: every id, entity
title, community number and ``human_readable_id`` is made unique per copy, and the links
between the tables (parents and children, claims to entities and text units, text units to
documents) stay inside the copy, so the scaled output has the source's shape at every level.
Each copy's reports carry the copy number in their title line, so no two map texts are equal.

The output is data for benchmarks, never committed: it goes to ``--out`` (default
``benchmarks/.data/msgraphrag-<communities>``, which git ignores). Writing is skipped when the
folder already holds an output of that size made from the same source.

    python benchmarks/synthetic_msgraphrag.py [--communities 20000] [--source DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = HERE.parent.parent / "shared" / "data" / "msgraphrag" / "v2-christmas-carol"
DEFAULT_COMMUNITIES = 20_000
STAMP = "synthetic.json"

STRING_IDS = ("id", "text_unit_id", "document_id")
"""Columns holding one id: a copy suffixes it."""
LIST_IDS = ("entity_ids", "relationship_ids", "text_unit_ids", "document_ids", "covariate_ids")
"""Columns holding a list of ids: a copy suffixes each."""
TITLE_LINKS = {"entities": ("title",), "relationships": ("source", "target"), "covariates": ("subject_id", "object_id")}
"""Columns holding entity titles, by table: a copy suffixes each (``NONE`` stays)."""
COMMUNITY_NUMBERS = ("community", "parent")
"""Columns holding a community number: a copy offsets it (a root's -1 stays)."""
LAYOUT = 2
"""Bumped whenever the copies change, so an output made by an older script is written again."""
TABLES = ("communities", "community_reports", "entities", "relationships", "covariates", "text_units", "documents")


def _suffix(values: list, copy: int) -> list:
    return [None if v is None else f"{v}-{copy}" for v in values]


def _copy_table(name: str, table: pa.Table, copy: int, *, community_offset: int) -> pa.Table:
    """Copy ``copy`` of one table: ids suffixed, numbers offset, links kept within the copy."""
    columns = {}
    for field in table.schema:
        values = table.column(field.name).to_pylist()
        if copy == 0:
            columns[field.name] = values
            continue
        if field.name in STRING_IDS:
            values = _suffix(values, copy)
        elif field.name in LIST_IDS:
            values = [None if v is None else _suffix(v, copy) for v in values]
        elif field.name in TITLE_LINKS.get(name, ()):
            values = [v if v in (None, "", "NONE") else f"{v} {copy}" for v in values]
        elif field.name == "human_readable_id":
            values = [None if v is None else v + copy * table.num_rows for v in values]
        elif field.name in COMMUNITY_NUMBERS and name in ("communities", "community_reports"):
            values = [v if v is None or v < 0 else v + community_offset for v in values]
        elif field.name == "children":
            values = [None if v is None else [c + community_offset for c in v] for v in values]
        elif name == "community_reports" and field.name in ("title", "full_content"):
            values = [_mark(v, copy) for v in values]
        elif name == "communities" and field.name == "title":  # GraphRAG names a community by its number
            numbers = table.column("community").to_pylist()
            values = [f"Community {n + community_offset}" if v == f"Community {n}" else f"{v} (copy {copy})" for v, n in zip(values, numbers)]
        columns[field.name] = values
    return pa.table(columns, schema=table.schema.remove_metadata())


def _mark(text: str | None, copy: int) -> str | None:
    """The text with the copy number after its first line (a report's title)."""
    if not text:
        return text
    first, newline, rest = text.partition("\n")
    return f"{first} (copy {copy}){newline}{rest}"


def write_scaled(source: Path, out: Path, *, communities: int = DEFAULT_COMMUNITIES) -> dict[str, int]:
    """Write the scaled output into ``out``; return each table's row count."""
    stamp = {"source": str(source.resolve()), "communities": communities, "layout": LAYOUT}
    stamp_file = out / STAMP
    if stamp_file.exists() and json.loads(stamp_file.read_text()).get("request") == stamp:
        return json.loads(stamp_file.read_text())["rows"]
    tables = {name: pq.read_table(source / f"{name}.parquet") for name in TABLES if (source / f"{name}.parquet").exists()}
    per_copy = tables["communities"].num_rows
    copies = math.ceil(communities / per_copy)
    numbers = tables["communities"].column("community").to_pylist()
    span = max(numbers) + 1
    out.mkdir(parents=True, exist_ok=True)
    rows: dict[str, int] = {}
    for name, table in tables.items():
        parts = [_copy_table(name, table, copy, community_offset=copy * span) for copy in range(copies)]
        scaled = pa.concat_tables(parts)
        pq.write_table(scaled, out / f"{name}.parquet")
        rows[name] = scaled.num_rows
    stamp_file.write_text(json.dumps({"request": stamp, "rows": rows}, indent=1))
    return rows


def default_out(communities: int) -> Path:
    return HERE / ".data" / f"msgraphrag-{communities}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--communities", type=int, default=DEFAULT_COMMUNITIES)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if not (args.source / "communities.parquet").exists():
        raise SystemExit(f"{args.source}: no communities.parquet (a Microsoft GraphRAG v2/v3 output is needed)")
    out = args.out or default_out(args.communities)
    started = time.perf_counter()
    rows = write_scaled(args.source, out, communities=args.communities)
    print(f"{out}: " + ", ".join(f"{name} {count:,}" for name, count in rows.items()) + f" ({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
