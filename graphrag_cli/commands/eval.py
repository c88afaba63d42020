"""``graphrag-explorer eval``: conditions judged head to head over a question set, and
``eval-questions``: a question set generated from an index.

    graphrag-explorer eval QUESTIONS --index INDEX --condition C0:level=0 --condition leaf:level=leaf \\
        --seeds 1,2 --judge offline --out report.md
    graphrag-explorer eval QUESTIONS --index INDEX --preset paper --out report.md   # C0..Cn, TS, SS, dynamic

The report goes to ``--out`` (Markdown; the win rates, costs, judgments and the choice per
criterion as CSV beside it: ``{stem}.choice.csv``, and each criterion's choice as a picture,
``{stem}.choice-{criterion}.svg``, shown in the report; people's votes when anyone has judged the
experiment's pairs, ``{stem}.votes.csv``; each condition's supported share, ``{stem}.support.csv``) or to stdout; progress goes to stderr, and the
recommended condition per criterion ends it. Answers and judge calls are kept in the evaluation store as
they are made, so running the same command again after an interruption (Ctrl-C included: exit
130) does only what is missing. The answering model and the judge are resolved alike
(:func:`~graphrag_cli.resolve.build_model`), sharing the endpoint options.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from graphrag_core.deferred import DEFERRED_TABLES
from graphrag_core.errors import BatchAPIError, EvaluationError
from graphrag_core.evaluation import (
    DEFAULT_CRITERIA,
    PRESETS,
    choose,
    ExperimentSpec,
    estimate_experiment,
    generate_questions,
    is_heuristic,
    load_questions,
    parse_conditions,
    preset_conditions,
    run_experiment,
)
from graphrag_core.evaluation.choice_svg import choice_svg
from graphrag_core.evaluation.questions import questions_to_jsonl
from graphrag_core.evaluation.report import (
    choice_csv,
    costs_csv,
    judgments_csv,
    support_csv,
    to_markdown,
    win_rates_csv,
)
from graphrag_core.evaluation.batches import DEFAULT_POLL_S, BatchOptions
from graphrag_core.evaluation.vote_report import people_markdown, votes_csv
from graphrag_core.evaluation.votes import VoteStore
from graphrag_core.llm.base import ChatModel, model_identity
from graphrag_core.llm.settings import PROVIDERS
from graphrag_core.request import check_seed, check_spend_limit
from graphrag_core.locations import DEFAULT_CACHE_NAME
from graphrag_core.methods import LAZY, VECTOR
from graphrag_core.models import Index
from graphrag_core.support import JUDGES, JudgeName
from graphrag_core.wording import counted

from ..context import EXIT_OK, EXIT_RUN, EXIT_USAGE, CliContext, CliError
from ..files import write_out
from ..loop import run_async
from ..options import (
    ModelOptions,
    add_cache_options,
    add_embedding_options,
    add_eval_db_option,
    add_model_options,
    add_quiet_option,
    add_spend_limit_option,
    add_store_options,
    int_or_text,
    list_of,
)
from ..progress import ProgressPrinter
from ..resolve import (
    build_embedder,
    build_model,
    evaluation_store,
    load_index_at,
    open_cache,
    open_store,
    shared_cache,
)


VIA_CHOICES = ("direct", "batch")


def add_parser(sub: Any) -> None:
    """Register ``eval`` and ``eval-questions``."""
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
        help="a condition: a name and request overrides, e.g. C0:level=0, TS:method=text, SS:method=vector, "
        "LZ500:method=lazy,relevance_budget=500 or small:map_budget=2000,strategy=stop (repeat the option)",
    )
    ev.add_argument(
        "--preset",
        choices=list(PRESETS),
        default=None,
        help="ready-made conditions: paper = every level of the index (C0, C1, ...; summaries only), TS (method=text), "
        "SS (method=vector) and dynamic selection, as the GraphRAG paper compares them; lazy = those and LZ100, LZ500, LZ1500 "
        "(method=lazy at Microsoft's published relevance budgets) (--condition adds more)",
    )
    ev.add_argument("--seeds", type=list_of(int_or_text), default=[0], help='comma-separated seeds, e.g. "1,2" (two or more add the A/A check)')
    ev.add_argument("--criteria", type=list_of(str), default=list(DEFAULT_CRITERIA), help="comma-separated criteria (default: all four)")
    ev.add_argument("--repeats", type=int_or_text, default=1, help="judge calls per criterion and order (default 1)")
    ev.add_argument("--no-aa", action="store_true", help="skip the A/A sanity check")
    ev.add_argument("--claims", action="store_true", help="also list each answer's claims and report claim-based metrics")
    ev.add_argument("--claim-threshold", type=float, default=0.5, help="ROUGE-L F1 that links two claims (0.5 to 0.8, default 0.5)")
    ev.add_argument("--judge", choices=PROVIDERS, default="offline", help="offline (a labelled heuristic, default) or an OpenAI-compatible LLM")
    ev.add_argument(
        "--support-judge",
        choices=(*JUDGES, "off"),
        default="offline",
        help="who checks whether each answer's points are backed by what they cite, for each condition's supported share: "
        "offline (deterministic, by the words; default), model (the --judge model, one call per few points) or off",
    )
    add_model_options(
        ev,
        model_help="the model that answers (default: the configured GRAPHRAG_LLM_* model, else offline)",
        base_url_help="OpenAI-compatible endpoint (for --model/--judge openai)",
        model_name_help="model name at the endpoint",
        api_key_env_help="environment variable that holds the API key",
    )
    ev.add_argument("--out", type=Path, default=None, metavar="FILE", help="write the Markdown report to FILE and CSV tables beside it (default: Markdown on stdout)")
    add_eval_db_option(ev)
    ev.add_argument("--estimate", action="store_true", help="print how many model calls the experiment needs, and stop")
    add_spend_limit_option(
        ev,
        help="the most tokens this run of the experiment may spend (answering, claims and judging): no call that could pass "
        "it is sent, and the experiment stops between items; the same command goes on from there (default: no limit)",
    )
    ev.add_argument(
        "--via",
        choices=VIA_CHOICES,
        default=VIA_CHOICES[0],
        help="direct: one call at a time as the experiment goes (default); batch: the OpenAI Batch API at half the price, "
        "in waves (ratings, maps, reduces, claims, judgments), each one job; its jobs are kept in the evaluation store, "
        "so the same command run again goes on from where it was",
    )
    ev.add_argument(
        "--batch-poll", type=float, default=DEFAULT_POLL_S, metavar="SECONDS", help=f"with --via batch: seconds between polls of a job (default {DEFAULT_POLL_S:g})"
    )
    add_embedding_options(ev)
    add_cache_options(ev, cache_help=f"map reply and embedding cache (default: next to the run store, {DEFAULT_CACHE_NAME})")
    add_store_options(ev, store_help="run history file, where each answer's run is saved", no_store_help="do not record the answers' runs")
    add_quiet_option(ev)
    ev.set_defaults(handler=run_eval)

    gen = sub.add_parser(
        "eval-questions",
        help="generate a question set from an index (personas, tasks, questions, as the GraphRAG paper does)",
        description="Write global questions for an index as JSON Lines, each tagged with its persona and task.",
    )
    gen.add_argument("index", metavar="INDEX", help="an index folder or a bundled sample name")
    gen.add_argument("--personas", type=int_or_text, default=5)
    gen.add_argument("--tasks", type=int_or_text, default=5, help="tasks per persona")
    gen.add_argument("--per-task", type=int_or_text, default=5, help="questions per task")
    add_model_options(
        gen,
        model_help="the model that writes them (default: the configured one, else the offline templates)",
        base_url_help=None,
        model_name_help=None,
        api_key_env_help=None,
    )
    gen.add_argument("--out", type=Path, default=None, metavar="FILE", help="the .jsonl to write (default: stdout)")
    gen.set_defaults(handler=run_questions)


def _model_label(model: ChatModel) -> str:
    """The model's identity, marked when it is the offline heuristic rather than an LLM."""
    name = model_identity(model)
    return f"{name} (heuristic)" if is_heuristic(model) else name


