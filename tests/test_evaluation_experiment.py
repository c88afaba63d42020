"""Question sets, conditions, experiments, statistics, claims and the offline heuristic
(evaluation spec sections 3-6)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from graphrag_core.errors import ClaimsOutputError, EvaluationError, QuestionsOutputError
from graphrag_core.evaluation import (
    CRITERIA,
    Condition,
    EvaluationStore,
    ExperimentSpec,
    claim_metrics,
    cluster_claims,
    estimate_experiment,
    generate_questions,
    holm,
    judge_pair,
    load_questions,
    rouge_l_f1,
    run_experiment,
)
from graphrag_core.evaluation.claims import extract_claims, parse_claims_output
from graphrag_core.evaluation.questions import EvalQuestion, parse_string_list
from graphrag_core.llm.base import ChatRequest
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.llm.scripted import ScriptedChatModel
from graphrag_core.history import RunStore

from .factories import small_index
from .test_evaluation_judge import shown


def run(coro):
    return asyncio.run(coro)


# -- question sets ----------------------------------------------------------------------------------


def test_jsonl_question_set_with_ids_tags_and_blank_lines(tmp_path: Path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": " What? ", "id": "a", "tags": ["x"]}\n\n{"question": "Why?", "tags": {"persona": "p"}}\n')
    questions = load_questions(path)
    assert [(q.id, q.question) for q in questions] == [("a", "What?"), ("q2", "Why?")]
    assert questions[0].tags == {"x": ""} and questions[1].tags == {"persona": "p"}


def test_a_blank_jsonl_question_names_the_file_as_given_and_the_physical_line(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("q.jsonl").write_text('{"question": "ok?"}\n\n{"question": "   "}\n')
    with pytest.raises(EvaluationError, match=r"^q\.jsonl:3: question must not be empty\.$"):
        load_questions("q.jsonl")
    Path("missing.jsonl").write_text('{"id": "1"}\n')
    with pytest.raises(EvaluationError, match=r"^missing\.jsonl:1: question must not be empty\.$"):
        load_questions("missing.jsonl")


def test_a_blank_csv_question_counts_the_header_as_line_1(tmp_path: Path):
    path = tmp_path / "q.csv"
    path.write_text('id,question\n1,"first\nspans two lines"\n2,\n')
    with pytest.raises(EvaluationError, match=rf"^{path}:4: question must not be empty\.$"):
        load_questions(str(path))
    path.write_text("id,question,tags\n1,What?,a;b\n")
    [question] = load_questions(path)
    assert question.question == "What?" and question.tags == {"a": "", "b": ""}


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("no.csv", "id,text\n1,x\n", "no.csv:1: the CSV needs a question column"),
        ("bad.jsonl", "{not json\n", "bad.jsonl:1: not valid JSON"),
        ("dup.jsonl", '{"id": "a", "question": "x"}\n{"id": "a", "question": "y"}\n', "dup.jsonl:2: duplicate question id a"),
        ("empty.jsonl", "\n", "no questions"),
    ],
)
def test_question_set_errors_name_the_file(tmp_path: Path, name: str, text: str, message: str):
    (tmp_path / name).write_text(text)
    with pytest.raises(EvaluationError, match=message):
        load_questions(tmp_path / name)


def test_the_bundled_question_sets_load():
    from graphrag_core.evaluation.questions import bundled_question_set

    for name in ("jargon", "zh-tea"):
        questions = load_questions(bundled_question_set(name))
        assert len(questions) >= 8
    assert any("\u4e00" <= ch <= "\u9fff" for ch in load_questions(bundled_question_set("zh-tea"))[0].question)
    assert bundled_question_set("nope") is None


# -- experiments ------------------------------------------------------------------------------------


def _answers_by_level(request: ChatRequest) -> str:
    """Map: usefulness 80 for every batch. Reduce: a longer answer from more map answers."""
    if request.purpose == "map":
        return json.dumps({"answer": "point", "usefulness": 80})
    content = request.messages[-1].content
    ids = [i for line in content.splitlines() if "Community IDs:" in line for i in line.split("Community IDs:")[1].strip(" ]").split(",")]
    return json.dumps({"answer": "detail " * len(ids)})


def _longer_wins(request: ChatRequest) -> dict:
    first, second = shown(request)
    if len(first) == len(second):
        return {"winner": 0}
    return {"winner": 1 if len(first) > len(second) else 2, "reason": "longer"}


def _spec(**fields) -> ExperimentSpec:
    questions = [EvalQuestion(id=f"q{i}", question=f"What about topic {i}?") for i in range(1, 5)]
    conditions = [Condition.parse("C0:level=0"), Condition.parse("C2:level=2")]
    return ExperimentSpec(**{"questions": questions, "conditions": conditions, "seeds": [1, 2], **fields})


def test_the_longer_condition_wins_100_and_aa_is_50(tmp_path: Path):
    answerer, judge = ScriptedChatModel(_answers_by_level), ScriptedChatModel(_longer_wins)
    result = run(run_experiment(small_index(), _spec(), answerer, judge, store=EvaluationStore(tmp_path / "e.sqlite")))
    for criterion in CRITERIA:
        assert result.win_rate(criterion, "C2", "C0").win_rate == 100.0  # level 2 has more batches
        assert result.win_rate(criterion, "C0", "C2").win_rate == 0.0
        assert result.win_rate(criterion, "C0", "C0").win_rate == 50.0  # A/A
        assert result.win_rate(criterion, "C2", "C0").judgments == 8  # 4 questions x 2 seeds
        assert result.win_rate(criterion, "C2", "C0").questions == 4
    assert len(result.answers) == 2 * 4 * 2
    assert all(a.status == "completed" for a in result.answers)
    # (4 questions x 2 seeds x 1 pair + 4 questions x 2 conditions A/A) x 2 orders x 4 criteria
    assert result.judge_calls == (8 + 8) * 2 * 4
    assert judge.calls < result.judge_calls  # the same prompt (same answers) is judged once, then reused
    assert not result.heuristic_judge


def test_a_position_biased_judge_gives_50_everywhere():
    result = run(run_experiment(small_index(), _spec(seeds=[1]), ScriptedChatModel(_answers_by_level), ScriptedChatModel('{"winner": 1}')))
    rates = [w for w in result.win_rates]
    assert rates and all(w.win_rate == 50.0 for w in rates)
    assert all(w.p_value == 1.0 for w in rates)


def test_p_values_are_holm_corrected_per_criterion():
    spec = _spec(seeds=[1], conditions=[Condition.parse("C0:level=0"), Condition.parse("C1:level=1"), Condition.parse("C2:level=2")])
    result = run(run_experiment(small_index(), spec, ScriptedChatModel(_answers_by_level), ScriptedChatModel(_longer_wins)))
    rates = [w for w in result.win_rates if w.criterion == "diversity" and w.row < w.col]
    raw = [w.p_value for w in rates]
    assert [w.p_holm for w in rates] == pytest.approx(holm(raw))


def test_cost_per_condition_and_share_of_the_most_expensive():
    result = run(run_experiment(small_index(), _spec(seeds=[1]), ScriptedChatModel(_answers_by_level), ScriptedChatModel('{"winner": 0}')))
    c0, c2 = result.costs
    assert (c0.summaries, c2.summaries) == (1, 3)  # one root; three non-blank leaves (and one blank)
    assert c0.calls["map"] == c0.batches and c0.calls["reduce"] == 1
    assert c2.total_prompt_tokens > c0.total_prompt_tokens
    assert c2.share == 1.0 and 0 < c0.share < 1
    assert c0.share == pytest.approx(c0.total_prompt_tokens / c2.total_prompt_tokens)


def test_an_interrupted_experiment_resumes_with_only_what_is_missing(tmp_path: Path):
    store = EvaluationStore(tmp_path / "e.sqlite")
    spec = _spec(seeds=[1])
    calls = {"n": 0}

    def stop_after_some() -> bool:
        calls["n"] += 1
        return calls["n"] > 8  # 8 answers, then stop before any judgment

    first = run(run_experiment(small_index(), spec, ScriptedChatModel(_answers_by_level), ScriptedChatModel(_longer_wins), store=store, should_stop=stop_after_some))
    assert first.stopped and len(first.answers) == 8 and not first.judgments
    answerer, judge = ScriptedChatModel(_answers_by_level), ScriptedChatModel(_longer_wins)
    second = run(run_experiment(small_index(), spec, answerer, judge, store=store))
    assert answerer.calls == 0  # every answer was kept
    assert judge.calls == 4 * 2 * 4
    third_judge = ScriptedChatModel(_longer_wins)
    third = run(run_experiment(small_index(), spec, ScriptedChatModel(_answers_by_level), third_judge, store=store))
    assert third_judge.calls == 0
    assert third.win_rates == second.win_rates
    assert store.get_experiment(second.id) is not None


def test_failed_answers_are_kept_and_not_judged(tmp_path: Path):
    def level0_fails(request: ChatRequest) -> str:
        if request.purpose == "map" and "Everything about hackers" in request.prompt_text:
            return "not json"
        return _answers_by_level(request)

    result = run(run_experiment(small_index(), _spec(seeds=[1]), ScriptedChatModel(level0_fails), ScriptedChatModel('{"winner": 1}')))
    failed = [a for a in result.answers if a.status == "failed"]
    assert failed and all(a.condition == "C0" and a.error == "Every Global Map batch failed." for a in failed)
    assert all(j.skipped and "answer failed" in j.skipped for j in result.judgments)
    assert result.win_rate("diversity", "C2", "C0").win_rate is None


def test_answers_go_to_the_run_store_with_a_label(tmp_path: Path):
    runs = RunStore(tmp_path / "runs.sqlite")
    result = run(run_experiment(small_index(), _spec(seeds=[1]), ScriptedChatModel(_answers_by_level), ScriptedChatModel('{"winner": 1}'), run_store=runs))
    record = runs.get(result.answers[0].run_id)
    assert record is not None and record.label.startswith(f"eval {result.id[:8]} · C0 · q1 · seed 1")


def test_the_estimate_counts_answer_judge_and_claims_calls():
    spec = _spec(seeds=[1, 2], claims=True)
    estimate = estimate_experiment(small_index(), spec)
    assert estimate.judge_calls == (1 * 2 + 2 * 1) * 4 * 2 * 4
    assert estimate.claims_calls == 2 * 4 * 2
    answerer = ScriptedChatModel(_answers_by_level)
    run(run_experiment(small_index(), spec, answerer, OfflineChatModel()))
    assert estimate.answer_calls == answerer.calls
    quick = estimate_experiment(small_index(), spec, every_question=False)
    assert quick.judge_calls == estimate.judge_calls and quick.answer_calls == estimate.answer_calls  # same-length questions


# -- claims -----------------------------------------------------------------------------------------


def test_rouge_l_and_single_linkage():
    assert rouge_l_f1("the cat sat on the mat", "the cat sat on the mat") == 1.0
    assert rouge_l_f1("a b c d", "a b x y") == pytest.approx(0.5)
    assert rouge_l_f1("", "x") == 0.0
    # a~b and b~c link a and c (single linkage) though a and c are far apart
    a, b, c = "one two three four", "one two three five", "six two three five"
    assert rouge_l_f1(a, c) < 0.6
    assert len(cluster_claims([a, b, c], threshold=0.6)) == 1
    assert len(cluster_claims([a, "seven eight nine ten"], threshold=0.5)) == 2


def test_chinese_is_compared_by_characters():
    from graphrag_core.evaluation.claims import rouge_units

    assert rouge_units("Tea 茶叶, 𠀀𠀁!") == ["tea", "茶", "叶", "𠀀", "𠀁"]  # extension B characters too
    assert rouge_l_f1("绿茶不发酵", "绿茶不经发酵") == pytest.approx(2 * (5 / 5) * (5 / 6) / (5 / 5 + 5 / 6))
    assert rouge_l_f1("红茶全发酵", "绿茶不发酵") == pytest.approx(0.6)  # 茶, 发, 酵
    metrics = claim_metrics(["绿茶不发酵", "绿茶不经发酵", "红茶全发酵", "绿茶不发酵 "], threshold=0.7)
    assert metrics.comprehensiveness == 3
    assert metrics.diversity == 2


def test_threshold_range():
    with pytest.raises(EvaluationError, match="threshold must be between 0.5 and 0.8"):
        claim_metrics(["a"], threshold=0.9)


def test_claims_parsing_and_extraction():
    assert parse_claims_output('{"claims": [" a ", "", "b"]}') == ["a", "b"]
    with pytest.raises(ClaimsOutputError, match=r"^Claims output must contain a list of strings claims\.$") as caught:
        parse_claims_output('{"claims": "a"}')
    assert caught.value.reply_start == "The reply began: '{\"claims\": \"a\"}'"
    with pytest.raises(ClaimsOutputError, match=r"^LLM output is not valid JSON: no claims here\.\.\.$"):
        parse_claims_output("no claims here")
    model = ScriptedChatModel('{"claims": ["x"]}')
    claims, _ = run(extract_claims("Some answer.", model))
    assert claims == ["x"] and model.requests[0].purpose == "claims"


def test_experiment_with_claims_reports_per_condition_metrics():
    result = run(run_experiment(small_index(), _spec(seeds=[1], claims=True), OfflineChatModel(), OfflineChatModel()))
    assert {c.condition for c in result.claims} == {"C0", "C2"}
    assert all(a.claims is not None for a in result.answers)


def test_claims_that_cannot_be_listed_are_recorded_kept_and_reported(tmp_path: Path):
    """A claims reply that is not JSON leaves its answer out of the metrics, never silently."""
    from graphrag_core.evaluation.report import to_markdown

    def judge(request: ChatRequest) -> str:
        if request.purpose == "claims":
            return "no claims here" if "detail detail" in request.prompt_text else '{"claims": ["one", "two"]}'
        return '{"winner": 0}'

    store = EvaluationStore(tmp_path / "e.sqlite")
    result = run(run_experiment(small_index(), _spec(seeds=[1], claims=True), ScriptedChatModel(_answers_by_level), ScriptedChatModel(judge), store=store))
    unlisted = result.claim_failures()
    assert unlisted and {a.condition for a in unlisted} == {"C2"}  # level 2's answers repeat "detail"
    assert all(a.claims is None and a.claims_error == "LLM output is not valid JSON: no claims here..." for a in unlisted)
    assert [c.condition for c in result.claims] == ["C0"]
    kept = store.get_experiment(result.id)
    assert kept is not None and kept.claim_failures() == unlisted
    markdown = to_markdown(result)
    assert "## Claims not listed" in markdown
    assert "| C2 | q1 | 1 | LLM output is not valid JSON: no claims here... |" in markdown
    again = ScriptedChatModel(judge)
    run(run_experiment(small_index(), _spec(seeds=[1], claims=True), ScriptedChatModel(_answers_by_level), again, store=store))
    assert len(again.calls_for("claims")) == 2 * len(unlisted)  # the listed ones are kept; the others asked again (two attempts each)


def test_the_estimate_is_a_typed_model_whose_total_is_its_calls():
    estimate = estimate_experiment(small_index(), _spec(seeds=[1, 2], claims=True))
    assert estimate.total == estimate.answer_calls + estimate.judge_calls + estimate.claims_calls
    assert (estimate.answers, estimate.judgments) == (2 * 4 * 2, (1 * 2 + 2 * 1) * 4)
    assert list(estimate.model_dump()) == ["answers", "answer_calls", "judgments", "judge_calls", "claims_calls", "total"]
    assert estimate_experiment(small_index(), _spec(seeds=[1])).claims_calls == 0


def test_the_evaluation_store_lives_beside_the_run_history(tmp_path: Path):
    from graphrag_core.evaluation import evaluation_store_path

    assert evaluation_store_path(tmp_path / "runs.sqlite3") == tmp_path / "evaluations.sqlite3"
    assert evaluation_store_path(str(tmp_path / "deeper" / "history.db")) == tmp_path / "deeper" / "evaluations.sqlite3"


# -- question generation ----------------------------------------------------------------------------


def test_question_generation_replies_that_are_not_json_get_the_global_search_message():
    with pytest.raises(QuestionsOutputError, match=r"^LLM output is not valid JSON: Here are five personas\.\.\.$"):
        parse_string_list("Here are five personas", "personas")
    assert parse_string_list('{"personas": [" a ", "a", "b"]}', "personas") == ["a", "b"]


def test_generate_questions_keeps_persona_and_task_as_tags():
    def script(request: ChatRequest) -> dict:
        user = request.messages[-1].content
        if "---Step---\npersonas" in user:
            return {"personas": ["P1", "P2", "P3"]}
        if "---Step---\ntasks" in user:
            persona = user.split("---Persona---\n")[1].split("\n")[0]
            return {"tasks": [f"{persona}-T1", f"{persona}-T2"]}
        task = user.split("---Task---\n")[1].split("\n")[0]
        return {"questions": [f"{task} Q1?", f"{task} Q2?", f"{task} Q3?"]}

    model = ScriptedChatModel(script)
    questions = run(generate_questions(small_index(), model, personas=2, tasks=2, per_task=2))
    assert len(questions) == 2 * 2 * 2
    assert questions[0].question == "P1-T1 Q1?" and questions[0].tags == {"persona": "P1", "task": "P1-T1"}
    assert {r.purpose for r in model.requests} == {"questions"}
    assert "Hacker culture" in model.requests[0].prompt_text  # the root summary describes the corpus
    with pytest.raises(EvaluationError, match="personas must be a positive integer"):
        run(generate_questions(small_index(), model, personas=0))


def test_a_generated_question_set_says_how_many_were_asked_for_kept_and_why_the_rest_were_dropped():
    def script(request: ChatRequest) -> dict:
        user = request.messages[-1].content
        if "---Step---\npersonas" in user:
            return {"personas": ["P1", "P2"]}  # 2 of 3
        if "---Step---\ntasks" in user:
            persona = user.split("---Persona---\n")[1].split("\n")[0]
            return {"tasks": [f"{persona}-T1", f"{persona}-T2"] if persona == "P1" else [f"{persona}-T1"]}  # 3 of 4
        task = user.split("---Task---\n")[1].split("\n")[0]
        return {"questions": ["What is shared?", f"{task} Q?"]}  # 2 of 3, one the same for every task

    generated = run(generate_questions(small_index(), ScriptedChatModel(script), personas=3, tasks=2, per_task=3))
    counts = generated.counts
    assert (counts.asked, counts.kept, len(generated)) == (18, 4, 4)
    assert (counts.short_personas, counts.short_tasks, counts.short_questions, counts.duplicates) == (1, 1, 3, 2)
    assert counts.asked == counts.kept + counts.duplicates + counts.short_questions + counts.short_tasks * 3 + counts.short_personas * 2 * 3
    assert counts.summary() == (
        "asked for 18 questions (3 personas × 2 tasks × 3 per task), kept 4: "
        "the model proposed 2 of 3 personas, so 6 questions were never asked; "
        "it proposed 3 of 4 tasks for those personas, so 3 questions were never asked; "
        "it proposed 6 of the 9 questions asked for those tasks; "
        "2 questions repeated another and were dropped"
    )


# -- offline heuristic ------------------------------------------------------------------------------


def test_offline_judge_is_position_blind_and_ties_identical_answers():
    model = OfflineChatModel()
    same = run(judge_pair("What are hackers like?", "Hackers explore systems.", "Hackers explore systems.", model))
    assert same.scores == {c: 50.0 for c in CRITERIA}
    assert all(c.winner == 0 for c in same.calls)
    rich = "Hackers explore systems [Communities: 4]. Wizards know complex software [Communities: 3]. Kludges are ugly fixes [Communities: 5]."
    judgment = run(judge_pair("What are hackers like?", rich, "Hackers.", model))
    for call in judgment.calls:
        assert call.reason.startswith("heuristic")
    # each criterion's two calls agree on the answer, whatever its position
    for criterion in CRITERIA:
        ab, ba = [c for c in judgment.calls if c.criterion == criterion]
        assert ab.score_a == ba.score_a
    assert judgment.scores["comprehensiveness"] == 100.0
    assert judgment.scores["directness"] == 0.0  # the paper's control favours the short answer


def test_offline_claims_and_questions():
    claims, _ = run(extract_claims("Hackers explore systems [Communities: 4]. Wizards know software.", OfflineChatModel()))
    assert claims == ["Hackers explore systems.", "Wizards know software."]
    from graphrag_core.index import load_index
    from graphrag_core.samples import sample_path

    questions = run(generate_questions(load_index(sample_path("jargon")), OfflineChatModel(), personas=2, tasks=2, per_task=3))
    assert len(questions) == 12 and all(q.question.endswith("?") for q in questions)
    assert len({q.question for q in questions}) == len(questions)
    assert all(set(q.tags) == {"persona", "task"} for q in questions)


def test_offline_experiment_aa_is_exactly_50():
    spec = ExperimentSpec(questions=[EvalQuestion(id="1", question="What are the main themes?")], conditions=[Condition(name="leaf")], seeds=[1, 2])
    result = run(run_experiment(small_index(), spec, OfflineChatModel(), OfflineChatModel()))
    assert result.heuristic_judge
    assert all(w.win_rate == 50.0 for w in result.win_rates)


def test_an_answers_cost_is_read_from_its_runs_figures(tmp_path: Path):
    """No counting wrapper: an answer costs what its run's figures say, a failed one too."""
    from graphrag_core.errors import RetryableModelError

    def reduce_down_at_level_0(request: ChatRequest):
        if request.purpose == "reduce" and "Community IDs: 0]" in request.messages[-1].content:
            return RetryableModelError("503 reduce")  # level 0's one map answer, from the root
        return _answers_by_level(request)

    runs = RunStore(tmp_path / "runs.sqlite3")
    spec = _spec(seeds=[1], questions=[EvalQuestion(id="q1", question="What about topic 1?")])
    result = run(run_experiment(small_index(), spec, ScriptedChatModel(reduce_down_at_level_0), ScriptedChatModel('{"winner": 0}'), run_store=runs))
    by_condition = {a.condition: a for a in result.answers}
    assert by_condition["C0"].status == "failed" and by_condition["C2"].status == "completed"
    for answer in result.answers:
        figures = runs.get(answer.run_id).figures
        assert answer.cost.calls == {"map": figures.map_calls + figures.cache_hits, "reduce": figures.reduce_calls}
        assert answer.cost.prompt_tokens["map"] == figures.map_prompt_tokens and answer.cost.batches == figures.batches
    failed = by_condition["C0"].cost
    assert failed.calls["reduce"] == 2 and failed.prompt_tokens["reduce"] > 0  # both attempts, at the planned reduce prompt


