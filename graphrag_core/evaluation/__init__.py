"""Judging answers the way the GraphRAG paper does (``shared/spec/evaluation.md``).

- :mod:`.judge`: one head-to-head comparison (:func:`judge_pair`), the four criteria;
- :mod:`.questions`: question sets (JSON Lines, CSV) and :func:`generate_questions`;
- :mod:`.experiment`: questions x conditions x seeds, win rates, significance, cost;
- :mod:`.claims`: claim-based comprehensiveness and diversity;
- :mod:`.store`: what an experiment made, kept as it is made so a rerun resumes;
- :mod:`.report`: an experiment as Markdown and CSV.
"""

from .claims import ClaimMetrics, claim_metrics, cluster_claims, extract_claims, rouge_l_f1
from .experiment import (
    AnswerRecord,
    Condition,
    EvalProgress,
    ExperimentResult,
    ExperimentSpec,
    JudgmentRecord,
    WinRate,
    estimate_experiment,
    holm,
    is_heuristic,
    parse_conditions,
    run_experiment,
    wilcoxon_p,
)
from .judge import CRITERIA, DEFAULT_CRITERIA, JudgeCall, PairJudgment, judge_pair, parse_judge_output, validate_criteria
from .questions import EvalQuestion, generate_questions, load_questions, parse_questions
from .store import EvaluationStore

__all__ = [
    "CRITERIA",
    "DEFAULT_CRITERIA",
    "AnswerRecord",
    "ClaimMetrics",
    "Condition",
    "EvalProgress",
    "EvalQuestion",
    "EvaluationStore",
    "ExperimentResult",
    "ExperimentSpec",
    "JudgeCall",
    "JudgmentRecord",
    "PairJudgment",
    "WinRate",
    "claim_metrics",
    "cluster_claims",
    "estimate_experiment",
    "extract_claims",
    "generate_questions",
    "holm",
    "is_heuristic",
    "judge_pair",
    "load_questions",
    "parse_conditions",
    "parse_judge_output",
    "parse_questions",
    "rouge_l_f1",
    "run_experiment",
    "validate_criteria",
    "wilcoxon_p",
]
