"""A quotes-file record (`scrapers.quotes.file.Record`) checked field by field into a `Quote`.

`check` gives the quote, or every problem found with the line it is on. The price is read as
people write it (`scrapers.quotes.prices`); a currency, billing period or price basis written in
the price cell ("9.9元/天", "USD 2.5", "9800元/台/月") fills in an empty column and must agree
with a filled one: "USD 2.5" under currency CNY, or "9.9元/天" billed by the hour, is a
problem of the quote, never a guess.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from scrapers import parsing
from scrapers.items import CURRENCIES as OFFER_CURRENCIES
from scrapers.items import PLAN_OF_PERIOD, BillingPeriod, PricePer, PricingType
from scrapers.quotes.file import FIELDS, Record
from scrapers.quotes.prices import PriceTextError, WrittenPrice, read_price

# Allowed spellings (lower case) -> the value used.
CURRENCIES = {code.lower(): code for code in sorted(OFFER_CURRENCIES)}
FORMS = {"sxm": "SXM", "pcie": "PCIe", "nvl": "NVL"}
PRICE_PER = {"gpu": "gpu", "instance": "instance"}
PERIODS: dict[str, str] = {period: period for period in PLAN_OF_PERIOD}
# Counts are stored as INTEGER (32-bit) in the warehouse: a larger one is a typo, never a quote.
MAX_COUNT = 2**31 - 1


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

    @property
    def pool_id(self) -> str:
        """The stock the quote's `stock` speaks of: the seller's GPUs of that kind in that region,
        whatever unit size or term it is quoted at (one broker quoting 910B by the month and by the
        week, 64 in stock, has 64, not 128)."""
        return "/".join(part for part in (self.seller, self.gpu, self.region) if part)


class _Fields:
    """Reads one record's fields; every bad one adds a (line, message) problem."""

    def __init__(self, record: Record) -> None:
        self.record = record
        self.problems: list[tuple[int, str]] = list(record.problems)
        self.failed: set[str] = set()  # fields with a problem already

    def fail(self, name: str, message: str) -> None:
        self.failed.add(name)
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

    def choice(self, name: str, allowed: Mapping[str, str]) -> str | None:
        """One of `allowed` (any case), or None when not given."""
        value = self.text(name)
        if value is None:
            return None
        chosen = allowed.get(value.lower())
        if chosen is None:
            self.fail(name, f"must be {', '.join(allowed.values())}, got {value!r}")
        return chosen

    def positive(self, name: str) -> float | None:
        value = self._given(name, required=False)
        if value is None:
            return None
        number = parsing.number(value)
        if number is None or number <= 0:
            self.fail(name, f"must be {'> 0' if number is not None else 'a number > 0'}, got {value!r}")
            return None
        return number

    def whole(self, name: str) -> int:
        """A whole number in 1..MAX_COUNT; 1 when not given."""
        value = self._given(name, required=False)
        if value is None:
            return 1
        number = parsing.number(value)
        if number is None or number != int(number) or number < 1:
            self.fail(name, f"must be a whole number >= 1, got {value!r}")
            return 1
        if number > MAX_COUNT:
            self.fail(name, f"must be at most {MAX_COUNT:,}, got {value!r}")
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
        if stock is None or stock > MAX_COUNT:
            self.fail(name, f"must be a whole number >= 0, 售罄 or N+, got {value!r}")
            return None
        return stock

    def price(self) -> WrittenPrice | None:
        value = self._given("price", required=True)
        if value is None:
            return None
        try:
            written = read_price(value)
        except PriceTextError as error:
            self.fail("price", f"is not one price: {error}")
            return None
        if written.amount <= 0:
            self.fail("price", f"must be > 0, got {value!r}")
            return None
        return written

    def agreed(self, name: str, column: str | None, written: str | None, default: str | None = None) -> str:
        """The column's value, or the price cell's where the column is empty; a problem when they differ."""
        if column is not None and written is not None and column != written:
            self.fail("price", f"says {written} but {name} is {column}: correct one of them")
        chosen = column or written or default
        if chosen is None and name not in self.failed:
            self.fail(name, "is required (or say it in the price, e.g. 2139元/月)")
        return chosen or ""


def check(record: Record) -> tuple[Quote | None, list[tuple[int, str]]]:
    """The quote a record states, or the problems found in it: (line, message) each."""
    if record.shape_problem is not None:
        return None, [(record.line, record.shape_problem)]
    fields = _Fields(record)
    for name in record.values:
        if name not in FIELDS:
            fields.fail(name, f"is not a field (fields: {', '.join(FIELDS)})")
    seller, gpu = fields.text("seller", required=True), fields.text("gpu", required=True)
    written = fields.price()
    said = written or WrittenPrice(0.0)
    currency_column = fields.choice("currency", CURRENCIES)
    per_column = fields.choice("price_per", PRICE_PER)
    period_column = fields.choice("billing_period", PERIODS)
    currency = fields.agreed("currency", currency_column, said.currency)
    price_per = fields.agreed("price_per", per_column, said.price_per, default="gpu")
    period = fields.agreed("billing_period", period_column, said.billing_period)
    gpu_count, min_term = fields.whole("gpu_count"), fields.whole("min_term")
    valid_from, valid_to = fields.date("valid_from"), fields.date("valid_to")
    if valid_from and valid_to and valid_to < valid_from:
        fields.fail("valid_to", f"{valid_to} is before valid_from {valid_from}")
    quote = Quote(
        seller=seller or "",
        gpu=gpu or "",
        gpu_memory_gb=fields.positive("gpu_memory_gb"),
        gpu_form=fields.choice("gpu_form", FORMS),
        gpu_count=gpu_count,
        price=said.amount,
        currency=currency,
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
        return None, sorted(fields.problems)
    return quote, []
