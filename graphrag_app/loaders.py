"""Opening indexes for the pages: which folders may be opened, cached loading (an object the app
holds once, ``st.cache_resource``, shared by every session), and every failure as a message the
page shows (:func:`open_index`); and the libraries warmed after Explore's first page.

An index is cached (``Index`` is frozen) by its folder and a signature of the folder's file
times, so an index rewritten on disk is read again.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from graphrag_core.errors import GraphRAGError, IndexValidationError
from graphrag_core.index import index_files, load_index, resolve_index_folder
from graphrag_core.models import Index
from graphrag_core.samples import DEFAULT_SAMPLE, SAMPLES

from .settings import ENV_ALLOWED_ROOTS, AppSettings
from .text import escape_markdown

INDEX_CACHE_ENTRIES = 6


class IndexAccessError(ValueError):
    """The folder may not be opened here (outside the allowed roots, or no folder given)."""


@dataclass(frozen=True)
class IndexSource:
    """What an ``index`` URL value names: a bundled sample, or a folder."""

    key: str
    path: Path
    is_sample: bool

    @property
    def label(self) -> str:
        return f"{self.key} (sample)" if self.is_sample else str(self.path)


def default_index_key() -> str:
    return DEFAULT_SAMPLE if DEFAULT_SAMPLE in SAMPLES else next(iter(SAMPLES), "")


def sample_names() -> list[str]:
    return list(SAMPLES)


def resolve_source(key: str, settings: AppSettings) -> IndexSource:
    """The index ``key`` names. A folder must lie under an allowed root when roots are set."""
    key = key.strip()
    if key in SAMPLES:
        return IndexSource(key=key, path=SAMPLES[key], is_sample=True)
    if not key:
        raise IndexAccessError("Enter the path of an index folder.")
    if "\x00" in key:
        raise IndexAccessError("The index path holds a NUL character (%00 in a link), which no folder name can hold: check the link or the path.")
    path = Path(key).expanduser().resolve()
    roots = settings.allowed_roots
    if roots is not None:
        allowed = ", ".join(str(root) for root in roots) or "none: only the bundled samples"
        if not _under(path, roots):
            raise IndexAccessError(f"{path} is outside the folders this app may open ({ENV_ALLOWED_ROOTS}: {allowed}).")
        # A file symlink in an allowed folder must not lead outside the roots either; nor one in
        # the output folder of a GraphRAG project root, which is what opens there.
        folder = path if path.is_dir() else path.parent
        _check_links(folder, roots, allowed)
        output = _index_folder_of(path)
        if output != folder:
            _check_links(output, roots, allowed)
    return IndexSource(key=key, path=path, is_sample=False)


def _check_links(folder: Path, roots: tuple[Path, ...], allowed: str) -> None:
    """Refuse a file of ``folder`` that links outside ``roots``."""
    try:
        entries = [entry for entry in os.scandir(folder) if entry.is_symlink()]
    except OSError:
        entries = []
    for entry in entries:
        target = Path(entry.path).resolve()
        if not _under(target, roots):
            raise IndexAccessError(
                f"{entry.path} links to {target}, which is outside the folders this app may open "
                f"({ENV_ALLOWED_ROOTS}: {allowed})."
            )


def _under(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def _index_folder_of(path: Path) -> Path:
    """The folder whose files the index at ``path`` reads (a GraphRAG project root's output)."""
    try:
        return resolve_index_folder(path)
    except (IndexValidationError, OSError):
        return path if path.is_dir() else path.parent


def folder_signature(path: Path) -> int:
    """A number that changes when a file the index at ``path`` reads is rewritten (the files of
    its folder, or of a GraphRAG project root's output folder; not of subfolders)."""
    try:
        stats = [path.stat(), *(file.stat() for file in index_files(path))]
    except OSError:
        return 0
    return hash(tuple((s.st_mtime_ns, s.st_size) for s in stats))


@st.cache_resource(max_entries=INDEX_CACHE_ENTRIES, show_spinner="Loading the index…")
def _load(path: str, signature: int) -> Index:
    return load_index(path)


def load_source(source: IndexSource) -> Index:
    """The index at ``source`` (cached); raises ``IndexValidationError``/``IndexFormatError``."""
    return _load(str(source.path), folder_signature(source.path))


@dataclass
class OpenedIndex:
    """The index the widgets name, or why it could not be opened."""

    source: IndexSource | None
    index: Index | None
    error: str | None

    @property
    def problem(self) -> str | None:
        """Why a page cannot use this index, as the pages say it (None: it can)."""
        if self.index is not None and self.source is not None and not self.error:
            return None
        return self.error or "The index could not be opened."


def show_index_problem(opened: OpenedIndex) -> bool:
    """Show why the index cannot be used (a page then stops or returns); True when it cannot."""
    if opened.problem is None:
        return False
    st.error(escape_markdown(opened.problem), icon=":material/folder_off:")
    return True


def open_index(key: str, app: AppSettings, *, tables: Sequence[str] = ()) -> OpenedIndex:
    """Resolve and load an index for the page, with ``tables`` (of
    :data:`~graphrag_core.deferred.DEFERRED_TABLES`) read now: what the page shows or runs on.
    Any failure, in opening or in reading those tables, becomes a message naming the error."""
    try:
        source = resolve_source(key, app)
    except IndexAccessError as exc:
        return OpenedIndex(None, None, str(exc))
    try:
        index = load_source(source)
        if tables:
            index.load_tables(*tables)
        return OpenedIndex(source, index, None)
    except GraphRAGError as exc:
        return OpenedIndex(source, None, f"{source.path} is not a readable index: {exc}")
    except (OSError, ValueError) as exc:  # unreadable files, malformed JSON or parquet
        return OpenedIndex(source, None, f"{source.path} could not be read ({type(exc).__name__}): {exc}")


WARM_MODULES = ("pandas",)
"""What the pages' tables need (0.3-1 s to import on a busy machine), imported off the script
thread once Explore has drawn (:func:`warm_libraries`)."""


@st.cache_resource(show_spinner=False)
def warm_libraries() -> threading.Thread:
    """Import :data:`WARM_MODULES` in a background thread, once per process: the modules that
    draw Explore's first page import none of them (the first session after the server starts
    shows Run sooner), and a run's first answer, whose tables need them, does not wait for them."""
    thread = threading.Thread(target=lambda: [importlib.import_module(name) for name in WARM_MODULES], name="warm-libraries", daemon=True)
    thread.start()
    return thread


def finish_warm_imports(names: tuple[str, ...] = WARM_MODULES) -> None:
    """Wait until every one of ``names`` that a thread has begun importing (:func:`warm_libraries`)
    is imported whole; start none. Plotly looks up pandas in ``sys.modules`` whenever it builds a
    figure, and a pandas still being imported there raised ``AttributeError`` in a live view's
    tick (its first bar, or the cost preview's chart, lost to an error box)."""
    for name in names:
        if name in sys.modules:
            importlib.import_module(name)  # returns at once when imported; else waits for the importing thread


__all__ = [
    "IndexAccessError",
    "IndexSource",
    "OpenedIndex",
    "default_index_key",
    "finish_warm_imports",
    "folder_signature",
    "load_source",
    "open_index",
    "resolve_source",
    "sample_names",
    "show_index_problem",
    "warm_libraries",
]
