"""People's votes in the experiment's report: a Markdown section (their win rates beside the LLM
judge's, and the agreement table) and the votes as CSV, one row per vote (pure functions).

Every text the report did not write itself goes through :mod:`graphrag_core.markdown` or
:mod:`graphrag_core.csv_cells`, as in :mod:`.report`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from ..csv_cells import csv_text
from ..markdown import markdown_cell, markdown_table
from .agreement import Agreement, people_and_judge, people_win_rates, people_with_each_other, vote_counts
from .report import judge_label
from .results import ExperimentResult, WinRate
from .votes import Vote

VOTE_FIELDS = (
    "judge", "experiment", "question_id", "condition_a", "condition_b", "seed_a", "seed_b", "criterion",
    "order_shown", "shown_first", "choice", "winner", "score_a", "time",
)
"""The columns of ``{stem}.votes.csv`` and of ``eval-votes --export``."""
AGREEMENT_HEADER = ("criterion", "between", "pairs", "identical choices", "Cohen's kappa")


def percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def kappa_text(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def agreement_rows(rows: Sequence[Agreement]) -> list[tuple[str, str, int, str, str]]:
    """The agreement table's rows as people read them (criterion, between, pairs, share, kappa)."""
    return [(a.criterion, a.between, a.items, percent(a.identical), kappa_text(a.kappa)) for a in rows]


def _cell(people: WinRate | None, judge: WinRate | None) -> str:
    ours = "–" if people is None or people.win_rate is None else f"{people.win_rate:.0f} ({people.judgments} votes)"
    theirs = "–" if judge is None or judge.win_rate is None else f"{judge.win_rate:.0f}"
    return f"people {ours} · LLM {theirs}"


def people_markdown(result: ExperimentResult, votes: Sequence[Vote]) -> str:
    """The report's section on people's votes; a line saying there are none when there are none."""
    lines = ["## People", ""]
    if not votes:
        return "\n".join([*lines, "Nobody has judged this experiment's pairs yet.", ""])
    counts = vote_counts(votes)
    lines += [
        f"{len(votes)} votes by {len(counts)} {'person' if len(counts) == 1 else 'people'} "
        f"({markdown_cell(', '.join(f'{name}: {n}' for name, n in counts.items()))}), each shown the two answers blind, "
        f"in an order seeded per judge and pair. The LLM judge is {markdown_cell(judge_label(result))}.",
        "",
        "### Win rates, people beside the LLM judge",
        "",
        "Each cell is the row's mean score against the column (100 = always preferred, 50 = even): people's votes, then the LLM judge's.",
        "",
    ]
    rates = {(w.criterion, w.row, w.col): w for w in people_win_rates(result, votes)}
    pairs = list(dict.fromkeys((j.row, j.col) for j in result.judgments if not j.aa))
    for criterion in result.spec.criteria:
        rows = [(f"{row} over {col}", _cell(rates.get((criterion, row, col)), result.win_rate(criterion, row, col))) for row, col in pairs]
        lines += [f"#### {markdown_cell(criterion)}", "", *markdown_table(["pair", "win rate"], rows), ""]
    agreement = [*people_and_judge(result, votes), *people_with_each_other(result, votes)]
    lines += [
        "### Agreement",
        "",
        "Over the pairs both sides judged, choices compared as A, B or tie whatever the order shown: the share of "
        "identical choices and Cohen's kappa (1 = always agree, 0 = no better than chance).",
        "",
        *markdown_table(AGREEMENT_HEADER, agreement_rows(agreement)),
        "",
    ]
    return "\n".join(lines)


def votes_csv(votes: Sequence[Vote]) -> str:
    """Every vote, one row each, in the order cast (``choice``: 1, 2 or 0 as shown)."""
    return csv_text(
        VOTE_FIELDS,
        [
            [
                v.judge, v.experiment_id, v.question_id, v.condition_a, v.condition_b, v.seed_a, v.seed_b, v.criterion,
                v.order_shown, v.shown_first, v.choice, v.winner, v.score_a,
                dt.datetime.fromtimestamp(v.created_at, tz=dt.timezone.utc).isoformat(timespec="seconds"),
            ]
            for v in votes
        ],
    )


__all__ = ["AGREEMENT_HEADER", "VOTE_FIELDS", "agreement_rows", "kappa_text", "people_markdown", "percent", "votes_csv"]
