"""Shared fixtures: an isolated run history per test, a small index on disk, and the browser
tests' app server and chromium page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrag_core.index import save_index

from .browser_support import chromium, chromium_page, streamlit_server
from .cli_support import cli_index
from .factories import small_index
from .openai_server import Server, openai_server



@pytest.fixture
def run_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``GRAPHRAG_EXPLORER_DB`` pointing into this test's tmp folder (no shared history)."""
    path = tmp_path / "runs.sqlite3"
    monkeypatch.setenv("GRAPHRAG_EXPLORER_DB", str(path))
    monkeypatch.delenv("GRAPHRAG_EXPLORER_ALLOWED_ROOTS", raising=False)
    monkeypatch.delenv("GRAPHRAG_EXPLORER_CACHE", raising=False)  # the map cache goes beside the store
    monkeypatch.setenv("GRAPHRAG_LLM_OFFLINE_LATENCY", "0")  # no presentation pace in tests
    return path


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    """``tests.cli_support.cli_index()`` (the "tiny" town) saved as a native index folder."""
    folder = tmp_path / "tiny-index"
    save_index(cli_index(), folder)
    return folder


@pytest.fixture
def two_servers() -> Iterator[tuple[Server, Server]]:
    """Two scripted chat-completions servers on 127.0.0.1 (``tests/openai_server.py``): a
    configured endpoint and another one."""
    with openai_server() as first, openai_server() as second:
        yield first, second


@pytest.fixture
def small_index_dir(tmp_path: Path) -> Path:
    """``tests.factories.small_index()`` saved as a native index folder."""
    folder = tmp_path / "small-index"
    save_index(small_index(), folder)
    return folder


# The browser tests' fixtures (tests/test_browser*.py). A module changes what they build by
# overriding ``server_env`` (the server's environment), ``server_seed`` (what is saved into
# the run history before the server starts) or ``page_height``. A test that needs a page of
# another size asks for ``browser`` and opens one with ``chromium_page(height=..., browser=browser)``.


@pytest.fixture(scope="module")
def server_env() -> dict[str, str]:
    """Environment variables for this module's app server, over the test process's own."""
    return {}


@pytest.fixture(scope="module")
def server_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run history (SQLite file, not yet created) of this module's app server, in a fresh folder."""
    return tmp_path_factory.mktemp("server") / "runs.sqlite3"


@pytest.fixture(scope="module")
def server_seed() -> object:
    """What this module saves into ``server_history`` before its server starts (a module
    overrides it, asking for ``server_history``, and returns what its tests need, e.g. run ids);
    by default nothing."""
    return None


@pytest.fixture(scope="module")
def server(server_history: Path, server_env: dict[str, str], server_seed: object) -> Iterator[str]:
    """The URL of a real ``streamlit run app.py`` on a free port, one per test module, with its
    own run history, seeded by ``server_seed`` (the server's log is ``server.log`` beside the
    history)."""
    with streamlit_server(server_history.parent, server_history, env=server_env) as url:
        yield url


@pytest.fixture
def page_height() -> int:
    """The height in px of :func:`page` (override it in a module whose pages are longer)."""
    return 1800


@pytest.fixture(scope="module")
def browser(server_seed: object) -> Iterator[object]:
    """Debian's chromium, launched once for the module's tests (each test's page has a browser
    context of its own). It starts after ``server_seed``: while it runs, Playwright holds an
    event loop on the test thread, and a seed may need one of its own."""
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser: object, page_height: int) -> Iterator[object]:
    """A fresh page of Debian's chromium, 1,500 px wide and ``page_height`` tall, in a browser
    context of its own (no cookies, storage or app session shared with another test)."""
    with chromium_page(height=page_height, browser=browser) as page:
        yield page
