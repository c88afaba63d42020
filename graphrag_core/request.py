"""A global search request and its validation (spec section 1).

Each value comes from the request, else from the configured defaults (:class:`SearchDefaults`),
else from the spec's table. Validation runs before pydantic sees the data, so the errors are
this package's ``ValueError`` subclasses with the spec's exact messages.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from .errors import BudgetError, RequestValidationError
from .tokens import HEURISTIC, TOKENIZER_NAMES

DEFAULT_COMMUNITY_LEVEL: Literal["leaf"] = "leaf"
DEFAULT_MAP_TOKEN_BUDGET = 8000
DEFAULT_REDUCE_TOKEN_BUDGET = 8000
DEFAULT_MAP_OUTPUT_RESERVE = 512
DEFAULT_REDUCE_OUTPUT_RESERVE = 1024
DEFAULT_MAP_CONCURRENCY = 4
DEFAULT_REDUCE_STRATEGY: Literal["skip"] = "skip"

SEED_MIN = -(2**63)
SEED_MAX = 2**63 - 1
"""A seed is stored as a 64-bit integer (the run history's SQLite column), so it must fit one."""

ReduceStrategy = Literal["skip", "stop"]
REDUCE_STRATEGIES: tuple[str, ...] = ("skip", "stop")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _SearchSettings(BaseModel):
    """Every setting of a run except the question and the seed, with the spec's defaults."""

    model_config = ConfigDict(frozen=True)

    community_level: int | Literal["leaf"] = DEFAULT_COMMUNITY_LEVEL
    map_token_budget: int = DEFAULT_MAP_TOKEN_BUDGET
    reduce_token_budget: int = DEFAULT_REDUCE_TOKEN_BUDGET
    map_output_reserve: int = DEFAULT_MAP_OUTPUT_RESERVE
    reduce_output_reserve: int = DEFAULT_REDUCE_OUTPUT_RESERVE
    map_concurrency: int = DEFAULT_MAP_CONCURRENCY
    reduce_strategy: ReduceStrategy = DEFAULT_REDUCE_STRATEGY
    include_claims: bool = True
    include_sources: bool = True
    tokenizer: str = HEURISTIC


class SearchDefaults(_SearchSettings):
    """Configured defaults: every field a request may leave out, with the spec's values."""


def validate_request_fields(data: dict[str, Any]) -> dict[str, Any]:
    """Check every field of a request; return the data with the query stripped.

    Raises :class:`RequestValidationError` or :class:`BudgetError` with the spec's messages.
    """
    data = dict(data)
    query = data.get("query")
    if not isinstance(query, str) or not query.strip():
        raise RequestValidationError("Global retrieval query must not be empty.")
    data["query"] = query.strip()

    level = data.get("community_level", DEFAULT_COMMUNITY_LEVEL)
    if not (level == "leaf" or (_is_int(level) and level >= 0)):
        raise RequestValidationError('community_level must be "leaf" or a non-negative integer.')
    for name in ("map_token_budget", "reduce_token_budget", "map_concurrency"):
        value = data.get(name, 1)
        if not (_is_int(value) and value > 0):
            raise RequestValidationError(f"{name} must be a positive integer.")
    for name in ("map_output_reserve", "reduce_output_reserve"):
        value = data.get(name, 0)
        if not (_is_int(value) and value >= 0):
            raise RequestValidationError(f"{name} must be a non-negative integer.")
    seed = data.get("seed")
    if seed is not None and not _is_int(seed):
        raise RequestValidationError("seed must be an integer or None.")
    if seed is not None and not SEED_MIN <= seed <= SEED_MAX:
        raise RequestValidationError(f"seed must be between {SEED_MIN} and {SEED_MAX} (a 64-bit integer), not {seed}.")
    strategy = data.get("reduce_strategy", DEFAULT_REDUCE_STRATEGY)
    if strategy not in REDUCE_STRATEGIES:
        raise RequestValidationError('reduce_strategy must be "skip" or "stop".')
    tokenizer = data.get("tokenizer", HEURISTIC)
    if tokenizer not in TOKENIZER_NAMES:
        raise RequestValidationError(f"tokenizer must be one of {', '.join(TOKENIZER_NAMES)}.")

    map_budget = data.get("map_token_budget", DEFAULT_MAP_TOKEN_BUDGET)
    map_reserve = data.get("map_output_reserve", DEFAULT_MAP_OUTPUT_RESERVE)
    reduce_budget = data.get("reduce_token_budget", DEFAULT_REDUCE_TOKEN_BUDGET)
    reduce_reserve = data.get("reduce_output_reserve", DEFAULT_REDUCE_OUTPUT_RESERVE)
    if map_budget - map_reserve <= 0 or reduce_budget - reduce_reserve <= 0:
        raise BudgetError("Token budgets must exceed their output reserves.")
    return data


class GlobalSearchRequest(_SearchSettings):
    """One global question and every setting of its run. Frozen; validated on construction."""

    query: str
    seed: int | None = None

    def __init__(self, /, **data: Any) -> None:
        super().__init__(**validate_request_fields(data))

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
    def reduce_prompt_budget(self) -> int:
        return self.reduce_token_budget - self.reduce_output_reserve
