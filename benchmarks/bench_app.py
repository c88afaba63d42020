"""How closely the Explore page keeps up with the engine, in Debian's chromium.

Starts ``streamlit run app.py`` (this checkout) with a fresh run history, opens Explore in a
1280x800 page and measures, for runs of the default question with the offline model at the
presentation pace (``--latency``, default 0.4 s per call):

- **open**: seconds from opening the page (a new session on a running server) until Run is
  enabled (target: under 3 s), as the page saw it (its own clock from the navigation's start,
  looked at every 20 ms; Playwright's own waiting looks at the page less and less often, up to
  every half second). Measured apart for the **first session** after a server starts:
  ``--servers`` servers are started one after another on one port (``streamlit run app.py``,
  timed until it answers its health check), and each is opened first by one browser kept across
  them (Streamlit's scripts in its cache, as for a person who opened the app before; the first
  server's is the only cold one and is reported on its own), then by a new browser (no cache) on
  the server that has now served the page once. The server's start and its first session's open
  are also added up: what a person who opens the page as soon as the server answers waits in all
  (work done at start is not free, it moves). The runs below are made on one more server
  in one browser, after its first session, so their sessions are later ones with that browser's cache;
- **first bar**: seconds from the first map reply (the engine's clock, read back from the run
  history) until the usefulness chart shows a finished batch (target: under 1 s);
- **answer**: seconds from the run's end until the answer's heading is on the page (target:
  under 1 s);
- **charts held**: once the first bar is drawn, in how many samples (every 100 ms, taken in the
  page) both the usefulness chart and the call timeline are on the page while the run streams
  (and in how many a chart was greyed out);
- **shown**: seconds from the click on Run until the page says the run is running (how long the
  click takes to reach the server and the page to be drawn again: part of both lags).

Both lags are measured from the click on Run, so they include the time the click takes to
reach the server (an upper bound). ``--load N`` runs N CPU-bound processes beside the server
(the issue's busy 2-core machine: ``--load 2``).

    python benchmarks/bench_app.py [--runs 3] [--servers 4] [--load 2] [--latency 0.4]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' browser support, as the other benchmarks do

from graphrag_core.events import MapBatchCached, MapBatchFailed, MapBatchSucceeded, RunFailed, RunFinished  # noqa: E402
from graphrag_app.explore.state import Keys  # noqa: E402
from graphrag_core.history import RunStore  # noqa: E402
from tests.browser_support import busy_processes, chromium, chromium_page, free_port, install_live_sampler, live_figures, streamlit_server, url_param  # noqa: E402

TARGETS = {"open": 3.0, "first bar": 1.0, "answer": 1.0}

RUN_ENABLED_WATCH = """(() => {
    const watch = setInterval(() => {
        const run = document.querySelector('.st-key-%s button');
        if (run && !run.disabled) { window.__graphragRunEnabled = performance.now(); clearInterval(watch); }
    }, 20);
})();""" % Keys.RUN
"""Run in every page the bench opens, before the page's own scripts: when Run is first enabled,
in milliseconds since the navigation started."""


def open_page(page, url: str) -> float:  # type: ignore[no-untyped-def]
    """Open Explore at ``url`` in ``page``; seconds from the navigation's start until Run is enabled."""
    from playwright.sync_api import expect

    page.goto(url)
    expect(page.get_by_role("button", name="Run global search")).to_be_enabled(timeout=120_000)
    return float(page.wait_for_function("() => window.__graphragRunEnabled").json_value()) / 1000


@contextlib.contextmanager
def explore_tab(browser: object) -> Iterator[object]:
    """A 1280x800 page in a new browser context of ``browser`` (no cache, no cookies) that notes
    when Run is first enabled (:data:`RUN_ENABLED_WATCH`)."""
    with chromium_page(height=800, browser=browser) as page:
        page.set_viewport_size({"width": 1280, "height": 800})  # type: ignore[attr-defined]
        page.add_init_script(RUN_ENABLED_WATCH)  # type: ignore[attr-defined]
        yield page


def first_sessions(browser: object, tmp: Path, *, servers: int, latency: float) -> list[dict[str, float]]:
    """``servers`` servers started one after another on one port; for each, seconds until it
    answers, its first session's open in a browser context kept across them (its cache holds the
    page from the server before; the first server's is cold), then a new browser's open."""
    port = free_port()
    rows = []
    with explore_tab(browser) as kept:
        for n in range(servers):
            home = tmp / f"fresh-{n}"
            home.mkdir()
            started = time.perf_counter()
            with streamlit_server(home, home / "runs.sqlite3", port=port) as url:
                row = {"start": time.perf_counter() - started, "first": open_page(kept, f"{url}/?latency={latency:g}")}
                kept.goto("about:blank")  # type: ignore[attr-defined]  # the session ends before the server does
                with explore_tab(browser) as page:
                    row["new browser"] = open_page(page, f"{url}/?latency={latency:g}")
            rows.append(row)
    return rows


