"""The quotes file: broker and platform quotes written by hand, as CSV or YAML, read and checked.

One quote per CSV row (a header row names the columns) or per YAML list item:

    seller          required  the platform or broker, any text ("聚力算力平台")
    gpu             required  the GPU as quoted ("华为910B 64G", "H800 80G") or a canonical name
    gpu_memory_gb             memory per GPU in GB, tells variants apart
    gpu_form                  SXM | PCIe | NVL, when the name does not say
    gpu_count                 GPUs in one rentable unit (default 1: by the card; 8: a whole node)
    price           required  > 0, in `currency` per `price_per` per `billing_period`
    currency        required  CNY | EUR | USD (the currencies the warehouse converts)
    price_per                 gpu (default) | instance (the whole unit)
    billing_period  required  hour | day | week | month
    min_term                  the least number of billing periods one must rent (default 1)
    stock                     GPUs available; empty = unknown, "售罄" = 0, "16+" = at least 16
    valid_from, valid_to      ISO dates, both inclusive
    region, note              free text, kept

`read_records` turns a file into `Record`s (raising `CrawlError` when the file as a whole
cannot be read); `check` turns one record into a `Quote`, or into its problems, each with
the line it is on: the field's own line in YAML, the row's line in CSV.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml

from scrapers import parsing
from scrapers.items import CURRENCIES as OFFER_CURRENCIES
from scrapers.items import BillingPeriod, PricePer, PricingType

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
PLAN_OF_PERIOD: dict[str, PricingType] = {
    "hour": "on_demand",
    "day": "daily_plan",
    "week": "weekly_plan",
    "month": "monthly_plan",
}
# Allowed spellings (lower case) -> the value used.
CURRENCIES = {code.lower(): code for code in sorted(OFFER_CURRENCIES)}
FORMS = {"sxm": "SXM", "pcie": "PCIe", "nvl": "NVL"}
PRICE_PER = {"gpu": "gpu", "instance": "instance"}
PERIODS = {period: period for period in PLAN_OF_PERIOD}


@dataclass(frozen=True)
class Record:
    """One quote as written: its fields and the line of each (YAML), or of the row (CSV)."""

    values: Mapping[str, Any]
    line: int  # where the quote starts, 1-based
    field_lines: Mapping[str, int] = field(default_factory=dict)
    shape_problem: str | None = None  # not a quote at all (a YAML scalar, a CSV row too long)

    def line_of(self, name: str) -> int:
        return self.field_lines.get(name, self.line)

    def plain(self) -> dict[str, Any]:
        """The fields as JSON-ready values (dates as ISO text), for a rejected-offer line."""
        return {name: v.isoformat() if isinstance(v, dt.date) else v for name, v in self.values.items()}


@dataclass(frozen=True)
class Quote:
    """One checked quote."""

    seller: str
    gpu: str
    gpu_memory_gb: float | None
    gpu_form: str | None
    gpu_count: int
    price: float
    currency: str
    price_per: PricePer
    billing_period: BillingPeriod
    min_term: int
    stock: int | None
    valid_from: dt.date | None
    valid_to: dt.date | None
    region: str | None
    note: str | None

    @property
    def pricing_type(self) -> PricingType:
        return PLAN_OF_PERIOD[self.billing_period]

    @property
    def offer_id(self) -> str:
        """Stable while the quote's terms stand: seller, GPU, unit size, region and term."""
        parts = [
            self.seller,
            self.gpu,
            f"{self.gpu_count}x",
            self.region,
            f"{self.min_term} {self.billing_period}",
        ]
        return "/".join(part for part in parts if part)


# --- reading --------------------------------------------------------------------


def read_records(text: str, file_name: str) -> list[Record]:
    """The quotes of a CSV or YAML file (by its name's suffix); CrawlError for an unreadable file."""
    suffix = Path(file_name).suffix.lower()
    if suffix == ".csv":
        return _csv_records(text, file_name)
    if suffix in (".yaml", ".yml"):
        return _yaml_records(text, file_name)
    raise parsing.CrawlError(f"{file_name}: a quotes file ends in .csv, .yaml or .yml")


def _yaml_records(text: str, file_name: str) -> list[Record]:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        items = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise parsing.CrawlError(f"{file_name}{where}: not valid YAML: {problem}") from None
    if root is None:
        return []
    if not isinstance(root, yaml.SequenceNode) or not isinstance(items, list):
        line = root.start_mark.line + 1
        raise parsing.LayoutChanged(f"{file_name} line {line}: expected a list of quotes ('- seller: ...')")
    records = []
    for node, item in zip(root.value, items, strict=True):
        line = node.start_mark.line + 1
        if not isinstance(node, yaml.MappingNode) or not isinstance(item, dict):
            records.append(
                Record({"value": item}, line, shape_problem="a quote is a set of fields (seller: ...)")
            )
            continue
        lines = {str(key.value): key.start_mark.line + 1 for key, _ in node.value}
        records.append(Record({str(name): value for name, value in item.items()}, line, lines))
    return records


