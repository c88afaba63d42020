"""A run drawn on Explore: its status, the usefulness chart and the call timeline, the reduce, the
dynamic selection's walk, the answer with its evidence (the three community sets, and a dialog
beside the answer for a cited community), and the whole run once it has ended; and keeping the
answer, or a call just opened, in view while the charts above it settle.

One draw function per panel, each taking the container to draw into. Index text and model
output are drawn with ``st.text`` or as safe Markdown (:mod:`graphrag_app.text`); no panel uses
``unsafe_allow_html``. The two small scripts drawn with ``st.html`` (the scroll, the citation
clicks) carry only constants of this app and the community ids it linked, never model or index
text.

Why this module is long: every panel of a run (the walk before the map, the map's charts, the
reduce, the answer) is drawn here in the one order that the live view's ticks and the whole
page share; apart, a live run and the same run drawn whole would drift from each other.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core import citations
from graphrag_core.citations import CommunitySets
from graphrag_core.errors import STOPPED_MESSAGE
from graphrag_core.figures import Price
from graphrag_core.llm.embeddings import ranker_label
from graphrag_core.llm.openai_replies import FormRefusal
from graphrag_core.methods import UnitKind
from graphrag_core.models import Index
from graphrag_core.state import BatchStatus, RunState
from graphrag_core.status import RunStatus
from graphrag_core.support import SupportCheck

from ..text import FATE_LABELS, WALK_LABELS, escape_markdown
from ..navigation import PROVENANCE_PAGE
from ..panels.evidence import (
    ANSWER_BOX_KEY,
    EVIDENCE_OPEN,
    SET_HELP,
    SET_NAMES,
    SOURCE_SET_HELP,
    answer_markdown,
    draw_claims,
    draw_run_use,
    draw_summary,
    index_for,
    run_mark,
    sets_caption,
    sets_of,
    unit_title,
    unit_url,
)
from ..panels.link_tables import link_table
from ..panels.evidence import draw_support, draw_unit_support
from ..urls import COMMUNITY_PARAM, provenance_params
from . import charts, inspector, relevance

if TYPE_CHECKING:
    import pandas as pd  # imported where a table is built: a page that draws none does not load it


def status_label(state: RunState) -> str:
    """The run's status word: a result's status, or running / stopped / interrupted / failed."""
    if state.result is not None:
        return state.result.status
    return "idle" if state.status is None else state.status.word


def phase_label(state: RunState) -> str:
    if state.status != RunStatus.RUNNING:
        return ""
    if state.stopped_early:
        return "answering from what was read"
    if state.phase == "map":
        return f"map: {state.finished_batches:,} of {len(state.batches):,} batches"
    if state.phase == "selecting" and state.selection.active:
        round_text = f", round {state.selection.round}" if state.selection.round is not None else ""
        return f"dynamic selection: {state.selection.rated_count:,} communities rated{round_text}"
    if state.phase == "selecting" and state.relevance.active:
        return state.relevance.label if state.relevance.budget is not None else "expanding the question into subqueries"
    return {"selecting": "selecting summaries", "reduce": "reduce", "done": ""}.get(state.phase, state.phase)


def draw_status(container: DeltaGenerator, state: RunState, *, note: str | None = None) -> None:
    """The status line (with ``note`` after it, e.g. that this is a replay), the progress bar, and
    what the end of the run means: stopped, failed, or answered from what was read."""
    with container:
        status = status_label(state)
        phase = phase_label(state)
        line = f"Status: {status}" + (f" ({phase})" if phase else "")
        st.text(line + f" · {state.elapsed_s:.1f}s" + (f" · {note}" if note else ""))
        if state.status == RunStatus.RUNNING and state.phase == "selecting" and state.selection.active:
            selection = state.selection
            total = selection.community_count or 1
            st.progress(min(1.0, selection.rated_count / total), text=f"dynamic selection: {selection.rated_count:,} communities rated")
        elif state.status == RunStatus.RUNNING and state.phase == "selecting" and state.relevance.budget is not None:
            tests = state.relevance
            found = f" · {tests.relevant_count:,} relevant chunks found"
            st.progress(min(1.0, tests.used / max(1, tests.budget or 1)), text=tests.label + found)
        elif state.ranking is not None:  # naive RAG: no map, one call over the most relevant chunks
            ranked = state.ranking
            st.progress(1.0 if state.result is not None else 0.5, text=f"{ranked.relevant_count:,} of {ranked.unit_count:,} source chunks relevant · ranked by {ranker_label(ranked.ranker)}")
        elif state.status == RunStatus.RUNNING or state.result is not None:
            st.progress(state.progress, text=f"{state.finished_batches:,} of {len(state.batches):,} map batches finished")
        for notice in state.notices:
            draw_notice(notice)
        for warning in state.warnings:
            st.warning(escape_markdown(warning), icon=":material/warning:")
        if state.result is not None and state.result.diagnostics.stopped_note:
            st.warning(escape_markdown(state.result.diagnostics.stopped_note), icon=":material/stop_circle:")
        if state.status == RunStatus.CANCELLED:
            why = f"{state.error} " if state.error and state.error != STOPPED_MESSAGE else "The run was stopped. "
            st.warning(escape_markdown(why) + "Its events so far are saved in the history (status: stopped).", icon=":material/stop_circle:")
        elif state.status in (RunStatus.FAILED, RunStatus.INTERRUPTED):
            st.error(f"The run failed ({escape_markdown(state.error_type or 'error')}):", icon=":material/error:")
            st.text(state.error or "")


def draw_notice(notice: str) -> None:
    """A model notice under the status: an endpoint's refusal of a ``response_format`` in one
    sentence, with the server's own words behind a details expander; any other notice as it is."""
    refusal = FormRefusal.read(notice)
    if refusal is None:
        st.caption(f"Model: {escape_markdown(notice)}")
        return
    st.caption(f"Model: {escape_markdown(refusal.sentence)}")
    with st.expander("What the server said"):
        st.text(refusal.detail)


