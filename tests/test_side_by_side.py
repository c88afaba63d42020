"""Answers side by side, point by point, on Compare and on Evaluate's drill-down (AppTest), and
the panel's Markdown (pure): the points only one answer makes marked, citations linked."""

from __future__ import annotations

from pathlib import Path

from graphrag_app.text import community_linker, linked_markdown
from graphrag_app.panels.side_by_side import ONLY_HERE, point_markdown
from graphrag_core.answer_points import align_answers
from graphrag_core.history import RunStore

from .apptest_support import page
from .test_page_judging import seed_experiment
from .test_pages_browse import offline_run


def _linker(run: str):  # type: ignore[no-untyped-def]
    """A point drawn as safe Markdown with its community citations linked to ``run``'s provenance."""
    links = community_linker(lambda cid: f"provenance?community={cid}&run={run}", title_for=lambda cid: None, unsupported=lambda cid: None)
    return lambda text: linked_markdown(text, links)


def test_a_point_only_one_answer_makes_is_marked_and_its_citations_link():
    alignment = align_answers("Mills employ the town [Data: Reports (3)].", "Mills employ the town. The river floods [Data: Reports (4, 5)].")
    shared, alone = alignment.rows
    assert point_markdown(shared.left, _linker("a"), alone=False) == 'Mills employ the town \\[Data: Reports ([3](provenance?community=3&run=a "Community 3"))\\].'
    text = point_markdown(alone.right, _linker("b"), alone=alone.only == "right")
    assert text.startswith(ONLY_HERE + " The river floods")
    assert "(provenance?community=4&run=b" in text and "(provenance?community=5&run=b" in text
    assert point_markdown(alone.left, _linker("a"), alone=True) == ""


def test_compare_sets_two_runs_point_by_point(run_db: Path):
    store = RunStore(run_db)
    a, b = offline_run(0, 1, label="level 0"), offline_run(2, 2, label="level 2")
    for record in (a, b):
        store.save(record)
    expected = align_answers(a.result.answer, b.result.answer)
    at = page("compare")
    at.query_params["runs"] = f"{a.run_id},{b.run_id}"
    at.run()
    assert not at.exception, at.exception
    assert "Point by point" in [h.value for h in at.subheader]
    marked = [m.value for m in at.markdown if m.value.startswith(ONLY_HERE)]
    assert len(marked) == expected.only_in("left") + expected.only_in("right") > 0
    assert any(f"**{expected.shared}** point" in m.value for m in at.markdown)
    assert any("provenance?" in m and (f"run={a.run_id}" in m or f"run={b.run_id}" in m) for m in marked)  # each point's citations link
    at.toggle(key="compare_points_only_differences").set_value(True).run()
    assert len([m for m in at.markdown if m.value.startswith(ONLY_HERE)]) == len(marked)


def test_the_drilldown_sets_the_pairs_answers_point_by_point(run_db: Path):
    result = seed_experiment(run_db)
    at = page("evaluate")
    at.query_params["experiment"] = result.id
    at.run()
    assert not at.exception, at.exception
    assert any(e.label.startswith("Point by point") for e in at.expander)
    assert any("points both make" in m.value or "point both make" in m.value for m in at.markdown)
