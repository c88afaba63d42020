"""The command line, ``graphrag-explorer`` (also ``python -m graphrag_core``): a front end over
:mod:`graphrag_core`, beside the app.

- :mod:`.main`: the parser and :func:`main` (dispatch, exit codes);
- :mod:`.context`: :class:`CliContext` (streams, environment, an injected model), :class:`CliError`, the exit codes;
- :mod:`.resolve`: the index, the model, the run history, the caches that options name;
- :mod:`.options`: the shared options, generated from the search settings' metadata;
- :mod:`.progress`: the one progress printer; :mod:`.loop`: the one way a command runs a coroutine;
- :mod:`.output`: what the commands print, as pure ``format_*`` functions;
- :mod:`.commands`: one module per command.
"""

from .context import (
    EXIT_INDEX,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RUN,
    EXIT_USAGE,
    CliContext,
    CliError,
)
from .main import main

__all__ = ["EXIT_INDEX", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_RUN", "EXIT_USAGE", "CliContext", "CliError", "main"]
