"""What the AppTest tests share: the app's pages run headless, and readers of what they show."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from streamlit.testing.v1 import AppTest

from graphrag_app.jobs import run_blocking
from graphrag_core.index import load_index
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.samples import sample_path

from . import APP_ROOT

TIMEOUT = 60
QUESTION = "What is a hacker?"


def page(name: str | None = None, *, timeout: float = TIMEOUT) -> AppTest:
    """The app's page ``pages/<name>.py`` (the Explore script ``app.py`` when ``name`` is None), not yet run."""
    script = APP_ROOT / "app.py" if name is None else APP_ROOT / "pages" / f"{name}.py"
    return AppTest.from_file(str(script), default_timeout=timeout)


def app(query_params: Mapping[str, str] | None = None) -> AppTest:
    """The Explore page (``app.py``) opened with ``query_params`` in its URL, not yet run."""
    at = page()
    at.query_params.update(query_params or {})
    return at


def texts(at: AppTest) -> list[str]:
    return [element.value for element in at.text]


def messages(at: AppTest, kind: str) -> list[str]:
    """The texts of every ``kind`` element shown (``"error"``, ``"info"``, ``"warning"``...)."""
    return [element.value for element in getattr(at, kind)]


def metrics(at: AppTest) -> dict[str, str]:
    """Each metric's label and value."""
    return {m.label: m.value for m in at.metric}


def run_question(at: AppTest, question: str = QUESTION) -> AppTest:
    """Types ``question`` into Explore and runs it (to the end: AppTest waits for the script)."""
    at.text_area(key="question").input(question)
    at.button(key="run_global_search").click()
    return at.run()


def provenance(query_params: dict[str, str]) -> AppTest:
    """The Provenance page opened from Explore with ``query_params``, run."""
    at = app().run()
    at.query_params.update(query_params)
    return at.switch_page("pages/provenance.py").run()


def stored_run(db: Path, *, index_name: str = "jargon", question: str = QUESTION, level: int | str = "leaf") -> str:
    """The id of a finished offline run (seed 7) on a sample, saved in the run history ``db``."""
    index = load_index(sample_path(index_name))
    request = GlobalSearchRequest(query=question, seed=7, community_level=level)
    handle, state = run_blocking(index, request, OfflineChatModel(), store_path=db, index_name=index_name, timeout=TIMEOUT)
    assert state.status is not None and state.status.finished, state.error
    return handle.run_id
