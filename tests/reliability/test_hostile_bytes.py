"""An answer's bytes are judged before they are believed: a CSV catalog cut short, a column or JSON key
given twice, a price written as markup or with a decimal comma, JSON nested past reading, a
hostile cell, a missing object.

Each crawl is the real one, answered by the fault server from the platform's recorded snapshot with
one answer changed (answer_changes.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from loopback import Reply

from reliability.answer_changes import changed_json, served_crawl
from scrapers import parsing
from scrapers.platform import CLOCK_TOLERANCE_SETTING
from scrapers.replay import Exchange

pytestmark = pytest.mark.faults

CATALOG = "shadeform"  # a SkyPilot catalog: a CSV table, then its commits answer (JSON)


def changed_bytes(
    is_target: Callable[[Exchange], bool], change: Callable[[bytes], bytes]
) -> Callable[[Exchange], Reply]:
    def rewrite(exchange: Exchange) -> Reply:
        body = change(exchange.body) if is_target(exchange) else exchange.body
        return Reply(exchange.status, dict(exchange.headers), body)

    return rewrite


def is_csv(exchange: Exchange) -> bool:
    return exchange.url.endswith(".csv")


def _lines(path: Path | None) -> list[dict[str, Any]]:
    assert path is not None
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def cut_inside_a_row(body: bytes) -> bytes:
    """The body cut at 60 %, inside a row: the L40S at 1.7 USD/h loaded as 1.0 this way."""
    at = int(len(body) * 0.6)
    while body[at - 1 : at] in (b"\n", b","):
        at += 1
    return body[:at]


def cut_at_a_line_end(body: bytes) -> bytes:
    """The body cut at 60 % and ended with a line end: a last row with fewer cells than the header."""
    return cut_inside_a_row(body) + b"\n"


@pytest.mark.parametrize(
    ("cut", "said"),
    [
        (cut_inside_a_row, "its last line has no line end"),
        (cut_at_a_line_end, "its last row has"),
    ],
)
def test_a_csv_catalog_cut_short_fails_naming_the_cut(
    tmp_path: Path, cut: Callable[[bytes], bytes], said: str
) -> None:
    """Before: the cut table loaded as if whole, its cut row too (Shadeform's L40S at 1.7 USD/h as 1.0,
    GCP's 35 offers as 4), status ok."""
    summary, _ = served_crawl(tmp_path, CATALOG, changed_bytes(is_csv, cut))

    assert summary.status == "failed"
    assert summary.error is not None and "\n" not in summary.error
    assert "is cut short" in summary.error and said in summary.error
    assert "raw.githubusercontent.com" in summary.error
    assert summary.items_yielded == 0


def test_a_csv_column_given_twice_fails_naming_it(tmp_path: Path) -> None:
    """Before: with two `Price` columns the last was taken, silently: every offer at another price."""

    def two_prices(body: bytes) -> bytes:
        header, rest = body.split(b"\n", 1)
        return header.replace(b"SpotPrice", b"Price") + b"\n" + rest

    summary, _ = served_crawl(tmp_path, CATALOG, changed_bytes(is_csv, two_prices))

    assert summary.status == "failed"
    assert summary.error is not None
    assert "its header names the column 'Price' twice" in summary.error
    assert summary.items_yielded == 0


def test_a_json_key_given_twice_fails_naming_it(tmp_path: Path) -> None:
    """Before: Python's JSON reader kept the last of two `price_per_hour` keys, silently."""

    def doubled(body: bytes) -> bytes:
        return body.replace(
            b'"price_per_hour": "3.25"', b'"price_per_hour": "0.01", "price_per_hour": "3.25"', 1
        )

    summary, _ = served_crawl(tmp_path, "datacrunch", changed_bytes(lambda e: True, doubled))

    assert summary.status == "failed"
    assert summary.error is not None and "\n" not in summary.error
    assert "an object names the key 'price_per_hour' twice" in summary.error
    assert summary.items_yielded == 0


@pytest.mark.parametrize(("written", "read"), [("<b>3.25</b>", None), ("3,25", 3.25), ("$3.25", 3.25)])
def test_a_text_price_is_read_only_when_the_whole_text_is_one(
    tmp_path: Path, written: str, read: float | None
) -> None:
    """Before: "<b>3.25</b>" read as 3.25 and the decimal comma "3,25" as 325."""

    def price(payload: Any) -> Any:
        return [{**payload[0], "price_per_hour": written}, *payload[1:]]

    summary, _ = served_crawl(tmp_path, "datacrunch", changed_json(lambda e: True, price))

    on_demand = [
        offer["price_amount"]
        for offer in _lines(summary.feed)
        if offer["offer_id"] == "1H100.80S.30V" and offer["pricing_type"] == "on_demand"
    ]
    assert on_demand == ([] if read is None else [read])


def test_json_nested_past_reading_is_a_malformed_answer_not_a_spider_bug(tmp_path: Path) -> None:
    """Before: 100,000-deep JSON raised RecursionError, reported as "spider bug"."""
    deep = b"[" * 100_000 + b"]" * 100_000
    summary, _ = served_crawl(tmp_path, "datacrunch", changed_bytes(lambda e: True, lambda _: deep))

    assert summary.status == "failed"
    assert summary.error is not None
    assert "spider bug" not in summary.error
    assert "nests deeper than" in summary.error and "a malformed or hostile answer" in summary.error


def test_a_200_kb_cell_costs_its_row_as_a_hostile_answer(tmp_path: Path) -> None:
    """Before: a 200 KB cell was reported as "spider bug" and lost the whole answer."""

    def huge(payload: Any) -> Any:
        return [{**payload[0], "description": "x" * 200_000}, *payload[1:]]

    summary, _ = served_crawl(tmp_path, "datacrunch", changed_json(lambda e: True, huge))

    assert summary.status == "ok", summary.error
    assert "1H100.80S.30V" not in {offer["offer_id"] for offer in _lines(summary.feed)}
    assert summary.items_yielded > 0
    rejected = [row for row in _lines(summary.rejected_feed) if row["reason"] == "cell_too_long"]
    assert len(rejected) == 1
    assert rejected[0]["raw"]["problem"].startswith("the 'description' cell is 200,000 characters")
    assert len(json.dumps(rejected[0]["raw"])) < 5_000, "the hostile cell is not stored whole"


def test_vultr_meta_null_is_read_as_no_next_page(tmp_path: Path) -> None:
    """Before: `"meta": null` raised AttributeError, "spider bug", and lost the whole list."""
    summary, _ = served_crawl(
        tmp_path, "vultr", changed_json(lambda e: True, lambda page: {**page, "meta": None})
    )

    assert (summary.status, summary.error) == ("ok", None)
    assert summary.items_yielded > 0


@pytest.mark.parametrize("date_header", ["Fri, 31 Dec 2099 06:00:00 GMT", "Thu, 01 Jan 1970 00:00:00 GMT"])
def test_a_date_header_off_the_crawlers_clock_is_replaced_by_the_clock(
    tmp_path: Path, date_header: str
) -> None:
    """Before: Date 2099 stored the offers and daily history rows on 2099-12-31; Date 1970 failed the
    crawl with "no FX rate for USD"."""
    before = datetime.now(UTC)
    summary, _ = served_crawl(
        tmp_path,
        "datacrunch",
        changed_json(lambda e: False, lambda page: page),
        date_header=date_header,
        settings={CLOCK_TOLERANCE_SETTING: "86400"},
    )

    assert (summary.status, summary.error) == ("ok", None)
    observed = {datetime.fromisoformat(offer["observed_at"]) for offer in _lines(summary.feed)}
    assert all(before - timedelta(seconds=1) <= moment <= datetime.now(UTC) for moment in observed)
    stated = parsing.utc_iso(parsing.http_date(date_header) or before)
    assert summary.stats["clock"].startswith(f"https://api.verda.com/v1/instance-types is dated {stated}")
    assert "more than 86400 s from the crawler's clock: its offers are observed at" in summary.stats["clock"]
