"""The server's warm-up (graphrag_app.warmup): what Explore's page imports, read from the page
file; a failing step reported and skipped; and, in a fresh interpreter, a warm-up that leaves
Explore's first session nothing to import, load or count again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import threading

import pytest

from graphrag_app import warmup
from graphrag_app.warmup import LOG_PREFIX, WARM_PAGES, page_imports, start_warm_up, wait_for_warm_up, warm_up

from . import APP_ROOT


def test_a_page_s_imports_are_read_from_its_file(tmp_path: Path) -> None:
    page = tmp_path / "page.py"
    page.write_text(
        '"""A page."""\n'
        "from __future__ import annotations\n\n"
        "import json, os.path\n"
        "import streamlit as st\n\n"
        "from graphrag_app import widgets, urls\n"
        "from graphrag_app.loaders import SECTIONS_WAIT_S, warm_libraries\n\n"
        "def later():\n"
        "    import graphrag_app.panels.bundles  # inside a function: imported when called, not at start\n\n"
        "st.title('x')\n"
    )
    assert page_imports(page) == [
        "json", "os.path", "streamlit", "graphrag_app", "graphrag_app.widgets", "graphrag_app.urls", "graphrag_app.loaders",
    ]


def test_the_explore_page_s_modules_are_warmed() -> None:
    assert WARM_PAGES == ("pages/explore.py",)  # the page / opens
    names = page_imports(APP_ROOT / WARM_PAGES[0])
    assert {"streamlit", "graphrag_app.explore.sidebar", "graphrag_app.explore.views", "graphrag_app.explore.actions", "graphrag_app.loaders"} <= set(names)


def test_a_failing_step_is_reported_and_the_next_one_runs() -> None:
    done: list[str] = []

    def broken() -> None:
        raise OSError("the sample folder is gone")

    report = warm_up((("the index", broken), ("the modules", lambda: done.append("modules"))))
    assert done == ["modules"]
    assert [name for name, _seconds in report.steps] == ["the index", "the modules"]
    assert report.failures == [("the index", "OSError: the sample folder is gone")]
    line = report.line()
    assert line.startswith(f"{LOG_PREFIX} ready in ")
    assert "the index failed (OSError: the sample folder is gone), the first session does it" in line


def test_a_session_waits_for_a_warm_up_still_going(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the server's wait the warm-up goes on while sessions start: a session's imports must
    not race the warm-up's (a module half made by the other thread is an ImportError)."""
    monkeypatch.setattr(warmup, "_warming", None)
    warmed, waiting = threading.Event(), threading.Event()
    seen: list[bool] = []
    start_warm_up(warmed.wait)

    def session() -> None:
        waiting.set()
        wait_for_warm_up()
        seen.append(warmed.is_set())

    thread = threading.Thread(target=session)
    thread.start()
    waiting.wait()
    warmed.set()
    thread.join()
    assert seen == [True]


def test_a_session_with_no_warm_up_does_not_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warmup, "_warming", None)
    wait_for_warm_up()  # AppTest and older Streamlit versions: no st.App, no warm-up


def test_app_py_s_session_waits_for_the_warm_up() -> None:
    source = (APP_ROOT / "app.py").read_text(encoding="utf-8")
    session = source.split('if __name__ == "__main__":', 1)[1].split("else:", 1)[0]
    assert session.index("wait_for_warm_up()") < session.index("app_navigation().run()")


FIRST_SESSION = """
import json, sys
from graphrag_app import loaders, previews, warmup

report = warmup.warm_up()
modules = [*(name for page in warmup.WARM_PAGES for name in warmup.page_imports(warmup.APP_ROOT / page)), *loaders.WARM_MODULES]
missing = [name for name in modules if name not in sys.modules]

again = []
load_index, compute_sections = loaders.load_index, previews._compute_sections
def counted(name, function):
    def call(*args, **kwargs):
        again.append(name)
        return function(*args, **kwargs)
    return call
loaders.load_index = counted("index loaded", load_index)
previews._compute_sections = counted("levels' tokens counted", compute_sections)

from streamlit.testing.v1 import AppTest
at = AppTest.from_file(str(warmup.APP_ROOT / "app.py"), default_timeout=120).run()
previews.cost_previews().settle(120)
run = [(b.label, b.disabled) for b in at.button if b.key == "run_global_search"]
levels = [s.options for s in at.selectbox if s.key == "community_level"]
print(json.dumps({"failures": report.failures, "missing": missing, "again": again, "exceptions": [str(e.value) for e in at.exception],
                  "run": run, "levels": levels}))
"""


def test_after_the_warm_up_explore_s_first_session_imports_loads_and_counts_nothing_again(tmp_path: Path) -> None:
    # a fresh interpreter stands for a fresh server: warmed, then its first session (AppTest
    # shares the process's st.cache_resource objects, as a server's sessions do)
    environment = {**os.environ, "PYTHONPATH": str(APP_ROOT), "GRAPHRAG_EXPLORER_DB": str(tmp_path / "runs.sqlite3")}
    environment.pop("GRAPHRAG_EXPLORER_ALLOWED_ROOTS", None)
    done = subprocess.run([sys.executable, "-c", FIRST_SESSION], capture_output=True, text=True, cwd=APP_ROOT, env=environment, timeout=600)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["failures"] == []
    assert found["missing"] == []
    assert found["again"] == []  # the index and its levels' tokens came from the warm-up
    assert found["exceptions"] == []
    assert found["run"] == [["Run global search", False]]
    assert len(found["levels"]) == 1 and "leaf" in " ".join(found["levels"][0])
