"""One module per command, each with ``add_parser(subparsers)`` (which registers the command and
its ``run(args, context) -> exit code`` as the handler) over the shared, public pieces of
:mod:`graphrag_cli` (context, resolve, options, progress, loop, output)."""
