"""Two answers side by side, point by point: each answer cut into its points (bullets, or the
sentences of a paragraph), the points of one matched to the points of the other that say the
same, and the points only one answer makes left on their own (pure).

Invariants of :func:`align_answers`:

- every point of each answer is in exactly one row, and the left answer's points keep their
  order down the rows; a point only the right answer makes comes after the rows of the right
  answer's matched points that precede it;
- two points share a row only when their ROUGE-L F1 (Chinese compared by characters, citations
  left out) is at least the threshold, each point in at most one pair, the most similar pairs
  first;
- a point keeps its text as the answer wrote it, citations included, so a front end can link
  them; headings and blank lines are not points.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .citations import find_citations
from .evaluation.claims import rouge_l_f1_of_units, rouge_units
from .sentences import sentence_spans

DEFAULT_SAME_POINT = 0.5
"""Two points whose ROUGE-L F1 reaches this say the same thing (the claim-linking default)."""
_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
Side = Literal["left", "right"]


class Point(BaseModel):
    """One point of an answer: its text as written (``text``) and without citations (``plain``)."""

    model_config = ConfigDict(frozen=True)

    text: str
    plain: str
    bullet: bool = False
    start: int = 0
    end: int = 0
    """Where the point stands in its answer: ``answer[start:end]`` is its text (a citation
    standing alone after it joined, with what lies between)."""


class PointRow(BaseModel):
    """One row of the alignment: a point of each answer that say the same, or one alone."""

    model_config = ConfigDict(frozen=True)

    left: Point | None = None
    right: Point | None = None
    similarity: float = 0.0

    @property
    def only(self) -> Side | None:
        """Which answer alone makes this point (None when both do)."""
        return "left" if self.right is None else "right" if self.left is None else None


class Alignment(BaseModel):
    """Two answers' points, row by row."""

    model_config = ConfigDict(frozen=True)

    rows: list[PointRow]

    @property
    def shared(self) -> int:
        return sum(1 for r in self.rows if r.only is None)

    def only_in(self, side: Side) -> int:
        return sum(1 for r in self.rows if r.only == side)


def _plain(text: str) -> str:
    out, position = [], 0
    for citation in find_citations(text):
        out.append(text[position : citation.start])
        position = citation.end
    out.append(text[position:])
    return " ".join("".join(out).split())


def answer_points(text: str) -> list[Point]:
    """The points of an answer, in order: each bullet (its marker dropped) is one, a paragraph
    gives one per sentence (:func:`graphrag_core.sentences.sentence_spans`); headings and
    blank lines give none. ``start``/``end`` locate each point in ``text``."""
    points: list[Point] = []
    offset = 0
    for raw in text.splitlines(keepends=True):
        line, at = raw.rstrip("\r\n"), offset
        offset += len(raw)
        if not line.strip() or _HEADING.match(line):
            continue
        bullet = _BULLET.match(line)
        if bullet:
            body = line[bullet.end() :]
            lead = len(body) - len(body.lstrip())
            spans = [(at + bullet.end() + lead, at + len(line.rstrip()))] if body.strip() else []
        else:
            spans = [(at + a, at + b) for a, b in sentence_spans(line)]
        for start, end in spans:
            piece = text[start:end]
            if _plain(piece):
                points.append(Point(text=piece, plain=_plain(piece), bullet=bullet is not None, start=start, end=end))
            elif points:  # a citation standing alone belongs to the point before it
                last = points[-1]
                points[-1] = last.model_copy(update={"text": f"{last.text} {piece}", "end": end})
    return points


def align_answers(left: str, right: str, *, threshold: float = DEFAULT_SAME_POINT) -> Alignment:
    """The two answers' points aligned (see the module's invariants)."""
    ours, theirs = answer_points(left), answer_points(right)
    our_units, their_units = [rouge_units(p.plain) for p in ours], [rouge_units(p.plain) for p in theirs]
    our_bags, their_bags = [Counter(u) for u in our_units], [Counter(u) for u in their_units]
    scored: list[tuple[float, int, int]] = []
    for i, (units, bag) in enumerate(zip(our_units, our_bags)):
        for j, (other, other_bag) in enumerate(zip(their_units, their_bags)):
            # the common subsequence is at most the shared units: skip pairs that cannot reach the threshold
            if not units or not other or 2 * sum((bag & other_bag).values()) < threshold * (len(units) + len(other)):
                continue
            scored.append((rouge_l_f1_of_units(units, other), i, j))
    scored.sort(key=lambda s: (-s[0], s[1], s[2]))
    pair_of: dict[int, tuple[int, float]] = {}
    taken: set[int] = set()
    for similarity, i, j in scored:
        if similarity < threshold:
            break
        if i not in pair_of and j not in taken:
            pair_of[i] = (j, similarity)
            taken.add(j)
    left_of = {j: i for i, (j, _) in pair_of.items()}
    keyed: list[tuple[tuple[float, int, int], PointRow]] = []
    for i, point in enumerate(ours):
        j, similarity = pair_of.get(i, (None, 0.0))
        keyed.append(((i, 0, 0), PointRow(left=point, right=theirs[j] if j is not None else None, similarity=similarity)))
    anchor = -1.0
    for j, point in enumerate(theirs):
        if j in left_of:
            anchor = max(anchor, left_of[j])
            continue
        keyed.append(((anchor, 1, j), PointRow(right=point)))
    return Alignment(rows=[row for _, row in sorted(keyed, key=lambda k: k[0])])


__all__ = ["DEFAULT_SAME_POINT", "Alignment", "Point", "PointRow", "align_answers", "answer_points"]
