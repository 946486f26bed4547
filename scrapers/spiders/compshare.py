"""优云智算 compshare.cn (UCloud): the signed API with keys; the public price list without.

With `COMPSHARE_PUBLIC_KEY` and `COMPSHARE_PRIVATE_KEY`: the signed API the official client
calls (compshare-cn/compshare-cli: base URL `https://api.compshare.cn`, `commands/instance.py`):
`DescribeCompShareSupportZone` lists the zones; per zone `DescribeAvailableCompShareInstanceTypes`
(`InstanceType` uhost) the GPU types, each with its memory (`GraphicsMemory.Value`, GB), its
`Status` (Normal | Beta | Soldout | Hidden) and its machine sizes (`MachineSizes[].{Gpu,
Collection[].{Cpu, Memory[] GiB}}`); per (zone, type, size) `GetCompShareInstancePrice` with a
100 GiB CLOUD_SSD boot disk as the client sends it and no `ChargeType`, which the official doc
(compshare.cn/docs/gpus/instance/getcompshareinstanceprice) answers with every way of paying:
"ChargeType … 不传则同时返回所有模式的价格。枚举值:Month、Day、Dynamic、Postpay、Spot", one
`PriceDetails[]` entry each, `Instance` the machine's price in CNY (GPU, CPU and memory; disks apart,
kept in `extra`) for one unit of its mode (`Quantity` 1, the doc's default: an hour for Postpay and
Spot, a day for Day, a month for Month). Offers per (zone, type, size), priced per instance:
Postpay on demand (the offer and id it always was), Spot when `parsing.spot_price` says it is one,
Day and Month as plans of one period (`CHARGE_TYPES`); Dynamic (UCloud's hourly prepaid) is left
out: unverified, it would double on demand. An entry marked `InstanceDiscountType` 1 (night) or 2
(holiday) is a discount of those hours only: the mode's `OriginalPriceDetails` entry is the price,
the discounted one is kept in `extra`. Stock 0 for a Soldout type, whatever the mode, otherwise
unknown (the API says sellable, not how many). Requests are UCloud's: a form POST,
nested keys flattened (`Disks.0.IsBoot`), booleans `true`/`false`, signed with SHA1 over the
sorted `keyvalue` pairs and the private key (UCloudDoc-Team/api `summary/signature.md`,
ucloud/ucloud-sdk-python3 `core/auth/_cfg.py`, `typesystem/encoder.py`). Envelope `RetCode` 0.

Without both keys: `https://www.compshare.cn/price-list` (price-sources.md §4.5), an HTML page of
whole-machine prices: GPU plus the CPU and memory that come with it, per machine, for each way of
paying (按时 hourly, 按天 daily, 按月 monthly, 抢占式 preemptible). No public copy of that page
exists, so its reading is a guess and the crawl says so: its summary is marked `unverified`.

The page is read by its table headers, not by column position: a price table has a GPU
model column (a header with "GPU" and 型号) and price columns whose header names a unit
(元/小时 or 元/时, 元/天, 元/周, 元/月); "抢占" in the header marks preemptible (spot) prices.
Optional columns: GPU count (卡数 / 数量, default 1), 显存, CPU, 内存. A cell without a
number ("—") means that way of paying is not sold for the machine; a row with no price at
all is rejected. Every price is per machine (`price_per` "instance"), billed by the period
its header names; monthly and daily prices are plans with a minimum term of one period.
The page says nothing about stock.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from parsel import Selector
from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import PLAN_OF_PERIOD, BillingPeriod, OfferItem, PricingType
from scrapers.platform import PlatformSpider, Token
from scrapers.rejects import RejectedOffer
from scrapers.rows import dig, kept, split_complete
from sizing import gpu_names

PRICE_LIST_URL = "https://www.compshare.cn/price-list"
API_URL = "https://api.compshare.cn/"
OK_CODES = (0,)
# The ways of paying a price answer gives (its `ChargeType`s) that are offers: ChargeType ->
# (offer id suffix, billing period, pricing type); Postpay's offer keeps the id it had alone.
CHARGE_TYPES: dict[str, tuple[str, BillingPeriod, PricingType]] = {
    "Postpay": ("", "hour", "on_demand"),  # pay-as-you-go, billed by the hour
    "Spot": ("/spot", "hour", "spot"),  # preemptible
    "Day": ("/day", "day", "daily_plan"),  # 按天
    "Month": ("/month", "month", "monthly_plan"),  # 按月
}
TIMED_DISCOUNTS = (1, 2)  # InstanceDiscountType: 1 夜间折扣 (night), 2 节日折扣 (holiday)
BOOT_DISK = {"IsBoot": True, "Type": "CLOUD_SSD", "Size": 100}  # GiB
SOLD_OUT, HIDDEN = "Soldout", "Hidden"
MIB_PER_GIB = 1024
UNVERIFIED_PAGE = (
    "read from compshare's price-list page, of which no public copy exists: the layout is a guess; "
    "set COMPSHARE_PUBLIC_KEY and COMPSHARE_PRIVATE_KEY to read the signed API"
)
# A header's price unit -> the billing period it names.
PERIOD_UNITS: tuple[tuple[str, BillingPeriod], ...] = (
    ("元/小时", "hour"),
    ("元/时", "hour"),
    ("元/天", "day"),
    ("元/日", "day"),
    ("元/周", "week"),
    ("元/月", "month"),
)
SPOT_WORD = "抢占"  # 抢占式: preemptible, may be reclaimed


@dataclass(frozen=True)
class PriceColumn:
    index: int
    label: str
    billing_period: BillingPeriod
    pricing_type: PricingType


@dataclass(frozen=True)
class PriceTable:
    gpu: int
    count: int | None
    memory: int | None
    kept: dict[str, int]  # extra columns worth keeping (CPU, 内存) by name
    prices: tuple[PriceColumn, ...]
    width: int


def _header(text: str) -> str:
    return re.sub(r"\s+", "", text).replace("（", "(").replace("）", ")")


def read_headers(labels: list[str]) -> PriceTable | None:
    """The columns of a price table from its header labels; None when it is no price table."""
    heads = [_header(label) for label in labels]

    def find(*words: str) -> int | None:
        return next((i for i, head in enumerate(heads) if any(word in head for word in words)), None)

    gpu = next((i for i, head in enumerate(heads) if "GPU" in head.upper() and "型号" in head), None)
    prices = []
    for index, head in enumerate(heads):
        period = next((period for unit, period in PERIOD_UNITS if unit in head), None)
        if period is None:
            continue
        pricing_type: PricingType = "spot" if SPOT_WORD in head else PLAN_OF_PERIOD[period]
        prices.append(PriceColumn(index, labels[index].strip(), period, pricing_type))
    if gpu is None or not prices:
        return None
    kept = {name: index for name, index in (("cpu", find("CPU")), ("ram", find("内存"))) if index is not None}
    return PriceTable(gpu, find("卡数", "数量"), find("显存"), kept, tuple(prices), len(heads))


def by_charge_type(details: Any) -> dict[str, Mapping[str, Any]]:
    """A price answer's detail entries by their `ChargeType` (the first of each)."""
    found: dict[str, Mapping[str, Any]] = {}
    for detail in details if isinstance(details, list) else ():
        if isinstance(detail, Mapping):
            found.setdefault(str(detail.get("ChargeType")), detail)
    return found


