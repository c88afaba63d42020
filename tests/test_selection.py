"""Dynamic community selection (shared/spec/dynamic-selection.md), against a scripted model
that rates by community id."""

import asyncio
import json
from collections import defaultdict

import pytest

from graphrag_core import (
    NO_RESULTS_ANSWER,
    BudgetError,
    Community,
    GlobalSearchRequest,
    Index,
    RatingOutputError,
    RequestValidationError,
    RunState,
    ScriptedChatModel,
    events_from_json,
    events_to_json,
    parse_rating_output,
    retrieve_global,
    stream_global,
)
from graphrag_core.cache import MemoryMapCache
from graphrag_core.events import CommunityRated, SelectionFinished, SelectionRound, SelectionStarted
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.selection import expand_blanks, first_frontier, majority_rating, rating_request
from graphrag_core.tokens import get_tokenizer

from .factories import small_index


def rated_id(request):
    """The community id of a rating call: the ``[Community ID: x]`` line of its data."""
    lines = request.messages[-1].content.splitlines()
    header = next(line for line in lines if line.startswith("[Community ID: "))
    return header[len("[Community ID: ") : -1]


def map_ids(request):
    data = request.messages[-1].content
    return [part.split(" ")[0] for part in data.split("[Community ID: ")[1:]]


def rater(ratings, *, default=0):
    """A scripted model rating each community by id.

    ``ratings[id]`` is a rating, an exception, or a list consumed one call per repeat/attempt.
    Map calls answer with their community ids; the reduce says "final".
    """
    calls = defaultdict(int)

    def reply(request):
        if request.purpose == "rate":
            cid = rated_id(request)
            value = ratings.get(cid, default)
            if isinstance(value, list):
                value = value[calls[cid]]
            calls[cid] += 1
            if isinstance(value, BaseException):
                return value
            if isinstance(value, str):
                return value
            return {"rating": value, "reason": f"because {cid}"}
        if request.purpose == "map":
            return {"answer": "points from " + ",".join(map_ids(request)), "usefulness": 50}
        return {"answer": "final"}

    return ScriptedChatModel(reply)


def dynamic(**fields):
    return GlobalSearchRequest(query="Who are the wizards?", community_selection="dynamic", seed=3, **fields)


def run(request, model, index=None, **kwargs):
    events = []
    result = asyncio.run(retrieve_global(index or small_index(), request, model, on_event=events.append, **kwargs))
    return result, events


def fates(result):
    return result.diagnostics.fates()


def mapped_ids(model):
    return sorted(i for r in model.calls_for("map") for i in map_ids(r))


# -- the request -------------------------------------------------------------------------------


def test_defaults():
    request = GlobalSearchRequest(query="q")
    assert request.community_selection == "level"
    assert (request.rating_threshold, request.keep_parent, request.rating_repeats) == (1, False, 1)
    assert (request.fallback_max_level, request.rating_output_reserve) == (2, 256)
    assert request.rating_prompt_budget == 8000 - 256


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("community_selection", "auto", 'community_selection must be "level" or "dynamic".'),
        ("community_selection", None, 'community_selection must be "level" or "dynamic".'),
        ("rating_threshold", 6, "rating_threshold must be an integer from 0 to 5."),
        ("rating_threshold", -1, "rating_threshold must be an integer from 0 to 5."),
        ("rating_threshold", True, "rating_threshold must be an integer from 0 to 5."),
        ("rating_threshold", 1.0, "rating_threshold must be an integer from 0 to 5."),
        ("keep_parent", 1, "keep_parent must be true or false."),
        ("keep_parent", "true", "keep_parent must be true or false."),
        ("rating_repeats", 0, "rating_repeats must be a positive integer."),
        ("rating_repeats", True, "rating_repeats must be a positive integer."),
        ("rating_repeats", "2", "rating_repeats must be a positive integer."),
        ("fallback_max_level", -1, "fallback_max_level must be a non-negative integer."),
        ("fallback_max_level", False, "fallback_max_level must be a non-negative integer."),
        ("rating_output_reserve", -5, "rating_output_reserve must be a non-negative integer."),
        ("rating_output_reserve", 1.5, "rating_output_reserve must be a non-negative integer."),
    ],
)
def test_invalid_fields_are_rejected_with_the_spec_message(field, value, message):
    with pytest.raises(RequestValidationError) as caught:
        GlobalSearchRequest(query="q", **{field: value})
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


