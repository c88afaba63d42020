"""The one progress printer: what a run, a sweep or an experiment is doing, on stderr.

:class:`ProgressPrinter` takes a run's events (batches done of planned, retries, failures,
dynamic selection's rounds, the reduce), a sweep's finished points and an experiment's steps
alike. On a terminal it rewrites one line for what changes often; elsewhere it prints one line
per step, the often-changing ones thinned out (about :data:`MAP_PROGRESS_STEPS` map lines per
run, :data:`EXPERIMENT_PROGRESS_STEPS` per experiment stage).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from graphrag_core.evaluation import EvalProgress
from graphrag_core.events import (
    BatchesPlanned,
    ChunksRanked,
    CommunityRated,
    Event,
    MapBatchCached,
    MapBatchFailed,
    MapBatchRetried,
    MapBatchSucceeded,
    ModelNotice,
    PartialAnswerStarted,
    QueryExpanded,
    ReduceAnswerDelta,
    ReduceRetried,
    ReduceStarted,
    RelevanceFinished,
    RelevanceStarted,
    RelevanceTested,
    RunFinished,
    RunStarted,
    RunWarning,
    SelectionFinished,
    SelectionRound,
    SummariesSelected,
)
from graphrag_core.levels import is_fixed, level_text
from graphrag_core.llm.embeddings import ranker_label
from graphrag_core.methods import GLOBAL, LAZY, TEXT, VECTOR, units_noun
from graphrag_core.sweep import SweepProgress
from graphrag_core.status import RunStatus
from graphrag_core.wording import counted

MAP_PROGRESS_STEPS = 10
"""Off a terminal, map progress is printed about this many times per run."""
EXPERIMENT_PROGRESS_STEPS = 20
"""Off a terminal, an experiment stage's progress is printed about this many times."""


def _after(delay_s: float) -> str:
    return f" in {delay_s:.1f}s" if delay_s > 0 else ""


