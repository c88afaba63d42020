"""The table files of a Microsoft GraphRAG output, parquet or CSV, read column by column.

A table is read as the columns a reader asks for, each with a :data:`Kind`; presence and types
are checked before any value is used, and every error names the file, the row (counted from 0,
as in the parquet files) and the column.

* Parquet files are read with ``pyarrow.parquet.ParquetFile`` (not ``read_table``, which
  imports ``pyarrow.dataset`` and pandas: a second on a cold command line), and no Python value
  is turned into an arrow one on the way to a search's tables (pyarrow imports pandas to check
  it). Their schema comes from the footer alone (:func:`check_columns`), so checking a table's
  columns reads no rows.
* CSV files are what GraphRAG 3.x writes with its ``csv`` table storage (pandas ``to_csv``):
  every value is text, an empty field is a missing value, and a list is written as Python or
  numpy prints it (``['a', 'b']``, ``['a' 'b']``, over several lines when long) or as JSON.
  Each column is parsed into the type its kind names, so a CSV table reads exactly as the
  same table in parquet (:func:`parse_id_list` reads the lists).
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import IndexFormatError, IndexValidationError
from ..validation import quote

Kind = Literal["int", "float", "str", "id", "str_list"]
"""Column kinds: ``id`` accepts integers or strings (taken as text); ``float`` accepts integers."""

SUFFIXES: tuple[str, ...] = (".parquet", ".csv")
"""The table file types, in order of preference when a folder holds both."""

KIND_TEXT: dict[Kind, str] = {
    "int": "integers",
    "float": "numbers",
    "str": "strings",
    "id": "integers or strings",
    "str_list": "lists of ids",
}

_ARROW_TYPE: dict[Kind, pa.DataType] = {
    "int": pa.int64(),
    "float": pa.float64(),
    "str": pa.string(),
    "id": pa.string(),
    "str_list": pa.list_(pa.string()),
}
"""The type a CSV column of each kind is parsed into."""


def kind_matches(kind: Kind, dtype: pa.DataType) -> bool:
    """True when a parquet column of type ``dtype`` holds values of ``kind``."""
    if kind == "int":
        return pa.types.is_integer(dtype)
    if kind == "float":
        return pa.types.is_integer(dtype) or pa.types.is_floating(dtype)
    if kind == "str":
        return pa.types.is_string(dtype) or pa.types.is_large_string(dtype)
    if kind == "id":
        return pa.types.is_integer(dtype) or pa.types.is_string(dtype) or pa.types.is_large_string(dtype)
    value = getattr(dtype, "value_type", None)
    return (pa.types.is_list(dtype) or pa.types.is_large_list(dtype)) and value is not None and (
        pa.types.is_string(value) or pa.types.is_large_string(value) or pa.types.is_integer(value)
    )


def _is_csv(path: Path) -> bool:
    return path.suffix == ".csv"


def _unreadable(path: Path, exc: Exception) -> IndexValidationError:
    kind = "CSV" if _is_csv(path) else "parquet"
    return IndexValidationError(f"{path.name}: not a readable {kind} file ({exc}).", path=str(path))


# -- schemas -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Schema:
    """A table file's column names, and their types when the file says (parquet)."""

    names: tuple[str, ...]
    types: Mapping[str, pa.DataType] | None


def read_schema(path: Path) -> Schema:
    """The columns of ``path``: a parquet footer, or a CSV file's header line."""
    if _is_csv(path):
        try:
            with path.open(encoding="utf-8-sig", newline="") as handle:  # a byte order mark is no column name
                header = next(csv.reader(handle), [])
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise _unreadable(path, exc) from exc
        return Schema(tuple(header), None)
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise _unreadable(path, exc) from exc
    return Schema(tuple(schema.names), {name: schema.field(name).type for name in schema.names})


