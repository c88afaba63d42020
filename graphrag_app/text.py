"""The app's words: untrusted text (from an index, a model or a URL) made safe where the app
shows it, and the names it gives runs, fates and counts; no streamlit here.

Short values: :func:`plot_text` for Plotly labels and hover text (:func:`hover_paragraph` for a
long one), :func:`escape_markdown` for a line of Streamlit Markdown. The one place each escaping
rule lives.

How the app names things in its lists and tables: a run (Compare's
pickers, the history) with :func:`run_label`, and among the runs compared with :func:`run_labels`;
a reduce candidate's fate (:data:`FATE_LABELS`) and a community's fate in a dynamic selection
(:data:`WALK_LABELS`); a large count (:func:`short_count`).

Model and index text: drawn as Markdown, never as HTML. :func:`safe_markdown` keeps the Markdown
a model writes (headings, lists, emphasis, tables) and neutralises the rest: raw HTML, images,
links and link definitions of its own, maths and Streamlit's ``:color[...]`` directives. Only the
links :func:`linked_markdown` adds are links.
"""

from __future__ import annotations

import html
import re
import string
import textwrap
from collections.abc import Callable, Sequence

from graphrag_core.citations import UNSUPPORTED_LABELS, Citation, Reference, find_citations
from graphrag_core.history.records import RunRecord, RunSummary
from graphrag_core.models import Claim, Entity, Relationship
from graphrag_core.models import Index
from graphrag_core.records import RECORD_NAMES, AnyRecord, IndexRecords, RecordKind, record_ref
from graphrag_core.support.models import VERDICT_LABELS
from graphrag_core.report import settings_text
from graphrag_core.status import RunStatus

from .urls import community_records_url, provenance_url, record_url

_MARKDOWN_SPECIAL = re.compile(r"([\\`*\[\]<>|~$])")
_LINE_START = re.compile(r"^(\s*)([#>+\-=]|\d+[.)])")


def plot_text(text: object) -> str:
    """``text`` made inert for Plotly labels and hover text (which interpret ``<b>``, ``<a>``…)."""
    return html.escape(str(text), quote=False)


def escape_markdown(text: str) -> str:
    """``text`` on one line, safe inside Markdown: no HTML, links, images, code, emphasis with
    ``*``, tables, strike-through, maths or Streamlit ``:color[...]`` directives, and no block
    syntax at the start. Plain prose (``.``, ``:``, ``_`` within words, paths) is left as is, so
    messages stay readable and searchable."""
    line = _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))

    def escape_start(match: re.Match[str]) -> str:
        lead, mark = match.group(1), match.group(2)
        return lead + (mark[:-1] + "\\" + mark[-1] if mark[0].isdigit() else "\\" + mark)

    return _LINE_START.sub(escape_start, line)


HOVER_DESCRIPTION_CHARS = 300
HOVER_WRAP = 60


