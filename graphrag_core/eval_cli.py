"""``graphrag-explorer eval``: judge conditions head to head over a question set
(and ``eval-questions``: generate a question set from an index).

    graphrag-explorer eval QUESTIONS --index INDEX --condition C0:level=0 --condition leaf:level=leaf \\
        --seeds 1,2 --judge offline --out report.md

The report goes to ``--out`` (Markdown; the win rates, costs and judgments as CSV beside it) or
to stdout; progress goes to stderr. Answers and judge calls are kept in an evaluation store as
they are made, so running the same command again after an interruption does only what is missing.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from .cli import (
    CACHE_FILE_NAME,
    EXIT_OK,
    EXIT_USAGE,
    MODEL_CHOICES,
    CliError,
    _Io,
    _int_or_text,
    _list_of,
    build_model,
    index_display_name,
    load_index_at,
    open_cache,
    open_store,
)
from .errors import EvaluationError
from .evaluation.experiment import Condition, EvalProgress, ExperimentSpec, estimate_experiment, run_experiment
from .evaluation.judge import DEFAULT_CRITERIA
from .evaluation.questions import load_questions
from .evaluation.report import costs_csv, judgments_csv, to_markdown, win_rates_csv
from .evaluation.store import EVAL_DB_FILE_NAME, EvaluationStore, evaluation_store_path
from .locations import store_path_from


def add_eval_parser(sub: Any) -> None:
    """Register the ``eval`` subcommand on the main parser's subparsers."""
    ev = sub.add_parser(
        "eval",
        help="judge conditions (levels, budgets, selection) head to head over a question set",
        description="Answer a question set under each condition, judge every pair of answers on the GraphRAG paper's criteria, "
        "and report win rates with Wilcoxon/Holm p-values and each condition's cost.",
    )
    ev.add_argument("questions", metavar="QUESTIONS", help="question set: a .jsonl file of {\"question\": ...} lines or a .csv with a question column")
    ev.add_argument("--index", required=True, metavar="INDEX", help="an index folder or a bundled sample name")
    ev.add_argument(
        "--condition",
        action="append",
        default=[],
        metavar="NAME:key=value,...",
        help="a condition: a name and request overrides, e.g. C0:level=0 or small:map_budget=2000,strategy=stop (repeat the option)",
    )
    ev.add_argument("--seeds", type=_list_of(_int_or_text), default=[0], help='comma-separated seeds, e.g. "1,2" (two or more add the A/A check)')
    ev.add_argument("--criteria", type=_list_of(str), default=list(DEFAULT_CRITERIA), help="comma-separated criteria (default: all four)")
    ev.add_argument("--repeats", type=_int_or_text, default=1, help="judge calls per criterion and order (default 1)")
    ev.add_argument("--no-aa", action="store_true", help="skip the A/A sanity check")
    ev.add_argument("--claims", action="store_true", help="also list each answer's claims and report claim-based metrics")
    ev.add_argument("--claim-threshold", type=float, default=0.5, help="ROUGE-L F1 that links two claims (0.5 to 0.8, default 0.5)")
    ev.add_argument("--judge", choices=MODEL_CHOICES, default="offline", help="offline (a labelled heuristic, default) or an OpenAI-compatible LLM")
    ev.add_argument("--model", choices=MODEL_CHOICES, default=None, help="the model that answers (default: the configured GRAPHRAG_LLM_* model, else offline)")
    ev.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (for --model/--judge openai)")
    ev.add_argument("--model-name", default=None, help="model name at the endpoint")
    ev.add_argument("--api-key-env", default=None, metavar="VAR", help="environment variable that holds the API key")
    ev.add_argument("--out", type=Path, default=None, metavar="FILE", help="write the Markdown report to FILE and CSV tables beside it (default: Markdown on stdout)")
    ev.add_argument("--eval-db", type=Path, default=None, metavar="PATH", help=f"evaluation store (default: next to the run store, {EVAL_DB_FILE_NAME})")
    ev.add_argument("--estimate", action="store_true", help="print how many model calls the experiment needs, and stop")
    cache = ev.add_mutually_exclusive_group()
    cache.add_argument("--cache", type=Path, default=None, metavar="PATH", help=f"map reply cache (default: next to the run store, {CACHE_FILE_NAME})")
    cache.add_argument("--no-cache", action="store_true", help="do not cache map replies")
    store = ev.add_mutually_exclusive_group()
    store.add_argument("--store", type=Path, default=None, metavar="PATH", help="run history file, where each answer's run is saved")
    store.add_argument("--no-store", action="store_true", help="do not record the answers' runs")
    ev.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    ev.set_defaults(handler=cmd_eval)

    gen = sub.add_parser(
        "eval-questions",
        help="generate a question set from an index (personas, tasks, questions, as the GraphRAG paper does)",
        description="Write global questions for an index as JSON Lines, each tagged with its persona and task.",
    )
    gen.add_argument("index", metavar="INDEX", help="an index folder or a bundled sample name")
    gen.add_argument("--personas", type=_int_or_text, default=5)
    gen.add_argument("--tasks", type=_int_or_text, default=5, help="tasks per persona")
    gen.add_argument("--per-task", type=_int_or_text, default=5, help="questions per task")
    gen.add_argument("--model", choices=MODEL_CHOICES, default=None, help="the model that writes them (default: the configured one, else the offline templates)")
    gen.add_argument("--base-url", default=None)
    gen.add_argument("--model-name", default=None)
    gen.add_argument("--api-key-env", default=None, metavar="VAR")
    gen.add_argument("--out", type=Path, default=None, metavar="FILE", help="the .jsonl to write (default: stdout)")
    gen.set_defaults(handler=cmd_eval_questions)