def test_valid_edge_values_are_accepted():
    GlobalSearchRequest(query="q", community_selection="dynamic", rating_threshold=0, rating_repeats=1, fallback_max_level=0, rating_output_reserve=0)
    GlobalSearchRequest(query="q", rating_threshold=5, keep_parent=True)


def test_rating_reserve_is_checked_against_the_map_budget_only_when_dynamic():
    with pytest.raises(BudgetError) as caught:
        GlobalSearchRequest(query="q", community_selection="dynamic", map_token_budget=300, map_output_reserve=10, rating_output_reserve=300)
    assert str(caught.value) == "Token budgets must exceed their output reserves."
    # a level request is validated exactly as before
    GlobalSearchRequest(query="q", map_token_budget=300, map_output_reserve=10, rating_output_reserve=300)


# -- the rating output ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rating", "reason"),
    [
        ('{"rating": 3, "reason": " partly "}', 3, "partly"),
        ('{"rating": 3.0}', 3, None),
        ('{"rating": 0}', 0, None),
        ('```json\n{"rating": 5, "reason": "yes"}\n```', 5, "yes"),
        ('Sure: {"reason": "x", "rating": 4} done', 4, "x"),
    ],
)
def test_valid_ratings(text, rating, reason):
    output = parse_rating_output(text)
    assert (output.rating, output.reason) == (rating, reason)


@pytest.mark.parametrize(
    "text",
    ['{"rating": true}', '{"rating": 3.5}', '{"rating": 6}', '{"rating": -1}', '{"rating": "3"}', '{"reason": "x"}', "[3]", "3", '{"rating": 2, "reason": 5}', pytest.param('{"rating": 1' + "0" * 400 + "}", id="integer-too-large-for-a-float")],
)
def test_ratings_of_any_other_shape_are_rejected(text):
    with pytest.raises(RatingOutputError) as caught:
        parse_rating_output(text)
    assert str(caught.value) == "Community rating output must contain an integer rating from 0 to 5."
    assert caught.value.reply_start == f"The reply began: {text[:200] + ('...' if len(text) > 200 else '')!r}"


def test_a_rating_that_is_not_json_gets_the_json_error():
    with pytest.raises(RatingOutputError) as caught:
        parse_rating_output("I would say four")
    assert str(caught.value) == "LLM output is not valid JSON: I would say four..."


# -- the rating prompt ----------------------------------------------------------------------------


def test_rating_prompt_holds_the_id_on_its_own_line_then_the_summary():
    community = small_index().community("3")
    request = rating_request("Who?", community, budget=7744, output_reserve=256, tokenizer=get_tokenizer("heuristic"))
    assert request.purpose == "rate" and request.max_tokens == 256 and request.json_mode
    lines = request.messages[-1].content.splitlines()
    position = lines.index("[Community ID: 3]")
    assert lines[position + 1] == community.summary
    assert "Who?" in request.messages[-1].content


def test_rating_prompt_cuts_the_summary_to_the_longest_prefix_that_fits():
    tokenizer = get_tokenizer("heuristic")
    community = Community(id="9", level=0, summary="word " * 400)
    empty = tokenizer.count(rating_request("q", Community(id="9", level=0, summary="x"), budget=10**6, output_reserve=1, tokenizer=tokenizer).prompt_text)
    budget = empty + 20
    request = rating_request("q", community, budget=budget, output_reserve=1, tokenizer=tokenizer)
    summary = request.messages[-1].content.split("[Community ID: 9]\n", 1)[1]
    assert tokenizer.count(request.prompt_text) <= budget
    assert community.summary.strip().startswith(summary) and 0 < len(summary) < len(community.summary.strip())
    longer = rating_request("q", Community(id="9", level=0, summary=community.summary.strip()[: len(summary) + 1]), budget=10**6, output_reserve=1, tokenizer=tokenizer)
    assert tokenizer.count(longer.prompt_text) > budget