def _support_judge(args: argparse.Namespace) -> JudgeName | None:
    """``--support-judge``: a judge, or None for ``off``."""
    return None if args.support_judge == "off" else args.support_judge


def _spec(args: argparse.Namespace, index: Index) -> ExperimentSpec:
    try:
        conditions = (preset_conditions(args.preset, index) if args.preset else []) + parse_conditions("\n".join(args.condition))
        if not conditions:
            raise CliError("eval needs at least one --condition NAME:key=value, or --preset paper.", EXIT_USAGE)
        return ExperimentSpec(
            questions=load_questions(args.questions),
            conditions=conditions,
            seeds=[check_seed(seed) for seed in args.seeds],
            criteria=args.criteria,
            repeats=args.repeats,
            include_aa=not args.no_aa,
            claims=args.claims,
            claim_threshold=args.claim_threshold,
        )
    except EvaluationError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


def limit_forecast(limit: int, planned: int) -> str:
    """Whether an experiment will reach its spending limit, from its answers' planned prompts
    (the experiment stops between items; what is kept in the store is not spent again)."""
    if planned > limit:
        return (
            f"the spending limit of {limit:,} tokens will be reached: the answers' planned map prompts alone take {planned:,}; "
            "the experiment stops between items, and the same command goes on from there"
        )
    return f"the answers' planned map prompts take {planned:,} of the spending limit's {limit:,} tokens; replies, reduces and judging come on top"