def _spec(args: argparse.Namespace) -> ExperimentSpec:
    if not args.condition:
        raise CliError("eval needs at least one --condition NAME:key=value.", EXIT_USAGE)
    try:
        questions = load_questions(args.questions)
        conditions = [Condition.parse(text) for text in args.condition]
        return ExperimentSpec(
            questions=questions,
            conditions=conditions,
            seeds=args.seeds,
            criteria=args.criteria,
            repeats=args.repeats,
            include_aa=not args.no_aa,
            claims=args.claims,
            claim_threshold=args.claim_threshold,
        )
    except EvaluationError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


def _judge(args: argparse.Namespace, io: _Io) -> Any:
    judge_args = argparse.Namespace(**{**vars(args), "model": args.judge})
    if args.judge == "offline":  # the endpoint options are then the answering model's
        judge_args.base_url = judge_args.model_name = judge_args.api_key_env = None
    return build_model(judge_args, io.environ, given=io.model)


def _answer_model(args: argparse.Namespace, io: _Io) -> Any:
    model_args = argparse.Namespace(**vars(args))
    if args.model == "offline":  # the endpoint options are then the judge's
        model_args.base_url = model_args.model_name = model_args.api_key_env = None
    return build_model(model_args, io.environ, given=io.model)


def _progress(io: _Io, quiet: bool) -> Any:
    last: dict[str, int] = {}

    def on_progress(progress: EvalProgress) -> None:
        if quiet:
            return
        step = max(1, progress.total // 20)
        if progress.done == progress.total or progress.done - last.get(progress.stage, 0) >= step or progress.done == 1:
            last[progress.stage] = progress.done
            kept = " (kept from an earlier run)" if progress.reused else ""
            io.note(f"{progress.stage} {progress.done}/{progress.total}: {progress.label}{kept}")

    return on_progress


def cmd_eval(args: argparse.Namespace, io: _Io) -> int:
    spec = _spec(args)
    index, path = load_index_at(args.index)
    if args.estimate:
        estimate = estimate_experiment(index, spec)
        for key, value in estimate.model_dump().items():
            io.out.write(f"{key}: {value}\n")
        return EXIT_OK
    model, judge = _answer_model(args, io), _judge(args, io)
    db = args.eval_db if args.eval_db is not None else evaluation_store_path(store_path_from(io.environ))
    try:
        store = EvaluationStore(db)
    except OSError as exc:
        raise CliError(f"Cannot use the evaluation store {db}: {exc}", EXIT_USAGE) from None
    cache, runs = open_cache(args, io.environ), open_store(args, io.environ)
    estimate = estimate_experiment(index, spec)
    if not args.quiet:
        io.note(
            f"eval: {len(spec.questions)} questions x {len(spec.conditions)} conditions x {len(spec.seeds)} seeds; "
            f"up to {estimate.total} model calls ({estimate.answer_calls} answering, {estimate.judge_calls} judging"
            f"{', ' + str(estimate.claims_calls) + ' claims' if estimate.claims_calls else ''}); judge: {judge_label_of(judge)}; store: {db}"
        )
    result = asyncio.run(
        run_experiment(
            index,
            spec,
            model,
            judge,
            store=store,
            cache=cache,
            run_store=runs,
            index_path=str(path),
            on_progress=_progress(io, args.quiet),
        )
    )
    result = result.model_copy(update={"index_name": index_display_name(index, path)})
    markdown = to_markdown(result)
    if args.out is None:
        io.out.write(markdown + "\n")
    else:
        out: Path = args.out
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(markdown + "\n", encoding="utf-8")
            stem = out.with_suffix("")
            for suffix, text in (("win-rates", win_rates_csv(result)), ("costs", costs_csv(result)), ("judgments", judgments_csv(result))):
                Path(f"{stem}.{suffix}.csv").write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CliError(f"Cannot write {out}: {exc.strerror or exc}", EXIT_USAGE) from None
        if not args.quiet:
            io.note(f"wrote {out} and {stem}.win-rates.csv, {stem}.costs.csv, {stem}.judgments.csv")
    if not args.quiet:
        io.note(f"experiment {result.id}: {result.judge_calls} judge calls, {result.judge_calls_failed} failed, {result.duration_s:.1f} s")
    return EXIT_OK


def cmd_eval_questions(args: argparse.Namespace, io: _Io) -> int:
    from .evaluation.questions import generate_questions, questions_to_jsonl

    index, path = load_index_at(args.index)
    model = build_model(args, io.environ, given=io.model)
    try:
        questions = asyncio.run(generate_questions(index, model, args.personas, args.tasks, args.per_task))
    except EvaluationError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    text = questions_to_jsonl(questions)
    if args.out is None:
        io.out.write(text)
    else:
        try:
            args.out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CliError(f"Cannot write {args.out}: {exc.strerror or exc}", EXIT_USAGE) from None
        io.note(f"wrote {len(questions)} questions to {args.out} (by {judge_label_of(model)})")
    return EXIT_OK


def judge_label_of(judge: Any) -> str:
    from .evaluation.experiment import is_heuristic
    from .llm.base import model_identity

    name = model_identity(judge)
    return f"{name} (heuristic)" if is_heuristic(judge) else name


__all__ = ["add_eval_parser", "cmd_eval", "cmd_eval_questions", "judge_label_of"]