def check_columns(
    path: Path, *, required: Mapping[str, Kind], optional: Mapping[str, Kind] = {}, hint: str = ""
) -> dict[str, Kind]:
    """The columns to read from ``path`` (required ones, and the optional ones it has), checked
    against its schema: a missing required column is an :class:`IndexFormatError` listing the
    columns found; a parquet column of the wrong type an :class:`IndexValidationError`."""
    schema = read_schema(path)
    missing = [name for name in required if name not in schema.names]
    if missing:
        raise IndexFormatError(
            f"{path.name}: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(found: {', '.join(schema.names)}).{hint}",
            path=str(path),
            field=missing[0],
        )
    wanted = {**{k: v for k, v in optional.items() if k in schema.names}, **required}
    if schema.types is not None:
        for name, kind in wanted.items():
            dtype = schema.types[name]
            if not kind_matches(kind, dtype):
                raise IndexValidationError(
                    f'{path.name}, field "{name}": expected {KIND_TEXT[kind]}, found column type {dtype}.',
                    path=str(path),
                    field=name,
                )
    return wanted


# -- columns -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Columns:
    """Some checked columns of one table file; absent optional columns read as all-null.

    ``fields`` renames columns in messages, for a table derived from another's columns."""

    file: str
    path: Path
    table: pa.Table
    fields: Mapping[str, str] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return self.table.num_rows

    def has(self, name: str) -> bool:
        return name in self.table.column_names

    def array(self, name: str, dtype: pa.DataType | None = None) -> pa.Array:
        """The column as one arrow array (all nulls of ``dtype`` when the column is absent)."""
        if not self.has(name):
            return pa.nulls(self.rows, dtype or pa.null())
        column = self.table.column(name).combine_chunks()
        return column if dtype is None or column.type == dtype else pc.cast(column, dtype)

    def get(self, name: str, default: Any = None) -> list[Any]:
        """The column as a Python list (``[default] * rows`` when the column is absent)."""
        if not self.has(name):
            return [default] * self.rows
        return self.table.column(name).to_pylist()

    def ids(self, name: str) -> list[str]:
        """An id column (integers or strings) as strings: 12 becomes "12"."""
        return self.array(name, pa.string()).to_pylist()

    def id_list_array(self, name: str) -> pa.Array:
        """A list-of-ids column as one arrow array of lists of text ids (null where absent); a
        missing id inside a list is an error naming its row."""
        lists = self.array(name, pa.list_(pa.string()))
        flat = pc.list_flatten(lists)
        if flat.null_count:
            row = pc.list_parent_indices(lists)[first_true(pc.is_null(flat))].as_py()
            raise self.error(row, name, "a missing id (null) in the list.")
        return lists

    def id_lists(self, name: str) -> list[tuple[str, ...]]:
        """A list-of-ids column as tuples of text ids (empty where absent or null), checked as
        :meth:`id_list_array` checks it."""
        return [tuple(ids) if ids else () for ids in self.id_list_array(name).to_pylist()]

    def numbers(self, name: str) -> list[float | None]:
        """A float column as a list (null: missing). NaN and infinities are refused with the file,
        row and column: they are no rank or weight, and would otherwise load without a word."""
        column = self.array(name, pa.float64())
        bad = first_true(pc.invert(pc.is_finite(column)))
        if bad is not None:
            raise self.error(bad, name, f"{column[bad].as_py()} is not a finite number.")
        return column.to_pylist()

    def error(self, row: int, column: str, message: str) -> IndexValidationError:
        shown = self.fields.get(column, column)
        return IndexValidationError(
            f'{self.file} row {row}, field "{shown}": {message}', path=str(self.path), row=row, field=shown
        )


def first_true(mask: pa.Array) -> int | None:
    """The first row where ``mask`` is true (not null), or None."""
    rows = pc.indices_nonzero(mask)
    return rows[0].as_py() if len(rows) else None


def read_columns(
    path: Path,
    *,
    required: Mapping[str, Kind],
    optional: Mapping[str, Kind] = {},
    not_null: Sequence[str] = (),
    hint: str = "",
) -> Columns:
    """Read the named columns, checking presence, types and nulls before any value is used.

    ``required`` columns must exist (else :class:`IndexFormatError` listing the columns found);
    columns in ``not_null`` must hold no null (else an error naming the first null row).
    """
    wanted = check_columns(path, required=required, optional=optional, hint=hint)
    table = _read_csv(path, wanted) if _is_csv(path) else _read_parquet(path, list(wanted))
    for name in not_null:
        column = table.column(name)
        if column.null_count:
            row = first_true(pc.is_null(column))
            raise IndexValidationError(
                f'{path.name} row {row}, field "{name}": missing value (null).', path=str(path), row=row, field=name
            )
    return Columns(path.name, path, table)


