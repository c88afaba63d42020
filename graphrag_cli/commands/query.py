"""``graphrag-explorer query INDEX QUESTION``: answer one global question.

The answer goes to stdout (streamed as it is written when stdout is a terminal), or the whole
result as JSON with ``--json``; a failed or stopped run prints its failure document there
instead (:func:`~graphrag_cli.output.format_failure_json`). A run its spending limit stopped
answers from what it read (exit 0); with nothing usable read it says why and exits
:data:`~graphrag_cli.context.EXIT_STOPPED`. The run is recorded in the run
history from its first event, its finished batches kept when it fails or is interrupted. With
``--answer-on-interrupt`` the first Ctrl-C stops the map and the run goes on to answer from what
it read (:func:`~graphrag_core.search.answer_from_read`): its result, labelled partial, is
printed as any other; a second Ctrl-C quits.

With ``--check-support`` the finished run's points are checked against what they cite
(:func:`~graphrag_core.support.check_support`): the text answer is printed once the check is
made, each point followed by its verdict in words, then the summary line; with ``--json`` the
document's ``support`` holds the check; the check is kept with the run either way. A check that
cannot be made is an error (exit 4) that loses nothing: the run is recorded and printed.
"""

from __future__ import annotations

import argparse
from typing import Any

from graphrag_core.cost import spend_forecast
from graphrag_core.errors import (
    AllMapBatchesFailed,
    BudgetError,
    GraphRAGError,
    ModelError,
    ModelOutputError,
    PreflightError,
    SpendLimitReached,
    describe_error,
)
from graphrag_core.calls import why_no_answer
from graphrag_core.events import Event, RunStarted
from graphrag_core.figures import run_figures, spend_line
from graphrag_core.history import RunRecorder, RunStore
from graphrag_core.lazy.cost import estimate_lazy_cost
from graphrag_core.levels import DYNAMIC
from graphrag_core.llm.base import ChatModel, model_identity
from graphrag_core.methods import GLOBAL, LAZY, VECTOR, units_noun
from graphrag_core.models import Index
from graphrag_core.preflight import preflight
from graphrag_core.request import GlobalSearchRequest, check_seed
from graphrag_core.llm.embeddings import ranker_label
from graphrag_core.search import answer_from_read, draw_seed, retrieve_global
from graphrag_core.sources import unit_ids
from graphrag_core.state import RunState
from graphrag_core.support import marked_answer, support_lines
from graphrag_core.tokens import Tokenizer

from ..context import EXIT_OK, EXIT_RUN, EXIT_STOPPED, EXIT_USAGE, CliContext, CliError
from ..loop import run_async
from ..options import ModelOptions, add_embedding_options, add_run_options, search_defaults, setting_dest
from ..output import format_failure_json, format_result_json
from ..progress import ProgressPrinter
from ..support_check import add_support_options, chosen_judge, keep_support, run_support_check
from ..resolve import (
    advised_by_server,
    build_embedder,
    build_model,
    check_levels,
    configured_price,
    load_index_at,
    search_tables,
    open_cache,
    open_store,
    tokenizer,
)

SHOWN_COMMUNITY_IDS = 20
"""How many community ids the text output names before summarising the rest."""


def add_parser(sub: Any) -> None:
    query = sub.add_parser("query", help="answer one global question", description="Answer one global question over an index.")
    add_run_options(query, sweep=False)
    add_embedding_options(query)
    query.add_argument("--json", action="store_true", help="print the result as JSON instead of the answer")
    query.add_argument(
        "--answer-on-interrupt",
        action="store_true",
        help="on Ctrl-C, stop reading and answer from the map answers finished so far: a reduce over what was read, "
        "recorded with the run and labelled partial (exit code 0); a second Ctrl-C quits",
    )
    add_support_options(query, switch=True)
    query.set_defaults(handler=run)


def build_request(args: argparse.Namespace) -> GlobalSearchRequest:
    """The request the query options describe; raises the request's own validation errors.
    ``--level dynamic`` reads as ``--selection dynamic``, as ``dynamic`` in a sweep's ``--levels``."""
    defaults = search_defaults(args)
    level, selection = getattr(args, setting_dest("community_level")), getattr(args, setting_dest("community_selection"))
    if level == DYNAMIC:
        level, selection = None, selection or DYNAMIC
    return GlobalSearchRequest.with_defaults(
        args.question,
        defaults,
        community_selection=selection,
        community_level=level,
        map_token_budget=getattr(args, setting_dest("map_token_budget")),
        reduce_token_budget=getattr(args, setting_dest("reduce_token_budget")),
        seed=check_seed(getattr(args, setting_dest("seed"))),
        spend_limit_tokens=args.spend_limit_tokens,
    )


