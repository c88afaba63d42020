"""Sweeps' state in this browser session, and its widgets (each named once, by its key)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from graphrag_core.sweep import SweepResult

from ..jobs import SweepHandle
from ..session import PageState, Widget


@dataclass
class SweepsState(PageState):
    """Sweeps: the sweep in flight, the last result, and why the last start or run ended early."""

    KEY: ClassVar[str] = "sweeps_page"

    job: SweepHandle | None = None
    result: SweepResult | None = None
    ended_early: str | None = None
    """Why the last sweep ended before its last point (stopped, or failed)."""
    refused: str | None = None
    """Why the last click of "Run sweep" started nothing (e.g. an unreachable endpoint)."""

    @property
    def running(self) -> bool:
        return self.job is not None and not self.job.done


INDEX, FOLDER = Widget[str]("sweep_index"), Widget[str]("sweep_folder", "")
QUESTION = Widget[str]("sweep_question", "")
LEVELS = Widget[list[str]]("sweep_levels", make=list)
SEEDS = Widget[str]("sweep_seeds", "")
MAP_BUDGETS, REDUCE_BUDGETS = Widget[str]("sweep_map_budgets", ""), Widget[str]("sweep_reduce_budgets", "")
MODEL = Widget[str]("sweep_model", "offline")
TOKENIZER = Widget[str]("sweep_tokenizer")
SAVE_RUNS = Widget[bool]("sweep_save_runs", True)
THRESHOLD = Widget[int]("sweep_rating_threshold")
RUN_KEY, STOP_KEY = "sweep_run", "sweep_stop"


__all__ = [
    "FOLDER",
    "INDEX",
    "LEVELS",
    "MAP_BUDGETS",
    "MODEL",
    "QUESTION",
    "REDUCE_BUDGETS",
    "RUN_KEY",
    "SAVE_RUNS",
    "SEEDS",
    "STOP_KEY",
    "THRESHOLD",
    "TOKENIZER",
    "SweepsState",
]
