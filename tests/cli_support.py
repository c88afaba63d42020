"""What the command-line tests share: the town index they query, and a call of the command line."""

from __future__ import annotations

from graphrag_cli.main import main
from graphrag_core import Index

from . import factories

QUESTION = "What shapes the town?"


def cli_index() -> Index:
    """The "tiny" town with a blank leaf ``c`` and claim ``k1`` (``factories.make_index``)."""
    return factories.make_index(gamma="   ", with_claim=True)


def run_cli(capsys, *argv, model=None, environ=None):  # type: ignore[no-untyped-def]
    """``graphrag-explorer *argv`` in this process with ``model`` and the environment ``environ``
    (none by default); its exit code, standard output and standard error."""
    code = main([str(a) for a in argv], model=model, environ=environ or {})
    out, err = capsys.readouterr()
    return code, out, err