# -- the charts -----------------------------------------------------------------------------------


def draw_map_charts(
    container: DeltaGenerator,
    state: RunState,
    *,
    key: str,
    interactive: bool = False,
    height: int = charts.CHART_HEIGHT,
    timeline: go.Figure | None = None,
    usefulness: go.Figure | None = None,
) -> DeltaGenerator | None:
    """The usefulness chart and the call timeline side by side (``height`` px each); ``timeline``
    and ``usefulness`` are drawn instead of figures of ``state`` when given (the live view redraws
    each at its own pace). Returns the usefulness chart's place (None: no batches yet), where the
    live view draws it again when its first bar comes (:func:`draw_usefulness`)."""
    if not state.batches:
        return None
    with container:
        left, right = st.columns(2)
        timeline = timeline if timeline is not None else charts.timeline_figure(state, height=height)
        place = left.empty()
        draw_usefulness(place, state, key=key, interactive=interactive, height=height, top=timeline.layout.margin.t, figure=usefulness)
        _chart(right, timeline, key=f"{key}-timeline", live=not interactive)
    return place


def draw_usefulness(
    place: DeltaGenerator,
    state: RunState,
    *,
    key: str,
    interactive: bool = False,
    height: int = charts.CHART_HEIGHT,
    top: int | None = None,
    figure: go.Figure | None = None,
) -> None:
    """The usefulness chart in ``place`` (an ``st.empty``), its plot ``top`` px down (the
    timeline's beside it); ``figure`` instead of one of ``state`` when given. A finished run's
    chart (``interactive``) has its key: clicking a bar opens that batch
    (inspector.draw_call_inspector). A live one has none, so a tick may draw it again in its
    place when its first bar comes (the figure differs, and so does its identity)."""
    figure = figure if figure is not None else charts.usefulness_figure(state, height=height, top=top)
    if interactive:
        chart_key = f"{key}-usefulness"
        _chart(place, figure, key=chart_key, on_select=lambda: inspector.chart_selected(chart_key))
    else:
        _chart(place, figure, key=None, live=True)

LIVE_CHART_CONFIG = {"displaylogo": False, "displayModeBar": False}
"""A chart redrawn while a run streams has no toolbar: nothing to zoom yet, and no toolbar over its legend."""

CHART_CONFIG = {"displaylogo": False}


def _chart(container: DeltaGenerator, figure: go.Figure, *, key: str | None, on_select: Callable[[], None] | None = None, live: bool = False) -> None:
    """A Plotly chart; with ``on_select``, clicking a point calls it (a finished run's charts)."""
    config = LIVE_CHART_CONFIG if live else CHART_CONFIG
    if on_select is None:
        container.plotly_chart(figure, key=key, config=config)
    else:
        container.plotly_chart(figure, key=key, config=config, on_select=on_select, selection_mode="points")


