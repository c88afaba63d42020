"""Figures wait for a library another thread is importing (``loaders.finish_warm_imports``)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from graphrag_app.loaders import finish_warm_imports


def test_figures_wait_for_a_library_another_thread_is_importing(tmp_path: Path) -> None:
    # Plotly reads pandas from sys.modules when it builds a figure: a pandas half imported by the
    # warm-up thread raised AttributeError in the live view's tick (its first bar lost)
    name = "graphrag_test_slow_library"
    (tmp_path / f"{name}.py").write_text(
        "import builtins\nbuiltins.graphrag_test_gate.wait(30)\nDONE = True\n", encoding="utf-8"
    )
    import builtins

    gate = threading.Event()
    builtins.graphrag_test_gate = gate  # type: ignore[attr-defined]
    sys.path.insert(0, str(tmp_path))
    try:
        importer = threading.Thread(target=__import__, args=(name,), daemon=True)
        importer.start()
        while name not in sys.modules:  # the warm-up thread has begun the import
            importer.join(0.01)
        assert not hasattr(sys.modules[name], "DONE")
        threading.Timer(0.2, gate.set).start()
        finish_warm_imports((name, "graphrag_test_never_imported"))
        assert sys.modules[name].DONE and "graphrag_test_never_imported" not in sys.modules
    finally:
        gate.set()
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)
        del builtins.graphrag_test_gate  # type: ignore[attr-defined]
