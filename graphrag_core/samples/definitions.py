"""Step 5 of a sample build: each article's definitional sentences, as its entity's description
and as claims: one definitional statement per sense of each article (up to
``max_claims_per_article``), citing the chunk that holds it, attached to the article's leaf
community.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..models import Claim
from .corpus import Article, BuildOptions
from .hierarchy import CommunityNode
from .text import Language, first_sentences, strip_reference_braces

CLAIM_MAX_CHARS = 400


def definition(article: Article, language: Language) -> str:
    """The article's first definitional sentence(s), without etymology brackets or braces."""
    for paragraph in article.paragraphs:
        text = _definitional_text(paragraph.text)
        if text:
            return first_sentences(text, language, max_chars=CLAIM_MAX_CHARS)
    return ""


def _definitional_text(text: str) -> str:
    """A paragraph without its sense number, leading etymology brackets, a repeated part of
    speech (``n.``, ``vt.``) or cross-reference braces."""
    text = re.sub(r"^\d{1,2}\.\s+", "", text.strip())
    text = re.sub(r"^(?:\[[^\]]*\]\s*)+", "", text)
    text = re.sub(r"^(?:(?:n|v|vt|vi|adj|adv|interj)\.,?\s+)+", "", text)
    return strip_reference_braces(text).strip()


def community_claims(
    articles: Sequence[Article],
    ordered: Sequence[CommunityNode],
    centrality: dict[int, list[int]],
    paragraph_chunks: Sequence[Sequence[str]],
    options: BuildOptions,
) -> list[Claim]:
    """One claim per sense of each article (its first definitional paragraph), leaf by leaf in
    community order, most central article first; each cites the chunk holding that paragraph."""
    claims: list[Claim] = []
    for node in ordered:
        if node.children:
            continue
        for member in centrality[id(node)]:
            article = articles[member]
            seen_senses: set[int] = set()
            for position, paragraph in enumerate(article.paragraphs):
                if paragraph.sense in seen_senses or len(seen_senses) >= options.max_claims_per_article:
                    continue
                text = _definitional_text(paragraph.text)
                if not text:
                    continue
                seen_senses.add(paragraph.sense)
                claims.append(
                    Claim(
                        id=f"c{len(claims) + 1:05d}",
                        community_id=node.id,
                        subject=article.title,
                        description=first_sentences(text, options.language, max_chars=CLAIM_MAX_CHARS),
                        chunk_ids=(paragraph_chunks[member][position],),
                    )
                )
    return claims


__all__ = ["CLAIM_MAX_CHARS", "community_claims", "definition"]
