"""A global search request and its validation (spec section 1).

Each value comes from the request, else from the configured defaults (:class:`SearchDefaults`),
else from the spec's table. Validation runs before pydantic sees the data, so the errors are
this package's ``ValueError`` subclasses with the spec's exact messages.
"""

from __future__ import annotations

from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field

from .errors import BudgetError, RequestValidationError
from .inputs import unicode_problem
from .levels import DYNAMIC, LEAF, FixedLevel, Level, level_label
from .methods import DEFAULT_METHOD, GLOBAL, LAZY, METHODS, VECTOR, Method
from .tokens import AUTO, TOKENIZER_NAMES

DEFAULT_COMMUNITY_LEVEL: Literal["leaf"] = LEAF
DEFAULT_MAP_TOKEN_BUDGET = 8000
DEFAULT_REDUCE_TOKEN_BUDGET = 8000
DEFAULT_MAP_OUTPUT_RESERVE = 512
DEFAULT_REDUCE_OUTPUT_RESERVE = 1024
DEFAULT_MAP_CONCURRENCY = 4
DEFAULT_REDUCE_STRATEGY: Literal["skip"] = "skip"
DEFAULT_QUESTION_RESERVE = 0
"""The spec's default: batches are packed around the question as it is."""
FRONT_END_QUESTION_RESERVE = 256
"""The question reserve the app, the command line and experiments use unless told otherwise:
every question up to this many tokens gets the same batches, so prompt prefixes are shared."""

SEED_MIN = 0
SEED_MAX = 2**31 - 1
"""The seeds people give and the engine draws (:func:`check_seed`): the app's Seed box and its
links, the command line's ``--seed`` and ``--seeds``, and ``search.draw_seed``. Every seed drawn
so far lies in it, a browser's number box holds it exactly, and a negative seed is more often a
typo than a choice."""
STORED_SEED_MIN = -(2**63)
STORED_SEED_MAX = 2**63 - 1
"""What a request may hold: a seed is stored as a 64-bit integer (the run history's SQLite
column), so it must fit one. Runs and bundles made with a seed outside ``SEED_MIN..SEED_MAX``
(before the range was one) read back as they were."""

# Dynamic community selection (spec dynamic-selection.md section 1)
DEFAULT_COMMUNITY_SELECTION: Literal["level"] = "level"
DEFAULT_RATING_THRESHOLD = 1
DEFAULT_KEEP_PARENT = False
DEFAULT_RATING_REPEATS = 1
DEFAULT_FALLBACK_MAX_LEVEL = 2
DEFAULT_RATING_OUTPUT_RESERVE = 256
MAX_RATING = 5
MAX_RATING_REPEATS = 15
"""The most rating repeats the app's inputs and links offer (the engine has no maximum)."""

CommunitySelection = Literal["level", "dynamic"]
COMMUNITY_SELECTIONS: tuple[str, ...] = ("level", "dynamic")

# The lazy method (docs/lazy-search.md)
DEFAULT_RELEVANCE_BUDGET = 100
"""Relevance-test calls a lazy run may make at most (Microsoft's smallest published budget, Z100)."""
MAX_RELEVANCE_BUDGET = 100_000
"""The largest relevance budget the app's inputs and links offer (the engine has no maximum)."""

ReduceStrategy = Literal["skip", "stop"]
REDUCE_STRATEGIES: tuple[str, ...] = ("skip", "stop")


MAX_TOKEN_BUDGET = 2_000_000
"""The largest budget or reserve the app's inputs and links offer (the engine has no maximum)."""
MAX_MAP_CONCURRENCY = 64
"""The largest map concurrency the app's inputs and links offer (the engine has no maximum)."""
UI_MAX = "ui_max"
"""Field metadata key: the largest value the app's inputs and links accept for a setting."""
UI_MIN = "ui_min"
"""Field metadata key: the least value the app's inputs and links accept, where the rule's is lower."""