def draw_reduce_chart(container: DeltaGenerator, state: RunState, *, key: str, interactive: bool = False) -> None:
    if not state.candidates and state.reduce_prompt_budget is None:
        return
    with container:
        if not state.candidates:
            st.info("No map answer had a usefulness above 0, so nothing went to the reduce.")
            return
        chart_key = f"{key}-reduce"
        # a finished run: clicking the chart opens the reduce call
        _chart(container, charts.reduce_figure(state), key=chart_key, on_select=(lambda: inspector.reduce_chart_selected(chart_key)) if interactive else None)


def draw_relevance(container: DeltaGenerator, state: RunState, *, key: str, height: int = relevance.RELEVANCE_HEIGHT) -> None:
    """A lazy run's relevance tests (live): the subqueries they ask, then tests by community
    and outcome under the budget (:func:`graphrag_app.explore.relevance.relevance_figure`)."""
    tests = state.relevance
    if not tests.active:
        return
    with container:
        if tests.expansion_error:
            st.warning(f"The question could not be expanded ({escape_markdown(tests.expansion_error)}); the tests ask the question itself.", icon=":material/warning:")
        if tests.subqueries:
            st.caption("Subqueries: " + escape_markdown(relevance.subqueries_line(tests.subqueries)))
        if tests.budget is not None:
            _chart(st.container(), relevance.relevance_figure(tests, height=height), key=None if state.status == RunStatus.RUNNING else f"{key}-relevance", live=state.status == RunStatus.RUNNING)
        if tests.finished:
            st.caption(
                f"{tests.used:,} of {tests.budget or 0:,} relevance tests · {tests.calls:,} calls ({tests.cache_hits:,} from the cache) · "
                f"{tests.failed:,} failed · {tests.usage.total_tokens:,} test tokens · {tests.relevant_count:,} relevant chunks, "
                f"{len(tests.groups):,} communities mapped"
            )


def draw_selection(container: DeltaGenerator, state: RunState, *, key: str) -> None:
    """The walk of a dynamic selection on the hierarchy (live), then its table of ratings."""
    selection = state.selection
    if not selection.active:
        return
    with container:
        st.plotly_chart(charts.hierarchy_figure(state), key=f"{key}-hierarchy", config={"displaylogo": False})
        counts = selection.counts()
        st.caption(
            f"{selection.rated_count} communities rated · {selection.calls} rating calls"
            f" ({selection.cache_hits} from the cache) · {selection.usage.total_tokens:,} rating tokens · "
            + " · ".join(f"{WALK_LABELS[f]}: {n}" for f, n in sorted(counts.items()))
        )
        if selection.finished:
            with st.expander(f"Community ratings ({selection.rated_count} rated)"):
                st.dataframe(charts.walk_table(state), hide_index=True, width="stretch")

LIVE_CHART_HEIGHT = 290
"""The live charts' height: with the status and the progress bar above them they fit, with the
question and the buttons, on one 1280x800 screen."""

PRESENTER_CHART_HEIGHT = 300
"""The live charts' height in presenter mode (no sidebar, larger type: the charts span the page
and still fit a 1280x800 screen under the question)."""


def draw_live_body(
    container: DeltaGenerator,
    state: RunState,
    *,
    key: str,
    chart_height: int = LIVE_CHART_HEIGHT,
    timeline: go.Figure | None = None,
    usefulness: go.Figure | None = None,
) -> DeltaGenerator | None:
    """A run while it streams (or a replay), under its status and above the answer as it is
    written: the walk of a dynamic selection, the usefulness chart and the call timeline, the
    reduce. Drawn again on every tick of the live view with the same elements in the same places,
    so each chart stays on the page and only its data changes. Returns the usefulness chart's
    place (see :func:`draw_map_charts`)."""
    with container:
        if state.selection.active:
            draw_selection(st.container(), state, key=key)
        if state.relevance.active:
            draw_relevance(st.container(), state, key=key, height=chart_height)
        place = draw_map_charts(st.container(), state, key=key, height=chart_height, timeline=timeline, usefulness=usefulness)
        if state.phase in ("reduce", "done") and (state.candidates or state.reduce_prompt_budget is not None):
            draw_reduce_chart(st.container(), state, key=key)
    return place


