"""Step 1 of a sample build: articles -> source chunks of at most ``max_chunk_chars`` characters,
split at paragraph, then sentence, then word boundaries; every chunk starts with its article's
heading line so it reads on its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..models import SourceChunk
from .corpus import Article, BuildOptions, SampleBuildError, chunk_id, document_id
from .text import Language, split_sentences


def chunk_articles(
    articles: Sequence[Article], options: BuildOptions
) -> tuple[list[SourceChunk], list[list[str]]]:
    """Chunks of every article, and for each article the chunk id holding each paragraph.

    Every chunk is at most ``max_chunk_chars`` long and starts with the article's heading; a
    paragraph split across chunks is attributed to the chunk holding its start.
    """
    chunks: list[SourceChunk] = []
    paragraph_chunks: list[list[str]] = []
    for number, article in enumerate(articles):
        heading = article.heading.strip()
        room = options.max_chunk_chars - len(heading) - 2
        if room < 200:
            raise SampleBuildError(f"The heading of {article.title!r} leaves no room in a chunk.")
        pieces: list[list[str]] = [[]]
        used = 0
        where: list[int] = []
        for paragraph in article.paragraphs:
            where.append(-1)
            for piece in _fit(paragraph.text, room, options.language):
                if pieces[-1] and used + 2 + len(piece) > room:
                    pieces.append([])
                    used = 0
                if where[-1] < 0:
                    where[-1] = len(pieces) - 1
                used += (2 if pieces[-1] else 0) + len(piece)
                pieces[-1].append(piece)
        ids = [chunk_id(number, part) for part in range(len(pieces))]
        for this_id, parts in zip(ids, pieces, strict=True):
            chunks.append(
                SourceChunk(id=this_id, document_id=document_id(number), text="\n\n".join([heading, *parts]))
            )
        paragraph_chunks.append([ids[max(0, w)] for w in where])
    return chunks, paragraph_chunks


def _fit(text: str, room: int, language: Language) -> list[str]:
    """``text`` cut into pieces of at most ``room`` characters: whole sentences when they fit,
    else words, else characters. Joining the pieces with spaces gives back the words of ``text``."""
    if len(text) <= room:
        return [text]
    pieces: list[str] = []
    current = ""
    joiner = "" if language == "zh" else " "
    for sentence in split_sentences(text, language):
        for unit in _hard_split(sentence, room):
            candidate = f"{current}{joiner}{unit}" if current else unit
            if len(candidate) <= room:
                current = candidate
            else:
                pieces.append(current)
                current = unit
    if current:
        pieces.append(current)
    return pieces


def _hard_split(sentence: str, room: int) -> list[str]:
    if len(sentence) <= room:
        return [sentence]
    parts: list[str] = []
    current = ""
    for word in re.split(r"(?<=\s)", sentence):
        while len(word) > room:
            if current:
                parts.append(current.rstrip())
                current = ""
            parts.append(word[:room])
            word = word[room:]
        if len(current) + len(word) > room:
            parts.append(current.rstrip())
            current = ""
        current += word
    if current.strip():
        parts.append(current.rstrip())
    return parts


__all__ = ["chunk_articles"]
