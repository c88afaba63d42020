"""An experiment as a Markdown report and as CSV tables (pure functions of the result).

Every text the report did not write itself (names, questions, errors, the choice's sentences)
goes through :mod:`graphrag_core.markdown`, so the report holds no raw HTML and no link but its
own pictures (a criterion's choice, a file beside the report, its path percent-encoded); every
CSV through :mod:`graphrag_core.csv_cells`, so no cell runs as a spreadsheet formula.

Scores made by the offline heuristic are labelled as heuristic, never as an LLM's judgement.
Nothing that failed is left out silently: failed answers and answers whose claims could not be
listed each get a section naming the condition, question, seed and error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import quote

from ..csv_cells import csv_text
from ..llm.embeddings import ranker_label
from ..markdown import markdown_cell, markdown_table, markdown_text
from ..methods import method_label
from ..status import RunStatus
from .choice import CHOICE_FIELDS, Choice, choose
from .results import ConditionCost, ExperimentResult, WinRate

HEURISTIC_NOTE = (
    "Judged by the offline **heuristic** (text statistics, position-blind), not by an LLM: "
    "use it to check the pipeline, not to decide which condition answers better."
)
WIN_RATE_FIELDS = ("criterion", "row", "col", "win_rate", "judgments", "questions", "p_value", "p_holm")


def judge_label(result: ExperimentResult) -> str:
    return f"{result.judge} (heuristic)" if result.heuristic_judge else result.judge


def _number(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    if value is None:
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


COST_BASIS = "every map batch, a cached one too, at its planned prompt; the reduce at its planned prompt; ratings as reported"
"""What a cost table's planned prompt tokens count."""


def win_rate_matrix(result: ExperimentResult, criterion: str) -> tuple[list[str], list[list[WinRate | None]]]:
    """The condition names and, per row, the row's win rate over each column (``None`` where
    nothing was judged; the diagonal is the A/A check when the experiment has one)."""
    names = [c.name for c in result.spec.conditions]
    return names, [[result.win_rate(criterion, r, c) for c in names] for r in names]


def significance_mark(rate: WinRate | None, *, heuristic: bool = False) -> str:
    """``*`` for a Holm-corrected p < 0.05, ``**`` below 0.01; nothing for a ``heuristic`` judge,
    whose scores are text statistics: their p-values say nothing of which answer is better."""
    if rate is None or rate.p_holm is None or heuristic:
        return ""
    return "**" if rate.p_holm < 0.01 else "*" if rate.p_holm < 0.05 else ""


AA_NEEDS_SEEDS = (
    "The diagonal (the A/A check: each condition against itself, its answers from two different seeds) "
    "is empty because this experiment has one seed; run it with two or more seeds (e.g. 1, 2) to fill it."
)
"""Why the A/A diagonal is blank, and how to fill it."""


def significance_legend(result: ExperimentResult) -> str:
    """What the marks on the win rates mean, or why there are none (a heuristic judge)."""
    if result.heuristic_judge:
        return "No cell is marked significant: the judge is a heuristic, so its p-values (shown, labelled heuristic) test text statistics, not answer quality."
    return "* Holm-corrected p < 0.05, ** p < 0.01."


def share_label(costs: Sequence[ConditionCost]) -> str:
    """What the costs' shares are relative to: ``share of TS`` (a ``text`` condition), else of the most expensive."""
    reference = next((c for c in costs if c.share_of), None)
    if reference is None:
        return "share"
    base = next((c for c in costs if c.condition == reference.share_of), None)
    return f"share of {reference.share_of}" if base is not None and base.method == "text" else f"share of {reference.share_of} (most expensive)"


