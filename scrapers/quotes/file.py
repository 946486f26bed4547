"""The quotes file: broker and platform quotes written by hand, as CSV or YAML, read into records.

One quote per CSV row (a header row names the columns) or per YAML list item:

    seller          required  the platform or broker, any text ("聚力算力平台")
    gpu             required  the GPU as quoted ("华为910B 64G", "H800 80G") or a canonical name
    gpu_memory_gb             memory per GPU in GB, tells variants apart
    gpu_form                  SXM | PCIe | NVL, when the name does not say
    gpu_count                 GPUs in one rentable unit (default 1: by the card; 8: a whole node)
    price           required  > 0, in `currency` per `price_per` per `billing_period`; as people
                              write it: 2139, "2.1万", "9.8k", "2,5", "9800元/台/月" (scrapers.quotes.prices)
    currency        required  CNY | EUR | USD (the currencies the warehouse converts), or said in the price
    price_per                 gpu (default) | instance (the whole unit), or said in the price (/卡, /台)
    billing_period  required  hour | day | week | month, or said in the price (/时, /天, /月)
    min_term                  the least number of billing periods one must rent (default 1)
    stock                     GPUs available; empty = unknown, "售罄" = 0, "16+" = at least 16
    valid_from, valid_to      ISO dates, both inclusive
    region, note              free text, kept

`read_records` turns a file into `Record`s, raising `CrawlError` when the file as a whole cannot
be read; `scrapers.quotes.checks.check` turns one record into a quote or its problems, each with the
line it is on: the field's own line in YAML, the row's first line in CSV.

Hostile or careless files: YAML is read by `config.user_files.yaml_list`, the one
reader of the user's files, so an item whose aliases expand too far, or refer to themselves, is
refused with its line before anything is built from it (a "billion laughs" file costs nothing,
and the file's other quotes still load); a key given twice in one item is a problem of that item.
CSV as Excel writes it: header names in any case and spacing (" Billing Period " is
billing_period), empty header cells (the columns Excel adds) are fine while their cells are
empty, `;` or tab as the separator when the header has no comma, an Excel `sep=` first line; a
column named twice is an error of the file; a field past the csv module's limit (an unclosed
quote swallowing the rest) ends the reading at its line, the rows before it kept.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from config import user_files
from scrapers import parsing

FIELDS = (
    "seller",
    "gpu",
    "gpu_memory_gb",
    "gpu_form",
    "gpu_count",
    "price",
    "currency",
    "price_per",
    "billing_period",
    "min_term",
    "stock",
    "valid_from",
    "valid_to",
    "region",
    "note",
)
REQUIRED = ("seller", "gpu", "price", "currency", "billing_period")
_MERGE_KEY = "<<"  # YAML merge key: fields taken from an anchor, which explicit keys override


@dataclass(frozen=True)
class Record:
    """One quote as written: its fields and the line of each (YAML), or of the row (CSV)."""

    values: Mapping[str, Any]
    line: int  # where the quote starts, 1-based
    field_lines: Mapping[str, int] = field(default_factory=dict)
    shape_problem: str | None = None  # not a quote at all (a YAML scalar, a CSV row too long)
    problems: tuple[tuple[int, str], ...] = ()  # (line, message) found while reading (a key twice)

    def line_of(self, name: str) -> int:
        return self.field_lines.get(name, self.line)

    def plain(self) -> dict[str, Any]:
        """The fields as JSON-ready values (dates as ISO text), for a rejected-offer line."""
        return {name: v.isoformat() if isinstance(v, dt.date) else v for name, v in self.values.items()}


def read_records(text: str, file_name: str) -> list[Record]:
    """The quotes of a CSV or YAML file (by its name's suffix); CrawlError for an unreadable file."""
    suffix = Path(file_name).suffix.lower()
    if suffix == ".csv":
        return _csv_records(text, file_name)
    if suffix in (".yaml", ".yml"):
        return _yaml_records(text, file_name)
    raise parsing.CrawlError(f"{file_name}: a quotes file ends in .csv, .yaml or .yml")


# --- YAML -----------------------------------------------------------------------


def _yaml_records(text: str, file_name: str) -> list[Record]:
    try:
        items = user_files.yaml_list(text, file_name, "quotes", "'- seller: ...'")
    except user_files.NotAList as error:
        raise parsing.LayoutChanged(str(error)) from None
    except user_files.UserFileError as error:
        raise parsing.CrawlError(str(error)) from None
    return [_yaml_record(item) for item in items]


def _yaml_record(item: user_files.Item) -> Record:
    line, written = item.line, item.written
    if item.refused is not None:
        return Record({}, line, shape_problem=item.refused)
    if written.pairs is None:
        return Record(
            {"value": written.value}, line, shape_problem="a quote is a set of fields (seller: ...)"
        )
    first: dict[str, int] = {}
    problems = []
    for key, _ in written.pairs:
        name = key.text if key.text is not None else str(key.value)
        if name == _MERGE_KEY:
            continue
        if name in first:
            problems.append(
                (key.line, f"{name} is given twice (lines {first[name]} and {key.line}): keep one")
            )
        first.setdefault(name, key.line)
    values = {str(name): value for name, value in written.value.items()}
    return Record(values, line, first, problems=tuple(problems))


# --- CSV ------------------------------------------------------------------------

_EXCEL_SEPARATOR = re.compile(r"^sep=(.)\s*$")  # Excel's first line naming the separator


def _column_name(cell: str) -> str:
    """A header cell as a field name: ' Billing Period ' -> 'billing_period'."""
    return re.sub(r"[\s\-]+", "_", cell.strip().lower())


def _csv_records(text: str, file_name: str) -> list[Record]:
    lines = io.StringIO(text, newline="")
    first = lines.readline()
    excel = _EXCEL_SEPARATOR.match(first)
    offset = 1 if excel else 0
    if excel:
        delimiter = excel.group(1)
    else:
        lines.seek(0)
        delimiter = next((d for d in (",", ";", "\t") if d in first), ",")
    reader = csv.reader(lines, delimiter=delimiter)
    try:
        header = next(reader, None)
    except csv.Error as error:
        raise parsing.CrawlError(
            f"{file_name} line {reader.line_num + offset}: {_csv_problem(error)}"
        ) from None
    if not header:
        return []
    columns = _check_header([_column_name(cell) for cell in header], file_name, 1 + offset)
    records = []
    end = reader.line_num  # the last line read so far
    while True:
        start = end + 1 + offset
        try:
            row = next(reader, None)
        except csv.Error as error:
            problem = (
                f"{_csv_problem(error)}; the rest of the file from here is not read (an unclosed quote?)"
            )
            records.append(Record({}, start, shape_problem=problem))
            break
        if row is None:
            break
        end = reader.line_num
        record = _csv_record(columns, row, start)
        if record is not None:
            records.append(record)
    return records


def _check_header(names: list[str], file_name: str, line: int) -> list[str]:
    """The header's field names ('' for an unnamed column); LayoutChanged for a header no row can follow."""
    seen: dict[str, int] = {}
    said = []
    for position, name in enumerate(names, start=1):
        if not name:
            continue
        if name in seen:
            said.append(f"column {name!r} twice (columns {seen[name]} and {position})")
        elif name not in FIELDS:
            said.append(f"unknown column {name!r}")
        seen.setdefault(name, position)
    said += [f"no {name} column" for name in REQUIRED if name not in seen]
    if said:
        raise parsing.LayoutChanged(
            f"{file_name} line {line}: {'; '.join(said)} (columns: {', '.join(FIELDS)})"
        )
    return names


def _csv_record(columns: list[str], row: list[str], line: int) -> Record | None:
    """One row as a record; None for a blank row. Cells past the header or under an unnamed
    column must be empty (Excel pads rows with them); a value there is the row's problem."""
    cells = [cell.strip() for cell in row]
    if not any(cells):
        return None
    values = {name: (cells[i] if i < len(cells) else "") for i, name in enumerate(columns) if name}
    if any(cells[len(columns) :]):
        return Record(values, line, shape_problem="more cells than columns")
    unnamed = [i + 1 for i, name in enumerate(columns) if not name and i < len(cells) and cells[i]]
    if unnamed:
        where = ", ".join(map(str, unnamed))
        return Record(
            values, line, shape_problem=f"a value in column {where}, which the header does not name"
        )
    return Record(values, line)


def _csv_problem(error: csv.Error) -> str:
    text = str(error)
    limit = re.search(r"field larger than field limit \((\d+)\)", text)
    if limit:
        return f"a field over {int(limit.group(1)):,} characters"
    return text
