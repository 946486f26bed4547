"""Prices as people write them in a quote: "2.1万", "9.8k", "2,5", "USD 2.5", "9.9元/天", "2139元/卡/月".

`read_price(value)` gives a `WrittenPrice`: the amount in currency units, and the currency, billing
period and price basis (per GPU or per machine) when the text says them, for the caller to check
against the quote's own columns. Text it cannot read as exactly one price raises `PriceTextError`
with the reason, so "8卡起租 面议" (from 8 cards, price on request) or "2-3元" never becomes 8 or 2.

The grammar, on the text after Unicode NFKC (full-width "２，１００元／月" reads as "2,100元/月"):

    [currency]  number  [万 | 千 | k]  [currency]  [per-words: / 每 per, then 卡 台 时 天 月 ...]

Numbers are read by Babel (`babel.numbers.parse_decimal`, strict), the point-decimal reading
first ("1,088" = 1088, "2.139" = 2.139: how CNY and USD quotes are written), the decimal-comma
reading only where the first is impossible ("2,5" = 2.5, "1.088,50" = 1088.5). A comma before
exactly three digits therefore stays a thousands separator; where that misreads a European
"1,088 EUR" the plausibility rules of the warehouse (docs/plausibility.md) refuse the result.
Digit groups split by spaces or apostrophes ("1 088", "1'088") are one number.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from babel.numbers import NumberFormatError, parse_decimal

from scrapers.items import BillingPeriod, PricePer


class PriceTextError(ValueError):
    """The text is not one price; the message says why, for the quote's line."""


@dataclass(frozen=True)
class WrittenPrice:
    """A price read from a cell: `amount` in currency units; None where the text does not say."""

    amount: float
    currency: str | None = None  # ISO 4217, one of scrapers.items.CURRENCIES
    billing_period: BillingPeriod | None = None
    price_per: PricePer | None = None


# 万 is ten thousand, 千 a thousand; "k" a thousand in English and in Chinese chat ("9.8k").
SCALES = {"万": 10_000, "千": 1_000, "k": 1_000}
# Currency words, lower case. ¥ is CNY here: every yen sign in a Chinese GPU quote is the yuan
# (gpuplan prices no JPY: scrapers.items.CURRENCIES).
CURRENCY_WORDS = {
    "$": "USD",
    "us$": "USD",
    "usd": "USD",
    "美元": "USD",
    "美金": "USD",
    "¥": "CNY",
    "cny": "CNY",
    "rmb": "CNY",
    "元": "CNY",
    "块": "CNY",
    "人民币": "CNY",
    "€": "EUR",
    "eur": "EUR",
    "欧元": "EUR",
}
PERIOD_WORDS: dict[str, BillingPeriod] = {
    "h": "hour",
    "hr": "hour",
    "hour": "hour",
    "小时": "hour",
    "时": "hour",
    "d": "day",
    "day": "day",
    "天": "day",
    "日": "day",
    "wk": "week",
    "week": "week",
    "周": "week",
    "星期": "week",
    "mo": "month",
    "month": "month",
    "月": "month",
    "个月": "month",
    "包天": "day",
    "包周": "week",
    "包月": "month",
}
PER_WORDS: dict[str, PricePer] = {
    "卡": "gpu",
    "张": "gpu",
    "gpu": "gpu",
    "card": "gpu",
    "台": "instance",
    "机": "instance",
    "node": "instance",
    "instance": "instance",
    "server": "instance",
}
# Words that join the parts of a unit ("/卡/月", "每卡每小时", "per GPU-hour", "元·月").
JOINERS = ("/", "每", "per", "·", "-", "*")
_VOCABULARY = sorted(
    [*CURRENCY_WORDS, *PERIOD_WORDS, *PER_WORDS, *JOINERS], key=lambda word: (-len(word), word)
)
# The reasons a text is not one price, checked before the grammar (the first that matches).
NOT_A_PRICE = (
    (re.compile(r"面议|议价|询价|电议|negotiable|on request|\bpoa\b|tbd", re.IGNORECASE), "price on request"),
    (re.compile(r"\d\s*(?:-|~|–|—|至|到)\s*[$¥€]?\s*\d"), "a range, not one price"),
    (re.compile(r"起|from|\+\s*$|以上", re.IGNORECASE), "a lower bound ('from'), not a price"),
    (re.compile(r"约|左右|approx|about|~", re.IGNORECASE), "an estimate, not a firm price"),
)
_PARTS = re.compile(r"^(?P<before>[^\d]*?)\s*(?P<number>\d[\d.,' \u00a0\u202f]*)(?P<after>.*)$", re.DOTALL)
_SPACED_GROUPS = re.compile(r"^\d{1,3}(?:[ '\u00a0\u202f]\d{3})+(?:[.,]\d+)?$")


