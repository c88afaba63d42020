"""Files a user named, written whole or not at all.

Every file the program writes where someone said (a run bundle, a report, a CSV, an index
folder's files, a question set) is written here: into a temporary file beside it, flushed to the
disk (fsync), then renamed over it. So:

- a reader sees the old file or the new one, never half of one;
- when anything fails (a full disk, a quota, a write error, Ctrl-C), the old file stays as it
  was and the temporary file is removed: nothing partial is left beside it;
- a file that was there keeps its permissions; a path that is a symbolic link keeps the link,
  and the file it points to is the one replaced.

:func:`write_files` does the same for a group (a report and its tables, an index's files):
every temporary file is written and flushed before the first is renamed, so a full disk leaves
all the old files and no new one. Only the renames themselves, which need no space, remain
between the first file replaced and the last.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path

Content = str | bytes | Iterable[str]
"""What a file holds: its whole text, its bytes, or its text in pieces (written as they come)."""


def _real(path: Path) -> Path:
    """The file ``path`` names, through any symbolic link (a link is kept, its target replaced)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _temporary_beside(path: Path) -> Path:
    return path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")


def _write_temporary(path: Path, content: Content) -> Path:
    """``content`` in a new temporary file beside ``path``, flushed to the disk; removed again
    when anything fails."""
    temporary = _temporary_beside(path)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as to any new file
    try:
        try:
            os.chmod(temporary, path.stat().st_mode & 0o7777)  # a replaced file keeps its permissions
        except FileNotFoundError:
            pass
        with os.fdopen(descriptor, "wb") as handle:
            if isinstance(content, bytes):
                handle.write(content)
            elif isinstance(content, str):
                handle.write(content.encode("utf-8"))
            else:
                for piece in content:
                    handle.write(piece.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


def _sync_folder(folder: Path) -> None:
    """The renames in ``folder`` made durable (best effort: not every filesystem can)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def write_files(contents: Mapping[str | os.PathLike[str], Content]) -> None:
    """Write each file of ``contents`` (text as UTF-8) whole, or none of them: on a failure
    every file keeps what it held, and no temporary file is left. Files are replaced in the
    mapping's order (put the one that marks a set complete last). Folders must exist."""
    targets = [(_real(Path(name)), content) for name, content in contents.items()]
    written: list[tuple[Path, Path]] = []
    try:
        for path, content in targets:
            written.append((_write_temporary(path, content), path))
        while written:
            temporary, path = written[0]
            os.replace(temporary, path)
            written.pop(0)
    finally:
        for temporary, _ in written:
            temporary.unlink(missing_ok=True)
    for folder in dict.fromkeys(path.parent for path, _ in targets):
        _sync_folder(folder)


def write_file(path: str | os.PathLike[str], content: Content) -> None:
    """Write ``path`` whole (text as UTF-8), or leave it as it was: see the module."""
    write_files({path: content})


__all__ = ["Content", "write_file", "write_files"]
