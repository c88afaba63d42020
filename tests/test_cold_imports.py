"""A cold command line imports what its command uses: no exact encoder for the estimate, no
OpenAI SDK for the offline model, no scipy outside an evaluation's p-values, no graph library
for a search. Explore's first page imports neither pandas nor a graph library (pandas follows
in the background once the page is drawn)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("bpe_openai", "openai", "scipy", "networkx")


def modules_after(tmp_path: Path, *arguments: str) -> dict[str, bool]:
    """Run one command in a fresh interpreter; which of the heavy modules it imported."""
    code = (
        "import sys, json\n"
        "from graphrag_cli.main import main\n"
        f"code = main({list(arguments)!r} + ['--no-cache', '--store', {str(tmp_path / 'runs.sqlite3')!r}], environ={{}})\n"
        f"print(json.dumps({{'code': code, **{{m: m in sys.modules for m in {HEAVY!r}}}}}))\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=environment, timeout=300)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found.pop("code") == 0, done.stderr
    return found


def test_an_offline_query_imports_no_encoder_no_sdk_and_no_scipy(tmp_path: Path) -> None:
    assert modules_after(tmp_path, "query", "jargon", "What are the main themes?", "--level", "1", "--seed", "7") == {
        "bpe_openai": False, "openai": False, "scipy": False, "networkx": False,
    }


def test_an_exact_tokenizer_loads_only_the_compiled_encoder(tmp_path: Path) -> None:
    # bpe_openai's package reads every encoding's rank table when imported (seconds); counting
    # needs only its compiled module, which is loaded by itself
    found = modules_after(tmp_path, "query", "jargon", "What are the main themes?", "--level", "1", "--seed", "7", "--tokenizer", "o200k_base")
    assert found == {"bpe_openai": False, "openai": False, "scipy": False, "networkx": False}


def test_explore_opens_without_pandas_or_the_graph_library_and_then_loads_pandas(tmp_path: Path) -> None:
    # the first session after the server starts imports what the page draws; the hierarchy's
    # and a community's entity graphs (networkx) are drawn on other pages, and pandas (tables)
    # is imported in the background once Explore has drawn, before a run's answer needs it
    code = (
        "import sys, json, threading\n"
        "from streamlit.testing.v1 import AppTest\n"
        "import graphrag_app.explore.views, graphrag_app.explore.sidebar, graphrag_app.explore.actions, graphrag_app.navigation\n"
        "loaded = {m: m in sys.modules for m in ('pandas', 'networkx')}\n"
        f"at = AppTest.from_file({str(ROOT / 'app.py')!r}, default_timeout=120).run()\n"
        "for thread in threading.enumerate():\n"
        "    if thread.name == 'warm-libraries': thread.join(120)\n"
        "print(json.dumps({'exception': [str(e.value) for e in at.exception], 'before': loaded, 'networkx': 'networkx' in sys.modules,"
        " 'pandas': 'pandas' in sys.modules, 'run': [b.label for b in at.button if b.key == 'run_global_search']}))\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "GRAPHRAG_EXPLORER_DB": str(tmp_path / "runs.sqlite3")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=environment, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "exception": [], "before": {"pandas": False, "networkx": False}, "networkx": False, "pandas": True, "run": ["Run global search"],
    }
