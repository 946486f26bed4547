"""阿里云 Alibaba Cloud ECS: GPU instance types, their zones' stock, and each one's price by the
hour, at spot, by the month (包月) and by the year (包年), straight from the ECS API.

Needs `ALIBABA_CLOUD_ACCESS_KEY_ID` and `ALIBABA_CLOUD_ACCESS_KEY_SECRET`, the names the SDK reads
(aliyun/darabonba-openapi python/alibabacloud_tea_openapi/client.py @
8b916ca848bbdcb8348fceb2fbb65af906cc7aec, `do_request`); a free RAM user's read-only key will do.
Without both the crawl is skipped, naming the one missing.

Requests are the SDK's V3 RPC style (same file, `do_request`): `POST https://ecs.<region>.aliyuncs.com/`
with every parameter in the query and an empty body, the action and version in the `x-acs-action`
and `x-acs-version` headers, signed ACS3-HMAC-SHA256 (`acs3_authorization`) as each request is sent.
The calls and their parameters are those of SkyPilot's Alibaba catalog fetcher
(sugarlxn/skypilot-catalog .github/scripts/alicloud/fetch_gpu_vms.py @
b613284a83e9ff5b63a86da5a86ac44b554bfd8b) and SpareCores/sc-crawler
(src/sc_crawler/vendors/_alicloud.py @ 4bcc0b1):
- `DescribeInstanceTypes` `MinimumGPUAmount=1`, 100 a page, `NextToken` until empty: the GPU types,
  `GPUSpec` (the card as Alibaba writes it), `GPUAmount` (cards per instance), `GPUMemorySize` (GiB
  per card). Masked codes (`H` 96 GB, `G49E` 48 GB, `L20N 48G`) stay unknown with their memory:
  `sizing.gpu_names.identify` never guesses. vGPU slices (`A10*1/12`, `T4/8`, the sgn/vgn families)
  are refused before pricing: a share of a card is not priced here.
- `DescribeRegions`, then per region `DescribeAvailableResource` for pay-as-you-go instances: which
  zone sells which type, and its stock (`StatusCategory` WithStock | ClosedWithStock |
  WithoutStock | ClosedWithoutStock, sc-crawler's comment): sold out is 0 GPUs; otherwise unknown,
  as no count is published. It speaks of pay-as-you-go: month and year offers carry no stock.
- per (zone, type): `DescribePrice` with a 40 GiB cloud_essd system disk (sugarlxn), `PriceUnit`
  Hour, then spot (`SpotStrategy=SpotAsPriceGo`, no protected hours), Month and Year with
  `Period=1` (the SDK model's DescribePriceRequest: Month 1-9, Year 1-5). The price is the
  `DetailInfos.DetailInfo[]` entry of `Resource` instanceType, its `TradePrice` (what is charged,
  the instance alone; sc-crawler reads spot prices this way); the total with the disk goes to
  `extra`. Units: Hour = currency per hour, Month = one month, Year = one year, per instance, in
  `Price.Currency` (CNY on a China-site account, USD on an international one: read, never
  assumed). A spot quote not below on demand is no spot market (`parsing.spot_price`).
  `InvalidInstanceType.ValueNotSupported` (HTTP 400) means the type is not sold that way: that
  quote is refused, the crawl goes on (sc-crawler returns no price for it).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

from scrapy.http import Request, Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider, Token
from scrapers.rejects import RejectedOffer
from scrapers.rows import dig, kept, split_complete
from sizing import gpu_names

ECS_VERSION = "2014-05-26"
TYPES_REGION = "cn-hangzhou"  # sugarlxn lists the instance types at this region's endpoint
PAGE_SIZE = "100"  # DescribeInstanceTypes MaxResults, as sugarlxn asks
# What every price is asked for (sugarlxn fetch_one_price): one VPC instance and its system disk (GiB).
PRICE_BASE = {
    "ResourceType": "instance",
    "InstanceNetworkType": "vpc",
    "Amount": "1",
    "SystemDisk.Category": "cloud_essd",
    "SystemDisk.Size": "40",
}
# The ways of paying asked: (offer label, parameters, billing period, pricing type).
PRICE_UNITS: tuple[tuple[str, dict[str, str], str, str], ...] = (
    ("hour", {"PriceUnit": "Hour"}, "hour", "on_demand"),
    ("month-1", {"PriceUnit": "Month", "Period": "1"}, "month", "monthly_plan"),
    ("year-1", {"PriceUnit": "Year", "Period": "1"}, "year", "reserved"),
)
SPOT = {"PriceUnit": "Hour", "SpotStrategy": "SpotAsPriceGo", "SpotDuration": "0"}
SOLD_OUT = frozenset({"WithoutStock", "ClosedWithoutStock"})  # StatusCategory of DescribeAvailableResource
NOT_SOLD_CODES = frozenset({"InvalidInstanceType.ValueNotSupported"})
SLICE_FAMILIES = ("ecs.sgn", "ecs.vgn")  # vGPU families: a share of a card per instance
TYPE_FIELDS = ("InstanceTypeId", "GPUAmount", "GPUSpec")
# What a price request carries to its answer (`price_requests`), and on to its spot request.
PRICE_META = ("kind", "zone", "label", "billing_period", "pricing_type", "available", "stock_category")
# Region ids become the host of a signed request (`ecs.<region>.aliyuncs.com`): only these characters
# (every id DescribeRegions answers: "cn-hangzhou", "ap-northeast-1", "me-east-1").
REGION_ID = re.compile(r"[a-z0-9-]+")
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
SIGNED = (
    "host",
    "x-acs-action",
    "x-acs-content-sha256",
    "x-acs-date",
    "x-acs-signature-nonce",
    "x-acs-version",
)


def canonical_query(query: Mapping[str, str | None]) -> str:
    """ACS3's canonical query: keys sorted, values percent-encoded with only `~` kept, None dropped
    (darabonba-openapi utils.py `get_canonical_query_string`)."""
    keys = sorted(key for key, value in query.items() if value is not None)
    return "&".join(f"{key}={quote(str(query[key]), safe='~')}" for key in keys)


def acs3_authorization(
    method: str,
    query: Mapping[str, str | None],
    headers: Mapping[str, str],
    payload_sha256: str,
    key_id: str,
    secret: str,
    path: str = "/",
) -> str:
    """The `Authorization` header of ACS3-HMAC-SHA256 over `headers` (all of them signed: names
    lower-cased, values stripped, a repeated name's values sorted and joined by a comma), as
    darabonba-openapi utils.py `get_authorization` and `get_canonicalized_headers` compute it."""
    values: dict[str, list[str]] = {}
    for name, value in headers.items():
        values.setdefault(name.lower(), []).append(str(value).strip())
    names = sorted(values)
    canonical_headers = "".join(f"{name}:{','.join(sorted(values[name]))}\n" for name in names)
    signed = ";".join(names)
    canonical = f"{method}\n{path}\n{canonical_query(query)}\n{canonical_headers}\n{signed}\n{payload_sha256}"
    to_sign = f"ACS3-HMAC-SHA256\n{hashlib.sha256(canonical.encode('utf-8')).hexdigest()}"
    signature = hmac.new(secret.encode("utf-8"), to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    return f"ACS3-HMAC-SHA256 Credential={key_id},SignedHeaders={signed},Signature={signature}"


def is_slice(kind: Mapping[str, Any]) -> bool:
    """A vGPU type: a share of one card (`A10*1/12`, `T4/8`, `v8-2G`, the sgn/vgn families)."""
    spec = str(kind.get("GPUSpec") or "")
    family = str(kind.get("InstanceTypeFamily") or "")
    return "/" in spec or "*" in spec or spec.startswith("v8-") or family.startswith(SLICE_FAMILIES)


class AlicloudSpider(PlatformSpider):
    name = "alicloud"
    sites = ("aliyuncs.com",)
    token = Token(
        env="ALIBABA_CLOUD_ACCESS_KEY_ID",
        required=True,
        description="Alibaba Cloud AccessKey ID (a RAM user with ECS read-only access), "
        "with ALIBABA_CLOUD_ACCESS_KEY_SECRET",
    )
    secret = Token(
        env="ALIBABA_CLOUD_ACCESS_KEY_SECRET",
        required=True,
        description="Alibaba Cloud AccessKey secret: signs each request, never sent",
    )
    replay_headers = ("x-acs-action",)  # the call; path and body are the same for every one
    envelope = parsing.CodeEnvelope(ok=(), key="Code", messages=("Message",))  # a success has no Code
    offer_fields = {"price_per": "instance"}
    max_pages = 20  # of 100 GPU types: the recording's list takes 2
    # Regions and the zones of one region, each asked in turn: Alibaba lists about 30 public regions
    # and a dozen zones at most (cn-hangzhou's); the recording, trimmed, holds 2 and 2.
    max_fan_out = 100

    def first_requests(self) -> Iterable[Request]:
        self._types: dict[str, Mapping[str, Any]] = {}
        query = {"MinimumGPUAmount": "1", "MaxResults": PAGE_SIZE}
        yield self.api(TYPES_REGION, "DescribeInstanceTypes", query, self.parse_types)

    def api(
        self,
        region: str,
        action: str,
        query: Mapping[str, str],
        callback: Any,
        meta: Mapping[str, Any] | None = None,
    ) -> Request:
        """An ECS call as the SDK sends it: a bodiless POST, its parameters in the query, the action
        in a header; signed as it leaves (`sign`)."""
        url = f"https://ecs.{region}.aliyuncs.com/?{canonical_query(query)}"
        headers = {"x-acs-action": action, "x-acs-version": ECS_VERSION, "Accept": "application/json"}
        meta = {**(meta or {}), "query": dict(query)}
        return self.request(url, callback, headers=headers, meta=meta, method="POST")

    def sign(self, request: Request) -> None:
        host = urlsplit(request.meta["source_url"]).netloc
        headers = {
            "host": host,
            "x-acs-action": (request.headers.get("x-acs-action") or b"").decode(),
            "x-acs-version": ECS_VERSION,
            "x-acs-date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "x-acs-signature-nonce": uuid.uuid4().hex,
            "x-acs-content-sha256": EMPTY_SHA256,
        }
        key_id, secret = self.token_value() or "", self.secret.value() or ""
        for name in SIGNED[1:]:
            request.headers[name] = headers[name]
        request.headers["Authorization"] = acs3_authorization(
            "POST", request.meta["query"], headers, EMPTY_SHA256, key_id, secret
        )

    # --- instance types, regions, zones ---------------------------------------------

    def parse_types(self, response: Response) -> Iterator[Request | RejectedOffer]:
        payload = self.payload(response)
        found = dig(payload, "InstanceTypes", "InstanceType")
        if found or not self._types:  # an empty first page is no market; an empty last one is the end
            complete, _ = split_complete(found, TYPE_FIELDS, "GPU instance types")
            for kind in complete:
                if is_slice(kind):
                    yield self.reject(response, "gpu_slice", kind)
                else:
                    self._types[str(kind["InstanceTypeId"])] = dict(kind)
        next_token = payload.get("NextToken") if isinstance(payload, Mapping) else None
        query = {"MinimumGPUAmount": "1", "MaxResults": PAGE_SIZE}
        pages = list(
            self.next_page(
                response,
                next_token,
                lambda token: self.api(
                    TYPES_REGION, "DescribeInstanceTypes", {**query, "NextToken": token}, self.parse_types
                ),
                "NextToken",
            )
        )
        # The types read so far are priced when the list ends, or is cut short.
        yield from pages or [
            self.api(TYPES_REGION, "DescribeRegions", {"ResourceType": "instance"}, self.parse_regions)
        ]

    def parse_regions(self, response: Response) -> Iterator[Request]:
        regions, _ = split_complete(
            dig(self.payload(response), "Regions", "Region"), ("RegionId",), "regions"
        )
        for region in self.fan_out(regions, "regions"):
            if region.get("Status") not in (None, "available"):
                continue
            region_id = self.checked_id(region["RegionId"], "region id", REGION_ID)
            if region_id is None:
                continue
            query = {
                "RegionId": region_id,
                "DestinationResource": "InstanceType",
                "InstanceChargeType": "PostPaid",
                "ResourceType": "instance",
            }
            yield self.api(region_id, "DescribeAvailableResource", query, self.parse_zones)

    def parse_zones(self, response: Response) -> Iterator[Request]:
        zones = dig(self.payload(response), "AvailableZones", "AvailableZone")
        for zone in self.fan_out(zones, "zones in a region"):
            if not isinstance(zone, Mapping) or not zone.get("ZoneId") or not zone.get("RegionId"):
                continue
            if self.checked_id(zone["RegionId"], "region id", REGION_ID) is None:
                continue
            for resource in (zone.get("AvailableResources") or {}).get("AvailableResource") or ():
                if not isinstance(resource, Mapping) or resource.get("Type") != "InstanceType":
                    continue
                for sold in (resource.get("SupportedResources") or {}).get("SupportedResource") or ():
                    kind = self._types.get(str(sold.get("Value"))) if isinstance(sold, Mapping) else None
                    if kind is not None:
                        yield from self.price_requests(str(zone["RegionId"]), str(zone["ZoneId"]), kind, sold)

    def price_requests(
        self, region: str, zone: str, kind: Mapping[str, Any], sold: Mapping[str, Any]
    ) -> Iterator[Request]:
        category = sold.get("StatusCategory")
        sold_out = category in SOLD_OUT or sold.get("Status") == "SoldOut"
        for label, unit, period, pricing in PRICE_UNITS:
            query = {"RegionId": region, "ZoneId": zone, "InstanceType": str(kind["InstanceTypeId"])}
            meta = {
                "kind": kind, "zone": zone, "label": label, "billing_period": period, "pricing_type": pricing,
                # The stock asked is pay-as-you-go's: the prepaid ways say nothing.
                "available": (0 if sold_out else None) if period == "hour" else None,
                "stock_category": category,
            }  # fmt: skip
            request = self.api(
                region, "DescribePrice", {**query, **PRICE_BASE, **unit}, self.parse_price, meta
            )
            yield request.replace(errback=self.price_failed)

    # --- prices -----------------------------------------------------------------------

    def parse_price(self, response: Response) -> Iterator[OfferItem | RejectedOffer | Request]:
        meta = response.meta
        price = dig(self.payload(response), "PriceInfo", "Price", expect=dict)
        details = (price.get("DetailInfos") or {}).get("DetailInfo") or []
        detail = next(
            (d for d in details if isinstance(d, Mapping) and d.get("Resource") == "instanceType"), {}
        )
        amount = parsing.number(detail.get("TradePrice"))
        if meta["label"] == "spot":
            spot = parsing.spot_price(meta["on_demand"], amount)
            if spot is None:
                yield self.reject(
                    response, "spot_not_below_on_demand", {**meta["kind"], "price": dict(price)}
                )
                return
        yield self.price_offer(response, price, detail, amount)
        if meta["label"] == "hour":
            query = {key: meta["query"][key] for key in ("RegionId", "ZoneId", "InstanceType")}
            region = meta["query"]["RegionId"]
            spot_meta = {key: meta[key] for key in PRICE_META} | {
                "label": "spot",
                "pricing_type": "spot",
                "on_demand": amount,
            }
            ask = self.api(
                region, "DescribePrice", {**query, **PRICE_BASE, **SPOT}, self.parse_price, spot_meta
            )
            yield ask.replace(errback=self.price_failed)

    def price_offer(
        self, response: Response, price: Mapping[str, Any], detail: Mapping[str, Any], amount: float | None
    ) -> OfferItem:
        meta, kind = response.meta, response.meta["kind"]
        memory = parsing.number(kind.get("GPUMemorySize"))  # GiB per card
        rules = [rule.get("Description") for rule in (detail.get("SubRules") or {}).get("Rule") or ()]
        extra = {
            "zone": meta["zone"],
            "instance_type_family": kind.get("InstanceTypeFamily"),
            "vcpus": kind.get("CpuCoreCount"),
            "memory_gib": kind.get("MemorySize"),
            "gpu_memory_gib": kind.get("GPUMemorySize"),
            "cpu_architecture": kind.get("CpuArchitecture"),
            "stock_category": meta["stock_category"],
            "original_price": detail.get("OriginalPrice"),
            "trade_price_with_disk": price.get("TradePrice"),
            "rules": [rule for rule in rules if rule] or None,
        }
        return self.offer(
            response,
            gpu_names.identify(str(kind["GPUSpec"]), memory),
            offer_id=f"{kind['InstanceTypeId']}@{meta['zone']}/{meta['label']}",
            gpu_name_raw=str(kind["GPUSpec"]),
            gpu_count=int(parsing.number(kind["GPUAmount"]) or 0),
            price_amount=amount,
            price_currency=price.get("Currency"),
            billing_period=meta["billing_period"],
            pricing_type=meta["pricing_type"],
            region=meta["query"]["RegionId"],
            available_gpus=meta["available"],
            extra=kept(extra),
        )

    def price_failed(self, failure: Failure) -> Iterator[RejectedOffer]:
        """A type not sold that way (`NOT_SOLD_CODES`) is a refused quote; any other error a failure."""
        error = failure.value
        code, message = error_code(error.response) if isinstance(error, HttpError) else (None, None)
        if code not in NOT_SOLD_CODES:
            self.on_request_failed(failure)
            return
        request: Request = failure.request  # type: ignore[attr-defined]  # set by Scrapy on errbacks
        raw = {**request.meta["kind"], "price_unit": request.meta["label"], "code": code, "message": message}
        yield self.reject(error.response, "not_sold", raw)

    def on_request_failed(self, failure: Failure) -> None:
        """An ECS error answer says its `Code` and `Message`: the summary names them."""
        error = failure.value
        code, message = error_code(error.response) if isinstance(error, HttpError) else (None, None)
        if code is None:
            super().on_request_failed(failure)
            return
        request: Request = failure.request  # type: ignore[attr-defined]  # set by Scrapy on errbacks
        url = request.meta.get("source_url", request.url)
        self.record_failure(f"HTTP {error.response.status} from {url}: {code}: {message or 'no message'}")


def error_code(response: Response) -> tuple[str | None, str | None]:
    """The `Code` and `Message` of an ECS error answer (`{"RequestId", "HostId", "Code", "Message",
    "Recommend"}`), or (None, None) when the body is no such answer."""
    try:
        body = json.loads(response.body)
    except (ValueError, UnicodeDecodeError):
        return None, None
    if not isinstance(body, Mapping) or not body.get("Code"):
        return None, None
    return str(body["Code"]), str(body.get("Message") or "") or None