def test_two_unanswered_answers_are_not_judged_and_are_reported_as_unanswered():
    from graphrag_core.evaluation.report import to_markdown

    def level0_finds_nothing(request: ChatRequest) -> str:
        if request.purpose == "map" and "Everything about hackers" in request.prompt_text:
            return json.dumps({"answer": "", "usefulness": 0})
        return _answers_by_level(request)

    judge = ScriptedChatModel('{"winner": 1}')
    result = run(run_experiment(small_index(), _spec(seeds=[1, 2]), ScriptedChatModel(level0_finds_nothing), judge))
    unanswered = [a for a in result.answers if a.status == "no_results"]
    assert unanswered and all(a.condition == "C0" for a in unanswered)
    aa = [j for j in result.judgments if j.row == j.col == "C0"]
    assert aa and all(j.judgment is None and j.skipped and j.skipped.startswith("unanswered") for j in aa)
    assert result.win_rate("diversity", "C0", "C0").win_rate is None  # not a 50 from two identical texts
    assert result.win_rate("diversity", "C2", "C0").judgments == 8  # an answer against none is still judged
    c0 = next(c for c in result.costs if c.condition == "C0")
    assert c0.unanswered == len(unanswered)
    report = to_markdown(result)
    assert "## Unanswered" in report and "planned estimates" in report and "reported tokens" in report


def test_the_cost_table_keeps_reported_tokens_beside_the_planned_estimates():
    from graphrag_core.llm.base import ChatResponse, TokenUsage

    def reported(request: ChatRequest) -> ChatResponse:
        return ChatResponse(text=_answers_by_level(request), usage=TokenUsage(prompt_tokens=1000, completion_tokens=10))

    result = run(run_experiment(small_index(), _spec(seeds=[1]), ScriptedChatModel(reported), ScriptedChatModel('{"winner": 0}')))
    c0 = next(c for c in result.costs if c.condition == "C0")
    calls = c0.calls["map"] + c0.calls["reduce"]
    assert c0.reported_tokens == 1010 * calls and c0.total_prompt_tokens < c0.reported_tokens
