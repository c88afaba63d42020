"""The Chinese sample: a short original text about the history of Chinese tea, built with the
same pipeline as the Jargon File (language ``"zh"``).

Source format (``sample_data/zh-tea-source.txt``): lines starting with ``#`` are comments; an
article starts with a line ``:标题: 类别`` at the start of the line; its paragraphs follow,
separated by blank lines; articles name each other as ``{标题}``. Articles come out in file order.
"""

from __future__ import annotations

import re

from .bundled import SAMPLE_DATA
from .corpus import Article, BuildOptions, Paragraph
from .text import REFERENCE_RE, Language

SOURCE_FILE = SAMPLE_DATA / "zh-tea-source.txt"
"""The committed source text of the Chinese sample."""

LANGUAGE: Language = "zh"
_HEADING = re.compile(r"^:(?P<title>[^:\s][^:]*):\s*(?P<kind>.*)$")


class ZhSourceError(ValueError):
    """The Chinese source text is not in the format above; the message names the line."""


def parse_zh_source(text: str) -> list[Article]:
    """Every article of the source text, in file order (see the module docstring)."""
    articles: list[Article] = []
    title: str | None = None
    kind = ""
    paragraphs: list[str] = []
    current: list[str] = []

    def close_paragraph() -> None:
        if current:
            paragraphs.append("".join(current))
            current.clear()

    def close_article() -> None:
        close_paragraph()
        if title is not None:
            if not paragraphs:
                raise ZhSourceError(f"Article {title!r} has no text.")
            links = dict.fromkeys(m.group(1).strip() for p in paragraphs for m in REFERENCE_RE.finditer(p))
            links.pop(title, None)
            articles.append(
                Article(
                    title=title,
                    heading=f":{title}: {kind}".rstrip(),
                    paragraphs=tuple(Paragraph(text=p, sense=n + 1) for n, p in enumerate(paragraphs)),
                    links=tuple(links),
                    kind=kind or "条目",
                )
            )
        paragraphs.clear()

    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("#"):
            continue
        heading = _HEADING.match(line)
        if heading:
            close_article()
            title, kind = heading.group("title").strip(), heading.group("kind").strip()
        elif not line.strip():
            close_paragraph()
        elif title is None:
            raise ZhSourceError(f"Line {number}: text before the first article heading (':标题: 类别').")
        else:
            current.append(line.strip())
    close_article()
    return articles


def zh_options() -> BuildOptions:
    """How the Chinese sample is built: small leaves so that its ~20 articles give 2+ levels,
    and one claim per paragraph (up to three)."""
    return BuildOptions(
        name="中国茶小史 (zh-tea)",
        description=(
            "A small original Chinese/English sample about the history of Chinese tea, written for "
            "this project. It exercises the CJK token estimate and rendering."
        ),
        language=LANGUAGE,
        max_leaf_size=4,
        max_levels=3,
        min_levels=2,
        root_resolution=0.5,
        max_claims_per_article=3,
    )
