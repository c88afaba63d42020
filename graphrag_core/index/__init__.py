"""Loading and saving indexes: the native JSON Lines format and Microsoft GraphRAG outputs.

``load_index(path)`` looks at the folder (or the output folder of the GraphRAG project rooted
there, :func:`resolve_index_folder`), picks the reader (``detect_format``) and opens a validated
:class:`~graphrag_core.models.Index`: its communities are read and checked now, its other tables
when they are first needed. ``save_index(index, path)`` writes the native format, which
``load_index`` reads back to an equal index.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from ..errors import IndexFormatError, IndexValidationError
from ..models import Index
from . import msgraphrag, msgraphrag_layout, native
from .msgraphrag_layout import SummaryChoice
from .native import MANIFEST_FILE, NATIVE_FORMAT, NATIVE_FORMAT_VERSION
from .project import project_output, settings_file

FormatName = Literal["native", "msgraphrag-v3", "msgraphrag-v2", "msgraphrag-v1", "msgraphrag-v0"]
"""The layouts ``load_index`` reads (a Microsoft GraphRAG layout's tables as parquet or CSV)."""

__all__ = [
    "NATIVE_FORMAT",
    "NATIVE_FORMAT_VERSION",
    "FormatName",
    "SummaryChoice",
    "detect_format",
    "index_display_name",
    "index_files",
    "load_index",
    "resolve_index_folder",
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


def _holds_index(folder: Path) -> bool:
    return native.looks_native(folder) or msgraphrag_layout.detect_layout(folder) is not None


def resolve_index_folder(path: str | os.PathLike[str]) -> Path:
    """The folder whose files an index path reads: the folder itself (or a ``manifest.json``'s),
    or, for a GraphRAG project root holding no index itself, the output folder that holds one
    (:func:`~graphrag_core.index.project.project_output`)."""
    folder = _index_folder(path)
    if native.looks_native(folder) or msgraphrag_layout.detect_layout(folder) is not None:
        return folder
    return project_output(folder, _holds_index) or folder


def index_files(path: str | os.PathLike[str]) -> list[Path]:
    """The files of the index at ``path`` (those of the folder it reads, not of subfolders),
    sorted: what a cache of the opened index is keyed on. Empty when there is no such folder."""
    try:
        folder = resolve_index_folder(path)
        return sorted(entry for entry in folder.iterdir() if entry.is_file())
    except (IndexValidationError, OSError):
        return []


def detect_format(path: str | os.PathLike[str]) -> FormatName:
    """Which layout the index at ``path`` uses, from file names and table schemas only.

    Raises :class:`IndexFormatError` naming the files found and the ones missing when the
    folder is in no supported layout (a half-copied folder, a project never indexed, ...).
    """
    folder = resolve_index_folder(path)
    if native.looks_native(folder):
        return "native"
    version = msgraphrag_layout.detect_version(folder)
    if version is not None:
        return version
    found = sorted(p.name for p in folder.iterdir())
    shown = ", ".join(found[:12]) + (f", ... ({len(found) - 12} more)" if len(found) > 12 else "")
    hint = ""
    settings = settings_file(folder)
    if settings is not None:
        hint = (
            f" It is a GraphRAG project ({settings.name}) whose output holds no index yet (looked in its "
            "configured output folder, output and output/<run>/artifacts); run GraphRAG's indexing first."
        )
    if (folder / "output").is_dir():
        hint += f' It has an "output" subfolder: GraphRAG writes its tables there; try {folder / "output"}.'
    raise IndexFormatError(
        f"{folder}: not an index folder. Found: {shown or 'nothing'}. Expected either {MANIFEST_FILE} "
        f"(native format) or Microsoft GraphRAG outputs ({', '.join(msgraphrag_layout.V3_REQUIRED)}, or the same "
        f"tables as .csv; or, from GraphRAG 0.x-1.x, {', '.join(msgraphrag_layout.V1_REQUIRED)}).{hint}",
        path=str(folder),
    )


def load_index(path: str | os.PathLike[str], *, summary: SummaryChoice = "full_content") -> Index:
    """Open the index at ``path`` (a folder, a native ``manifest.json``, or a GraphRAG project
    root), whatever its layout.

    The communities and their summaries are read and checked now, with every file's presence
    (and a Microsoft GraphRAG table's columns); each other table is read and checked when it is
    first needed, raising its error then (``index.load_tables()`` reads them all at once).

    ``summary`` picks the text of a Microsoft GraphRAG community: the report's ``full_content``
    (the default, as GraphRAG's own command line uses) or its short ``summary``; it does not
    apply to native indexes, which store the summary chosen when they were saved.
    """
    if summary not in ("full_content", "summary"):
        raise ValueError(f'summary must be "full_content" or "summary", not {summary!r}.')
    folder = resolve_index_folder(path)
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
