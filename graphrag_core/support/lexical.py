"""The offline judge: deterministic and lexical, it asks whether a point's words are in the
sentences of the texts it cites.

How a verdict is reached (``docs/support-check.md`` says it for readers):

1. The point's words are its terms as the offline model reads text (:func:`~graphrag_core.llm.offline.retrieval.terms`:
   English words without stopwords, plurals stemmed; Chinese character pairs, and single
   characters at half weight), citations left out. Each distinct term weighs its BM25 idf over
   a pool of sentences (the summaries and claims of every community the run read or the answer
   cites), so a word every text has ("hacker" in the Jargon File) counts less than a rare one.
2. The cited texts are cut into sentences (:mod:`graphrag_core.sentences`). The sentence that
   holds the largest weighted share of the point's words is the first quote; further sentences
   join while each adds at least :data:`QUOTE_MIN_GAIN` of the point and the quotes number at
   most :data:`MAX_QUOTES`.
3. ``coverage`` is the weighted share of the point's words the quotes hold together. The point
   is ``supported`` when coverage reaches :data:`SUPPORTED_COVERAGE` and one quote alone holds
   at least :data:`SINGLE_QUOTE_FLOOR` (words gathered from scattered sentences do not make a
   claim); ``partial`` from :data:`PARTIAL_COVERAGE`; ``unsupported`` below, or when the point
   has no words to check.

Limits (by design: it reads words, not meaning): a paraphrase in other words is not seen, a
negation is not seen ("not" is a stopword), nor a number's meaning beyond its digits, nor
which entity a word is said of.

Invariant: every function here is a function of its arguments alone (sums of weights are
exactly rounded, so they do not depend on the order a set of terms iterates in, which changes
with the process's hash seed), and each quote is a sentence of its unit's text, verbatim
(``unit.text[start:end]``).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..llm.offline.retrieval import terms
from ..sentences import sentence_spans
from .models import SupportEvidence, SupportVerdict
from .units import SupportUnit

LEXICAL_JUDGE_VERSION = 1
"""Bumped whenever the offline judge's verdicts change."""
LEXICAL_JUDGE_IDENTITY = f"offline:lexical/v{LEXICAL_JUDGE_VERSION}"
SUPPORTED_COVERAGE = 0.8
"""A point is supported when its quotes hold at least this weighted share of its words..."""
SINGLE_QUOTE_FLOOR = 0.5
"""... and one quote alone holds at least this share."""
PARTIAL_COVERAGE = 0.4
"""A point whose quotes hold at least this share (and is not supported) is partly supported."""
QUOTE_MIN_GAIN = 0.1
"""A further sentence joins the quotes only when it adds at least this share of the point."""
MAX_QUOTES = 3
"""The most quotes one point's evidence holds."""
WEAK_TERM_WEIGHT = 0.5
"""A single Chinese character weighs this much of a strong term (a word, a character pair)."""
MAX_SUPPORTED_BY = 3
"""The most other units named as supporting a point that its own citations do not."""


_KIND_ORDER = {"summary": 0, "claim": 1, "chunk": 2}


@dataclass(frozen=True)
class UnitSentence:
    """One sentence of a unit: ``unit.text[start:end]``, with its terms."""

    unit: SupportUnit
    start: int
    end: int
    terms: frozenset[str]

    @property
    def text(self) -> str:
        return self.unit.text[self.start : self.end]


def _term_weights(text: str) -> dict[str, float]:
    found = terms(text)
    weights = {term: WEAK_TERM_WEIGHT for term in found.weak}
    weights.update({term: 1.0 for term in found.strong})
    return weights


def unit_sentences(unit: SupportUnit) -> list[UnitSentence]:
    """The sentences of a unit's text that have terms, in order."""
    found: list[UnitSentence] = []
    for start, end in sentence_spans(unit.text):
        words = frozenset(_term_weights(unit.text[start:end]))
        if words:
            found.append(UnitSentence(unit, start, end, words))
    return found


