"""A citation's evidence beside the answer: the cited communities as buttons under the answer,
and a click on one (or on a citation in the answer) opens a dialog on the same page: what the
run did with the community, its summary, its leaf claims with their sources, and a link that
opens the full Provenance page in the same tab, so Back returns to the answer.

A small script in the page (drawn with ``st.html``, like the answer's scroll) turns a plain click
on a citation inside the answer's box into a click on that community's button; a click with
Ctrl, Shift or the middle button still opens the link itself. The script carries only the
community ids the app linked (as JSON), never model or index text.
"""

from __future__ import annotations

import json

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.models import Index
from graphrag_core.state import RunState

from ..provenance import views as provenance, records as record_views
from ..text import escape_markdown
from ..panels.evidence import ANSWER_BOX_KEY, index_for, sets_of
from ..urls import COMMUNITY_PARAM, provenance_params

EVIDENCE_KEY = "evidence_community"
"""Session key: the community whose evidence is open beside the answer (None: none)."""
BUTTON_KEY = "cite-{n}"
MAX_EVIDENCE_BUTTONS = 40
PROVENANCE_PAGE = "pages/provenance.py"

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
    st.session_state[EVIDENCE_KEY] = community_id


def close_evidence() -> None:
    """Close the evidence dialog (a page that the dialog's link led to calls this, so Back
    returns to the answer, not to the dialog)."""
    st.session_state[EVIDENCE_KEY] = None


def draw_citation_evidence(container: DeltaGenerator, state: RunState, *, index_key: str) -> None:
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
    chosen = st.session_state.get(EVIDENCE_KEY)
    if chosen:
        st.dialog(f"Evidence for community {chosen}", width="large", on_dismiss=lambda: _open(None))(_evidence)(str(chosen), state, index_key)


def _evidence(community_id: str, state: RunState, index_key: str) -> None:
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
    draw_community_evidence(st.container(), index, community_id, state, index_key=index_key)


def draw_community_evidence(container: DeltaGenerator, index: Index, community_id: str, state: RunState, *, index_key: str) -> None:
    """What the evidence dialog shows of one community: its place in the run's three sets, what
    the run did with it, its summary, and its leaf claims with their sources."""
    community = index.community(community_id)
    sets = sets_of(state, index)
    with container:
        st.markdown(f"**{escape_markdown(community.title or 'Untitled community')}** · level {community.level}")
        if sets is not None:
            st.caption(escape_markdown(record_views.run_mark(community.id, sets).removeprefix(" · ")))
        st.markdown("**Summary**")
        provenance.draw_summary(st.container(border=True), index, community, index_key=index_key, run_id=state.run_id)
        if state.run_id:
            provenance.draw_run_use(st.container(), index, community, state, state.run_id, index_key=index_key)
        with st.expander("Claims from leaf descendants, with their sources"):
            provenance.draw_claims(st.container(), index, community, index_key=index_key, run_id=state.run_id)


__all__ = ["EVIDENCE_KEY", "close_evidence", "draw_citation_evidence", "draw_community_evidence"]
