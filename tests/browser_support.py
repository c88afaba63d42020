"""What the browser tests share: a real ``streamlit run app.py`` server and Debian's chromium.

The fixtures built on these (``server``, ``page``, ``page_height``, ``server_history``,
``server_env``) are in ``tests/conftest.py``. A browser test module starts with::

    pytestmark = pytest.mark.browser
    sync_api = require_browser()
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from urllib.parse import parse_qs, urlsplit

import pytest

from . import APP_ROOT, wait_until

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = APP_ROOT / "test-artifacts"
SERVER_START_TIMEOUT_S = 60
UI_TIMEOUT_MS = 60_000
SERVER_PROCESSES: dict[str, subprocess.Popen] = {}
"""The ``streamlit run`` process behind each URL :func:`streamlit_server` yields (tests that
kill a server look it up here)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def streamlit_server(home: Path, db: Path, *, env: Mapping[str, str] | None = None, port: int | None = None) -> Iterator[str]:
    """``streamlit run app.py`` on ``port`` (default: a free one) with the run history in ``db`` (and ``env`` over
    the environment); yields its URL once it answers its health check, and kills it afterwards
    (its log is ``home/server.log``). Killed, not asked to stop: nothing needs its orderly exit
    (its history is the caller's own), and that exit, tearing down what the app loaded, took 1-3 s
    of each browser test module."""
    port = port or free_port()
    extra = dict(env or {})
    env = {**os.environ, "GRAPHRAG_EXPLORER_DB": str(db), "GRAPHRAG_LLM_OFFLINE_LATENCY": "0"}  # no presentation pace
    env.pop("GRAPHRAG_EXPLORER_ALLOWED_ROOTS", None)
    env.pop("GRAPHRAG_EXPLORER_CACHE", None)  # the map cache goes beside the run history
    env.update(extra)
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless", "true"]
    url = f"http://localhost:{port}"
    with open(home / "server.log", "w") as log:
        process = subprocess.Popen(command, cwd=APP_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:

            def healthy() -> bool:
                if process.poll() is not None:
                    raise RuntimeError(f"streamlit exited with code {process.returncode} before it answered; see {home / 'server.log'}")
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                        return response.status == 200
                except OSError:
                    return False

            wait_until(healthy, f"streamlit to answer its health check (see {home / 'server.log'})", timeout_s=SERVER_START_TIMEOUT_S, pause_s=0.3)
            SERVER_PROCESSES[url] = process
            yield url
        finally:
            SERVER_PROCESSES.pop(url, None)
            process.kill()
            process.wait()


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """Debian's chromium (headless, driven by Playwright; never a downloaded browser), launched
    for the block and closed after it.

    While it runs, Playwright's sync API keeps an event loop running on this thread, so
    ``asyncio.run`` here fails: do what needs one (seeding a run history) before the block."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def chromium_page(*, height: int, browser: object | None = None) -> Iterator[object]:
    """A page 1,500 px wide and ``height`` px tall (so full-page screenshots show every section)
    in a browser context of its own: no cookies, storage or app session shared with another
    page. In ``browser`` when given (a launch costs more than a context), else in a chromium
    launched for the block (:func:`chromium`)."""
    with contextlib.ExitStack() as stack:
        if browser is None:
            browser = stack.enter_context(chromium())
        context = browser.new_context(viewport={"width": 1500, "height": height})  # type: ignore[attr-defined]
        stack.callback(context.close)
        page = context.new_page()
        page.set_default_timeout(UI_TIMEOUT_MS)
        yield page


def require_browser() -> ModuleType:
    """Skip the calling test module (call it at module level) when Debian's chromium or
    Playwright is missing; else return ``playwright.sync_api`` with ``expect`` waiting up to
    :data:`UI_TIMEOUT_MS`."""
    if not CHROMIUM.exists():
        pytest.skip(f"Debian's chromium ({CHROMIUM}) is not installed", allow_module_level=True)
    sync_api = pytest.importorskip("playwright.sync_api")  # a third-party tool, not the project's code
    sync_api.expect.set_options(timeout=UI_TIMEOUT_MS)
    return sync_api


def shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    """A full-page screenshot of ``page`` saved as ``test-artifacts/<name>.png``."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def url_param(url: str, name: str) -> str | None:
    """The value of query parameter ``name`` in ``url`` (the last one if repeated), or None."""
    values = parse_qs(urlsplit(url).query).get(name)
    return values[-1] if values else None


def wait_for_url_param(page, name: str, value: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until ``page``'s URL has ``name=value``. Explore writes its settings into the URL on
    the script run that reads them, so from then on the server holds the new value."""
    page.wait_for_url(lambda url: url_param(url, name) == value)


def wait_for_new_url_param(page, name: str, old: str | None) -> str:  # type: ignore[no-untyped-def]
    """Wait until ``page``'s URL has a value of ``name`` other than ``old``, and return it."""
    page.wait_for_url(lambda url: url_param(url, name) not in (None, old))
    return str(url_param(page.url, name))


def ask(page, question: str) -> None:  # type: ignore[no-untyped-def]
    """Type ``question`` into Explore's question box and press Run global search once the
    server has the question (the text area commits on Ctrl+Enter; the URL's ``q`` follows)."""
    box = page.get_by_label("Question")
    box.fill(question)
    box.press("Control+Enter")
    wait_for_url_param(page, "q", question)
    page.get_by_role("button", name="Run global search").click()


def wait_for_script_run(page) -> None:  # type: ignore[no-untyped-def]
    """Wait until the app's script is not running (Streamlit marks its root element with
    ``data-test-script-state``): what the page shows is what that run drew."""
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(state="attached")


_PLOTS_SETTLED = """(token) => {
    const signature = [...document.querySelectorAll('.js-plotly-plot')].map((plot) => {
        const box = plot.getBoundingClientRect();
        const shown = box.width > 0 && box.height > 0;
        if (shown && (!plot._fullLayout || !plot._fullData || plot._transitioning)) return null;
        const traces = plot._fullData ? plot._fullData.length : 0;
        const drawn = plot.querySelectorAll('svg *').length;
        return [box.x + window.scrollX, box.y + window.scrollY, box.width, box.height, traces, drawn].map(Math.round).join(',');
    });
    if (signature.includes(null)) return false;
    const joined = signature.join(';');
    const last = window.__graphragPlots;
    window.__graphragPlots = {token, joined};
    return last !== undefined && last.token === token && last.joined === joined;
}"""

_SETTLE_TOKENS = itertools.count()

PLOTS_POLL_MS = 150
"""How far apart :func:`wait_for_plots_settled` samples the charts; two equal samples in a row
mean they have settled."""


def wait_for_plots_settled(page) -> None:  # type: ignore[no-untyped-def]
    """Wait until every Plotly chart on ``page`` is drawn (its figure laid out with its traces,
    no transition running) and two samples :data:`PLOTS_POLL_MS` apart agree on each chart's
    place, size, trace count and number of drawn SVG elements: the state a screenshot shows."""
    page.wait_for_function(_PLOTS_SETTLED, arg=next(_SETTLE_TOKENS), polling=PLOTS_POLL_MS)


def chart_title(page, pattern: str):  # type: ignore[no-untyped-def]
    """The first visible title of a Plotly chart matching the regex ``pattern`` (Plotly keeps
    hidden copies of text while it lays out)."""
    return page.locator(".js-plotly-plot .gtitle >> visible=true").filter(has_text=re.compile(pattern)).first


@contextlib.contextmanager
def busy_processes(count: int) -> Iterator[list[subprocess.Popen]]:
    """``count`` CPU-bound processes (a busy machine) for the length of the block."""
    processes = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield processes
    finally:
        for process in processes:
            process.kill()
            process.wait()


LIVE_SAMPLE_MS = 100
"""How often :func:`install_live_sampler` looks at the page."""

_LIVE_SAMPLER = r"""(every) => {
    if (window.__graphragLive) return;
    const live = window.__graphragLive = {clicked: null, started: null, firstBar: null, answer: null, samples: 0, held: 0, faded: 0, gaps: []};
    const shown = (element) => { const box = element.getBoundingClientRect(); return box.width > 0 && box.height > 0; };
    const title = (pattern) => [...document.querySelectorAll('.js-plotly-plot .gtitle')].some((t) => shown(t) && pattern.test(t.textContent));
    const opacity = (element) => {  // as seen: the product of the opacities of the element and its ancestors
        let seen = 1;
        for (let e = element; e && e !== document.body; e = e.parentElement) seen *= Number(getComputedStyle(e).opacity);
        return seen;
    };
    const faded = () => [...document.querySelectorAll('.js-plotly-plot')].some((p) => shown(p) && opacity(p) < 0.99);
    const running = () => [...document.querySelectorAll('[data-testid="stText"]')].some((t) => /^Status: running/.test(t.textContent));
    const streaming = () => [...document.querySelectorAll('.js-plotly-plot .gtitle')].some((t) => {  // some batches finished, not all:
        const m = shown(t) && /^Map batches: ([\d,]+) of ([\d,]+) finished/.exec(t.textContent);  // this run's chart, not one left
        const count = (text) => Number(text.replace(/,/g, ''));                                      // from what the page showed before
        return Boolean(m) && count(m[1]) > 0 && count(m[1]) < count(m[2]);
    });
    document.addEventListener('click', (event) => {
        const button = event.target.closest('button');
        if (button && /Run global search|Run fresh|Replay/.test(button.textContent) && live.clicked === null) live.clicked = performance.now();
    }, true);
    setInterval(() => {
        if (live.clicked === null) return;
        const now = performance.now();
        if (live.started === null) {
            if (!running()) return;  // what the page showed before the run streams is not the run's
            live.started = now;
        }
        if (live.firstBar === null && streaming()) live.firstBar = now;
        const answer = document.querySelector('.st-key-answer-box');  // the finished answer (not the draft the reduce streams)
        if (live.answer === null && answer && shown(answer) && !running()) live.answer = now;
        if (live.firstBar !== null && live.answer === null && running()) {
            live.samples += 1;
            const useful = title(/^Map batches: /), timeline = title(/^Model calls: /);
            if (useful && timeline) live.held += 1;
            else live.gaps.push([Math.round(now - live.clicked), useful, timeline, document.querySelectorAll('.js-plotly-plot').length]);
            if (faded()) live.faded += 1;
        }
    }, every);
}"""


def install_live_sampler(page) -> None:  # type: ignore[no-untyped-def]
    """Sample ``page`` every :data:`LIVE_SAMPLE_MS` from the next click on a button that starts
    a run: when the usefulness chart first shows some of its batches finished (not all: a chart
    left from the page before shows them all), when the answer's heading
    appears, and, while the run streams after its first bar, whether the usefulness chart and
    the call timeline are both on the page. Read the figures with :func:`live_figures`."""
    page.evaluate(_LIVE_SAMPLER, LIVE_SAMPLE_MS)


def live_figures(page) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """What :func:`install_live_sampler` saw: ``shown_s`` (the page says the run is running),
    ``first_bar_s`` and ``answer_s`` (seconds after the click, None when not seen; the answer is the finished one, not the draft the reduce streams), ``samples`` taken while the run streamed after its first
    bar, ``held`` (both charts present), ``faded`` (a chart drawn greyed out) and ``gaps`` (when they were not: ms after the click,
    whether each chart's title was there, and how many charts the page held)."""
    page.wait_for_function("() => window.__graphragLive.answer !== null")
    live = page.evaluate("() => window.__graphragLive")
    clicked = live["clicked"]

    def since(value: float | None) -> float | None:
        return None if value is None or clicked is None else (value - clicked) / 1000

    return {
        "shown_s": since(live["started"]),
        "first_bar_s": since(live["firstBar"]),
        "answer_s": since(live["answer"]),
        "samples": live["samples"],
        "held": live["held"],
        "faded": live["faded"],
        "gaps": live["gaps"],
    }


_CUT_TEXTS = """() => {
    const cut = [];
    for (const el of document.querySelectorAll('[data-testid="stApp"] *')) {
        const style = getComputedStyle(el);
        const box = el.getBoundingClientRect();
        if (!box.width || !box.height) continue;
        if (el.tagName === 'INPUT' && el.getAttribute('role') === 'combobox') {  // a select box shows its choice in an input
            if (el.scrollWidth > el.clientWidth + 1) cut.push(el.value.slice(0, 80));
            continue;
        }
        if (!el.textContent.trim()) continue;
        const ellipsis = style.textOverflow === 'ellipsis';
        const faded = (style.maskImage || style.webkitMaskImage || 'none') !== 'none';
        if ((ellipsis || faded) && el.scrollWidth > el.clientWidth + 1) cut.push(el.textContent.trim().slice(0, 80));
    }
    for (const plot of document.querySelectorAll('.js-plotly-plot')) {  // an SVG title runs past its chart, cut by it
        const chart = plot.getBoundingClientRect();
        if (!chart.width || !chart.height) continue;
        for (const title of plot.querySelectorAll('.gtitle')) {
            const box = title.getBoundingClientRect();
            if (box.width && (box.right > chart.right + 1 || box.left < chart.left - 1)) cut.push(title.textContent.trim().slice(0, 80));
        }
    }
    return cut;
}"""
"""Every text the page cuts to fit: an ellipsis, a choice wider than its select box, a row of
tags faded out at its edge, or a chart's title wider than its chart."""


def cut_texts(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The texts on ``page`` that do not fit their box and are cut (an ellipsis, or clipped)."""
    return page.evaluate(_CUT_TEXTS)


_LEGEND_OVERLAPS = """() => {
    const found = [];
    const meet = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
    for (const plot of document.querySelectorAll('.js-plotly-plot')) {
        const legend = plot.querySelector('.legend');
        if (!legend || !legend.getBoundingClientRect().width) continue;
        const box = legend.getBoundingClientRect();
        const others = [...plot.querySelectorAll('.gtitle, .xtitle, .ytitle, .modebar')].filter((e) => e.getBoundingClientRect().width);
        for (const other of others) {
            if (meet(box, other.getBoundingClientRect())) found.push((plot.querySelector('.gtitle') || {}).textContent + ' / ' + (other.textContent || other.className.baseVal || other.className));
        }
    }
    return found;
}"""


def legend_overlaps(page) -> list[str]:  # type: ignore[no-untyped-def]
    """Each chart whose legend lies over its title, an axis title or its toolbar."""
    return page.evaluate(_LEGEND_OVERLAPS)