def read_price(value: Any) -> WrittenPrice:
    """One price from a quote's cell: a number (YAML's 2139, 9.5) or text; raises PriceTextError."""
    if isinstance(value, bool) or value is None:
        raise PriceTextError(f"{value!r} is not a price")
    if isinstance(value, int | float):
        return WrittenPrice(_finite(float(value), value))
    if not isinstance(value, str):
        raise PriceTextError(f"a {type(value).__name__} is not a price")
    text = unicodedata.normalize("NFKC", value).strip()
    for pattern, reason in NOT_A_PRICE:
        if pattern.search(text):
            raise PriceTextError(f"{value!r} is {reason}")
    parts = _PARTS.match(text)
    if parts is None:
        raise PriceTextError(f"{value!r} has no number")
    number_text = parts["number"].rstrip(" '\u00a0\u202f.,")
    after = parts["number"][len(number_text) :] + parts["after"]
    if "-" in parts["before"] or "−" in parts["before"]:
        raise PriceTextError(f"{value!r} is negative")
    amount = _number(number_text, value)
    after, scale = _scale(after)
    before_words, after_words = _words(parts["before"], value), _words(after, value)
    if any(word not in CURRENCY_WORDS for word in before_words):
        raise PriceTextError(f"{value!r}: only a currency may stand before the number")
    words = before_words + after_words
    currencies = {CURRENCY_WORDS[w] for w in words if w in CURRENCY_WORDS}
    periods = {PERIOD_WORDS[w] for w in words if w in PERIOD_WORDS}
    bases = {PER_WORDS[w] for w in words if w in PER_WORDS}
    for found, what in ((currencies, "currencies"), (periods, "periods"), (bases, "units")):
        if len(found) > 1:
            raise PriceTextError(f"{value!r} names two {what}: {', '.join(sorted(found))}")
    return WrittenPrice(
        _finite(float(amount * scale), value),
        currency=next(iter(currencies), None),
        billing_period=next(iter(periods), None),
        price_per=next(iter(bases), None),
    )


def _finite(amount: float, value: Any) -> float:
    if not math.isfinite(amount):
        raise PriceTextError(f"{value!r} is not a finite number")
    return amount


def _number(text: str, value: Any) -> Decimal:
    """The number in `text` by Babel's strict rules: point-decimal first, decimal comma second."""
    if _SPACED_GROUPS.match(text):
        text = re.sub(r"[ '\u00a0\u202f]", "", text)
    for locale in ("en", "de"):  # en: 1,088.50  de: 1.088,50
        try:
            return parse_decimal(text, locale=locale, strict=True)
        except NumberFormatError:
            continue
    raise PriceTextError(f"{value!r}: cannot read {text!r} as one number")


def _scale(after: str) -> tuple[str, int]:
    """A 万 / 千 / k right after the number, and the text that follows it ("9.8k/月", "2.1万元")."""
    stripped = after.lstrip()
    for word, factor in SCALES.items():
        if stripped[:1].lower() == word and not (
            word == "k" and stripped[1:2].isascii() and stripped[1:2].isalpha()
        ):
            return stripped[1:], factor
    return after, 1


def _words(text: str, value: Any) -> list[str]:
    """`text` as words of the vocabulary, joiners dropped; PriceTextError for anything else."""
    rest, words = text.strip().lower(), []
    while rest:
        word = next((w for w in _VOCABULARY if rest.startswith(w)), None)
        if word is None:
            raise PriceTextError(
                f"{value!r}: cannot read {rest!r} (a price is a number, its currency and unit)"
            )
        if word not in JOINERS:
            words.append(word)
        rest = rest[len(word) :].lstrip()
    return words
