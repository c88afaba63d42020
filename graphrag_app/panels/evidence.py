"""The evidence panels of a run: the answer with its citations as links, the three community sets,
every call opened (map batches and the reduce), and why a run has no (full) answer.

One render function per panel, each taking the container to draw into. Model and index text is
drawn with ``st.code``/``st.text`` (verbatim) or through :mod:`graphrag_app.answer_text` (safe
Markdown); no panel uses ``unsafe_allow_html``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.calls import BatchCall, CallAttempt, ReduceCall, batch_call, reduce_call, why_no_answer
from graphrag_core import citations
from graphrag_core.citations import CommunitySets, community_sets
from graphrag_core.llm.base import ChatMessage
from graphrag_core.methods import VECTOR, UnitKind, unit_kind
from graphrag_core.models import Index
from graphrag_core.sources import source_table, unit_ids
from graphrag_core.state import BatchStatus, CallOutcome, RunState
from graphrag_core.status import RunStatus

from ..explore import charts
from .link_tables import link_table
from ..labels import FATE_LABELS
from ..text import cited_markdown, demote_headings, link
from ..urls import provenance_url, record_url

if TYPE_CHECKING:
    import pandas as pd  # imported where a table is built: a page that draws none does not load it

CALL_KEY = "evidence_open_call"
"""Session key of the call the run view has open: ``"reduce"``, a batch index as text, or None."""
CALL_REVEAL_KEY = "evidence_reveal_call"
"""Session key: the opening (a number) of the call just opened, to be brought into view once (see :func:`open_call`)."""
CALL_OPENINGS_KEY = "evidence_call_openings"
CALL_ANCHOR = "evidence-open-call"
"""The anchor of the "Open a call" heading."""
REDUCE_CALL = "reduce"
SET_NAMES = {key: name.capitalize() for key, name in citations.SET_NAMES.items()}
"""The three sets as tab titles: Cited, Behind, Read but unused."""
SET_HELP = {
    "cited": "Communities the answer cites.",
    "behind": "Communities of the map answers selected for the reduce: what the reduce read.",
    "read_but_unused": "Communities whose batches' answers were dropped (usefulness 0), skipped (over the reduce budget) or not tried.",
}
SOURCE_SET_HELP = {
    "cited": "Source chunks the answer cites.",
    "behind": "Source chunks behind the answer: those of the map answers the reduce read, or the chunks naive RAG put in its prompt.",
    "read_but_unused": "Source chunks read whose answers did not reach the answer (dropped, skipped over the budget or not tried).",
}
"""The three sets' help for a run whose units are source chunks (the ``text`` and ``vector`` methods)."""
MAX_WHY_LINKS = 24
ANSWER_BOX_KEY = "answer-box"
"""The key of the answer's box: its citations are the ones a click opens beside the answer."""
ANSWER_HEADING_SHIFT = 2
"""A model's ``# Heading`` in the answer becomes ``###``: below the page's Answer heading."""


def index_for(index_key: str) -> Index | None:
    """The index ``index_key`` names (cached), or None when it cannot be opened here."""
    from ..explore.sidebar import open_index
    from ..settings import load_settings

    try:
        return open_index(index_key, load_settings()).index
    except Exception:  # noqa: BLE001 - titles are a nicety; the panel works without the index
        return None


def _title(index: Index | None, community_id: str, unit: UnitKind = "community") -> str | None:
    """A unit's title: a community's, or a source chunk's document title."""
    if index is None:
        return None
    if unit == "source":
        chunk = source_table(index).get(community_id)
        document = index.document(chunk.document_id) if chunk is not None and chunk.document_id is not None else None
        return (document.title or None) if document is not None else None
    try:
        return index.community(community_id).title or None
    except (KeyError, ValueError):
        return None


def unit_url(index_key: str, unit_id: str, run_id: str | None, unit: UnitKind = "community") -> str:
    """The view of a run's unit: a community's provenance, or a source chunk's record view."""
    return record_url(index_key, "source", unit_id, run_id) if unit == "source" else provenance_url(index_key, unit_id, run_id)


def _rag(state: RunState) -> bool:
    return state.request is not None and state.request.method == VECTOR


def run_unit(state: RunState) -> UnitKind:
    """What a run's units are (``community``, or ``source`` for the ``text`` and ``vector`` methods)."""
    return unit_kind(state.request.method) if state.request is not None else "community"


def sets_of(state: RunState, index: Index | None) -> CommunitySets | None:
    if state.result is None:
        return None
    method = state.result.request.method
    return community_sets(state.result, index_ids=unit_ids(index, method) if index is not None else None)


