"""In a real browser: a Microsoft GraphRAG report's entity and relationship references lead to
their views in one click; and Open run bundle, on Explore and on Compare, with a bundle whose
index is not the one here says so and opens what it can (the run, its answer and charts;
citations the index here lacks are flagged). Skipped when /usr/bin/chromium is missing, and the
report test when ../shared's Microsoft GraphRAG outputs are absent."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from graphrag_cli.main import main
from graphrag_core.index import save_index
from graphrag_core.history import RunStore

from .browser_support import APP_ROOT, ARTIFACTS, UI_TIMEOUT_MS, require_browser
from .factories import small_index

pytestmark = pytest.mark.browser
sync_api = require_browser()
expect = sync_api.expect

MISMATCH = re.compile(r"is not the one this run used")


@pytest.fixture
def page_height() -> int:
    return 2200


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


def test_explore_opens_a_bundle_of_another_index_and_says_so(server: str, other_index_bundle: tuple[Path, str], page) -> None:
    bundle, run_id = other_index_bundle
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


def test_compare_opens_a_bundle_of_another_index_and_says_so(server: str, other_index_bundle: tuple[Path, str], page) -> None:
    bundle, run_id = other_index_bundle
    page.goto(server + "/compare")
    expect(page.get_by_text("Open run bundle").first).to_be_visible()
    page.locator("input[type='file']").last.set_input_files(str(bundle))
    expect(page.get_by_text(MISMATCH).first).to_be_visible()
    expect(page.get_by_text(re.compile(r"Opened run " + run_id[:8])).first).to_be_visible()
    page.wait_for_url(re.compile(rf"runs={run_id}"))  # the run joined the comparison
    expect(page.get_by_text("Choose at least two runs to compare.")).to_be_visible()


MS_OUTPUT = APP_ROOT.parent / "shared" / "data" / "msgraphrag" / "v3-operation-dulce"


def test_a_report_reference_leads_to_its_entity_and_relationship_in_one_click(server: str, page) -> None:
    if not MS_OUTPUT.is_dir():
        pytest.skip("the Microsoft GraphRAG outputs in ../shared are not here")
    from urllib.parse import quote

    from graphrag_core.citations import find_citations, references_of_kind
    from graphrag_core.index import load_index

    index = load_index(MS_OUTPUT)
    community = next(c for c in index.communities if "Entities (" in c.summary and "Relationships (" in c.summary)
    citations = find_citations(community.summary)
    entity_ref, rel_ref = references_of_kind(citations, "entity")[0], references_of_kind(citations, "relationship")[0]
    entity = next(e for e in index.entities if e.short_id == entity_ref)
    rel = next(r for r in index.relationships if r.short_id == rel_ref)
    page.goto(f"{server}/provenance?index={quote(str(MS_OUTPUT))}&community={community.id}")
    expect(page.get_by_role("heading", name=re.compile(rf"^Community {community.id}:"))).to_be_visible()
    reference = page.locator(f"[data-testid='stMarkdownContainer'] a[href*='entity={entity_ref}']").first
    expect(reference).to_have_attribute("title", re.compile(rf"^Entity {entity_ref}: {re.escape(entity.title)}\."))
    with page.context.expect_page() as opened:
        reference.click()
    view = opened.value
    view.set_default_timeout(UI_TIMEOUT_MS)
    view.wait_for_url(re.compile(rf"/provenance\?.*entity={entity_ref}(&|$)"))
    expect(view.get_by_role("heading", name=f"Entity {entity_ref}: {entity.title}")).to_be_visible()
    expect(view.get_by_role("heading", name=re.compile(r"^Source text units \(\d+\)"))).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    view.screenshot(path=str(ARTIFACTS / "provenance-entity.png"), full_page=True)
    # a community of the entity, in this tab: the URL changes, and Back returns to the entity
    view.get_by_role("button", name=re.compile(rf"^level \d+: {community.id} · ")).first.click()
    view.wait_for_url(re.compile(rf"community={community.id}(&|$)"))
    expect(view.get_by_role("heading", name=re.compile(rf"^Community {community.id}:"))).to_be_visible()
    view.go_back()
    view.wait_for_url(re.compile(rf"entity={entity_ref}(&|$)"))
    expect(view.get_by_role("heading", name=f"Entity {entity_ref}: {entity.title}")).to_be_visible()

    relationship = page.locator(f"[data-testid='stMarkdownContainer'] a[href*='relationship={rel_ref}']").first
    with page.context.expect_page() as opened:
        relationship.click()
    rel_view = opened.value
    rel_view.set_default_timeout(UI_TIMEOUT_MS)
    expect(rel_view.get_by_role("heading", name=f"Relationship {rel_ref}: {rel.source} → {rel.target}")).to_be_visible()
