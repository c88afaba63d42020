"""The options commands share, and how their values are read.

Search settings become options through their field metadata in
:class:`~graphrag_core.request.SearchSettings` (:func:`add_setting_options`): the option's name
is ``--`` and the setting's short name, dashed (``--no-...`` for a switch that is on by
default), its help is the field's description with its bounds and default, its choices and
parser follow the field's type. A new setting therefore gets its option with no change here.

Values are parsed leniently at the border (:func:`int_or_text`, :func:`level_or_text`,
:func:`list_of`): what is not a number or a level stays text, so the request's own validation
rejects it with the spec's message rather than argparse's generic one. Typed lists are split
as everywhere else (:func:`graphrag_core.inputs.split_entries`), levels read by
:func:`graphrag_core.levels.parse_level`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from graphrag_core.evaluation.store import EVAL_DB_FILE_NAME
from graphrag_core.inputs import split_entries
from graphrag_core.levels import Level, LevelError, parse_level
from graphrag_core.llm.settings import PROVIDERS, Provider
from graphrag_core.locations import DEFAULT_CACHE_NAME, ENV_CACHE, ENV_DB
from graphrag_core.request import (
    DYNAMIC_SETTING_NAMES,
    GlobalSearchRequest,
    SearchDefaults,
    SearchSettings,
)

from .context import EXIT_USAGE, CliError

T = TypeVar("T")


class CliParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that raises :class:`CliError` (exit code 2, with the usage line)
    instead of exiting, so :func:`graphrag_cli.main.main` returns the code."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{self.prog}: {message}", EXIT_USAGE, usage=self.format_usage().rstrip())


# -- values ---------------------------------------------------------------------------------------


def int_or_text(text: str) -> int | str:
    """An integer when the text is one, else the text itself (for the validation's own message)."""
    try:
        return int(text.strip())
    except ValueError:
        return text


def level_or_text(text: str) -> Level | int | str:
    """The level the text names (:func:`~graphrag_core.levels.parse_level`), else
    :func:`int_or_text` of it (a negative number stays a number, for the spec's message)."""
    try:
        return parse_level(text)
    except LevelError:
        return int_or_text(text)


def list_of(item: Callable[[str], T]) -> Callable[[str], list[T]]:
    """A parser of a typed list (``"1,2,3"``, ``"leaf, 0"``, ``"1 2"``): each entry read by ``item``."""

    def parse(text: str) -> list[T]:
        return [item(entry) for entry in split_entries(text)]

    return parse


# -- search settings ------------------------------------------------------------------------------


def setting_option(name: str) -> str:
    """The option of search setting ``name``: ``--`` and its short name, dashed; ``--no-...`` for
    a switch that is on by default (``include_claims`` -> ``--no-claims``)."""
    flag = GlobalSearchRequest.short_name(name).replace("_", "-")
    return f"--no-{flag}" if GlobalSearchRequest.model_fields[name].default is True else f"--{flag}"


def setting_dest(name: str) -> str:
    """The parsed arguments' attribute that holds setting ``name``'s option."""
    return setting_option(name).removeprefix("--").replace("-", "_")


def setting_help(name: str) -> str:
    """A setting's help line: its description, then its bounds and default when it has one (the
    front ends' default, :meth:`~graphrag_core.request.SearchSettings.front_end_default`)."""
    field = GlobalSearchRequest.model_fields[name]
    if field.default is None:
        return field.description or ""
    if isinstance(field.default, bool):
        return f"do not {field.description}" if field.default else (field.description or "")
    low, high = GlobalSearchRequest.bounds(name)
    rule = f"{low}-{high}, " if high is not None else (f">= {low}, " if low is not None else "")
    return f"{field.description} ({rule}default {GlobalSearchRequest.front_end_default(name)})"


def add_setting_options(
    group: Any, names: Sequence[str], *, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> None:
    """Add one option per search setting in ``names``, all read from the settings model: the
    name (:func:`setting_option`), the choices, the help (:func:`setting_help`) and the value's
    parser. Every option defaults to None (unset: the configured default applies); ``overrides``
    replaces ``add_argument`` keywords of some settings."""
    for name in names:
        field = GlobalSearchRequest.model_fields[name]
        choices = GlobalSearchRequest.choices(name)
        options: dict[str, Any] = {"default": None, "help": setting_help(name)}
        if isinstance(field.default, bool):
            options.update(action="store_true", default=False if field.default else None)
        elif name == "community_level":
            options["type"] = level_or_text
        elif choices is not None:
            options["choices"] = choices
        else:
            options["type"] = int_or_text
        options.update((overrides or {}).get(name, {}))
        group.add_argument(setting_option(name), **options)


GRID_SETTINGS: tuple[str, ...] = ("community_level", "map_token_budget", "reduce_token_budget", "seed")
"""The settings a sweep takes from its grid (``--levels``, ``--map-budgets``, ...) instead of one option."""

SWEEP_SELECTION: dict[str, Any] = {
    "default": "level",
    "help": '"dynamic" adds dynamic selection to the --levels grid (as "dynamic" in --levels does)',
}
"""A sweep's ``--selection`` adds to its grid rather than choosing for one run."""

SHARED_SETTING_OPTIONS: dict[str, str] = {
    name: setting_dest(name)
    for name in SearchSettings.model_fields
    if name not in (*GRID_SETTINGS, "community_selection") and SearchSettings.model_fields[name].default is not True
}
"""Search setting -> option (``args`` attribute) for the settings query and sweep share;
``include_claims``/``include_sources`` are the ``--no-claims``/``--no-sources`` switches."""


def search_defaults(args: argparse.Namespace) -> SearchDefaults:
    """The shared search options (:data:`SHARED_SETTING_OPTIONS` and the two switches) as
    validated defaults over the front ends' own (``--question-reserve`` 256 unless given); a bad
    value raises here, with the spec's message."""
    fields = {name: getattr(args, dest) for name, dest in SHARED_SETTING_OPTIONS.items()}
    fields = {k: v for k, v in fields.items() if v is not None}
    for name, field in SearchSettings.model_fields.items():
        if field.default is True and getattr(args, setting_dest(name), False):  # a --no-... switch
            fields[name] = False
    return SearchDefaults.for_front_ends(**fields)


# -- the model ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelOptions:
    """The model options as typed: ``--model`` (None: the configured provider), ``--base-url``,
    ``--model-name`` and ``--api-key-env`` (the name of the variable holding the key)."""

    provider: Provider | None = None
    base_url: str | None = None
    model_name: str | None = None
    api_key_env: str | None = None
    remember_endpoints: bool = True
    """Whether what the endpoint accepts is kept in the endpoint memory (not with ``--no-cache``)."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ModelOptions:
        """The options :func:`add_model_options` added, as parsed (and ``--no-cache``, where the
        command has it: a run that remembers no model results remembers no endpoint either)."""
        return cls(
            provider=args.model, base_url=args.base_url, model_name=args.model_name, api_key_env=args.api_key_env,
            remember_endpoints=not getattr(args, "no_cache", False),
        )

    @property
    def names_endpoint(self) -> bool:
        """Whether an endpoint option (``--base-url``, ``--model-name``, ``--api-key-env``) is set."""
        return bool(self.base_url or self.model_name or self.api_key_env)

    def for_provider(self, provider: Provider | None) -> ModelOptions:
        """These options for another model of the same command (``eval``'s answering model and
        its judge share the endpoint options): with ``provider``, and without the endpoint
        options when ``provider`` is ``offline`` (they are then the other model's)."""
        if provider == "offline":
            return ModelOptions(provider=provider, remember_endpoints=self.remember_endpoints)
        return replace(self, provider=provider)


RUN_MODEL_HELP = "offline (no network) or an OpenAI-compatible endpoint; default: GRAPHRAG_LLM_PROVIDER, as in the app (offline when nothing is configured)"


def add_model_options(
    group: Any,
    *,
    model_help: str = RUN_MODEL_HELP,
    base_url_help: str | None = "OpenAI-compatible endpoint (with --model openai)",
    model_name_help: str | None = "model name at the endpoint (with --model openai)",
    api_key_env_help: str | None = "environment variable that holds the API key (the key is never a command-line value)",
) -> None:
    """``--model``, ``--base-url``, ``--model-name`` and ``--api-key-env`` (read back with
    :meth:`ModelOptions.from_args`)."""
    group.add_argument("--model", choices=PROVIDERS, default=None, help=model_help)
    group.add_argument("--base-url", default=None, help=base_url_help)
    group.add_argument("--model-name", default=None, help=model_name_help)
    group.add_argument("--api-key-env", default=None, metavar="VAR", help=api_key_env_help)


def add_embedding_options(parser: argparse.ArgumentParser) -> None:
    """``--embedding-model NAME`` or ``--no-embeddings``: what ranks the chunks of ``vector`` runs."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--embedding-model",
        default=None,
        metavar="NAME",
        help="embedding model that ranks the source chunks of method vector (default: GRAPHRAG_EMBEDDING_MODEL; "
        "without one, or with the offline model, BM25 ranks them)",
    )
    group.add_argument("--no-embeddings", action="store_true", help="rank the chunks of method vector by BM25 even when an embedding model is configured")


# -- the cache, the store, progress ---------------------------------------------------------------

STORE_HELP = f"run history file (default: {ENV_DB}, else the user data folder)"


def add_cache_options(
    parser: argparse.ArgumentParser,
    *,
    cache_help: str = f"map reply cache file (default: {ENV_CACHE}, else {DEFAULT_CACHE_NAME} next to the run store)",
) -> None:
    """``--cache PATH`` or ``--no-cache``."""
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cache", type=Path, default=None, metavar="PATH", help=cache_help)
    cache.add_argument("--no-cache", action="store_true", help="do not cache map replies")


def add_store_options(
    parser: argparse.ArgumentParser, *, store_help: str = STORE_HELP, no_store_help: str | None = "do not record the run"
) -> None:
    """``--store PATH``, or ``--no-store`` unless ``no_store_help`` is None (the run history
    commands, which need a store)."""
    if no_store_help is None:
        parser.add_argument("--store", type=Path, default=None, metavar="PATH", help=store_help)
        return
    store = parser.add_mutually_exclusive_group()
    store.add_argument("--store", type=Path, default=None, metavar="PATH", help=store_help)
    store.add_argument("--no-store", action="store_true", help=no_store_help)


def add_eval_db_option(parser: argparse.ArgumentParser) -> None:
    """``--eval-db PATH``: the evaluation store (``args.eval_db``; None: beside the run store)."""
    parser.add_argument("--eval-db", type=Path, default=None, metavar="PATH", help=f"evaluation store (default: next to the run store, {EVAL_DB_FILE_NAME})")


SUMMARY_CHOICES = ("full_content", "summary")
"""Which Microsoft GraphRAG report text is a community's summary (``--summary``)."""


def add_summary_option(parser: argparse.ArgumentParser, *, help: str) -> None:
    parser.add_argument("--summary", choices=SUMMARY_CHOICES, default=SUMMARY_CHOICES[0], help=help)


def add_spend_limit_option(parser: argparse.ArgumentParser, *, help: str) -> None:
    """``--spend-limit-tokens N`` (``args.spend_limit_tokens``; None: no limit)."""
    parser.add_argument("--spend-limit-tokens", type=int_or_text, default=None, metavar="N", help=help)


def add_quiet_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def add_run_options(parser: argparse.ArgumentParser, *, sweep: bool) -> None:
    """INDEX, QUESTION and the options of a request, the model, the cache and the store (query
    and sweep; a sweep leaves out :data:`GRID_SETTINGS`, which come from its grid)."""
    parser.add_argument("index", metavar="INDEX", help="an index folder (native or Microsoft GraphRAG output) or a bundled sample name")
    parser.add_argument("question", metavar="QUESTION", help="the global question")
    grid_settings = (*GRID_SETTINGS, "spend_limit_tokens") if sweep else ()
    names = [n for n in GlobalSearchRequest.model_fields if n != "query" and n not in grid_settings]
    add_setting_options(parser.add_argument_group("request"), [n for n in names if n not in DYNAMIC_SETTING_NAMES])
    add_setting_options(
        parser.add_argument_group("dynamic selection"),
        DYNAMIC_SETTING_NAMES,
        overrides={"community_selection": SWEEP_SELECTION} if sweep else None,
    )
    if sweep:  # one limit for the whole sweep, not one per point (a query's is its request's field)
        add_spend_limit_option(
            parser,
            help="the most tokens the whole sweep may spend: no call that could pass it is sent; the point that reaches it "
            "stops as Stop stops a run, and the points after it are not run (default: no limit)",
        )
    add_model_options(parser.add_argument_group("model"))
    add_cache_options(parser)
    add_store_options(parser)
    add_quiet_option(parser)


__all__ = [
    "add_embedding_options",
    "GRID_SETTINGS",
    "RUN_MODEL_HELP",
    "SHARED_SETTING_OPTIONS",
    "STORE_HELP",
    "SUMMARY_CHOICES",
    "SWEEP_SELECTION",
    "CliParser",
    "ModelOptions",
    "add_cache_options",
    "add_model_options",
    "add_quiet_option",
    "add_run_options",
    "add_setting_options",
    "add_spend_limit_option",
    "add_store_options",
    "add_summary_option",
    "int_or_text",
    "level_or_text",
    "list_of",
    "search_defaults",
    "setting_dest",
    "setting_help",
    "setting_option",
]
