"""Choosing a condition (evaluation spec section 8), the paper's preset and TS/SS as conditions
(section 7), end to end with a scripted answering model and a scripted judge whose answer is known:

- comprehensiveness: TS beats C0 beats SS on every question;
- directness: TS and C0 tie, both beat SS;
- diversity: TS beats C0 on odd questions and loses on even ones; both beat SS;
- empowerment: TS beats C0 on questions 1-5 and loses on 6-8 (better, not significantly); both beat SS.

With eight questions, a pair won on every question has the exact Wilcoxon p = 2/2^8, Holm-corrected
over three pairs 0.023 < 0.05: significant.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from pathlib import Path

import pytest

from graphrag_core.errors import EvaluationError, NoSourceChunksError
from graphrag_core.evaluation import (
    PRESETS,
    Condition,
    ExperimentSpec,
    choose,
    conditions_text,
    estimate_experiment,
    paper_conditions,
    parse_conditions,
    preset_conditions,
    run_experiment,
)
from graphrag_core.evaluation.choice import CHOICE_FIELDS, bootstrap_intervals, pareto_front
from graphrag_core.evaluation.questions import EvalQuestion
from graphrag_core.evaluation.report import choice_csv, costs_csv, to_markdown
from graphrag_core.index import load_index
from graphrag_core.llm.base import ChatRequest
from graphrag_core.llm.scripted import ScriptedChatModel
from graphrag_core.models import Community, Index
from graphrag_core.samples import sample_path

from .factories import small_index
from .test_evaluation_judge import shown

QUALITY = {"TS": 3, "C0": 2, "SS": 1}
QUESTIONS = [EvalQuestion(id=f"q{i}", question=f"How do wizards, hackers and kludges relate, case {i}?") for i in range(1, 9)]


def run(coro):
    return asyncio.run(coro)


def answer_by_method(request: ChatRequest) -> dict:
    """Map: one point. The final call names what answered it (read from its system prompt) and
    the question's case number."""
    if request.purpose == "map":
        return {"answer": "a point", "usefulness": 60}
    system, user = request.messages[0].content, request.messages[-1].content
    case = re.search(r"case (\d+)", user).group(1)  # type: ignore[union-attr]
    method = "SS" if "most relevant first" in system else "TS" if "source text" in system else "C0"
    return {"answer": f"{method} answer to case {case}"}


def known_judge(request: ChatRequest) -> dict:
    """The known preferences of the module docstring, on both orders."""
    user = request.messages[-1].content
    criterion = re.search(r"\[Criterion: (\w+)\]", user).group(1)  # type: ignore[union-attr]
    first, second = shown(request)
    a, b = first.split()[0], second.split()[0]
    case = int(first.split()[-1])
    if {a, b} == {"TS", "C0"} and criterion == "directness":
        return {"winner": 0}
    if {a, b} == {"TS", "C0"} and criterion in ("diversity", "empowerment"):
        better = "TS" if (case % 2 if criterion == "diversity" else case <= 5) else "C0"
        return {"winner": 1 if a == better else 2}
    return {"winner": 1 if QUALITY[a] > QUALITY[b] else 2}


@pytest.fixture(scope="module")
def result():  # type: ignore[no-untyped-def]
    conditions = parse_conditions("C0: level=0, claims=false, sources=false\nTS: method=text\nSS: method=vector")
    spec = ExperimentSpec(questions=QUESTIONS, conditions=conditions, seeds=[1], criteria=["comprehensiveness", "directness", "diversity", "empowerment"])
    return run(run_experiment(small_index(), spec, ScriptedChatModel(answer_by_method), ScriptedChatModel(known_judge)))


def test_the_setup_costs_ss_below_c0_below_ts(result) -> None:  # type: ignore[no-untyped-def]
    cost = {c.condition: c for c in result.costs}
    assert cost["SS"].total_prompt_tokens < cost["C0"].total_prompt_tokens < cost["TS"].total_prompt_tokens
    assert (cost["C0"].method, cost["TS"].method, cost["SS"].method) == ("global", "text", "vector")
    assert cost["TS"].units == 3 and cost["C0"].units == 1 and 1 <= cost["SS"].units <= 3  # chunks mapped; one summary; chunks packed
    assert cost["SS"].calls == {"reduce": 1.0} and cost["TS"].calls["map"] >= 1
    assert cost["TS"].share == 1.0 and cost["TS"].share_of == "TS"  # the paper's Table 2: a share of TS
    assert cost["C0"].share == pytest.approx(cost["C0"].total_prompt_tokens / cost["TS"].total_prompt_tokens)


