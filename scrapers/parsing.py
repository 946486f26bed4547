"""What every spider needs to read a platform's answer: money units, prices, stock, time, response checks.

Spiders call these instead of copying conversions; each helper states its unit.
A response that cannot be trusted raises `CrawlError` (or a subclass) with a
message meant for the crawl summary: the crawl records it as a failure instead
of reporting "zero offers".
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import json
import math
import re
import sys
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from scrapy.http import Response

from scrapers.items import CURRENCIES, BillingPeriod, PricePer
from scrapers.quotes.prices import PriceTextError, read_price


class CrawlError(Exception):
    """The response cannot be used. The message says why, for the crawl summary."""


class NotJson(CrawlError):
    """JSON was expected; the platform sent HTML, text or a cut-off body."""


class NotCsv(CrawlError):
    """A CSV table was expected (a catalog file); the platform sent HTML or no header row."""


class ErrorEnvelope(CrawlError):
    """HTTP 200, but the body is the platform's error answer."""


class LayoutChanged(CrawlError):
    """The answer no longer has the shape the spider reads: a layout change, not "no offers"."""


class EmptyResult(CrawlError):
    """The platform answered with an empty list where a market always has offers."""


class TooLarge(CrawlError):
    """The answer inflates past the crawl's size cap (DOWNLOAD_MAXSIZE): a decompression bomb."""


def gunzipped(body: bytes, max_bytes: int, url: str) -> bytes:
    """A gzip body decompressed, never past `max_bytes` (read in bounded steps, so a bomb costs at
    most that much memory): TooLarge beyond. For answers gzipped without a Content-Encoding, which
    Scrapy's HttpCompressionMiddleware (same cap) does not see."""
    try:
        data = gzip.GzipFile(fileobj=io.BytesIO(body)).read(max_bytes + 1)
    except (OSError, EOFError, zlib.error) as error:
        raise NotJson(f"the gzip answer from {url} is damaged: {error}") from None
    if len(data) > max_bytes:
        raise TooLarge(too_large(url, max_bytes))
    return data


def too_large(url: str, max_bytes: int) -> str:
    """The one line for an answer refused at the decompressed-size cap, whoever decompressed it."""
    return f"the answer from {url} decompresses to more than {max_bytes:,} bytes (DOWNLOAD_MAXSIZE): refused"


# --- money -------------------------------------------------------------------

# Minor units some platforms quote in: divide by these to get the currency unit.
CENTS = 100  # Lambda `price_cents_per_hour`: US cents
LI = 1_000  # AutoDL `payg_price`: 1/1000 CNY (厘)
HUNDRED_THOUSANDTHS = 100_000  # matpool `price`, PPIO/Novita: 1/100000 CNY

_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")  # "3.25", "-1": most text numbers, read at once


def number(value: Any) -> float | None:
    """A price or count as a float: a number, or text that is one whole number as a price is written
    ("5.00", "$2.49", "¥1,088", "2,24" as 2.24): read by the quotes file's reader
    (`scrapers.quotes.prices.read_price`), the one reader of written numbers, so text with anything
    else in it ("<b>1.5</b>", "1.5 (was 2)") is no number, and a decimal comma never reads as
    thousands. None, "" and text that is no one number ("—", "N/A", "2-3") give None; NaN and
    infinities give None.
    """
    if isinstance(value, str):
        return _text_number(value)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        result = float(value)
        return result if math.isfinite(result) else None
    return None


# A catalog repeats a few hundred cells (prices, vCPUs, counts) over its rows: each distinct text is
# read once. Sized for a large table's distinct cells; a miss only costs the reading itself.
@functools.lru_cache(maxsize=65536)
def _text_number(value: str) -> float | None:
    """`number` of a text: a plain decimal read at once, anything else by `read_price`."""
    text = value.strip()
    if _PLAIN_NUMBER.fullmatch(text):
        result = float(text)
    else:
        try:
            result = read_price(text).amount
        except PriceTextError:
            return None
    return result if math.isfinite(result) else None


def from_minor_units(value: Any, per_unit: int) -> float | None:
    """An amount quoted in minor units (`CENTS`, `LI`, `HUNDRED_THOUSANDTHS`) in the currency unit."""
    amount = number(value)
    return None if amount is None else amount / per_unit


