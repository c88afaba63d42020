"""What a sample is built from, and how: its articles (:class:`Article`, :class:`Paragraph`),
every knob of a build with its default (:class:`BuildOptions`), the ids a build gives an
article's document, chunks and entity, and the error of a corpus that cannot give an index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .text import Language

SummaryMode = Literal["extractive", "model"]

DEFAULT_SEED = 42
DEFAULT_MAX_CHUNK_CHARS = 1500
DEFAULT_MAX_LEAF_SIZE = 20
DEFAULT_MAX_LEVELS = 4
DEFAULT_ROOT_RESOLUTION = 0.5
DEFAULT_SPLIT_RESOLUTION = 1.0
DEFAULT_MAX_CLAIMS_PER_ARTICLE = 4


class SampleBuildError(ValueError):
    """The corpus or the options cannot give an index with the promised shape."""


@dataclass(frozen=True, slots=True)
class Paragraph:
    """A paragraph of an article; ``sense`` is the numbered meaning it belongs to (from 1)."""

    text: str
    sense: int = 1
    opens_sense: bool = False


@dataclass(frozen=True, slots=True)
class Article:
    """One source article: it becomes a document, its chunks, an entity and its claims.

    ``links`` are the titles this article cross-references (matched case-insensitively to
    other articles' titles; unknown ones are ignored). ``heading`` opens every chunk.
    ``aliases`` name, for a ``{reference}`` in the text that is not itself a title (a redirect),
    the title it stands for, so the reference's chunk can be found.
    """

    title: str
    heading: str
    paragraphs: tuple[Paragraph, ...]
    links: tuple[str, ...] = ()
    kind: str = "term"
    aliases: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """Every knob of a sample build, with its default in one place."""

    name: str
    description: str = ""
    language: Language = "en"
    seed: int = DEFAULT_SEED
    max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS
    max_leaf_size: int = DEFAULT_MAX_LEAF_SIZE
    max_levels: int = DEFAULT_MAX_LEVELS
    min_levels: int = 2
    root_resolution: float = DEFAULT_ROOT_RESOLUTION
    split_resolution: float = DEFAULT_SPLIT_RESOLUTION
    max_claims_per_article: int = DEFAULT_MAX_CLAIMS_PER_ARTICLE
    summaries: SummaryMode = "extractive"
    summary_concurrency: int = 4


def document_id(number: int) -> str:
    return f"d{number + 1:04d}"


def entity_id(number: int) -> str:
    return f"e{number + 1:04d}"


def chunk_id(number: int, part: int) -> str:
    return f"d{number + 1:04d}-{part + 1}"


__all__ = [
    "DEFAULT_MAX_CHUNK_CHARS",
    "DEFAULT_MAX_CLAIMS_PER_ARTICLE",
    "DEFAULT_MAX_LEAF_SIZE",
    "DEFAULT_MAX_LEVELS",
    "DEFAULT_ROOT_RESOLUTION",
    "DEFAULT_SEED",
    "DEFAULT_SPLIT_RESOLUTION",
    "Article",
    "BuildOptions",
    "Paragraph",
    "SampleBuildError",
    "SummaryMode",
    "chunk_id",
    "document_id",
    "entity_id",
]