POSITIVE_FIELDS: tuple[str, ...] = ("map_token_budget", "reduce_token_budget", "map_concurrency")
NON_NEGATIVE_FIELDS: tuple[str, ...] = ("map_output_reserve", "reduce_output_reserve", "question_reserve")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_BOUNDED_INT_SETTINGS: tuple[str, ...] = (
    *POSITIVE_FIELDS, *NON_NEGATIVE_FIELDS, "rating_threshold", "rating_repeats", "fallback_max_level", "rating_output_reserve",
    "relevance_budget",
)
"""The integer settings whose rule is their declared bounds (``ge``/``le`` on the field)."""


def _int_rule(name: str, low: int | None, high: int | None) -> str:
    """The spec's message for an integer setting with these bounds."""
    if high is not None:
        return f"{name} must be an integer from {low} to {high}."
    return f"{name} must be a {'positive' if low == 1 else 'non-negative'} integer."


def check_setting(name: str, value: Any) -> Any:
    """``value`` when it follows the rule of the search setting ``name`` (spec section 1);
    else :class:`RequestValidationError` with the spec's exact message."""
    if name == "community_level":
        if not (value == LEAF or (_is_int(value) and value >= 0)):
            raise RequestValidationError('community_level must be "leaf" or a non-negative integer.')
    elif name in _BOUNDED_INT_SETTINGS:
        low, high = SearchSettings.bounds(name)
        if not (_is_int(value) and (low is None or value >= low) and (high is None or value <= high)):
            raise RequestValidationError(_int_rule(name, low, high))
    elif name == "seed":
        if value is not None and not _is_int(value):
            raise RequestValidationError("seed must be an integer or None.")
        if value is not None and not STORED_SEED_MIN <= value <= STORED_SEED_MAX:
            raise RequestValidationError(f"seed must be between {STORED_SEED_MIN} and {STORED_SEED_MAX} (a 64-bit integer), not {value}.")
    elif name == "reduce_strategy":
        if value not in REDUCE_STRATEGIES:
            raise RequestValidationError('reduce_strategy must be "skip" or "stop".')
    elif name == "tokenizer":
        if value not in TOKENIZER_NAMES:
            raise RequestValidationError(f"tokenizer must be one of {', '.join(TOKENIZER_NAMES)}.")
    elif name == "community_selection":
        if value not in COMMUNITY_SELECTIONS:
            raise RequestValidationError('community_selection must be "level" or "dynamic".')
    elif name == "keep_parent":
        if not isinstance(value, bool):
            raise RequestValidationError("keep_parent must be true or false.")
    elif name == "method":
        if value not in METHODS:
            raise RequestValidationError('method must be "global", "text", "vector" or "lazy".')
    return value


_CHECK_ORDER: tuple[str, ...] = (
    "method", "community_level", *POSITIVE_FIELDS, *NON_NEGATIVE_FIELDS, "seed", "reduce_strategy", "tokenizer",
    "community_selection", "rating_threshold", "keep_parent", "rating_repeats", "fallback_max_level", "rating_output_reserve",
    "relevance_budget",
)
"""The order the rules are checked in, so that of several bad values the same one is reported."""


def check_seed(value: Any) -> Any:
    """``value``, unless it is an integer outside ``SEED_MIN..SEED_MAX`` (the seeds people give):
    then :class:`RequestValidationError`. Checked where a seed is typed (the app's box and links,
    the command line), not where a stored request is read back; what is not an integer is left to
    the request's own rule (:func:`check_setting`)."""
    if _is_int(value) and not SEED_MIN <= value <= SEED_MAX:
        raise RequestValidationError(f"seed must be between {SEED_MIN} and {SEED_MAX}, not {value}.")
    return value


def check_typed_setting(name: str, value: Any) -> Any:
    """``value`` when it follows the rule of the search setting ``name`` as people type it: the
    setting's rule (:func:`check_setting`), and for the seed the range people give seeds in
    (:func:`check_seed`); else :class:`RequestValidationError`."""
    check_setting(name, value)
    return check_seed(value) if name == "seed" else value


