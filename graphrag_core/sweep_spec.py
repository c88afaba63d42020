"""A sweep's grid: one question over lists of levels, seeds and token budgets, and the settings
every point shares (:class:`SweepSpec`).

Invariants: the query and each listed value follow the request's rules (global-search spec
section 1) and raise the request's own errors, before pydantic; a listed value given twice is
kept once; the grid is the product of the four lists, in the order level, map budget, reduce
budget, seed.
"""

from __future__ import annotations

import itertools
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .errors import RequestValidationError
from .levels import LEAF, Level
from .request import DYNAMIC, GlobalSearchRequest, SearchDefaults, check_query, check_setting

DEFAULT_POINT_CONCURRENCY = 1
"""Grid points run one after the other unless a spec asks for more."""

def _check_spec_values(data: dict[str, Any]) -> dict[str, Any]:
    """Apply the request's rules (and exact messages) to every listed value of a sweep spec.

    Runs before pydantic, like the request's own validation, so the errors are this package's
    ``RequestValidationError`` and not pydantic's wrapper."""
    check_query(data.get("query"))
    for level in data.get("levels") or []:
        if level != DYNAMIC:
            check_setting("community_level", level)
    for seed in data.get("seeds") or []:
        if seed is None:
            raise RequestValidationError("A sweep's seeds must be integers.")
        check_setting("seed", seed)
    for name in ("map_token_budgets", "reduce_token_budgets"):
        for value in data.get(name) or []:
            check_setting(name[:-1], value)  # map_token_budget / reduce_token_budget
    concurrency = data.get("point_concurrency", DEFAULT_POINT_CONCURRENCY)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency <= 0:
        raise RequestValidationError("point_concurrency must be a positive integer.")
    for name in ("levels", "seeds"):
        if name in data and not data[name]:
            raise RequestValidationError("A sweep needs at least one level and one seed.")
    return data


class SweepSpec(BaseModel):
    """A sweep's grid and the settings shared by every point.

    ``base`` holds every request field other than the query, level, seed and budgets. An empty
    budget list means "the base value only". The grid is the product of the four lists.
    Validation: the query and each listed value follow the request's rules (spec section 1)
    and raise the same errors; a budget that is valid alone but cannot hold its reserve is
    allowed here and fails only its own points.
    """

    model_config = ConfigDict(frozen=True)

    query: str
    levels: list[Level] = Field(default_factory=lambda: [LEAF])
    """Each grid point's selection: a level, ``"leaf"``, or ``"dynamic"`` (dynamic community
    selection, with the rating settings of ``base``), so the selection mode is a sweep dimension."""
    seeds: list[int] = Field(default_factory=lambda: [0])
    map_token_budgets: list[int] = Field(default_factory=list)
    reduce_token_budgets: list[int] = Field(default_factory=list)
    base: SearchDefaults = Field(default_factory=SearchDefaults)
    point_concurrency: int = DEFAULT_POINT_CONCURRENCY

    def __init__(self, /, **data: Any) -> None:
        super().__init__(**_check_spec_values(data))

    @field_validator("query")
    @classmethod
    def _strip_query(cls, value: str) -> str:
        return value.strip()

    @field_validator("levels", "seeds", "map_token_budgets", "reduce_token_budgets")
    @classmethod
    def _unique(cls, value: list[Any]) -> list[Any]:
        return list(dict.fromkeys(value))  # a repeated value would only repeat runs

    def grid(self) -> list[tuple[Level, int, int, int]]:
        """Every point as ``(level, map_token_budget, reduce_token_budget, seed)``, in grid order."""
        map_budgets = self.map_token_budgets or [self.base.map_token_budget]
        reduce_budgets = self.reduce_token_budgets or [self.base.reduce_token_budget]
        return list(itertools.product(self.levels, map_budgets, reduce_budgets, self.seeds))

    def __len__(self) -> int:
        return len(self.grid())

    def request_for(self, level: Level, map_budget: int, reduce_budget: int, seed: int) -> GlobalSearchRequest:
        """The request of one point; raises ``BudgetError`` when a budget cannot hold its reserve.

        The level ``"dynamic"`` asks for dynamic selection (the base's level is then unused).
        """
        selection = {"community_selection": DYNAMIC} if level == DYNAMIC else {"community_level": level, "community_selection": "level"}
        return GlobalSearchRequest.with_defaults(
            self.query,
            self.base,
            **selection,
            map_token_budget=map_budget,
            reduce_token_budget=reduce_budget,
            seed=seed,
        )


__all__ = ["DEFAULT_POINT_CONCURRENCY", "SweepSpec"]
