"""One render function per panel; each takes the container to draw into.

Index text (summaries, claims, chunks) and model output are untrusted: they are drawn with
``st.text`` (no Markdown, no HTML), and short values put into Markdown (labels, messages) go
through :func:`escape_markdown`. No panel uses ``unsafe_allow_html``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.errors import STOPPED_MESSAGE
from graphrag_core.figures import Price, RunSpend, cached_text, estimated_note, figures_of, money, tokens_text
from graphrag_core.results import GlobalSearchDiagnostics
from graphrag_core.llm.base import TokenUsage
from graphrag_core.methods import GLOBAL, method_label
from graphrag_core.llm.embeddings import ranker_label
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.state import BatchStatus, RunState
from graphrag_core.status import RunStatus
from graphrag_core.wording import counted

from . import charts, citation_evidence, selection_charts
from ..panels import evidence
from ..labels import FATE_LABELS
from ..text import escape_markdown
from .scrolling import ANSWER_ANCHOR, scroll_into_view
from ..loaders import CostPreview
from ..urls import provenance_params

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
    if state.stopped_early:
        return "answering from what was read"
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
            texts = summaries + (claims if request.include_claims else 0) + (sources if request.include_sources else 0)
            if preview.map_prompt_tokens > texts:  # the rest of the estimate: each batch's prompt and part headers
                parts.append(f"the map prompt and part headers of {counted(preview.batches, 'batch')} {preview.map_prompt_tokens - texts:,}")
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


def render_status(container: DeltaGenerator, state: RunState, *, note: str | None = None) -> None:
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
        elif state.ranking is not None:  # naive RAG: no map, one call over the most relevant chunks
            ranked = state.ranking
            st.progress(1.0 if state.result is not None else 0.5, text=f"{ranked.relevant_count:,} of {ranked.unit_count:,} source chunks relevant · ranked by {ranker_label(ranked.ranker)}")
        elif state.status == RunStatus.RUNNING or state.result is not None:
            st.progress(state.progress, text=f"{state.finished_batches:,} of {len(state.batches):,} map batches finished")
        for notice in state.notices:
            st.caption(f"Model: {escape_markdown(notice)}")
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


def render_map_charts(
    container: DeltaGenerator, state: RunState, *, key: str, interactive: bool = False, height: int = charts.CHART_HEIGHT, timeline: go.Figure | None = None
) -> DeltaGenerator | None:
    """The usefulness chart and the call timeline side by side (``height`` px each); ``timeline``
    is drawn instead of a timeline of ``state`` when given (the live view redraws it at its own
    pace). Returns the usefulness chart's place (None: no batches yet), where the live view
    draws it again when its first bar comes (:func:`render_usefulness`)."""
    if not state.batches:
        return None
    with container:
        left, right = st.columns(2)
        timeline = timeline if timeline is not None else charts.timeline_figure(state, height=height)
        place = left.empty()
        render_usefulness(place, state, key=key, interactive=interactive, height=height, top=timeline.layout.margin.t)
        _chart(right, timeline, key=f"{key}-timeline", live=not interactive)
    return place


def render_usefulness(place: DeltaGenerator, state: RunState, *, key: str, interactive: bool = False, height: int = charts.CHART_HEIGHT, top: int | None = None) -> None:
    """The usefulness chart in ``place`` (an ``st.empty``), its plot ``top`` px down (the
    timeline's beside it). A finished run's chart (``interactive``) has its key: clicking a bar
    opens that batch (evidence.render_call_inspector). A live one has none, so a tick may draw it
    again in its place when its first bar comes (the figure differs, and so does its identity)."""
    figure = charts.usefulness_figure(state, height=height, top=top)
    if interactive:
        chart_key = f"{key}-usefulness"
        _chart(place, figure, key=chart_key, on_select=lambda: evidence.chart_selected(chart_key))
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


def render_answer_draft(container: DeltaGenerator, state: RunState) -> None:
    """The final answer as the model writes it (a streaming reduce), until the result is in."""
    if state.result is not None or state.status != RunStatus.RUNNING or not state.answer_draft:
        return
    with container:
        st.subheader("Answer")
        st.caption("Being written by the model…")
        st.text(state.answer_draft)


def render_answer(container: DeltaGenerator, state: RunState, *, index_key: str, key: str | None = None) -> None:
    """The answer as Markdown with its citations as links (a click shows the citation's evidence
    on this page), and the three community sets (their communities open in one click when
    ``key`` is given: a run drawn once per script run)."""
    evidence.render_answer(
        container, state, index_key=index_key, anchor=ANSWER_ANCHOR, key=key,
        under_answer=lambda box: citation_evidence.draw_citation_evidence(box, state, index_key=index_key),
    )


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
            render_spend(st.container(), figures.spend, price=price)
        if state.result is not None:
            st.metric(
                "Unsupported citations",
                state.result.diagnostics.unsupported_citation_count,
                help="Cited ids (communities, or source chunks) that are not in the index or in no selected map answer.",
            )
        if state.result is not None and request is not None and request.dynamic:
            render_token_split(st.container(), state.result.diagnostics)
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


LIVE_CHART_HEIGHT = 290
"""The live charts' height: with the status and the progress bar above them they fit, with the
question and the buttons, on one 1280x800 screen."""
PRESENTER_CHART_HEIGHT = 300
"""The live charts' height in presenter mode (no sidebar, larger type: the charts span the page
and still fit a 1280x800 screen under the question)."""


def render_live_body(
    container: DeltaGenerator, state: RunState, *, key: str, chart_height: int = LIVE_CHART_HEIGHT, timeline: go.Figure | None = None
) -> DeltaGenerator | None:
    """A run while it streams (or a replay), under its status and above the answer as it is
    written: the walk of a dynamic selection, the usefulness chart and the call timeline, the
    reduce. Drawn again on every tick of the live view with the same elements in the same places,
    so each chart stays on the page and only its data changes. Returns the usefulness chart's
    place (see :func:`render_map_charts`)."""
    with container:
        if state.selection.active:
            render_selection(st.container(), state, key=key)
        place = render_map_charts(st.container(), state, key=key, height=chart_height, timeline=timeline)
        if state.phase in ("reduce", "done") and (state.candidates or state.reduce_prompt_budget is not None):
            render_reduce_chart(st.container(), state, key=key)
    return place


def render_run(
    container: DeltaGenerator,
    state: RunState,
    *,
    index_key: str,
    key: str,
    price: Price | None = None,
    interactive: bool | None = None,
    presenter: bool = False,
) -> None:
    """The whole run: status, live charts, then (after the map) reduce, answer, errors, diagnostics.

    ``interactive`` (default: the run is not running) draws the widgets that open a call;
    ``presenter`` leaves out the developer detail (the call inspector, the diagnostics)."""
    interactive = state.status != RunStatus.RUNNING if interactive is None else interactive
    with container:
        if state.status is None:
            st.text("Status: starting")
            return
        render_status(st.container(), state)
        if interactive and state.status != RunStatus.RUNNING:
            evidence.render_why(st.container(), state)
        if state.selection.active:
            render_selection(st.container(), state, key=key)
        if state.batches:
            render_map_charts(st.container(), state, key=key, interactive=interactive)
        if interactive and not presenter and (state.batches or state.reduce_calls):  # naive RAG has no batch, only its one call
            calls_box = st.container()
            evidence.render_call_inspector(calls_box, state, index_key=index_key)
            if (opening := evidence.take_reveal()) is not None:  # opened from a table row, the reduce chart, the why panel
                # the page is redrawn under the opened call: only the reader's input ends the scroll
                scroll_into_view(calls_box, evidence.CALL_ANCHOR, nonce=opening, yield_to_scroll=False)
        if state.phase in ("reduce", "done") and (state.candidates or state.reduce_prompt_budget is not None):
            render_reduce_chart(st.container(), state, key=key, interactive=interactive)
        if state.result is not None:
            render_answer(st.container(), state, index_key=index_key, key=f"{key}-sets" if interactive else None)
        else:
            render_answer_draft(st.container(), state)
        if state.status != RunStatus.RUNNING and not presenter:
            if any(b.status == BatchStatus.FAILED or (b.status == BatchStatus.RETRIED and b.errors) for b in state.batches):
                render_failed_batches(st.container(), state)
            render_diagnostics(st.container(), state, price=price, key=key)
