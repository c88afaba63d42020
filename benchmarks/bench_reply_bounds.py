"""The run history after a huge model reply (issue 16): one map reply of 50 MB in a run on the
jargon sample, recorded as the app records it; then the run deleted.

Prints the history file's size with a normal run, after the run with the huge reply (the reply is
refused as too long and only its start is kept), and after deleting that run.

    python benchmarks/bench_reply_bounds.py [--reply-mb 50]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from graphrag_core import GlobalSearchRequest, ScriptedChatModel, retrieve_global
from graphrag_core.index import load_index
from graphrag_core.history import RunRecorder
from graphrag_core.samples import SAMPLES
from graphrag_core.history import RunStore

GOOD = '{"answer": "Hackers call it a kludge [Data: Reports (1)].", "usefulness": 60}'


def history_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reply-mb", type=float, default=50.0)
    args = parser.parse_args()
    index = load_index(SAMPLES["jargon"])
    request = GlobalSearchRequest(query="What do hackers call a clever but ugly fix?", community_level=0, seed=1)
    huge = '{"answer": "' + "spam " * int(args.reply_mb * 1_000_000 / 5) + '", "usefulness": 90}'

    def run(store: RunStore, first_map_reply: str) -> str:
        sent = {"huge": False}

        def reply(r):
            if r.purpose == "reduce":
                return '{"answer": "A kludge [Data: Reports (1)]."}'
            if not sent["huge"]:
                sent["huge"] = True
                return first_map_reply
            return GOOD

        recorder = RunRecorder(store, index_name="jargon")
        asyncio.run(retrieve_global(index, request, ScriptedChatModel(reply), on_event=recorder))
        recorder.close()
        assert recorder.saved_run_id is not None, recorder.save_error
        return recorder.saved_run_id

    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        store = RunStore(folder / "runs.sqlite3")
        run(store, GOOD)
        normal = history_bytes(folder)
        huge_id = run(store, huge)
        with_huge = history_bytes(folder)
        store.delete(huge_id)
        after_delete = history_bytes(folder)
    print(f"a map reply of {len(huge) / 1e6:.0f} MB in a run on jargon (level 0)")
    print(f"history with one normal run: {normal:,} bytes")
    print(f"after the run with the huge reply: {with_huge:,} bytes (+{with_huge - normal:,})")
    print(f"after deleting that run: {after_delete:,} bytes")


if __name__ == "__main__":
    main()