def _read_parquet(path: Path, columns: list[str]) -> pa.Table:
    try:
        return pq.ParquetFile(path).read(columns=columns)
    except (OSError, pa.ArrowInvalid) as exc:
        raise _unreadable(path, exc) from exc


def _read_csv(path: Path, wanted: Mapping[str, Kind]) -> pa.Table:
    """The ``wanted`` columns of a CSV table, each parsed into its kind's type."""
    from pyarrow import csv as pacsv  # only CSV outputs need it

    try:
        text = pacsv.read_csv(
            path,
            parse_options=pacsv.ParseOptions(newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                include_columns=list(wanted),
                column_types={name: pa.string() for name in wanted},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (OSError, pa.ArrowInvalid) as exc:
        raise _unreadable(path, exc) from exc
    arrays = [_parse_column(path, name, kind, text.column(name).to_pylist()) for name, kind in wanted.items()]
    return pa.table(arrays, names=list(wanted))


def _parse_column(path: Path, name: str, kind: Kind, values: list[str]) -> pa.Array:
    parse = _PARSERS[kind]
    parsed: list[Any] = []
    for row, value in enumerate(values):
        if value == "":
            parsed.append(None)
            continue
        try:
            parsed.append(parse(value))
        except ValueError:
            raise IndexValidationError(
                f'{path.name} row {row}, field "{name}": expected {KIND_TEXT[kind]}, found {quote(value)}.',
                path=str(path),
                row=row,
                field=name,
            ) from None
    return pa.array(parsed, _ARROW_TYPE[kind])


def _parse_int(text: str) -> int:
    """An integer as pandas writes one: ``12``, or ``12.0`` from a column that also held a missing value."""
    try:
        return int(text)
    except ValueError:
        number = float(text)
        if not number.is_integer():
            raise
        return int(number)


_QUOTED_ITEM = re.compile(r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)\"""")
_SIMPLE_REPR = re.compile(r"""\[\s*(?:'[^'\\]*'\s*,?\s*)*\]""")


def parse_id_list(text: str) -> list[str]:
    """The ids a CSV field holds, as GraphRAG's CSV tables write lists.

    ``['a', 'b']`` (Python), ``['a' 'b']`` and ``['a'\\n 'b']`` (numpy), ``["a", "b"]`` and
    ``[1, 2]`` (JSON), ``[1 2]`` (numpy numbers), ``a,b`` (bare); integers become their text.
    Raises ``ValueError`` on text that is none of these.
    """
    text = text.strip()
    if not text.startswith("["):
        if "]" in text:
            raise ValueError(text)
        return [item.strip() for item in text.split(",") if item.strip()]
    if not text.endswith("]"):
        raise ValueError(text)
    if _SIMPLE_REPR.fullmatch(text):
        return re.findall(r"'([^']*)'", text)
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, list):
        return [_item_text(item) for item in value]
    inner = text[1:-1]
    quoted = _QUOTED_ITEM.findall(inner)
    if quoted:
        if _QUOTED_ITEM.sub("", inner).replace(",", " ").strip():
            raise ValueError(text)
        return [_unquote(single, double) for single, double in quoted]
    return [_item_text(_number(token)) for token in inner.replace(",", " ").split()]


def _unquote(single: str, double: str) -> str:
    """One item of a printed list, its escapes (``\\'``, ``\\n``) undone."""
    literal = f"'{single}'" if single or not double else f'"{double}"'
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError) as exc:
        raise ValueError(literal) from exc
    return str(value)


def _number(token: str) -> int | float:
    try:
        return int(token)
    except ValueError:
        return float(token)


def _item_text(item: object) -> str:
    if isinstance(item, bool) or not isinstance(item, str | int | float):
        raise ValueError(repr(item))
    if isinstance(item, float):
        if not item.is_integer():
            raise ValueError(repr(item))
        item = int(item)
    return str(item)


_PARSERS: dict[Kind, Any] = {
    "int": _parse_int,
    "float": float,
    "str": str,
    "id": str,
    "str_list": parse_id_list,
}


__all__ = [
    "KIND_TEXT",
    "SUFFIXES",
    "Columns",
    "Kind",
    "Schema",
    "check_columns",
    "first_true",
    "kind_matches",
    "parse_id_list",
    "read_columns",
    "read_schema",
]