def test_a_budget_that_cannot_hold_the_rating_prompt_fails_before_any_call():
    model = rater({})
    with pytest.raises(BudgetError) as caught:
        run(dynamic(map_token_budget=300, map_output_reserve=10, rating_output_reserve=200), model)
    assert str(caught.value) == "Map token budget cannot fit the rating prompt."
    assert model.calls == 0


# -- the walk ---------------------------------------------------------------------------------------


def test_relevant_children_supersede_their_parents_and_the_map_reads_the_kept():
    model = rater({"0": 3, "1": 4, "2": 0, "3": 5, "4": 0})
    result, events = run(dynamic(), model)
    assert result.status == "completed" and result.answer == "final"
    assert result.community_level == "dynamic" and result.diagnostics.community_level == "dynamic"
    assert fates(result) == {"0": "superseded", "1": "superseded", "2": "pruned", "3": "kept", "4": "pruned", "5": "unreached", "6": "unreached"}
    assert mapped_ids(model) == ["3"]
    ratings = {r.community_id: r for r in result.diagnostics.community_ratings}
    assert [ratings[i].round for i in "01234"] == [0, 1, 1, 2, 2]
    assert ratings["3"].rating == 5 and ratings["3"].reason == "because 3" and ratings["5"].round is None
    assert result.diagnostics.rating_calls == 5 == len(model.calls_for("rate"))
    assert [r for r in model.calls_for("rate")] and all(r.max_tokens == 256 for r in model.calls_for("rate"))


def test_threshold_decides_relevance():
    ratings = {"0": 2, "1": 2, "2": 1, "3": 1, "4": 2, "5": 3}
    low = run(dynamic(rating_threshold=1), rater(ratings))[0]
    assert fates(low) == {"0": "superseded", "1": "superseded", "2": "superseded", "3": "kept", "4": "kept", "5": "kept", "6": "skipped"}
    high = run(dynamic(rating_threshold=2), rater(ratings))[0]
    assert fates(high) == {"0": "superseded", "1": "superseded", "2": "pruned", "3": "pruned", "4": "kept", "5": "unreached", "6": "unreached"}


def test_keep_parent_keeps_every_relevant_community():
    model = rater({"0": 3, "1": 4, "2": 0, "3": 5, "4": 0})
    result, _ = run(dynamic(keep_parent=True), model)
    assert fates(result)["0"] == fates(result)["1"] == fates(result)["3"] == "kept"
    assert mapped_ids(model) == ["0", "1", "3"]


def test_repeats_take_the_majority_with_ties_to_the_lowest():
    assert majority_rating([3, 3, 1]) == 3
    assert majority_rating([4, 1]) == 1
    assert majority_rating([5, 2, 2, 5, 0]) == 2
    model = rater({"0": [4, 0, 4], "1": [0, 5, 0], "2": [2, 0, 5]})
    result, events = run(dynamic(rating_repeats=3, rating_threshold=1), model)
    ratings = {r.community_id: r for r in result.diagnostics.community_ratings}
    assert (ratings["0"].rating, ratings["0"].repeat_ratings) == (4, (4, 0, 4))
    assert ratings["1"].rating == 0 and ratings["1"].fate == "pruned"
    assert ratings["2"].rating == 0 and ratings["2"].fate == "pruned"  # a three-way tie goes to 0
    assert ratings["0"].fate == "kept" and ratings["0"].calls == 3
    assert result.diagnostics.rating_calls == 9