def paper_cost_rows(result: ExperimentResult) -> list[list[object]]:
    """The cost table in the paper's form (Table 2): per condition, its method, the units it read
    per answer (summaries or source chunks), prompt tokens per answer and their share."""
    return [
        [
            c.condition,
            method_label(c.method),
            f"{c.units_read:,.1f} {'summaries' if c.method == 'global' else 'source chunks'}",
            f"{c.total_prompt_tokens:,.0f}",
            "–" if c.share is None else f"{100 * c.share:.1f}%",
        ]
        for c in result.costs
    ]


def _choice_markdown(choice: Choice, heuristic: bool, picture: str | None = None) -> list[str]:
    label = f"{choice.criterion} (heuristic)" if heuristic else choice.criterion
    rows = [
        [
            p.condition,
            method_label(p.method),
            "–" if p.prompt_tokens_per_answer is None else f"{p.prompt_tokens_per_answer:,.0f}",
            _number(p.win_rate),
            "–" if p.ci_low is None or p.ci_high is None else f"{p.ci_low:.1f}–{p.ci_high:.1f}",
            "yes" if p.pareto else "",
            "**recommended**" if p.recommended else ("best" if p.best else ("significantly below the best" if p.below_best else "")),
        ]
        for p in choice.points
    ]
    return [
        f"### {markdown_cell(label)}",
        "",
        markdown_text(choice.sentence),
        "",
        *([f"![{choice.criterion}: prompt tokens per answer against overall win rate]({quote(picture)})", ""] if picture else []),
        *markdown_table(["condition", "method", "prompt tokens per answer", "overall win rate", "95% CI", "Pareto front", "choice"], rows),
        "",
    ]


def to_markdown(result: ExperimentResult, *, pictures: Mapping[str, str] | None = None) -> str:
    """The report. ``pictures`` maps a criterion to the path of its choice picture
    (:func:`~graphrag_core.evaluation.choice_svg.choice_svg`, written beside the report), shown
    above that criterion's choice table."""
    lines = [
        *_summary_section(result),
        *_conditions_section(result),
        *_win_rates_section(result),
        *support_share_markdown(result),
        *_choice_section(result, pictures or {}),
        *_cost_section(result),
        *_claims_section(result),
        *_shortfall_sections(result),
        *_questions_section(result),
    ]
    return "\n".join(lines)


def _summary_section(result: ExperimentResult) -> list[str]:
    """The title, the heuristic and stopped notes, and what the experiment ran on."""
    spec = result.spec
    lines = [f"# Evaluation {markdown_text(result.id)}", ""]
    if result.heuristic_judge:
        lines += [f"> {HEURISTIC_NOTE}", ""]
    if result.stopped:
        why = f" {markdown_text(result.stop_reason)}" if result.stop_reason else ""
        lines += [f"> Stopped before it finished: the figures cover only what was judged.{why}", ""]
    return lines + [
        f"- Index: {markdown_cell(result.index_name)}" + (f" ({markdown_cell(result.index_path)})" if result.index_path else ""),
        f"- Answering model: {markdown_cell(result.model)}",
        f"- Judge: {markdown_cell(judge_label(result))}",
        *([f"- Naive RAG (SS) ranks the source chunks by: {markdown_cell(ranker_label(result.ranker))}"] if result.ranker else []),
        f"- Questions: {len(spec.questions)}; seeds: {', '.join(map(str, spec.seeds))}; repeats: {spec.repeats}",
        f"- Criteria: {markdown_cell(', '.join(spec.criteria))}",
        f"- Judge calls: {result.judge_calls} ({result.judge_calls_failed} failed, left out of the scores)",
        f"- Duration: {result.duration_s:.1f} s",
        "",
    ]


def _conditions_section(result: ExperimentResult) -> list[str]:
    return [
        "## Conditions",
        "",
        *markdown_table(["condition", "settings"], [(c.name, c.describe()) for c in result.spec.conditions]),
        "",
    ]