def price_problem(
    amount: float | None,
    currency: str,
    price_per: PricePer,
    gpu_count: int,
    billing_period: BillingPeriod,
) -> str | None:
    """Why a quote is not a price at all, as a short reason code; None when it is one.

    Only what the quote says by itself: plausibility (a price per GPU-hour no GPU rents at) needs
    FX rates and is the warehouse's one rule (`offer_price_problem`,
    warehouse/definitions/00_price_plausibility.sql), applied to every offer, crawled or imported.
    Rule 1 of the price-plausibility rules listed in docs/plausibility.md.
    """
    if amount is None or not math.isfinite(amount):
        return "price_missing"
    if amount <= 0:
        return "price_not_positive"
    if currency not in CURRENCIES:
        return "currency_unknown"
    if gpu_count < 1:
        return "gpu_count_not_positive"
    return None


def spot_price(on_demand: float | None, spot: float | None) -> float | None:
    """The spot price worth a spot offer beside the on-demand one, or None: the one rule for every
    platform that quotes both (`PlatformSpider.on_demand_and_spot`).

    A spot quote is an interruptible discount. One of 0 or less says there is none (DataCrunch's
    `spot_price` 0); one at or above the on-demand price is no spot market (RunPod's `*SpotPrice`
    fields have repeated the on-demand price since it removed spot pods on 2026-05-06, and a Vast
    bid that costs more than renting on demand is one nobody places).
    """
    if spot is None or spot <= 0:
        return None
    if on_demand is not None and spot >= on_demand:
        return None
    return spot


# --- stock -------------------------------------------------------------------
# Every helper returns GPUs available now, or None when the platform does not say:
# unknown is not zero.


def stock_from_slot(rentable: bool | None, gpu_count: int) -> int | None:
    """A listing that is itself one rentable unit (a Vast offer): all its GPUs, or none."""
    if rentable is None:
        return None
    return gpu_count if rentable else 0


def gpu_ids(value: Any) -> list[int] | None:
    """A platform's ids of the GPUs an offer rents (Vast `gpu_ids`), or None (unknown) when the answer
    gives no list of whole ids >= 0: the warehouse counts a machine's free GPUs by them."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(one, int) and not isinstance(one, bool) and one >= 0 for one in value):
        return None
    return list(value)


def stock_from_count(value: Any) -> int | None:
    """An explicit count of free GPUs (AutoDL `idle_gpu_num`, matpool `max_available_units`)."""
    count = number(value)
    if count is None:
        return None
    if count < 0 or count != int(count):
        raise LayoutChanged(f"stock count {value!r} is not a whole number >= 0")
    return int(count)


def stock_from_free(total: Any, used: Any) -> int | None:
    """Free = total - used (恒源云 `gpuNum - gpuUsed`); None if either is missing."""
    total_count, used_count = stock_from_count(total), stock_from_count(used)
    if total_count is None or used_count is None:
        return None
    return max(total_count - used_count, 0)


_SOLD_OUT_WORDS = frozenset({"soldout", "sold out", "sold_out", "none", "售罄", "无", "已售罄"})
_AT_LEAST = re.compile(r"^(\d+)\s*\+$")


def stock_from_text(text: Any) -> int | None:
    """Stock written as text: "12" -> 12, "200+" -> 200 (a lower bound), "Soldout"/"售罄" -> 0."""
    if text is None:
        return None
    if isinstance(text, int | float) and not isinstance(text, bool):
        return stock_from_count(text)
    value = str(text).strip()
    if value.lower() in _SOLD_OUT_WORDS:
        return 0
    at_least = _AT_LEAST.match(value)
    if at_least:
        return int(at_least.group(1))
    if value.isdigit():
        return int(value)
    return None


# --- names ---------------------------------------------------------------------

# A memory size written into a name: "vGPU-32GB", "4090 48G（南）", "XS16-4080S32G-8".
_MEMORY_IN_NAME = re.compile(r"(?<![\d.])(\d{1,4})\s*G(?:B|IB)?(?![A-Z0-9])", re.IGNORECASE)
# Sizes a GPU comes in; a figure outside is a count or an id ("1g" of a MIG profile).
_GPU_MEMORY_GB_RANGE = (4.0, 1024.0)


def memory_in_name(text: str) -> float | None:
    """The GPU memory (GB) a platform writes into a card or machine name, or None.

    For names that are the only place a platform states it: AutoDL's volume cards
    (`vGPU-32GB`), 恒源云's machine names (`4090 48G（南）`, the only sign of a 48 GB 4090).
    """
    low, high = _GPU_MEMORY_GB_RANGE
    for match in _MEMORY_IN_NAME.finditer(text):
        size = float(match.group(1))
        if low <= size <= high:
            return size
    return None


# A board form as a word of a machine name, count glued on or not: "crusoe_A100-80G-sxm4x8",
# "gpu-h100-sxm_8gpu-128vcpu-1600gb", "A100_PCIE_80GB". "nvlink" is no form (bridged PCIe cards).
# A word is a whole run of [a-z0-9] of the lowered name: the lookarounds keep each pattern to one.
_FORM_IN_NAME = (
    ("SXM", "sxm", re.compile(r"(?<![a-z0-9])sxm[0-9]?(?:x[0-9]+)?(?![a-z0-9])")),
    ("PCIe", "pcie", re.compile(r"(?<![a-z0-9])pcie(?:x[0-9]+)?(?![a-z0-9])")),
)


def form_in_name(*texts: str) -> str | None:
    """The board form ("SXM" or "PCIe") the machine names state, or None when they state none or
    both. For clouds whose card names drop the form their machine names keep (SkyPilot's Shadeform,
    Nebius and Prime Intellect catalogs: `H100` on `lambdalabs_H100-sxm5x8`)."""
    forms = {form for text in texts for form in _forms_in(text)}
    return forms.pop() if len(forms) == 1 else None


@functools.lru_cache(maxsize=65536)
def _forms_in(text: str) -> tuple[str, ...]:
    """The forms one name states (a catalog repeats its names over regions: read once each)."""
    lowered = text.lower()
    return tuple(form for form, key, word in _FORM_IN_NAME if key in lowered and word.search(lowered))


# --- time --------------------------------------------------------------------


def utc_iso(moment: datetime) -> str:
    """ISO-8601 UTC with a Z, to the second: "2026-11-30T06:00:00Z"."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime: give a timezone-aware one")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def http_date(value: str | bytes | None) -> datetime | None:
    """An HTTP date header ("Mon, 30 Nov 2026 06:00:00 GMT") as aware UTC, or None."""
    if not value:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def observed_at(response: Response, tolerance_s: float | None = None, now: datetime | None = None) -> str:
    """When the platform quoted: the response's HTTP Date header (the platform's own clock).

    A replayed snapshot carries its recorded Date, so offline runs are stable and
    match what the live crawl wrote. Without the header, or (given `tolerance_s`) with one further
    than that from the crawler's clock (`date_off_clock`): the crawler's clock now.
    """
    now = now or datetime.now(UTC)
    moment = http_date(response.headers.get(b"Date"))
    if moment is None or (tolerance_s is not None and date_off_clock(moment, now, tolerance_s)):
        return utc_iso(now)
    return utc_iso(moment)


