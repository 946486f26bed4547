"""Prices as people write them: each text, what it reads as, or why it is not one price."""

from __future__ import annotations

from typing import Any

import pytest

from scrapers.quotes.prices import PriceTextError, WrittenPrice, read_price


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (2139, WrittenPrice(2139.0)),
        (9.5, WrittenPrice(9.5)),
        ("2139", WrittenPrice(2139.0)),
        ("2.1万", WrittenPrice(21_000.0)),  # loaded as 2.1
        ("2.1万元", WrittenPrice(21_000.0, "CNY")),
        ("9.8k", WrittenPrice(9_800.0)),  # loaded as 9.8
        ("3千", WrittenPrice(3_000.0)),
        ("2,5", WrittenPrice(2.5)),  # loaded as 25: only the decimal-comma reading is a number
        ("1.088,50", WrittenPrice(1088.5)),
        ("1,088", WrittenPrice(1088.0)),  # both readings are numbers: the point-decimal one
        ("2.139", WrittenPrice(2.139)),
        ("10,000元/月", WrittenPrice(10_000.0, "CNY", "month")),
        ("1 088", WrittenPrice(1088.0)),
        ("１，０８８元", WrittenPrice(1088.0, "CNY")),  # full-width, as Chinese input methods type it
        ("USD 2.5", WrittenPrice(2.5, "USD")),
        ("$2.49/hr", WrittenPrice(2.49, "USD", "hour")),
        ("12,50 €", WrittenPrice(12.5, "EUR")),
        ("¥1,088", WrittenPrice(1088.0, "CNY")),
        ("9.9元/天", WrittenPrice(9.9, "CNY", "day")),
        ("2139元/卡/月", WrittenPrice(2139.0, "CNY", "month", "gpu")),
        ("9800元/台/月", WrittenPrice(9800.0, "CNY", "month", "instance")),
        ("3.2元/卡时", WrittenPrice(3.2, "CNY", "hour", "gpu")),
        ("2139元包月", WrittenPrice(2139.0, "CNY", "month")),
        ("2.49 USD per GPU-hour", WrittenPrice(2.49, "USD", "hour", "gpu")),
    ],
)
def test_a_price_reads_as_people_mean_it(written: Any, expected: WrittenPrice) -> None:
    assert read_price(written) == expected


@pytest.mark.parametrize(
    ("written", "reason"),
    [
        ("8卡起租 面议", "price on request"),  # loaded as 8
        ("2-3元", "a range"),
        ("2~3", "a range"),
        ("2000元起", "a lower bound"),
        ("约2000", "an estimate"),
        ("-5", "negative"),
        ("两千", "has no number"),
        ("2 3", "cannot read '2 3' as one number"),
        ("8卡 9800元", "cannot read '9800元'"),
        ("USD 2.5 元", "two currencies: CNY, USD"),
        ("5元/天/月", "two periods"),
        ("1e20", "cannot read 'e20'"),
        (float("nan"), "not a finite number"),
        (True, "not a price"),
        ([1, 2], "a list is not a price"),
    ],
)
def test_anything_else_is_refused_with_its_reason(written: Any, reason: str) -> None:
    with pytest.raises(PriceTextError, match=reason):
        read_price(written)
