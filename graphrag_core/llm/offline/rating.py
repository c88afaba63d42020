"""The offline model's community ratings (dynamic selection's ``rate`` calls), deterministic.

A summary is rated 0-5 by how much of the question it covers, BM25-style: each question term
found in the summary counts by its weight (English words and Chinese bigrams 1, single Chinese
characters 0.5), saturated by its frequency (``tf / (tf + k1)``). A Chinese character that is a
word of its own in the question (茶 in 茶的历史, "the history of tea"; see
:func:`~.retrieval.standalone_characters`) is a strong term of weight 1, like a bigram, so a
question about the corpus's own subject finds the communities about it. No question term, or
only single Chinese characters when the question has stronger terms: 0. A broad question with no
content terms ("What are the main themes?") finds every non-blank summary partly relevant (3),
so the walk reaches the most specific communities, as a leaf-level search would.
The rating is a function of the request alone.
"""

from __future__ import annotations

from collections import Counter

from .retrieval import BM25_K1, standalone_characters, terms

BROAD_QUESTION_RATING = 3
_HEADER_PREFIX = "[Community ID: "


def _summary_of(data: str) -> str:
    """The summary in a rating prompt's data: everything after the ``[Community ID: ...]`` line."""
    head, _, rest = data.partition("\n")
    return rest if head.startswith(_HEADER_PREFIX) else data


def answer_rating(question: str, data: str) -> dict[str, object]:
    """The rating reply ``{"rating", "reason"}`` for one community summary."""
    summary = _summary_of(data)
    summary_terms = terms(summary)
    if not summary_terms.all:
        return {"rating": 0, "reason": "The summary is empty."}
    query = terms(question, keep_generic=False)
    if not query.all:
        return {"rating": BROAD_QUESTION_RATING, "reason": "A broad question: every community is partly relevant."}
    words = standalone_characters(question)
    strong = {*query.strong, *words}
    weights = query.weights()
    weights.update({char: 1.0 for char in words})
    counts = Counter(summary_terms.all)
    matched = [term for term in weights if counts.get(term)]
    strong_matched = [term for term in matched if term in strong]
    if not matched or (strong and not strong_matched):
        return {"rating": 0, "reason": "No term of the question appears in the summary."}
    total = sum(weights.values())
    coverage = sum(weights[t] for t in matched) / total
    saturation = sum(weights[t] * counts[t] / (counts[t] + BM25_K1) for t in matched) / sum(weights[t] for t in matched)
    rating = max(1, min(5, 1 + round(3 * coverage + saturation)))
    shown = ", ".join(strong_matched[:5] or matched[:5])
    return {
        "rating": rating,
        "reason": f"The summary mentions {shown} ({len(matched)} of {len(weights)} question terms).",
    }


__all__ = ["BROAD_QUESTION_RATING", "answer_rating"]
