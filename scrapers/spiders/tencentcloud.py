"""腾讯云 Tencent Cloud CVM: GPU instance types and each one's price by the hour (POSTPAID_BY_HOUR),
at spot (SPOTPAID) and prepaid (PREPAID 包年包月: one month, one year, three years), with the sell
status, per zone.

Needs `TENCENTCLOUD_SECRET_ID` and `TENCENTCLOUD_SECRET_KEY`, the names SkyPilot's Tencent catalog
fetcher requires (sugarlxn/skypilot-catalog .github/scripts/tencentcloud/fetch_tencentcloud_catalog.py
@ c998b7157aac72dd2374a80d34b511bcc08d676a); without both the crawl is skipped, naming the one missing.

API 3.0 as the SDK sends it (TencentCloud/tencentcloud-sdk-python tencentcloud/common/abstract_client.py
@ bf297176c, `_build_req_with_tc3_signature`): `POST https://cvm.tencentcloudapi.com/` with a JSON
body, the call in `X-TC-Action`, the region in `X-TC-Region` (absent for DescribeRegions, as the
fetcher's region-less client sends it), `X-TC-Version 2017-03-12`, signed TC3-HMAC-SHA256
(`tc3_authorization`) as each request is sent. Errors come with HTTP 200 as `Response.Error {Code,
Message}`. The calls:
- `DescribeRegions`: the regions with `RegionState` AVAILABLE (the fetcher's `get_available_regions`).
- per region `DescribeInstanceTypeConfigs` `{}`: the types, GPU ones by `GPU`/`GpuCount` > 0 (the
  fetcher's `is_gpu_spec`); `GpuType` and `GpuMemory` (GiB per card, the SDK's cvm models.py
  InstanceTypeConfig) name the card where given, else the fetcher's family table
  (`GPU_FAMILY_TO_ACCELERATOR`, from Tencent's GPU instance docs), else the family itself: an
  unknown card, never guessed. `GpuCount` < 1 is a vGPU share of a card: refused.
- per region with GPU types `DescribeZoneInstanceConfigInfos`, filtered by those families and the
  charge types POSTPAID_BY_HOUR, SPOTPAID and PREPAID (the SDK's filter doc): one row per (zone,
  type, charge type), `Price` an ItemPrice whose units the SDK's docstrings state, in 元 (CNY; the
  China-site endpoint, the answer names no currency): `UnitPriceDiscount` the payable price per
  hour (postpaid, spot), `DiscountPrice` the prepaid total of one month (SkyPilot-independent
  ec2instances.info scraper fuzzbuster/ec2instances.info tencentcloud/scrape.go @
  12c408e5896af65a4c2d314ee52fe811dbc3012a maps it to monthly), `DiscountPriceOneYear` and
  `DiscountPriceThreeYear` (or `...ThreeYears`, as that scraper reads the console) the prepaid
  total of one and three years. One year is one `year` offer; three years are a `year` offer of a
  third of the total with a minimum of 3 (the total kept in `extra`); five years are not taken.
  List prices and the discount (`Discount` 80.0 = pay 80 %) go to `extra`.
  Stock: `Status` SOLD_OUT or `StatusCategory` WithoutStock is 0; otherwise unknown, its category
  (EnoughStock | NormalStock | UnderStock) kept.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider, Token
from scrapers.rejects import RejectedOffer
from scrapers.rows import dig, kept, split_complete
from sizing import gpu_names

API_URL = "https://cvm.tencentcloudapi.com/"
REGION_ID = re.compile(r"[a-z0-9-]+")  # "ap-guangzhou", "na-siliconvalley"
VERSION = "2017-03-12"
SERVICE = "cvm"
CHARGE_TYPES = ("POSTPAID_BY_HOUR", "SPOTPAID", "PREPAID")
SOLD_OUT_STATUS, SOLD_OUT_CATEGORY = "SOLD_OUT", "WithoutStock"
LONG_TERM_YEARS = 3  # the three-year prepaid term
# The fetcher's GPU_FAMILY_TO_ACCELERATOR (family upper-cased, dashes removed: its normalize_family).
FAMILY_GPUS = {
    "GI1": "Intel SG1",
    "GI3X": "T4",
    "GN6": "P4",
    "GN6S": "P4",
    "GN7": "T4",
    "GN7VI": "T4",
    "GN7VW": "T4",
    "GN8": "P40",
    "GN10X": "V100",
    "GN10XP": "V100",
    "GNV4": "A10",
    "GNV4V": "A10",
    "GT4": "A100",
    "PNV4": "A10",
    "PTX1": "Tencent Zixiao C100",
}
_ZONE_NUMBER = re.compile(r"-\d+$")


def tc3_authorization(
    secret_id: str,
    secret_key: str,
    host: str,
    content_type: str,
    payload: bytes,
    timestamp: int,
    service: str = SERVICE,
) -> str:
    """The `Authorization` header of TC3-HMAC-SHA256 for a POST to `/` (the SDK's
    `_get_tc3_signature` and `Sign.sign_tc3`): content-type and host signed, the date the UTC day of
    `timestamp`, the key derived from "TC3" + secret key, date, service and "tc3_request"."""
    date = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d")
    canonical = (
        f"POST\n/\n\ncontent-type:{content_type}\nhost:{host}\n\ncontent-type;host\n"
        f"{hashlib.sha256(payload).hexdigest()}"
    )
    scope = f"{date}/{service}/tc3_request"
    to_sign = (
        f"TC3-HMAC-SHA256\n{timestamp}\n{scope}\n{hashlib.sha256(canonical.encode('utf-8')).hexdigest()}"
    )
    key = ("TC3" + secret_key).encode("utf-8")
    for part in (date, service, "tc3_request"):
        key = hmac.new(key, part.encode("utf-8"), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    return (
        f"TC3-HMAC-SHA256 Credential={secret_id}/{scope}, SignedHeaders=content-type;host, "
        f"Signature={signature}"
    )


def is_gpu_type(config: Mapping[str, Any]) -> bool:
    """A type with GPUs (the fetcher's `is_gpu_spec`: `GPU` or `GpuCount` above 0)."""
    return (parsing.number(config.get("GPU")) or 0) > 0 or (parsing.number(config.get("GpuCount")) or 0) > 0


def gpu_name(config: Mapping[str, Any], family: str) -> str:
    """The card a type has: its `GpuType`, else the family table's name, else the family."""
    named = str(config.get("GpuType") or "").strip()
    return named or FAMILY_GPUS.get(family.replace("-", "").upper(), family)


class TencentcloudSpider(PlatformSpider):
    name = "tencentcloud"
    sites = ("tencentcloudapi.com",)
    token = Token(
        env="TENCENTCLOUD_SECRET_ID",
        required=True,
        description="Tencent Cloud API SecretId (CAM API key), with TENCENTCLOUD_SECRET_KEY",
    )
    secret = Token(
        env="TENCENTCLOUD_SECRET_KEY",
        required=True,
        description="Tencent Cloud API SecretKey: signs each request, never sent",
    )
    replay_headers = ("X-TC-Action", "X-TC-Region")  # the call and region; the body is often {}
    rows_at = ("Response", "InstanceTypeQuotaSet")
    rows_name = "instance quotas"
    # Regions asked in turn: Tencent lists about 25 CVM regions; the recording, trimmed, holds 5.
    max_fan_out = 100
    required = ("Zone", "InstanceType", "InstanceChargeType", "Price")
    offer_fields = {"price_currency": "CNY", "price_per": "instance"}

    def first_requests(self) -> Iterable[Request]:
        self._configs: dict[str, Mapping[str, Any]] = {}
        yield self.call("DescribeRegions", "", {}, self.parse_regions)

    def call(
        self, action: str, region: str, payload: Any, callback: Any, meta: Mapping[str, Any] | None = None
    ) -> Request:
        headers = {"X-TC-Action": action, "X-TC-Version": VERSION}
        if region:
            headers["X-TC-Region"] = region
        meta = {**(meta or {}), "region": region}
        return self.request(API_URL, callback, json_body=payload, headers=headers, meta=meta)

    def sign(self, request: Request) -> None:
        timestamp = int(time.time())
        content_type = (request.headers.get("Content-Type") or b"").decode("latin-1")
        host = urlsplit(request.meta["source_url"]).netloc
        request.headers["X-TC-Timestamp"] = str(timestamp)
        request.headers["Authorization"] = tc3_authorization(
            self.token_value() or "", self.secret.value() or "", host, content_type, request.body, timestamp
        )

    def check_payload(self, payload: Any) -> None:
        """`Response.Error {Code, Message}` with HTTP 200 is the API's error answer."""
        error = payload.get("Response", {}).get("Error") if isinstance(payload, Mapping) else None
        if isinstance(error, Mapping):
            message = error.get("Message") or "no message"
            raise parsing.ErrorEnvelope(
                f"the platform answered with error code {error.get('Code')!r}: {message}"
            )
        super().check_payload(payload)

    # --- regions and types ----------------------------------------------------------

    def parse_regions(self, response: Response) -> Iterator[Request]:
        found = dig(self.payload(response), "Response", "RegionSet")
        regions, _ = split_complete(found, ("Region",), "regions")
        for region in self.fan_out(regions, "regions"):
            if region.get("RegionState") != "AVAILABLE":
                continue
            # The region goes into a signed header (X-TC-Region): only an id's characters.
            region_id = self.checked_id(region["Region"], "region id", REGION_ID)
            if region_id is not None:
                yield self.call("DescribeInstanceTypeConfigs", region_id, {}, self.parse_configs)

    def parse_configs(self, response: Response) -> Iterator[Request]:
        found = dig(self.payload(response), "Response", "InstanceTypeConfigSet")
        families = set()
        for config in found:
            if isinstance(config, Mapping) and config.get("InstanceType") and is_gpu_type(config):
                self._configs.setdefault(str(config["InstanceType"]), dict(config))
                families.add(str(config.get("InstanceFamily") or ""))
        families.discard("")
        if not families:
            return  # a region without GPU machines
        payload = {
            "Filters": [
                {"Name": "instance-family", "Values": sorted(families)},
                {"Name": "instance-charge-type", "Values": list(CHARGE_TYPES)},
            ]
        }
        region = response.meta["region"]
        yield self.call("DescribeZoneInstanceConfigInfos", region, payload, self.parse_rows)

    # --- prices ---------------------------------------------------------------------------

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem | RejectedOffer]:
        charge = row["InstanceChargeType"]
        if charge not in CHARGE_TYPES:
            return
        config = self._configs.get(str(row["InstanceType"]), {})
        cards = parsing.number(row.get("GpuCount", config.get("GpuCount")))
        if cards is None or cards < 1 or cards != int(cards):
            yield self.reject(response, "gpu_slice", row)
            return
        family = str(row.get("InstanceFamily") or config.get("InstanceFamily") or "")
        raw = gpu_name(config, family)
        gpu = gpu_names.identify(raw, parsing.number(config.get("GpuMemory")))
        price = row["Price"] if isinstance(row["Price"], Mapping) else {}
        sold_out = row.get("Status") == SOLD_OUT_STATUS or row.get("StatusCategory") == SOLD_OUT_CATEGORY
        zone = str(row["Zone"])
        common = {
            "gpu_name_raw": raw,
            "gpu_count": int(cards),
            "region": response.meta["region"] or _ZONE_NUMBER.sub("", zone),
            "available_gpus": 0 if sold_out else None,
        }
        extra = {
            "zone": zone,
            "instance_family": family,
            "type_name": row.get("TypeName"),
            "vcpus": row.get("Cpu"),
            "memory_gib": row.get("Memory"),
            "gpu_memory_gib": config.get("GpuMemory"),
            "status": row.get("Status"),
            "status_category": row.get("StatusCategory"),
            "sold_out_reason": row.get("SoldOutReason"),
        }
        for label, amount, period, pricing, term, listed in terms(charge, price):
            yield self.offer(
                response,
                gpu,
                offer_id=f"{row['InstanceType']}@{zone}/{label}",
                price_amount=amount,
                billing_period=period,
                pricing_type=pricing,
                min_term_periods=term,
                extra=kept({**extra, **listed}),
                **common,
            )


