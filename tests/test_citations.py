import asyncio
import json

import pytest

from graphrag_core import GlobalSearchRequest, ScriptedChatModel, retrieve_global
from graphrag_core.calls import batch_call, batch_calls, reduce_call, why_no_answer
from graphrag_core.citations import (
    CommunitySets,
    check_citations,
    cited_community_ids,
    community_sets,
    find_citations,
)
from graphrag_core.events import events_from_json, events_to_json

from .factories import small_index


@pytest.mark.parametrize(
    ("text", "ids", "more"),
    [
        ("Wizards know systems [Communities: 12, 45].", ["12", "45"], False),
        ("A point [Community: 3]", ["3"], False),
        ("A point [Community 12]", ["12"], False),
        ("A point [Communities 3, 4]", ["3", "4"], False),
        ("A point [Community IDs: 1, 2]", ["1", "2"], False),
        ("A point [Data: Reports (12, 45, +more)].", ["12", "45"], True),
        ("A point [Data: Reports (3); Entities (5)]", ["3"], False),
        ("A point [Data: Communities (7)]", ["7"], False),
        ("A point [Reports: 3, 4]", ["3", "4"], False),
        ("A point [data: reports (9)]", ["9"], False),
        ("A point [Communities: 1, 2 and 3]", ["1", "2", "3"], False),
    ],
)
def test_every_citation_form_is_found(text, ids, more):
    citations = find_citations(text)
    assert len(citations) == 1
    citation = citations[0]
    assert list(citation.community_ids) == ids
    assert citation.more is more
    assert text[citation.start : citation.end] == citation.text
    for reference in citation.references:
        assert text[reference.start : reference.end] == reference.id


def test_data_citation_keeps_entity_and_relationship_references():
    text = "Text [Data: Entities (10, 11); Relationships (3)] more"
    (citation,) = find_citations(text)
    assert citation.community_ids == ()
    assert [(r.kind, r.id) for r in citation.references] == [("entity", "10"), ("entity", "11"), ("relationship", "3")]


def test_prose_in_brackets_is_not_a_citation():
    assert find_citations("See [Community report about the mill] and [Communities: none of them]") == []
    assert find_citations("no citations [here] or [Data: nothing]") == []


def test_cited_ids_in_order_of_first_citation():
    text = "a [Communities: 5, 3] b [Data: Reports (3, 9)] c [Community 5]"
    assert cited_community_ids(text) == ["5", "3", "9"]


def test_unsupported_ids_are_flagged_with_their_reason():
    text = "a [Communities: 3, 4] b [Communities: 99, 5] c [Communities: 99]"
    unsupported = check_citations(text, behind={"3", "4"}, index_ids={"3", "4", "5"})
    assert [(u.community_id, u.reason, u.count) for u in unsupported] == [("99", "not_in_index", 2), ("5", "not_behind", 1)]
    # without the index's ids, an id is only checked against the answers behind it
    assert [u.reason for u in check_citations(text, behind={"3", "4"})] == ["not_behind", "not_behind"]


def _ids_in(request):
    data = request.messages[-1].content
    return [part.split(" ")[0] for part in data.split("[Community ID: ")[1:]]


def _run(scores, reduce_answer, *, reduce_budget=6000, strategy="skip"):
    def reply(request):
        if request.purpose == "reduce":
            return json.dumps({"answer": reduce_answer})
        ids = _ids_in(request)
        return json.dumps({"answer": f"points from {','.join(ids)}" if max(scores.get(i, 0) for i in ids) else "", "usefulness": max(scores.get(i, 0) for i in ids)})

    events = []
    request = GlobalSearchRequest(
        query="q", seed=1, map_token_budget=400, map_output_reserve=100, reduce_output_reserve=10, reduce_token_budget=reduce_budget, reduce_strategy=strategy
    )
    result = asyncio.run(retrieve_global(small_index(), request, ScriptedChatModel(reply), on_event=events.append))
    return result, events


def test_three_sets_of_a_run_and_the_unsupported_count():
    result, events = _run({"3": 80, "4": 0, "5": 40}, "Wizards [Communities: 3] kludges [Data: Reports (5, 4, 77)]")
    assert [len(ids) for ids in result.diagnostics.batch_community_ids] == [1, 1, 1]  # one community per batch
    sets = community_sets(result, index_ids={c.id for c in small_index().communities})
    assert sets.cited == ("3", "5", "4", "77")
    assert set(sets.behind) == {"3", "5"}
    assert [(u.community_id, u.best_score, u.fate) for u in sets.read_but_unused] == [("4", 0.0, "dropped")]
    assert [(u.community_id, u.reason) for u in sets.unsupported] == [("4", "not_behind"), ("77", "not_in_index")]
    assert result.diagnostics.unsupported_citation_count == 2


def test_skipped_answers_are_read_but_unused_with_their_best_score():
    # a reduce budget that holds the skeleton and one candidate only
    result, _ = _run({"3": 80, "4": 60, "5": 40}, "x [Communities: 3]", reduce_budget=200)
    sets = community_sets(result)
    fates = {c.answer.community_ids[0]: c.fate for c in result.reduce_candidates}
    assert fates["3"] == "selected" and {fates["4"], fates["5"]} == {"skipped"}
    assert [(u.community_id, u.best_score, u.fate) for u in sets.read_but_unused] == [("4", 60.0, "skipped"), ("5", 40.0, "skipped")]
    batch_of = {c.answer.community_ids[0]: c.answer.batch_index for c in result.reduce_candidates}
    assert sets.to_json_dict()["read_but_unused"][0] == {"community_id": "4", "best_score": 60.0, "batches": [batch_of["4"]], "fate": "skipped"}


