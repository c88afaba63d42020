"""The benchmarks run as the README writes them: ``python benchmarks/<script>.py``, with no
PYTHONPATH, from any folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_app_benchmark_starts_without_a_pythonpath(tmp_path: Path) -> None:
    """bench_app.py borrows the browser tests' support (``tests.browser_support``): it finds it
    itself, as the other benchmarks find the engine."""
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_app.py"), "--help"],
        capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "--load" in done.stdout
