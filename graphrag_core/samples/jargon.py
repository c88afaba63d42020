"""Read the Jargon File (Debian's ``jargon-text``) into articles the sample builder understands.

The lexicon part of the file holds entries that each begin with a headword line indented by
three spaces, ``   :term: /pronunciation/, part of speech``, followed by paragraphs separated
by blank lines. Entries name each other as ``{term}``. Letter sections start with a line
indented by two spaces (``  A``) followed by an index of headwords; those index lines come
before the section's first entry and are not part of any entry.

Invariants of :func:`parse_jargon`: entries come out in file order; every paragraph is a single
line with runs of whitespace collapsed; a cross-reference that breaks across a line is read
whole; the Crunchly cartoon navigation notes are dropped; entries shorter than
``MIN_BODY_CHARS`` are dropped unless they are redirects (``See {x}.``), which
:func:`jargon_articles` turns into aliases.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from .corpus import Article, BuildOptions, Paragraph
from .text import REFERENCE_RE

DEFAULT_SOURCE = Path("/usr/share/doc/jargon-text/jargon.txt.gz")
"""Where Debian's ``jargon-text`` package installs the Jargon File 4.4.7."""

LEXICON_START = "Part II. The Jargon Lexicon"
"""The line that opens the lexicon; nothing before it is read."""
LEXICON_END = "Part III. Appendices"
"""The line that closes the lexicon; nothing after it is read."""

MIN_BODY_CHARS = 20
"""Entries whose text (without the headword line) is shorter than this are dropped."""
REDIRECT_MAX_CHARS = 120
"""An entry this short whose only words are ``See``/``Syn.``-style glue around references is
a redirect: links to it are followed to its first reference."""

_HEADWORD = re.compile(r"^ {3}:(?P<term>[^\s:](?:[^:]*?[^\s:])?):(?: (?P<headline>.*))?$")
_SECTION = re.compile(r"^ {2}\S")
_SENSE = re.compile(r"^(?P<number>\d{1,2})\.\s+(?P<text>.+)$")
_CARTOON_NOTE = re.compile(r"^\((?:The next cartoon|This is the last cartoon)|Crunchly")
_REDIRECT_GLUE = re.compile(r"(?i)\b(?:see|also|syn|synonym|for|same|as|variant|of|and|or|compare|cf|abbrev|alt|spelling)\b|[\s.,;:()]+")


@dataclass(frozen=True, slots=True)
class JargonEntry:
    """One lexicon entry: its headword, the rest of its headword line, and its paragraphs."""

    term: str
    headline: str
    paragraphs: tuple[str, ...]

    @property
    def references(self) -> tuple[str, ...]:
        """The terms this entry names as ``{term}``, in first-seen order, each once."""
        seen: dict[str, None] = {}
        for paragraph in self.paragraphs:
            for match in REFERENCE_RE.finditer(paragraph):
                seen.setdefault(" ".join(match.group(1).split()), None)
        return tuple(seen)

    @property
    def redirect(self) -> str | None:
        """The term this entry only points to (``See {x}.``, ``Syn. {x}.``), else ``None``."""
        body = " ".join(self.paragraphs)
        references = self.references
        if not references or len(body) > REDIRECT_MAX_CHARS:
            return None
        if _REDIRECT_GLUE.sub("", REFERENCE_RE.sub("", body)):
            return None
        return references[0]