def test_a_condition_always_better_on_every_question_is_recommended(result) -> None:  # type: ignore[no-untyped-def]
    choice = {c.criterion: c for c in choose(result)}["comprehensiveness"]
    points = {p.condition: p for p in choice.points}
    assert {n: p.win_rate for n, p in points.items()} == {"C0": 50.0, "TS": 100.0, "SS": 0.0}
    assert {n: (p.ci_low, p.ci_high) for n, p in points.items()} == {"C0": (50.0, 50.0), "TS": (100.0, 100.0), "SS": (0.0, 0.0)}
    assert choice.best == "TS" and choice.recommended == "TS"
    assert points["C0"].below_best and points["SS"].below_best and points["C0"].p_vs_best == pytest.approx(3 * 2 / 2**8)
    assert {n for n, p in points.items() if p.pareto} == {"SS", "C0", "TS"}  # each is cheaper or better than the others
    assert "TS is best" in choice.sentence and "significantly below" in choice.sentence


def test_a_tie_with_the_best_recommends_the_cheaper_and_takes_the_dominated_off_the_front(result) -> None:  # type: ignore[no-untyped-def]
    choice = {c.criterion: c for c in choose(result)}["directness"]
    points = {p.condition: p for p in choice.points}
    assert (points["TS"].win_rate, points["C0"].win_rate, points["SS"].win_rate) == (75.0, 75.0, 0.0)
    assert choice.best == "C0" and choice.recommended == "C0"  # equal win rates: the cheaper is best
    assert not points["TS"].pareto and points["C0"].pareto and points["SS"].pareto  # TS costs more for the same
    assert points["SS"].below_best and not points["TS"].below_best
    assert choice.sentence.startswith("On directness, C0 is best")


def test_intervals_come_from_a_seeded_bootstrap_over_questions(result) -> None:  # type: ignore[no-untyped-def]
    choice = {c.criterion: c for c in choose(result)}["diversity"]
    ts = choice.point("TS")
    assert ts is not None and ts.win_rate == 75.0  # per question: 100 (odd) or 50 (even)
    assert 50.0 <= ts.ci_low < 75.0 < ts.ci_high <= 100.0
    assert choose(result) == choose(result)  # reproducible
    assert choice.recommended == "C0"  # C0 ties TS overall and is cheaper; TS is not significantly better


def test_the_cheapest_condition_not_significantly_below_the_best_is_recommended(result) -> None:  # type: ignore[no-untyped-def]
    choice = {c.criterion: c for c in choose(result)}["empowerment"]
    points = {p.condition: p for p in choice.points}
    assert points["TS"].win_rate == pytest.approx((5 / 8 * 100 + 100) / 2) and points["C0"].win_rate == pytest.approx((3 / 8 * 100 + 100) / 2)
    assert choice.best == "TS" and choice.recommended == "C0"  # TS wins 5 of 8: better, not significantly
    assert points["C0"].p_vs_best is not None and points["C0"].p_vs_best >= 0.05 and not points["C0"].below_best
    assert points["SS"].below_best and not points["SS"].recommended  # the cheapest, but significantly below
    assert "C0 (" in choice.sentence and "cheapest condition whose win rate is not significantly below the best's (TS" in choice.sentence


def test_the_choice_picture_is_an_svg_of_every_condition_with_the_recommendation(result) -> None:  # type: ignore[no-untyped-def]
    from xml.etree import ElementTree

    from graphrag_core.evaluation.choice_svg import RECOMMENDED_COLOR, choice_svg

    choice = {c.criterion: c for c in choose(result)}["empowerment"]
    tree = ElementTree.fromstring(choice_svg(choice))
    texts = [t.text for t in tree.iter("{http://www.w3.org/2000/svg}text")]
    assert "empowerment: cost against quality" in texts and "C0 (recommended)" in texts and {"TS", "SS"} <= set(texts)
    assert "prompt tokens per answer (log scale)" in texts and "Pareto front" in texts
    stars = [p for p in tree.iter("{http://www.w3.org/2000/svg}polygon") if p.get("fill") == RECOMMENDED_COLOR]
    assert len(stars) == 2  # the recommended point and its legend entry
    assert len(list(tree.iter("{http://www.w3.org/2000/svg}polyline"))) == 1  # the Pareto front
    odd = choice.model_copy(update={"criterion": "<b>&"})
    assert ElementTree.fromstring(choice_svg(odd)) is not None  # text is escaped