def answer_markdown(text: str, sets: CommunitySets | None, *, index: Index | None, index_key: str, run_id: str | None) -> str:
    """``text`` as safe Markdown, every citation a link or flagged (see
    :func:`~graphrag_app.answer_text.cited_markdown`): to their communities' provenance views (or,
    for a run over source chunks, to the chunks' views); unsupported ids as ``sets`` say."""
    unit: UnitKind = sets.unit if sets is not None and sets.unit == "source" else "community"
    return cited_markdown(
        demote_headings(text, by=ANSWER_HEADING_SHIFT),
        index=index,
        index_key=index_key,
        run_id=run_id,
        unsupported=(lambda cid: sets.reason(cid)) if sets is not None else (lambda cid: None),
        title_for=lambda cid: _title(index, cid, unit),
        unit=unit,
    )


def sets_caption(sets: CommunitySets) -> str:
    """``"8 cited · 129 behind · 133 read but unused · 1 unsupported"`` (Markdown)."""
    flagged = f" · **{sets.unsupported_count} unsupported** citations (flagged in place)" if sets.unsupported_count else ""
    noun = "Source chunks" if sets.unit == "source" else "Communities"
    return (
        f"{noun}: {len(sets.cited)} {SET_NAMES['cited'].lower()} · {len(sets.behind)} {SET_NAMES['behind'].lower()} the answer · "
        f"{len(sets.read_but_unused)} {SET_NAMES['read_but_unused'].lower()}{flagged}"
    )


# -- the answer -----------------------------------------------------------------------------------