def one_line(text: str, limit: int) -> str:
    """``text`` on one line, cut to at most ``limit`` characters (the cut marked ``…``)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def hover_paragraph(text: str, *, limit: int = HOVER_DESCRIPTION_CHARS, width: int = HOVER_WRAP) -> str:
    """Untrusted text for a hover box: cut, escaped, wrapped with ``<br>`` (the only markup)."""
    lines = textwrap.wrap(one_line(text, limit), width=width) or [""]
    return "<br>".join(plot_text(line) for line in lines)


# -- model and index text as safe Markdown ---------------------------------------------------------

# Characters that could start HTML, a link or image, maths or a directive.
_UNSAFE = re.compile(r"([\\<\[\]$])")
_DIRECTIVE = re.compile(r":(?=[a-z\-]+\\\[)")




def safe_markdown(text: str) -> str:
    """``text`` as Markdown that renders no HTML, image, foreign link, maths or directive."""
    escaped = _UNSAFE.sub(r"\\\1", text)
    return _DIRECTIVE.sub(r"\\:", escaped)


_HEADING = re.compile(r"^( {0,3})(#{1,6})(?=\s)", re.MULTILINE)


def demote_headings(text: str, *, by: int) -> str:
    """Markdown headings ``by`` levels smaller (at most ``######``), so a model's or a report's
    ``# Title`` sits below the page's own headings."""
    return _HEADING.sub(lambda m: m.group(1) + "#" * min(6, len(m.group(2)) + by), text)


def _title(text: str) -> str:
    return " ".join(text.replace("\\", "/").replace('"', "'").split())


def link(label: str, url: str, *, title: str | None = None) -> str:
    """A Markdown link whose label is escaped and whose hover text is ``title``."""
    safe_label = safe_markdown(label).replace("(", "\\(").replace(")", "\\)")
    hover = f' "{_title(title)}"' if title else ""
    return f"[{safe_label}]({url}{hover})"


Linker = Callable[[Reference], str | None]
"""The Markdown for one reference (a link, maybe flagged), or ``None`` to keep its text."""


_MORE = re.compile(r"\+\s*more\b", re.IGNORECASE)


def linked_markdown(
    text: str, linker: Linker, *, citations: Sequence[Citation] | None = None, more: Callable[[Citation], str | None] | None = None
) -> str:
    """``text`` as safe Markdown with each reference of each citation replaced by ``linker``'s
    Markdown, and each ``+more`` of a citation by ``more``'s (when given and not None)."""
    citations = find_citations(text) if citations is None else citations
    out: list[str] = []
    position = 0

    def inside(segment: str, citation: Citation) -> str:
        """A citation's text between its references: safe, its ``+more`` maybe a link."""
        replacement = more(citation) if more is not None and citation.more else None
        if replacement is None:
            return safe_markdown(segment)
        parts = _MORE.split(segment)
        return replacement.join(safe_markdown(part) for part in parts)

    for citation in citations:
        out.append(safe_markdown(text[position : citation.start]))
        inner = citation.start
        for reference in citation.references:
            out.append(inside(text[inner : reference.start], citation))
            replacement = linker(reference)
            out.append(safe_markdown(text[reference.start : reference.end]) if replacement is None else replacement)
            inner = reference.end
        out.append(inside(text[inner : citation.end], citation))
        position = citation.end
    out.append(safe_markdown(text[position:]))
    return "".join(out)


def _unit_linker(
    kind: str,
    noun: str,
    url_for: Callable[[str], str],
    title_for: Callable[[str], str | None],
    unsupported: Callable[[str], str | None],
) -> Linker:
    """References of ``kind`` become links (``noun`` and the title on hover); an unsupported id
    is flagged in place (a badge naming why), and an id not in the index is not a link."""

    def render(reference: Reference) -> str | None:
        if reference.kind != kind:
            return None
        cid = reference.id
        reason = unsupported(cid)
        if reason == "not_in_index":
            return f":red-badge[⚠ {safe_markdown(cid)}: unsupported, {UNSUPPORTED_LABELS[reason]}]"
        title = title_for(cid)
        hover = f"{noun} {cid}: {title}" if title else f"{noun} {cid}"
        if reason is not None:
            hover += f" (unsupported: {UNSUPPORTED_LABELS.get(reason, reason)})"
        text = link(cid, url_for(cid), title=hover)
        if reason is not None:
            text += f" :orange-badge[⚠ unsupported: {UNSUPPORTED_LABELS.get(reason, reason)}]"
        return text

    return render


def community_linker(
    url_for: Callable[[str], str],
    *,
    title_for: Callable[[str], str | None],
    unsupported: Callable[[str], str | None],
) -> Linker:
    """Community references become links to their provenance (title on hover); an unsupported id
    is flagged in place (a badge naming why), and an id not in the index is not a link."""
    return _unit_linker("community", "Community", url_for, title_for, unsupported)


def source_linker(
    url_for: Callable[[str], str],
    *,
    title_for: Callable[[str], str | None],
    unsupported: Callable[[str], str | None],
) -> Linker:
    """Source chunk references (the citations of a ``text`` or ``vector`` run's answer) become
    links to the chunk's view (its document on hover), flagged like community references."""
    return _unit_linker("source", "Source", url_for, title_for, unsupported)


def record_hover(record: AnyRecord) -> str:
    """What a link to a record says on hover: its kind, reference and description."""
    ref = record_ref(record)
    if isinstance(record, Entity):
        return f"Entity {ref}: {record.title}. {record.description[:300]}"
    if isinstance(record, Relationship):
        return f"Relationship {ref}: {record.source} → {record.target}. {record.description[:300]}"
    if isinstance(record, Claim):
        head = record.subject if not record.object else f"{record.subject} → {record.object}"
        return f"Claim {ref}: {head}: {record.description}"[:320]
    return f"Source {ref}: {getattr(record, 'text', '')[:300]}"


def record_linker(records: IndexRecords, url_for: Callable[[RecordKind, str], str], *, flag_missing_tables: bool) -> Linker:
    """Entity, relationship, claim and source references become links to their record views
    (the record on hover); a reference the index does not hold is flagged in place. An index
    without any record of a kind: the reference is flagged when ``flag_missing_tables`` (a
    model's answer cites it, and nothing here can check it), else kept as text (an index's own
    report cites it)."""

    def render(reference: Reference) -> str | None:
        if reference.kind == "community":
            return None
        name = RECORD_NAMES[reference.kind]
        if not records.has_kind(reference.kind):
            if not flag_missing_tables:
                return None
            return f":orange-badge[⚠ {name} {safe_markdown(reference.id)}: the index holds no {name.lower()} records]"
        record = records.get(reference.kind, reference.id)
        if record is None:
            return f":orange-badge[⚠ {name} {safe_markdown(reference.id)}: not in the index]"
        return link(reference.id, url_for(reference.kind, reference.id), title=record_hover(record))

    return render


def either(*linkers: Linker) -> Linker:
    """The first of ``linkers`` that renders a reference (others return None for it)."""

    def render(reference: Reference) -> str | None:
        for linker in linkers:
            if (text := linker(reference)) is not None:
                return text
        return None

    return render


def cited_markdown(
    text: str,
    *,
    index: Index | None,
    index_key: str,
    run_id: str | None,
    unsupported: Callable[[str], str | None],
    title_for: Callable[[str], str | None],
    unit: str = "community",
) -> str:
    """Model text (an answer, a map answer, one of their sentences) as safe Markdown with every
    citation a link or flagged: the run's units (``unit``: communities, or the source chunks of a
    ``text`` or ``vector`` run) to their views, titled by ``title_for`` (``unsupported`` says why
    an id is flagged), entities, relationships, claims and sources to their record views
    (flagged when ``index`` lacks them), ``+more`` to the cited community's record list."""
    if unit == "source":
        linker = source_linker(lambda cid: record_url(index_key, "source", cid, run_id), title_for=title_for, unsupported=unsupported)
    else:
        linker = community_linker(lambda cid: provenance_url(index_key, cid, run_id), title_for=title_for, unsupported=unsupported)
    if index is not None:
        linker = either(linker, record_linker(IndexRecords(index), lambda kind, ref: record_url(index_key, kind, ref, run_id), flag_missing_tables=True))
    return linked_markdown(text, linker, more=more_linker(lambda cid: community_records_url(index_key, cid, run_id)))


MORE_HOVER = "The answer cites more records than it lists: all records of community {id}"


def more_linker(url_for: Callable[[str], str]) -> Callable[[Citation], str | None]:
    """A citation's ``+more`` as a link to the record list of the community it names first
    (``url_for(community_id)``); a citation naming no community keeps ``+more`` as text."""

    def render(citation: Citation) -> str | None:
        communities = citation.community_ids
        if not communities:
            return None
        return link("+more", url_for(communities[0]), title=MORE_HOVER.format(id=communities[0]))

    return render

# -- how the app names runs, fates and counts ------------------------------------------------------

FATE_LABELS: dict[str, str] = {
    "selected": "selected",
    "skipped": "skipped (over budget)",
    "not_tried": "not tried (after stop)",
    "dropped": "dropped (usefulness 0)",
}
"""A reduce candidate's fate as every table, chart and panel names it."""


WALK_LABELS: dict[str, str] = {
    "queued": "being rated",
    "kept": "kept (the map reads it)",
    "pruned": "pruned (rated below the threshold)",
    "superseded": "replaced by its children",
    "skipped": "skipped (blank summary)",
    "failed": "failed (kept)",
    "unreached": "never reached",
}
"""What a dynamic selection's walk did with a community, as its chart, table and panels name it."""


def short_count(n: int) -> str:
    """``449192`` -> ``449k``, ``1234567`` -> ``1.2M``, ``950`` -> ``950``."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{round(n / 1000):,}k"
    return f"{n:,}"


QUERY_CHARS = 60
"""A question longer than this is cut (with an ellipsis) in a run's label."""
ID_CHARS = 8
"""How much of a run's id its label shows (enough to tell runs apart; the whole id is in the URL)."""


def short_query(query: str, *, chars: int = QUERY_CHARS) -> str:
    """``query`` cut to ``chars`` characters, with an ellipsis when it was longer."""
    return query if len(query) <= chars else query[: chars - 1].rstrip() + "…"


def run_label(run: RunSummary | RunRecord, *, query_chars: int = QUERY_CHARS, brief: bool = False) -> str:
    """The one label of a run in the app's lists, what tells runs apart first and the id last:
    ``question · settings · status · index · when · [label] · id``. The settings say
    ``dynamic (threshold N)`` for a dynamic selection; the status is the word people read
    (a stopped run reads ``stopped``); the run's own label is shown whole. ``brief`` leaves out
    the status, index and time (for a select box beside a table that shows them)."""
    level = run.request.reported_level if run.request is not None else getattr(run, "community_level", None)
    parts = [short_query(run.query, chars=query_chars), settings_text(run.request, seed=run.seed, level=level)]
    if not brief:
        parts += [RunStatus(run.status).word, run.index_name, run.created_at.replace("T", " ")[:16]]
    if run.label:
        parts.append(f"[{run.label}]")
    parts.append(run.run_id[:ID_CHARS])
    return " · ".join(parts)


BRIEF_QUERY_CHARS = 36
"""A question is cut to this many characters in a brief label (:func:`run_label`'s ``brief``)."""
LABEL_QUERY_CHARS = 28
"""A question that sets compared runs apart is cut to this many characters in their names."""


def _label_parts(record: RunRecord) -> dict[str, str]:
    """What may set a run apart from the others compared, in the order its name lists them."""
    request = record.request
    return {
        "question": short_query(record.query, chars=LABEL_QUERY_CHARS),
        "index": record.index_name,
        "selection": request.selection_label,
        "map": f"map {request.map_token_budget:,}",
        "reduce": f"reduce {request.reduce_token_budget:,}",
        "seed": f"seed {record.seed}" if record.seed is not None else "seed drawn",
        "strategy": request.reduce_strategy,
        "claims": "claims" if request.include_claims else "no claims",
        "excerpts": "excerpts" if request.include_sources else "no excerpts",
        "tokenizer": request.tokenizer,
        "model": record.model,
    }


def run_labels(records: Sequence[RunRecord]) -> list[str]:
    """Each run's name in a comparison: a letter for its place, what sets it apart from the
    other runs (question, level or ``dynamic (threshold N)``, budgets, seed, ...; only what
    differs), then its short id, e.g. ``A · level 0 · seed 1 · e8b9041d``. Runs that differ in
    nothing are told apart by letter and id alone. The letter makes every name unique."""
    letters = string.ascii_uppercase
    parts = [_label_parts(record) for record in records]
    differing = [name for name in (parts[0] if parts else {}) if len({p[name] for p in parts}) > 1]
    return [
        " · ".join([letters[i % 26], *(p[name] for name in differing), record.run_id[:ID_CHARS]])
        for i, (record, p) in enumerate(zip(records, parts))
    ]


# -- a support check's marks (issue 41) ------------------------------------------------------------

VERDICT_ICONS = {"supported": ":material/check_circle:", "partial": ":material/contrast:", "unsupported": ":material/cancel:"}
"""Each support verdict's icon, always drawn with its word (colour is never the only signal)."""
VERDICT_COLOURS = {"supported": "green", "partial": "orange", "unsupported": "red"}
QUOTE_CONTEXT_CHARS = 400
"""How much of a unit's text :func:`highlighted_markdown` shows on each side of a quote (the rest cut, marked ``…``)."""


def verdict_badge(verdict: str) -> str:
    """A support verdict as a Markdown badge, its icon and its word: ``:green-badge[:material/check_circle: supported]``."""
    return f":{VERDICT_COLOURS[verdict]}-badge[{VERDICT_ICONS[verdict]} {VERDICT_LABELS[verdict]}]"


def _escaped_lines(text: str) -> str:
    """``text`` escaped line by line (its line breaks kept as hard breaks), a space at either end
    kept (it sits beside a highlight)."""
    lines = [escape_markdown(line) for line in text.split("\n")]
    lead = " " if text[:1].isspace() and lines[0] else ""
    tail = " " if text[-1:].isspace() and lines[-1] else ""
    return lead + "  \n".join(lines) + tail


def highlighted_markdown(text: str, start: int, end: int, *, context: int = QUOTE_CONTEXT_CHARS) -> str:
    """Untrusted ``text`` as safe Markdown with ``text[start:end]`` highlighted (bold, on a
    yellow background), cut to ``context`` characters on each side of it."""
    before, quote, after = text[max(0, start - context) : start], text[start:end], text[end : end + context]
    lead = "…" if start > context else ""
    trail = "…" if end + context < len(text) else ""
    return f"{lead}{_escaped_lines(before)}:yellow-background[**{escape_markdown(quote)}**]{_escaped_lines(after)}{trail}"


__all__ = [
    "BRIEF_QUERY_CHARS",
    "FATE_LABELS",
    "WALK_LABELS",
    "ID_CHARS",
    "LABEL_QUERY_CHARS",
    "QUERY_CHARS",
    "run_label",
    "run_labels",
    "short_count",
    "short_query",
    "MORE_HOVER",
    "QUOTE_CONTEXT_CHARS",
    "VERDICT_COLOURS",
    "VERDICT_ICONS",
    "highlighted_markdown",
    "verdict_badge",
    "escape_markdown",
    "hover_paragraph",
    "one_line",
    "plot_text",
    "UNSUPPORTED_LABELS",
    "cited_markdown",
    "community_linker",
    "demote_headings",
    "either",
    "link",
    "linked_markdown",
    "more_linker",
    "record_hover",
    "record_linker",
    "safe_markdown",
    "source_linker",
]