def test_bootstrap_of_two_opposite_questions_spans_both():
    intervals = bootstrap_intervals({"A": {"q1": [100.0], "q2": [0.0]}}, ["q1", "q2"])
    assert intervals["A"] == (0.0, 100.0)
    assert bootstrap_intervals({"A": {"q1": [100.0], "q2": [0.0], "q3": [50.0]}}, ["q1", "q2", "q3"], seed=7) == bootstrap_intervals(
        {"A": {"q1": [100.0], "q2": [0.0], "q3": [50.0]}}, ["q1", "q2", "q3"], seed=7
    )


def test_pareto_front_keeps_what_nothing_dominates():
    points = [("cheap", 1.0, 10.0), ("mid", 2.0, 50.0), ("dear", 3.0, 50.0), ("worse", 2.5, 20.0), ("best", 9.0, 90.0)]
    assert pareto_front(points) == {"cheap", "mid", "best"}


def test_the_report_and_the_choice_csv_carry_the_choice(result) -> None:  # type: ignore[no-untyped-def]
    markdown = to_markdown(result)
    assert "## Choosing a condition" in markdown and "**recommended**" in markdown
    assert result.ranker == "bm25" and "- Naive RAG (SS) ranks the source chunks by: BM25" in markdown
    assert "| TS | text (TS) | 3.0 source chunks |" in markdown and "share of TS" in markdown
    rows = list(csv.DictReader(io.StringIO(choice_csv(result))))
    assert tuple(rows[0]) == CHOICE_FIELDS == (
        "condition", "method", "criterion", "prompt_tokens_per_answer", "win_rate", "ci_low", "ci_high", "pareto", "recommended",
    )
    assert len(rows) == 3 * 4
    recommended = {(r["criterion"], r["condition"]) for r in rows if r["recommended"] == "True"}
    assert recommended == {("comprehensiveness", "TS"), ("directness", "C0"), ("diversity", "C0"), ("empowerment", "C0")}
    ts = next(r for r in rows if (r["criterion"], r["condition"]) == ("comprehensiveness", "TS"))
    assert ts["method"] == "text" and float(ts["win_rate"]) == 100.0 and float(ts["prompt_tokens_per_answer"]) > 0
    costs = list(csv.DictReader(io.StringIO(costs_csv(result))))
    assert {r["condition"]: r["share_of"] for r in costs} == {"C0": "TS", "TS": "TS", "SS": "TS"}


def test_a_heuristic_judge_says_the_choice_is_heuristic(result) -> None:  # type: ignore[no-untyped-def]
    heuristic = result.model_copy(update={"heuristic_judge": True})
    assert all(c.sentence.startswith("Heuristic choice") for c in choose(heuristic))
    assert "the choice is heuristic too" in to_markdown(heuristic)


def test_without_a_text_condition_the_share_is_of_the_most_expensive():
    spec = ExperimentSpec(questions=QUESTIONS[:2], conditions=parse_conditions("C0: level=0\nSS: method=vector"), seeds=[1])
    result = run(run_experiment(small_index(), spec, ScriptedChatModel(answer_by_method), ScriptedChatModel(known_judge)))
    costs = {c.condition: c for c in result.costs}
    dearest = max(costs.values(), key=lambda c: c.total_prompt_tokens)
    assert all(c.share_of == dearest.condition for c in costs.values()) and dearest.share == 1.0
    assert "(most expensive)" in to_markdown(result)


# -- the paper's preset ------------------------------------------------------------------------------


def test_the_papers_preset_fills_in_every_level_ts_ss_and_dynamic_selection():
    index = load_index(sample_path("jargon"))
    conditions = preset_conditions("paper", index)
    assert [c.name for c in conditions] == [f"C{level}" for level in index.levels()] + ["TS", "SS", "dynamic"]
    assert [c.method for c in conditions][-3:] == ["text", "vector", "global"]
    assert conditions[0].overrides == {"community_level": 0, "include_claims": False, "include_sources": False}
    assert parse_conditions(conditions_text(conditions)) == conditions == paper_conditions(index)
    assert "paper" in PRESETS
    with pytest.raises(EvaluationError, match="Unknown preset: nope"):
        preset_conditions("nope", index)


