"""Loading and saving indexes: the native JSON Lines format and Microsoft GraphRAG outputs.

``load_index(path)`` looks at the folder, picks the reader (``detect_format``) and returns a
validated :class:`~graphrag_core.models.Index`; ``save_index(index, path)`` writes the native
format, which ``load_index`` reads back to an equal index.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from ..errors import IndexFormatError, IndexValidationError
from ..models import Index
from . import msgraphrag, native
from .msgraphrag import SummaryChoice
from .native import MANIFEST_FILE, NATIVE_FORMAT, NATIVE_FORMAT_VERSION

FormatName = Literal["native", "msgraphrag-v3", "msgraphrag-v2", "msgraphrag-v1"]
"""The layouts ``load_index`` reads."""

__all__ = [
    "NATIVE_FORMAT",
    "NATIVE_FORMAT_VERSION",
    "FormatName",
    "SummaryChoice",
    "detect_format",
    "index_display_name",
    "load_index",
    "save_index",
]


def _index_folder(path: str | os.PathLike[str]) -> Path:
    """The folder an index path names: the folder itself, or the folder of a ``manifest.json``."""
    given = Path(path).expanduser()
    if not given.exists():
        raise IndexValidationError(f"{given}: no such file or folder; cannot load an index from it.", path=str(given))
    if given.is_file():
        if given.name == MANIFEST_FILE:
            return given.parent
        raise IndexValidationError(
            f"{given}: is a file, not an index folder; pass the folder that holds {MANIFEST_FILE} "
            "or Microsoft GraphRAG's .parquet outputs.",
            path=str(given),
        )
    if not given.is_dir():
        raise IndexValidationError(f"{given}: is not a folder; cannot load an index from it.", path=str(given))
    return given


def detect_format(path: str | os.PathLike[str]) -> FormatName:
    """Which layout the index at ``path`` uses, from file names and parquet schemas only.

    Raises :class:`IndexFormatError` naming the files found and the ones missing when the
    folder is in no supported layout (an older GraphRAG output, a half-copied folder, ...).
    """
    folder = _index_folder(path)
    if native.looks_native(folder):
        return "native"
    version = msgraphrag.detect_version(folder)
    if version is not None:
        return version
    found = sorted(p.name for p in folder.iterdir())
    shown = ", ".join(found[:12]) + (f", ... ({len(found) - 12} more)" if len(found) > 12 else "")
    hint = ""
    if (folder / "output").is_dir():
        hint = f' It has an "output" subfolder: GraphRAG writes its tables there; try {folder / "output"}.'
    raise IndexFormatError(
        f"{folder}: not an index folder. Found: {shown or 'nothing'}. Expected either {MANIFEST_FILE} "
        f"(native format) or Microsoft GraphRAG outputs ({', '.join(msgraphrag.V3_REQUIRED)}; or, from "
        f"GraphRAG 1.x, {', '.join(msgraphrag.V1_REQUIRED)}).{hint}",
        path=str(folder),
    )


def load_index(path: str | os.PathLike[str], *, summary: SummaryChoice = "full_content") -> Index:
    """Load the index at ``path`` (a folder, or a native ``manifest.json``), whatever its layout.

    ``summary`` picks the text of a Microsoft GraphRAG community: the report's ``full_content``
    (the default, as GraphRAG's own command line uses) or its short ``summary``; it does not
    apply to native indexes, which store the summary chosen when they were saved.
    """
    if summary not in ("full_content", "summary"):
        raise ValueError(f'summary must be "full_content" or "summary", not {summary!r}.')
    folder = _index_folder(path)
    layout = detect_format(folder)
    if layout == "native":
        return native.load_native(folder)
    return msgraphrag.load_msgraphrag(folder, version=layout, summary=summary)


def index_display_name(path: str | os.PathLike[str] | None, index: Index | None = None) -> str:
    """The one name an index goes by on every page, in the run history and on the command line:
    a bundled sample's name (``jargon``), else the name in the index's manifest, else its
    folder's name."""
    if path is not None:
        try:
            folder = Path(path).expanduser().resolve()
        except (OSError, RuntimeError):
            folder = Path(path)
        from ..samples import SAMPLES  # paths only; no sample builder is imported

        for name, sample in SAMPLES.items():
            if folder == sample.resolve():
                return name
    if index is not None and index.name:
        return index.name
    return Path(path).name if path is not None else ""


def save_index(index: Index, path: str | os.PathLike[str]) -> None:
    """Write ``index`` in the native format to the folder ``path`` (created when missing).

    Invariant: ``load_index(path)`` afterwards returns an index equal to ``index``.
    """
    native.save_native(index, Path(path).expanduser())
