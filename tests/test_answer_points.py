"""Two answers point by point: points cut from bullets and sentences, matched when they say the
same, the points only one answer makes left alone, citations kept for linking."""

from __future__ import annotations

from graphrag_core.answer_points import align_answers, answer_points

LEFT = """## Overview
Hackers value playful cleverness [Data: Reports (1, 2)]. They share code freely.

- The jargon file records their slang [Data: Reports (3)].
- Kludges are clumsy but working fixes.
"""
RIGHT = """- The jargon file records the slang of hackers [Data: Reports (7)].
- Hackers value playful cleverness above all [Data: Reports (2)].
- Wizards are admired for deep knowledge.
"""


def test_points_are_bullets_and_sentences_with_their_citations():
    points = answer_points(LEFT)
    assert [p.text for p in points] == [
        "Hackers value playful cleverness [Data: Reports (1, 2)].",
        "They share code freely.",
        "The jargon file records their slang [Data: Reports (3)].",
        "Kludges are clumsy but working fixes.",
    ]
    assert points[0].plain == "Hackers value playful cleverness ." and not points[0].bullet and points[2].bullet
    assert [p.text for p in answer_points("茶起源于中国。后来传到日本！\n")] == ["茶起源于中国。", "后来传到日本！"]
    quoted = "关于“主要主题有哪些？”：有 5 个要点。神农是传说之神。 [Communities: 2]"
    assert [p.text for p in answer_points(quoted)] == ["关于“主要主题有哪些？”：有 5 个要点。", "神农是传说之神。 [Communities: 2]"]
    assert [p.text for p in answer_points("茶起源于中国。 后来传到日本。")] == ["茶起源于中国。", "后来传到日本。"]


def test_matching_points_share_a_row_and_the_rest_are_marked_as_one_sides():
    alignment = align_answers(LEFT, RIGHT)
    rows = [(r.left.text if r.left else None, r.right.text if r.right else None, r.only) for r in alignment.rows]
    assert rows == [
        ("Hackers value playful cleverness [Data: Reports (1, 2)].", "Hackers value playful cleverness above all [Data: Reports (2)].", None),
        ("They share code freely.", None, "left"),
        ("The jargon file records their slang [Data: Reports (3)].", "The jargon file records the slang of hackers [Data: Reports (7)].", None),
        (None, "Wizards are admired for deep knowledge.", "right"),  # after the right answer's points before it
        ("Kludges are clumsy but working fixes.", None, "left"),
    ]
    assert (alignment.shared, alignment.only_in("left"), alignment.only_in("right")) == (2, 2, 1)


def test_every_point_lands_in_exactly_one_row_and_identical_answers_match_fully():
    alignment = align_answers(LEFT, LEFT)
    assert alignment.shared == 4 and all(r.similarity == 1.0 for r in alignment.rows)
    assert align_answers("", RIGHT).only_in("right") == 3 and align_answers(LEFT, "").only_in("left") == 4
    alignment = align_answers(LEFT, RIGHT, threshold=1.0)  # nothing is the same at 1.0: every point alone
    assert alignment.shared == 0 and len(alignment.rows) == 7
