"""The spend figures' old home: they are part of a run's figures now (:attr:`RunFigures.spend
<graphrag_core.figures.RunFigures.spend>`); these names stay importable from here."""

from __future__ import annotations

from collections.abc import Iterable

from .events import Event
from .figures import Price, RunSpend, money, run_figures, spend_line


def run_spend(events: Iterable[Event]) -> RunSpend:
    """``run_figures(events).spend``."""
    return run_figures(events).spend


__all__ = ["Price", "RunSpend", "money", "run_spend", "spend_line"]
