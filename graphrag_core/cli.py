"""The ``graphrag-explorer`` command line (also ``python -m graphrag_core``).

Subcommands: ``query`` (one global question), ``sweep`` (a grid of levels, seeds and budgets),
``eval`` (conditions judged head to head over a question set, :mod:`graphrag_core.eval_cli`),
``inspect`` (what an index holds, level by level), ``import`` (a Microsoft GraphRAG output
folder to the native format), ``runs`` (the stored run history; ``runs export --bundle`` writes a
run bundle) and ``replay`` (a run bundle's status, answer and community sets, with no model).

Streams: results go to stdout (the answer, or JSON with ``--json``); progress, warnings and
errors go to stderr, so ``graphrag-explorer query ... > answer.txt`` keeps only the answer.

Exit codes (:data:`EXIT_USAGE` and friends): 0 success (``no_results`` included: it is an
answer), 2 a usage or validation error (the spec's message, no traceback), 3 an index that
cannot be read, 4 a model or run failure, 130 interrupted by Ctrl-C.

This is an application entry point: it may read ``os.environ`` (model settings, the default
store and cache locations); the engine it calls never does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO, TypeVar

from .bundle import BundleError, bundle_to_json, index_mismatch, make_bundle, read_bundle
from .report import record_to_markdown, settings_text
from .status import RunStatus
from .citations import community_sets
from .errors import (
    AllMapBatchesFailed,
    BudgetError,
    GraphRAGError,
    IndexValidationError,
    ModelError,
    ModelOutputError,
    PreflightError,
    RequestValidationError,
    describe_error,
)
from .preflight import preflight_sync
from .events import (
    BatchesPlanned,
    CommunityRated,
    Event,
    MapBatchFailed,
    MapBatchRetried,
    MapBatchSucceeded,
    MapBatchCached,
    ModelNotice,
    ReduceAnswerDelta,
    ReduceRetried,
    ReduceStarted,
    RunFailed,
    RunFinished,
    SelectionFinished,
    SelectionRound,
    SummariesSelected,
)
from .llm.base import ChatModel, model_identity
from .llm.settings import PROVIDERS, ModelSettings, SettingsError
from .history import RunRecorder
from .models import LEAF, Index
from .request import DYNAMIC, DYNAMIC_SETTING_NAMES, GlobalSearchRequest, SearchDefaults, SearchSettings
from .results import GlobalSearchResult
from .search import retrieve_global
from .figures import Price, run_figures, spend_line
from .state import RunState
from .locations import DEFAULT_CACHE_NAME, ENV_CACHE, ENV_DB, cache_path_from, store_path_from
from .statistics import index_statistics
from .history import RunRecord, RunStore, RunSummary, StoreError
from .sweep import SweepPoint, SweepProgress, SweepResult, SweepSpec, run_sweep
from .tokens import Tokenizer, tokenizer_for

PROG = "graphrag-explorer"

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_INDEX = 3
EXIT_RUN = 4
EXIT_INTERRUPTED = 130

CACHE_FILE_NAME = DEFAULT_CACHE_NAME
"""The default map cache lives next to the default run store."""

MODEL_CHOICES = PROVIDERS
PROGRESS_STEPS = 10
"""Off a terminal, map progress is printed about this many times per run."""
SHOWN_COMMUNITY_IDS = 20
"""How many community ids the text output names before summarising the rest."""
SWEEP_FORMATS = {".csv": "csv", ".json": "json"}


class CliError(Exception):
    """A failure the command line reports as one message and an exit code, with no traceback."""

    def __init__(self, message: str, code: int, *, details: Sequence[str] = (), usage: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.details = tuple(details)
        self.usage = usage


# -- argument parsing ---------------------------------------------------------------------------


def _int_or_text(text: str) -> int | str:
    """An integer when the text is one, else the text itself, so the request's own validation
    (with the spec's message) rejects it rather than argparse's generic one."""
    try:
        return int(text.strip())
    except ValueError:
        return text


def _level(text: str) -> int | str:
    word = text.strip().lower()
    return word if word in (LEAF, DYNAMIC) else _int_or_text(text)


def _list_of(item: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    def parse(text: str) -> list[Any]:
        return [item(part) for part in text.split(",") if part.strip()]

    return parse


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that raises instead of exiting, so ``main`` returns its code."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{self.prog}: {message}", EXIT_USAGE, usage=self.format_usage().rstrip())


def _add_run_options(parser: argparse.ArgumentParser, *, sweep: bool) -> None:
    """The options of a request, the model, the cache and the store (shared by query and sweep)."""
    parser.add_argument("index", metavar="INDEX", help="an index folder (native or Microsoft GraphRAG output) or a bundled sample name")
    parser.add_argument("question", metavar="QUESTION", help="the global question")
    grid_settings = GRID_SETTINGS if sweep else ()
    names = [n for n in GlobalSearchRequest.model_fields if n != "query" and n not in grid_settings]
    add_setting_options(parser.add_argument_group("request"), [n for n in names if n not in DYNAMIC_SETTING_NAMES])
    add_setting_options(
        parser.add_argument_group("dynamic selection"),
        DYNAMIC_SETTING_NAMES,
        overrides={"community_selection": SWEEP_SELECTION} if sweep else None,
    )

    mod = parser.add_argument_group("model")
    mod.add_argument(
        "--model",
        choices=MODEL_CHOICES,
        default=None,
        help="offline (no network) or an OpenAI-compatible endpoint; default: GRAPHRAG_LLM_PROVIDER, as in the app (offline when nothing is configured)",
    )
    mod.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (with --model openai)")
    mod.add_argument("--model-name", default=None, help="model name at the endpoint (with --model openai)")
    mod.add_argument("--api-key-env", default=None, metavar="VAR", help="environment variable that holds the API key (the key is never a command-line value)")

    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cache", type=Path, default=None, metavar="PATH", help=f"map reply cache file (default: {ENV_CACHE}, else {CACHE_FILE_NAME} next to the run store)")
    cache.add_argument("--no-cache", action="store_true", help="do not cache map replies")
    store = parser.add_mutually_exclusive_group()
    store.add_argument("--store", type=Path, default=None, metavar="PATH", help=f"run history file (default: {ENV_DB}, else the user data folder)")
    store.add_argument("--no-store", action="store_true", help="do not record the run")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


GRID_SETTINGS: tuple[str, ...] = ("community_level", "map_token_budget", "reduce_token_budget", "seed")
"""The settings a sweep takes from its grid (``--levels``, ``--map-budgets``, ...) instead of one option."""

SWEEP_SELECTION: dict[str, Any] = {
    "default": "level",
    "help": '"dynamic" adds dynamic selection to the --levels grid (as "dynamic" in --levels does)',
}
"""A sweep's ``--selection`` adds to its grid rather than choosing for one run."""


def setting_option(name: str) -> str:
    """The command-line option of search setting ``name``: ``--`` and its short name, dashed;
    ``--no-...`` for a switch that is on by default (``include_claims`` -> ``--no-claims``)."""
    flag = GlobalSearchRequest.short_name(name).replace("_", "-")
    return f"--no-{flag}" if GlobalSearchRequest.model_fields[name].default is True else f"--{flag}"


def setting_dest(name: str) -> str:
    """The ``args`` attribute that holds setting ``name``'s option."""
    return setting_option(name).removeprefix("--").replace("-", "_")


def _setting_help(name: str) -> str:
    """A setting's help line: its description, then its bounds and default when it has one."""
    field = GlobalSearchRequest.model_fields[name]
    if field.default is None:
        return field.description or ""
    if isinstance(field.default, bool):
        return f"do not {field.description}" if field.default else (field.description or "")
    low, high = GlobalSearchRequest.bounds(name)
    rule = f"{low}-{high}, " if high is not None else (f">= {low}, " if low is not None else "")
    return f"{field.description} ({rule}default {field.default})"


def add_setting_options(
    group: Any, names: Sequence[str], *, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> None:
    """Add one option per search setting in ``names``, all read from the settings model: the name
    (:func:`setting_option`), the choices, the help (description, bounds, default) and the value's
    parser. Every option defaults to None (unset: the configured default applies) and integers
    are parsed leniently, so a bad value gets the request's own message; ``overrides`` replaces
    ``add_argument`` keywords of some settings."""
    for name in names:
        field = GlobalSearchRequest.model_fields[name]
        choices = GlobalSearchRequest.choices(name)
        options: dict[str, Any] = {"default": None, "help": _setting_help(name)}
        if isinstance(field.default, bool):
            options.update(action="store_true", default=False if field.default else None)
        elif name == "community_level":
            options["type"] = _level
        elif choices is not None:
            options["choices"] = choices
        else:
            options["type"] = _int_or_text
        options.update((overrides or {}).get(name, {}))
        group.add_argument(setting_option(name), **options)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="GraphRAG global search (map-reduce over community summaries) from the command line.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    query = sub.add_parser("query", help="answer one global question", description="Answer one global question over an index.")
    _add_run_options(query, sweep=False)
    query.add_argument("--json", action="store_true", help="print the result as JSON instead of the answer")
    query.set_defaults(handler=cmd_query)

    sweep = sub.add_parser("sweep", help="run a question over a grid of levels, seeds and budgets")
    _add_run_options(sweep, sweep=True)
    grid = sweep.add_argument_group("grid")
    grid.add_argument("--levels", type=_list_of(_level), default=None, help='comma-separated levels, e.g. "leaf,0,1,dynamic" (default leaf)')
    grid.add_argument("--seeds", type=_list_of(_int_or_text), default=[0], help='comma-separated seeds, e.g. "1,2,3"')
    grid.add_argument("--map-budgets", type=_list_of(_int_or_text), default=[], help="comma-separated map token budgets")
    grid.add_argument("--reduce-budgets", type=_list_of(_int_or_text), default=[], help="comma-separated reduce token budgets")
    grid.add_argument("--point-concurrency", type=_int_or_text, default=1, help="grid points run at once (default 1)")
    sweep.add_argument("--out", type=Path, default=None, metavar="FILE", help="write FILE.csv or FILE.json (default: CSV on stdout)")
    sweep.set_defaults(handler=cmd_sweep)

    from .eval_cli import add_eval_parser  # its own module: ``eval`` (evaluation spec)

    add_eval_parser(sub)

    inspect = sub.add_parser("inspect", help="statistics of an index, level by level")
    inspect.add_argument("index", metavar="INDEX", help="an index folder or a bundled sample name")
    add_setting_options(inspect, ["tokenizer", "include_claims", "include_sources"])  # the map texts a search would read
    inspect.add_argument("--summary", choices=("full_content", "summary"), default="full_content", help="which GraphRAG report text is the summary")
    inspect.add_argument("--json", action="store_true", help="print the statistics as JSON")
    inspect.set_defaults(handler=cmd_inspect)

    imp = sub.add_parser("import", help="convert a Microsoft GraphRAG output folder to the native format")
    imp.add_argument("src", metavar="SRC", help="Microsoft GraphRAG output folder (or any index folder)")
    imp.add_argument("dest", metavar="DEST", type=Path, help="folder to write the native index to")
    imp.add_argument("--summary", choices=("full_content", "summary"), default="full_content", help="the report text used as the community summary")
    imp.set_defaults(handler=cmd_import)

    runs = sub.add_parser("runs", help="the stored run history")
    runs.add_argument("--store", type=Path, default=None, metavar="PATH", help=f"run history file (default: {ENV_DB}, else the user data folder)")
    runs_sub = runs.add_subparsers(dest="runs_command", metavar="ACTION", parser_class=_Parser)
    runs_sub.required = True
    runs_list = runs_sub.add_parser("list", help="the newest runs")
    runs_list.add_argument("--limit", type=int, default=20)
    runs_list.add_argument("--index-name", default=None)
    runs_list.set_defaults(handler=cmd_runs_list)
    runs_show = runs_sub.add_parser("show", help="one run as Markdown (or --json)")
    runs_show.add_argument("run_id", metavar="RUN_ID")
    runs_show.add_argument("--json", action="store_true")
    runs_show.set_defaults(handler=cmd_runs_show)
    runs_export = runs_sub.add_parser("export", help="write one run as a run bundle (one JSON file, replayable with no model) and/or a Markdown report")
    runs_export.add_argument("run_id", metavar="RUN_ID")
    runs_export.add_argument("--bundle", type=Path, default=None, metavar="FILE", help="the bundle file to write")
    runs_export.add_argument("--markdown", type=Path, default=None, metavar="FILE", help="the Markdown report to write (the three community sets, citations checked against the index)")
    runs_export.add_argument("--index", default=None, metavar="INDEX", help="fingerprint this index folder (default: the run's own)")
    runs_export.set_defaults(handler=cmd_runs_export)
    runs_delete = runs_sub.add_parser("delete", help="remove one run")
    runs_delete.add_argument("run_id", metavar="RUN_ID")
    runs_delete.set_defaults(handler=cmd_runs_delete)

    replay = sub.add_parser("replay", help="redraw a run bundle with no model: status, answer, community sets")
    replay.add_argument("bundle", type=Path, metavar="FILE", help="a run bundle (from runs export --bundle or the app)")
    replay.add_argument("--index", default=None, metavar="INDEX", help="check the bundle against this index (default: the run's own path)")
    replay.add_argument("--json", action="store_true", help="print the status, answer and community sets as JSON")
    replay.set_defaults(handler=cmd_replay)
    return parser


# -- shared steps -------------------------------------------------------------------------------


class _Io:
    """The streams, environment and (optionally) model of one invocation; tests pass their own."""

    def __init__(self, stdout: TextIO, stderr: TextIO, environ: Mapping[str, str], model: ChatModel | None = None) -> None:
        self.out, self.err, self.environ, self.model = stdout, stderr, environ, model

    def note(self, text: str) -> None:
        print(text, file=self.err, flush=True)


def resolve_index_path(text: str) -> Path:
    """INDEX as given: an existing path wins; else a bundled sample of that name; else the path
    (whose loading then reports that it does not exist)."""
    path = Path(text).expanduser()
    if path.exists():
        return path
    try:
        from .samples import sample_path
    except ImportError:
        return path
    try:
        return sample_path(text)
    except KeyError:
        return path


def load_index_at(text: str, *, summary: str = "full_content") -> tuple[Index, Path]:
    """The index INDEX names, or :class:`CliError` with exit code 3."""
    try:
        from .index import load_index
    except ImportError as exc:
        raise CliError(f"Index loading is not available in this installation: {exc}", EXIT_INDEX) from None
    path = resolve_index_path(text)
    try:
        return load_index(path, summary=summary), path  # type: ignore[arg-type]
    except IndexValidationError as exc:
        raise CliError(str(exc), EXIT_INDEX) from None
    except OSError as exc:
        raise CliError(f"{path}: cannot read the index: {exc.strerror or exc}", EXIT_INDEX) from None


def index_display_name(index: Index, path: Path) -> str:
    """See :func:`graphrag_core.index.index_display_name` (the one display name)."""
    from .index import index_display_name as display_name

    return display_name(path, index) or str(path)


def check_levels(index: Index, path: Path, levels: Sequence[int | str], *, option: str = "--level") -> None:
    """A level the index does not have is bad input (exit 2), naming the levels it has."""
    have = index.levels()
    missing = [level for level in levels if level not in (LEAF, DYNAMIC) and level not in have]
    if missing:
        shown = ", ".join([LEAF, *(str(level) for level in have)])
        raise CliError(
            f"{option} {missing[0]}: the index {index_display_name(index, path)} has no level {missing[0]}; its levels are {shown}.",
            EXIT_USAGE,
        )


def _tokenizer(name: str, model: ChatModel | None = None) -> Tokenizer:
    try:
        return tokenizer_for(name, model)
    except ImportError as exc:
        raise CliError(f"The {name} tokenizer needs the bpe-openai package: {exc}", EXIT_USAGE) from None
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


def model_settings_from(args: argparse.Namespace, environ: Mapping[str, str]) -> ModelSettings:
    """The model settings of a run: the app's (``GRAPHRAG_LLM_*`` in the environment), with
    ``--model``, ``--base-url``, ``--model-name`` and the key in ``--api-key-env`` over them.

    The configured key goes only to the configured (or an allow-listed) endpoint: another
    ``--base-url`` is called with the key of ``--api-key-env`` or with none."""
    try:
        configured = ModelSettings.from_mapping(environ)
    except SettingsError as exc:  # its message names the key, never the secret
        raise CliError(str(exc), EXIT_USAGE) from None
    provider = args.model or configured.provider
    if provider == "offline":
        if args.base_url or args.model_name or args.api_key_env:
            raise CliError("--base-url, --model-name and --api-key-env need --model openai.", EXIT_USAGE)
        return configured.model_copy(update={"provider": "offline"})
    typed_key = ""
    if args.api_key_env:
        typed_key = environ.get(args.api_key_env, "")
        if not typed_key.strip():
            raise CliError(f"--api-key-env: the environment variable {args.api_key_env} is not set or is empty.", EXIT_USAGE)
    try:
        return configured.for_endpoint(base_url=args.base_url or "", api_key=typed_key, model=args.model_name or "")
    except SettingsError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


def configured_price(environ: Mapping[str, str]) -> Price | None:
    """The price per million tokens in ``GRAPHRAG_LLM_PRICE_PROMPT`` / ``_COMPLETION``, if both are set."""
    keys = ("GRAPHRAG_LLM_PRICE_PROMPT", "GRAPHRAG_LLM_PRICE_COMPLETION")
    try:
        return ModelSettings.from_mapping({key: environ[key] for key in keys if key in environ}).price
    except SettingsError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


def build_model(args: argparse.Namespace, environ: Mapping[str, str], *, given: ChatModel | None = None) -> ChatModel:
    """The model the environment and options ask for (see :func:`model_settings_from`).
    A ``given`` model (the test seam of :func:`main`) is used as is."""
    if given is not None:
        return given
    settings = model_settings_from(args, environ)
    try:
        from .llm.settings import build_chat_model
    except ImportError as exc:
        raise CliError(f"The openai model is not available in this installation: {exc}", EXIT_USAGE) from None
    try:
        return build_chat_model(settings)
    except ImportError as exc:
        raise CliError(f"The {settings.provider} model is not available in this installation: {exc}", EXIT_USAGE) from None


def open_store(args: argparse.Namespace, environ: Mapping[str, str]) -> RunStore | None:
    if getattr(args, "no_store", False):
        return None
    path = args.store if args.store is not None else store_path_from(environ)
    try:
        return RunStore(path)
    except (StoreError, OSError) as exc:
        raise CliError(f"Cannot use the run store: {exc}", EXIT_USAGE) from None


def open_cache(args: argparse.Namespace, environ: Mapping[str, str]) -> Any:
    if args.no_cache:
        return None
    from .cache import SqliteMapCache

    path = args.cache if args.cache is not None else cache_path_from(environ, store_path_from(environ))
    if path is None:  # GRAPHRAG_EXPLORER_CACHE=off
        return None
    try:
        return SqliteMapCache(path)
    except (OSError, sqlite3.Error) as exc:
        raise CliError(f"Cannot use the map cache {path}: {exc}", EXIT_USAGE) from None


SHARED_SETTING_OPTIONS: dict[str, str] = {
    name: setting_dest(name)
    for name in SearchSettings.model_fields
    if name not in (*GRID_SETTINGS, "community_selection") and SearchSettings.model_fields[name].default is not True
}
"""Search setting -> option (``args`` attribute) for the settings shared by query and sweep;
``include_claims``/``include_sources`` are the ``--no-claims``/``--no-sources`` switches."""


def _defaults_from(args: argparse.Namespace) -> SearchDefaults:
    """The request options shared by every grid point, as validated defaults."""
    fields = {name: getattr(args, dest) for name, dest in SHARED_SETTING_OPTIONS.items()}
    fields = {k: v for k, v in fields.items() if v is not None}
    if args.no_claims:
        fields["include_claims"] = False
    if args.no_sources:
        fields["include_sources"] = False
    return SearchDefaults(**fields)  # a bad value fails here, with the spec's message


def build_request(args: argparse.Namespace) -> GlobalSearchRequest:
    """The request the query options describe; raises the request's own validation errors."""
    defaults = _defaults_from(args)
    level, selection = args.level, args.selection
    if level == DYNAMIC:  # "--level dynamic" reads as "--selection dynamic", as in a sweep's --levels
        level, selection = None, selection or DYNAMIC
    return GlobalSearchRequest.with_defaults(
        args.question,
        defaults,
        community_selection=selection,
        community_level=level,
        map_token_budget=args.map_budget,
        reduce_token_budget=args.reduce_budget,
        seed=args.seed,
    )


def _after(delay_s: float) -> str:
    return f" in {delay_s:.1f}s" if delay_s > 0 else ""


class ProgressPrinter:
    """Prints a run's progress on stderr as its events arrive: batches done/total, retries,
    failures, the reduce. On a terminal it rewrites one line; elsewhere one line per step."""

    def __init__(self, stream: TextIO, *, enabled: bool = True, answer_stream: TextIO | None = None) -> None:
        self.stream = stream
        self.enabled = enabled
        self.answer_stream = answer_stream if answer_stream is not None and answer_stream.isatty() else None
        """Where a streaming reduce's answer is printed as it is written (a terminal only: a
        pipe gets the final answer in one piece)."""
        self.streamed_answer = ""
        self.total = 0
        self.done = 0
        self.failed = 0
        self.live = enabled and stream.isatty()

    def _line(self, text: str, *, transient: bool = False) -> None:
        if not self.enabled:
            return
        if self.live and transient:
            self.stream.write("\r\033[K" + text)
        else:
            self.stream.write(("\r\033[K" if self.live else "") + text + "\n")
        self.stream.flush()

    def _map_progress(self) -> None:
        """On a terminal every batch rewrites the line; elsewhere about every tenth, and the last."""
        step = max(1, self.total // PROGRESS_STEPS)
        if self.live or self.done == self.total or self.done % step == 0:
            self._line(self._map_line(), transient=self.done < self.total)

    def _map_line(self) -> str:
        failed = f", {self.failed} failed" if self.failed else ""
        return f"map: {self.done}/{self.total} batches done{failed}"

    def __call__(self, event: Event) -> None:
        match event:
            case SelectionRound():
                fallback = f" (fallback: every level-{event.round} community)" if event.fallback else ""
                self._line(f"dynamic selection, round {event.round}: rating {len(event.community_ids)} communities{fallback}")
            case CommunityRated() if self.live:
                self._line(f"rated community {event.community_id}: {'failed' if event.failed else event.rating}", transient=True)
            case SelectionFinished():
                failed = f", {event.failed_count} failed" if event.failed_count else ""
                self._line(
                    f"dynamic selection: kept {len(event.kept_ids)} of {event.rated_count} rated communities in {event.rounds} rounds"
                    f" ({event.calls} rating calls, {event.usage.total_tokens} tokens{failed})"
                )
            case SummariesSelected():
                where = "by dynamic selection" if event.community_level == DYNAMIC else f"at level {event.community_level}"
                self._line(f"selected {event.count} community summaries {where}")
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
            case ReduceStarted():
                self._line(f"reduce: {event.answer_count:,} answers, {event.prompt_tokens:,} prompt tokens")
            case ModelNotice():
                self._line(f"note: {event.message}")
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
                d = event.result.diagnostics
                rating = f"{d.rating_calls} rating calls, " if event.result.community_level == DYNAMIC else ""
                self._line(f"{event.result.status} in {d.duration_s:.2f}s (seed {event.result.seed}, {rating}{d.map_calls} map calls)")
            case RunFailed():
                pass  # the error is reported by main, with its exit code
            case _:
                pass


def _close_recorder(recorder: RunRecorder, io: _Io, *, interrupted: bool = False) -> str | None:
    """The run's final write; a failed one is a warning (the answer still counts)."""
    run_id = recorder.close(interrupted=interrupted)
    if recorder.save_error:
        io.note(f"warning: the run was not recorded: {recorder.save_error}")
    return run_id


def _batch_error_lines(exc: AllMapBatchesFailed, events: Sequence[Event]) -> list[str]:
    failed = run_figures(events).failures
    if failed:
        return [f"batch {f.batch_index} (communities {', '.join(f.community_ids)}): {f.error}" for f in failed]
    return [f"batch {i}: {str(e) or type(e).__name__}" for i, e in enumerate(exc.exceptions)]


def failed_run_json(events: Sequence[Event], *, run_id: str | None = None) -> str:
    """A failed or stopped run as JSON: status, error, each failed batch's error, and the
    figures of what it did and spent before it ended (from its ``RunFailed`` event)."""
    state = RunState.replay(events)
    failed = next((e for e in reversed(events) if isinstance(e, RunFailed)), None)
    figures = {
        "summary_count": state.summary_count or 0,
        "batch_count": len(state.batches),
        "batches_done": failed.batches_done if failed else 0,
        "batches_failed": failed.batches_failed if failed else 0,
        "model_calls": failed.model_calls if failed else state.model_calls,
        "usage": (failed.usage if failed and failed.usage else state.usage).model_dump(),
        "duration_s": state.elapsed_s,
    }
    payload = {
        "status": state.status if state.status in ("failed", "cancelled") else "failed",
        "error": state.error,
        "error_type": state.error_type,
        "run_id": run_id or state.run_id,
        "query": state.request.query if state.request else None,
        "seed": state.seed,
        "failed_batches": [
            {"batch_index": b.index, "community_ids": list(b.community_ids), "attempts": b.attempts, "error": b.errors[-1] if b.errors else None}
            for b in state.batches
            if b.status == "failed"
        ],
        "figures": figures,
    }
    return json.dumps(payload, indent=2, ensure_ascii=False)


# -- commands -----------------------------------------------------------------------------------


def cmd_query(args: argparse.Namespace, io: _Io) -> int:
    request = build_request(args)
    model = build_model(args, io.environ, given=io.model)
    tokenizer = _tokenizer(request.tokenizer, model)
    index, path = load_index_at(args.index)
    if not request.dynamic:  # dynamic selection does not use the level
        check_levels(index, path, [request.community_level])
    try:
        preflight_sync(model)
    except PreflightError as exc:
        if args.json:
            io.out.write(json.dumps({"status": "failed", "error": str(exc), "error_type": "PreflightError", "endpoint": exc.endpoint}, indent=2) + "\n")
        raise CliError(str(exc), EXIT_RUN) from None
    store = open_store(args, io.environ)
    cache = open_cache(args, io.environ)
    recorder = RunRecorder(store, index_name=index_display_name(index, path), index_path=str(path))
    events = recorder.events
    progress = ProgressPrinter(io.err, enabled=not args.quiet, answer_stream=None if args.json else io.out)

    def on_event(event: Event) -> None:
        recorder(event)  # the run is stored from its start, its events as they stream
        progress(event)

    try:
        result: GlobalSearchResult = run_async(
            retrieve_global(index, request, model, on_event=on_event, cache=cache, tokenizer=tokenizer)
        )
    except (GraphRAGError, KeyboardInterrupt) as exc:
        interrupted = isinstance(exc, KeyboardInterrupt)
        failed_run_id = _close_recorder(recorder, io, interrupted=interrupted)
        if args.json:
            io.out.write(failed_run_json(events, run_id=failed_run_id) + "\n")
        if isinstance(exc, AllMapBatchesFailed):
            raise CliError(exc.message, EXIT_RUN, details=_batch_error_lines(exc, events)) from None
        if isinstance(exc, BudgetError):
            raise CliError(str(exc), EXIT_USAGE) from None
        if isinstance(exc, ModelError | ModelOutputError):
            raise CliError(f"The run failed: {describe_error(exc)}", EXIT_RUN) from None
        if interrupted and failed_run_id:
            io.note(f"run {recorder.saved_run_id} recorded with its finished batches in {store.path if store else ''}")
        raise  # main reports the others with their exit codes
    run_id = _close_recorder(recorder, io)

    answered_by = model_identity(model)
    if args.json:
        payload = {"model": answered_by, **result.model_dump(mode="json")}
        payload["community_sets"] = community_sets(result, index_ids={c.id for c in index.communities}).to_json_dict()
        io.out.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        streamed = progress.streamed_answer
        if streamed and streamed.strip() == result.answer.strip():
            io.out.write("\n")  # the answer is already on the terminal, as it was written
        else:
            if streamed:
                io.out.write("\n")
            io.out.write(result.answer.rstrip() + "\n")
        if not args.quiet:
            io.note(f"answered by {answered_by}")
            if result.community_ids:
                ids = result.community_ids
                more = f" ... ({len(ids) - SHOWN_COMMUNITY_IDS} more)" if len(ids) > SHOWN_COMMUNITY_IDS else ""
                io.note(f"communities behind the answer: {', '.join(ids[:SHOWN_COMMUNITY_IDS])}{more}")
            for failure in result.failed_batches:
                io.note(f"warning: batch {failure.batch_index} failed: {failure.error}")
            io.note(spend_line(run_figures(events).spend, configured_price(io.environ)))
            if run_id:
                io.note(f"run {run_id} recorded in {store.path if store else ''}")
    return EXIT_OK


def cmd_sweep(args: argparse.Namespace, io: _Io) -> int:
    fmt = "csv"
    if args.out is not None:
        fmt = SWEEP_FORMATS.get(args.out.suffix.lower(), "")
        if not fmt:
            raise CliError(f"--out must end in .csv or .json, not {args.out.name!r}.", EXIT_USAGE)
    levels = args.levels if args.levels is not None else ([] if args.selection == DYNAMIC else [LEAF])
    if args.selection == DYNAMIC and DYNAMIC not in levels:
        levels = [*levels, DYNAMIC]
    spec = SweepSpec(
        query=args.question,
        levels=levels,
        seeds=args.seeds,
        map_token_budgets=args.map_budgets,
        reduce_token_budgets=args.reduce_budgets,
        base=_defaults_from(args),
        point_concurrency=args.point_concurrency,
    )
    model = build_model(args, io.environ, given=io.model)
    _tokenizer(spec.base.tokenizer, model)
    index, path = load_index_at(args.index)
    check_levels(index, path, spec.levels, option="--levels")
    preflight_sync(model)  # PreflightError: main reports it with the run exit code
    store = open_store(args, io.environ)
    cache = open_cache(args, io.environ)

    finished: list[SweepPoint] = []
    started = time.monotonic()

    def on_progress(progress: SweepProgress) -> None:
        finished.append(progress.point)
        if args.quiet:
            return
        p = progress.point
        detail = f"{p.status}" + (f": {p.error}" if p.error else f", {p.batch_count} batches, {len(p.community_ids)} communities behind")
        io.note(
            f"point {progress.done}/{progress.total} level={p.level} seed={p.seed} "
            f"map={p.map_token_budget} reduce={p.reduce_token_budget}: {detail}"
        )

    try:
        result: SweepResult = run_async(
            run_sweep(index, spec, model, on_progress=on_progress, cache=cache, store=store, index_path=str(path))
        )
    except KeyboardInterrupt:
        # Ctrl-C: the points that finished are written as a normal (shorter) sweep, then exit 130.
        partial = SweepResult(
            sweep_id=uuid.uuid4().hex,
            spec=spec,
            index_name=index_display_name(index, path),
            model=model_identity(model),
            points=sorted(finished, key=lambda p: p.index),
            duration_s=time.monotonic() - started,
        )
        _write_sweep(partial, fmt, args, io)
        io.note(f"interrupted after {len(finished)} of {len(spec)} sweep points")
        raise
    _write_sweep(result, fmt, args, io)
    if not args.quiet:
        io.note(f"answered by {result.model}")
        for level, value in result.stability_by_level().items():
            shown = "n/a (fewer than two comparable points)" if value is None else f"{value:.3f}"
            io.note(f"stability at level {level}: {shown}")
        io.note(spend_line(result.spend(), configured_price(io.environ)))
    failed = sum(1 for p in result.points if p.failed)
    if failed == len(result.points):
        raise CliError(f"Every one of the {failed} sweep points failed.", EXIT_RUN)
    return EXIT_OK


def _write_sweep(result: SweepResult, fmt: str, args: argparse.Namespace, io: _Io) -> None:
    """The sweep's points as CSV or JSON, to ``--out`` or stdout."""
    text = result.to_json() + "\n" if fmt == "json" else result.to_csv()
    if args.out is None:
        io.out.write(text)
        io.out.flush()
        return
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"Cannot write {args.out}: {exc.strerror or exc}", EXIT_USAGE) from None
    io.note(f"wrote {len(result.points)} points to {args.out}")


def cmd_inspect(args: argparse.Namespace, io: _Io) -> int:
    tokenizer = _tokenizer(args.tokenizer or SearchSettings().tokenizer)
    index, path = load_index_at(args.index, summary=args.summary)
    stats = index_statistics(index, tokenizer=tokenizer, include_claims=not args.no_claims, include_sources=not args.no_sources)
    stats["path"] = str(path)
    if args.json:
        io.out.write(json.dumps(stats, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    out = io.out
    out.write(f"Index {index_display_name(index, path)} ({path})\n")
    out.write(f"tokens counted with {tokenizer.name}\n\n")
    header = ("level", "communities", "summaries", "summary_tokens", "map_text_tokens", "claims")
    widths = [max(len(h), *(len(str(r[h])) for r in stats["levels"])) for h in header]
    out.write("  ".join(h.rjust(w) for h, w in zip(header, widths)) + "\n")
    for r in stats["levels"]:
        out.write("  ".join(str(r[h]).rjust(w) for h, w in zip(header, widths)) + "\n")
    out.write("\ntotals: " + ", ".join(f"{k} {v}" for k, v in stats["totals"].items()) + "\n")
    if stats["warnings"]:
        out.write("\nwarnings:\n" + "".join(f"- {w}\n" for w in stats["warnings"]))
    return EXIT_OK


def cmd_import(args: argparse.Namespace, io: _Io) -> int:
    index, src = load_index_at(args.src, summary=args.summary)
    try:
        from .index import save_index

        save_index(index, args.dest)
    except IndexValidationError as exc:
        raise CliError(str(exc), EXIT_INDEX) from None
    except OSError as exc:
        raise CliError(f"Cannot write {args.dest}: {exc.strerror or exc}", EXIT_INDEX) from None
    counts = ", ".join(f"{v} {k}" for k, v in index.stats().items())
    io.out.write(f"Imported {src} -> {args.dest}: {counts}\n")
    for warning in index.warnings:
        io.note(f"warning: {warning}")
    return EXIT_OK


def cmd_runs_list(args: argparse.Namespace, io: _Io) -> int:
    store = open_store(args, io.environ)
    assert store is not None
    for s in store.list_runs(args.limit, index_name=args.index_name):
        io.out.write(_run_line(s) + "\n")
    return EXIT_OK


def _run_line(s: RunSummary) -> str:
    """A run in ``runs list``: id, when, index, question, settings, status [label]."""
    tag = f" [{s.label}]" if s.label else ""
    settings = settings_text(s.request, seed=s.seed, level=s.community_level)
    return f"{s.run_id}  {s.created_at.replace('T', ' ')[:16]} · {s.index_name} · {s.query} · {settings} · {RunStatus(s.status).word}{tag}"


def cmd_runs_show(args: argparse.Namespace, io: _Io) -> int:
    store = open_store(args, io.environ)
    assert store is not None
    try:
        text = store.export_json(args.run_id) if args.json else None
    except KeyError:
        raise CliError(f"No run {args.run_id!r} in {store.path}.", EXIT_USAGE) from None
    if text is None:  # the report, its citations checked against the run's index when it is here
        record = store.get(args.run_id)
        if record is None:
            raise CliError(f"No run {args.run_id!r} in {store.path}.", EXIT_USAGE)
        text = record_to_markdown(record, index_ids=_run_index_ids(record, None))
    io.out.write(text.rstrip() + "\n")
    return EXIT_OK


def _run_index_ids(record: RunRecord, index: str | None) -> set[str] | None:
    """The community ids of INDEX (else the run's own index), to check the run's citations;
    None when that index cannot be read here."""
    text = index or record.index_path or record.index_name
    if not text:
        return None
    try:
        return {c.id for c in load_index_at(text)[0].communities}
    except CliError:
        return None


def cmd_runs_export(args: argparse.Namespace, io: _Io) -> int:
    if args.bundle is None and args.markdown is None:
        raise CliError("runs export: say what to write: --bundle FILE, --markdown FILE, or both.", EXIT_USAGE)
    store = open_store(args, io.environ)
    assert store is not None
    record = store.get(args.run_id)
    if record is None:
        raise CliError(f"No run {args.run_id!r} in {store.path}.", EXIT_USAGE)
    if args.markdown is not None:
        index_ids = _run_index_ids(record, args.index)
        if index_ids is None:
            io.note(f"warning: the run's index ({record.index_path or record.index_name}) was not found; citations are checked against the map answers only")
        try:
            args.markdown.write_text(record_to_markdown(record, index_ids=index_ids).rstrip() + "\n", encoding="utf-8")
        except OSError as exc:
            raise CliError(f"Could not write the report to {args.markdown}: {exc.strerror or exc}", EXIT_USAGE) from None
        io.out.write(f"Wrote the report of run {record.run_id} ({record.status}) to {args.markdown}\n")
    if args.bundle is None:
        return EXIT_OK
    index_path = resolve_index_path(args.index) if args.index else None
    bundle = make_bundle(record, index_path=index_path)
    try:
        args.bundle.write_text(bundle_to_json(bundle), encoding="utf-8")
    except OSError as exc:
        raise CliError(f"Could not write the bundle to {args.bundle}: {exc.strerror or exc}", EXIT_USAGE) from None
    if bundle.index.fingerprint is None:
        io.note(f"warning: the run's index ({record.index_path or record.index_name}) was not found; the bundle has no index fingerprint")
    io.out.write(f"Wrote run {record.run_id} ({record.status}, {len(record.events)} events) to {args.bundle}\n")
    return EXIT_OK


def cmd_replay(args: argparse.Namespace, io: _Io) -> int:
    try:
        data = args.bundle.read_bytes()
    except OSError as exc:
        raise CliError(f"Could not read {args.bundle}: {exc.strerror or exc}", EXIT_USAGE) from None
    try:
        bundle = read_bundle(data, source=str(args.bundle))
    except BundleError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    index_path: Path | None = resolve_index_path(args.index) if args.index else (Path(bundle.index.path) if bundle.index.path else None)
    mismatch = index_mismatch(bundle, index_path)
    index_ids = None
    if mismatch is None and index_path is not None:
        index_ids = {c.id for c in load_index_at(str(index_path))[0].communities}
    state = RunState.replay(bundle.events)
    sets = community_sets(state.result, index_ids=index_ids) if state.result is not None else None
    status = state.result.status if state.result is not None else bundle.status
    if args.json:
        payload: dict[str, Any] = {
            "run_id": bundle.run_id,
            "status": status,
            "answer": state.result.answer if state.result is not None else None,
            "error": state.error,
            "community_sets": sets.to_json_dict() if sets is not None else None,
            "index_mismatch": mismatch,
        }
        io.out.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        io.out.write(f"Run {bundle.run_id} · {bundle.model} · index {bundle.index.name}\n")
        io.out.write(f"Question: {bundle.request.query}\n")
        io.out.write(f"Status: {status}\n")
        if state.result is not None:
            io.out.write("\n" + state.result.answer.rstrip() + "\n\n")
        elif state.error:
            io.out.write(f"Error: {state.error}\n")
        if sets is not None:
            unused = ", ".join(f"{u.community_id} ({u.best_score:g})" for u in sets.read_but_unused)
            io.out.write(f"Cited ({len(sets.cited)}): {', '.join(sets.cited) or '-'}\n")
            io.out.write(f"Behind ({len(sets.behind)}): {', '.join(sets.behind) or '-'}\n")
            io.out.write(f"Read but unused ({len(sets.read_but_unused)}, best score): {unused or '-'}\n")
            if sets.unsupported:
                flagged = ", ".join(f"{u.community_id} ({u.reason.replace('_', ' ')})" for u in sets.unsupported)
                io.out.write(f"Unsupported citations ({sets.unsupported_count}): {flagged}\n")
    if mismatch:
        io.note(f"warning: {mismatch}")
    return EXIT_OK


def cmd_runs_delete(args: argparse.Namespace, io: _Io) -> int:
    store = open_store(args, io.environ)
    assert store is not None
    if not store.delete(args.run_id):
        raise CliError(f"No run {args.run_id!r} in {store.path}.", EXIT_USAGE)
    io.out.write(f"Deleted run {args.run_id}.\n")
    return EXIT_OK


# -- entry point --------------------------------------------------------------------------------


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
    model: ChatModel | None = None,
) -> int:
    """Run the command line; returns the exit code (see the module docstring).

    ``model``, when given, replaces the one ``--model`` would build (the seam tests use to
    script replies); ``environ`` replaces ``os.environ``."""
    io = _Io(stdout or sys.stdout, stderr or sys.stderr, os.environ if environ is None else environ, model)
    parser = build_parser()
    try:
        try:
            args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
        except SystemExit as exc:  # --help and --version exit through argparse
            return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_USAGE
        with _ctrl_c_interrupts():
            return int(args.handler(args, io))
    except CliError as exc:
        if exc.usage:
            io.note(exc.usage)
        io.note(f"error: {exc}")
        for detail in exc.details:
            io.note(f"  {detail}")
        return exc.code
    except (RequestValidationError, BudgetError) as exc:
        io.note(f"error: {exc}")
        return EXIT_USAGE
    except IndexValidationError as exc:
        io.note(f"error: {exc}")
        return EXIT_INDEX
    except GraphRAGError as exc:
        io.note(f"error: {exc}")
        return EXIT_RUN
    except KeyboardInterrupt:
        io.note("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``graphrag-explorer runs list | head -1``): not an error. Point
        # stdout at /dev/null so the interpreter's final flush does not fail again.
        _silence_stdout(io.out)
        return EXIT_OK


T = TypeVar("T")


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` for a command: on Ctrl-C (``KeyboardInterrupt``, see
    :func:`_ctrl_c_interrupts`) a task still running is cancelled and given the chance to
    report it, a task that the interrupt ended has its exception retrieved (no "never
    retrieved" noise), and the interrupt goes on to :func:`main` (exit 130)."""
    loop = asyncio.new_event_loop()

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if not isinstance(context.get("exception"), KeyboardInterrupt):
            loop.default_exception_handler(context)

    loop.set_exception_handler(handle)
    task = loop.create_task(coroutine)
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                loop.run_until_complete(task)
        elif not task.cancelled():
            task.exception()
        raise
    finally:
        try:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


@contextlib.contextmanager
def _ctrl_c_interrupts() -> Iterator[None]:
    """Ctrl-C raises ``KeyboardInterrupt`` at once, wherever the command is.

    ``asyncio.run`` would otherwise answer the first Ctrl-C by cancelling its task, which only
    happens at the task's next ``await``: CPU-bound work (planning the batches of a huge index)
    would ignore it. A handler other than Python's default keeps ``asyncio.run`` from
    installing its own. The previous handler is restored afterwards."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _silence_stdout(stream: TextIO) -> None:
    try:
        fileno = stream.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (tests pass StringIO)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fileno)
    finally:
        os.close(devnull)


__all__ = [
    "EXIT_INDEX",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_RUN",
    "EXIT_USAGE",
    "CliError",
    "ProgressPrinter",
    "build_model",
    "build_parser",
    "build_request",
    "index_statistics",
    "main",
    "resolve_index_path",
]
