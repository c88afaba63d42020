"""Judging answers the way the GraphRAG paper does (``docs/evaluation.md``).

- :mod:`.conditions`: a condition (a name and request overrides) and its parser;
- :mod:`.spec`: what an experiment runs (questions x conditions x seeds, how to judge);
- :mod:`.judge`: one head-to-head comparison (:func:`judge_pair`), the four criteria;
- :mod:`.questions`: question sets (JSON Lines, CSV) and :func:`generate_questions`;
- :mod:`.experiment`: running an experiment (answers, claims, judgments) and its estimate;
- :mod:`.results`: what an experiment makes (answers, judgments, win rates, costs);
- :mod:`.statistics`: win rates, Wilcoxon p-values, Holm correction, costs, claim summaries;
- :mod:`.keys`: the stable keys of answers and claims, and an experiment's id;
- :mod:`.drilldown`: one question's two answers and their judgments, scored from one side;
- :mod:`.claims`: claim-based comprehensiveness and diversity;
- :mod:`.store`: what an experiment made, kept as it is made so a rerun resumes;
- :mod:`.choice`: the choice per criterion: cost against overall win rate, the Pareto front, the
  recommended condition;
- :mod:`.presets`: ready-made conditions (the paper's: every level, TS, SS, dynamic selection);
- :mod:`.report`: an experiment as Markdown and CSV;
- :mod:`.votes`: people judging the same pairs blind, their votes kept as they are cast;
- :mod:`.agreement`: people's win rates and their agreement with the LLM judge and each other;
- :mod:`.vote_report`: people's votes in the report, and as CSV.
"""

from .agreement import Agreement, cohen_kappa, people_and_judge, people_win_rates, people_with_each_other
from .choice import Choice, ChoicePoint, choose
from .claims import ClaimMetrics, claim_metrics, cluster_claims, extract_claims, rouge_l_f1
from .conditions import Condition, parse_conditions
from .drilldown import Drilldown, DrilldownCall, DrilldownSide, drilldown, drilldown_choices
from .experiment import EvalProgress, estimate_experiment, run_experiment
from .presets import PRESETS, conditions_text, lazy_conditions, paper_conditions, preset_conditions
from .judge import CRITERIA, DEFAULT_CRITERIA, JudgeCall, PairJudgment, is_heuristic, judge_pair, parse_judge_output, validate_criteria
from .questions import EvalQuestion, QuestionCounts, QuestionSet, generate_questions, load_questions, parse_questions
from .results import AnswerRecord, ExperimentEstimate, ExperimentResult, JudgmentRecord, WinRate
from .spec import ExperimentSpec
from .statistics import holm, wilcoxon_p
from .store import EvaluationStore, evaluation_store_path
from .votes import Vote, VoteStore, VoteTask, order_shown, vote_tasks

__all__ = [
    "CRITERIA",
    "DEFAULT_CRITERIA",
    "PRESETS",
    "Agreement",
    "AnswerRecord",
    "Choice",
    "ChoicePoint",
    "ClaimMetrics",
    "Condition",
    "Drilldown",
    "DrilldownCall",
    "DrilldownSide",
    "EvalProgress",
    "EvalQuestion",
    "EvaluationStore",
    "ExperimentEstimate",
    "ExperimentResult",
    "ExperimentSpec",
    "JudgeCall",
    "JudgmentRecord",
    "PairJudgment",
    "QuestionCounts",
    "QuestionSet",
    "WinRate",
    "choose",
    "Vote",
    "VoteStore",
    "VoteTask",
    "claim_metrics",
    "cohen_kappa",
    "cluster_claims",
    "conditions_text",
    "drilldown",
    "drilldown_choices",
    "estimate_experiment",
    "evaluation_store_path",
    "extract_claims",
    "generate_questions",
    "holm",
    "is_heuristic",
    "judge_pair",
    "load_questions",
    "lazy_conditions",
    "paper_conditions",
    "parse_conditions",
    "parse_judge_output",
    "order_shown",
    "parse_questions",
    "preset_conditions",
    "people_and_judge",
    "people_win_rates",
    "people_with_each_other",
    "rouge_l_f1",
    "run_experiment",
    "validate_criteria",
    "vote_tasks",
    "wilcoxon_p",
]
