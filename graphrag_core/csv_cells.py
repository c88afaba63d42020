"""CSV text that a spreadsheet opens as data: the one writer of every CSV the program makes
(sweeps, the evaluation's tables).

Invariant: no text cell starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, the
characters with which Excel, LibreOffice and Google Sheets start a formula (``=HYPERLINK(...)``,
``@SUM(...)``): such a cell gets a leading ``'``, which spreadsheets read as "this is text" and
do not show. Numbers (``int``, ``float``) are written as they are, so ``-1`` stays a number;
``None`` is an empty cell. A cell holding a comma, a quote, a line feed or a carriage return is
quoted (RFC 4180), so every row stays one record whatever its text; lines end with ``\n``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """``value`` as a CSV cell that no spreadsheet runs (see the module's invariant)."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, int | float):
        text = str(value)
        return "'" + text if text.startswith(FORMULA_STARTS) else text
    return value


_QUOTED = (",", '"', "\n", "\r")


def _field(value: object) -> str:
    text = str(csv_cell(value))
    if any(mark in text for mark in _QUOTED):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A header line and one line per row, every cell through :func:`csv_cell`."""
    return "".join(",".join(_field(value) for value in row) + "\n" for row in [header, *rows])


__all__ = ["FORMULA_STARTS", "csv_cell", "csv_text"]
