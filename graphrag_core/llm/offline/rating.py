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
The reason is written in the summary's language (Chinese in its script). The rating is a
function of the request alone.
"""

from __future__ import annotations

from collections import Counter

from ...language import chinese_script, text_language
from .retrieval import BM25_K1, standalone_characters, terms

BROAD_QUESTION_RATING = 3
_HEADER_PREFIX = "[Community ID: "
_REASONS: dict[str, dict[str, str]] = {
    "en": {
        "empty": "The summary is empty.",
        "broad": "A broad question: every community is partly relevant.",
        "none": "No term of the question appears in the summary.",
        "found": "The summary mentions {shown} ({matched} of {total} question terms).",
        "comma": ", ",
    },
    "hans": {
        "empty": "摘要为空。",
        "broad": "这是一个宽泛的问题：每个社区都部分相关。",
        "none": "摘要中没有出现问题中的词。",
        "found": "摘要提到{shown}（问题的{total}个词中有{matched}个）。",
        "comma": "、",
    },
    "hant": {
        "empty": "摘要爲空。",
        "broad": "這是一個寬泛的問題：每個社區都部分相關。",
        "none": "摘要中沒有出現問題中的詞。",
        "found": "摘要提到{shown}（問題的{total}個詞中有{matched}個）。",
        "comma": "、",
    },
}
"""The reason of a rating, in the summary's language (and script)."""


def _summary_of(data: str) -> str:
    """The summary in a rating prompt's data: everything after the ``[Community ID: ...]`` line."""
    head, _, rest = data.partition("\n")
    return rest if head.startswith(_HEADER_PREFIX) else data


def answer_rating(question: str, data: str) -> dict[str, object]:
    """The rating reply ``{"rating", "reason"}`` for one community summary."""
    summary = _summary_of(data)
    wording = _REASONS[chinese_script(summary) if text_language(summary) == "zh" else "en"]
    summary_terms = terms(summary)
    if not summary_terms.all:
        return {"rating": 0, "reason": wording["empty"]}
    query = terms(question, keep_generic=False)
    if not query.all:
        return {"rating": BROAD_QUESTION_RATING, "reason": wording["broad"]}
    words = standalone_characters(question)
    strong = {*query.strong, *words}
    weights = query.weights()
    weights.update({char: 1.0 for char in words})
    counts = Counter(summary_terms.all)
    matched = [term for term in weights if counts.get(term)]
    strong_matched = [term for term in matched if term in strong]
    if not matched or (strong and not strong_matched):
        return {"rating": 0, "reason": wording["none"]}
    total = sum(weights.values())
    coverage = sum(weights[t] for t in matched) / total
    saturation = sum(weights[t] * counts[t] / (counts[t] + BM25_K1) for t in matched) / sum(weights[t] for t in matched)
    rating = max(1, min(5, 1 + round(3 * coverage + saturation)))
    shown = wording["comma"].join(strong_matched[:5] or matched[:5])
    return {"rating": rating, "reason": wording["found"].format(shown=shown, matched=len(matched), total=len(weights))}


__all__ = ["BROAD_QUESTION_RATING", "answer_rating"]
