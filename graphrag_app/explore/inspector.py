"""Every call of a run opened (its verbatim messages, raw replies, parse results and what the
reduce did with its answer), why a run has no (full) answer, and the diagnostics (figures,
spend, batches, reduce candidates); and keeping the answer, or a call just opened, in view while
the charts above it settle.

A call is opened from the call picker, a bar of the map chart, a row of the batch table, the
reduce chart or the "why" panel (:func:`open_call`); one opened from below the picker is brought
into view once (:func:`take_reveal`, :func:`scroll_into_view`). The scroll never fights the
reader: any input of theirs ends it, and it ends by itself after ``SCROLL_TICKS`` x
``SCROLL_TICK_MS``; the anchors it scrolls to are constants of this app, never data. Its state
(``running``, then ``done``) is on its span and on the page's root element
(``data-<anchor>-scroll``): a redraw of the page may drop the span while the script goes on.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.calls import BatchCall, CallAttempt, ReduceCall, batch_call, reduce_call, why_no_answer
from graphrag_core.figures import Price, RunSpend, cached_text, estimated_note, figures_of, money, tokens_text
from graphrag_core.llm.base import ChatMessage
from graphrag_core.methods import GLOBAL, VECTOR, method_label
from graphrag_core.results import GlobalSearchDiagnostics
from graphrag_core.state import BatchStatus, CallOutcome, RunState
from graphrag_core.status import RunStatus

from ..text import FATE_LABELS, cited_markdown, escape_markdown, link
from ..panels.evidence import index_for, run_unit, unit_title, unit_url
from ..session import Widget
from . import charts

CALL_KEY = "evidence_open_call"
"""The key of the call picker: ``"reduce"``, a batch index as text, or None."""
CALL = Widget[str](CALL_KEY)
CALL_REVEAL = Widget[int]("evidence_reveal_call")
"""The opening (a number) of the call just opened, to be brought into view once (see :func:`open_call`)."""
CALL_OPENINGS = Widget[int]("evidence_call_openings", 0)


CALL_ANCHOR = "evidence-open-call"
"""The anchor of the "Open a call" heading."""

REDUCE_CALL = "reduce"

MAX_WHY_LINKS = 24


def _rag(state: RunState) -> bool:
    return state.request is not None and state.request.method == VECTOR


def open_call(value: str | int | None, *, reveal: bool = False) -> None:
    """Open a call in the run view: a batch index, ``"reduce"``, or None to close. ``reveal``
    brings the opened call into view (it opens above a clicked table row or the reduce chart)."""
    CALL.set(None if value is None else str(value))
    openings = int(CALL_OPENINGS.value or 0) + 1
    CALL_OPENINGS.set(openings)
    CALL_REVEAL.set(openings if reveal and value is not None else None)


def take_reveal() -> int | None:
    """The number of the opening to bring into view when the call just opened asks for it (once
    per opening; a new number each time, so two revealing openings in a row each scroll)."""
    return CALL_REVEAL.pop()


def chart_selected(chart_key: str) -> None:
    """``on_select`` callback of the map chart: open the clicked bar's batch."""
    for point in Widget[dict](chart_key).selection().get("points", []):
        x = point.get("x")
        if x is not None:
            open_call(int(x))
            return


def reduce_chart_selected(chart_key: str) -> None:
    """``on_select`` callback of the reduce chart: a click on it opens the reduce call."""
    if Widget[dict](chart_key).selection().get("points"):
        open_call(REDUCE_CALL, reveal=True)


def table_selected(table_key: str) -> None:
    """``on_select`` callback of the batch table: open the selected row's batch (rows are
    positions in the table as drawn, batch order, whatever the reader's sorting)."""
    rows = Widget[dict](table_key).selection().get("rows", [])
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


def draw_batch_call(
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
                        title_for=lambda cid: unit_title(index, cid, unit), unit=unit,
                    )
                )
        with st.expander("Messages sent (verbatim)", expanded=True):
            _messages(st.container(), call.messages)
        st.markdown("**Attempts**")
        for attempt in call.attempts:
            _attempt(st.container(border=True), attempt)


def draw_reduce_call(container: DeltaGenerator, call: ReduceCall, *, heading: DeltaGenerator | None = None, rag: bool = False) -> None:
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


