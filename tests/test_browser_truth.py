"""What the screen says is true, read in a real browser as a person reads it: run labels that
say "dynamic (threshold N)" and put the id last, cost figures that agree with each other, a
Provenance view whose "Cited in the final answer." holds only the final answer's sentences,
every citation of an answer a link, and "open" cells that open in one click.

Screenshots go to ``test-artifacts/``. Skipped when /usr/bin/chromium is missing.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from graphrag_app.text import short_count
from graphrag_core import Community, GlobalSearchRequest, Index, ScriptedChatModel, retrieve_global
from graphrag_core.figures import run_figures
from graphrag_core.history import RunRecord, RunStore
from graphrag_core.index import save_index
from graphrag_core.rows import Entity, Relationship

from .browser_support import chart_title, require_browser, shot, wait_for_plots_settled, wait_for_script_run
from .factories import sample_run

pytestmark = pytest.mark.browser

sync_api = require_browser()
expect = sync_api.expect

QUESTION = "Who are the wizards?"
FINAL = "Wizards know how systems work [Data: Reports (3, +more); Entities (10)]. Machines are apart [Communities: 5]."
MAP_ONLY = "Map-only remark about wizards [Communities: 3]."


def _records_index() -> Index:
    """A root over two leaves, with entities and a relationship that the reports cite."""
    return Index(
        name="records",
        communities=[
            Community(id="0", level=0, title="Everything", summary="Wizards and machines."),
            Community(id="3", level=1, parent_id="0", title="Wizards", summary="A wizard knows how a complex system works.", entity_ids=("e10", "e11")),
            Community(id="5", level=1, parent_id="0", title="Machines", summary="Machines and the software on them."),
        ],
        entities=[
            Entity(id="e10", short_id="10", title="WIZARD", description="A person who knows how a system works.", community_ids=("3",)),
            Entity(id="e11", short_id="11", title="GURU", description="A wizard others ask.", community_ids=("3",)),
        ],
        relationships=[Relationship(id="r1", short_id="7", source="GURU", target="WIZARD", description="A guru is a wizard.", community_ids=("3",))],
    )


def _scripted(request):  # type: ignore[no-untyped-def]
    if request.purpose == "reduce":
        return json.dumps({"answer": FINAL})
    return json.dumps({"answer": MAP_ONLY, "usefulness": 60})


@pytest.fixture(scope="module")
def server_seed(server_history: Path) -> dict[str, object]:
    """A fixed-level run and a dynamic one (threshold 2) on the Jargon sample, and a scripted run
    on a small index whose answer cites a report, an entity and ``+more``."""
    store = RunStore(server_history)
    level = sample_run(GlobalSearchRequest(query=QUESTION, community_level=1, seed=1))
    dynamic = sample_run(GlobalSearchRequest(query=QUESTION, community_selection="dynamic", rating_threshold=2, seed=1))
    folder = server_history.parent / "records-index"
    save_index(_records_index(), folder)
    events: list = []
    request = GlobalSearchRequest(query=QUESTION, community_level="leaf", seed=1)
    asyncio.run(retrieve_global(_records_index(), request, ScriptedChatModel(_scripted), on_event=events.append))
    cited = RunRecord.from_events(events, index_name="records", index_path=str(folder))
    for record in (level, dynamic, cited):
        store.save(record)
    return {"level": level, "dynamic": dynamic, "cited": cited, "folder": str(folder)}


@pytest.fixture
def page_height() -> int:
    return 2600


def _no_exception(page) -> None:  # type: ignore[no-untyped-def]
    assert page.locator("[data-testid='stException']").count() == 0


def test_compare_names_runs_by_what_sets_them_apart_and_a_dynamic_run_by_its_threshold(server: str, server_seed, page) -> None:  # type: ignore[no-untyped-def]
    level, dynamic = server_seed["level"], server_seed["dynamic"]
    page.goto(f"{server}/compare?runs={level.run_id},{dynamic.run_id}")
    page.get_by_role("heading", name="Metrics").wait_for()
    # the picker: question and settings first, the id last; the dynamic run by its threshold
    chips = page.locator("[data-testid='stMultiSelect']").first
    expect(chips).to_contain_text(f"{QUESTION} · dynamic (threshold 2) · map 8,000")
    expect(chips).to_contain_text(f"{QUESTION} · level 1 · map 8,000")
    expect(chips).to_contain_text(f"· {dynamic.run_id[:8]}")
    # the answers and the charts name the runs by what differs: the level or the selection
    expect(page.get_by_text(f"A · level 1 · {level.run_id[:8]} · completed")).to_be_visible()
    expect(page.get_by_text(f"B · dynamic (threshold 2) · {dynamic.run_id[:8]} · completed")).to_be_visible()
    cost = page.locator(".js-plotly-plot").filter(has_text="Cost per run").first
    expect(cost).to_contain_text("B · dynamic (threshold 2)")
    expect(cost).to_contain_text("model calls as if uncached")
    assert "A · -" not in cost.inner_text()
    _no_exception(page)
    wait_for_plots_settled(page)
    shot(page, "truth-compare-labels")


def test_a_dynamic_runs_timeline_draws_and_counts_its_rating_calls(server: str, server_seed, page) -> None:  # type: ignore[no-untyped-def]
    dynamic = server_seed["dynamic"]
    figures = run_figures(dynamic.events)
    page.goto(f"{server}/?run={dynamic.run_id}")
    title = f"Model calls: {figures.model_calls:,} ({figures.rating_calls:,} rating, {figures.map_calls:,} map, 1 reduce)"
    expect(chart_title(page, "^" + re.escape(title))).to_be_visible()
    expect(page.get_by_text(re.compile(r"^Status: completed")).first).to_be_visible()
    recent = page.locator("details").filter(has=page.get_by_text("Recent runs")).first
    if recent.get_attribute("open") is None:
        page.get_by_text("Recent runs").click()
    expect(recent).to_contain_text("dynamic (threshold 2) · map 8,000")
    _no_exception(page)
    wait_for_plots_settled(page)
    shot(page, "truth-dynamic-timeline")


def test_the_level_picker_shows_the_cost_previews_own_figure(server: str, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{server}/?index=jargon&level=1&seed=3")
    metric = page.locator("[data-testid='stMetric']").filter(has_text="Est. map prompt tokens").first
    expect(metric).to_contain_text(re.compile(r"\d{3},\d{3}"))
    tokens = int(re.search(r"(\d[\d,]+)", metric.inner_text().split("tokens", 1)[1]).group(1).replace(",", ""))
    picker = page.get_by_role("combobox", name="Community level")
    expect(picker).to_have_value(f"level 1 · ≈{short_count(tokens)} tokens · 170 summaries")
    _no_exception(page)
    shot(page, "truth-level-picker")


def test_provenance_says_only_the_final_answers_sentences_under_final_answer(server: str, server_seed, page) -> None:  # type: ignore[no-untyped-def]
    cited, folder = server_seed["cited"], server_seed["folder"]
    page.goto(f"{server}/provenance?index={folder}&community=3&run={cited.run_id}")
    expect(page.get_by_text("In this run")).to_be_visible()
    label = page.get_by_text("Cited in the final answer.", exact=True)
    expect(label).to_be_visible()
    final = page.locator("[data-testid='stMarkdownContainer']").filter(has_text="Wizards know how systems work")
    expect(final).to_have_count(1)
    expect(final).to_have_text(re.compile(r"^\s*Wizards know how systems work \[Data: Reports \(3, \+more\); Entities \(10\)\]\.\s*$"))
    expect(final.locator("a[href*='entity=10']")).to_have_text("10")  # linked as in the answer on Explore
    expect(page.get_by_text("The final answer cites this community once, in 1 sentence.")).to_be_visible()
    expect(page.get_by_text(re.compile(r"^Map answer of batch \d+ \(an intermediate answer, not the final one\)$")).first).to_be_visible()
    expect(page.get_by_text("Map-only remark about wizards").first).to_be_visible()
    _no_exception(page)
    shot(page, "truth-provenance-final-answer")


def test_every_citation_of_an_answer_is_a_link_and_plus_more_leads_to_the_records(server: str, server_seed, page) -> None:  # type: ignore[no-untyped-def]
    cited = server_seed["cited"]
    page.goto(f"{server}/?run={cited.run_id}")
    answer = page.locator("[data-testid='stMarkdownContainer']").filter(has_text="Wizards know how systems work").first
    expect(answer).to_be_visible()
    entity = answer.locator("a[href*='entity=10']")
    expect(entity).to_have_text("10")
    assert (entity.get_attribute("title") or "").startswith("Entity 10: WIZARD.")
    more = answer.locator("a", has_text="+more")
    assert "community=3" in (more.get_attribute("href") or "") and (more.get_attribute("href") or "").endswith("#records-of-this-community")
    _no_exception(page)
    shot(page, "truth-answer-links")


def test_an_open_cell_opens_in_one_click(server: str, server_seed, page) -> None:  # type: ignore[no-untyped-def]
    cited, folder = server_seed["cited"], server_seed["folder"]
    page.goto(f"{server}/provenance?index={folder}&community=3&run={cited.run_id}")
    heading = page.get_by_role("heading", name=re.compile(r"^Entities and relationships of this community \(3\)"))
    expect(heading).to_be_visible()
    wait_for_script_run(page)
    table = page.locator("[data-testid='stDataFrame']").first
    table.scroll_into_view_if_needed()
    box = table.bounding_box()
    assert box is not None
    first_row = box["y"] + 35 + 17  # the header row, then the middle of the first row
    page.mouse.move(box["x"] + 30, first_row)
    page.mouse.click(box["x"] + 30, first_row)  # the first column: "open ›"
    page.wait_for_url(lambda url: "entity=10" in url)  # the cited entity is listed first
    query = parse_qs(urlsplit(page.url).query)
    assert query["entity"] == ["10"] and query["run"] == [cited.run_id]
    expect(page.get_by_role("heading", name=re.compile(r"^Entity 10: WIZARD"))).to_be_visible()
    wait_for_script_run(page)
    expect(page.get_by_role("heading", name=re.compile(r"^Relationships \(1\)"))).to_be_visible()
    expect(page.get_by_text("In this run")).to_have_count(0)  # the community's view is gone, not left under the entity's
    _no_exception(page)
    shot(page, "truth-open-in-one-click")


def test_a_sweep_compares_levels_as_if_uncached_and_opens_a_points_run_in_one_click(server: str, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{server}/sweeps")
    page.get_by_role("heading", name="Sweeps").wait_for()
    expect(page.get_by_text("6 points: 2 levels × 3 seeds × 1 map budget × 1 reduce budget.")).to_be_visible()
    page.get_by_role("button", name="Run sweep").click()
    cost = page.locator(".js-plotly-plot").filter(has_text="Cost per level").first
    expect(cost).to_contain_text("model calls as if uncached")
    expect(cost).to_contain_text("model calls spent")
    grid = page.locator(".js-plotly-plot").filter(has_text="Status of each point").first
    # level 0 reads the same batches whatever the seed: later seeds cost as many calls, the cache spends them
    expect(grid).to_contain_text(re.compile(r"\d[\d,]* calls \(\d+ spent\)"))
    assert " 1 calls" not in grid.inner_text()
    _no_exception(page)
    wait_for_plots_settled(page)
    shot(page, "truth-sweep-costs")
    table = page.locator("[data-testid='stDataFrame']").first
    table.scroll_into_view_if_needed()
    wait_for_script_run(page)
    box = table.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + 30, box["y"] + 35 + 17)
    page.mouse.click(box["x"] + 30, box["y"] + 35 + 17)  # "open ›" of the first point
    page.wait_for_url(lambda url: "run=" in url and "/sweeps" not in url)
    expect(page.get_by_role("heading", name="Answer").locator("visible=true").first).to_be_visible()
    _no_exception(page)
