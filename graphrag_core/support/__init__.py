"""The support check: is each point of an answer backed by the evidence it cites?
(``docs/support-check.md``)

- :mod:`.models`: a point's verdict and evidence, a whole check, a model judge's cost (pure);
- :mod:`.units`: the texts a cited id stands for, and finding a quote in them;
- :mod:`.lexical`: the offline judge (deterministic, lexical) and its thresholds;
- :mod:`.model_judge`: the model judge: its calls, their packing and bounds, its replies checked;
- :mod:`.check`: :func:`check_support` over a finished run, its cost, the answer marked.
"""

from .models import (
    JUDGES,
    VERDICT_LABELS,
    VERDICT_MARKS,
    VERDICTS,
    JudgeName,
    SupportCheck,
    SupportCost,
    SupportEvidence,
    SupportPoint,
    SupportVerdict,
    verdict_mark,
)

_LAZY = {
    "check_answer_support": "check",
    "check_support": "check",
    "estimate_support": "check",
    "forecast_support": "check",
    "marked_answer": "check",
    "offline_support": "check",
    "support_lines": "check",
    "LEXICAL_JUDGE_IDENTITY": "lexical",
    "PARTIAL_COVERAGE": "lexical",
    "SINGLE_QUOTE_FLOOR": "lexical",
    "SUPPORTED_COVERAGE": "lexical",
    "SupportSettings": "model_judge",
    "find_quote": "units",
    "unit_text": "units",
}
"""Names whose module is imported on first use: the offline model reads :mod:`.lexical` while
the engine is still being imported, before the check's own imports (the search, the answer's
points) can be."""


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "JUDGES",
    "LEXICAL_JUDGE_IDENTITY",
    "PARTIAL_COVERAGE",
    "SINGLE_QUOTE_FLOOR",
    "SUPPORTED_COVERAGE",
    "VERDICTS",
    "VERDICT_LABELS",
    "VERDICT_MARKS",
    "JudgeName",
    "SupportCheck",
    "SupportCost",
    "SupportEvidence",
    "SupportPoint",
    "SupportSettings",
    "SupportVerdict",
    "check_answer_support",
    "check_support",
    "estimate_support",
    "find_quote",
    "forecast_support",
    "marked_answer",
    "offline_support",
    "support_lines",
    "unit_text",
    "verdict_mark",
]