ADVISED_SETTINGS = ("map_concurrency", "map_token_budget", "reduce_token_budget")
"""The settings a local server's own facts may set (``advised_by_server``) unless given."""


def _given(args: argparse.Namespace) -> set[str]:
    """Which of :data:`ADVISED_SETTINGS` the command line gave explicitly."""
    return {name for name in ADVISED_SETTINGS if getattr(args, setting_dest(name), None) is not None}


def _close(recorder: RunRecorder, context: CliContext, *, interrupted: bool = False) -> str | None:
    """The run's final write; a failed one is a warning (the answer still counts)."""
    run_id = recorder.close(interrupted=interrupted)
    if recorder.save_error:
        context.note(f"warning: the run was not recorded: {recorder.save_error}")
    return run_id


def _batch_error_lines(exc: AllMapBatchesFailed, events: list[Event]) -> list[str]:
    failed = run_figures(events).failures
    if failed:
        return [f"batch {f.batch_index} (communities {', '.join(f.community_ids)}): {f.error}" for f in failed]
    return [f"batch {i}: {str(e) or type(e).__name__}" for i, e in enumerate(exc.exceptions)]


def _say_forecast(index: Index, request: GlobalSearchRequest, counter: Tokenizer, context: CliContext) -> None:
    """Whether the run will reach its spending limit, before any call (as the app's cost preview
    says), from the batches of the request's seed."""
    seed = request.seed if request.seed is not None else 0
    try:
        forecast = spend_forecast(index, request, seed=seed, tokenizer=counter)
    except GraphRAGError:
        return  # the run itself reports what is wrong with the request
    if forecast is not None:
        context.note(forecast.text())


def _say_lazy_cost(index: Index, request: GlobalSearchRequest, counter: Tokenizer, context: CliContext) -> None:
    """What a lazy run can cost, before any call (its range: the map is known after its tests)."""
    try:
        cost = estimate_lazy_cost(index, request, tokenizer=counter)
    except GraphRAGError:
        return  # the run itself reports what is wrong with the request
    context.note(f"estimate: {cost.text()}")


def _say_costs(index: Index, request: GlobalSearchRequest, counter: Tokenizer, context: CliContext) -> GlobalSearchRequest:
    """What the run can cost, said before it starts: a lazy run's range, and the forecast
    against a spending limit (for which the seed is drawn now, so that it speaks of the batches
    the run reads); the request the run then makes."""
    if request.method == LAZY:
        _say_lazy_cost(index, request, counter, context)
    if request.spend_limit_tokens is not None:
        if request.seed is None:
            request = request.model_copy(update={"seed": draw_seed()})
        _say_forecast(index, request, counter, context)
    return request


def _ended_without_answer(exc: GraphRAGError | KeyboardInterrupt, args: argparse.Namespace, context: CliContext, recorder: RunRecorder, store: RunStore | None) -> int:
    """A run that raised: it is closed (and stored with what it finished), then its exit code
    (stopped at the spending limit) or its error for the user."""
    events = recorder.events
    interrupted = isinstance(exc, KeyboardInterrupt)
    failed_run_id = _close(recorder, context, interrupted=interrupted)
    if args.json:
        context.write(format_failure_json(events, run_id=failed_run_id) + "\n")
    if isinstance(exc, SpendLimitReached):  # stopped, as Stop stops a run, with nothing to answer from
        context.note(f"stopped: {exc}")
        for item in why_no_answer(events):
            context.note(f"why there is no answer: {item.message}")
        context.note(spend_line(run_figures(events).spend, configured_price(context)))
        if failed_run_id:
            context.note(f"run {recorder.saved_run_id} recorded with its finished batches in {store.path if store else ''}")
        return EXIT_STOPPED
    if isinstance(exc, AllMapBatchesFailed):
        raise CliError(exc.message, EXIT_RUN, details=_batch_error_lines(exc, events)) from None
    if isinstance(exc, BudgetError):
        raise CliError(str(exc), EXIT_USAGE) from None
    if isinstance(exc, ModelError | ModelOutputError):
        raise CliError(f"The run failed: {describe_error(exc)}", EXIT_RUN) from None
    if interrupted and failed_run_id:
        context.note(f"run {recorder.saved_run_id} recorded with its finished batches in {store.path if store else ''}")
    raise exc  # main reports the others with their exit codes


def _preflight(model: ChatModel, request: GlobalSearchRequest, args: argparse.Namespace, context: CliContext) -> None:
    """The check that spends no tokens: an unreachable endpoint ends the command before the run."""
    try:
        run_async(preflight(model))
    except PreflightError as exc:
        if args.json:
            context.write(format_failure_json([], request=request, error=exc) + "\n")
        raise CliError(str(exc), EXIT_RUN) from None


