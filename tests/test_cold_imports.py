"""A cold command line imports what its command uses: no exact encoder for the estimate, no
OpenAI SDK for the offline model, no scipy outside an evaluation's p-values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("bpe_openai", "openai", "scipy")


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
        "bpe_openai": False, "openai": False, "scipy": False,
    }


def test_an_exact_tokenizer_loads_only_the_compiled_encoder(tmp_path: Path) -> None:
    # bpe_openai's package reads every encoding's rank table when imported (seconds); counting
    # needs only its compiled module, which is loaded by itself
    found = modules_after(tmp_path, "query", "jargon", "What are the main themes?", "--level", "1", "--seed", "7", "--tokenizer", "o200k_base")
    assert found == {"bpe_openai": False, "openai": False, "scipy": False}
