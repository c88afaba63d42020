from graphrag_core import (
    MapAnswer,
    estimate_tokens,
    format_reduce_candidate,
    plan_reduce,
    select_reduce_answers,
)

SKELETON = "Combine the answers.\n---Data---\n"


def answer(text, usefulness, *ids):
    return MapAnswer(answer=text, usefulness=usefulness, community_ids=tuple(ids))


def test_candidate_format():
    assert format_reduce_candidate(answer("Points.", 85.0, "1", "2")) == "[Usefulness: 85; Community IDs: 1, 2]\nPoints."
    assert format_reduce_candidate(answer("P", 72.5, "9")) == "[Usefulness: 72.5; Community IDs: 9]\nP"


def test_drop_zero_sort_descending_ties_keep_map_order():
    answers = [answer("a", 10, "1"), answer("b", 0, "2"), answer("c", 90, "3"), answer("d", 10, "4"), answer("e", 90, "5")]
    selected = select_reduce_answers(answers, SKELETON, 10_000)
    assert [a.answer for a in selected] == ["c", "e", "a", "d"]


def _budget_for(*texts):
    return estimate_tokens(SKELETON + "\n" + "\n\n".join(texts))


def test_skip_versus_stop_with_a_long_high_answer_then_a_short_one():
    short_top = answer("short top", 95, "1")
    long_high = answer("long " * 400, 90, "2")
    short_low = answer("short low", 40, "3")
    budget = _budget_for(format_reduce_candidate(short_top), format_reduce_candidate(short_low))
    answers = [short_low, long_high, short_top]

    skip = plan_reduce(answers, SKELETON, budget, strategy="skip")
    assert [a.answer for a in skip.selected] == ["short top", "short low"]
    assert [(c.answer.answer[:5], c.fate) for c in skip.candidates] == [
        ("short", "selected"),
        ("long ", "skipped"),
        ("short", "selected"),
    ]
    assert skip.prompt_tokens == budget

    stop = plan_reduce(answers, SKELETON, budget, strategy="stop")
    assert [a.answer for a in stop.selected] == ["short top"]
    assert [c.fate for c in stop.candidates] == ["selected", "skipped", "not_tried"]


def test_every_answer_gets_one_fate_and_tokens_run_up():
    answers = [answer(f"answer {i} " * (i + 1), 10 * i, str(i)) for i in range(6)]
    plan = plan_reduce(answers, SKELETON, _budget_for("x" * 200))
    assert len(plan.candidates) == 6
    fates = {c.answer.community_ids[0]: c.fate for c in plan.candidates}
    assert fates["0"] == "dropped"
    selected_tokens = [c.tokens for c in plan.candidates if c.fate == "selected"]
    assert selected_tokens == sorted(selected_tokens)
    assert plan.prompt_tokens == estimate_tokens(SKELETON + "\n" + plan.context)


def test_nothing_fits():
    plan = plan_reduce([answer("x" * 1000, 50, "1")], SKELETON, _budget_for("tiny"))
    assert plan.selected == [] and plan.prompt_tokens is None
    assert plan.candidates[0].fate == "skipped"


def test_any_tokenizer_gives_the_same_selection_as_the_additive_fast_path():
    class Plain:
        name = "plain"

        def count(self, text):
            return estimate_tokens(text)

    answers = [answer(("混合 words %d " % i) * (i * 5 + 1), (i * 37) % 101, str(i)) for i in range(30)]
    budget = 700
    fast = plan_reduce(answers, SKELETON, budget)
    slow = plan_reduce(answers, SKELETON, budget, tokenizer=Plain())
    assert fast == slow


def test_integer_community_ids_are_accepted():
    assert format_reduce_candidate(MapAnswer(answer="A", usefulness=85, community_ids=[1, 2])) == "[Usefulness: 85; Community IDs: 1, 2]\nA"
