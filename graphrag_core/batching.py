"""Pack map texts into token-budgeted batches (spec section 5). Pure: no I/O, no model.

Invariants of :func:`build_summary_batches`: every code point of every non-blank text lands in
exactly one part, every part in exactly one batch, in shuffled order; every batch fits the
budget together with the prompt skeleton; the same random source gives the same batches.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from .body_counts import CountedBody
from .context import COMMUNITY, Unit, format_part_header
from .errors import BudgetError
from .tokens import (
    HeuristicTokenizer,
    Tokenizer,
    get_tokenizer,
    is_cut_additive,
    join_tokens,
)

PART_HEADER_PLACEHOLDER = "9999999"
"""Only for sizing: the header of a part is measured with this part number, whatever its own."""


class MapText(BaseModel):
    """The map text of one selected community."""

    model_config = ConfigDict(frozen=True, coerce_numbers_to_str=True)

    community_id: str
    text: str


class SummaryBatch(BaseModel):
    """One map call's content: parts joined by newlines, and their community ids in first-seen order."""

    model_config = ConfigDict(frozen=True, coerce_numbers_to_str=True)

    content: str
    community_ids: tuple[str, ...]


def shuffle_in_place(items: list[Any], rng: random.Random) -> None:
    """Fisher-Yates from the end: for i = n-1..1, j = floor(r * (i + 1)), swap i and j."""
    for i in range(len(items) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        items[i], items[j] = items[j], items[i]


def _as_map_text(item: Any) -> MapText:
    if isinstance(item, MapText):
        return item
    if isinstance(item, tuple | list) and len(item) == 2:
        return MapText(community_id=item[0], text=item[1])
    return MapText(community_id=item.community_id, text=item.text)


class _Fitter:
    """Answers ``fits(content)`` for one skeleton and budget: ``count(skeleton + "\\n" + content) <= budget``.

    With the additive heuristic the skeleton is measured once and pieces are measured
    separately; with a cut-additive tokenizer (the exact encodings) the skeleton is counted once
    and every content starting at a safe cut is counted on its own (parts start with ``[``);
    otherwise the whole string is counted each time, so any tokenizer works.
    """

    def __init__(self, skeleton: str, budget: int, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.budget = budget
        self.prefix = skeleton + "\n"
        self.heuristic = tokenizer if isinstance(tokenizer, HeuristicTokenizer) else None
        self.additive = self.heuristic is not None
        self.cut_additive = not self.additive and is_cut_additive(tokenizer)
        self.prefix_measure = self.measure(self.prefix) if self.additive else (0, 0)
        self.prefix_tokens = tokenizer.count(self.prefix) if self.cut_additive else 0
        max_token = getattr(tokenizer, "max_token_chars", None)
        self.max_run: int | None = budget * max_token if isinstance(max_token, int) and max_token > 0 else None
        """No run longer than this fits: each token covers at most ``max_token_chars`` code points."""

    def measure(self, text: str) -> tuple[int, int]:
        """The additive measure of ``text`` (only with the heuristic tokenizer)."""
        assert self.heuristic is not None
        return self.heuristic.measure(text)

    def fits(self, content: str) -> bool:
        if self.cut_additive and content.startswith("["):
            return self.prefix_tokens + self.tokenizer.count(content) <= self.budget
        return self.tokenizer.count(self.prefix + content) <= self.budget

    def fits_measure(self, ascii_count: int, cjk_count: int) -> bool:
        a, c = self.prefix_measure
        return HeuristicTokenizer.total(a + ascii_count, c + cjk_count) <= self.budget

    @property
    def content_budget(self) -> int:
        """Tokens left for the content once the skeleton is counted (cut-additive tokenizers)."""
        return self.budget - self.prefix_tokens


_UNIT_NAMES: dict[str, str] = {COMMUNITY: "community summary", "source": "source chunk", "evidence": "the evidence of community"}
"""How a budget error names a unit: ``... too small for community summary 12.`` (the spec's) or ``source chunk 12``."""


def _split_parts(text: MapText, fitter: _Fitter, unit: Unit = COMMUNITY) -> list[str]:
    """Split one text into the longest code point runs whose header-plus-run fits the budget.

    Each run is the largest ``k`` with ``fits(header + next k code points)`` (spec section 5).
    Work is linear in the text's length with the additive (heuristic) tokenizer; with a
    cut-additive one the spec's binary search runs as written over counts made of memoized
    segment counts (:class:`~graphrag_core.body_counts.CountedBody`), so each code point is encoded a bounded number of
    times; with any other tokenizer the spec's binary search runs as written, except that probes
    longer than any fitting run can be (``_Fitter.max_run``) are known to fail and are not counted.
    """
    return [run for run, _, _ in _split_counted(text, fitter, unit)]


def _split_counted(text: MapText, fitter: _Fitter, unit: Unit = COMMUNITY) -> list[tuple[str, int | None, int | None]]:
    """The runs of :func:`_split_parts`, each with the count of its part (real header and run)
    and what a newline after the part adds, when the tokenizer is cut-additive (else None)."""
    header = format_part_header(text.community_id, PART_HEADER_PLACEHOLDER, unit=unit)
    body = text.text
    if not body.strip():
        return []
    counted = CountedBody(body, fitter.tokenizer, limit=fitter.content_budget, max_run=fitter.max_run) if fitter.cut_additive else None
    runs: list[tuple[str, int | None, int | None]] = []
    offset = 0
    n = len(body)
    number = 0
    while offset < n:
        if fitter.additive:
            k = _longest_run_additive(body, offset, header, fitter)
        elif counted is not None:
            k = _longest_run_searched(n - offset, counted.prober(header, offset))
        else:
            k = _longest_run_searched(n - offset, _probe(body, offset, header, fitter))
        if k == 0:
            raise BudgetError(f"Map token budget is too small for {_UNIT_NAMES[unit]} {text.community_id}.")
        number += 1
        tokens = join = None
        if counted is not None:
            real_header = format_part_header(text.community_id, number, unit=unit)
            tokens = counted.count(real_header, offset, offset + k)
            join = counted.join_after(real_header, offset, offset + k)
        runs.append((body[offset : offset + k], tokens, join))
        offset += k
    if counted is not None:
        counted.remember(fitter.tokenizer)
    return runs


FIRST_RUN = 512
"""Code points a part's search tries first; the run then doubles while it still fits."""


def _longest_run_additive(body: str, offset: int, header: str, fitter: _Fitter) -> int:
    """The largest ``k`` whose run fits, measuring each code point O(1) times.

    Measures add up, so the run grows by doubling steps while it fits, and the step that does
    not fit is bisected by measuring only the half being added. Fitting is monotone in ``k``
    (a longer run never counts fewer tokens), so this is the same ``k`` a binary search finds.
    """
    n = len(body)
    a, c = fitter.measure(header)
    position, step = offset, FIRST_RUN
    while position < n:
        end = min(n, position + step)
        da, dc = fitter.measure(body[position:end])
        if fitter.fits_measure(a + da, c + dc):
            a, c, position, step = a + da, c + dc, end, step * 2
            continue
        low, high = position, end  # a run to `low` fits, a run to `high` does not
        while high - low > 1:
            middle = (low + high) // 2
            da, dc = fitter.measure(body[low:middle])
            if fitter.fits_measure(a + da, c + dc):
                a, c, low = a + da, c + dc, middle
            else:
                high = middle
        return low - offset
    return n - offset


def _probe(body: str, offset: int, header: str, fitter: _Fitter) -> Callable[[int], bool]:
    """``fits(header + next k code points)`` for any tokenizer, skipping probes that cannot fit."""
    bound = fitter.max_run

    def fits_run(k: int) -> bool:
        if bound is not None and k > bound:
            return False  # more code points than the budget can hold, whatever the tokenizer
        return fitter.fits(header + body[offset : offset + k])

    return fits_run


def _longest_run_searched(remaining: int, fits_run: Callable[[int], bool]) -> int:
    """The spec's binary search for any tokenizer (a count need not be additive or monotone)."""
    if fits_run(remaining):
        return remaining
    low, high = 0, remaining - 1  # the largest fitting k lies in [low, high]
    while low < high:
        middle = (low + high + 1) // 2
        if fits_run(middle):
            low = middle
        else:
            high = middle - 1
    return low


def build_summary_batches(
    texts: Iterable[Any],
    prompt_skeleton: str,
    prompt_budget: int,
    *,
    rng: random.Random | None = None,
    tokenizer: Tokenizer | None = None,
    unit: Unit = COMMUNITY,
) -> list[SummaryBatch]:
    """Shuffle the map texts, split them into budgeted parts and pack the parts greedily.

    ``texts`` holds objects with ``community_id`` and ``text``, or ``(community_id, text)``
    pairs. ``rng`` defaults to a fresh ``random.Random()``; pass a seeded one to repeat a run.
    ``unit`` says what the texts are: community map texts (``[Community ID: ...]`` parts) or
    source chunks (``[Source ID: ...]`` parts, the ``text`` method); the packing is the same.
    Raises :class:`BudgetError` when the skeleton alone, or one code point of a text with its
    header, does not fit.
    """
    return plan_summary_batches(texts, prompt_skeleton, prompt_budget, rng=rng, tokenizer=tokenizer, unit=unit)[0]


def plan_summary_batches(
    texts: Iterable[Any],
    prompt_skeleton: str,
    prompt_budget: int,
    *,
    rng: random.Random | None = None,
    tokenizer: Tokenizer | None = None,
    unit: Unit = COMMUNITY,
) -> tuple[list[SummaryBatch], list[int]]:
    """:func:`build_summary_batches` and each batch's prompt tokens (what
    :func:`estimate_batches` returns), counted while packing when the tokenizer allows it:
    a batch's count is its parts' counts plus its joins, so no batch is read twice."""
    tokenizer = tokenizer or get_tokenizer()
    rng = rng if rng is not None else random.Random()
    fitter = _Fitter(prompt_skeleton, prompt_budget, tokenizer)
    if not fitter.fits(""):
        raise BudgetError("Map token budget cannot fit the Map prompt.")

    items = [_as_map_text(t) for t in texts]
    shuffle_in_place(items, rng)

    batches: list[SummaryBatch] = []
    estimates: list[int | None] = []
    current: list[str] = []
    current_ids: dict[str, None] = {}
    current_measure = (0, 0)
    current_tokens = 0  # cut-additive: the count of prefix + the current batch's content
    last_join = 0  # cut-additive: what the newline after the current batch's last part adds

    def flush() -> None:
        if current:
            batches.append(SummaryBatch(content="\n".join(current), community_ids=tuple(current_ids)))
            if fitter.additive:
                a, c = fitter.prefix_measure
                estimates.append(HeuristicTokenizer.total(a + current_measure[0], c + current_measure[1]))
            else:
                estimates.append(current_tokens if fitter.cut_additive else None)
            current.clear()
            current_ids.clear()

    for item in items:
        for number, (run, part_tokens, part_join) in enumerate(_split_counted(item, fitter, unit), start=1):
            part = format_part_header(item.community_id, number, unit=unit) + run
            if fitter.additive:
                a, c = fitter.measure(part)
                joined = (current_measure[0] + a + 1, current_measure[1] + c) if current else (a, c)
                fits_current = fitter.fits_measure(*joined)
            elif part_tokens is not None:
                tokens = current_tokens + last_join + part_tokens if current else fitter.prefix_tokens + part_tokens
                fits_current = tokens <= fitter.budget
            else:
                joined_text = "\n".join([*current, part])
                fits_current = fitter.fits(joined_text)
            if not fits_current:
                flush()
                if fitter.additive:
                    joined = (a, c)
                    fits_alone = fitter.fits_measure(a, c)
                elif part_tokens is not None:
                    tokens = fitter.prefix_tokens + part_tokens
                    fits_alone = tokens <= fitter.budget
                else:
                    fits_alone = fitter.fits(part)
                if not fits_alone:
                    what = {COMMUNITY: "a summary part", "evidence": "an evidence part"}.get(unit, "a source chunk part")
                    raise BudgetError(f"Map token budget cannot fit {what} for {item.community_id}.")
            current.append(part)
            current_ids.setdefault(item.community_id, None)
            if fitter.additive:
                current_measure = joined
            elif part_tokens is not None:
                current_tokens = tokens
                last_join = part_join if part_join is not None else join_tokens(part, "\n", tokenizer)
    flush()
    if any(estimate is None for estimate in estimates):
        return batches, estimate_batches(batches, prompt_skeleton, tokenizer=tokenizer)
    return batches, [e for e in estimates if e is not None]


def estimate_batches(batches: Sequence[SummaryBatch], prompt_skeleton: str, *, tokenizer: Tokenizer | None = None) -> list[int]:
    """The prompt token estimate of each batch: ``count(skeleton + "\\n" + content)``."""
    tokenizer = tokenizer or get_tokenizer()
    return [tokenizer.count(prompt_skeleton + "\n" + b.content) for b in batches]