def test_a_community_whose_repeats_all_fail_is_kept_expanded_and_makes_the_run_partial():
    model = rater({"0": 3, "1": RuntimeError("rating down"), "2": "not json at all", "3": 0, "4": 0, "5": 0})
    result, events = run(dynamic(), model)
    ratings = {r.community_id: r for r in result.diagnostics.community_ratings}
    assert ratings["1"].fate == "failed" and ratings["1"].failed and ratings["1"].rating is None
    assert ratings["1"].calls == 2  # two attempts for its one repeat
    assert "rating down" in ratings["1"].errors[0]
    assert ratings["2"].fate == "failed" and "LLM output is not valid JSON" in ratings["2"].errors[0]
    assert ratings["0"].fate == "superseded"
    assert ratings["3"].fate == ratings["4"].fate == ratings["5"].fate == "pruned"  # children were still rated
    assert result.status == "partial" and result.diagnostics.failed_rating_count == 2
    assert mapped_ids(model) == ["1", "2"]
    rated = [e for e in events if isinstance(e, CommunityRated) and e.community_id == "1"]
    assert rated[0].failed and rated[0].rating is None and rated[0].kept


def test_one_failed_repeat_of_several_does_not_fail_the_community():
    model = rater({"0": [3, RuntimeError("x"), RuntimeError("y"), 3]}, default=0)
    result, _ = run(dynamic(rating_repeats=3, map_concurrency=1), model)  # one call at a time: replies in order
    record = result.diagnostics.community_ratings[0]
    assert record.rating == 3 and record.repeat_ratings[0] == 3 and record.repeat_ratings[1] is None
    assert not record.failed and record.fate == "kept"


def test_a_failed_community_that_a_child_supersedes_stays_failed_and_the_run_partial():
    model = rater({"0": RuntimeError("down"), "1": 4, "2": 0, "3": 0, "4": 0})
    result, _ = run(dynamic(), model)
    ratings = {r.community_id: r for r in result.diagnostics.community_ratings}
    assert ratings["0"].fate == "superseded" and ratings["0"].failed
    assert result.status == "partial"


def blank_middle_index():
    """Root A (blank) -> B, C; B -> D (blank) -> E; roots in index order A, F."""
    return Index(
        communities=[
            Community(id="A", level=0, summary=" "),
            Community(id="F", level=0, summary="Frogs and toads."),
            Community(id="C", level=1, parent_id="A", summary="Cats."),
            Community(id="B", level=1, parent_id="A", summary="Bats."),
            Community(id="D", level=2, parent_id="B", summary=""),
            Community(id="E", level=3, parent_id="D", summary="Echolocation of bats."),
        ]
    )


def test_blank_summaries_are_skipped_and_their_children_take_their_place_in_index_order():
    model = rater({"F": 0, "C": 0, "B": 2, "E": 3})
    result, events = run(dynamic(), model, index=blank_middle_index())
    rounds = [e for e in events if isinstance(e, SelectionRound)]
    assert [(r.round, r.community_ids, r.skipped_ids) for r in rounds] == [(0, ("F", "C", "B"), ("A",)), (1, ("E",), ("D",))]
    assert fates(result) == {"A": "skipped", "F": "pruned", "C": "pruned", "B": "superseded", "D": "skipped", "E": "kept"}
    assert all(rated_id(r) not in ("A", "D") for r in model.calls_for("rate"))
    assert mapped_ids(model) == ["E"]


def test_the_first_frontier_and_the_cost_estimate_pass_over_blanks_as_the_walk_does():
    index = blank_middle_index()
    assert expand_blanks(index, ["A", "F"]) == (["F", "C", "B"], ["A"])  # index order, not visiting order
    assert expand_blanks(index, ["D", "B", "D"]) == (["B", "E"], ["D"])  # each once
    assert [c.id for c in first_frontier(index)] == ["F", "C", "B"]


def test_fallback_rates_the_next_level_when_nothing_was_kept():
    model = rater({"0": 0, "1": 2, "2": 0, "3": 0, "4": 0})
    result, events = run(dynamic(), model)
    rounds = [e for e in events if isinstance(e, SelectionRound)]
    assert [(r.round, r.community_ids, r.fallback) for r in rounds] == [(0, ("0",), False), (1, ("1", "2"), True), (2, ("3", "4"), False)]
    # 1's nearest rated ancestor (0) was pruned, so nothing is superseded; its children were not relevant
    assert fates(result) == {"0": "pruned", "1": "kept", "2": "pruned", "3": "pruned", "4": "pruned", "5": "unreached", "6": "unreached"}
    assert mapped_ids(model) == ["1"]


