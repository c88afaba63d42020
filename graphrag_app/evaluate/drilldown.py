"""The Evaluate page's drill-down: one judged pair, both answers side by side with their scores
on a criterion, links to each answer's run and provenance, the two answers point by point, and
the judge's calls."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.citations import SetName, community_sets
from graphrag_core.evaluation import Drilldown, DrilldownSide, ExperimentResult, drilldown, drilldown_choices
from graphrag_core.history import RunStore
from graphrag_core.status import RunStatus

from ..panels import side_by_side
from ..text import escape_markdown
from ..panels.evidence import answer_markdown, index_for, unit_url
from ..settings import AppSettings
from ..urls import compare_url, run_url


def first_cited_community(app: AppSettings, run_id: str) -> tuple[str, SetName, str] | None:
    """The unit the Evaluate page links for a run (``CommunitySets.first_followable``), its set,
    and what it is (``community``, or ``source`` for a run over source chunks)."""
    try:
        record = RunStore(app.store_path).get(run_id)
    except Exception:  # noqa: BLE001 - a link is optional; a store problem must not break the page
        return None
    if record is None or record.result is None:
        return None
    sets = community_sets(record.result)
    first = sets.first_followable()
    return None if first is None else (*first, sets.unit)


def _draw_side(container: DeltaGenerator, side: DrilldownSide, *, criterion: str, index_key: str, app: AppSettings) -> None:
    with container:
        score = "" if side.score is None else f" · {criterion} score {side.score:.0f}"
        st.markdown(f"**{escape_markdown(side.condition)}** · seed {side.seed}{score}")
        answer = side.answer
        if answer is None:
            st.caption("No answer.")
            return
        with st.container(border=True, height=320):
            st.markdown(answer.answer if answer.status != RunStatus.FAILED else f"Failed: {escape_markdown(answer.error or '')}")
        if answer.run_id:
            links = [f"[:material/travel_explore: Open the run]({run_url(answer.run_id)})"]
            first = first_cited_community(app, answer.run_id)
            if first is not None:
                unit_id, which, unit = first
                noun = "source chunk" if unit == "source" else "community"
                links.append(
                    f"[:material/account_tree: Provenance of {noun} {escape_markdown(unit_id)} ({'cited' if which == 'cited' else 'behind the answer'})]"
                    f"({unit_url(index_key, unit_id, answer.run_id, 'source' if unit == 'source' else 'community')})"
                )
            st.markdown(" · ".join(links))


def draw_points(container: DeltaGenerator, shown: Drilldown, *, index_key: str) -> None:
    """The pair's two answers point by point: what one has that the other lacks."""
    sides = [side for side in (shown.row, shown.col) if side.answer is not None and side.answer.status != RunStatus.FAILED and side.answer.answer.strip()]
    if len(sides) < 2:
        return

    index = index_for(index_key)

    def side(view: DrilldownSide) -> tuple[str, str, side_by_side.Render]:
        assert view.answer is not None
        run_id = view.answer.run_id
        return f"{view.condition} (seed {view.seed})", view.answer.answer, lambda text: answer_markdown(text, None, index=index, index_key=index_key, run_id=run_id)

    with container.expander("Point by point: what one answer has that the other lacks", expanded=True):
        side_by_side.draw_points(st.container(), left=side(sides[0]), right=side(sides[1]), key="eval_dd_points")


def nothing_judged(row: str, col: str) -> str:
    """Why a drill-down between ``row`` and ``col`` is empty."""
    return "Nothing was judged between these two." + (" (A/A needs two seeds.)" if row == col else "")


def draw_drilldown(container: DeltaGenerator, result: ExperimentResult, app: AppSettings, *, index_key: str) -> None:
    """One judged pair: both answers, their scores on a criterion, and the judge's calls; links
    go to the experiment's index (``index_key``)."""
    with container:
        st.subheader("Drill down")
        names = [c.name for c in result.spec.conditions]
        c1, c2, c3, c4 = st.columns([1, 1, 2, 1])
        row = c1.selectbox("Row", names, key="eval_dd_row")
        col = c2.selectbox("Column", names, index=min(1, len(names) - 1), key="eval_dd_col")
        labels: Sequence[str] = drilldown_choices(result, row, col)
        if not labels:
            st.caption(nothing_judged(row, col))
            return
        pick = c3.selectbox("Question", list(range(len(labels))), format_func=labels.__getitem__, key="eval_dd_question")
        criterion = c4.selectbox("Criterion", list(result.spec.criteria), key="eval_dd_criterion")
        shown = drilldown(result, row, col, choice=pick, criterion=criterion)
        assert shown is not None  # there are judged pairs
        st.markdown(f"**Question:** {escape_markdown(shown.question)}")
        if shown.skipped:
            st.warning(escape_markdown(shown.skipped), icon=":material/warning:")
        left, right = st.columns(2)
        _draw_side(left, shown.row, criterion=criterion, index_key=index_key, app=app)
        _draw_side(right, shown.col, criterion=criterion, index_key=index_key, app=app)
        if shown.compare_run_ids:
            st.markdown(f"[:material/compare_arrows: Compare the two runs]({compare_url(shown.compare_run_ids)})")
        draw_points(st.container(), shown, index_key=index_key)
        if shown.judged:
            st.markdown("**Judge calls**" + (" (heuristic)" if result.heuristic_judge else ""))
            st.dataframe(pd.DataFrame(shown.call_rows()), hide_index=True, width="stretch", key="eval_dd_calls")


__all__ = ["draw_drilldown", "draw_points", "first_cited_community", "nothing_judged"]
