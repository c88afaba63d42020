"""The support check (graphrag_core.support, issue 41): each point of a finished run's answer
judged against the texts it cites, by the offline (lexical) judge and the model judge; every
quote verbatim; the wrong community named; bounded, cached, never a crash."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest

from graphrag_core import GlobalSearchRequest, GlobalSearchResult, ScriptedChatModel, retrieve_global
from graphrag_core.cache import MemoryMapCache
from graphrag_core.context import parse_support_prompt
from graphrag_core.errors import RequestValidationError, SupportOutputError
from graphrag_core.index import load_index
from graphrag_core.llm.base import ChatRequest
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.models import Index
from graphrag_core.samples import sample_path
from graphrag_core.sentences import split_sentences
from graphrag_core.spending import SpendingLimit
from graphrag_core.tokens import HeuristicTokenizer
from graphrag_core.support import (
    SUPPORTED_COVERAGE,
    SupportCheck,
    SupportSettings,
    check_support,
    estimate_support,
    find_quote,
    forecast_support,
    marked_answer,
    offline_support,
    unit_text,
)
from graphrag_core.support.lexical import SentencePool, judge_point, unit_sentences
from graphrag_core.support.model_judge import parse_support_output
from graphrag_core.support.units import SupportUnit, claim_text

JARGON_QUESTION = "What kinds of bugs do hackers talk about?"
TEA_QUESTION = "茶是怎样从中国传到世界各地的？"
MADE_UP = "Hackers invented the telephone in 1876 to order pizza from Mars."
MADE_UP_ZH = "茶叶最早由罗马皇帝在火星上种植。"


@pytest.fixture(scope="module")
def jargon() -> Index:
    return load_index(sample_path("jargon"))


@pytest.fixture(scope="module")
def tea() -> Index:
    return load_index(sample_path("zh-tea"))


def _run(index: Index, question: str, level: int = 1, seed: int = 3) -> GlobalSearchResult:
    return asyncio.run(retrieve_global(index, GlobalSearchRequest(query=question, community_level=level, seed=seed), OfflineChatModel()))


@pytest.fixture(scope="module")
def jargon_run(jargon: Index) -> GlobalSearchResult:
    return _run(jargon, JARGON_QUESTION)


@pytest.fixture(scope="module")
def tea_run(tea: Index) -> GlobalSearchResult:
    return _run(tea, TEA_QUESTION)


def _read(result: GlobalSearchResult) -> list[str]:
    return list(dict.fromkeys(i for ids in result.diagnostics.batch_community_ids for i in ids))


def _with_answer(result: GlobalSearchResult, *lines: str) -> GlobalSearchResult:
    return result.model_copy(update={"answer": "\n".join(f"- {line}" for line in lines)})


def _quotes_are_verbatim(index: Index, check: SupportCheck) -> None:
    for point in check.points:
        for evidence in (*point.evidence, *point.elsewhere):
            text = unit_text(index, evidence.kind, evidence.id)
            assert text is not None and text[evidence.start : evidence.end] == evidence.quote, evidence
            assert find_quote(text, evidence.quote) is not None


def _summary_sentence(index: Index, community_id: str, n: int) -> str:
    return split_sentences(index.community(community_id).summary)[n]


# -- the offline judge on the bundled samples -------------------------------------------------


def test_on_the_jargon_sample_a_copied_sentence_is_supported_and_a_made_up_one_unsupported(jargon: Index, jargon_run: GlobalSearchResult) -> None:
    cid = _read(jargon_run)[0]
    copied = _summary_sentence(jargon, cid, 1)
    claim = next(c for c in jargon.leaf_claims(cid) if len(split_sentences(c.description)) == 1)
    result = _with_answer(jargon_run, f"{copied} [Communities: {cid}]", f"{MADE_UP} [Communities: {cid}]", f"{claim.description} [Data: Reports ({cid})]")
    check = offline_support(jargon, result)
    assert [p.verdict for p in check.points] == ["supported", "unsupported", "supported"]
    assert check.points[0].evidence[0].quote == copied and check.points[0].coverage == 1.0
    assert check.points[1].evidence == () and "of its words at most" in check.points[1].reason
    assert claim.description in check.points[2].evidence[0].quote
    assert check.summary_line() == "2 of 3 points supported" and check.share == pytest.approx(2 / 3)
    _quotes_are_verbatim(jargon, check)


def test_on_the_tea_sample_a_copied_sentence_is_supported_and_a_made_up_one_unsupported(tea: Index, tea_run: GlobalSearchResult) -> None:
    cid = _read(tea_run)[0]
    copied = _summary_sentence(tea, cid, 1)
    result = _with_answer(tea_run, f"{copied} [Communities: {cid}]", f"{MADE_UP_ZH} [Communities: {cid}]")
    check = offline_support(tea, result)
    assert [p.verdict for p in check.points] == ["supported", "unsupported"]
    assert check.points[0].evidence[0].quote == copied
    _quotes_are_verbatim(tea, check)


def test_a_right_sentence_under_another_communitys_id_is_not_supported_and_the_right_one_is_named(
    jargon: Index, jargon_run: GlobalSearchResult
) -> None:
    right, wrong, cited_elsewhere = _read(jargon_run)[0], _read(jargon_run)[-1], _read(jargon_run)[1]
    sentence = _summary_sentence(jargon, right, 1)
    other = _summary_sentence(jargon, cited_elsewhere, 1)
    result = _with_answer(jargon_run, f"{sentence} [Communities: {wrong}]", f"{other} [Communities: {wrong}]", f"Something [Communities: {cited_elsewhere}]")
    first, second, _ = offline_support(jargon, result).points
    assert first.verdict != "supported" and first.supported_by[0] == right
    assert f"community {right} (the run read it)" in first.reason
    assert first.elsewhere[0].community_id == right and first.elsewhere[0].quote == sentence
    assert second.supported_by[0] == cited_elsewhere and f"community {cited_elsewhere} (another point cites it)" in second.reason


def test_an_id_the_index_lacks_supports_nothing_and_says_so(tea: Index, tea_run: GlobalSearchResult) -> None:
    cid = _read(tea_run)[0]
    result = _with_answer(tea_run, f"{_summary_sentence(tea, cid, 1)} [Communities: 9999]")
    (point,) = offline_support(tea, result).points
    assert point.verdict == "unsupported" and point.reason.startswith("Community 9999 is not in the index.")
    assert point.supported_by == (cid,)


def test_the_offline_answers_own_points_are_supported_with_verbatim_quotes(jargon: Index, tea: Index, jargon_run, tea_run) -> None:
    for index, result in ((jargon, jargon_run), (tea, tea_run)):
        check = offline_support(index, result)
        assert check.points and all(p.verdict == "supported" for p in check.points), check.summary_line()
        assert len(check.uncited) == 1  # the overview line cites nothing
        _quotes_are_verbatim(index, check)


def test_the_offline_judges_thresholds_partial_and_scattered_words() -> None:
    unit = SupportUnit("summary", "1", "1", "Alpha beta gamma delta. Epsilon zeta eta theta. Iota kappa.")
    pool = SentencePool.of([unit, SupportUnit("summary", "2", "2", "Mu nu xi omicron.")])  # every word in one sentence: equal weights
    sentences = unit_sentences(unit)
    whole = judge_point(pool.weights("Alpha beta gamma delta."), sentences)
    assert whole.verdict == "supported" and whole.coverage == 1.0 >= SUPPORTED_COVERAGE
    half = judge_point(pool.weights("Alpha beta mu nu."), sentences)
    assert half.verdict == "partial" and half.coverage == pytest.approx(0.5)
    scattered = judge_point(pool.weights("Alpha epsilon iota."), sentences)  # one word from each sentence
    assert scattered.coverage == 1.0 and scattered.verdict == "partial"  # no one quote holds half
    assert judge_point(pool.weights("the of and"), sentences).checkable is False


def test_a_paragraph_answer_is_cut_into_sentences_and_marked_where_each_point_ends(jargon: Index, jargon_run: GlobalSearchResult) -> None:
    cid = _read(jargon_run)[0]
    copied = _summary_sentence(jargon, cid, 1)
    answer = f"An opening line. {copied} [Communities: {cid}] {MADE_UP} [Communities: {cid}]"
    check = offline_support(jargon, jargon_run.model_copy(update={"answer": answer}))
    assert check.uncited == ("An opening line.",)
    assert marked_answer(answer, check) == (
        f"An opening line. {copied} [Communities: {cid}] [✓ supported] {MADE_UP} [Communities: {cid}] [✗ not supported]"
    )


def test_claims_and_chunks_are_units_and_quotes_are_found_whitespace_aside(jargon: Index) -> None:
    claim = jargon.claims[0]
    assert unit_text(jargon, "claim", claim.id) == claim_text(claim) == f"{claim.subject}: {claim.description}"
    assert find_quote("Alpha  beta\ngamma.", "Alpha beta gamma.") == (0, 18)
    assert find_quote("茶起源于中国。", "茶起源 于中国。") == (0, 7)
    assert find_quote("Alpha beta", "alpha beta") is None and find_quote("x", "  ") is None


# -- the model judge ----------------------------------------------------------------------------


def _script(decide: Callable[[int, list[str], str, dict[str, str]], dict]) -> Callable[[ChatRequest], str]:
    """A model judge whose entry for each point is ``decide(number, cited, point, texts)``."""

    def reply(request: ChatRequest) -> str:
        assert request.purpose == "support" and request.output_schema is not None and request.max_tokens
        texts, points = parse_support_prompt(request.messages[-1].content)
        by_key = {f"{kind} {uid}": text for kind, uid, _, text in texts}
        return json.dumps({"points": [{"point": n, **decide(n, cited, text, by_key)} for n, cited, text in points]})

    return reply


def test_the_model_judge_keeps_found_quotes_and_downgrades_for_one_not_found(jargon: Index, jargon_run: GlobalSearchResult) -> None:
    cid = _read(jargon_run)[0]
    copied = _summary_sentence(jargon, cid, 1)
    result = _with_answer(jargon_run, f"{copied} [Communities: {cid}]", f"Another claim [Communities: {cid}]")

    def decide(n: int, cited: list[str], point: str, texts: dict[str, str]) -> dict:
        words = copied.replace(" ", "  ") if n == 1 else "words the summary never had"
        return {"verdict": "supported", "evidence": [{"kind": "summary", "id": cid, "quote": words}], "reason": f"point {n}"}

    model = ScriptedChatModel(_script(decide))
    check = asyncio.run(check_support(jargon, result, "model", model=model))
    first, second = check.points
    assert first.verdict == "supported" and first.evidence[0].quote == copied and first.reason == "point 1"
    assert second.verdict == "unsupported" and second.evidence == ()
    assert any("dropped (not found there)" in note for note in second.notes)
    assert check.judge == "model" and check.judged_by == "scripted" and check.calls == 1 == model.calls
    _quotes_are_verbatim(jargon, check)


def test_a_quote_from_a_text_the_point_does_not_cite_is_dropped(jargon: Index, jargon_run: GlobalSearchResult) -> None:
    one, two = _read(jargon_run)[:2]
    result = _with_answer(jargon_run, f"{_summary_sentence(jargon, two, 1)} [Communities: {one}]", f"Other [Communities: {two}]")

    def decide(n: int, cited: list[str], point: str, texts: dict[str, str]) -> dict:
        return {"verdict": "supported", "evidence": [{"kind": "summary", "id": two, "quote": _summary_sentence(jargon, two, 1)}], "reason": ""}

    check = asyncio.run(check_support(jargon, result, "model", model=ScriptedChatModel(_script(decide))))
    assert check.points[0].verdict == "unsupported" and "a text the point does not cite" in check.points[0].notes[0]
    assert check.points[0].supported_by == (two,)  # the offline judge's search names it
    assert check.points[1].verdict == "supported"


def test_an_unusable_reply_is_retried_then_leaves_its_points_unjudged_without_losing_the_check(jargon: Index, jargon_run: GlobalSearchResult) -> None:
    cid = _read(jargon_run)[0]
    result = _with_answer(jargon_run, f"{_summary_sentence(jargon, cid, 1)} [Communities: {cid}]")
    model = ScriptedChatModel(["not json at all", json.dumps({"points": [{"point": 7, "verdict": "maybe"}]})])
    check = asyncio.run(check_support(jargon, result, "model", model=model))
    (point,) = check.points
    assert model.calls == 2 and "Your previous reply" in model.requests[1].messages[0].content  # retried with what was wrong
    assert point.verdict == "unsupported" and point.error and "could not be used" in point.error
    assert check.failed_calls == 1 and check.unjudged == 1 and "1 point not judged" in check.detail_line()


def test_replies_are_parsed_strictly(jargon: Index) -> None:
    good = {"points": [{"point": 1, "verdict": "partial", "evidence": [{"kind": "claim", "id": 12, "quote": "q"}], "reason": "r"}]}
    assert parse_support_output(json.dumps(good), [1])[1].quotes[0].id == "12"
    for bad in ({"points": []}, {"points": [{"point": 1, "verdict": "yes", "evidence": []}]}, {"point": 1},
                {"points": [{"point": 1, "verdict": "supported", "evidence": [{"kind": "entity", "id": "1", "quote": "q"}]}]}):
        with pytest.raises(SupportOutputError, match="Support check output must be a JSON object"):
            parse_support_output(json.dumps(bad), [1])


def test_points_are_packed_into_calls_within_the_budget_and_replies_are_cached(jargon: Index, jargon_run: GlobalSearchResult) -> None:
    read = _read(jargon_run)
    lines = [f"{_summary_sentence(jargon, cid, 1)} [Communities: {cid}]" for cid in read[:6]]
    result = _with_answer(jargon_run, *lines)
    settings = SupportSettings(token_budget=200_000, max_points_per_call=4, concurrency=2)
    cache = MemoryMapCache()
    estimate = estimate_support(jargon, result, settings=settings)
    model = ScriptedChatModel(_script(lambda n, cited, point, texts: {
        "verdict": "supported", "evidence": [{"kind": "summary", "id": cited[0], "quote": point}], "reason": ""}))
    check = asyncio.run(check_support(jargon, result, "model", model=model, settings=settings, cache=cache))
    assert [len(parse_support_prompt(r.messages[-1].content)[1]) for r in model.requests] == [4, 2]
    assert estimate.calls == model.calls == check.calls == 2 and estimate.points == 6 and model.max_in_flight <= 2
    assert all(r.max_tokens == 64 + 300 * n for r, n in zip(model.requests, (4, 2)))
    assert [p.verdict for p in check.points] == ["supported"] * 6
    again = asyncio.run(check_support(jargon, result, "model", model=model, settings=settings, cache=cache))
    assert model.calls == 2 and again.cache_hits == 2 and again.calls == 0 and again.points == check.points
    assert estimate_support(jargon, result, model=model, settings=settings, cache=cache).cached_calls == 2
    tight = SupportSettings(token_budget=8000)
    calls = asyncio.run(check_support(jargon, result, "model", model=model, settings=tight))
    sent = model.requests[2:]
    assert calls.calls == len(sent) == estimate_support(jargon, result, settings=tight).calls > 2
    assert all(HeuristicTokenizer().count(r.prompt_text) <= 8000 for r in sent)
    assert sum(len(parse_support_prompt(r.messages[-1].content)[1]) for r in sent) == 6


def test_a_points_texts_that_do_not_fit_the_budget_are_left_out_and_said_so(jargon: Index, jargon_run: GlobalSearchResult) -> None:
    cid = max(_read(jargon_run), key=lambda c: len(jargon.leaf_claims(c)))
    result = _with_answer(jargon_run, f"{_summary_sentence(jargon, cid, 1)} [Communities: {cid}]")
    settings = SupportSettings(token_budget=1000)
    model = ScriptedChatModel(_script(lambda n, cited, point, texts: {"verdict": "unsupported", "evidence": [], "reason": ""}))
    (point,) = asyncio.run(check_support(jargon, result, "model", model=model, settings=settings)).points
    assert "cited texts were left out of the call (its token budget)" in point.notes[0]
    assert len(model.requests[0].messages[-1].content) < 6000


def test_at_the_spending_limit_no_call_is_sent_and_the_points_say_why(jargon: Index, jargon_run: GlobalSearchResult) -> None:
    cid = _read(jargon_run)[0]
    result = _with_answer(jargon_run, f"{_summary_sentence(jargon, cid, 1)} [Communities: {cid}]")
    model = ScriptedChatModel("{}")
    check = asyncio.run(check_support(jargon, result, "model", model=model, spending=SpendingLimit(100, what="support check")))
    assert model.calls == 0 and check.points[0].error and "the call was not sent" in check.points[0].error


def test_the_offline_model_as_the_model_judge_agrees_with_the_offline_judge(tea: Index, tea_run: GlobalSearchResult) -> None:
    cid = _read(tea_run)[0]
    result = _with_answer(tea_run, f"{_summary_sentence(tea, cid, 1)} [Communities: {cid}]", f"{MADE_UP_ZH} [Communities: {cid}]")
    by_model = asyncio.run(check_support(tea, result, "model", model=OfflineChatModel()))
    assert [p.verdict for p in by_model.points] == [p.verdict for p in offline_support(tea, result).points] == ["supported", "unsupported"]
    _quotes_are_verbatim(tea, by_model)


def test_costs_before_the_answer_and_bad_settings(jargon: Index) -> None:
    forecast = forecast_support(jargon, GlobalSearchRequest(query="q", community_level=1))
    assert forecast.forecast and forecast.points == 8 and forecast.calls >= 1 and forecast.prompt_tokens > 0
    assert forecast.text().startswith("support check (model judge): about ")
    with pytest.raises(RequestValidationError, match="max_points_per_call"):
        SupportSettings(max_points_per_call=0)
    with pytest.raises(RequestValidationError, match="token_budget"):
        SupportSettings(token_budget=10)
    with pytest.raises(ValueError, match="needs a model"):
        asyncio.run(check_support(jargon, GlobalSearchResult.model_validate(_empty_result()), "model"))


def _empty_result() -> dict:
    request = GlobalSearchRequest(query="q", community_level=1)
    diagnostics = dict(community_level=1, summary_count=0, batch_count=0, batch_community_ids=[], batch_usefulness=[], failed_batch_count=0,
                       selected_answer_count=0, reduce_prompt_tokens=None, map_prompt_budget=1, reduce_prompt_budget=1, seed=0)
    return dict(status="no_results", answer="", query="q", community_level=1, seed=0, request=request, diagnostics=diagnostics)


def test_a_run_with_no_results_has_no_points(jargon: Index) -> None:
    check = offline_support(jargon, GlobalSearchResult.model_validate(_empty_result()))
    assert check.points == () and check.share is None and check.summary_line() == "No point of the answer cites anything to check"


def test_a_text_method_runs_points_are_checked_against_the_chunks_they_cite(tea: Index) -> None:
    request = GlobalSearchRequest(query=TEA_QUESTION, method="text", seed=1)
    result = asyncio.run(retrieve_global(tea, request, OfflineChatModel()))
    check = offline_support(tea, result)
    assert check.unit == "source" and check.points and all(p.verdict == "supported" for p in check.points)
    assert all(e.kind == "chunk" for p in check.points for e in p.evidence)
    _quotes_are_verbatim(tea, check)


def test_the_support_prompts_texts_and_points_read_back_as_written() -> None:
    from graphrag_core.context import format_support_point_header, format_support_prompt, format_support_text_header

    texts = [(format_support_text_header("summary", "98", "98"), "line one\nline two"),
             (format_support_text_header("claim", "c1", "98"), "stale: pointer"),
             (format_support_text_header("chunk", "d1-1", "12", unit="source"), "茶。")]
    points = [(format_support_point_header(1, ["98"]), "A point."), (format_support_point_header(2, ["3", "4"]), "B  point.")]
    assert [h for h, _ in texts] == ["[summary 98]", "[claim c1 · community 98]", "[chunk d1-1 · source 12]"]
    assert points[1][0] == "[Point 2 · cites communities 3, 4]"
    read_texts, read_points = parse_support_prompt(format_support_prompt(texts, points))
    assert read_texts == [("summary", "98", "98", "line one\nline two"), ("claim", "c1", "98", "stale: pointer"), ("chunk", "d1-1", "12", "茶。")]
    assert read_points == [(1, ["98"], "A point."), (2, ["3", "4"], "B point.")]


def test_the_offline_check_is_the_same_whatever_the_hash_seed() -> None:
    """Sums of weights over sets of terms are exactly rounded, so a tie between two quotes goes
    the same way in every process (the hash seed changes the order a set iterates in)."""
    import os
    import subprocess
    import sys

    script = (
        "import asyncio; from graphrag_core import GlobalSearchRequest, retrieve_global; from graphrag_core.index import load_index; "
        "from graphrag_core.samples import sample_path; from graphrag_core.llm.offline import OfflineChatModel; "
        "from graphrag_core.support import offline_support; i = load_index(sample_path('jargon')); "
        f"r = asyncio.run(retrieve_global(i, GlobalSearchRequest(query={JARGON_QUESTION!r}, community_level=1, seed=3), OfflineChatModel())); "
        "print(offline_support(i, r).model_dump_json(exclude={'checked_at'}))"
    )
    outputs = {
        subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True, check=True).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1
