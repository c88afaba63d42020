"""A real full disk for tests: a tmpfs of a few KB mounted under the test's folder (skipped where
this machine does not let a test mount one), and a filler that takes its last byte."""

from __future__ import annotations

import errno
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a tmpfs of 256 KB, unmounted after the test (:func:`fill` takes its last byte,
    deleting its ``filler`` frees it again); skipped where this machine does not let the test
    mount one (not root, no CAP_SYS_ADMIN, no ``mount``)."""
    folder = tmp_path / "disk"
    folder.mkdir()
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot mount a small tmpfs here: {exc}")
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=30)


def fill(folder: Path) -> None:
    """Fill the filesystem under ``folder`` until it has no byte left (a file ``filler``)."""
    with open(folder / "filler", "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"x" * 1024)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