def measure(url: str, db: Path, *, latency: float, runs: int, browser: object) -> list[dict[str, float]]:
    """``runs`` runs, each in a new session of one browser context (its cache kept)."""
    rows = []
    with explore_tab(browser) as page:
        for n in range(runs):
            open_s = open_page(page, f"{url}/?latency={latency:g}&seed={100 + n}")
            run = page.get_by_role("button", name="Run global search")
            install_live_sampler(page)
            run.click()
            # the sampler's own flag, looked at every 100 ms: Playwright's expect took a snapshot of
            # the page's accessibility tree on every failed look (1.2 s of the page's CPU in a run)
            page.wait_for_function("() => window.__graphragLive.answer !== null", polling=100, timeout=300_000)
            page.wait_for_url(lambda u: url_param(u, "run") is not None)
            figures = live_figures(page)
            record = RunStore(db).get(str(url_param(page.url, "run")))
            assert record is not None, "the run is not in the history"
            first_reply = min(e.at for e in record.events if isinstance(e, (MapBatchSucceeded, MapBatchCached, MapBatchFailed)))
            end = next(e.at for e in record.events if isinstance(e, (RunFinished, RunFailed)))
            rows.append(
                {
                    "open": open_s,
                    "first bar": figures["first_bar_s"] - first_reply,
                    "answer": figures["answer_s"] - end,
                    "held": figures["held"],
                    "faded": figures["faded"],
                    "shown": figures["shown_s"],
                    "samples": figures["samples"],
                    "run": end,
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--servers", type=int, default=4, help="servers started one after another whose first session is measured (the first with a cold browser)")
    parser.add_argument("--load", type=int, default=2, help="CPU-bound processes beside the server")
    parser.add_argument("--latency", type=float, default=0.4, help="the offline model's simulated seconds per call")
    args = parser.parse_args()
    before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, busy_processes(args.load), chromium() as browser:
        fresh = first_sessions(browser, Path(tmp), servers=args.servers, latency=args.latency) if args.servers else []
        home = Path(tmp) / "runs"
        home.mkdir()
        rows = []
        if args.runs:
            with streamlit_server(home, home / "runs.sqlite3") as url:
                with explore_tab(browser) as page:  # the server's first session: the runs' sessions are later ones
                    open_page(page, f"{url}/?latency={args.latency:g}")
                rows = measure(url, home / "runs.sqlite3", latency=args.latency, runs=args.runs, browser=browser)
    print(f"Explore at 1280x800, offline model at {args.latency:g} s per call, {args.load} CPU-bound processes beside the server")
    print(f"load average (1 min) {before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} CPUs (other work on the machine counts too)")
    if fresh:
        print(f"{'server':>6} {'answers after s':>16} {'first session open s':>21} {'then a new browser s':>21}")
        for n, row in enumerate(fresh, start=1):
            cold = "  (a browser with nothing cached)" if n == 1 else ""
            print(f"{n:>6} {row['start']:>16.2f} {row['first']:>21.2f} {row['new browser']:>21.2f}{cold}")
        cached = [r["first"] for r in fresh[1:]]
        if cached:
            print(
                f"open, first session after a fresh start (browser with the page cached): median {statistics.median(cached):.2f} s, "
                f"worst {max(cached):.2f} s (target < {TARGETS['open']:g} s)"
            )
            launch = [r["start"] + r["first"] for r in fresh[1:]]
            print(f"from launching a server to Run enabled on its first session (both of the above): median {statistics.median(launch):.2f} s")
        print(
            f"open, first session with nothing cached {fresh[0]['first']:.2f} s; a new browser once the server has served a session: "
            f"median {statistics.median(r['new browser'] for r in fresh):.2f} s; servers answer after median "
            f"{statistics.median(r['start'] for r in fresh):.2f} s"
        )
    if rows:
        print(f"{'run':>4} {'run s':>7} {'open s':>7} {'shown s':>8} {'first bar s':>12} {'answer s':>9} {'charts held':>14} {'greyed':>7}")
        for n, row in enumerate(rows, start=1):
            held = f"{row['held']:.0f} of {row['samples']:.0f}"
            print(
                f"{n:>4} {row['run']:>7.2f} {row['open']:>7.2f} {row['shown']:>8.2f} {row['first bar']:>12.2f} {row['answer']:>9.2f} {held:>14} {row['faded']:>7.0f}"
            )
        for name, target in TARGETS.items():
            worst = max(row[name] for row in rows)
            label = "open, later sessions (this browser's cache)" if name == "open" else name
            print(f"{label}: median {statistics.median(row[name] for row in rows):.2f} s, worst {worst:.2f} s (target < {target:g} s)")
        held, samples = sum(r["held"] for r in rows), sum(r["samples"] for r in rows)
        print(f"charts held: both charts on the page in {held:.0f} of {samples:.0f} samples after the first bar")


if __name__ == "__main__":
    sys.exit(main())
