"""Each text format the engine writes into a prompt is read back by its own parser."""

from graphrag_core import format_reduce_candidate
from graphrag_core import context
from graphrag_core.models import Claim
from graphrag_core.prompts import render_map_messages, render_reduce_messages
from graphrag_core.results import MapAnswer
from tests.factories import small_index


def test_part_header_round_trips():
    header = context.format_part_header("c-7 | x", 12)
    assert header == "[Community ID: c-7 | x | summary part 12]\n"
    assert context.parse_part_header(header) == context.PartHeader("c-7 | x", 12)
    assert context.parse_part_header("[Community summary]") is None


def test_reduce_candidate_round_trips():
    answer = MapAnswer(answer="The mill.\nThe river.", usefulness=85.0, community_ids=("3", "12"))
    text = format_reduce_candidate(answer)
    assert text == "[Usefulness: 85; Community IDs: 3, 12]\nThe mill.\nThe river."
    header, body = text.split("\n", 1)
    assert context.parse_candidate_header(header) == context.CandidateHeader(85.0, ["3", "12"])
    assert body == answer.answer
    assert context.parse_candidate_header("[Usefulness: nan; Community IDs: 1]").usefulness == 0.0
    assert context.parse_candidate_header("[Usefulness: 12.5; Community IDs: ]") == (12.5, [])


def test_citations_round_trip():
    line = f"Hackers explore. {context.format_citation(['4', '5'])} Wizards know {context.format_citation(['3'])}"
    assert context.parse_citations(line) == [("Hackers explore.", ["4", "5"]), ("Wizards know", ["3"]), ("", [])]


def test_map_text_sections_round_trip():
    index = small_index()
    text = index.map_text("1")
    markers = [context.parse_map_section(line) for line in text.splitlines()]
    assert [m for m in markers if m] == list(context.MAP_SECTIONS)
    assert index.map_text("1", include_claims=False, include_sources=False) == "[Community summary]\nHackers and wizards as people."
    claim = Claim(id="x", community_id="3", subject="a", object="b", description=" two\nlines ")
    assert context.format_claim_line(claim) == "- a -> b: two lines"
    assert context.format_map_text("", [], ["  "]) == ""


def test_prompt_sections_round_trip():
    for messages in (render_map_messages("Who?", "DATA ---Data---\nmore"), render_reduce_messages("Why?", "x")):
        question, data = context.split_prompt_sections(messages[-1].content)
        assert question in ("Who?", "Why?") and data in ("DATA ---Data---\nmore", "x")
    assert context.format_prompt_sections("q", "d") == "---Question---\nq\n\n---Data---\nd"
