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
