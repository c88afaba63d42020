"""What each ``community_level`` choice of an index covers, counted once for every reader (the
command line's ``inspect``, the app's Index page): :func:`level_statistics` and
:func:`index_statistics`. Pure: they read the index only and call no model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from .models import LEAF, Community, Index
from .tokens import Tokenizer, get_tokenizer


class LevelStats(BaseModel):
    """One ``community_level`` choice: its communities, the summaries a search would map over
    (the non-blank ones), their tokens (the summaries alone, and the full map texts with claims
    and sources as asked) and the claims those map texts bring."""

    model_config = ConfigDict(frozen=True)

    level: int | str
    communities: int
    summaries: int
    summary_tokens: int
    map_text_tokens: int
    claims: int = 0

    @property
    def blank_summaries(self) -> int:
        return self.communities - self.summaries

    def as_row(self) -> dict[str, object]:
        """The row the app's level table shows."""
        return {
            "level": str(self.level),
            "communities": self.communities,
            "with summary": self.summaries,
            "summary tokens": self.summary_tokens,
            "map text tokens": self.map_text_tokens,
        }


def _stats(index: Index, level: int | str, pool: Sequence[Community], tokenizer: Tokenizer, include_claims: bool, include_sources: bool) -> LevelStats:
    selected = [c for c in pool if c.summary.strip()]
    return LevelStats(
        level=level,
        communities=len(pool),
        summaries=len(selected),
        summary_tokens=sum(tokenizer.count(c.summary.strip()) for c in selected),
        map_text_tokens=sum(
            tokenizer.count(index.map_text(c.id, include_claims=include_claims, include_sources=include_sources)) for c in selected
        ),
        claims=sum(len(index.leaf_claims(c.id)) for c in selected),
    )


def level_statistics(
    index: Index, *, tokenizer: Tokenizer | None = None, include_claims: bool = True, include_sources: bool = True
) -> list[LevelStats]:
    """One entry per level, in level order, then the ``leaf`` choice. Tokens are counted with
    ``tokenizer`` (default: the heuristic estimate of spec section 4)."""
    tokenizer = tokenizer or get_tokenizer()
    by_level: dict[int, list[Community]] = {level: [] for level in index.levels()}
    for community in index.communities:
        by_level[community.level].append(community)
    rows = [_stats(index, level, pool, tokenizer, include_claims, include_sources) for level, pool in by_level.items()]
    rows.append(_stats(index, LEAF, list(index.leaves), tokenizer, include_claims, include_sources))
    return rows


def level_warnings(stats: Sequence[LevelStats]) -> list[str]:
    """A warning for each choice where a search finds nothing, or a level with blank summaries."""
    warnings: list[str] = []
    for entry in stats:
        if entry.communities and not entry.summaries:
            warnings.append(f"Level {entry.level}: no community has a summary; a search there finds nothing.")
        elif entry.blank_summaries and entry.level != LEAF:
            warnings.append(f"Level {entry.level}: {entry.blank_summaries} of {entry.communities} communities have a blank summary.")
    return warnings


def index_statistics(index: Index, *, tokenizer: Tokenizer, include_claims: bool = True, include_sources: bool = True) -> dict[str, Any]:
    """The ``inspect`` report: per choice (``leaf`` first, then each level) the figures of
    :class:`LevelStats`, plus the table totals and the index's and the levels' warnings."""
    stats = level_statistics(index, tokenizer=tokenizer, include_claims=include_claims, include_sources=include_sources)
    ordered = [stats[-1], *stats[:-1]]
    return {
        "name": index.name,
        "tokenizer": tokenizer.name,
        "levels": [entry.model_dump() for entry in ordered],
        "totals": index.stats(),
        "warnings": [*index.warnings, *level_warnings(ordered)],
    }


__all__ = ["LevelStats", "index_statistics", "level_statistics", "level_warnings"]