# -- the answer and its evidence ------------------------------------------------------------------


def draw_answer_draft(container: DeltaGenerator, state: RunState) -> None:
    """The final answer as the model writes it (a streaming reduce), until the result is in."""
    if state.result is not None or state.status != RunStatus.RUNNING or not state.answer_draft:
        return
    with container:
        st.subheader("Answer")
        st.caption("Being written by the model…")
        st.text(state.answer_draft)


def draw_answer(
    container: DeltaGenerator,
    state: RunState,
    *,
    index_key: str,
    index: Index | None = None,
    anchor: str | None = None,
    key: str | None = None,
    under_answer: Callable[[DeltaGenerator], None] | None = None,
) -> None:
    """The final answer as Markdown, each citation a link (title on hover), unsupported ids
    flagged; ``under_answer`` draws into the place right under it; then the three community sets
    (``key``: see :func:`draw_community_sets`)."""
    result = state.result
    if result is None:
        return
    index = index if index is not None else index_for(index_key)
    sets = sets_of(state, index)
    with container:
        st.subheader("Answer", anchor=anchor)
        note = result.diagnostics.stopped_note
        st.text(f"Status: {RunStatus(result.status).word}" + (f" · {note}" if note else ""))
        with st.container(border=True, key=ANSWER_BOX_KEY):
            st.markdown(answer_markdown(result.answer, sets, index=index, index_key=index_key, run_id=state.run_id))
        if sets is not None:
            st.caption(sets_caption(sets))
        if under_answer is not None:
            under_answer(st.container())
        draw_community_sets(st.container(), state, index=index, index_key=index_key, sets=sets, key=key)


def _set_frame(
    ids: list[str], *, index: Index | None, index_key: str, run_id: str | None, extra: dict[str, list] | None = None, unit: UnitKind = "community"
) -> pd.DataFrame:
    import pandas as pd

    data: dict[str, list] = {
        ("source chunk" if unit == "source" else "community"): ids,
        ("document" if unit == "source" else "title"): [unit_title(index, cid, unit) or "" for cid in ids],
        "provenance": [unit_url(index_key, cid, run_id, unit) for cid in ids],
    }
    data.update(extra or {})
    return pd.DataFrame(data)


def _set_table(frame: pd.DataFrame, *, key: str | None, name: str, noun: str = "community") -> None:
    """One set's table: its "open" cells open the ``noun``'s Provenance view in one click
    (:func:`~graphrag_app.panels.link_tables.link_table`); drawn without them while the run is redrawn
    live (``key`` None)."""
    if key is None:
        st.dataframe(frame, hide_index=True, width="stretch", column_config={"provenance": None})
        return
    open_help = OPEN_HELP.format(noun=noun)
    link_table(st.container(), frame, link_column="provenance", key=f"{key}-{name}", open_help=open_help, hide_index=True, width="stretch")

OPEN_HELP = "This {noun}'s Provenance view for this run"


def draw_community_sets(
    container: DeltaGenerator, state: RunState, *, index: Index | None, index_key: str, sets: CommunitySets | None = None, key: str | None = None
) -> None:
    """Three tabs named the same on every page: Cited, Behind, Read but unused (with best score).
    With ``key`` (a run drawn once per script run) each community opens its Provenance view in
    one click."""
    sets = sets if sets is not None else sets_of(state, index)
    if sets is None:
        return
    unit: UnitKind = sets.unit if sets.unit == "source" else "community"
    helps = SOURCE_SET_HELP if unit == "source" else SET_HELP
    noun = "source chunk" if unit == "source" else "community"
    with container:
        tabs = st.tabs(
            [
                f"{SET_NAMES['cited']} ({len(sets.cited)})",
                f"{SET_NAMES['behind']} ({len(sets.behind)})",
                f"{SET_NAMES['read_but_unused']} ({len(sets.read_but_unused)})",
            ]
        )
        cited = list(sets.cited)
        with tabs[0]:
            st.caption(helps["cited"])
            if cited:
                status = [f"unsupported: {citations.UNSUPPORTED_LABELS[reason]}" if (reason := sets.reason(c)) else "supported" for c in cited]
                frame = _set_frame(cited, index=index, index_key=index_key, run_id=state.run_id, extra={"check": status}, unit=unit)
                _set_table(frame, key=key, name="cited", noun=noun)
            else:
                st.caption(f"The answer cites no {noun}.")
        with tabs[1]:
            st.caption(helps["behind"])
            behind = list(sets.behind)
            if behind:
                frame = _set_frame(behind, index=index, index_key=index_key, run_id=state.run_id, extra={"cited": [c in sets.cited for c in behind]}, unit=unit)
                _set_table(frame, key=key, name="behind", noun=noun)
        with tabs[2]:
            st.caption(helps["read_but_unused"])
            unused = sets.read_but_unused
            if unused:
                frame = _set_frame(
                    [u.community_id for u in unused],
                    index=index,
                    index_key=index_key,
                    run_id=state.run_id,
                    extra={
                        "best score": [u.best_score for u in unused],
                        "fate": [FATE_LABELS[u.fate] for u in unused],
                        "batches": [", ".join(str(b) for b in u.batch_indexes) for u in unused],
                    },
                    unit=unit,
                )
                _set_table(frame, key=key, name="unused", noun=noun)
            else:
                st.caption(f"Every {noun} read is behind the answer.")