def terms(
    charge: str, price: Mapping[str, Any]
) -> Iterator[tuple[str, float | None, str, str, int, dict[str, Any]]]:
    """The offers of one ItemPrice: (label, amount, billing period, pricing type, minimum periods,
    the list prices and discounts for `extra`). A prepaid term priced 0 or missing is not sold."""

    def amount(*keys: str) -> float | None:
        return next((value for key in keys if (value := parsing.number(price.get(key))) is not None), None)

    if charge in ("POSTPAID_BY_HOUR", "SPOTPAID"):
        listed = {
            "list_price": price.get("UnitPrice"),
            "discount": price.get("Discount"),
            # Hourly tiers after 96 h and 360 h, when the type has them (0 = none).
            "unit_price_second_step": price.get("UnitPriceDiscountSecondStep") or None,
            "unit_price_third_step": price.get("UnitPriceDiscountThirdStep") or None,
        }
        label, pricing = ("hour", "on_demand") if charge == "POSTPAID_BY_HOUR" else ("spot", "spot")
        yield label, amount("UnitPriceDiscount"), "hour", pricing, 1, listed
        return
    yield (
        "month-1", amount("DiscountPrice"), "month", "monthly_plan", 1,
        {"list_price": price.get("OriginalPrice"), "discount": price.get("Discount")},
    )  # fmt: skip
    one_year = amount("DiscountPriceOneYear")
    if one_year:
        listed = {"list_price": price.get("OriginalPriceOneYear"), "discount": price.get("DiscountOneYear")}
        yield "year-1", one_year, "year", "reserved", 1, listed
    three_years = amount("DiscountPriceThreeYear", "DiscountPriceThreeYears")
    if three_years:
        listed = {
            "term_total_price": three_years,  # the whole term, prepaid; the offer is one year of it
            "term_list_price": amount("OriginalPriceThreeYear", "OriginalPriceThreeYears"),
            "discount": price.get("DiscountThreeYear", price.get("DiscountThreeYears")),
        }
        yield "year-3", round(three_years / LONG_TERM_YEARS, 6), "year", "reserved", LONG_TERM_YEARS, listed
