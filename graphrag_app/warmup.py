"""The server's warm-up: what the first session after a start would otherwise do itself, done once
when the server starts, before it answers anyone (``app.py``'s ``st.App`` lifespan:
:func:`warm_lifespan`).

It imports the modules the Explore page imports (read from the page file itself, so the list
cannot fall behind the page), opens the default sample index through the app's index cache,
counts that index's levels' tokens with the default settings' tokenizer in the app's
:class:`~graphrag_app.previews.CostPreviews`, and imports the libraries a run's answer needs
(:func:`~graphrag_app.loaders.warm_libraries`). The index cache and the previews are
``st.cache_resource`` objects shared by every session, so Explore's first session finds them
ready, as every later session does.

It runs once per process (:func:`server_warm_up`). A step that fails is reported in the server's
log and skipped: the page then does the same work itself and shows its own error. The server
waits for the warm-up at most :data:`WARM_WAIT_S` (a browser opening the page meanwhile waits
for it to answer); past that it answers and the warm-up goes on beside it (a session needing a
module or the index meanwhile waits for the same import or load, never repeats it).
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import importlib
import importlib.util
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st

from .navigation import APP_ROOT, PAGE_SPECS

WARM_PAGES = tuple(spec.path for spec in PAGE_SPECS if spec.default)
"""The page files whose imports are made at start: the default page's (Explore, which ``/`` opens)."""
WARM_WAIT_S = 10.0
"""The longest the server waits for its warm-up before it answers (2-5 s on a quiet 2-core machine)."""
WARM_THREAD_NAME = "warm-up"
LOG_PREFIX = "GraphRAG Explorer warm-up:"
"""How the warm-up's lines in the server's log begin."""


@dataclass
class WarmUp:
    """What a warm-up did: each step's name and seconds, in order, and the steps that failed
    with the error's words."""

    steps: list[tuple[str, float]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return sum(seconds for _name, seconds in self.steps)

    def line(self) -> str:
        """The warm-up in one line of the server's log."""
        steps = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.steps)
        failed = "".join(f"; {name} failed ({error}), the first session does it" for name, error in self.failures)
        return f"{LOG_PREFIX} ready in {self.seconds:.1f} s ({steps}){failed}"


def page_imports(page: Path) -> list[str]:
    """The modules a page file imports at its top, in order: ``import a.b`` and ``from a.b import
    c`` name ``a.b``, and the latter names ``a.b.c`` too when ``a.b`` is a package holding a module ``c``."""
    names: list[str] = []
    for node in ast.parse(page.read_text(encoding="utf-8"), filename=str(page)).body:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module != "__future__":
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names if _submodule(node.module, alias.name))
    return list(dict.fromkeys(names))


def _submodule(package: str, name: str) -> bool:
    """Whether ``package`` is a package with a module ``name`` (the package is imported to tell)."""
    if not hasattr(importlib.import_module(package), "__path__"):
        return False
    return importlib.util.find_spec(f"{package}.{name}") is not None


def import_pages(pages: tuple[str, ...] = WARM_PAGES, *, root: Path = APP_ROOT) -> None:
    """Import what ``pages`` import at their top."""
    for page in pages:
        for name in page_imports(root / page):
            importlib.import_module(name)


def open_default_index() -> None:
    """Open the default sample through the app's index cache and count its levels' tokens with
    the default settings' tokenizer in the app's cost previews: what every session's level
    picker and cost preview read."""
    from graphrag_core.tokens import planning_tokenizer_name

    from .loaders import default_index_key, folder_signature, load_source, resolve_source

    from .previews import cost_previews
    from .settings import initial_model, load_settings
    from .urls import RunSettings

    app = load_settings()
    source = resolve_source(default_index_key(), app)
    index = load_source(source)
    index.summary_counts()
    tokenizer = RunSettings(index=source.key, model=initial_model(app)).search.tokenizer
    name = planning_tokenizer_name(tokenizer, real_endpoint=False)
    cost_previews().sections_future(index, source.key, folder_signature(source.path), name).result()


def import_libraries() -> None:
    """The libraries a run's answer needs (:func:`~graphrag_app.loaders.warm_libraries`), imported now."""
    from .loaders import warm_libraries

    warm_libraries().join()


STEPS: tuple[tuple[str, Callable[[], object]], ...] = (
    ("Explore's modules", import_pages),
    ("the default index and its levels' tokens", open_default_index),
    ("the answer's libraries", import_libraries),
)
"""The warm-up's steps, in order, each with the words the log uses for it."""


def warm_up(steps: tuple[tuple[str, Callable[[], object]], ...] = STEPS) -> WarmUp:
    """Run ``steps`` in order; a step that raises is noted in the report and the next one runs."""
    report = WarmUp()
    for name, step in steps:
        started = time.perf_counter()
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - the page does the step itself and shows its own error
            report.failures.append((name, f"{type(exc).__name__}: {exc}"))
        report.steps.append((name, time.perf_counter() - started))
    return report


@st.cache_resource(show_spinner=False)
def server_warm_up() -> WarmUp:
    """:func:`warm_up`, once per process. The cached loads its steps make inside it draw no
    spinner (there is no page to draw one on)."""
    return warm_up()


def warm_and_log() -> None:
    """:func:`server_warm_up`, then its line in the server's log (standard error)."""
    print(server_warm_up().line(), file=sys.stderr, flush=True)


_warming: threading.Thread | None = None
"""The warm-up thread the server started (:func:`start_warm_up`), if any."""


def start_warm_up(target: Callable[[], object] = warm_and_log) -> threading.Thread:
    """Start the warm-up (``target``) in its thread; sessions wait for it (:func:`wait_for_warm_up`)."""
    global _warming
    _warming = threading.Thread(target=target, name=WARM_THREAD_NAME, daemon=True)
    _warming.start()
    return _warming


def wait_for_warm_up() -> None:
    """Wait for a warm-up still going: a session's script imports the modules the warm-up is
    importing, and two threads importing the same modules can see one of them half made (an
    ``ImportError``, or a module missing a name). Returns at once when there is no warm-up."""
    thread = _warming
    if thread is not None and thread is not threading.current_thread():
        thread.join()


@contextlib.asynccontextmanager
async def warm_lifespan(_app: Any) -> AsyncIterator[None]:
    """The server's lifespan (``st.App(lifespan=...)``): :func:`warm_and_log` in a thread, waited
    for at most :data:`WARM_WAIT_S`, then serve (a session opened meanwhile waits for the rest:
    :func:`wait_for_warm_up`)."""
    thread = start_warm_up()
    await asyncio.to_thread(thread.join, WARM_WAIT_S)
    if thread.is_alive():
        print(f"{LOG_PREFIX} still going after {WARM_WAIT_S:g} s; answering meanwhile", file=sys.stderr, flush=True)
    yield