def check_spend_limit(value: Any) -> int | None:
    """``value`` when it is None (no limit) or a positive integer; else
    :class:`RequestValidationError`."""
    if value is not None and not (_is_int(value) and value > 0):
        raise RequestValidationError("spend_limit_tokens must be a positive integer (or none for no limit).")
    return value


def check_question_reserve(query: str, reserve: int, tokenizer: Any) -> int:
    """The question's tokens as ``tokenizer`` counts them; :class:`RequestValidationError` (the
    spec's message) when ``reserve`` is set (> 0) and the question takes more."""
    tokens = int(tokenizer.count(query))
    if reserve > 0 and tokens > reserve:
        raise RequestValidationError(f"The question takes {tokens} tokens, more than question_reserve ({reserve}).")
    return tokens


def validate_settings(data: dict[str, Any]) -> dict[str, Any]:
    """Check every search setting present in ``data`` and that each budget exceeds its reserve
    (missing values count as the spec's defaults). Returns ``data`` unchanged.

    Raises :class:`RequestValidationError` or :class:`BudgetError` with the spec's messages.
    """
    for name in _CHECK_ORDER:
        if name in data:
            check_setting(name, data[name])
    map_budget = data.get("map_token_budget", DEFAULT_MAP_TOKEN_BUDGET)
    map_reserve = data.get("map_output_reserve", DEFAULT_MAP_OUTPUT_RESERVE)
    reduce_budget = data.get("reduce_token_budget", DEFAULT_REDUCE_TOKEN_BUDGET)
    reduce_reserve = data.get("reduce_output_reserve", DEFAULT_REDUCE_OUTPUT_RESERVE)
    if map_budget - map_reserve <= 0 or reduce_budget - reduce_reserve <= 0:
        raise BudgetError("Token budgets must exceed their output reserves.")
    if data.get("community_selection", DEFAULT_COMMUNITY_SELECTION) == DYNAMIC:  # the rating prompt's budget
        if map_budget - data.get("rating_output_reserve", DEFAULT_RATING_OUTPUT_RESERVE) <= 0:
            raise BudgetError("Token budgets must exceed their output reserves.")
    return data


SHORT = "short"
"""Field metadata key: the setting's short name, as command-line options (``--map-reserve``),
app links (``map_reserve=``) and evaluation conditions (``map_reserve=``) spell it."""
CHOICES = "choices"
"""Field metadata key: the values a text setting accepts, when its type does not say."""
FRONT_END_DEFAULT = "front_end_default"
"""Field metadata key: the value the app, the command line and experiments use when their user
sets none, where it differs from the spec's default (the request's)."""


def _setting(
    default: Any,
    description: str,
    *,
    short: str | None = None,
    ui_min: int | None = None,
    ui_max: int | None = None,
    front_end: Any = None,
    **rule: Any,
) -> Any:
    """A search setting's field: its default, its description (the help line of every view),
    its short name, its bounds (``ge``/``le``, as the rules of :func:`check_setting` say) and the
    front ends' own default when it is not the spec's."""
    extra: dict[str, Any] = {}
    if short is not None:
        extra[SHORT] = short
    if ui_min is not None:
        extra[UI_MIN] = ui_min
    if ui_max is not None:
        extra[UI_MAX] = ui_max
    if front_end is not None:
        extra[FRONT_END_DEFAULT] = front_end
    choices = rule.pop(CHOICES, None)
    if choices is not None:
        extra[CHOICES] = list(choices)
    return Field(default=default, description=description, json_schema_extra=extra or None, **rule)


def _budget(default: int, description: str, short: str, *, ge: int, front_end: int | None = None) -> Any:
    return _setting(default, description, short=short, ui_max=MAX_TOKEN_BUDGET, ge=ge, front_end=front_end)


