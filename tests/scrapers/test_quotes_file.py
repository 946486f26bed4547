"""The quotes file format: reading CSV and YAML, and each field's check with the line it is on."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from scrapers import parsing
from scrapers.quotes_file import Record, check, read_records

GOOD = {
    "seller": "聚力算力平台",
    "gpu": "华为910B 64G",
    "price": 2139,
    "currency": "CNY",
    "billing_period": "month",
}


def _check(**changes: Any) -> tuple[Any, list[tuple[int, str]]]:
    values = {**GOOD, **changes}
    return check(Record({k: v for k, v in values.items() if v is not ...}, line=7))


def test_a_minimal_quote_takes_the_defaults() -> None:
    quote, problems = _check()
    assert problems == []
    assert (quote.gpu_count, quote.price_per, quote.min_term, quote.stock, quote.gpu_form) == (
        1,
        "gpu",
        1,
        None,
        None,
    )
    assert (quote.pricing_type, quote.offer_id) == ("monthly_plan", "聚力算力平台/华为910B 64G/1x/1 month")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"price": 0}, "price must be > 0, got 0"),
        ({"price": "两千"}, "price must be a number > 0, got '两千'"),
        ({"price": ...}, "price is required"),
        ({"seller": "  "}, "seller is required"),
        ({"currency": "RMB"}, "currency must be CNY, EUR, USD, got 'RMB'"),
        ({"billing_period": "包月"}, "billing_period must be hour, day, week, month, got '包月'"),
        ({"price_per": "node"}, "price_per must be gpu, instance, got 'node'"),
        ({"gpu_count": 1.5}, "gpu_count must be a whole number >= 1, got 1.5"),
        ({"min_term": 0}, "min_term must be a whole number >= 1, got 0"),
        ({"gpu_form": "OAM"}, "gpu_form must be SXM, PCIe, NVL, got 'OAM'"),
        ({"gpu_memory_gb": -64}, "gpu_memory_gb must be > 0, got -64"),
        ({"stock": "很多"}, "stock must be a whole number >= 0, 售罄 or N+, got '很多'"),
        ({"stock": -2}, "stock must be a whole number >= 0, 售罄 or N+, got -2"),
        ({"valid_to": "31/12/2026"}, "valid_to must be a date like 2026-12-31, got '31/12/2026'"),
        (
            {"valid_from": dt.date(2026, 12, 1), "valid_to": dt.date(2026, 11, 1)},
            "valid_to 2026-11-01 is before valid_from 2026-12-01",
        ),
        ({"prcie": 2139}, "prcie is not a field (fields: seller, gpu, "),
    ],
)
def test_each_bad_field_is_named_with_its_line(changes: dict[str, Any], message: str) -> None:
    quote, problems = _check(**changes)
    assert quote is None
    assert [(line, text[: len(message)]) for line, text in problems] == [(7, message)]


@pytest.mark.parametrize(("stock", "available"), [("售罄", 0), ("16+", 16), (8, 8), ("", None)])
def test_stock_reads_counts_sold_out_and_lower_bounds(stock: Any, available: int | None) -> None:
    quote, _ = _check(stock=stock)
    assert quote.stock == available


def test_lowercase_codes_and_forms_are_accepted() -> None:
    quote, problems = _check(currency="cny", gpu_form="pcie", billing_period="Month")
    assert problems == []
    assert (quote.currency, quote.gpu_form, quote.billing_period) == ("CNY", "PCIe", "month")


def test_yaml_problems_point_at_the_field_line() -> None:
    text = "- seller: 某经纪\n  gpu: H20 96G\n  price: -1\n  currency: CNY\n  billing_period: month\n"
    (record,) = read_records(text, "quotes.yaml")
    assert record.line == 1
    assert check(record)[1] == [(3, "price must be > 0, got -1")]


def test_yaml_dates_and_numbers_arrive_typed() -> None:
    text = "- {seller: a, gpu: L20, price: 9.5, currency: CNY, billing_period: hour, valid_to: 2026-12-31}\n"
    quote, problems = check(read_records(text, "q.yml")[0])
    assert problems == []
    assert (quote.price, quote.valid_to) == (9.5, dt.date(2026, 12, 31))


def test_a_yaml_item_that_is_not_a_set_of_fields_is_a_bad_line() -> None:
    records = read_records("- seller: a\n- just text\n", "quotes.yaml")
    assert check(records[1]) == (None, [(2, "a quote is a set of fields (seller: ...)")])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- seller: a\n  gpu: [unclosed\n", "quotes.yaml line 3: not valid YAML"),
        ("seller: a\n", "quotes.yaml line 1: expected a list of quotes"),
    ],
)
def test_a_yaml_file_that_cannot_be_read_is_one_error(text: str, message: str) -> None:
    with pytest.raises(parsing.CrawlError, match=message):
        read_records(text, "quotes.yaml")


def test_csv_rows_carry_their_line_and_blank_rows_are_skipped() -> None:
    text = (
        "seller,gpu,price,currency,billing_period\n"
        "经纪甲,RTX 4090 48G,3.2,CNY,hour\n"
        "\n"
        '经纪乙,"H800, 80G",0,CNY,month\n'
        "经纪丙,L20,1,CNY,hour,extra cell\n"
    )
    records = read_records(text, "quotes.csv")
    assert [r.line for r in records] == [2, 4, 5]
    assert check(records[1])[1] == [(4, "price must be > 0, got '0'")]
    assert check(records[2])[1] == [(5, "more cells than columns")]


def test_a_csv_header_with_unknown_or_missing_columns_is_one_error() -> None:
    with pytest.raises(
        parsing.LayoutChanged, match=r"quotes.csv line 1: unknown column 'prcie'; no price column"
    ):
        read_records("seller,gpu,prcie,currency,billing_period\n", "quotes.csv")


def test_other_file_types_are_refused() -> None:
    with pytest.raises(parsing.CrawlError, match=r"quotes.xlsx: a quotes file ends in .csv, .yaml or .yml"):
        read_records("", "quotes.xlsx")
