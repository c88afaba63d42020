"""An experiment's answers support-checked (:mod:`graphrag_core.support`): each answer's check
in counts, and the model judge's calls forecast before the answers exist.

A finished run's check reads what the run read (:func:`~graphrag_core.support.check_support`);
a kept answer whose run is not at hand is checked from its text alone
(:func:`~graphrag_core.support.check_answer_support`), which searches only the ids it cites for
other support. A check that cannot be made (the index's claims unreadable) leaves the answer
without counts: it still counts for everything else.

The check is imported where it is used: it cuts answers into points with
:mod:`graphrag_core.answer_points`, which reads this package's ROUGE-L, so importing it while
this package is being imported would find the points' module half made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import GraphRAGError
from ..llm.base import ChatModel
from ..models import Index
from ..results import GlobalSearchResult
from ..support.models import JudgeName
from .results import SupportTally
from .spec import ExperimentSpec

if TYPE_CHECKING:
    from ..cache import MapCache
    from ..spending import SpendingLimit


async def answer_support(
    index: Index,
    answer: str,
    judge: JudgeName,
    *,
    model: ChatModel | None,
    method: str,
    result: GlobalSearchResult | None = None,
    cache: MapCache | None = None,
    spending: SpendingLimit | None = None,
) -> SupportTally | None:
    """One answer's support check in counts (see the module docstring)."""
    from ..support.check import check_answer_support, check_support  # imported here: see the module docstring

    try:
        if result is not None:
            check = await check_support(index, result, judge, model=model, cache=cache, spending=spending)
        else:
            check = await check_answer_support(index, answer, judge, method=method, model=model, cache=cache, spending=spending)
    except GraphRAGError:
        return None
    return SupportTally.of(check)


def support_calls(index: Index, spec: ExperimentSpec) -> int:
    """The model judge's calls for every answer of ``spec``, as forecast per condition from its
    first question and seed (:func:`~graphrag_core.support.forecast_support`)."""
    from ..support.check import forecast_support  # imported here: see the module docstring

    per_condition = len(spec.questions) * len(spec.seeds)
    question, seed = spec.questions[0].question, spec.seeds[0]
    return sum(forecast_support(index, c.request(question, seed)).calls * per_condition for c in spec.conditions)


__all__ = ["answer_support", "support_calls"]