def test_no_results_when_nothing_is_relevant_and_fallback_is_exhausted():
    model = rater({}, default=0)
    result, events = run(dynamic(fallback_max_level=1), model)
    assert result.status == "no_results" and result.answer == NO_RESULTS_ANSWER
    assert model.calls_for("map") == [] and model.calls_for("reduce") == []
    rounds = [e for e in events if isinstance(e, SelectionRound)]
    assert [r.round for r in rounds] == [0, 1]  # level 2 is beyond fallback_max_level
    assert set(fates(result).values()) <= {"pruned", "unreached"}
    assert result.diagnostics.rating_calls == 3
    no_fallback = run(dynamic(fallback_max_level=0), rater({}, default=0))[0]
    assert no_fallback.diagnostics.rating_calls == 1 and no_fallback.status == "no_results"


def test_rating_calls_stay_within_the_concurrency_across_a_round():
    index = Index(
        communities=[Community(id=str(i), level=0, summary=f"Summary {i}.") for i in range(9)]
    )
    model = ScriptedChatModel(
        lambda r: {"rating": 0} if r.purpose == "rate" else {"answer": "a", "usefulness": 1}, latency=0.01
    )
    run(dynamic(map_concurrency=3, rating_repeats=2), model, index=index)
    assert model.calls == 18 and model.max_in_flight == 3


def test_ratings_go_through_the_map_cache_with_the_repeat_in_the_key():
    cache = MemoryMapCache()
    first_model = rater({"0": 3, "1": 4, "2": 0, "3": 5, "4": 0})
    first, _ = run(dynamic(rating_repeats=2), first_model, cache=cache)
    assert first.diagnostics.rating_calls == 10  # each repeat is a call of its own
    again = rater({"0": 3, "1": 4, "2": 0, "3": 5, "4": 0})
    second, _ = run(dynamic(rating_repeats=2, reduce_token_budget=7000), again, cache=cache)
    assert again.calls_for("rate") == [] and again.calls_for("map") == []
    assert second.diagnostics.rating_calls == 0 and second.diagnostics.rating_cache_hits == 10
    assert fates(second) == fates(first)


def test_events_report_the_walk_and_the_state_folds_them():
    model = rater({"0": 3, "1": 4, "2": 0, "3": 5, "4": 0})
    result, events = run(dynamic(), model)
    kinds = [e.kind for e in events]
    assert kinds.index("selection_started") < kinds.index("community_rated") < kinds.index("selection_finished") < kinds.index("summaries_selected")
    started = next(e for e in events if isinstance(e, SelectionStarted))
    assert started.root_ids == ("0",) and started.rating_threshold == 1
    rated = {e.community_id: e for e in events if isinstance(e, CommunityRated)}
    assert rated["1"].superseded_id == "0" and rated["3"].superseded_id == "1"
    assert rated["2"].fate == "pruned" and not rated["2"].kept and rated["2"].round == 1
    assert rated["3"].repeat_ratings == (5,) and rated["3"].reason == "because 3" and rated["3"].calls == 1
    finished = next(e for e in events if isinstance(e, SelectionFinished))
    assert finished.kept_ids == ("3",) and finished.rated_count == 5 and finished.calls == 5
    state = RunState.replay(events_from_json(events_to_json(events)))
    assert state.selection.fates == fates(result)
    assert state.selection.ratings["3"].rating == 5 and state.selection.kept_ids == ("3",)
    assert state.result.community_level == "dynamic"


def test_rating_tokens_are_reported_apart_from_the_map_and_the_reduce():
    result, events = run(dynamic(), OfflineChatModel())
    d = result.diagnostics
    assert d.rating_usage.prompt_tokens > 0 and d.map_usage.prompt_tokens > 0 and d.reduce_usage.prompt_tokens > 0
    assert d.usage.prompt_tokens == d.rating_usage.prompt_tokens + d.map_usage.prompt_tokens + d.reduce_usage.prompt_tokens
    assert d.rating_usage == sum((e.usage for e in events if isinstance(e, CommunityRated)), start=type(d.usage)())


