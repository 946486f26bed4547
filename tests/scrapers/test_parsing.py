"""Shared parsing: numbers and units, price checks, stock signals, time, response checks."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from scrapy.http import Request, TextResponse

from scrapers import parsing


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2.69, 2.69),
        (3, 3.0),
        ("5.00", 5.0),
        ("$2.49", 2.49),
        ("¥1,088.5", 1088.5),
        ("2,24", 2.24),  # a decimal comma: never 224
        ("1,088", 1088.0),  # a comma before three digits groups thousands
        ("80 GB", None),  # a number with words that are no price's: not one number
        ("<b>1.5</b>", None),  # markup around a number: not a number
        ("1.5 (was 2)", None),
        ("2-3", None),
        ("-1.5", -1.5),
        ("—", None),
        ("N/A", None),
        ("", None),
        (None, None),
        (True, None),  # a boolean is not a price
        (math.nan, None),
        (math.inf, None),
        ({"amount": 1}, None),
    ],
)
def test_number(value: Any, expected: float | None) -> None:
    assert parsing.number(value) == expected


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (429, parsing.CENTS, 4.29),  # Lambda price_cents_per_hour
        (1880, parsing.LI, 1.88),  # AutoDL payg_price, 1/1000 CNY
        (188000, parsing.HUNDRED_THOUSANDTHS, 1.88),  # matpool, 1/100000 CNY
        ("3192", parsing.CENTS, 31.92),
        (None, parsing.CENTS, None),
    ],
)
def test_from_minor_units(value: Any, unit: int, expected: float | None) -> None:
    assert parsing.from_minor_units(value, unit) == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize(
    ("amount", "currency", "per", "count", "period", "problem"),
    [
        (2.69, "USD", "gpu", 1, "hour", None),
        (53.52, "USD", "instance", 8, "hour", None),  # 8x B200: 6.69 per GPU-hour
        (1.88, "CNY", "gpu", 1, "hour", None),
        (0.0, "USD", "gpu", 1, "hour", "price_not_positive"),
        (-1.0, "USD", "gpu", 1, "hour", "price_not_positive"),
        (60_000.0, "CNY", "gpu", 1, "month", None),  # 82 CNY per GPU-hour
        (1e6, "USD", "gpu", 1, "hour", None),  # implausible, but a price: the warehouse judges it
        (None, "USD", "gpu", 1, "hour", "price_missing"),
        (math.nan, "USD", "gpu", 1, "hour", "price_missing"),
        (2.0, "XYZ", "gpu", 1, "hour", "currency_unknown"),
        (2.0, "USD", "instance", 0, "hour", "gpu_count_not_positive"),
    ],
)
def test_price_problem(
    amount: float | None, currency: str, per: str, count: int, period: str, problem: str | None
) -> None:
    assert parsing.price_problem(amount, currency, per, count, period) == problem


@pytest.mark.parametrize(("rentable", "count", "available"), [(True, 4, 4), (False, 4, 0), (None, 4, None)])
def test_stock_from_slot(rentable: bool | None, count: int, available: int | None) -> None:
    assert parsing.stock_from_slot(rentable, count) == available


@pytest.mark.parametrize(("value", "available"), [(3, 3), ("0", 0), (None, None), ("", None), (2.0, 2)])
def test_stock_from_count(value: Any, available: int | None) -> None:
    assert parsing.stock_from_count(value) == available


@pytest.mark.parametrize("value", [-1, 2.5])
def test_stock_from_count_refuses_what_is_not_a_count(value: float) -> None:
    with pytest.raises(parsing.LayoutChanged, match="not a whole number"):
        parsing.stock_from_count(value)


@pytest.mark.parametrize(
    ("total", "used", "available"), [(8, 3, 5), (8, 8, 0), (8, 9, 0), (None, 3, None), (8, None, None)]
)
def test_stock_from_free(total: Any, used: Any, available: int | None) -> None:
    assert parsing.stock_from_free(total, used) == available


@pytest.mark.parametrize(
    ("text", "available"),
    [("12", 12), ("200+", 200), ("Soldout", 0), ("售罄", 0), (7, 7), ("plenty", None), (None, None)],
)
def test_stock_from_text(text: Any, available: int | None) -> None:
    assert parsing.stock_from_text(text) == available


def test_utc_iso() -> None:
    moment = datetime(2026, 11, 30, 14, 0, 0, tzinfo=timezone(timedelta(hours=8)))
    assert parsing.utc_iso(moment) == "2026-11-30T06:00:00Z"
    with pytest.raises(ValueError, match="naive"):
        parsing.utc_iso(datetime(2026, 11, 30))


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (b"Mon, 30 Nov 2026 06:00:00 GMT", datetime(2026, 11, 30, 6, tzinfo=UTC)),
        ("Mon, 30 Nov 2026 06:00:00 GMT", datetime(2026, 11, 30, 6, tzinfo=UTC)),
        (b"not a date", None),
        (None, None),
    ],
)
def test_http_date(header: Any, expected: datetime | None) -> None:
    assert parsing.http_date(header) == expected


def _response(
    body: bytes, content_type: str | None = "application/json", date: str | None = None
) -> TextResponse:
    headers = {}
    if content_type:
        headers["Content-Type"] = content_type
    if date:
        headers["Date"] = date
    url = "https://example.org/api"
    return TextResponse(url, body=body, headers=headers, encoding="utf-8", request=Request(url))


def test_observed_at_is_the_date_header_or_now() -> None:
    assert (
        parsing.observed_at(_response(b"{}", date="Mon, 30 Nov 2026 06:00:00 GMT")) == "2026-11-30T06:00:00Z"
    )
    now = parsing.observed_at(_response(b"{}"))
    assert abs(datetime.fromisoformat(now.replace("Z", "+00:00")) - datetime.now(UTC)) < timedelta(seconds=5)


def test_json_body_reads_json() -> None:
    assert parsing.json_body(_response(b'{"offers": []}')) == {"offers": []}
    assert parsing.json_body(_response(b"[1, 2]", content_type=None)) == [1, 2]


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (
            b"<html><body>Just a moment...</body></html>",
            "text/html",
            "expected JSON, got an HTML page (text/html)",
        ),
        (b"  <!DOCTYPE html><html></html>", "application/json", "expected JSON, got an HTML page"),
        (
            b'{"offers": [{"id": 1, "gpu_name": "RTX 40',
            "application/json",
            "invalid JSON (the body looks cut off)",
        ),
        (b'{"offers": [1, 2', "application/json", "invalid JSON (the body looks cut off)"),
        (b"", "application/json", "invalid JSON (the body looks cut off)"),
        (b'{"a": 1} trailing', "application/json", "invalid JSON: Extra data"),
    ],
)
def test_json_body_says_what_came_instead(body: bytes, content_type: str, message: str) -> None:
    with pytest.raises(parsing.NotJson) as raised:
        parsing.json_body(_response(body, content_type))
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"offers": []}, None),
        ([{"id": 1}], None),
        ({"error": "invalid_request", "msg": "Invalid query"}, "invalid_request: Invalid query"),
        (
            {"error": {"code": "global/invalid-api-key", "message": "API key was invalid"}},
            "global/invalid-api-key: API key was invalid",
        ),
        ({"errors": [{"message": "a"}, {"message": "b"}], "data": None}, "a; b"),
        ({"errors": [], "data": {"x": 1}}, None),
        ({"success": False, "msg": "rate limited"}, "rate limited"),
        ({"success": True, "offers": []}, None),
    ],
)
def test_error_message(payload: Any, message: str | None) -> None:
    assert parsing.error_message(payload) == message
    if message is None:
        parsing.check_error_envelope(payload)
    else:
        with pytest.raises(parsing.ErrorEnvelope, match="the platform answered with an error"):
            parsing.check_error_envelope(payload)


@pytest.mark.parametrize(
    ("payload", "envelope", "raises"),
    [
        ({"code": "Success", "data": {}}, parsing.CodeEnvelope(ok=("Success",)), None),
        ({"code": 0, "data": {}}, parsing.CodeEnvelope(ok=(0,)), None),
        ({"data": {}}, parsing.CodeEnvelope(ok=(0,)), None),  # matpool omits the code on success
        ([], parsing.CodeEnvelope(ok=()), None),  # Verda: success is a bare list
        (
            {"code": "AuthorizeFailed", "msg": "登录失效"},
            parsing.CodeEnvelope(ok=("Success",)),
            "error code 'AuthorizeFailed': 登录失效",
        ),
        ({"code": 1}, parsing.CodeEnvelope(ok=(0,)), "error code 1: no message"),
        ({"code": "x", "message": "no key"}, parsing.CodeEnvelope(ok=()), "error code 'x': no key"),
        (
            {"RetCode": 171, "Message": "Signature VerifyAC Error"},
            parsing.CodeEnvelope(ok=(0,), key="RetCode", messages=("Message",)),
            "error code 171: Signature VerifyAC Error",
        ),
    ],
)
def test_a_code_envelope(payload: Any, envelope: parsing.CodeEnvelope, raises: str | None) -> None:
    if raises is None:
        envelope.check(payload)
    else:
        with pytest.raises(parsing.ErrorEnvelope, match=raises):
            envelope.check(payload)


@pytest.mark.parametrize(
    ("on_demand", "spot", "offered"),
    [
        (3.0, 1.5, 1.5),
        (3.0, None, None),
        (3.0, 0.0, None),  # DataCrunch's spot_price 0: no spot quote
        (2.99, 2.99, None),  # RunPod's mirrored *SpotPrice: no spot market
        (2.99, 3.5, None),  # dearer than on demand: no one bids it
        (None, 1.2, 1.2),  # no on-demand price to compare with
        (0.0, 1.2, None),  # an on-demand price of 0 is rejected; no spot above it stands in
    ],
)
def test_a_spot_price_is_one_below_the_on_demand_price(
    on_demand: float | None, spot: float | None, offered: float | None
) -> None:
    assert parsing.spot_price(on_demand, spot) == offered


@pytest.mark.parametrize(
    ("names", "form"),
    [
        (("A100-80GB", "crusoe_A100-80G-sxm4x8"), "SXM"),  # Shadeform: the form, count glued on
        (("H100", "gpu-h100-sxm_8gpu-128vcpu-1600gb"), "SXM"),  # Nebius' platform name
        (("A100-80GB", "oblivus__4xA100_80GB__124__480", "A100_PCIE_80GB"), "PCIe"),  # Prime Intellect
        (("A100-80G-PCIe-NVLink", "n3-A100x8-NVLink"), "PCIe"),  # NVLink is a bridge, no form
        (("H100", "paperspace_H100"), None),
        (("A100", "A100 SXM4", "A100_PCIE_40GB"), None),  # two forms: stated neither
    ],
)
def test_the_form_a_machine_name_states(names: tuple[str, ...], form: str | None) -> None:
    assert parsing.form_in_name(*names) == form
