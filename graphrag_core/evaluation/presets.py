"""Ready-made sets of conditions: the GraphRAG paper's setup on any index, in one step (the
Evaluate page's "the paper's conditions", ``eval --preset paper``).

The paper (arXiv 2404.16130, section 4) compares the community levels C0-C3, which map over
community summaries only, with TS (map-reduce over the source text) and SS (naive RAG over the
source chunks). :func:`paper_conditions` gives every level of the open index as ``C0``, ``C1``,
... (summaries only: no claims, no source excerpts, as the paper's levels read), ``TS``
(``method=text``), ``SS`` (``method=vector``) and, as a seventh, ``dynamic`` (dynamic
community selection, summaries only), which postdates the paper. :func:`lazy_conditions` adds
the lazy method at Microsoft's published relevance budgets (``LZ100``, ``LZ500``, ``LZ1500``;
docs/lazy-search.md), which ``eval --preset lazy`` puts beside the paper's.

Invariants: condition names are unique; every condition is valid for the index's levels; the
text :func:`conditions_text` writes is read back by
:func:`~graphrag_core.evaluation.conditions.parse_conditions` into the same conditions.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import EvaluationError
from ..methods import LAZY, TEXT, VECTOR
from ..models import Index
from ..request import SearchSettings
from .conditions import Condition

PAPER = "paper"
LAZY_PRESET = "lazy"
LAZY_BUDGETS: tuple[int, ...] = (100, 500, 1500)
"""The relevance budgets Microsoft published LazyGraphRAG's results at (Z100, Z500, Z1500)."""
PRESETS: dict[str, str] = {
    PAPER: "The paper's conditions: every level, TS, SS and dynamic selection",
    LAZY_PRESET: "The paper's conditions, and lazy search at relevance budgets 100, 500 and 1,500",
}
"""The presets by name, with what each fills in."""
SUMMARIES_ONLY = {"include_claims": False, "include_sources": False}
"""The paper's levels read community summaries alone."""


def paper_conditions(index: Index, *, dynamic: bool = True) -> list[Condition]:
    """The paper's conditions on ``index``: ``C{level}`` for every level, ``TS``, ``SS`` and
    (``dynamic``) dynamic selection (see the module docstring)."""
    levels = [Condition(name=f"C{level}", overrides={"community_level": level, **SUMMARIES_ONLY}) for level in index.levels()]
    sources = [Condition(name="TS", overrides={"method": TEXT}), Condition(name="SS", overrides={"method": VECTOR})]
    extra = [Condition(name="dynamic", overrides={"community_selection": "dynamic", **SUMMARIES_ONLY})] if dynamic else []
    return [*levels, *sources, *extra]


def lazy_conditions(budgets: Sequence[int] = LAZY_BUDGETS) -> list[Condition]:
    """``LZ{budget}`` for each relevance budget: the lazy method at that budget."""
    return [Condition(name=f"LZ{budget}", overrides={"method": LAZY, "relevance_budget": budget}) for budget in budgets]


def preset_conditions(name: str, index: Index) -> list[Condition]:
    """The conditions of the preset ``name`` on ``index``; :class:`EvaluationError` for an unknown one."""
    if name == PAPER:
        return paper_conditions(index)
    if name == LAZY_PRESET:
        return [*paper_conditions(index), *lazy_conditions()]
    raise EvaluationError(f"Unknown preset: {name} (known: {', '.join(PRESETS)}).")


def conditions_text(conditions: Sequence[Condition]) -> str:
    """The conditions as the Conditions box and a conditions file write them, one per line:
    ``NAME: key=value, key=value`` with the settings' short names (``level=0``)."""

    def value(v: object) -> str:
        return str(v).lower() if isinstance(v, bool) else str(v)

    lines = []
    for condition in conditions:
        settings = ", ".join(f"{SearchSettings.short_name(k)}={value(v)}" for k, v in condition.overrides.items())
        lines.append(f"{condition.name}: {settings}")
    return "\n".join(lines)


__all__ = ["LAZY_BUDGETS", "LAZY_PRESET", "PAPER", "PRESETS", "lazy_conditions", "SUMMARIES_ONLY", "conditions_text", "paper_conditions", "preset_conditions"]