def test_stream_global_runs_dynamic_selection_too():
    async def collect():
        return [e async for e in stream_global(small_index(), dynamic(), rater({"0": 3, "1": 4, "2": 0, "3": 5, "4": 0}))]

    events = asyncio.run(collect())
    assert events[-1].kind == "run_finished" and events[-1].result.diagnostics.fates()["3"] == "kept"


def test_a_level_request_makes_no_rating_call():
    model = rater({})
    result, events = run(GlobalSearchRequest(query="q", seed=1), model)
    assert model.calls_for("rate") == [] and result.diagnostics.community_ratings == []
    assert not any(e.kind.startswith("selection") for e in events)


# -- the offline model's ratings ----------------------------------------------------------------------


def test_offline_model_rates_by_the_question_terms_in_the_summary():
    model = OfflineChatModel()
    tokenizer = get_tokenizer("heuristic")

    def rate(question, summary):
        request = rating_request(question, Community(id="1", level=0, summary=summary), budget=4000, output_reserve=256, tokenizer=tokenizer)
        return parse_rating_output(model.reply(request))

    assert rate("Who are the wizards?", "A wizard knows how a complex system works.").rating >= 3
    assert rate("Who are the wizards?", "A kludge is an ugly fix.").rating == 0
    partial = rate("How do wizards and kludges relate?", "A wizard knows how a complex system works.").rating
    full = rate("How do wizards and kludges relate?", "A wizard wrote a kludge; the kludge annoyed the wizard.").rating
    assert 1 <= partial < full <= 5
    assert rate("What are the main themes?", "Anything at all.").rating == 3
    assert rate("茶叶的产地", "云南是普洱茶叶的产地。").rating >= 3
    assert json.loads(model.reply(rating_request("Who?", Community(id="1", level=0, summary="x"), budget=4000, output_reserve=1, tokenizer=tokenizer)))["reason"]


def test_offline_dynamic_run_is_deterministic_and_reads_fewer_summaries_than_leaf():
    first, _ = run(dynamic(), OfflineChatModel())
    second, _ = run(dynamic(), OfflineChatModel())
    assert fates(first) == fates(second) and first.answer == second.answer
    assert fates(first)["3"] == "kept" and fates(first)["2"] == "pruned"
    assert first.diagnostics.summary_count < run(GlobalSearchRequest(query="Who are the wizards?", seed=3), OfflineChatModel())[0].diagnostics.summary_count


def test_a_budget_too_small_for_a_deeper_community_fails_before_any_call():
    tokenizer = get_tokenizer("heuristic")
    long_id = "x" * 400
    index = Index(communities=[Community(id="r", level=0, summary="Root."), Community(id=long_id, level=1, parent_id="r", summary="Child.")])
    empty = tokenizer.count(rating_request("Who are the wizards?", Community(id="r", level=0, summary=""), budget=10**6, output_reserve=1, tokenizer=tokenizer).prompt_text)
    model = rater({"r": 5})
    with pytest.raises(BudgetError, match="^Map token budget cannot fit the rating prompt.$"):
        run(dynamic(map_token_budget=empty + 20 + 256, map_output_reserve=10), model, index=index)
    assert model.calls == 0


def test_the_summary_goes_into_the_rating_prompt_as_it_is():
    summary = "  Wizards, spaced out.  \n"
    request = rating_request("q", Community(id="7", level=0, summary=summary), budget=7744, output_reserve=256, tokenizer=get_tokenizer("heuristic"))
    assert request.messages[-1].content.endswith("[Community ID: 7]\n" + summary)


def test_event_and_diagnostics_token_figures():
    result, events = run(dynamic(), OfflineChatModel())
    rated = [e for e in events if isinstance(e, CommunityRated)]
    finished = next(e for e in events if isinstance(e, SelectionFinished))
    assert finished.tokens == sum(e.tokens for e in rated) == result.diagnostics.rating_usage.total_tokens
    assert finished.rated_count == len(rated)
    d = result.diagnostics
    assert d.rating_prompt_tokens + d.rating_completion_tokens == finished.tokens


