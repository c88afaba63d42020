"""The files a command writes where its user said (``--out``, ``--bundle``, ``--markdown``,
``--export``): written whole or not at all by the engine's :mod:`graphrag_core.files`, and a
failure reported as one sentence naming the file and saying that what was there is kept."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from graphrag_core.files import Content, write_files

from .context import EXIT_USAGE, CliError


def write_out(files: Mapping[Path, Content], *, what: str, code: int = EXIT_USAGE) -> None:
    """Write ``files`` (their folders made first), all or none; a failure is a :class:`CliError`
    ``Could not write {what} to {first file}: {reason}; ...`` with ``code``."""
    first = next(iter(files))
    existed = [path for path in files if path.exists()]
    try:
        for folder in dict.fromkeys(path.parent for path in files):
            folder.mkdir(parents=True, exist_ok=True)
        write_files(files)
    except OSError as exc:
        if not existed:
            kept = "nothing was written"
        elif len(files) == 1:
            kept = f"{first} is kept as it was"
        else:
            kept = "none of them was written, and the files that were there are kept as they were"
        raise CliError(f"Could not write {what} to {first}: {exc.strerror or exc}; {kept}.", code) from None


__all__ = ["write_out"]