class SearchSettings(BaseModel):
    """Every setting of a run except the question (the seed included), with the spec's defaults
    and rules: the one declaration that requests, configured defaults, app links and command-line
    options are views of (each field's description is its help line, its short name its option
    and link parameter, its ``ge``/``le`` its bounds). Frozen; validated on construction (spec
    messages, see :func:`check_setting`)."""

    model_config = ConfigDict(frozen=True)

    method: Method = _setting(
        DEFAULT_METHOD,
        'what answers: "global" maps over community summaries, "text" over the source chunks (the paper\'s TS), '
        '"vector" answers from the chunks most relevant to the question (naive RAG, the paper\'s SS), '
        '"lazy" tests source chunks for relevance under a budget, then maps over what it found (LazyGraphRAG\'s idea)',
    )
    community_level: FixedLevel = _setting(
        DEFAULT_COMMUNITY_LEVEL, 'community level: "leaf" or an integer >= 0', short="level"
    )
    map_token_budget: int = _budget(DEFAULT_MAP_TOKEN_BUDGET, "map token budget", "map_budget", ge=1)
    reduce_token_budget: int = _budget(DEFAULT_REDUCE_TOKEN_BUDGET, "reduce token budget", "reduce_budget", ge=1)
    map_output_reserve: int = _budget(DEFAULT_MAP_OUTPUT_RESERVE, "map output reserve", "map_reserve", ge=0)
    reduce_output_reserve: int = _budget(DEFAULT_REDUCE_OUTPUT_RESERVE, "reduce output reserve", "reduce_reserve", ge=0)
    map_concurrency: int = _setting(
        DEFAULT_MAP_CONCURRENCY, "map calls in flight at most", short="concurrency", ui_max=MAX_MAP_CONCURRENCY, ge=1
    )
    reduce_strategy: ReduceStrategy = _setting(
        DEFAULT_REDUCE_STRATEGY, "reduce selection when an answer does not fit", short="strategy"
    )
    include_claims: bool = _setting(True, "put supporting claims in the map texts", short="claims")
    include_sources: bool = _setting(True, "put source excerpts in the map texts", short="sources")
    tokenizer: str = _setting(
        AUTO,
        'token counting: "auto" is the estimate for the offline model and an exact count for a real endpoint',
        choices=TOKENIZER_NAMES,
    )
    community_selection: CommunitySelection = _setting(
        DEFAULT_COMMUNITY_SELECTION,
        'how communities are chosen: "level" takes one level\'s summaries, "dynamic" has the model rate them from the roots down',
        short="selection",
    )
    rating_threshold: int = _setting(
        DEFAULT_RATING_THRESHOLD, "rating a community needs to be kept", ui_max=MAX_RATING, ge=0, le=MAX_RATING
    )
    keep_parent: bool = _setting(DEFAULT_KEEP_PARENT, "keep a relevant community even when a child is relevant too")
    rating_repeats: int = _setting(
        DEFAULT_RATING_REPEATS, "rating calls per community, majority wins", ui_max=MAX_RATING_REPEATS, ge=1
    )
    fallback_max_level: int = _setting(
        DEFAULT_FALLBACK_MAX_LEVEL, "deepest level rated wholesale when nothing is relevant", ge=0
    )
    rating_output_reserve: int = _budget(DEFAULT_RATING_OUTPUT_RESERVE, "rating output reserve", "rating_reserve", ge=0)
    question_reserve: int = _budget(
        DEFAULT_QUESTION_RESERVE,
        "tokens kept for the question: batches are packed as if it took exactly this many, so every question up to it "
        "gets the same batches and the map and rating prompts share their prefix (0: packed around the question as it is)",
        "question_reserve",
        ge=0,
        front_end=FRONT_END_QUESTION_RESERVE,
    )
    relevance_budget: int = _setting(
        DEFAULT_RELEVANCE_BUDGET,
        "relevance-test calls a lazy run may make at most (method lazy)",
        ui_max=MAX_RELEVANCE_BUDGET,
        ge=1,
    )
    seed: int | None = _setting(
        None,
        f"shuffle seed, {SEED_MIN} to {SEED_MAX} (default: drawn and reported)",
        ui_min=SEED_MIN,
        ui_max=SEED_MAX,
    )

    def __init__(self, /, **data: Any) -> None:
        super().__init__(**validate_settings(data))

    @classmethod
    def short_name(cls, name: str) -> str:
        """The short name of setting ``name`` (options, links, conditions); the name itself when it has none."""
        return _extra(cls, name).get(SHORT, name)

    @classmethod
    def front_end_default(cls, name: str) -> Any:
        """The value the front ends use for setting ``name`` when their user sets none: its
        ``front_end_default`` metadata where it has one, else the spec's default."""
        extra = _extra(cls, name)
        return extra[FRONT_END_DEFAULT] if FRONT_END_DEFAULT in extra else cls.model_fields[name].default

    @classmethod
    def front_end_defaults(cls) -> dict[str, Any]:
        """Every setting whose front-end default differs from the spec's, with that default."""
        return {name: _extra(cls, name)[FRONT_END_DEFAULT] for name in cls.model_fields if FRONT_END_DEFAULT in _extra(cls, name)}

    @classmethod
    def for_front_ends(cls, **values: Any) -> Any:
        """These settings as a front end starts them: the front-end defaults
        (:meth:`front_end_defaults`), then ``values``."""
        return cls(**{**cls.front_end_defaults(), **values})

    @classmethod
    def choices(cls, name: str) -> tuple[str, ...] | None:
        """The values setting ``name`` accepts when they are a fixed list (None: any of its type)."""
        field = cls.model_fields[name]
        if CHOICES in _extra(cls, name):
            return tuple(_extra(cls, name)[CHOICES])
        if get_origin(field.annotation) is Literal:
            return tuple(get_args(field.annotation))
        return None

    @classmethod
    def bounds(cls, name: str) -> tuple[int | None, int | None]:
        """The least and the largest value the rules allow for setting ``name`` (None: no bound)."""
        low = high = None
        for rule in cls.model_fields[name].metadata:
            low = getattr(rule, "ge", low)
            high = getattr(rule, "le", high)
        return low, high

    @classmethod
    def ui_max(cls, name: str) -> int | None:
        """The largest value the app offers for setting ``name`` (None: no maximum)."""
        field = cls.model_fields.get(name)
        extra = field.json_schema_extra if field is not None else None
        return extra.get(UI_MAX) if isinstance(extra, dict) else None  # type: ignore[return-value]

    @classmethod
    def ui_min(cls, name: str) -> int | None:
        """The least value the app offers for setting ``name`` where its rule allows less (None: the rule's)."""
        field = cls.model_fields.get(name)
        extra = field.json_schema_extra if field is not None else None
        return extra.get(UI_MIN) if isinstance(extra, dict) else None  # type: ignore[return-value]


