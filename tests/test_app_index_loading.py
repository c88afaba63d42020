"""The app's index loading (issues 25 and 28): a page reads the tables it shows and says so when
one cannot be read; a GraphRAG project root opens, is cached by its output's files, and may not
lead outside the allowed folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_app.loaders import open_index
from graphrag_app.loaders import IndexAccessError, folder_signature, resolve_source
from graphrag_app.settings import settings_from_mapping
from graphrag_core.models import MAP_TEXT_TABLES

from .test_index_msgraphrag import write_fixture
from .test_index_open import NULL_SUBJECT, NULL_SUBJECT_ERROR


def project(root: Path) -> Path:
    write_fixture(root / "output", "v3")
    (root / "settings.yaml").write_text('output:\n  base_dir: "output"\n', encoding="utf-8")
    return root


def test_a_page_that_reads_a_broken_table_shows_its_error(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path / "out", "v3", edit=NULL_SUBJECT)
    app = settings_from_mapping({})
    assert open_index(str(folder), app).problem is None  # the communities open
    problem = open_index(str(folder), app, tables=MAP_TEXT_TABLES).problem
    assert problem is not None and problem.endswith(f"is not a readable index: {NULL_SUBJECT_ERROR}")


def test_a_project_root_opens_in_the_app(tmp_path: Path) -> None:
    opened = open_index(str(project(tmp_path / "proj")), settings_from_mapping({}))
    assert opened.problem is None and opened.index is not None and opened.index.name == "proj"


def test_a_project_root_is_read_again_when_its_output_changes(tmp_path: Path) -> None:
    root = project(tmp_path / "proj")
    before = folder_signature(root)
    assert folder_signature(root) == before
    write_fixture(root / "output", "v3", edit={"community_reports": {"summary": ["a", "b", "c", "d"]}})  # another size
    assert folder_signature(root) != before


def test_a_link_in_a_project_output_may_not_lead_out_of_the_allowed_folders(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    root = project(allowed / "proj")
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "entities.parquet"
    (root / "output" / "entities.parquet").rename(secret)
    (root / "output" / "entities.parquet").symlink_to(secret)
    app = settings_from_mapping({"GRAPHRAG_EXPLORER_ALLOWED_ROOTS": str(allowed)})
    with pytest.raises(IndexAccessError, match=r"output/entities\.parquet links to .*outside the folders this app may open"):
        resolve_source(str(root), app)