def draw_run_answer(container: DeltaGenerator, state: RunState, *, index_key: str, key: str | None = None, support: SupportCheck | None = None) -> None:
    """The answer as Markdown with its citations as links (a click shows the citation's evidence
    on this page), its support check under it (``support``: each point's verdict, the summary
    line), and the three community sets (their communities open in one click when ``key`` is
    given: a run drawn once per script run)."""

    def under(box: DeltaGenerator) -> None:
        if support is not None:
            draw_support(box.container(border=True, key=SUPPORT_BOX_KEY), support)
        draw_citation_evidence(box.container(), state, index_key=index_key, support=support)

    draw_answer(container, state, index_key=index_key, anchor=inspector.ANSWER_ANCHOR, key=key, under_answer=under)


SUPPORT_BOX_KEY = "answer-support"
"""The key of the support check's box under the answer."""


BUTTON_KEY = "cite-{n}"

MAX_EVIDENCE_BUTTONS = 40

_CLICKS = """<script>
(function () {
  var buttons = %(buttons)s;
  if (window.__graphragCitationClicks) document.removeEventListener("click", window.__graphragCitationClicks, true);
  window.__graphragCitationClicks = function (event) {
    if (event.defaultPrevented || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    var link = event.target.closest ? event.target.closest("a[href]") : null;
    if (!link || !link.closest(".st-key-%(box)s")) return;
    var community = new URL(link.href, window.location.href).searchParams.get("%(param)s");
    var button = Object.prototype.hasOwnProperty.call(buttons, community) ? document.querySelector(".st-key-" + buttons[community] + " button") : null;
    if (!button) return;
    event.preventDefault();
    event.stopPropagation();
    button.click();
  };
  document.addEventListener("click", window.__graphragCitationClicks, true);
})();
</script>"""


def _open(community_id: str | None) -> None:
    EVIDENCE_OPEN.set(community_id)


def draw_citation_evidence(container: DeltaGenerator, state: RunState, *, index_key: str, support: SupportCheck | None = None) -> None:
    """The cited communities as evidence buttons under the answer, the script that routes a
    citation's click to its button, and the evidence dialog of the one chosen (until closed)."""
    result = state.result
    if result is None:
        return
    index = index_for(index_key)
    sets = sets_of(state, index)
    cited = list(sets.cited)[:MAX_EVIDENCE_BUTTONS] if sets is not None else []
    if cited:
        keys = {cid: BUTTON_KEY.format(n=n) for n, cid in enumerate(cited)}
        with container:
            row = st.container(horizontal=True, vertical_alignment="center", gap="small", key="answer-evidence")
            row.caption("Evidence (a click on a citation opens it too):", width="content")
            for cid, key in keys.items():
                row.button(escape_markdown(cid), key=key, type="tertiary", on_click=_open, args=(cid,), help=f"What supports community {cid}, beside the answer")
            script = _CLICKS % {"buttons": json.dumps(keys).replace("</", "<\\/"), "box": ANSWER_BOX_KEY, "param": COMMUNITY_PARAM}
            st.html(script, unsafe_allow_javascript=True)
    chosen = EVIDENCE_OPEN.value
    if chosen:
        st.dialog(f"Evidence for community {chosen}", width="large", on_dismiss=lambda: _open(None))(_evidence)(str(chosen), state, index_key, support)


