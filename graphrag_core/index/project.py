"""GraphRAG project roots: a folder with ``settings.yaml`` whose index is in its output folder.

GraphRAG writes its tables under the project root: to ``output/`` from 1.0 on, to
``output/<timestamp>/artifacts/`` before. The folder named in the settings
(``output_storage.base_dir`` in 3.x, ``output.base_dir`` in 1.x-2.x, ``storage.base_dir`` in
0.x; ``${timestamp}`` standing for any run) is tried first, then those defaults; a run folder
found by a pattern is taken newest first (GraphRAG's timestamps sort by name). The settings are
scanned for those keys only, so no YAML library is needed and nothing else in them matters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

SETTINGS_FILES: tuple[str, ...] = ("settings.yaml", "settings.yml", "settings.json")
"""The files that make a folder a GraphRAG project root."""

OUTPUT_KEYS: tuple[str, ...] = ("output_storage", "output", "storage")
"""The settings sections whose ``base_dir`` names the output folder (3.x, 1.x-2.x, 0.x)."""

DEFAULT_OUTPUTS: tuple[str, ...] = ("output", "output/${timestamp}/artifacts")
"""Where GraphRAG writes its tables when the settings do not say: 1.0 on, then 0.x."""

_SECTION = re.compile(r"^(?P<key>[A-Za-z_][\w-]*)\s*:\s*(?:#.*)?$")
_BASE_DIR = re.compile(r"""^\s+base_dir\s*:\s*(?P<value>"[^"]*"|'[^']*'|[^#\s][^#]*?)\s*(?:#.*)?$""")


def settings_file(folder: Path) -> Path | None:
    """The settings file that makes ``folder`` a GraphRAG project root, or None."""
    return next((folder / name for name in SETTINGS_FILES if (folder / name).is_file()), None)


def configured_outputs(settings: Path) -> list[str]:
    """The output folders the settings name (relative to the root), in :data:`OUTPUT_KEYS` order."""
    try:
        text = settings.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    found: dict[str, str] = {}
    if settings.suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError:
            return []
        if isinstance(data, dict):
            for key in OUTPUT_KEYS:
                section = data.get(key)
                if isinstance(section, dict) and isinstance(section.get("base_dir"), str):
                    found[key] = section["base_dir"]
    else:
        section: str | None = None
        for line in text.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if not line[0].isspace():
                match = _SECTION.match(line)
                section = match.group("key") if match else None
                continue
            if section in OUTPUT_KEYS and section not in found:
                value = _BASE_DIR.match(line)
                if value:
                    found[section] = value.group("value").strip("\"'")
    return [found[key] for key in OUTPUT_KEYS if key in found]


def _candidates(root: Path, pattern: str) -> Iterator[Path]:
    """The folders ``pattern`` names under ``root``; with ``${timestamp}``, every run, newest first."""
    if "${timestamp}" not in pattern:
        yield root / pattern
        return
    matches = [path for path in root.glob(pattern.replace("${timestamp}", "*")) if path.is_dir()]
    yield from sorted(matches, key=lambda path: path.as_posix(), reverse=True)


def project_output(root: Path, holds_index: Callable[[Path], bool]) -> Path | None:
    """The output folder of the GraphRAG project at ``root`` that ``holds_index``, or None (also
    when ``root`` is no project root). Only a folder inside ``root`` (links resolved) is taken."""
    settings = settings_file(root)
    if settings is None:
        return None
    inside = root.resolve()
    for pattern in dict.fromkeys([*configured_outputs(settings), *DEFAULT_OUTPUTS]):
        for folder in _candidates(root, pattern):
            # an output outside the project (an absolute path, "..", a link) is not opened by naming the project
            if folder.is_dir() and folder.resolve().is_relative_to(inside) and holds_index(folder):
                return folder
    return None


__all__ = ["DEFAULT_OUTPUTS", "OUTPUT_KEYS", "SETTINGS_FILES", "configured_outputs", "project_output", "settings_file"]