def _cell_text(cell: Selector) -> str:
    return " ".join(" ".join(cell.css("::text").getall()).split())


def ucloud_params(params: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """UCloud's request encoding: nested keys flattened (`Disks.0.IsBoot`), `true`/`false`."""
    flat: dict[str, str] = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(ucloud_params(value, f"{name}."))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                nested = item if isinstance(item, Mapping) else {"": item}
                flat.update({k.rstrip("."): v for k, v in ucloud_params(nested, f"{name}.{index}.").items()})
        elif isinstance(value, bool):
            flat[name] = "true" if value else "false"
        elif isinstance(value, float) and value.is_integer():
            flat[name] = str(int(value))
        else:
            flat[name] = str(value)
    return flat


def signed(params: Mapping[str, str], public_key: str, private_key: str) -> dict[str, str]:
    """`params` with `PublicKey` and their `Signature`: SHA1 of the sorted key+value pairs and the
    private key (UCloud's signature algorithm)."""
    form = {**params, "PublicKey": public_key}
    text = "".join(f"{key}{form[key]}" for key in sorted(form)) + private_key
    return {**form, "Signature": hashlib.sha1(text.encode("utf-8")).hexdigest()}


class CompshareSpider(PlatformSpider):
    name = "compshare"
    max_fan_out = 50  # zones asked in turn: the recording lists 2
    sites = ("compshare.cn",)
    token = Token(
        env="COMPSHARE_PUBLIC_KEY",
        required=False,
        description="compshare (UCloud) API public key, with COMPSHARE_PRIVATE_KEY: the signed API; "
        "without them the unverified public price page is read",
    )
    private_key = Token(
        env="COMPSHARE_PRIVATE_KEY", required=False, description="compshare API private key (signs requests)"
    )
    # The keyless path reads a web page: ask its robots.txt first.
    custom_settings: dict[str, Any] | None = {"ROBOTSTXT_OBEY": True}
    envelope = parsing.CodeEnvelope(ok=OK_CODES, key="RetCode", messages=("Message",))  # the API's
    offer_fields = {"price_currency": "CNY", "price_per": "instance"}

    def first_requests(self) -> Iterable[Request]:
        public, private = self.token_value(), self.private_key.value()
        if public and private:
            self._keys = (public, private)
            yield self.api_request({"Action": "DescribeCompShareSupportZone"}, self.parse_zones)
            return
        if public or private:
            self.logger.warning("compshare's API needs both COMPSHARE_PUBLIC_KEY and COMPSHARE_PRIVATE_KEY")
        self.mark_unverified(UNVERIFIED_PAGE)
        yield self.request(PRICE_LIST_URL, self.parse_price_list)

    # --- the signed API -----------------------------------------------------------

    def api_request(
        self, params: Mapping[str, Any], callback: Any, meta: Mapping[str, Any] | None = None
    ) -> Request:
        return self.request(
            API_URL,
            callback,
            form_body=signed(ucloud_params(params), *self._keys),
            headers={"Accept": "application/json"},
            # An API for key holders, not a page: robots.txt is not its contract.
            meta={**(meta or {}), "dont_obey_robotstxt": True},
        )

    def parse_zones(self, response: Response) -> Iterator[Request]:
        zones = dig(self.payload(response), "ZoneInfo")
        complete, _ = split_complete(zones, ("Region", "Zone"), "zones")
        for zone in self.fan_out(complete, "zones"):
            params = {
                "Action": "DescribeAvailableCompShareInstanceTypes",
                "Region": zone["Region"],
                "Zone": zone["Zone"],
                "InstanceType": "uhost",
            }
            yield self.api_request(params, self.parse_types, meta={"zone": dict(zone)})

    def parse_types(self, response: Response) -> Iterator[Request]:
        zone = response.meta["zone"]
        types = dig(self.payload(response), "AvailableInstanceTypes")
        if not types:
            return  # a zone may sell no GPU machine today; other zones still do
        complete, _ = split_complete(types, ("Name", "MachineSizes"), "GPU types")
        for kind in complete:
            if kind.get("Status") != HIDDEN:
                yield from self.judged(response, kind, partial(self.price_requests, zone, kind))

    def price_requests(self, zone: Mapping[str, Any], kind: Mapping[str, Any]) -> Iterator[Request]:
        """One price request per machine size of a GPU type in a zone."""
        for size in kind["MachineSizes"] if isinstance(kind["MachineSizes"], list) else []:
            collection = (size.get("Collection") or [{}])[0] if isinstance(size, Mapping) else {}
            memory = (collection.get("Memory") or [None])[0]
            if not (isinstance(size, Mapping) and size.get("Gpu") and collection.get("Cpu") and memory):
                continue
            params = {
                "Action": "GetCompShareInstancePrice",
                "Region": zone["Region"],
                "Zone": zone["Zone"],
                "GpuType": kind["Name"],
                "Gpu": size["Gpu"],
                "Cpu": collection["Cpu"],
                "Memory": int(memory) * MIB_PER_GIB,
                "Quantity": 1,
                "Disks": [BOOT_DISK],
            }
            meta = {
                "zone": zone,
                "kind": dict(kind),
                "gpus": int(size["Gpu"]),
                "cpu": collection["Cpu"],
                "memory_gib": memory,
            }
            yield self.api_request(params, self.parse_price, meta=meta)

    def parse_price(self, response: Response) -> Iterator[OfferItem | RejectedOffer]:
        zone, kind, gpus = response.meta["zone"], response.meta["kind"], response.meta["gpus"]
        payload = self.payload(response)
        details = by_charge_type(dig(payload, "PriceDetails"))
        originals = by_charge_type(payload.get("OriginalPriceDetails") or [])
        memory = parsing.number((kind.get("GraphicsMemory") or {}).get("Value"))
        gpu = gpu_names.identify(str(kind["Name"]), memory)
        on_demand = None
        for charge_type, (suffix, period, pricing) in CHARGE_TYPES.items():
            detail = details.get(charge_type)
            if detail is None and charge_type != "Postpay":
                continue  # not sold that way; no pay-as-you-go detail is the item checks' price_missing
            discounted = detail is not None and detail.get("InstanceDiscountType") in TIMED_DISCOUNTS
            priced = originals.get(charge_type, detail) if discounted else detail
            amount = parsing.number(priced.get("Instance")) if priced else None
            if charge_type == "Postpay":
                on_demand = amount
            elif charge_type == "Spot":
                amount = parsing.spot_price(on_demand, amount)
                if amount is None:
                    continue
            yield self.offer(
                response,
                gpu,
                offer_id=f"{zone['Zone']}/{kind['Name']}/{gpus}x{suffix}",
                gpu_name_raw=str(kind["Name"]),
                gpu_count=gpus,
                price_amount=amount,
                billing_period=period,
                pricing_type=pricing,
                region=str(zone.get("Describe") or zone["Zone"]),
                available_gpus=0 if kind.get("Status") == SOLD_OUT else None,
                extra=kept(
                    {
                        "zone": zone["Zone"],
                        "status": kind.get("Status"),
                        "cpu": response.meta["cpu"],
                        "memory_gib": response.meta["memory_gib"],
                        f"system_disk_cny_per_{period}": priced.get("SystemDisks") if priced else None,
                        "discounted_price": detail.get("Instance") if discounted and detail else None,
                    }
                ),
            )

    # --- the price-list page ----------------------------------------------------

    def parse_price_list(self, response: Response) -> Iterator[OfferItem | RejectedOffer]:
        found = False
        for table in Selector(text=response.text).css("table"):
            header_cells = table.css("thead tr th") or table.css("tr:first-child th")
            columns = read_headers([_cell_text(cell) for cell in header_cells])
            if columns is None:
                continue
            found = True
            for row in table.css("tbody tr"):
                cells = [_cell_text(cell) for cell in row.css("td")]
                yield from self.judged(
                    response, {"cells": cells}, partial(self.row_offers, response, columns, cells)
                )
        if not found:
            raise parsing.LayoutChanged(
                "no price table on the page (a GPU型号 column and 元/小时, 元/天 or 元/月 price columns)"
            )

    def row_offers(
        self, response: Response, columns: PriceTable, cells: list[str]
    ) -> Iterator[OfferItem | RejectedOffer]:
        if len(cells) != columns.width:
            yield self.reject(response, "row_shape", {"cells": cells, "columns": columns.width})
            return
        name = cells[columns.gpu]
        count = parsing.number(cells[columns.count]) if columns.count is not None else 1.0
        memory = cells[columns.memory] if columns.memory is not None else ""
        priced = [(column, parsing.number(cells[column.index])) for column in columns.prices]
        priced = [(column, price) for column, price in priced if price is not None]
        if not name or count is None or count < 1 or count != int(count) or not priced:
            yield self.reject(
                response, "no_price" if name and not priced else "record_incomplete", {"cells": cells}
            )
            return
        gpu = gpu_names.identify(name, parsing.memory_in_name(memory))
        offer_id = f"{name} {memory}/{int(count)}x".replace(" /", "/")
        extra = {key: cells[index] for key, index in columns.kept.items() if cells[index]}
        for column, price in priced:
            yield self.offer(
                response,
                gpu,
                offer_id=offer_id,
                gpu_name_raw=name,
                gpu_count=int(count),
                price_amount=price,
                billing_period=column.billing_period,
                pricing_type=column.pricing_type,
                extra={**extra, "price_column": column.label},
            )