def _evidence(community_id: str, state: RunState, index_key: str, support: SupportCheck | None = None) -> None:
    index = index_for(index_key)
    run_id = state.run_id
    st.page_link(
        PROVENANCE_PAGE,
        label="Open the full Provenance page",
        query_params=provenance_params(index_key, community_id, run_id),
        icon=":material/account_tree:",
    )
    if index is None or not index.has_community(community_id):
        st.warning(f"Community {escape_markdown(community_id)} is not in this index: the answer cites it without support.", icon=":material/warning:")
        return
    draw_community_evidence(st.container(), index, community_id, state, index_key=index_key, support=support)


def draw_community_evidence(
    container: DeltaGenerator, index: Index, community_id: str, state: RunState, *, index_key: str, support: SupportCheck | None = None
) -> None:
    """What the evidence dialog shows of one community: its place in the run's three sets, the
    support check of the points citing it (their quotes highlighted in its texts), what the run
    did with it, its summary, and its leaf claims with their sources."""
    community = index.community(community_id)
    sets = sets_of(state, index)
    with container:
        st.markdown(f"**{escape_markdown(community.title or 'Untitled community')}** · level {community.level}")
        if sets is not None:
            st.caption(escape_markdown(run_mark(community.id, sets).removeprefix(" · ")))
        if support is not None:
            draw_unit_support(st.container(), index, support, community.id)
        st.markdown("**Summary**")
        draw_summary(st.container(border=True), index, community, index_key=index_key, run_id=state.run_id)
        if state.run_id:
            draw_run_use(st.container(), index, community, state, state.run_id, index_key=index_key)
        with st.expander("Claims from leaf descendants, with their sources"):
            draw_claims(st.container(), index, community, index_key=index_key, run_id=state.run_id)


# -- the whole run --------------------------------------------------------------------------------


def draw_run(
    container: DeltaGenerator,
    state: RunState,
    *,
    index_key: str,
    key: str,
    price: Price | None = None,
    interactive: bool | None = None,
    presenter: bool = False,
    support: SupportCheck | None = None,
) -> None:
    """The whole run: status, live charts, then (after the map) reduce, answer, errors, diagnostics.

    ``interactive`` (default: the run is not running) draws the widgets that open a call;
    ``presenter`` leaves out the developer detail (the call inspector, the diagnostics);
    ``support`` is the answer's support check, drawn with it."""
    interactive = state.status != RunStatus.RUNNING if interactive is None else interactive
    with container:
        if state.status is None:
            st.text("Status: starting")
            return
        draw_status(st.container(), state)
        if interactive and state.status != RunStatus.RUNNING:
            inspector.draw_why(st.container(), state)
        if state.selection.active:
            draw_selection(st.container(), state, key=key)
        if state.relevance.active:
            draw_relevance(st.container(), state, key=key)
        if state.batches:
            draw_map_charts(st.container(), state, key=key, interactive=interactive)
        if interactive and not presenter and (state.batches or state.reduce_calls):  # naive RAG has no batch, only its one call
            calls_box = st.container()
            inspector.draw_call_inspector(calls_box, state, index_key=index_key)
            if (opening := inspector.take_reveal()) is not None:  # opened from a table row, the reduce chart, the why panel
                # the page is redrawn under the opened call: only the reader's input ends the scroll
                inspector.scroll_into_view(calls_box, inspector.CALL_ANCHOR, nonce=opening, yield_to_scroll=False)
        if state.phase in ("reduce", "done") and (state.candidates or state.reduce_prompt_budget is not None):
            draw_reduce_chart(st.container(), state, key=key, interactive=interactive)
        if state.result is not None:
            draw_run_answer(st.container(), state, index_key=index_key, key=f"{key}-sets" if interactive else None, support=support)
        else:
            draw_answer_draft(st.container(), state)
        if state.status != RunStatus.RUNNING and not presenter:
            if any(b.status == BatchStatus.FAILED or (b.status == BatchStatus.RETRIED and b.errors) for b in state.batches):
                inspector.draw_failed_batches(st.container(), state)
            inspector.draw_diagnostics(st.container(), state, price=price, key=key)