def _win_rates_section(result: ExperimentResult) -> list[str]:
    """One matrix per criterion: how often the row beat the column, with its Holm-corrected p."""
    spec = result.spec
    lines = [
        "## Win rates",
        "",
        "Each cell is how often the **row** beat the **column** (mean score, 100 = always, 50 = even), "
        "with the two-sided Wilcoxon signed-rank p-value of the per-question scores against 50, "
        f"Holm-corrected across the pairs of each criterion. {significance_legend(result)} "
        + ("The diagonal is the A/A check (a condition against itself across seeds): it should be near 50." if len(spec.seeds) > 1 else AA_NEEDS_SEEDS),
        "",
    ]
    for criterion in spec.criteria:
        names, matrix = win_rate_matrix(result, criterion)
        lines += [f"### {markdown_cell(criterion)}" + (" (heuristic)" if result.heuristic_judge else ""), ""]
        rows = []
        for name, cells in zip(names, matrix):
            rows.append([name, *(f"{_number(w.win_rate)}{significance_mark(w, heuristic=result.heuristic_judge)} (p={_p(w.p_holm)})" if w and w.win_rate is not None else "–" for w in cells)])
        lines += markdown_table(["row beats column", *names], rows) + [""]
    return lines


def _choice_section(result: ExperimentResult, pictures: Mapping[str, str]) -> list[str]:
    """How the choice is made, then one choice table per criterion (its picture above it)."""
    lines = [
        "## Choosing a condition",
        "",
        "Per criterion: each condition's overall win rate (its mean score against every other condition) with a 95% "
        "bootstrap confidence interval over questions (1,000 resamples, seeded), its prompt tokens per answer, whether it is "
        "on the cost-quality Pareto front (no other condition is as cheap and as good), and the recommendation: the cheapest "
        "condition whose win rate is not significantly below the best's (Holm-corrected p >= 0.05 in their pairwise comparison)."
        + (" Judged by the offline heuristic: the choice is heuristic too." if result.heuristic_judge else ""),
        "",
    ]
    for choice in choose(result):
        lines += _choice_markdown(choice, result.heuristic_judge, pictures.get(choice.criterion))
    return lines


def _cost_section(result: ExperimentResult) -> list[str]:
    """The cost in the paper's form (Table 2), then in detail per purpose."""
    share = share_label(result.costs)
    reference = next((c.share_of for c in result.costs if c.share_of), None)
    embedding = any(c.embedding_tokens for c in result.costs)
    lines = [
        "## Cost per answer",
        "",
        f"Mean per answer, in the paper's form (Table 2): the units read and the prompt tokens, as a share of {markdown_cell(reference)}'s."
        if share.startswith("share of") and reference
        else "Mean per answer, in the paper's form (Table 2): the units read and the prompt tokens.",
        "",
        *markdown_table(["condition", "method", "units read", "prompt tokens per answer", share], paper_cost_rows(result)),
        "",
        "In detail: calls and prompt tokens per purpose"
        + (", embedding tokens apart" if embedding else "")
        + f". The prompt tokens are the engine's **planned estimates** ({COST_BASIS}); **reported tokens** are the prompt "
        "and completion tokens the endpoint reported for the calls made (none for a cached answer), which a model's own "
        "tokenizer may count several times higher; **cached** are the part of their prompt tokens the endpoint served from "
        "its prompt cache.",
        "",
    ]
    return lines + _cost_detail_table(result, share, embedding) + [""]