def draw_call_inspector(container: DeltaGenerator, state: RunState, *, index_key: str) -> None:
    """The call the run view has open: its verbatim messages, raw replies, parse results and fate
    (a naive RAG run has no map batch: its one call is the reduce)."""
    reduce = reduce_call(state.events)
    if not state.batches and reduce is None:
        return
    options: list[str | None] = [None, *(str(b.index) for b in state.batches)]
    if reduce is not None:
        options.insert(1, REDUCE_CALL)
    if CALL.value not in options:
        CALL.set(None)
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
                draw_reduce_call(st.container(), reduce, heading=head, rag=_rag(state))
            else:
                call = batch_call(state.events, int(chosen))
                if call is not None:
                    draw_batch_call(st.container(), call, state, index_key=index_key, heading=head)


def draw_why(container: DeltaGenerator, state: RunState) -> None:
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


# -- the diagnostics ------------------------------------------------------------------------------


def draw_spend(container: DeltaGenerator, spend: RunSpend, *, price: Price | None) -> None:
    """Model calls and tokens spent, and as if no map answer had been cached (a cached rerun
    spends one call where the first run spent 84), and their cost at the configured price."""
    approx = "≈" if spend.tokens_estimated else ""
    with container:
        cols = st.columns(4)
        cols[0].metric("Model calls", f"{spend.calls:,}", help="Calls this run sent to the model (rating, map and reduce attempts).")
        cols[1].metric("Map cache hits", f"{spend.cache_hits:,}", help="Map batches (and ratings) answered from the map cache, at no cost.")
        cols[2].metric(
            "Tokens spent",
            tokens_text(spend.tokens) if spend.tokens.total_tokens else "-",
            delta=f"{spend.tokens.cached_tokens:,} from the prompt cache" if spend.tokens.cached_tokens else None,
            delta_color="off",
            help="Prompt and completion tokens the model reported"
            + (f"; {estimated_note(spend.tokens)}, so the run counted them itself." if spend.tokens.estimated else ".")
            + (f" Of the prompt tokens, {cached_text(spend.tokens)} (billed at the cached price, or not recomputed)." if spend.tokens.cached_tokens else ""),
        )
        cols[3].metric(
            "As if uncached",
            f"{spend.calls_as_if_uncached:,} calls",
            help="What the run would have cost with no map cache: every batch a model call.",
        )
        cost = f" · cost {money(price.of(spend.tokens))} ({approx}{money(price.of(spend.tokens_as_if_uncached))} as if uncached)" if price else ""
        prompt_cache = f"Endpoint's prompt cache: {cached_text(spend.tokens)} · " if spend.tokens.cached_tokens else ""
        st.caption(
            prompt_cache
            + f"As if uncached: {spend.calls_as_if_uncached:,} model calls and {approx}{spend.tokens_as_if_uncached.total_tokens:,} tokens"
            + (" (cached batches counted at their planned prompt tokens)" if spend.tokens_estimated else "")
            + cost
            + (f" · tokens ≈: {estimated_note(spend.tokens)}" if spend.tokens.estimated else "")
        )


def _number(value: int | None) -> str:
    return "-" if not value else f"{value:,}"


