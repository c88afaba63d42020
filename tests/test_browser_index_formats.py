"""The Index browser in a real browser on the GraphRAG outputs that open now (issue 28): a
project folder whose 3.x tables are CSV, a 0.x output, and an output whose claims table cannot
be read (issue 25: the page says which file, row and column).

Screenshots go to ``test-artifacts/``. Skipped when /usr/bin/chromium is missing.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from .browser_support import require_browser, shot, wait_for_plots_settled
from .test_index_formats import to_csv, v09_tables, write_tables
from .test_index_msgraphrag import write_fixture
from .test_index_open import NULL_SUBJECT, NULL_SUBJECT_ERROR

pytestmark = pytest.mark.browser

sync_api = require_browser()


@pytest.fixture
def page_height() -> int:
    return 2600


def open_index_page(page, server: str, folder: Path) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{server}/index_browser?index={quote(str(folder))}")
    page.get_by_role("heading", name="Index browser").wait_for()


def no_exception(page) -> None:  # type: ignore[no-untyped-def]
    assert page.locator("[data-testid='stException']").count() == 0


def test_a_graphrag_project_folder_with_csv_tables(server: str, page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "carol-project"
    output = write_fixture(root / "output", "v3")
    for table in sorted(output.glob("*.parquet")):
        to_csv(table, lists="numpy")
    (root / "settings.yaml").write_text('output_storage:\n  type: file\n  base_dir: "output"\n', encoding="utf-8")
    open_index_page(page, server, root)
    page.get_by_text("carol-project", exact=True).wait_for()
    page.get_by_text("(v3 layout, CSV tables)").wait_for()
    sync_api.expect(page.locator("[data-testid='stMetric']").filter(has_text="Claims")).to_contain_text("5")
    page.locator(".js-plotly-plot").filter(has_text="communities in 2 levels").first.wait_for()
    no_exception(page)
    wait_for_plots_settled(page)
    shot(page, "index_browser_csv_project")


def test_a_graphrag_0x_output(server: str, page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = write_tables(tmp_path / "dulce-0.9" / "output" / "20240901-120000" / "artifacts", v09_tables())
    (tmp_path / "dulce-0.9" / "settings.yaml").write_text("storage:\n  base_dir: \"output/${timestamp}/artifacts\"\n", encoding="utf-8")
    open_index_page(page, server, folder.parents[2])
    page.get_by_text("dulce-0.9", exact=True).wait_for()
    page.get_by_text("(v0 layout)").wait_for()
    page.locator(".js-plotly-plot").filter(has_text="communities in 2 levels").first.wait_for()
    no_exception(page)
    wait_for_plots_settled(page)
    shot(page, "index_browser_0x")


def test_a_table_that_cannot_be_read_is_named_on_the_page(server: str, page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = write_fixture(tmp_path / "broken", "v3", edit=NULL_SUBJECT)
    open_index_page(page, server, folder)
    alert = page.locator("[data-testid='stAlert']").filter(has_text="is not a readable index")
    sync_api.expect(alert).to_contain_text(NULL_SUBJECT_ERROR)
    no_exception(page)
    shot(page, "index_browser_unreadable_table")