@dataclass
class SentencePool:
    """Sentences of many units, with each term's document frequency (the pool's sentences are
    its documents) and, per cited id, the sentences of its units."""

    sentences: list[UnitSentence] = field(default_factory=list)
    _df: Counter[str] = field(default_factory=Counter)
    _by_term: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    _by_cited: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def of(cls, units: Iterable[SupportUnit]) -> SentencePool:
        pool = cls()
        for unit in units:
            pool.add(unit_sentences(unit))
        return pool

    def add(self, sentences: Iterable[UnitSentence]) -> None:
        for sentence in sentences:
            number = len(self.sentences)
            self.sentences.append(sentence)
            self._by_cited[sentence.unit.cited].append(number)
            for term in sentence.terms:
                self._df[term] += 1
                self._by_term[term].append(number)

    def idf(self, term: str) -> float:
        """BM25's idf of ``term`` over the pool (always above 0; highest for a term it lacks)."""
        n, df = len(self.sentences), self._df.get(term, 0)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def weights(self, point: str) -> dict[str, float]:
        """Each distinct term of ``point``, weighted (strong 1, weak :data:`WEAK_TERM_WEIGHT`) by its idf."""
        return {term: weight * self.idf(term) for term, weight in _term_weights(point).items()}

    def cited_sharing(self, weights: Mapping[str, float]) -> list[str]:
        """The cited ids with a sentence that shares a term with the point, in pool order."""
        numbers = sorted({n for term in weights for n in self._by_term.get(term, ())})
        return list(dict.fromkeys(self.sentences[n].unit.cited for n in numbers))

    def of_cited(self, cited: str) -> list[UnitSentence]:
        return [self.sentences[n] for n in self._by_cited.get(cited, ())]


@dataclass(frozen=True)
class Finding:
    """What the offline judge found for one point against some sentences: its verdict, the
    share of its words its quotes hold, and each quote with the share it holds alone."""

    verdict: SupportVerdict
    coverage: float
    quotes: tuple[tuple[UnitSentence, float], ...] = ()
    checkable: bool = True
    """False when the point has no words to check."""

    @property
    def best(self) -> float:
        return self.quotes[0][1] if self.quotes else 0.0

    def evidence(self) -> tuple[SupportEvidence, ...]:
        """The quotes as evidence (none for an unsupported point: nothing there backs it)."""
        if self.verdict == "unsupported":
            return ()
        return tuple(
            SupportEvidence(
                kind=s.unit.kind, id=s.unit.id, quote=s.text, community_id=s.unit.cited, start=s.start, end=s.end, coverage=round(alone, 3)
            )
            for s, alone in self.quotes
        )


def verdict_of(coverage: float, best: float) -> SupportVerdict:
    """The verdict of a point whose quotes hold ``coverage`` of it, the best alone ``best``."""
    if coverage >= SUPPORTED_COVERAGE and best >= SINGLE_QUOTE_FLOOR:
        return "supported"
    return "partial" if coverage >= PARTIAL_COVERAGE else "unsupported"


def judge_point(weights: Mapping[str, float], sentences: Sequence[UnitSentence]) -> Finding:
    """The offline judge's finding for a point (its term ``weights``) against ``sentences``
    (see the module docstring). Ties go to a summary before a claim before a chunk, then to the
    shorter sentence, then to the earlier one. The
    first quote is the closest sentence even when it holds little (an unsupported point's
    finding keeps it, to say how close the texts come; its evidence is empty)."""
    total = math.fsum(weights.values())
    if total <= 0:
        return Finding("unsupported", 0.0, checkable=False)

    def share(words: Iterable[str]) -> float:  # exactly rounded: the same whatever order a set iterates in
        return math.fsum(weights[t] for t in words) / total

    candidates = [(order, s, s.terms & weights.keys()) for order, s in enumerate(sentences)]
    candidates = [c for c in candidates if c[2]]
    covered: set[str] = set()
    quotes: list[tuple[UnitSentence, float]] = []
    while candidates and len(quotes) < MAX_QUOTES:
        best = max(candidates, key=lambda c: (share(c[2] - covered), -_KIND_ORDER[c[1].unit.kind], -(c[1].end - c[1].start), -c[0]))
        _, sentence, shared = best
        if quotes and share(shared - covered) < QUOTE_MIN_GAIN:
            break
        quotes.append((sentence, share(shared)))
        covered |= shared
        candidates.remove(best)
    coverage = share(covered)
    return Finding(verdict_of(coverage, quotes[0][1] if quotes else 0.0), round(coverage, 3), tuple(quotes))


__all__ = [
    "LEXICAL_JUDGE_IDENTITY",
    "LEXICAL_JUDGE_VERSION",
    "MAX_QUOTES",
    "MAX_SUPPORTED_BY",
    "PARTIAL_COVERAGE",
    "QUOTE_MIN_GAIN",
    "SINGLE_QUOTE_FLOOR",
    "SUPPORTED_COVERAGE",
    "WEAK_TERM_WEIGHT",
    "Finding",
    "SentencePool",
    "UnitSentence",
    "judge_point",
    "unit_sentences",
    "verdict_of",
]
