"""The JSON Schema of the native index format, generated from the models.

``docs/index-format.schema.json`` is this module's output, committed; a test checks it is
current. Regenerate it with ``python -m graphrag_core.index.schema`` (``--check`` only compares).
The schema describes the folder as one object: ``manifest.json`` is a Manifest, and each
``.jsonl`` file is an array whose items are the records of its lines.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from ..files import write_file
from ..models import Claim, Community, Document, Entity, Relationship, SourceChunk
from .native import (
    CHUNKS_FILE,
    CLAIMS_FILE,
    COMMUNITIES_FILE,
    DOCUMENTS_FILE,
    ENTITIES_FILE,
    MANIFEST_FILE,
    NATIVE_FORMAT_VERSION,
    OPTIONAL_FILES,
    RELATIONSHIPS_FILE,
    Manifest,
)

SCHEMA_PATH = Path("docs/index-format.schema.json")
"""Where the schema is committed, relative to the repository root."""

JSONL_FILES: tuple[tuple[str, type[BaseModel]], ...] = (
    (COMMUNITIES_FILE, Community),
    (CLAIMS_FILE, Claim),
    (CHUNKS_FILE, SourceChunk),
    (DOCUMENTS_FILE, Document),
    (ENTITIES_FILE, Entity),
    (RELATIONSHIPS_FILE, Relationship),
)


def index_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a native index folder, as a dict.

    Deterministic: the same models give the same dict, key order included.
    """
    models = [(Manifest, "validation"), *((model, "validation") for _, model in JSONL_FILES)]
    _, top = models_json_schema(models, ref_template="#/$defs/{model}")
    properties: dict[str, Any] = {MANIFEST_FILE: {"$ref": "#/$defs/Manifest"}}
    for name, model in JSONL_FILES:
        properties[name] = {
            "description": f"{name}: one {model.__name__} per line (JSON Lines).",
            "type": "array",
            "items": {"$ref": f"#/$defs/{model.__name__}"},
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"GraphRAG Explorer native index, format version {NATIVE_FORMAT_VERSION}",
        "description": (
            "A native index is a folder. Each property here is one file of it: manifest.json is a JSON "
            "object; each .jsonl file holds one JSON object per line, described by the array's items. "
            f"{' and '.join(OPTIONAL_FILES)} may be absent. See docs/index-format.md."
        ),
        "type": "object",
        "properties": properties,
        "required": [MANIFEST_FILE, *(name for name, _ in JSONL_FILES if name not in OPTIONAL_FILES)],
        "$defs": top["$defs"],
    }


def render_schema() -> str:
    """The schema as committed: two-space indented JSON, UTF-8 text, a trailing newline."""
    return json.dumps(index_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or with ``--check``, compare) the committed schema; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2], help="repository root")
    parser.add_argument("--check", action="store_true", help="fail when the committed schema is out of date")
    args = parser.parse_args(argv)
    target = args.root / SCHEMA_PATH
    text = render_schema()
    if args.check:
        current = target.read_text(encoding="utf-8") if target.is_file() else None
        if current != text:
            print(f"{target} is out of date; run: python -m graphrag_core.index.schema", file=sys.stderr)
            return 1
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    write_file(target, text)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