class ProgressPrinter:
    """Prints progress on ``stream`` as it arrives (nothing when not ``enabled``).

    ``answer_stream``, when it is a terminal, receives a streaming reduce's answer as it is
    written (:attr:`streamed_answer` keeps what it received); a pipe gets the final answer in
    one piece from the command. ``on_notice``, when given, says a run's notices instead (the
    command line's :meth:`~graphrag_cli.context.CliContext.note_once`, so each is said once)."""

    def __init__(
        self,
        stream: TextIO,
        *,
        enabled: bool = True,
        answer_stream: TextIO | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> None:
        self.stream = stream
        self.on_notice = on_notice
        self.enabled = enabled
        self.answer_stream = answer_stream if answer_stream is not None and answer_stream.isatty() else None
        self.streamed_answer = ""
        self.total = 0
        self.done = 0
        self.failed = 0
        self.live = enabled and stream.isatty()
        self.method = GLOBAL
        self.tests = 0
        self.budget = 0
        self.relevant: set[str] = set()
        self._experiment_shown: dict[str, int] = {}
        self._batch_shown: set[str] = set()

    def __call__(self, update: Event | SweepProgress | EvalProgress) -> None:
        """Show one update: a run's event, a sweep's finished point or an experiment's step."""
        if isinstance(update, SweepProgress):
            self._sweep_point(update)
        elif isinstance(update, EvalProgress):
            self._experiment_step(update)
        else:
            self._run_event(update)

    def _line(self, text: str, *, transient: bool = False) -> None:
        if not self.enabled:
            return
        if self.live and transient:
            self.stream.write("\r\033[K" + text)
        else:
            self.stream.write(("\r\033[K" if self.live else "") + text + "\n")
        self.stream.flush()

    # -- a run ----------------------------------------------------------------------------------

    def _map_progress(self) -> None:
        """On a terminal every batch rewrites the line; elsewhere about every tenth, and the last."""
        step = max(1, self.total // MAP_PROGRESS_STEPS)
        if self.live or self.done == self.total or self.done % step == 0:
            self._line(self._map_line(), transient=self.done < self.total)

    def _map_line(self) -> str:
        failed = f", {self.failed} failed" if self.failed else ""
        return f"map: {self.done}/{self.total} batches done{failed}"

    def _run_event(self, event: Event) -> None:
        match event:
            case RunStarted():
                self.method = event.request.method
            case QueryExpanded():
                failed = f" (the expansion failed: {event.error})" if event.error else ""
                self._line(f"subqueries: {'; '.join(event.subqueries)}{failed}")
            case RelevanceStarted():
                self.budget = event.relevance_budget
                self._line(
                    f"relevance tests: 0 of {event.relevance_budget:,}; candidates ranked by {ranker_label(event.ranker)}: "
                    f"{', '.join(f'{n:,}' for n in event.candidate_counts)} chunks in {counted(len(event.communities), 'community', 'communities')}"
                )
            case RelevanceTested():
                self.tests += event.tests
                self.relevant.update(event.relevant_ids)
                step = max(1, self.budget // MAP_PROGRESS_STEPS)
                if self.live or self.tests % step == 0 or event.failed:
                    failed = f" (community {event.community_id}: {event.errors[-1] if event.errors else 'failed'})" if event.failed else ""
                    self._line(
                        f"relevance tests: {self.tests:,} of {self.budget:,}, {counted(len(self.relevant), 'relevant chunk')}{failed}",
                        transient=not event.failed,
                    )
            case RelevanceFinished():
                ended = "the budget is spent" if event.reason == "budget" else "nothing is left to test"
                self._line(
                    f"relevance tests: {event.tests:,} of {event.relevance_budget:,} ({ended}): {counted(event.relevant_count, 'relevant chunk')} "
                    f"in {counted(len(event.groups), 'community', 'communities')}"
                )
            case SummariesSelected() if self.method == LAZY:
                self._line(f"mapping over the evidence of {counted(event.count, 'community', 'communities')}")
            case ChunksRanked():
                self._line(f"ranked {event.unit_count:,} source chunks by {ranker_label(event.ranker)}: {event.relevant_count:,} relevant")
            case SelectionRound():
                fallback = f" (fallback: every level-{event.round} community)" if event.fallback else ""
                self._line(f"dynamic selection, round {event.round}: rating {counted(len(event.community_ids), 'community')}{fallback}")
            case CommunityRated() if self.live:
                self._line(f"rated community {event.community_id}: {'failed' if event.failed else event.rating}", transient=True)
            case SelectionFinished():
                failed = f", {event.failed_count} failed" if event.failed_count else ""
                self._line(
                    f"dynamic selection: kept {len(event.kept_ids)} of {counted(event.rated_count, 'rated community', 'rated communities')} in {counted(event.rounds, 'round')}"
                    f" ({counted(event.calls, 'rating call')}, {counted(event.usage.total_tokens, 'token')}{failed})"
                )
            case SummariesSelected() if self.method == TEXT:
                self._line(f"mapping over {event.count:,} {units_noun(TEXT, event.count)}")
            case SummariesSelected() if self.method == VECTOR:
                pass  # the ranking's line says how many chunks are relevant
            case SummariesSelected():
                level = event.community_level
                where = f"at level {level_text(level)}" if is_fixed(level) else "by dynamic selection"
                self._line(f"selected {counted(event.count, 'community summary', 'community summaries')} {where}")
            case BatchesPlanned():
                self.total = len(event.batches)
                self._line(self._map_line(), transient=True)
            case MapBatchRetried():
                self._line(f"batch {event.batch_index}: attempt {event.attempt - 1} failed, retrying{_after(event.delay_s)}: {event.error}")
            case MapBatchSucceeded() | MapBatchCached():
                self.done += 1
                self._map_progress()
            case MapBatchFailed():
                self.done += 1
                self.failed += 1
                self._line(f"batch {event.batch_index} failed after {event.attempts} attempts: {event.error}")
                self._map_progress()
            case ReduceStarted() if self.method == VECTOR:
                self._line(f"answering from {event.answer_count:,} {units_noun(VECTOR, event.answer_count)}, {event.prompt_tokens:,} prompt tokens")
            case PartialAnswerStarted():
                self._line(f"stopped after {event.batches_read:,} of {event.batch_count:,} batches: answering from the {event.answers:,} answers read (Ctrl-C again to quit)")
            case ReduceStarted():
                self._line(f"reduce: {counted(event.answer_count, 'answer')}, {counted(event.prompt_tokens, 'prompt token')}")
            case ModelNotice() if self.on_notice is not None:
                self.on_notice(event.message)
            case ModelNotice():
                self._line(f"note: {event.message}")
            case RunWarning():  # not progress: said even with --quiet
                self.stream.write(("\r\033[K" if self.live else "") + f"warning: {event.message}\n")
                self.stream.flush()
            case ReduceAnswerDelta():
                if self.answer_stream is not None:
                    self.answer_stream.write(event.text)
                    self.answer_stream.flush()
                    self.streamed_answer += event.text
            case ReduceRetried():
                if self.streamed_answer and self.answer_stream is not None:
                    self.answer_stream.write("\n")
                    self.streamed_answer = ""
                self._line(f"reduce: attempt {event.attempt - 1} failed, retrying{_after(event.delay_s)}: {event.error}")
            case RunFinished():
                result = event.result
                d = result.diagnostics
                rating = "" if is_fixed(result.community_level) else f"{counted(d.rating_calls, 'rating call')}, "
                if self.method == LAZY:
                    rating = f"{d.relevance_tests:,} of {d.relevance_budget or 0:,} relevance tests, "
                self._line(f"{RunStatus(result.status).word} in {d.duration_s:.2f}s (seed {result.seed}, {rating}{counted(d.map_calls, 'map call')})")
                if d.stopped_note:
                    self._line(d.stopped_note)
            case _:
                pass  # a failed run is reported by main, with its exit code

    # -- a sweep and an experiment --------------------------------------------------------------

    def _sweep_point(self, progress: SweepProgress) -> None:
        p = progress.point
        first_batch_error = f" (batch error: {p.batch_errors[0]})" if p.error and p.batch_errors else ""
        detail = RunStatus(p.status).word + (
            f": {p.error}{first_batch_error}"
            if p.error
            else f", {counted(p.batch_count, 'batch')}, {counted(len(p.community_ids), 'community', 'communities')} behind"
        )
        self._line(
            f"point {progress.done}/{progress.total} level={level_text(p.level)} seed={p.seed} "
            f"map={p.map_token_budget} reduce={p.reduce_token_budget}: {detail}"
        )

    def _experiment_step(self, progress: EvalProgress) -> None:
        """The first and the last item of each stage, and about every twentieth in between; a
        Batch API job at every change of its state or counts."""
        if progress.stage == "batch":
            if progress.label not in self._batch_shown:
                self._batch_shown.add(progress.label)
                self._line(progress.label)
            return
        step = max(1, progress.total // EXPERIMENT_PROGRESS_STEPS)
        shown = self._experiment_shown.get(progress.stage, 0)
        if progress.done == progress.total or progress.done - shown >= step or progress.done == 1:
            self._experiment_shown[progress.stage] = progress.done
            kept = " (kept from an earlier run)" if progress.reused else ""
            self._line(f"{progress.stage} {progress.done}/{progress.total}: {progress.label}{kept}")


__all__ = ["EXPERIMENT_PROGRESS_STEPS", "MAP_PROGRESS_STEPS", "ProgressPrinter"]