def _write_report(markdown: str, tables: dict[str, str], pictures: dict[str, str], out: Path) -> Path:
    """The report at ``out``, each CSV table and picture beside it, all or none (the report
    last); returns the tables' common stem."""
    stem = out.with_suffix("")
    files: dict[Path, str] = {Path(f"{stem}.{suffix}.csv"): text for suffix, text in tables.items()}
    files.update({out.parent / name: svg for name, svg in pictures.items()})
    files[out] = markdown + "\n"
    write_out(files, what="the report")
    return stem


def run_eval(args: argparse.Namespace, context: CliContext) -> int:
    loaded = load_index_at(args.index, tables=DEFERRED_TABLES)  # an experiment names its index by every table's fingerprint
    spec = _spec(args, loaded.index)
    limit = check_spend_limit(args.spend_limit_tokens)
    if args.estimate:
        estimate = estimate_experiment(loaded.index, spec, support_judge=_support_judge(args))
        for key, value in estimate.model_dump().items():
            context.write(f"{key}: {value}\n")
        if limit is not None:
            context.write(f"spend_limit: {limit_forecast(limit, estimate.answer_prompt_tokens)}\n")
        return EXIT_OK
    if not args.batch_poll > 0:
        raise CliError(f"--batch-poll must be a positive number of seconds, not {args.batch_poll:g}.", EXIT_USAGE)
    batch = BatchOptions(poll_s=args.batch_poll) if args.via == "batch" else None
    options = ModelOptions.from_args(args)
    model = build_model(context, options.for_provider(args.model))
    judge = build_model(context, options.for_provider(args.judge))
    ranks = any(c.method in (VECTOR, LAZY) for c in spec.conditions)
    embedder = build_embedder(context, options.for_provider(args.model), name=args.embedding_model, off=args.no_embeddings) if ranks else None
    store = evaluation_store(context, args.eval_db)
    cache = shared_cache(context, open_cache(context, args.cache, off=args.no_cache))
    runs = open_store(context, args.store, off=args.no_store)
    if not args.quiet:
        estimate = estimate_experiment(loaded.index, spec, support_judge=_support_judge(args))
        claims = f", {estimate.claims_calls} claims" if estimate.claims_calls else ""
        claims += f", about {estimate.support_calls} checking support" if estimate.support_calls else ""
        context.note(
            f"eval: {len(spec.questions)} questions x {len(spec.conditions)} conditions x {len(spec.seeds)} seeds; "
            f"up to {estimate.total} model calls ({estimate.answer_calls} answering, {estimate.judge_calls} judging{claims}); "
            f"judge: {_model_label(judge)}; store: {store.path}"
            + (f"; chunks ranked by {embedder.identity if embedder is not None else 'bm25'}" if ranks else "")
        )
        if limit is not None:
            context.note(limit_forecast(limit, estimate.answer_prompt_tokens))
    progress = ProgressPrinter(context.err, enabled=not args.quiet, on_notice=context.note_once)
    try:
        result = run_async(
            run_experiment(
                loaded.index, spec, model, judge, store=store, cache=cache, run_store=runs, index_path=str(loaded.path), on_progress=progress,
                spend_limit_tokens=limit, batch=batch, embedder=embedder, support_judge=_support_judge(args),
            )
        )
    except KeyboardInterrupt:
        jobs = "; its batch jobs go on at the provider and are picked up" if batch is not None else ""
        context.note(f"the answers and judgments made so far are kept in {store.path}; the same command goes on from there{jobs}")
        raise
    except BatchAPIError as exc:
        raise CliError(
            f"{exc} (the jobs and replies so far are kept in {store.path}; the same command goes on from there)", EXIT_RUN
        ) from None
    except EvaluationError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    result = result.model_copy(update={"index_name": loaded.name})
    choices = choose(result)
    votes = VoteStore(store.path).votes(result.id)
    people = "\n" + people_markdown(result, votes) if votes else ""
    if args.out is None:
        context.write(to_markdown(result) + people + "\n")
    else:
        tables = {
            "win-rates": win_rates_csv(result), "costs": costs_csv(result), "judgments": judgments_csv(result),
            "choice": choice_csv(result, choices),
        }
        if result.supported_shares:
            tables["support"] = support_csv(result)
        if votes:
            tables["votes"] = votes_csv(votes)
        pictures = {c.criterion: f"{args.out.with_suffix('').name}.choice-{c.criterion}.svg" for c in choices}
        svgs = {pictures[choice.criterion]: choice_svg(choice) for choice in choices}
        stem = _write_report(to_markdown(result, pictures=pictures) + people, tables, svgs, args.out)
        if not args.quiet:
            context.note(
                f"wrote {args.out} and " + ", ".join(f"{stem}.{suffix}.csv" for suffix in tables)
                + f", and the choice per criterion as {stem}.choice-<criterion>.svg"
            )
    if not args.quiet:
        context.note(f"experiment {result.id}: {result.judge_calls} judge calls, {result.judge_calls_failed} failed, {result.duration_s:.1f} s")
        for choice in choices:
            context.note(choice.sentence)
    if result.stop_reason:
        context.note(f"stopped: {result.stop_reason}")
        context.note(f"the answers and judgments made so far are kept in {store.path}; the same command goes on from there")
    return EXIT_OK


def run_questions(args: argparse.Namespace, context: CliContext) -> int:
    loaded = load_index_at(args.index)
    model = build_model(context, ModelOptions.from_args(args))
    try:
        generated = run_async(generate_questions(loaded.index, model, args.personas, args.tasks, args.per_task))
    except EvaluationError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    text = questions_to_jsonl(generated)
    counts = f"eval-questions: {generated.counts.summary()}"  # asked for, kept, and why the rest were dropped
    if args.out is None:
        context.write(text)
        context.note(counts)
        return EXIT_OK
    write_out({args.out: text}, what="the question set")
    context.note(counts)
    context.note(f"wrote {counted(len(generated), 'question')} to {args.out} (by {_model_label(model)})")
    return EXIT_OK


__all__ = ["add_parser", "run_eval", "run_questions"]
