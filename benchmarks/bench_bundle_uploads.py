"""Run bundle uploads against a running app (issue 27, finding 5): the server's memory while it
reads a many-event bundle, a large one near the 200 MB upload limit, and several large ones at once.

Each scenario starts a fresh ``streamlit run app.py`` (its own history), opens Explore in
Debian's chromium (Playwright), uploads the bundle(s) through "Open run bundle" and waits for
the page to say what it did. It prints the server's resident memory before the upload, its peak
(``VmHWM``) and after, and what the page said:

- ``many-events``: a run followed by 600,000 small events (about 64 MB), the shape that took the
  server from 277 MB to 1.99 GB before bundles were read as a stream and bounded;
- ``large``: a real 1,927-batch offline run on the Jargon sample whose map replies are padded
  to make a bundle of about 190 MB (under the event limit: it opens);
- ``large-x3``: three such uploads at once, from three browser pages.

    python benchmarks/bench_bundle_uploads.py [--scenarios many-events,large,large-x3] [--app-root PATH]

``--app-root`` runs another checkout's app (e.g. the main branch) to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import re
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
DONE = re.compile("Opened run|holds more than|was not opened|could not be put|is not JSON|not a valid run bundle")
UI_TIMEOUT_MS = 600_000
MANY_EVENTS = 600_000
LARGE_MB = 190


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def memory_mb(pid: int) -> dict[str, float]:
    """Resident and peak resident memory (MB) of the process ``pid``."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return fields


@contextlib.contextmanager
def app_server(app_root: Path, home: Path) -> Iterator[tuple[str, int]]:
    port = free_port()
    env = {**os.environ, "GRAPHRAG_EXPLORER_DB": str(home / "runs.sqlite3"), "GRAPHRAG_LLM_OFFLINE_LATENCY": "0", "PYTHONPATH": str(app_root)}
    env.pop("GRAPHRAG_EXPLORER_ALLOWED_ROOTS", None)
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless", "true"]
    with open(home / "server.log", "w") as log:
        process = subprocess.Popen(command, cwd=app_root, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"http://localhost:{port}/_stcore/health", timeout=2) as response:
                        if response.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"the app did not start; see {home / 'server.log'}")
                time.sleep(0.3)
            yield f"http://localhost:{port}", process.pid
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


def base_run() -> dict:
    """A 1,927-batch offline run on the Jargon sample, as a bundle document."""
    from graphrag_core import GlobalSearchRequest, retrieve_global
    from graphrag_core.bundle import bundle_to_json, make_bundle
    from graphrag_core.history import RunRecord
    from graphrag_core.index import load_index
    from graphrag_core.llm.offline import OfflineChatModel
    from graphrag_core.samples import SAMPLES

    events: list = []
    request = GlobalSearchRequest(query="What are the main themes?", seed=1, map_token_budget=1000)
    asyncio.run(retrieve_global(load_index(SAMPLES["jargon"]), request, OfflineChatModel(), on_event=events.append))
    return json.loads(bundle_to_json(make_bundle(RunRecord.from_events(events, index_name="jargon"))))


def many_events_bundle(document: dict, path: Path) -> None:
    document = json.loads(json.dumps(document))
    end = document["events"].pop()
    document["events"] += [{"kind": "model_notice", "at": 1.0, "message": f"n{i}"} for i in range(MANY_EVENTS)]
    document["events"].append(end)
    path.write_text(json.dumps(document), encoding="utf-8")


def large_bundle(document: dict, path: Path) -> None:
    document = json.loads(json.dumps(document))
    replies = [e for e in document["events"] if e["kind"] == "map_batch_succeeded"]
    base = len(json.dumps(document))
    pad = max(0, (LARGE_MB * 1_000_000 - base) // len(replies))
    for event in replies:
        event["raw_reply"] = (event["raw_reply"] or "") + " " * pad
    path.write_text(json.dumps(document), encoding="utf-8")


def upload(url: str, bundles: list[Path]) -> list[str]:
    """Upload each bundle from its own page, all at once; what each page said."""
    from playwright.sync_api import sync_playwright

    said: list[str] = [""] * len(bundles)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            pages = [browser.new_page(viewport={"width": 1500, "height": 1800}) for _ in bundles]
            for page in pages:
                page.goto(url + "/")
                page.get_by_role("button", name="Run global search").wait_for(timeout=UI_TIMEOUT_MS)
                page.get_by_text("Open run bundle").first.click()
            for page, bundle in zip(pages, bundles):
                page.locator("input[type='file']").last.set_input_files(str(bundle))
            for i, page in enumerate(pages):
                notice = page.locator("[data-testid='stAlert']").filter(has_text=DONE).first
                notice.wait_for(timeout=UI_TIMEOUT_MS)
                said[i] = " ".join(notice.inner_text().split())[:160]
        finally:
            browser.close()
    return said


def scenario(name: str, app_root: Path, bundles: list[Path]) -> None:
    with tempfile.TemporaryDirectory() as home, app_server(app_root, Path(home)) as (url, pid):
        with urllib.request.urlopen(url + "/", timeout=10):
            pass
        before = memory_mb(pid)
        started = time.monotonic()
        said = upload(url, bundles)
        took = time.monotonic() - started
        time.sleep(2.0)  # the page draws the opened run
        after = memory_mb(pid)  # VmHWM: the kernel's own record of the peak, since the server started
        size = sum(b.stat().st_size for b in bundles) / 1e6
        print(
            f"{name:12s} {len(bundles)} upload(s), {size:,.0f} MB: server {before['VmRSS']:,.0f} MB before, "
            f"peak {after['VmHWM']:,.0f} MB ({after['VmHWM'] / before['VmRSS']:.1f}x), {after['VmRSS']:,.0f} MB after; {took:.1f} s"
        )
        for text in dict.fromkeys(said):
            print(f"{'':12s} page said: {text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default="many-events,large,large-x3")
    parser.add_argument("--app-root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    wanted = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    with tempfile.TemporaryDirectory() as folder:
        document = base_run()
        many, large = Path(folder) / "many-events.bundle.json", Path(folder) / "large.bundle.json"
        if "many-events" in wanted:
            many_events_bundle(document, many)
        if {"large", "large-x3"} & set(wanted):
            large_bundle(document, large)
        copies = [large] + [Path(folder) / f"large-{i}.bundle.json" for i in (1, 2)]
        for copy in copies[1:]:
            if "large-x3" in wanted:
                os.link(large, copy)
        print(f"app: {args.app_root}")
        for name in wanted:
            bundles = {"many-events": [many], "large": [large], "large-x3": copies}[name]
            scenario(name, args.app_root, bundles)


if __name__ == "__main__":
    main()