def test_run_figures_count_the_rating_calls_and_tokens():
    from graphrag_core.figures import run_figures

    result, events = run(dynamic(), OfflineChatModel())
    d = result.diagnostics
    live = run_figures([e for e in events if e.kind != "run_finished"])  # a run cut short still counts them
    assert live.rating_calls == d.rating_calls > 0 and live.rating_usage == d.rating_usage
    figures = run_figures(events)
    assert figures.rating_calls == d.rating_calls and figures.community_level == "dynamic"
    assert figures.model_calls == d.rating_calls + d.map_calls + d.reduce_calls
    assert figures.usage == d.usage and figures.prompt_tokens > figures.map_prompt_tokens


def test_an_invalid_rating_reply_is_retried_with_feedback_and_every_attempts_usage_counts():
    """Rating calls go through the engine's one retry loop (``retry.complete_with_retry``)."""
    from graphrag_core.figures import run_figures
    from graphrag_core.llm.base import ChatResponse, TokenUsage

    bad = '{"rating": 9, "reason": "far too high"}'
    replies = {"0": iter([bad, '{"rating": 4, "reason": "wizards"}'])}

    def reply(request):
        if request.purpose == "rate":
            cid = rated_id(request)
            text = next(replies[cid]) if cid in replies else '{"rating": 0}'
            return ChatResponse(text=text, usage=TokenUsage(prompt_tokens=100, completion_tokens=7))
        if request.purpose == "map":
            return {"answer": "points", "usefulness": 50}
        return {"answer": "final"}

    model = ScriptedChatModel(reply)
    result, events = run(dynamic(), model)
    first, second = model.calls_for("rate")[:2]
    assert rated_id(first) == rated_id(second) == "0"
    assert second.messages[-1] == first.messages[-1]  # the question and summary stay the last message
    system = second.messages[0].content
    assert system.startswith(first.messages[0].content) and bad in system
    assert "rating" in system.split("---What was wrong with it---")[1]  # the rating error, said to the model
    rated = next(e for e in events if isinstance(e, CommunityRated) and e.community_id == "0")
    assert rated.rating == 4 and not rated.failed and rated.calls == 2
    assert rated.usage == TokenUsage(prompt_tokens=200, completion_tokens=14)  # the refused attempt's tokens count too
    d = result.diagnostics
    assert d.rating_calls == len(model.calls_for("rate")) and d.rating_usage.prompt_tokens == 100 * d.rating_calls
    assert run_figures(events).rating_usage == d.rating_usage


def test_a_rating_call_that_fails_twice_is_failed_after_the_policy_backoff():
    from graphrag_core.errors import RetryableModelError
    from graphrag_core.retry import RetryPolicy

    delays = []

    async def sleep(delay):
        delays.append(delay)

    model = rater({"0": RetryableModelError("503 busy")}, default=0)
    result, _ = run(dynamic(), model, retry_policy=RetryPolicy(sleep=sleep, random=lambda: 1.0))
    record = result.diagnostics.community_ratings[0]
    assert record.failed and record.calls == 2 and "503 busy" in record.errors[0]
    assert delays == [0.5]  # the run's retry policy, not a fixed one


def test_a_cached_dynamic_rerun_spends_as_if_uncached_what_the_first_run_spent_on_ratings():
    from graphrag_core.figures import run_figures

    cache = MemoryMapCache()
    _, first_events = run(dynamic(), OfflineChatModel(), cache=cache)
    _, again_events = run(dynamic(), OfflineChatModel(), cache=cache)
    first, again = run_figures(first_events), run_figures(again_events)
    assert again.rating_calls == 0 and again.rating_cache_hits == first.rating_calls > 0
    spend = again.spend
    assert spend.cache_hits == again.cache_hits + again.rating_cache_hits and spend.tokens_estimated
    assert spend.calls_as_if_uncached == first.spend.calls  # the same seed: every call of the first run
    assert again.rating_cached_prompt_tokens == first.rating_usage.prompt_tokens  # the offline model counts as the estimate
    # the map batches' planned estimates stand for their reported prompt tokens
    assert spend.tokens_as_if_uncached.prompt_tokens == pytest.approx(first.usage.prompt_tokens, rel=0.01)