def _extra(model: type[BaseModel], name: str) -> dict[str, Any]:
    extra = model.model_fields[name].json_schema_extra
    return extra if isinstance(extra, dict) else {}


SEARCH_SETTING_NAMES: tuple[str, ...] = tuple(SearchSettings.model_fields)
"""The names of the search settings, in declaration order."""

DYNAMIC_SETTING_NAMES: tuple[str, ...] = (
    "community_selection", "rating_threshold", "keep_parent", "rating_repeats", "fallback_max_level", "rating_output_reserve",
)
"""Dynamic selection's settings (spec dynamic-selection.md section 1), in declaration order."""


CLAIM_SETTING_NAMES: tuple[str, ...] = ("include_claims", "include_sources")
MAP_SETTING_NAMES: tuple[str, ...] = ("map_token_budget", "map_output_reserve", "map_concurrency")


LAZY_SETTING_NAMES: tuple[str, ...] = ("relevance_budget",)
"""The lazy method's own settings (docs/lazy-search.md)."""


def inapplicable_settings(method: str) -> tuple[str, ...]:
    """The settings that mean nothing for ``method`` (evaluation spec section 7): a level, dynamic
    selection and the claims and sources switches for ``text``, ``vector`` and ``lazy`` (whose
    map texts always hold the claims and source text it found); for ``vector``, which has no map,
    the map's budget, reserve and concurrency too; the relevance budget for every method but
    ``lazy``. A request keeps them (a page's widgets hold them whatever the method); a run of
    that method ignores them."""
    if method == GLOBAL:
        return LAZY_SETTING_NAMES
    chunks = ("community_level", *DYNAMIC_SETTING_NAMES, *CLAIM_SETTING_NAMES)
    if method == LAZY:
        return chunks
    return (*chunks, *MAP_SETTING_NAMES, *LAZY_SETTING_NAMES) if method == VECTOR else (*chunks, *LAZY_SETTING_NAMES)