def test_an_index_without_chunks_refuses_ts_and_ss_before_anything_runs():
    index = Index(communities=[Community(id="r", level=0, summary="A root."), Community(id="a", level=1, parent_id="r", summary="A leaf.")])
    spec = ExperimentSpec(questions=QUESTIONS[:1], conditions=[Condition.parse("C0:level=0"), Condition.parse("TS:method=text")], seeds=[1])
    model = ScriptedChatModel(answer_by_method)
    with pytest.raises(NoSourceChunksError, match=r"^The index has no source chunks, so method text cannot run\.$"):
        estimate_experiment(index, spec)
    with pytest.raises(NoSourceChunksError):
        run(run_experiment(index, spec, model, model))
    assert model.calls == 0


def test_the_ranker_is_part_of_an_experiment_with_naive_rag():
    from graphrag_core.evaluation.keys import experiment_id

    spec = ExperimentSpec(questions=QUESTIONS[:1], conditions=parse_conditions("C0: level=0\nSS: method=vector"), seeds=[1])
    assert experiment_id(spec, "fp", "m", "j") == experiment_id(spec, "fp", "m", "j", ranker=None)
    assert experiment_id(spec, "fp", "m", "j", ranker="bm25") != experiment_id(spec, "fp", "m", "j", ranker="embedding:e@h")


def test_the_estimate_counts_one_call_per_naive_rag_answer():
    spec = ExperimentSpec(questions=QUESTIONS[:2], conditions=parse_conditions("SS: method=vector\nTS: method=text"), seeds=[1, 2], include_aa=False)
    estimate = estimate_experiment(small_index(), spec)
    assert estimate.answers == 8 and estimate.answer_calls == 2 * 2 * 1 + 2 * 2 * 2  # SS: one call; TS: one batch and the reduce


# -- the command line -----------------------------------------------------------------------------------


def test_eval_preset_paper_writes_the_choice_csv_and_names_the_recommendations(tmp_path: Path, run_db: Path):
    from graphrag_cli.main import main

    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps({"question": q.question, "id": q.id}) + "\n" for q in QUESTIONS[:3]))
    out, err = io.StringIO(), io.StringIO()
    report = tmp_path / "out" / "paper.md"
    code = main(
        ["eval", str(questions), "--index", "zh-tea", "--preset", "paper", "--condition", "wide:level=0,map_budget=4000", "--seeds", "1", "--out", str(report)],
        stdout=out, stderr=err, environ={"GRAPHRAG_EXPLORER_DB": str(run_db)},
    )
    assert code == 0, err.getvalue()
    rows = list(csv.DictReader((tmp_path / "out" / "paper.choice.csv").open()))
    zh = load_index(sample_path("zh-tea"))
    names = [f"C{level}" for level in zh.levels()] + ["TS", "SS", "dynamic", "wide"]
    assert [r["condition"] for r in rows if r["criterion"] == "comprehensiveness"] == names
    assert sum(r["recommended"] == "True" for r in rows) == 4  # one per criterion
    assert "## Choosing a condition" in report.read_text() and "chunks ranked by bm25" in err.getvalue()
    for criterion in ("comprehensiveness", "diversity", "empowerment", "directness"):
        picture = tmp_path / "out" / f"paper.choice-{criterion}.svg"
        assert f"](paper.choice-{criterion}.svg)" in report.read_text() and picture.read_text().startswith("<svg")
    assert err.getvalue().count("Heuristic choice (the offline judge is not an LLM)") == 4


def test_eval_refuses_a_setting_that_means_nothing_for_the_method(tmp_path: Path, run_db: Path):
    from graphrag_cli.main import main

    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "What?"}\n')
    err = io.StringIO()
    code = main(
        ["eval", str(questions), "--index", "zh-tea", "--condition", "TS:method=text,level=1", "--condition", "C0:level=0"],
        stdout=io.StringIO(), stderr=err, environ={"GRAPHRAG_EXPLORER_DB": str(run_db)},
    )
    assert code == 2 and "Condition TS: level does not apply to method text." in err.getvalue()
