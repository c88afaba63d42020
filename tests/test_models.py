import pytest

from graphrag_core import Claim, Community, Index, IndexValidationError, SourceChunk

from .factories import small_index


def test_hierarchy_lookups():
    index = small_index()
    assert index.parent(3).id == "1"
    assert index.parent(0) is None
    assert [c.id for c in index.children(1)] == ["3", "4"]
    assert [c.id for c in index.path_to_root(4)] == ["4", "1", "0"]
    assert [c.id for c in index.descendant_leaves(0)] == ["3", "4", "5", "6"]
    assert [c.id for c in index.descendant_leaves(3)] == ["3"]
    assert index.levels() == {0: 1, 1: 2, 2: 4}
    assert index.is_leaf(5) and not index.is_leaf(2)


def test_claims_and_chunks():
    index = small_index()
    assert [c.id for c in index.leaf_claims(1)] == ["c1", "c2"]
    assert [c.id for c in index.leaf_claims(0)] == ["c1", "c2", "c3"]
    assert [k.id for k in index.claim_chunks("c2")] == ["k2", "k1"]
    assert index.document("d1").title == "People entries"


def test_selection_of_summaries():
    index = small_index()
    assert [c.id for c in index.select_communities("leaf")] == ["3", "4", "5"]  # 6 is blank
    assert [c.id for c in index.select_communities(1)] == ["1", "2"]
    assert index.select_communities(7) == []
    assert index.summary_counts() == {"leaf": 3, 0: 1, 1: 2, 2: 3}


def test_map_text_of_a_high_level_community_carries_leaf_claims_and_sources():
    text = small_index().map_text(1)
    assert text == (
        "[Community summary]\nHackers and wizards as people.\n\n"
        "[Supporting claims]\n"
        "- wizard: Knows a complex system.\n"
        "- hacker -> systems: Explores details.\n\n"
        "[Source excerpts]\n"
        "WIZARD: a person who knows how a complex piece of software works.\n\n"
        "HACKER: one who enjoys exploring the details of systems."
    )


def test_map_text_leaves_out_empty_parts_and_honours_options():
    index = small_index()
    assert index.map_text(6) == ""
    assert "[Supporting claims]" not in index.map_text(1, include_claims=False)
    assert "[Source excerpts]" in index.map_text(1, include_claims=False)
    assert index.map_text(1, include_claims=False, include_sources=False) == "[Community summary]\nHackers and wizards as people."


def test_int_ids_become_strings_but_bools_are_rejected():
    assert Community(id=12, level=0).id == "12"
    with pytest.raises(ValueError):
        Community(id=True, level=0)


@pytest.mark.parametrize(
    ("communities", "message"),
    [
        ([Community(id=1, level=0), Community(id=1, level=0)], 'communities record 1, field "id": duplicate community id "1" \\(first at record 0\\)'),
        ([Community(id=1, level=1, parent_id=9)], 'communities record 0, field "parent_id": community "1" names parent "9", which does not exist'),
        ([Community(id=1, level=1, parent_id=2), Community(id=2, level=1, parent_id=1)], "form a cycle"),
        ([Community(id=1, level=0), Community(id=2, level=2, parent_id=1)], r"a child's level must be its parent's \+ 1"),
    ],
)
def test_structural_validation(communities, message):
    with pytest.raises(IndexValidationError, match=message):
        Index(communities=communities)


def test_claims_must_name_known_communities_and_chunks():
    with pytest.raises(IndexValidationError, match='claims record 0, field "community_id": claim "c" names community "x"'):
        Index(communities=[Community(id=1, level=0)], claims=[Claim(id="c", community_id="x", subject="s")])
    with pytest.raises(IndexValidationError, match='claims record 0, field "chunk_ids": claim "c" cites chunk "k9"'):
        Index(
            communities=[Community(id=1, level=0)],
            claims=[Claim(id="c", community_id="1", subject="s", chunk_ids=("k9",))],
            chunks=[SourceChunk(id="k1", text="t")],
        )


def test_equal_indexes_compare_equal_whatever_lookups_were_used():
    one, two = small_index(), small_index()
    one.leaves  # fills a cached lookup on one side only
    assert one == two
    assert one != Index(communities=[Community(id=1, level=0)])


def test_one_structure_check_names_records_in_memory_or_their_file_lines():
    from graphrag_core.validation import RecordSource, locate

    communities = [Community(id="a", level=0), Community(id="b", level=0), Community(id="a", level=0)]
    with pytest.raises(IndexValidationError) as caught:
        Index(communities=communities)
    assert str(caught.value) == 'communities record 2, field "id": duplicate community id "a" (first at record 0).'
    located = locate(caught.value, {"communities": RecordSource("communities.jsonl", "line", [3, 5, 9], "/x/communities.jsonl")})
    assert str(located) == 'communities.jsonl line 9, field "id": duplicate community id "a" (first at line 3).'
    assert (located.path, located.row, located.field) == ("/x/communities.jsonl", 9, "id")


def test_from_records_is_the_one_constructor_and_names_the_file_line_when_given_sources():
    from graphrag_core.validation import RecordSource

    index = Index.from_records(communities=iter([Community(id=1, level=0)]), warnings=["w"], name="n")
    assert index == Index(communities=(Community(id=1, level=0),), warnings=("w",), name="n")
    communities = [Community(id="a", level=0), Community(id="a", level=0)]
    with pytest.raises(IndexValidationError) as caught:
        Index.from_records(communities=communities)
    assert str(caught.value) == 'communities record 1, field "id": duplicate community id "a" (first at record 0).'
    sources = {"communities": RecordSource("communities.jsonl", "line", [2, 7], "/x/communities.jsonl")}
    with pytest.raises(IndexValidationError) as caught:
        Index.from_records(communities=communities, sources=sources)
    assert str(caught.value) == 'communities.jsonl line 7, field "id": duplicate community id "a" (first at line 2).'
    assert (caught.value.path, caught.value.row) == ("/x/communities.jsonl", 7)


def test_the_structure_check_is_a_model_validator_that_every_way_in_runs():
    from pydantic import ValidationError

    data = {"communities": [{"id": "a", "level": 0}, {"id": "a", "level": 0}]}
    message = 'communities record 1, field "id": duplicate community id "a" (first at record 0).'
    with pytest.raises(IndexValidationError) as raised:
        Index(**data)
    assert str(raised.value) == message
    for validate in (lambda: Index.model_validate(data), lambda: Index.model_validate_json(__import__("json").dumps(data))):
        with pytest.raises(ValidationError) as caught:
            validate()
        assert isinstance(caught.value.errors()[0]["ctx"]["error"], IndexValidationError)
        assert message in str(caught.value)
    # a field error stays pydantic's, naming the field
    with pytest.raises(ValidationError, match=r"communities\.0\.id"):
        Index(communities=[{"id": 1.5, "level": 0}])