def render_answer(
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
    (``key``: see :func:`render_community_sets`)."""
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
        render_community_sets(st.container(), state, index=index, index_key=index_key, sets=sets, key=key)


def _set_frame(
    ids: list[str], *, index: Index | None, index_key: str, run_id: str | None, extra: dict[str, list] | None = None, unit: UnitKind = "community"
) -> pd.DataFrame:
    import pandas as pd

    data: dict[str, list] = {
        ("source chunk" if unit == "source" else "community"): ids,
        ("document" if unit == "source" else "title"): [_title(index, cid, unit) or "" for cid in ids],
        "provenance": [unit_url(index_key, cid, run_id, unit) for cid in ids],
    }
    data.update(extra or {})
    return pd.DataFrame(data)


def _set_table(frame: pd.DataFrame, *, key: str | None, name: str, noun: str = "community") -> None:
    """One set's table: its "open" cells open the ``noun``'s Provenance view in one click
    (:func:`~graphrag_app.link_tables.link_table`); drawn without them while the run is redrawn
    live (``key`` None)."""
    if key is None:
        st.dataframe(frame, hide_index=True, width="stretch", column_config={"provenance": None})
        return
    open_help = OPEN_HELP.format(noun=noun)
    link_table(st.container(), frame, link_column="provenance", key=f"{key}-{name}", open_help=open_help, hide_index=True, width="stretch")


OPEN_HELP = "This {noun}'s Provenance view for this run"


def render_community_sets(
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


# -- every call can be opened ---------------------------------------------------------------------


def open_call(value: str | int | None, *, reveal: bool = False) -> None:
    """Open a call in the run view: a batch index, ``"reduce"``, or None to close. ``reveal``
    brings the opened call into view (it opens above a clicked table row or the reduce chart)."""
    st.session_state[CALL_KEY] = None if value is None else str(value)
    openings = int(st.session_state.get(CALL_OPENINGS_KEY, 0)) + 1
    st.session_state[CALL_OPENINGS_KEY] = openings
    st.session_state[CALL_REVEAL_KEY] = openings if reveal and value is not None else None


def take_reveal() -> int | None:
    """The number of the opening to bring into view when the call just opened asks for it (once
    per opening; a new number each time, so two revealing openings in a row each scroll)."""
    return st.session_state.pop(CALL_REVEAL_KEY, None)


def _selection(widget_key: str) -> dict:
    event = st.session_state.get(widget_key)
    selection = event.get("selection") if event is not None and hasattr(event, "get") else None
    return selection if selection is not None and hasattr(selection, "get") else {}


def chart_selected(chart_key: str) -> None:
    """``on_select`` callback of the map chart: open the clicked bar's batch."""
    for point in _selection(chart_key).get("points", []):
        x = point.get("x")
        if x is not None:
            open_call(int(x))
            return


def reduce_chart_selected(chart_key: str) -> None:
    """``on_select`` callback of the reduce chart: a click on it opens the reduce call."""
    if _selection(chart_key).get("points"):
        open_call(REDUCE_CALL, reveal=True)


def table_selected(table_key: str) -> None:
    """``on_select`` callback of the batch table: open the selected row's batch (rows are
    positions in the table as drawn, batch order, whatever the reader's sorting)."""
    rows = _selection(table_key).get("rows", [])
    if rows:
        open_call(int(rows[0]), reveal=True)


LONG_TEXT_CHARS = 4000
LONG_TEXT_HEIGHT_PX = 420


def _code_height(text: str) -> int | str:
    """Long texts scroll inside a fixed height, so one prompt does not push the page away."""
    return LONG_TEXT_HEIGHT_PX if len(text) > LONG_TEXT_CHARS else "content"


def _messages(container: DeltaGenerator, messages: tuple[ChatMessage, ...] | None) -> None:
    with container:
        if messages is None:
            st.caption("The messages were not recorded (a run from before they were).")
            return
        for message in messages:
            st.caption(f"{message.role} message · {len(message.content):,} characters")
            st.code(message.content, language=None, wrap_lines=True, height=_code_height(message.content))


def _attempt(container: DeltaGenerator, attempt: CallAttempt) -> None:
    with container:
        parts = [f"Attempt {attempt.attempt}", attempt.outcome]
        if attempt.duration_s is not None:
            parts.append(f"{attempt.duration_s:.2f}s")
        if attempt.usage is not None:
            estimated = " (estimated: the endpoint reported none)" if attempt.usage.estimated else ""
            parts.append(f"{attempt.usage.prompt_tokens:,} prompt + {attempt.usage.completion_tokens:,} completion tokens{estimated}")
        if attempt.usefulness is not None:
            parts.append(f"usefulness {attempt.usefulness:g}")
        st.markdown("**" + " · ".join(parts) + "**")
        if attempt.error:
            st.error("Parse result: error", icon=":material/error:")
            st.text(attempt.error)
        elif attempt.outcome in (CallOutcome.OK, CallOutcome.CACHED):
            st.caption("Parse result: a valid answer")
        if attempt.raw_reply is not None:
            st.caption("Raw reply" + (" (from the map cache)" if attempt.outcome == CallOutcome.CACHED else ""))
            st.code(attempt.raw_reply, language=None, wrap_lines=True, height=_code_height(attempt.raw_reply))
        elif attempt.outcome != CallOutcome.RUNNING:
            st.caption("No reply text (the call itself failed, or the run predates recorded replies).")


def render_batch_call(
    container: DeltaGenerator, call: BatchCall, state: RunState, *, index_key: str, heading: DeltaGenerator | None = None
) -> None:
    """A map call: its heading (into ``heading`` when given, beside the panel's Close button),
    communities, what the reduce did with its answer, its points, verbatim messages and attempts."""
    batch = state.batches[call.batch_index] if call.batch_index < len(state.batches) else None
    score = "-" if batch is None or batch.usefulness is None else f"{batch.usefulness:g}"
    attempts = f"{len(call.attempts)} attempt" + ("" if len(call.attempts) == 1 else "s")
    (heading or container).markdown(
        f"#### Batch {call.batch_index} · {batch.status.word if batch else call.status} · usefulness {score} · "
        f"{attempts} · {call.token_estimate:,} prompt tokens (estimate)"
    )
    unit = run_unit(state)
    with container:
        noun = "Source chunks" if unit == "source" else "Communities"
        st.markdown(f"{noun}: " + ", ".join(link(cid, unit_url(index_key, cid, state.run_id, unit)) for cid in call.community_ids))
        candidate = call.candidate
        if candidate is not None:
            parts = [FATE_LABELS[candidate.fate]]
            if candidate.rank is not None:
                parts.append(f"rank {candidate.rank} of {len(state.candidates)}")
            if candidate.tokens is not None:
                parts.append(f"reduce prompt with it: {candidate.tokens:,} tokens")
            st.markdown("**What the reduce did:** " + " · ".join(parts))
        elif batch is not None and batch.status == BatchStatus.FAILED:
            st.markdown("**What the reduce did:** nothing (the batch failed, so no answer reached it)")
        answer = next((a.answer for a in reversed(call.attempts) if a.answer is not None), None)
        if answer:
            st.markdown("**Its points**")
            with st.container(border=True):
                index = index_for(index_key)
                st.markdown(
                    cited_markdown(
                        answer, index=index, index_key=index_key, run_id=state.run_id, unsupported=lambda cid: None,
                        title_for=lambda cid: _title(index, cid, unit), unit=unit,
                    )
                )
        with st.expander("Messages sent (verbatim)", expanded=True):
            _messages(st.container(), call.messages)
        st.markdown("**Attempts**")
        for attempt in call.attempts:
            _attempt(st.container(border=True), attempt)


def render_reduce_call(container: DeltaGenerator, call: ReduceCall, *, heading: DeltaGenerator | None = None, rag: bool = False) -> None:
    """The reduce call (``rag``: naive RAG's one call, over source excerpts): its heading (into
    ``heading`` when given), verbatim messages and attempts."""
    tokens = f" · {call.prompt_tokens:,} prompt tokens (estimate)" if call.prompt_tokens is not None else ""
    what = f"The answering call · {call.answer_count:,} source excerpts" if rag else f"The reduce call · {call.answer_count:,} map answers"
    (heading or container).markdown(f"#### {what}{tokens}")
    with container:
        with st.expander("Messages sent (verbatim)", expanded=True):
            _messages(st.container(), call.messages)
        st.markdown("**Attempts**")
        if not call.attempts:
            st.caption("No reply was recorded.")
        for attempt in call.attempts:
            _attempt(st.container(border=True), attempt)


def _call_label(value: str | None, state: RunState) -> str:
    if value is None:
        return "Choose a call (or click a bar of the map chart, or a row of the batch table)"
    if value == REDUCE_CALL:
        return "The answering call (naive RAG)" if _rag(state) else "The reduce call"
    batch = state.batches[int(value)]
    score = "" if batch.usefulness is None else f" · usefulness {batch.usefulness:g}"
    noun = "source chunks" if run_unit(state) == "source" else "communities"
    return f"Batch {batch.index} · {batch.status.word}{score} · {noun} {charts.short_ids(batch.community_ids, 6)}"


def render_call_inspector(container: DeltaGenerator, state: RunState, *, index_key: str) -> None:
    """The call the run view has open: its verbatim messages, raw replies, parse results and fate
    (a naive RAG run has no map batch: its one call is the reduce)."""
    reduce = reduce_call(state.events)
    if not state.batches and reduce is None:
        return
    options: list[str | None] = [None, *(str(b.index) for b in state.batches)]
    if reduce is not None:
        options.insert(1, REDUCE_CALL)
    if st.session_state.get(CALL_KEY) not in options:
        st.session_state[CALL_KEY] = None
    with container:
        st.subheader("Open a call", anchor=CALL_ANCHOR)
        chosen = st.selectbox(
            "Call", options, key=CALL_KEY, format_func=lambda v: _call_label(v, state), label_visibility="collapsed"
        )
        if chosen is None:
            return
        with st.container(border=True):
            head, close = st.columns([8, 1], vertical_alignment="center")
            close.button("Close", key="evidence_close_call", on_click=open_call, args=(None,), icon=":material/close:")
            if chosen == REDUCE_CALL and reduce is not None:
                render_reduce_call(st.container(), reduce, heading=head, rag=_rag(state))
            else:
                call = batch_call(state.events, int(chosen))
                if call is not None:
                    render_batch_call(st.container(), call, state, index_key=index_key, heading=head)


# -- why no answer --------------------------------------------------------------------------------


def render_why(container: DeltaGenerator, state: RunState) -> None:
    """For ``no_results``, ``partial`` and failed runs: what went wrong, with the batches concerned."""
    if state.status == RunStatus.RUNNING:
        return
    items = why_no_answer(state.events)
    if not items:
        return
    status = RunStatus(state.result.status if state.result is not None else state.status)
    with container:
        with st.expander(status.why_heading, expanded=True, icon=":material/help:"):
            for n, item in enumerate(items):
                st.markdown(f"**{item.message}**")
                if item.batch_indexes:
                    shown = item.batch_indexes[:MAX_WHY_LINKS]
                    cols = st.columns(min(len(shown), 8))
                    for i, batch_index in enumerate(shown):
                        cols[i % len(cols)].button(
                            f"Batch {batch_index}", key=f"why-{n}-{batch_index}", on_click=open_call, args=(batch_index,), kwargs={"reveal": True}
                        )
                    if len(item.batch_indexes) > len(shown):
                        st.caption(f"… and {len(item.batch_indexes) - len(shown)} more batches")
                for text in item.texts[:MAX_WHY_LINKS]:
                    st.code(text, language=None, wrap_lines=True)


__all__ = [
    "ANSWER_BOX_KEY",
    "CALL_KEY",
    "SET_NAMES",
    "answer_markdown",
    "index_for",
    "run_unit",
    "unit_url",
    "sets_caption",
    "chart_selected",
    "open_call",
    "reduce_chart_selected",
    "render_answer",
    "render_call_inspector",
    "render_community_sets",
    "render_why",
    "sets_of",
    "table_selected",
    "take_reveal",
]