def draw_diagnostics(container: DeltaGenerator, state: RunState, *, price: Price | None = None, key: str = "run") -> None:
    figures = figures_of(state)
    with container:
        st.subheader("Diagnostics")
        cols = st.columns(4)
        request = state.request
        if request is not None and request.method != GLOBAL:  # a run over source chunks: its method, and the chunks it read
            cols[0].metric("Method", method_label(request.method))
            cols[1].metric("Source chunks", f"{figures.summaries:,}" if figures.summaries is not None else "-")
        else:
            cols[0].metric("Community level", str(request.reported_level) if request else "-")
            cols[1].metric("Summaries", f"{figures.summaries:,}" if figures.summaries is not None else "-")
        cols[2].metric("Map batches", f"{figures.batches:,}")
        cols[3].metric("Failed batches", f"{figures.failed_batches:,}")
        cols = st.columns(4)
        cols[0].metric("Selected for reduce", f"{figures.selected_answers:,}")
        cols[1].metric("Reduce prompt tokens", f"{figures.reduce_prompt_tokens:,}" if figures.reduce_prompt_tokens is not None else "-")
        cols[2].metric("Seed", state.seed if state.seed is not None else "-")
        cols[3].metric("Duration", f"{figures.duration_s:.2f}s")
        if state.events:
            draw_spend(st.container(), figures.spend, price=price)
        if state.result is not None:
            st.metric(
                "Unsupported citations",
                state.result.diagnostics.unsupported_citation_count,
                help="Cited ids (communities, or source chunks) that are not in the index or in no selected map answer.",
            )
        if state.result is not None and request is not None and request.dynamic:
            draw_token_split(st.container(), state.result.diagnostics)
        st.caption(
            f"Model: {escape_markdown(state.model or '-')} · tokenizer: {escape_markdown(state.tokenizer or '-')} · "
            f"map prompt budget: {_number(state.map_prompt_budget)} · reduce prompt budget: {_number(state.reduce_prompt_budget)} · "
            f"concurrency: {state.concurrency or '-'} · run id: {escape_markdown(state.run_id or '-')}"
        )
        import pandas as pd

        if state.batches:
            with st.expander(f"Batches ({len(state.batches):,})"):
                st.dataframe(
                    pd.DataFrame(
                        {
                            "batch": [b.index for b in state.batches],
                            "status": [b.status for b in state.batches],
                            "usefulness": [b.usefulness for b in state.batches],
                            "attempts": [b.attempts for b in state.batches],
                            "cached": [b.cached for b in state.batches],
                            "prompt tokens": [b.token_estimate for b in state.batches],
                            "communities": [", ".join(b.community_ids) for b in state.batches],
                        }
                    ),
                    hide_index=True,
                    width="stretch",
                    key=f"{key}-batch-table",
                    on_select=lambda: table_selected(f"{key}-batch-table"),
                    selection_mode="single-row",
                )
                st.caption("Select a row to open that batch's call.")
        if state.candidates:
            with st.expander(f"Reduce candidates ({len(state.candidates)})"):
                st.dataframe(
                    pd.DataFrame(
                        {
                            "rank": [c.rank for c in state.candidates],
                            "fate": [FATE_LABELS[c.fate] for c in state.candidates],
                            "usefulness": [c.answer.usefulness for c in state.candidates],
                            "reduce tokens": [c.tokens for c in state.candidates],
                            "batch": [c.answer.batch_index for c in state.candidates],
                            "communities": [", ".join(c.answer.community_ids) for c in state.candidates],
                            "answer": [c.answer.answer for c in state.candidates],
                        }
                    ),
                    hide_index=True,
                    width="stretch",
                )


def draw_failed_batches(container: DeltaGenerator, state: RunState) -> None:
    failed = [b for b in state.batches if b.status == BatchStatus.FAILED or (b.status == BatchStatus.RETRIED and b.errors)]
    if not failed:
        return
    with container:
        hard = sum(1 for b in failed if b.status == BatchStatus.FAILED)
        with st.expander(f"Errors: {hard} failed batches, {len(failed) - hard} recovered on retry", expanded=hard > 0):
            for batch in failed:
                verdict = "failed" if batch.status == BatchStatus.FAILED else "recovered on retry"
                st.markdown(f"**Batch {batch.index}** ({verdict}, {batch.attempts} attempts) · communities {escape_markdown(charts.short_ids(batch.community_ids))}")
                for attempt, error in enumerate(batch.errors, start=1):
                    st.text(f"attempt {attempt}: {error}")


def draw_token_split(container: DeltaGenerator, diagnostics: GlobalSearchDiagnostics) -> None:
    """Rating, map and reduce cost apart (a dynamic run)."""
    d = diagnostics
    with container:
        cols = st.columns(4)
        cols[0].metric("Rating calls", d.rating_calls, help=f"{d.rating_cache_hits} more answered from the cache; {d.failed_rating_count} communities failed every repeat.")
        for col, label, usage in ((cols[1], "Rating tokens", d.rating_usage), (cols[2], "Map tokens", d.map_usage), (cols[3], "Reduce tokens", d.reduce_usage)):
            note = f" · {estimated_note(usage)}" if usage.estimated else ""
            cached = f" · {cached_text(usage)}" if usage.cached_tokens else ""
            col.metric(label, tokens_text(usage), help=f"prompt {usage.prompt_tokens:,} · completion {usage.completion_tokens:,}{cached}{note}")


# -- kept in view ---------------------------------------------------------------------------------


ANSWER_ANCHOR = "graphrag-answer"

SCROLL_TICKS = 16

SCROLL_TICK_MS = 250