def _cost_detail_table(result: ExperimentResult, share: str, embedding: bool) -> list[str]:
    purposes = sorted({p for c in result.costs for p in c.prompt_tokens}, key=lambda p: ("rate", "map", "reduce").index(p) if p in ("rate", "map", "reduce") else 9)
    header = [
        "condition", "answers", "failed", "unanswered", "summaries", "map batches", *(f"{p} calls" for p in purposes),
        *(f"{p} prompt tokens (planned)" for p in purposes), "prompt tokens (planned)", *(["embedding tokens"] if embedding else []),
        share, "reported tokens", "cached prompt tokens (reported)",
    ]
    rows = [
        [
            c.condition,
            c.answers,
            c.failed,
            c.unanswered,
            _number(c.summaries),
            _number(c.batches),
            *(_number(c.calls.get(p, 0.0)) for p in purposes),
            *(f"{c.prompt_tokens.get(p, 0.0):,.0f}" for p in purposes),
            f"{c.total_prompt_tokens:,.0f}",
            *([f"{c.embedding_tokens:,.0f}"] if embedding else []),
            "–" if c.share is None else f"{100 * c.share:.1f}%",
            f"{c.reported_tokens:,.0f}",
            f"{c.cached_tokens:,.0f}",
        ]
        for c in result.costs
    ]
    return markdown_table(header, rows)


def _claims_section(result: ExperimentResult) -> list[str]:
    if not result.claims:
        return []
    return [
        "## Claims",
        "",
        f"Mean distinct claims (comprehensiveness) and claim clusters at ROUGE-L >= {result.spec.claim_threshold} (diversity) per answer"
        + (", claims listed by the heuristic." if result.heuristic_judge else "."),
        "",
        *markdown_table(["condition", "answers", "comprehensiveness", "diversity"], [(c.condition, c.answers, _number(c.comprehensiveness), _number(c.diversity)) for c in result.claims]),
        "",
    ]


def _shortfall_sections(result: ExperimentResult) -> list[str]:
    """What is missing from the figures, each kind in its section: unanswered, failed, claims not listed."""
    lines: list[str] = []
    unanswered = [a for a in result.answers if a.status == RunStatus.NO_RESULTS]
    if unanswered:
        lines += [
            "## Unanswered",
            "",
            "These answers found nothing to say (no relevant community summaries or source chunks, or every batch scored 0 or failed); "
            "a pair of two unanswered answers is not judged.",
            "",
            *markdown_table(["condition", "question", "seed"], [(a.condition, a.question_id, a.seed) for a in unanswered]),
            "",
        ]
    failed = [a for a in result.answers if a.status == RunStatus.FAILED]
    if failed:
        lines += ["## Failed answers", "", *markdown_table(["condition", "question", "seed", "error"], [(a.condition, a.question_id, a.seed, " ".join(filter(None, (a.error, a.error_detail)))) for a in failed]), ""]
    unlisted = result.claim_failures()
    if unlisted:
        lines += [
            "## Claims not listed",
            "",
            "These answers are left out of the claim metrics.",
            "",
            *markdown_table(["condition", "question", "seed", "error"], [(a.condition, a.question_id, a.seed, a.claims_error) for a in unlisted]),
            "",
        ]
    return lines


def _questions_section(result: ExperimentResult) -> list[str]:
    return ["## Questions", "", *markdown_table(["id", "question", "tags"], [(q.id, q.question, "; ".join(f"{k}={v}" if v else k for k, v in q.tags.items())) for q in result.spec.questions]), ""]


SUPPORT_FIELDS = ("condition", "judge", "answers", "points", "supported", "partial", "unsupported", "unjudged", "supported_share")


def support_share_markdown(result: ExperimentResult) -> list[str]:
    """The supported share of each condition (its answers' cited points that their citations
    back, pooled), or nothing when the answers were not checked."""
    if not result.supported_shares:
        return []
    judge = "the offline judge (by the words: it cannot see a paraphrase or a negation)" if result.support_judge == "offline" else f"the model judge ({markdown_cell(result.judge)})"
    rows = [
        (s.condition, s.answers, s.points, s.supported, s.partial, s.unsupported, "–" if s.share is None else f"{100 * s.share:.1f}%")
        for s in result.supported_shares
    ]
    return [
        "## Supported share",
        "",
        f"Of each condition's answers, the points (sentences and bullets that cite something) backed by what they cite, judged by {judge}; "
        "the points of every answer pooled (see docs/support-check.md).",
        "",
        *markdown_table(["condition", "answers checked", "points", "supported", "partly", "not supported", "supported share"], rows),
        "",
    ]