def run(args: argparse.Namespace, context: CliContext) -> int:
    request = build_request(args)
    options = ModelOptions.from_args(args)
    model = build_model(context, options)
    chunks_ranked = request.method in (VECTOR, LAZY)
    embedder = build_embedder(context, options, name=args.embedding_model, off=args.no_embeddings) if chunks_ranked else None
    counter = tokenizer(request.tokenizer, model)
    loaded = load_index_at(args.index, tables=search_tables(request))
    if not request.dynamic and request.method == GLOBAL:  # dynamic selection and the chunk methods do not use the level
        check_levels(loaded, [request.community_level])
    _preflight(model, request, args, context)
    request = advised_by_server(context, model, request, counter=counter, given=_given(args))
    if not args.quiet:
        request = _say_costs(loaded.index, request, counter, context)
    store = open_store(context, args.store, off=args.no_store)
    cache = open_cache(context, args.cache, off=args.no_cache)
    recorder = RunRecorder(store, index_name=loaded.name, index_path=str(loaded.path))
    events = recorder.events
    checking = args.check_support or args.support_judge is not None
    progress = ProgressPrinter(
        context.err, enabled=not args.quiet, answer_stream=None if args.json or checking else context.out, on_notice=context.note_once
    )

    def on_event(event: Event) -> None:
        recorder(event)  # the run is stored from its start, its events as they stream
        progress(event)

    try:
        try:
            result = run_async(retrieve_global(loaded.index, request, model, on_event=on_event, cache=cache, tokenizer=counter, embedder=embedder))
        except KeyboardInterrupt:
            if not (args.answer_on_interrupt and RunState.replay(events).answerable_from_read):
                raise
            result = run_async(answer_from_read(loaded.index, list(events), model, on_event=on_event, tokenizer=counter))
    except (GraphRAGError, KeyboardInterrupt) as exc:
        return _ended_without_answer(exc, args, context, recorder, store)
    run_id = _close(recorder, context)
    support, support_error = None, None
    if checking:
        support, support_error = run_support_check(
            context, loaded.index, result, chosen_judge(args, model), model, cache=cache, tokenizer=counter, quiet=args.quiet,
            spend_limit=request.spend_limit_tokens, spent=result.diagnostics.usage.total_tokens,
        )
        if support is not None:
            keep_support(context, store, run_id, support)
    exit_code = EXIT_OK if support_error is None else EXIT_RUN

    answered_by = model_identity(model)
    if args.json:
        document = format_result_json(
            result,
            model=answered_by,
            index_ids=unit_ids(loaded.index, request.method),
            run_id=run_id or next((e.run_id for e in events if isinstance(e, RunStarted)), None),
            recorded_in=str(store.path) if run_id and store is not None else None,
            events=events,
            support=support,
            support_error=support_error,
        )
        context.write(document + "\n")
        if support_error:
            context.note(f"error: {support_error}")
        return exit_code
    streamed = progress.streamed_answer
    if support is not None:
        context.write(marked_answer(result.answer, support).rstrip() + "\n\n" + "\n".join(support_lines(support)) + "\n")
    elif streamed and streamed.strip() == result.answer.strip():
        context.write("\n")  # the answer is already on the terminal, as it was written
    else:
        if streamed:
            context.write("\n")
        context.write(result.answer.rstrip() + "\n")
    if support_error:
        context.note(f"error: {support_error}")
    for item in why_no_answer(events):
        context.note(f"why there is no full answer: {item.message}")
    if not args.quiet:
        context.note(f"answered by {answered_by}")
        if result.community_ids:
            ids = result.community_ids
            more = f" ... ({len(ids) - SHOWN_COMMUNITY_IDS} more)" if len(ids) > SHOWN_COMMUNITY_IDS else ""
            noun = "communities" if request.method == GLOBAL else units_noun(request.method)
            context.note(f"{noun} behind the answer: {', '.join(ids[:SHOWN_COMMUNITY_IDS])}{more}")
        if result.diagnostics.ranker:
            context.note(f"source chunks ranked by {ranker_label(result.diagnostics.ranker)}")
        if request.method == LAZY:
            d = result.diagnostics
            context.note(
                f"relevance tests: {d.relevance_tests:,} of {d.relevance_budget or 0:,} ({d.relevance_cache_hits:,} from the cache), "
                f"{sum(len(refs) for refs in d.relevant_chunks.values()):,} relevant source chunks"
            )
        for failure in result.failed_batches:
            context.note(f"warning: batch {failure.batch_index} failed: {failure.error}")
        context.note(spend_line(run_figures(events).spend, configured_price(context)))
        if run_id:
            context.note(f"run {run_id} recorded in {store.path if store else ''}")
    return exit_code


__all__ = ["SHOWN_COMMUNITY_IDS", "add_parser", "build_request", "run"]
