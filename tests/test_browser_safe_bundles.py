"""In a real browser (issue 27): a run bundle forged with a local run's id opens as a run of its
own and leaves the local run as it was; a bundle over the event limit is refused with one clear
message; a NUL byte in ``index=`` is a notice. Skipped when /usr/bin/chromium is missing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from graphrag_core.bundle import MAX_BUNDLE_EVENTS, bundle_to_json, make_bundle
from graphrag_core.history import RunStore
from graphrag_core.request import GlobalSearchRequest

from .browser_support import ARTIFACTS, require_browser
from .factories import sample_run

pytestmark = pytest.mark.browser
sync_api = require_browser()
expect = sync_api.expect

LOCAL_QUESTION = "What do hackers call a kludge?"
THEIR_QUESTION = "Who are the wizards of the Jargon File?"


@pytest.fixture(scope="module")
def server_seed(server_history: Path) -> str:
    """A local run on the jargon sample, in the server's history before it starts; its id."""
    record = sample_run(GlobalSearchRequest(query=LOCAL_QUESTION, seed=7, community_level=0))
    RunStore(server_history).save(record)
    return record.run_id


@pytest.fixture(scope="module")
def their_run_text() -> str:
    """Another jargon run's bundle (made before any page: Playwright's loop holds the test thread)."""
    return bundle_to_json(make_bundle(sample_run(GlobalSearchRequest(query=THEIR_QUESTION, seed=3, community_level=0))))


@pytest.fixture
def page_height() -> int:
    return 2000


def test_a_bundle_forged_with_a_local_run_id_opens_as_its_own_run(server: str, server_seed: str, their_run_text: str, page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    local_id = server_seed
    their_id = json.loads(their_run_text)["run_id"]
    forged = tmp_path / "forged.bundle.json"
    forged.write_text(their_run_text.replace(their_id, local_id), encoding="utf-8")

    page.goto(server + "/")
    expect(page.get_by_role("button", name="Run global search")).to_be_visible()
    page.get_by_text("Open run bundle").first.click()
    page.locator("input[type='file']").last.set_input_files(str(forged))
    expect(page.get_by_text(re.compile(rf"already has this bundle's run id \({local_id[:8]}\)")).first).to_be_visible()
    page.wait_for_url(lambda url: "run=" in url and local_id not in url)
    expect(page.get_by_text(THEIR_QUESTION).first).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "bundle-forged-run-id.png"), full_page=False)

    page.goto(f"{server}/?run={local_id}")
    expect(page.get_by_text(LOCAL_QUESTION).first).to_be_visible()
    expect(page.get_by_text("Status: completed", exact=True).locator("visible=true").first).to_be_visible()


def test_a_bundle_over_the_event_limit_is_refused_with_one_message(server: str, their_run_text: str, page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    document = json.loads(their_run_text)
    end = document["events"].pop()
    document["events"] += [{"kind": "model_notice", "at": 1.0, "message": "n"}] * MAX_BUNDLE_EVENTS
    document["events"].append(end)
    big = tmp_path / "many-events.bundle.json"
    big.write_text(json.dumps(document), encoding="utf-8")

    page.goto(server + "/")
    expect(page.get_by_role("button", name="Run global search")).to_be_visible()
    page.get_by_text("Open run bundle").first.click()
    page.locator("input[type='file']").last.set_input_files(str(big))
    expect(page.get_by_text(re.compile(r"many-events\.bundle\.json holds more than 50,000 events")).first).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "bundle-too-many-events.png"), full_page=False)


def test_a_nul_byte_in_the_index_link_is_a_notice(server: str, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server + "/?index=/srv/some%00index")
    expect(page.get_by_text(re.compile(r"NUL character \(%00 in a link\)")).first).to_be_visible()
    expect(page.get_by_text("embedded null byte")).to_have_count(0)
    page.screenshot(path=str(ARTIFACTS / "index-nul-byte.png"), full_page=False)