def support_csv(result: ExperimentResult) -> str:
    """``{stem}.support.csv``: one row per condition with the columns of :data:`SUPPORT_FIELDS`
    (``supported_share`` from 0 to 1, blank when no point cites anything)."""
    rows = [[("" if getattr(s, f) is None else getattr(s, f)) if f != "supported_share" else ("" if s.share is None else s.share) for f in SUPPORT_FIELDS] for s in result.supported_shares]
    return csv_text(SUPPORT_FIELDS, rows)


def win_rates_csv(result: ExperimentResult) -> str:
    """One row per criterion and ordered pair (A/A rows have row == col), plus the judge label."""
    return csv_text(
        [*WIN_RATE_FIELDS, "judge"],
        [[getattr(w, f) if getattr(w, f) is not None else "" for f in WIN_RATE_FIELDS] + [judge_label(result)] for w in result.win_rates],
    )


def costs_csv(result: ExperimentResult) -> str:
    """One row per condition; ``share`` is of ``share_of``'s prompt tokens (the ``text`` condition's
    when there is one, else the most expensive's)."""
    purposes = sorted({p for c in result.costs for p in c.prompt_tokens})
    header = [
        "condition", "answers", "failed", "summaries", "batches", *(f"{p}_calls" for p in purposes), *(f"{p}_prompt_tokens" for p in purposes),
        "prompt_tokens", "share", "method", "units", "embedding_tokens", "share_of", "reported_tokens", "cached_tokens",
    ]
    rows = [
        [
            c.condition, c.answers, c.failed, c.summaries, c.batches, *(c.calls.get(p, 0) for p in purposes), *(c.prompt_tokens.get(p, 0) for p in purposes),
            c.total_prompt_tokens, "" if c.share is None else c.share, c.method, c.units_read, c.embedding_tokens, c.share_of or "",
            c.reported_tokens, c.cached_tokens,
        ]
        for c in result.costs
    ]
    return csv_text(header, rows)


def choice_csv(result: ExperimentResult, choices: Sequence[Choice] | None = None) -> str:
    """``{stem}.choice.csv`` (evaluation spec section 8): one row per condition and criterion with
    the columns of :data:`~graphrag_core.evaluation.choice.CHOICE_FIELDS`; a blank cell where
    nothing was judged."""
    choices = choose(result) if choices is None else choices
    rows = [[("" if getattr(p, f) is None else getattr(p, f)) for f in CHOICE_FIELDS] for choice in choices for p in choice.points]
    return csv_text(CHOICE_FIELDS, rows)


def judgments_csv(result: ExperimentResult) -> str:
    """One row per judgment and criterion: A's and B's scores and the judge's reasons."""
    rows = []
    for j in result.judgments:
        for criterion in result.spec.criteria:
            score = j.judgment.scores.get(criterion) if j.judgment else None
            reasons = " | ".join(c.reason or "" for c in (j.judgment.calls if j.judgment else []) if c.criterion == criterion and c.reason)
            rows.append([j.row, j.col, j.question_id, j.seed_a, j.seed_b, criterion, "" if score is None else score, "" if score is None else 100 - score, j.skipped or "", reasons])
    return csv_text(["row", "col", "question_id", "seed_a", "seed_b", "criterion", "score_row", "score_col", "skipped", "reasons"], rows)


__all__ = [
    "AA_NEEDS_SEEDS",
    "HEURISTIC_NOTE",
    "SUPPORT_FIELDS",
    "choice_csv",
    "costs_csv",
    "judge_label",
    "judgments_csv",
    "paper_cost_rows",
    "share_label",
    "significance_legend",
    "significance_mark",
    "support_csv",
    "support_share_markdown",
    "to_markdown",
    "win_rate_matrix",
    "win_rates_csv",
]