def date_off_clock(moment: datetime, now: datetime, tolerance_s: float) -> bool:
    """Whether a platform's Date is further than `tolerance_s` from the crawler's clock `now`."""
    return abs((moment - now).total_seconds()) > tolerance_s


# --- response checks ---------------------------------------------------------


MAX_SHOWN = 120  # characters of a name from an answer a message shows


def shown(text: str) -> str:
    """A URL, id or name from an answer as a message shows it: unprintable characters escaped, cut short."""
    flat = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return flat if len(flat) <= MAX_SHOWN else flat[:MAX_SHOWN] + "…"


def _excerpt(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def _html_page(response: Response, text: str) -> str | None:
    """What an HTML page where data belongs is called in a message ("an HTML page (text/html)"), or None."""
    content_type = (response.headers.get(b"Content-Type") or b"").decode("latin-1").lower()
    if "html" in content_type or text.lstrip().startswith("<"):
        return f"an HTML page ({content_type or 'no content type'}): {_excerpt(text)!r}"
    return None


class _KeyTwice(ValueError):
    """An object of the answer names one key twice (`_one_reading`)."""


def _one_reading(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refused when it names a key twice: which value is meant is not known (Python's
    reader would keep the last, silently)."""
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _KeyTwice(_first_twice([key for key, _ in pairs]))
    return found


def _first_twice(names: list[str]) -> str | None:
    """The first name that `names` holds a second time, or None."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def json_body(response: Response) -> Any:
    """The response body as JSON, or NotJson saying what came instead: an HTML page, a cut-off
    body, an object naming a key twice, nesting deeper than the reader goes (malformed or hostile)."""
    text = response.body.decode("utf-8", errors="replace")
    page = _html_page(response, text)
    if page is not None:
        raise NotJson(f"expected JSON, got {page}")
    try:
        return json.loads(text, object_pairs_hook=_one_reading)
    except _KeyTwice as twice:
        raise NotJson(
            f"the JSON answer has no one reading: an object names the key {shown(str(twice))!r} twice"
        ) from None
    except RecursionError:
        raise NotJson(
            f"the JSON answer nests deeper than {sys.getrecursionlimit():,} levels: "
            "a malformed or hostile answer"
        ) from None
    except json.JSONDecodeError as exc:
        cut_off = exc.msg.startswith("Unterminated") or exc.pos >= len(text.rstrip()) - 1
        cut = " (the body looks cut off)" if cut_off else ""
        raise NotJson(f"invalid JSON{cut}: {exc.msg} (char {exc.pos} of {len(text)})") from None


def csv_rows(response: Response) -> list[dict[str, str | None]]:
    """The body as a CSV table with a header row (SkyPilot's catalog files): one dict per row, an
    empty cell as None (it says nothing, like a missing field). NotCsv for an HTML page, a body
    without a header row, a header naming a column twice, and a table cut short: a body that does
    not end with a line end, or whose last row has fewer cells than the header (a cut row is
    never read: its last cell may be a cut number, 1.7 read as 1.)."""
    text = response.body.decode("utf-8-sig", errors="replace")
    page = _html_page(response, text)
    if page is not None:
        raise NotCsv(f"expected CSV, got {page}")
    if text and not text.endswith(("\n", "\r")):
        raise NotCsv("the CSV answer is cut short: its last line has no line end")
    table = [row for row in csv.reader(io.StringIO(text)) if row]
    if not table:
        raise NotCsv("expected CSV, got no header row")
    header, rows = table[0], table[1:]
    twice = _first_twice(header)
    if twice is not None:
        raise NotCsv(f"the CSV answer has no one reading: its header names the column {shown(twice)!r} twice")
    if rows and len(rows[-1]) < len(header):
        raise NotCsv(
            f"the CSV answer is cut short: its last row has {len(rows[-1])} "
            f"of the header's {len(header)} cells"
        )
    return [{key: value or None for key, value in zip(header, row, strict=False)} for row in rows]


def error_message(payload: Any) -> str | None:
    """The message of a generic error envelope, or None when the payload is not one.

    Recognises {"error": "..."} / {"error": {"message": ...}} (Vast, Lambda),
    {"errors": [{"message": ...}]} (GraphQL) and {"success": false, "msg": ...}.
    """
    if not isinstance(payload, Mapping):
        return None
    errors = payload.get("errors")
    if isinstance(errors, Sequence) and not isinstance(errors, str) and errors:
        return "; ".join(_message_of(error) for error in errors)
    error = payload.get("error")
    if error:
        return _message_of(error, payload)
    if payload.get("success") is False:
        return _message_of(payload)
    return None


def _message_of(error: Any, envelope: Mapping[str, Any] | None = None) -> str:
    if isinstance(error, Mapping):
        parts = [str(error[key]) for key in ("code", "message", "msg") if error.get(key)]
        return ": ".join(parts) or json.dumps(error, ensure_ascii=False)[:200]
    text = str(error)
    if envelope is not None and envelope.get("msg") and str(envelope["msg"]) != text:
        text = f"{text}: {envelope['msg']}"
    return text


def check_error_envelope(payload: Any) -> None:
    """Raise ErrorEnvelope when `payload` is a generic error answer (see `error_message`)."""
    message = error_message(payload)
    if message is not None:
        raise ErrorEnvelope(f"the platform answered with an error: {message}")


@dataclass(frozen=True)
class CodeEnvelope:
    """A `{"code": ..., "msg": ..., "data": ...}` envelope: the codes that mean success, and where the
    code and the message are (price-sources.md §6.8: AutoDL "Success", matpool 0 or none, UCloud
    `RetCode` 0). `ok=()`: any code is an error (Verda answers success as a bare list).

    A missing code is fine (matpool omits it on success); the caller then reads the data.
    """

    ok: tuple[Any, ...]
    key: str = "code"
    messages: tuple[str, ...] = ("msg", "message")

    def check(self, payload: Any) -> None:
        """Raise ErrorEnvelope when `payload` carries a code not in `ok`, with its message."""
        if not isinstance(payload, Mapping) or self.key not in payload:
            return
        code = payload[self.key]
        if code in self.ok:
            return
        message = next((str(payload[key]) for key in self.messages if payload.get(key)), "no message")
        raise ErrorEnvelope(f"the platform answered with error code {code!r}: {message}")