class SearchDefaults(SearchSettings):
    """Configured defaults: every field a request may leave out, with the spec's values and rules."""


def validate_request_fields(data: dict[str, Any]) -> dict[str, Any]:
    """Check every field of a request; return the data with the query stripped.

    Raises :class:`RequestValidationError` or :class:`BudgetError` with the spec's messages.
    """
    data = dict(data)
    data["query"] = check_query(data.get("query"))
    check_spend_limit(data.get("spend_limit_tokens"))
    return validate_settings(data)


def check_query(query: Any) -> str:
    """The query stripped; :class:`RequestValidationError` when nothing is left (spec message)
    or when it is not Unicode text (:func:`~graphrag_core.inputs.unicode_problem`)."""
    if not isinstance(query, str) or not query.strip():
        raise RequestValidationError("Global retrieval query must not be empty.")
    if problem := unicode_problem(query):
        raise RequestValidationError(f"The question is {problem}.")
    return query.strip()


class GlobalSearchRequest(SearchSettings):
    """One global question and every setting of its run. Frozen; validated on construction."""

    query: str
    spend_limit_tokens: int | None = Field(
        default=None,
        description="the most tokens the run may spend: no model call that could take it past this is sent, and a run "
        "that reaches it stops as Stop does (default: no limit)",
    )

    def __init__(self, /, **data: Any) -> None:
        BaseModel.__init__(self, **validate_request_fields(data))

    @classmethod
    def with_defaults(cls, query: str, defaults: SearchDefaults | None = None, **overrides: Any) -> "GlobalSearchRequest":
        """A request whose unset fields come from ``defaults`` (then from the spec's table).

        An override of ``None`` counts as unset, except for ``seed``, where None means "draw one".
        """
        values: dict[str, Any] = (defaults or SearchDefaults()).model_dump()
        values.update({k: v for k, v in overrides.items() if v is not None or k == "seed"})
        return cls(query=query, **values)

    @property
    def map_prompt_budget(self) -> int:
        return self.map_token_budget - self.map_output_reserve

    @property
    def rating_prompt_budget(self) -> int:
        """The rating prompt's budget (dynamic selection): the map budget less the rating reserve."""
        return self.map_token_budget - self.rating_output_reserve

    @property
    def dynamic(self) -> bool:
        """True when the model picks the communities (``community_selection="dynamic"`` under the
        ``global`` method; the other methods read no communities)."""
        return self.community_selection == DYNAMIC and self.method == GLOBAL

    @property
    def reported_level(self) -> Level:
        """The level a run reports: ``"dynamic"`` under dynamic selection, else ``community_level``."""
        return DYNAMIC if self.dynamic else self.community_level

    @property
    def selection_label(self) -> str:
        """How the run chose its summaries, as people read it: ``"dynamic (threshold 1)"`` under
        dynamic selection (the threshold is what sets two dynamic runs apart), else the level's
        label (``"level 2"``, ``"leaf"``)."""
        return level_label(self.reported_level, threshold=self.rating_threshold if self.dynamic else None)

    @property
    def reduce_prompt_budget(self) -> int:
        return self.reduce_token_budget - self.reduce_output_reserve
