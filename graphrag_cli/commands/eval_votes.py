"""``graphrag-explorer eval-votes EXPERIMENT_ID``: how far the people who judged an experiment's
pairs agree with its LLM judge and with each other, and their win rates beside the judge's.

    graphrag-explorer eval-votes 3f2a9c0d1e4b5a6f              # the agreement table
    graphrag-explorer eval-votes 3f2a9c0d1e4b5a6f --export votes.csv

The votes are read from the experiment's store (the one ``eval`` and the app use); nothing is
asked of any model.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from graphrag_core.evaluation.agreement import people_and_judge, people_win_rates, people_with_each_other, vote_counts
from graphrag_core.evaluation.report import judge_label
from graphrag_core.evaluation.results import ExperimentResult
from graphrag_core.evaluation.vote_report import AGREEMENT_HEADER, agreement_rows, votes_csv
from graphrag_core.evaluation.votes import Vote, VoteStore

from ..context import EXIT_OK, EXIT_USAGE, CliContext, CliError
from ..files import write_out
from ..options import add_eval_db_option
from ..output import aligned_table
from ..resolve import evaluation_store

JUDGING_LINK = "evaluate?experiment={id}&judge=1"
"""Where in the app people judge an experiment's pairs."""


def add_parser(sub: Any) -> None:
    """Register ``eval-votes``."""
    votes = sub.add_parser(
        "eval-votes",
        help="people's votes on an experiment: their agreement with the LLM judge (Cohen's kappa) and with each other",
        description="Print how far the people who judged an experiment's pairs blind agree with its LLM judge and with each other "
        "(share of identical choices and Cohen's kappa over answer 1, answer 2 and tie, per criterion), and their win rates beside the judge's.",
    )
    votes.add_argument("experiment", metavar="EXPERIMENT_ID", help="the experiment's id (eval prints it; the app's Evaluate page shows it)")
    votes.add_argument("--export", type=Path, default=None, metavar="FILE", help="also write every vote to FILE as CSV, one row per vote")
    add_eval_db_option(votes)
    votes.set_defaults(handler=run_votes)


def format_votes(result: ExperimentResult, votes: list[Vote]) -> str:
    """The command's text: who voted, the agreement table, and people's win rates beside the judge's."""
    counts = vote_counts(votes)
    lines = [f"Experiment {result.id} · {result.index_name} · LLM judge {judge_label(result)}"]
    if not votes:
        lines.append(f"Nobody has judged this experiment's pairs yet: people judge them on the app's {JUDGING_LINK.format(id=result.id)}")
        return "\n".join(lines) + "\n"
    lines += [f"{len(votes)} votes by {len(counts)} {'person' if len(counts) == 1 else 'people'}: " + ", ".join(f"{name} {n}" for name, n in counts.items()), ""]
    lines += aligned_table(AGREEMENT_HEADER, agreement_rows([*people_and_judge(result, votes), *people_with_each_other(result, votes)]), left=2)
    people = {(w.criterion, w.row, w.col): w for w in people_win_rates(result, votes)}
    pairs = list(dict.fromkeys((j.row, j.col) for j in result.judgments if not j.aa))
    rows = []
    for criterion in result.spec.criteria:
        for row, col in pairs:
            ours, theirs = people.get((criterion, row, col)), result.win_rate(criterion, row, col)
            rows.append([
                criterion, f"{row} over {col}",
                "–" if ours is None or ours.win_rate is None else f"{ours.win_rate:.1f}",
                0 if ours is None else ours.judgments,
                "–" if theirs is None or theirs.win_rate is None else f"{theirs.win_rate:.1f}",
            ])
    lines += ["", "win rates (100 = the row always preferred, 50 = even):", *aligned_table(("criterion", "pair", "people", "votes", "LLM judge"), rows, left=2)]
    return "\n".join(lines) + "\n"


def run_votes(args: argparse.Namespace, context: CliContext) -> int:
    store = evaluation_store(context, args.eval_db)
    result = store.get_experiment(args.experiment)
    if result is None:
        raise CliError(f"No finished experiment {args.experiment} in {store.path}.", EXIT_USAGE)
    votes = VoteStore(store.path).votes(result.id)
    context.write(format_votes(result, votes))
    if args.export is not None:
        write_out({args.export: votes_csv(votes)}, what="the votes")
        context.note(f"wrote {len(votes)} votes to {args.export}")
    return EXIT_OK


__all__ = ["JUDGING_LINK", "add_parser", "format_votes", "run_votes"]
