"""Open run bundle in a real browser, on Explore and on Compare, for a bundle whose index is not
the one here: the page says so and opens what it can (the run, its answer and charts; citations
the index here lacks are flagged). Skipped when /usr/bin/chromium is missing."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrag_core.cli import main
from graphrag_core.index import save_index
from graphrag_core.store import RunStore

from .browser_support import CHROMIUM, UI_TIMEOUT_MS, chromium_page, streamlit_server
from .factories import small_index

pytestmark = pytest.mark.browser

if not CHROMIUM.exists():  # noqa: SIM108
    pytest.skip("Debian's chromium (/usr/bin/chromium) is not installed", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
sync_api.expect.set_options(timeout=UI_TIMEOUT_MS)
expect = sync_api.expect

MISMATCH = re.compile(r"is not the one this run used")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("bundle-server")
    with streamlit_server(home, home / "runs.sqlite3") as url:
        yield url


@pytest.fixture(scope="module")
def other_index_bundle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A jargon run's bundle (written by the command line into another history) that names
    another index: a small native index that exists here but is not the one the run used."""
    home = tmp_path_factory.mktemp("bundle-source")
    store = home / "runs.sqlite3"
    env = {"GRAPHRAG_LLM_OFFLINE_LATENCY": "0"}
    assert main(["query", "jargon", "What do hackers think of Microsoft?", "--store", str(store), "--no-cache"], environ=env) == 0
    (run,) = RunStore(store).list_runs()
    bundle = home / "run.bundle.json"
    assert main(["runs", "--store", str(store), "export", run.run_id, "--bundle", str(bundle)], environ=env) == 0
    other = home / "small-index"
    save_index(small_index(), other)
    data = json.loads(bundle.read_text(encoding="utf-8"))
    data["index"].update(name=str(other), path=str(other))
    bundle.write_text(json.dumps(data), encoding="utf-8")
    return bundle, run.run_id


def test_explore_opens_a_bundle_of_another_index_and_says_so(server: str, other_index_bundle: tuple[Path, str]) -> None:
    bundle, run_id = other_index_bundle
    with chromium_page(height=2200) as page:
        page.goto(server + "/")
        expect(page.get_by_role("button", name="Run global search")).to_be_visible()
        page.get_by_text("Open run bundle").first.click()
        page.locator("input[type='file']").last.set_input_files(str(bundle))
        expect(page.get_by_text(MISMATCH).first).to_be_visible()
        expect(page.get_by_text(re.compile(r"Opened run " + run_id[:8])).first).to_be_visible()
        page.wait_for_url(re.compile(rf"run={run_id}"))
        expect(page.get_by_text("Status: completed", exact=True).locator("visible=true").first).to_be_visible()
        # what the index here cannot back is flagged, not linked to a community that is not there
        expect(page.get_by_text(re.compile(r"unsupported, not in the index")).first).to_be_visible()


def test_compare_opens_a_bundle_of_another_index_and_says_so(server: str, other_index_bundle: tuple[Path, str]) -> None:
    bundle, run_id = other_index_bundle
    with chromium_page(height=2200) as page:
        page.goto(server + "/compare")
        expect(page.get_by_text("Open run bundle").first).to_be_visible()
        page.locator("input[type='file']").last.set_input_files(str(bundle))
        expect(page.get_by_text(MISMATCH).first).to_be_visible()
        expect(page.get_by_text(re.compile(r"Opened run " + run_id[:8])).first).to_be_visible()
        page.wait_for_url(re.compile(rf"runs={run_id}"))  # the run joined the comparison
        expect(page.get_by_text("Choose at least two runs to compare.")).to_be_visible()
