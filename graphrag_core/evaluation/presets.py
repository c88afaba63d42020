"""Ready-made sets of conditions: the GraphRAG paper's setup on any index, in one step (the
Evaluate page's "the paper's conditions", ``eval --preset paper``).

The paper (arXiv 2404.16130, section 4) compares the community levels C0-C3, which map over
community summaries only, with TS (map-reduce over the source text) and SS (naive RAG over the
source chunks). :func:`paper_conditions` gives every level of the open index as ``C0``, ``C1``,
... (summaries only: no claims, no source excerpts, as the paper's levels read), ``TS``
(``method=text``), ``SS`` (``method=vector``) and, as a seventh, ``dynamic`` (dynamic
community selection, summaries only), which postdates the paper.

Invariants: condition names are unique; every condition is valid for the index's levels; the
text :func:`conditions_text` writes is read back by
:func:`~graphrag_core.evaluation.conditions.parse_conditions` into the same conditions.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import EvaluationError
from ..methods import TEXT, VECTOR
from ..models import Index
from ..request import SearchSettings
from .conditions import Condition

PAPER = "paper"
PRESETS: dict[str, str] = {PAPER: "The paper's conditions: every level, TS, SS and dynamic selection"}
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


def preset_conditions(name: str, index: Index) -> list[Condition]:
    """The conditions of the preset ``name`` on ``index``; :class:`EvaluationError` for an unknown one."""
    if name == PAPER:
        return paper_conditions(index)
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


__all__ = ["PAPER", "PRESETS", "SUMMARIES_ONLY", "conditions_text", "paper_conditions", "preset_conditions"]
