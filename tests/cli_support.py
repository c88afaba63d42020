"""What the command-line tests share: the town index they query, and a call of the command line."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from graphrag_cli.main import main
from graphrag_core import Index

from . import factories

QUESTION = "What shapes the town?"


def cli_index() -> Index:
    """The "tiny" town with a blank leaf ``c`` and claim ``k1`` (``factories.make_index``)."""
    return factories.make_index(gamma="   ", with_claim=True)


SCRATCH_DATA_HOME = Path(tempfile.mkdtemp(prefix="graphrag-cli-tests-"))
"""``XDG_DATA_HOME`` of every command a test runs without naming one: a command that records
(a sweep without ``--no-store``, an eval without ``--store``) writes here, never into the
user's own history under ``~/.local/share``."""
atexit.register(shutil.rmtree, SCRATCH_DATA_HOME, ignore_errors=True)


def run_cli(capsys, *argv, model=None, environ=None):  # type: ignore[no-untyped-def]
    """``graphrag-explorer *argv`` in this process with ``model`` and the environment ``environ``
    (none by default but :data:`SCRATCH_DATA_HOME`); its exit code, standard output and standard error."""
    code = main([str(a) for a in argv], model=model, environ={"XDG_DATA_HOME": str(SCRATCH_DATA_HOME), **(environ or {})})
    out, err = capsys.readouterr()
    return code, out, err
