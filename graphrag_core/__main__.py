"""``python -m graphrag_core``: the ``graphrag-explorer`` command line, which lives in the
``graphrag_cli`` package (this entry point is the engine's only import of a front end)."""

from graphrag_cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
