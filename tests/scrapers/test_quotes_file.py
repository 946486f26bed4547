"""The quotes file format: reading CSV and YAML, and each field's check with the line it is on."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from scrapers import parsing
from scrapers.quotes.checks import check
from scrapers.quotes.file import Record, read_records

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
        ({"price": "两千"}, "price is not one price: '两千' has no number"),
        ({"price": ...}, "price is required"),
        ({"seller": "  "}, "seller is required"),
        ({"currency": "RMB"}, "currency must be CNY, EUR, USD, got 'RMB'"),
        ({"billing_period": "包月"}, "billing_period must be hour, day, week, month, year, got '包月'"),
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


# --- prices as written, and their agreement with the columns ---------------------------


@pytest.mark.parametrize(
    ("changes", "read_as"),
    [
        ({"price": "2.1万"}, (21_000.0, "CNY", "month", "gpu")),
        ({"price": "9800元/台/月", "price_per": ...}, (9800.0, "CNY", "month", "instance")),
        ({"price": "9.9元/天", "currency": ..., "billing_period": ...}, (9.9, "CNY", "day", "gpu")),
        ({"price": "USD 2.5", "currency": "usd", "billing_period": "hour"}, (2.5, "USD", "hour", "gpu")),
    ],
)
def test_a_price_cell_fills_in_empty_columns(changes: dict[str, Any], read_as: tuple[Any, ...]) -> None:
    quote, problems = _check(**changes)
    assert problems == []
    assert (quote.price, quote.currency, quote.billing_period, quote.price_per) == read_as


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"price": "USD 2.5"}, "price says USD but currency is CNY: correct one of them"),
        ({"price": "9.9元/天", "billing_period": "hour"}, "price says day but billing_period is hour"),
        ({"price": "9800元/台/月", "price_per": "gpu"}, "price says instance but price_per is gpu"),
        ({"price": "8卡起租 面议"}, "price is not one price: '8卡起租 面议' is price on request"),
        ({"price": "2000", "currency": ...}, "currency is required (or say it in the price"),
    ],
)
def test_a_price_cell_that_contradicts_its_row_is_a_problem(changes: dict[str, Any], message: str) -> None:
    quote, problems = _check(**changes)
    assert quote is None
    assert [(line, text[: len(message)]) for line, text in problems] == [(7, message)]


def test_a_count_beyond_the_warehouse_integer_is_a_problem() -> None:
    quote, problems = _check(gpu_count="100000000000000000000")
    assert quote is None
    assert problems == [(7, "gpu_count must be at most 2,147,483,647, got '100000000000000000000'")]


# --- hostile YAML -----------------------------------------------------------------------------------

GOOD_YAML = "- seller: 甲\n  gpu: L20\n  price: 2.5\n  currency: CNY\n  billing_period: hour\n"
# The classic "billion laughs", as one quote's note: 9 levels of 9 aliases (9**9 = 387 million values).
LAUGHS = (
    "- seller: 乙\n  gpu: L20\n  price: 2.4\n  currency: CNY\n  billing_period: hour\n"
    "  note: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
    + "".join(
        f"  x{level}: &{chr(97 + level)} [{','.join(['*' + chr(96 + level)] * 9)}]\n" for level in range(1, 9)
    )
)


def test_a_billion_laughs_item_is_refused_and_the_good_quote_kept() -> None:
    good, bomb = read_records(GOOD_YAML + LAUGHS, "quotes.yaml")
    assert check(good)[1] == []
    assert check(bomb) == (
        None,
        [
            (
                6,
                "YAML aliases expand this item past 1,000 values (a 'billion laughs' file?): "
                "refused, nothing built from it",
            )
        ],
    )
    assert bomb.values == {}  # nothing of it reaches the rejected feed


def test_an_alias_that_refers_to_itself_is_refused() -> None:
    (record,) = read_records("- &q {seller: a, again: *q}\n", "quotes.yaml")
    assert check(record) == (None, [(1, "a YAML alias refers to the item it is in: refused")])


def test_aliases_that_stay_small_are_fine() -> None:
    text = (
        "- &base {seller: 甲, currency: CNY, billing_period: month, gpu: L20, price: 100}\n"
        "- {<<: *base, price: 90}\n"
    )
    quotes = [check(record)[0] for record in read_records(text, "quotes.yaml")]
    assert [quote.price for quote in quotes if quote] == [100.0, 90.0]


def test_a_key_given_twice_is_a_problem_naming_both_lines() -> None:
    (record,) = read_records(GOOD_YAML + "  price: 25\n", "quotes.yaml")
    assert check(record) == (None, [(6, "price is given twice (lines 3 and 6): keep one")])


def test_yaml_nested_too_deeply_is_one_error() -> None:
    with pytest.raises(parsing.CrawlError, match=r"quotes\.yaml: nested too deeply"):
        read_records("- " + "[" * 5000 + "]" * 5000 + "\n", "quotes.yaml")


# --- CSV as Excel writes it -------------------------------------------------------------------------


def test_excel_header_quirks_are_accepted() -> None:
    text = (
        "\ufeffsep=;\n"
        " Seller ; GPU ;Price;Currency; Billing Period ;;\n"
        "经纪甲;L20;2,5;CNY;hour;;\n"
        "经纪乙;L20;2,4;CNY;hour;;oops\n"
    ).lstrip("\ufeff")
    good, extra = read_records(text, "quotes.csv")
    quote, problems = check(good)
    assert problems == []
    assert (good.line, quote.seller, quote.gpu, quote.price, quote.billing_period) == (
        3,
        "经纪甲",
        "L20",
        2.5,
        "hour",
    )
    assert check(extra) == (None, [(4, "a value in column 7, which the header does not name")])


def test_a_column_named_twice_is_one_error() -> None:
    with pytest.raises(
        parsing.LayoutChanged, match=r"quotes.csv line 1: column 'price' twice \(columns 3 and 6\)"
    ):
        read_records("seller,gpu,price,currency,billing_period,Price\n", "quotes.csv")


def test_a_field_over_the_limit_names_its_line_and_keeps_the_rows_before() -> None:
    text = 'seller,gpu,price,currency,billing_period\n甲,L20,2.5,CNY,hour\n乙,"L20' + "x" * 140_000 + "\n"
    good, cut = read_records(text, "quotes.csv")
    assert check(good)[1] == []
    assert check(cut) == (
        None,
        [
            (
                3,
                "a field over 131,072 characters; "
                "the rest of the file from here is not read (an unclosed quote?)",
            )
        ],
    )


def test_a_quoted_cell_over_several_lines_counts_from_its_first_line() -> None:
    text = (
        "seller,gpu,price,currency,billing_period,note\n"
        '甲,L20,2.5,CNY,hour,"two\nlines"\n'
        "乙,L20,0,CNY,hour,\n"
    )
    records = read_records(text, "quotes.csv")
    assert [record.line for record in records] == [2, 4]