_SCROLL_INTO_VIEW = """<span id="{anchor}-scroll" data-nonce="{nonce}"></span><script>
(function () {{
  // Charts above it may still be growing: keep the anchor in view for a few seconds.
  // The reader wins at once: a wheel, touch, key or mouse button, or any scroll this script did
  // not make (a scrollbar drag, a link to an anchor, assistive technology, a test driver).
  var marker = document.getElementById("{anchor}-scroll");
  var root = document.documentElement;
  root.setAttribute("data-{anchor}-scroll", "running");
  var scroller = document.scrollingElement || document.documentElement;
  for (var node = marker && marker.parentElement; node; node = node.parentElement) {{
    var overflow = getComputedStyle(node).overflowY;
    if ((overflow === "auto" || overflow === "scroll") && node.scrollHeight > node.clientHeight) {{ scroller = node; break; }}
  }}
  var left = scroller.scrollTop;  // where this script last left the page
  var readerMoved = false;
  var names = ["wheel", "touchmove", "keydown", "mousedown"];
  function moved() {{ readerMoved = true; }}
  names.forEach(function (name) {{ window.addEventListener(name, moved, {{capture: true, passive: true}}); }});
  function keep() {{
    var anchor = document.getElementById("{anchor}");
    if (anchor) {{
      var box = anchor.getBoundingClientRect();
      if (box.top < 0 || box.top > window.innerHeight * 0.5) {{ anchor.scrollIntoView({{block: "start", behavior: "instant"}}); }}
    }}
    left = scroller.scrollTop;
  }}
  keep();  // at once: the page may be redrawn (and its scroll moved by the layout) right after
  var tries = 0;
  var timer = setInterval(function () {{
    tries += 1;
    // A scroll this script did not make ends it too, unless the page is being redrawn under a
    // call just opened (then only the reader's own input does).
    var done = readerMoved || tries > {ticks} || ({yield_to_scroll} && Math.abs(scroller.scrollTop - left) > 1);
    if (!done) {{ keep(); }}
    if (done) {{
      clearInterval(timer);
      names.forEach(function (name) {{ window.removeEventListener(name, moved, {{capture: true}}); }});
      if (marker) {{ marker.setAttribute("data-state", "done"); }}
      root.setAttribute("data-{anchor}-scroll", "done");
    }}
  }}, {tick_ms});
}})();
</script>"""


def scroll_into_view(container: DeltaGenerator, anchor: str, *, nonce: int = 0, yield_to_scroll: bool = True) -> None:
    """Bring the element with id ``anchor`` (a constant of this app, never data) into view and keep
    it there while the charts above it settle, for at most ``SCROLL_TICKS`` x
    ``SCROLL_TICK_MS``. It never fights the reader: any input ends it, and so does any scroll it
    did not make unless ``yield_to_scroll`` is False (a call opened from a table row: the redraw
    under it moves the page, which is not the reader). Its span (``#<anchor>-scroll``) then says
    ``data-state="done"``.

    The same script drawn in the same place on the next script run is not run again (the page
    keeps the element as it is): a new ``nonce`` makes it a new element, so it scrolls again.
    The page's root element says how the last such scroll to ``anchor`` stands in
    ``data-<anchor>-scroll`` (``running``, ``done``), also after a redraw has dropped the span."""
    script = _SCROLL_INTO_VIEW.format(
        anchor=anchor, ticks=SCROLL_TICKS, tick_ms=SCROLL_TICK_MS, nonce=int(nonce), yield_to_scroll="true" if yield_to_scroll else "false"
    )
    container.html(script, unsafe_allow_javascript=True)


def scroll_to_answer(container: DeltaGenerator) -> None:
    """Bring the answer into view (once, when a run's answer arrives: on a 1280x800 screen it
    lies below the charts); see :func:`scroll_into_view`."""
    scroll_into_view(container, ANSWER_ANCHOR)


__all__ = [
    "ANSWER_ANCHOR",
    "CALL",
    "CALL_ANCHOR",
    "CALL_KEY",
    "chart_selected",
    "draw_call_inspector",
    "draw_diagnostics",
    "draw_failed_batches",
    "draw_spend",
    "draw_token_split",
    "draw_why",
    "open_call",
    "reduce_chart_selected",
    "scroll_into_view",
    "scroll_to_answer",
    "table_selected",
    "take_reveal",
]