def test_events_carry_each_calls_messages_and_raw_replies():
    calls = {"n": 0}

    def reply(request):
        if request.purpose == "reduce":
            return '{"answer": "Done [Communities: 3]."}'
        calls["n"] += 1
        if "[Community ID: 3 " in request.messages[-1].content and calls.setdefault("bad", 0) == 0:
            calls["bad"] = 1
            return "Sorry, I cannot answer in JSON."
        return '{"answer": "a point", "usefulness": 50}'

    events = []
    request = GlobalSearchRequest(query="What is a wizard?", seed=1, map_token_budget=400, map_output_reserve=100)
    asyncio.run(retrieve_global(small_index(), request, ScriptedChatModel(reply), on_event=events.append))
    events = events_from_json(events_to_json(events))
    records = [batch_call(events, i) for i in range(3)]
    assert batch_calls(events) == records  # the one-pass form agrees
    retried = next(r for r in records if "3" in r.community_ids)
    assert "What is a wizard?" in retried.messages[-1].content and "[Community ID: 3 " in retried.messages[-1].content
    first, second = retried.attempts
    assert first.outcome == "error" and first.raw_reply == "Sorry, I cannot answer in JSON." and "not valid JSON" in first.error
    assert second.outcome == "ok" and second.raw_reply == '{"answer": "a point", "usefulness": 50}' and second.usefulness == 50
    assert retried.candidate is not None and retried.candidate.fate == "selected"
    reduce = reduce_call(events)
    assert "[Usefulness: 50; Community IDs:" in reduce.messages[-1].content
    assert [a.raw_reply for a in reduce.attempts] == ['{"answer": "Done [Communities: 3]."}']
    assert reduce.answer == "Done [Communities: 3]."
    assert batch_call(events, 7) is None
    assert why_no_answer(events) == []


def test_why_a_run_has_no_answer():
    result, events = _run({}, "unused")
    assert result.status == "no_results"
    (item,) = why_no_answer(events)
    assert item.reason == "all_scores_zero" and item.batch_indexes == (0, 1, 2)


def test_why_a_partial_run_names_unparsed_replies_and_failed_batches():
    def reply(request):
        if request.purpose == "reduce":
            return '{"answer": "Partial [Communities: 3]."}'
        if "[Community ID: 5 " in request.messages[-1].content:
            return '{"answer": {"usefulness": 0.1, "descriptive_text": "x"}}'  # JSON, not the map's shape
        return '{"answer": "a point", "usefulness": 50}'

    events = []
    request = GlobalSearchRequest(query="q", seed=1, map_token_budget=400, map_output_reserve=100)
    result = asyncio.run(retrieve_global(small_index(), request, ScriptedChatModel(reply), on_event=events.append))
    assert result.status == "partial"
    items = {item.reason: item for item in why_no_answer(events)}
    failed = next(f.batch_index for f in result.failed_batches)
    assert items["unparsed_reply"].batch_indexes == (failed,)
    assert all('"descriptive_text": "x"' in text for text in items["unparsed_reply"].texts)
    assert len(items["unparsed_reply"].texts) == 2  # both attempts, each with its reply
    assert items["failed_batch"].batch_indexes == (failed,)
    call = batch_call(events, failed)
    assert [a.outcome for a in call.attempts] == ["error", "error"] and call.candidate is None


def test_a_bundle_of_a_run_cut_short_reopens_as_interrupted():
    from graphrag_core.bundle import bundle_to_json, make_bundle, read_bundle
    from graphrag_core.history import RunRecord

    _, events = _run({"3": 80}, "x [Communities: 3]")
    cut = [e for e in events if e.kind not in ("run_finished", "reduce_replied", "reduce_started")]
    bundle = read_bundle(bundle_to_json(make_bundle(RunRecord.from_events(cut, index_name="small"))))
    assert bundle.status == "running" and bundle.index.fingerprint is None
    assert bundle.to_record().status == "interrupted"


def test_the_first_followable_community_is_the_first_cited_one_a_selected_answer_carried():
    # Evaluate links one community per answer: a cited one when it can be followed (the old link
    # took the first community behind the answer, which the answer may not cite at all)
    assert CommunitySets(cited=("z", "b"), behind=("a", "b")).first_followable() == ("b", "cited")
    assert CommunitySets(cited=("z",), behind=("a", "b")).first_followable() == ("a", "behind")
    assert CommunitySets(cited=("z",)).first_followable() is None


def test_a_stopped_run_says_it_was_stopped_in_words_not_by_its_error_type():
    from graphrag_core.events import RunFailed
    from graphrag_core.state import BatchStatus
    from graphrag_core.status import RunStatus

    _, events = _run({}, "unused")
    planned = [e for e in events if e.kind in ("run_started", "summaries_selected", "batches_planned")]
    stopped = [*planned, RunFailed(error="The run was stopped before it finished.", error_type="RunCancelled", cancelled=True)]
    (item,) = why_no_answer(stopped)
    assert item.message == "The run was stopped before it produced an answer; the batches it finished are kept."
    assert "RunCancelled" not in item.message and "ended" not in item.message
    failed = [*planned, RunFailed(error="Every Global Map batch failed.", error_type="AllMapBatchesFailed")]
    assert why_no_answer(failed)[-1].message == "The run failed: Every Global Map batch failed."
    assert RunStatus.CANCELLED.why_heading == "Why the run stopped" and RunStatus.NO_RESULTS.why_heading == "Why the run found no results"
    assert BatchStatus.CANCELLED.word == RunStatus.CANCELLED.word == "stopped"