def _csv_records(text: str, file_name: str) -> list[Record]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if not reader.fieldnames:
        return []
    columns = [name.strip() for name in reader.fieldnames]
    unknown = [name for name in columns if name not in FIELDS]
    missing = [name for name in REQUIRED if name not in columns]
    if unknown or missing:
        said = [f"unknown column {name!r}" for name in unknown] + [f"no {name} column" for name in missing]
        raise parsing.LayoutChanged(f"{file_name} line 1: {'; '.join(said)} (columns: {', '.join(FIELDS)})")
    records = []
    for row in reader:
        values = {name.strip(): (value or "").strip() for name, value in row.items() if name is not None}
        if None in row:
            records.append(Record(values, reader.line_num, shape_problem="more cells than columns"))
        elif any(values.values()):
            records.append(Record(values, reader.line_num))
    return records


# --- checking -------------------------------------------------------------------


class _Fields:
    """Reads one record's fields; every bad one adds a (line, message) problem."""

    def __init__(self, record: Record) -> None:
        self.record = record
        self.problems: list[tuple[int, str]] = []

    def fail(self, name: str, message: str) -> None:
        self.problems.append((self.record.line_of(name), f"{name} {message}"))

    def _given(self, name: str, required: bool) -> Any:
        value = self.record.values.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                self.fail(name, "is required")
            return None
        return value

    def text(self, name: str, required: bool = False) -> str | None:
        value = self._given(name, required)
        return None if value is None else str(value).strip()

    def choice(self, name: str, allowed: Mapping[str, str], default: str | None = None) -> str | None:
        value = self.text(name, required=default is None)
        if value is None:
            return default
        chosen = allowed.get(value.lower())
        if chosen is None:
            self.fail(name, f"must be {', '.join(allowed.values())}, got {value!r}")
        return chosen

    def positive(self, name: str, required: bool = False) -> float | None:
        value = self._given(name, required)
        if value is None:
            return None
        number = parsing.number(value)
        if number is None or number <= 0:
            self.fail(name, f"must be {'> 0' if number is not None else 'a number > 0'}, got {value!r}")
            return None
        return number

    def whole(self, name: str) -> int:
        """A whole number >= 1; 1 when not given."""
        value = self._given(name, required=False)
        if value is None:
            return 1
        number = parsing.number(value)
        if number is None or number != int(number) or number < 1:
            self.fail(name, f"must be a whole number >= 1, got {value!r}")
            return 1
        return int(number)

    def date(self, name: str) -> dt.date | None:
        value = self._given(name, required=False)
        if value is None or isinstance(value, dt.date):
            return value.date() if isinstance(value, dt.datetime) else value
        try:
            return dt.date.fromisoformat(str(value).strip())
        except ValueError:
            self.fail(name, f"must be a date like 2026-12-31, got {value!r}")
            return None

    def stock(self, name: str) -> int | None:
        value = self._given(name, required=False)
        if value is None:
            return None
        try:
            stock = parsing.stock_from_text(value)
        except parsing.LayoutChanged:
            stock = None
        if stock is None:
            self.fail(name, f"must be a whole number >= 0, 售罄 or N+, got {value!r}")
        return stock


def check(record: Record) -> tuple[Quote | None, list[tuple[int, str]]]:
    """The quote a record states, or the problems found in it: (line, message) each."""
    if record.shape_problem is not None:
        return None, [(record.line, record.shape_problem)]
    fields = _Fields(record)
    for name in record.values:
        if name not in FIELDS:
            fields.fail(name, f"is not a field (fields: {', '.join(FIELDS)})")
    seller, gpu = fields.text("seller", required=True), fields.text("gpu", required=True)
    price = fields.positive("price", required=True)
    currency = fields.choice("currency", CURRENCIES)
    price_per = fields.choice("price_per", PRICE_PER, default="gpu")
    period = fields.choice("billing_period", PERIODS)
    gpu_count, min_term = fields.whole("gpu_count"), fields.whole("min_term")
    valid_from, valid_to = fields.date("valid_from"), fields.date("valid_to")
    if valid_from and valid_to and valid_to < valid_from:
        fields.fail("valid_to", f"{valid_to} is before valid_from {valid_from}")
    quote = Quote(
        seller=seller or "",
        gpu=gpu or "",
        gpu_memory_gb=fields.positive("gpu_memory_gb"),
        gpu_form=fields.choice("gpu_form", FORMS, default="") or None,
        gpu_count=gpu_count,
        price=price or 0.0,
        currency=currency or "",
        price_per=cast(PricePer, price_per),
        billing_period=cast(BillingPeriod, period),
        min_term=min_term,
        stock=fields.stock("stock"),
        valid_from=valid_from,
        valid_to=valid_to,
        region=fields.text("region"),
        note=fields.text("note"),
    )
    if fields.problems:
        return None, fields.problems
    return quote, []
