"""One render function per panel; each takes the container to draw into.

Index text (summaries, claims, chunks) and model output are untrusted: they are drawn with
``st.text`` (no Markdown, no HTML), and short values put into Markdown (labels, messages) go
through :func:`escape_markdown`. No panel uses ``unsafe_allow_html``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.errors import STOPPED_MESSAGE
from graphrag_core.figures import Price, RunSpend, cached_text, estimated_note, figures_of, money, tokens_text
from graphrag_core.results import GlobalSearchDiagnostics
from graphrag_core.llm.base import TokenUsage
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.state import BatchStatus, RunState
from graphrag_core.status import RunStatus

from . import charts, evidence, selection_charts
from .escaping import escape_markdown
from .loaders import CostPreview
from .urls import provenance_params

PROVENANCE_PAGE = "pages/provenance.py"
LINKS_PER_ROW = 6
MAX_COMMUNITY_LINKS = 60

def status_label(state: RunState) -> str:
    """The run's status word: a result's status, or running / stopped / interrupted / failed."""
    if state.result is not None:
        return state.result.status
    return "idle" if state.status is None else state.status.word


def phase_label(state: RunState) -> str:
    if state.status != RunStatus.RUNNING:
        return ""
    if state.phase == "map":
        return f"map: {state.finished_batches:,} of {len(state.batches):,} batches"
    if state.phase == "selecting" and state.selection.active:
        round_text = f", round {state.selection.round}" if state.selection.round is not None else ""
        return f"dynamic selection: {state.selection.rated_count:,} communities rated{round_text}"
    return {"selecting": "selecting summaries", "reduce": "reduce", "done": ""}.get(state.phase, state.phase)


def render_cost_preview(
    container: DeltaGenerator,
    preview: CostPreview | None,
    error: str | None,
    *,
    sections: tuple[int, int, int] | None = None,
    request: GlobalSearchRequest | None = None,
    price: Price | None = None,
) -> None:
    """The run's cost before it runs, and where its tokens come from: the level's summaries,
    claims and source excerpts (``sections``), with what switching claims or excerpts off saves;
    with a spending limit, whether the run will reach it."""
    with container:
        if error:
            st.error(f"Cost preview: {escape_markdown(error)}", icon=":material/error:")
            return
        if preview is None:
            return
        forecast = preview.forecast(request) if request is not None else None
        if forecast is not None:
            if forecast.verdict == "will_reach":
                st.warning(escape_markdown(forecast.text()), icon=":material/savings:")
            else:
                st.caption(escape_markdown(forecast.text()))
        rating = preview.rating
        if rating is not None:  # dynamic selection: a range, from every root rated to every community rated
            cols = st.columns(4)
            cols[0].metric("Est. rating calls", f"{rating.min_calls:,}–{rating.max_calls:,}", help="At least every root is rated; at most every community with a summary (times the repeats).")
            cols[1].metric("Est. rating prompt tokens", f"{rating.min_prompt_tokens:,}–{rating.max_prompt_tokens:,}")
            cols[2].metric("Est. map prompt tokens", f"0–{preview.map_prompt_tokens:,}", help=f"Depends on what the ratings keep; at most the {preview.summaries} summaries of {preview.bound_label}.")
            cols[3].metric("Model calls", f"{rating.min_calls:,}–{rating.max_calls + preview.model_calls:,}", help="Rating calls, then one per map batch plus the reduce; a failed call is retried once.")
            return
        cols = st.columns(4)
        cols[0].metric("Summaries", f"{preview.summaries:,}")
        cols[1].metric("Batches", f"{preview.batches:,}")
        cols[2].metric("Est. map prompt tokens", f"{preview.map_prompt_tokens:,}")
        cols[3].metric("Model calls", f"{preview.model_calls:,}", help="One per map batch plus the reduce; a failed call is retried once.")
        lines = []
        if sections is not None and request is not None:
            summaries, claims, sources = sections
            parts = [f"summaries {summaries:,}"]
            parts.append(f"claims {claims:,}" if request.include_claims else f"claims off (would add {claims:,})")
            parts.append(f"source excerpts {sources:,}" if request.include_sources else f"source excerpts off (would add {sources:,})")
            lines.append("Where the map tokens come from at this level: " + " · ".join(parts) + ".")
        if price is not None and request is not None:
            completion = preview.batches * request.map_output_reserve + request.reduce_output_reserve
            prompt = preview.map_prompt_tokens + request.reduce_token_budget
            lines.append(
                f"Cost at the configured price: about {money(price.of(TokenUsage(prompt_tokens=preview.map_prompt_tokens)))} "
                f"for the map prompts, at most {money(price.of(TokenUsage(prompt_tokens=prompt, completion_tokens=completion)))} "
                "with every answer and the reduce at their budgets."
            )
        for line in lines:
            st.caption(escape_markdown(line))


def render_status(container: DeltaGenerator, state: RunState) -> None:
    with container:
        status = status_label(state)
        phase = phase_label(state)
        line = f"Status: {status}" + (f" ({phase})" if phase else "")
        st.text(line + f" · {state.elapsed_s:.1f}s")
        if state.status == RunStatus.RUNNING and state.phase == "selecting" and state.selection.active:
            selection = state.selection
            total = selection.community_count or 1
            st.progress(min(1.0, selection.rated_count / total), text=f"dynamic selection: {selection.rated_count:,} communities rated")
        elif state.status == RunStatus.RUNNING or state.result is not None:
            st.progress(state.progress, text=f"{state.finished_batches:,} of {len(state.batches):,} map batches finished")
        for notice in state.notices:
            st.caption(f"Model: {escape_markdown(notice)}")
        for warning in state.warnings:
            st.warning(escape_markdown(warning), icon=":material/warning:")
        if state.result is not None and state.result.diagnostics.stopped_note:
            st.warning(state.result.diagnostics.stopped_note, icon=":material/stop_circle:")
        if state.status == RunStatus.CANCELLED:
            why = f"{state.error} " if state.error and state.error != STOPPED_MESSAGE else "The run was stopped. "
            st.warning(escape_markdown(why) + "Its events so far are saved in the history (status: stopped).", icon=":material/stop_circle:")
        elif state.status in (RunStatus.FAILED, RunStatus.INTERRUPTED):
            st.error(f"The run failed ({escape_markdown(state.error_type or 'error')}):", icon=":material/error:")
            st.text(state.error or "")


def render_map_charts(container: DeltaGenerator, state: RunState, *, key: str, interactive: bool = False) -> None:
    if not state.batches:
        return
    with container:
        left, right = st.columns(2)
        chart_key = f"{key}-usefulness"
        # a finished run: clicking a bar opens that batch (evidence.render_call_inspector)
        _chart(left, charts.usefulness_figure(state), key=chart_key, on_select=(lambda: evidence.chart_selected(chart_key)) if interactive else None)
        right.plotly_chart(charts.timeline_figure(state), key=f"{key}-timeline", config={"displaylogo": False})


def _chart(container: DeltaGenerator, figure: go.Figure, *, key: str, on_select: Callable[[], None] | None = None) -> None:
    """A Plotly chart; with ``on_select``, clicking a point calls it (a finished run's charts)."""
    if on_select is None:
        container.plotly_chart(figure, key=key, config={"displaylogo": False})
    else:
        container.plotly_chart(figure, key=key, config={"displaylogo": False}, on_select=on_select, selection_mode="points")


def render_reduce_chart(container: DeltaGenerator, state: RunState, *, key: str, interactive: bool = False) -> None:
    if not state.candidates and state.reduce_prompt_budget is None:
        return
    with container:
        if not state.candidates:
            st.info("No map answer had a usefulness above 0, so nothing went to the reduce.")
            return
        chart_key = f"{key}-reduce"
        # a finished run: clicking the chart opens the reduce call
        _chart(container, charts.reduce_figure(state), key=chart_key, on_select=(lambda: evidence.reduce_chart_selected(chart_key)) if interactive else None)


def render_community_links(container: DeltaGenerator, community_ids: Sequence[str], *, index_key: str, run_id: str | None) -> None:
    """One link per community to its provenance page (with index, community and run in the URL)."""
    with container:
        shown = list(community_ids)[:MAX_COMMUNITY_LINKS]
        for start in range(0, len(shown), LINKS_PER_ROW):
            cols = st.columns(LINKS_PER_ROW)
            for col, community_id in zip(cols, shown[start : start + LINKS_PER_ROW]):
                col.page_link(
                    PROVENANCE_PAGE,
                    label=f"Community {escape_markdown(community_id)}",
                    query_params=provenance_params(index_key, community_id, run_id),
                    icon=":material/account_tree:",
                )
        if len(community_ids) > len(shown):
            st.caption(f"… and {len(community_ids) - len(shown)} more communities (see the reduce candidates below).")


ANSWER_ANCHOR = "graphrag-answer"
SCROLL_TICKS = 16
SCROLL_TICK_MS = 250
_SCROLL_INTO_VIEW = """<span id="{anchor}-scroll" data-nonce="{nonce}"></span><script>
(function () {{
  // Charts above it may still be growing: keep the anchor in view for a few seconds.
  // The reader wins at once: a wheel, touch, key or mouse button, or any scroll this script did
  // not make (a scrollbar drag, a link to an anchor, assistive technology, a test driver).
  var marker = document.getElementById("{anchor}-scroll");
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
    keeps the element as it is): a new ``nonce`` makes it a new element, so it scrolls again."""
    script = _SCROLL_INTO_VIEW.format(
        anchor=anchor, ticks=SCROLL_TICKS, tick_ms=SCROLL_TICK_MS, nonce=int(nonce), yield_to_scroll="true" if yield_to_scroll else "false"
    )
    container.html(script, unsafe_allow_javascript=True)


def scroll_to_answer(container: DeltaGenerator) -> None:
    """Bring the answer into view (once, when a run's answer arrives: on a 1280x800 screen it
    lies below the charts); see :func:`scroll_into_view`."""
    scroll_into_view(container, ANSWER_ANCHOR)


def render_answer_draft(container: DeltaGenerator, state: RunState) -> None:
    """The final answer as the model writes it (a streaming reduce), until the result is in."""
    if state.result is not None or state.status != RunStatus.RUNNING or not state.answer_draft:
        return
    with container:
        st.subheader("Answer")
        st.caption("Being written by the model…")
        st.text(state.answer_draft)


def render_answer(container: DeltaGenerator, state: RunState, *, index_key: str) -> None:
    """The answer as Markdown with its citations as links, and the three community sets."""
    evidence.render_answer(container, state, index_key=index_key, anchor=ANSWER_ANCHOR)


def render_spend(container: DeltaGenerator, spend: RunSpend, *, price: Price | None) -> None:
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


def render_diagnostics(container: DeltaGenerator, state: RunState, *, price: Price | None = None, key: str = "run") -> None:
    figures = figures_of(state)
    with container:
        st.subheader("Diagnostics")
        cols = st.columns(4)
        request = state.request
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
            render_spend(st.container(), figures.spend, price=price)
        if state.result is not None:
            st.metric(
                "Unsupported citations",
                state.result.diagnostics.unsupported_citation_count,
                help="Cited community ids that are not in the index or in no selected map answer.",
            )
        if state.result is not None and request is not None and request.dynamic:
            render_token_split(st.container(), state.result.diagnostics)
        st.caption(
            f"Model: {escape_markdown(state.model or '-')} · tokenizer: {escape_markdown(state.tokenizer or '-')} · "
            f"map prompt budget: {_number(state.map_prompt_budget)} · reduce prompt budget: {_number(state.reduce_prompt_budget)} · "
            f"concurrency: {state.concurrency or '-'} · run id: {escape_markdown(state.run_id or '-')}"
        )
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
                    on_select=lambda: evidence.table_selected(f"{key}-batch-table"),
                    selection_mode="single-row",
                )
                st.caption("Select a row to open that batch's call.")
        if state.candidates:
            with st.expander(f"Reduce candidates ({len(state.candidates)})"):
                st.dataframe(
                    pd.DataFrame(
                        {
                            "rank": [c.rank for c in state.candidates],
                            "fate": [charts.FATE_LABELS[c.fate] for c in state.candidates],
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


def render_failed_batches(container: DeltaGenerator, state: RunState) -> None:
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


def render_token_split(container: DeltaGenerator, diagnostics: GlobalSearchDiagnostics) -> None:
    """Rating, map and reduce cost apart (a dynamic run)."""
    d = diagnostics
    with container:
        cols = st.columns(4)
        cols[0].metric("Rating calls", d.rating_calls, help=f"{d.rating_cache_hits} more answered from the cache; {d.failed_rating_count} communities failed every repeat.")
        for col, label, usage in ((cols[1], "Rating tokens", d.rating_usage), (cols[2], "Map tokens", d.map_usage), (cols[3], "Reduce tokens", d.reduce_usage)):
            note = f" · {estimated_note(usage)}" if usage.estimated else ""
            cached = f" · {cached_text(usage)}" if usage.cached_tokens else ""
            col.metric(label, tokens_text(usage), help=f"prompt {usage.prompt_tokens:,} · completion {usage.completion_tokens:,}{cached}{note}")


def render_selection(container: DeltaGenerator, state: RunState, *, key: str) -> None:
    """The walk of a dynamic selection on the hierarchy (live), then its table of ratings."""
    selection = state.selection
    if not selection.active:
        return
    with container:
        st.plotly_chart(selection_charts.hierarchy_figure(state), key=f"{key}-hierarchy", config={"displaylogo": False})
        counts = selection.counts()
        st.caption(
            f"{selection.rated_count} communities rated · {selection.calls} rating calls"
            f" ({selection.cache_hits} from the cache) · {selection.usage.total_tokens:,} rating tokens · "
            + " · ".join(f"{selection_charts.WALK_LABELS[f]}: {n}" for f, n in sorted(counts.items()))
        )
        if selection.finished:
            with st.expander(f"Community ratings ({selection.rated_count} rated)"):
                st.dataframe(selection_charts.walk_table(state), hide_index=True, width="stretch")


RUN_PANELS = 9
"""The panels of a run. Each is an ``st.empty`` slot written on every drawing, and a panel not
reached yet stays a bare empty slot (a container is opened only to draw into): Streamlit merges
a placeholder and the container that replaces it into one message, and a container that
replaces a container keeps the old one's children, so this is what stops the previous run's
answer and diagnostics lingering, greyed out, under a new run's charts."""


def render_run(
    container: DeltaGenerator, state: RunState, *, index_key: str, key: str, price: Price | None = None, interactive: bool | None = None
) -> None:
    """The whole run: status, live charts, then (after the map) reduce, answer, errors, diagnostics.

    ``interactive`` (default: the run is not running) draws the widgets that open a call; a page
    that redraws the same run several times in one script run (the live loop) passes False."""
    interactive = state.status != RunStatus.RUNNING if interactive is None else interactive
    with container:
        status, why, selection, maps, calls, reduce, answer, failures, diagnostics = (st.empty() for _ in range(RUN_PANELS))
        if state.status is None:
            status.text("Status: starting")
            return
        render_status(status.container(), state)
        if interactive and state.status != RunStatus.RUNNING:
            evidence.render_why(why.container(), state)
        if state.selection.active:
            render_selection(selection.container(), state, key=key)
        if state.batches:
            render_map_charts(maps.container(), state, key=key, interactive=interactive)
            if interactive:
                calls_box = calls.container()
                evidence.render_call_inspector(calls_box, state, index_key=index_key)
                if (opening := evidence.take_reveal()) is not None:  # opened from a table row, the reduce chart, the why panel
                    # the page is redrawn under the opened call: only the reader's input ends the scroll
                    scroll_into_view(calls_box, evidence.CALL_ANCHOR, nonce=opening, yield_to_scroll=False)
        if state.phase in ("reduce", "done") and (state.candidates or state.reduce_prompt_budget is not None):
            render_reduce_chart(reduce.container(), state, key=key, interactive=interactive)
        if state.result is not None:
            render_answer(answer.container(), state, index_key=index_key)
        else:
            render_answer_draft(answer.container(), state)
        if state.status != RunStatus.RUNNING:
            if any(b.status == BatchStatus.FAILED or (b.status == BatchStatus.RETRIED and b.errors) for b in state.batches):
                render_failed_batches(failures.container(), state)
            render_diagnostics(diagnostics.container(), state, price=price, key=key)