def read_source(path: Path) -> str:
    """The text of a Jargon File, plain or gzip-compressed (chosen by the ``.gz`` suffix)."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return handle.read()
    return path.read_text(encoding="utf-8")


def parse_jargon(text: str) -> list[JargonEntry]:
    """Every lexicon entry of a Jargon File, in file order.

    When the text has the ``Part II``/``Part III`` markers only the lines between them are
    read; otherwise the whole text is taken as lexicon (handy for small test inputs).
    """
    lines = text.splitlines()
    start, end = 0, len(lines)
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped == LEXICON_START and start == 0:
            start = number + 1
        elif stripped == LEXICON_END and number > start:
            end = number
            break
    return [
        entry
        for entry in _entries(lines[start:end])
        if entry.redirect is not None or sum(len(p) for p in entry.paragraphs) >= MIN_BODY_CHARS
    ]


def _entries(lines: Iterable[str]) -> Iterable[JargonEntry]:
    term: str | None = None
    headline = ""
    paragraphs: list[str] = []
    current: list[str] = []

    def close_paragraph() -> None:
        if current:
            paragraph = " ".join(" ".join(current).split())
            if paragraph and not _CARTOON_NOTE.search(paragraph):
                paragraphs.append(paragraph)
            current.clear()

    for line in lines:
        header = _HEADWORD.match(line)
        if header or _SECTION.match(line):
            close_paragraph()
            if term is not None and paragraphs:
                yield JargonEntry(term=term, headline=headline, paragraphs=tuple(paragraphs))
            paragraphs = []
            term = header.group("term") if header else None
            headline = " ".join((header.group("headline") or "").split()) if header else ""
            continue
        if term is None:
            continue
        if line.strip():
            current.append(line.strip())
        else:
            close_paragraph()
    close_paragraph()
    if term is not None and paragraphs:
        yield JargonEntry(term=term, headline=headline, paragraphs=tuple(paragraphs))


def definition_paragraphs(entry: JargonEntry) -> list[Paragraph]:
    """The entry's paragraphs, each marked with the sense number it opens (``1.``, ``2.``...).

    A paragraph that does not open a numbered sense belongs to the sense before it; text
    before the first numbered sense counts as sense 1.
    """
    marked: list[Paragraph] = []
    sense = 1
    for text in entry.paragraphs:
        match = _SENSE.match(text)
        opens = match is not None
        if match:
            sense = int(match.group("number"))
        marked.append(Paragraph(text=text, sense=sense, opens_sense=opens))
    return marked


def entry_to_article(entry: JargonEntry) -> Article:
    """One entry as a builder article: the headword line heads every chunk of it."""
    heading = f":{entry.term}: {entry.headline}".rstrip()
    return Article(
        title=entry.term,
        heading=heading,
        paragraphs=tuple(definition_paragraphs(entry)),
        links=entry.references,
        kind=_part_of_speech(entry.headline),
    )


_POS = (
    ("interj", "interjection"),
    ("adj", "adjective"),
    ("adv", "adverb"),
    ("vt", "verb"),
    ("vi", "verb"),
    ("v", "verb"),
    ("n", "noun"),
)


def _part_of_speech(headline: str) -> str:
    """The first part of speech named on a headword line, as a word; ``"term"`` when none."""
    for token in re.findall(r"\b([a-z]+)\.", headline):
        for abbreviation, name in _POS:
            if token == abbreviation:
                return name
    return "term"


def jargon_articles(text: str) -> list[Article]:
    """The Jargon File's entries as builder articles, in file order of first appearance.

    Entries sharing a headword (ignoring case) are merged into the first. Redirect entries
    become aliases rather than articles: a link to one is followed, through chains of
    redirects, to the entry it points to. Each article's links are unique and never itself.
    """
    merged: dict[str, JargonEntry] = {}
    for entry in parse_jargon(text):
        key = entry.term.casefold()
        if key in merged:
            first = merged[key]
            merged[key] = JargonEntry(first.term, first.headline, first.paragraphs + entry.paragraphs)
        else:
            merged[key] = entry
    aliases = {key: entry.redirect for key, entry in merged.items() if entry.redirect is not None}

    def resolve(link: str) -> str:
        seen: set[str] = set()
        key = " ".join(link.split()).casefold()
        while key in aliases and key not in seen:
            seen.add(key)
            key = " ".join(aliases[key].split()).casefold()
        return merged[key].term if key in merged else link

    articles: list[Article] = []
    for key, entry in merged.items():
        if key in aliases:
            continue
        article = entry_to_article(entry)
        links = dict.fromkeys(resolve(link) for link in entry.references)
        links.pop(entry.term, None)
        redirected = tuple((link, resolve(link)) for link in entry.references if resolve(link) != link)
        articles.append(replace(article, links=tuple(links), aliases=redirected))
    return articles


def jargon_options() -> BuildOptions:
    """How the Jargon File sample is built (three levels: roots, mid-size groups, leaves)."""
    return BuildOptions(
        name="The Jargon File 4.4.7",
        description=(
            "Hacker slang from the Jargon File (version 4.4.7, public domain), as packaged by Debian's "
            "jargon-text. Entries are documents, terms are entities, {cross-references} are "
            "relationships; communities come from recursive Louvain; summaries are extractive."
        ),
        language="en",
        min_levels=3,
    )
