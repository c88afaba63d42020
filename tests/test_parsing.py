import pytest

from graphrag_core import (
    MapOutputError,
    ReduceOutputError,
    parse_map_output,
    parse_reduce_output,
)


def test_plain_json():
    out = parse_map_output('{"answer": "  Points.  ", "usefulness": 85, "extra": 1}')
    assert out.answer == "Points."
    assert out.usefulness == 85


def test_fenced_json():
    raw = 'Here you go:\n```json\n{"answer": "A", "usefulness": 40.5}\n```\nThanks'
    assert parse_map_output(raw).usefulness == 40.5


def test_prose_wrapped_json():
    raw = 'Sure! The result is {"answer": "A", "usefulness": 12} as requested.'
    assert parse_map_output(raw).answer == "A"


def test_invalid_json_message_has_first_200_characters():
    raw = "not json at all " * 30
    with pytest.raises(MapOutputError) as info:
        parse_map_output(raw)
    assert str(info.value) == f"LLM output is not valid JSON: {raw[:200]}..."


@pytest.mark.parametrize(
    "raw",
    ['{"answer": "x"}', '{"usefulness": 10}', "[1, 2]", '"just a string"'],
)
def test_missing_fields(raw):
    with pytest.raises(MapOutputError, match="^Global Map output must contain answer and usefulness fields.$"):
        parse_map_output(raw)


@pytest.mark.parametrize(
    "raw",
    [
        '{"answer": "x", "usefulness": true}',
        '{"answer": "x", "usefulness": "80"}',
        '{"answer": "x", "usefulness": 101}',
        '{"answer": "x", "usefulness": -1}',
        '{"answer": "x", "usefulness": NaN}',
        '{"answer": "x", "usefulness": Infinity}',
        pytest.param('{"answer": "x", "usefulness": 1' + "0" * 400 + "}", id="integer-too-large-for-a-float"),
        '{"answer": "x", "usefulness": null}',
        '{"answer": 5, "usefulness": 50}',
        '{"answer": "   ", "usefulness": 50}',
    ],
)
def test_invalid_answer_or_usefulness(raw):
    with pytest.raises(MapOutputError, match="^Global Map output contains an invalid answer or usefulness score.$"):
        parse_map_output(raw)


def test_blank_answer_allowed_only_at_zero():
    assert parse_map_output('{"answer": "", "usefulness": 0}').answer == ""


def test_boundaries_are_inclusive():
    assert parse_map_output('{"answer": "", "usefulness": 0}').usefulness == 0
    assert parse_map_output('{"answer": "x", "usefulness": 100}').usefulness == 100


def test_reduce_output():
    assert parse_reduce_output('```json\n{"answer": "  Final.  "}\n```') == "Final."
    with pytest.raises(ReduceOutputError, match="^Global Reduce output must contain an answer field.$"):
        parse_reduce_output('{"text": "x"}')
    for raw in ['{"answer": "  "}', '{"answer": 3}', '{"answer": null}']:
        with pytest.raises(ReduceOutputError, match="^Global Reduce output contains an invalid answer.$"):
            parse_reduce_output(raw)
    with pytest.raises(ReduceOutputError, match="^LLM output is not valid JSON: nope..."):
        parse_reduce_output("nope")


def test_a_raw_newline_inside_a_string_is_read_leniently_and_the_shape_checks_stay():
    # llama-cpp-python's grammar lets a small model write control characters inside strings
    raw = '{ "answer": "}\nThe main themes are:\n\n1. hacking\t2. wizards","usefulness" : 70 }'
    out = parse_map_output(raw)
    assert out.answer == "}\nThe main themes are:\n\n1. hacking\t2. wizards" and out.usefulness == 70
    assert parse_reduce_output('{"answer": "line one\nline two"}') == "line one\nline two"
    with pytest.raises(MapOutputError, match="^Global Map output contains an invalid answer or usefulness score.$"):
        parse_map_output('{"answer": "a\nb", "usefulness": 170}')
    with pytest.raises(MapOutputError, match="^Global Map output must contain answer and usefulness fields.$"):
        parse_map_output('{"answer": "a\nb"}')


@pytest.mark.parametrize(
    ("parse", "raw", "placeholder"),
    [
        (parse_map_output, '{"answer": "<the key points, in prose or as a list>", "usefulness": 60}', "<the key points, in prose or as a list>"),
        (parse_map_output, '{"answer": "Here: <the key points, in prose or as a list>", "usefulness": 60}', "<the key points, in prose or as a list>"),
        (parse_reduce_output, '{"answer": " <the final answer, in Markdown> "}', "<the final answer, in Markdown>"),
    ],
)
def test_a_reply_that_copies_the_prompts_placeholder_is_refused_with_its_own_message(parse, raw, placeholder):
    from graphrag_core.errors import ModelOutputError

    with pytest.raises(ModelOutputError) as info:
        parse(raw)
    assert str(info.value) == f"The reply copies the prompt's placeholder {placeholder} instead of filling it in."
    assert info.value.reply_start and "The reply began" in info.value.reply_start
    assert type(info.value) is (MapOutputError if parse is parse_map_output else ReduceOutputError)


def test_placeholders_of_the_judge_and_rating_prompts_are_refused_and_a_tag_named_in_prose_is_not():
    from graphrag_core import parse_rating_output
    from graphrag_core.errors import JudgeOutputError, RatingOutputError
    from graphrag_core.evaluation.judge import parse_judge_output

    with pytest.raises(JudgeOutputError, match="placeholder <why>"):
        parse_judge_output('{"winner": 1, "reason": "<why>"}')
    with pytest.raises(RatingOutputError, match="placeholder <one sentence on why>"):
        parse_rating_output('{"reason": "<one sentence on why>", "rating": 3}')
    assert parse_map_output('{"answer": "The <title> element names a page.", "usefulness": 40}').usefulness == 40
