"""``python -m graphrag_core``: the ``graphrag-explorer`` command line."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
