"""Azure: the keyless Retail Prices API, GPU VMs on demand, spot, and reserved for 1 and 3 years.

Source: `GET https://prices.azure.com/api/retail/prices?$filter=...` (no key), the request SkyPilot's
catalog fetcher sends (skypilot-org/skypilot `sky/catalog/data_fetchers/fetch_azure.py` @ 0089fca,
`get_pricing_url`): `serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and
armRegionName eq '<region>'`, quoted with `urllib.parse.quote`, one walk per region, following
`NextPageLink` until there is none. SkyPilot's is the one public client that pages by the link the
issue names, and its exact URL is what a recording of it holds; dstackai/gpuhunt
(`providers/azure.py` @ 3584151) asks the same `priceType eq 'Consumption'` meters, but pages by
`$skip` with Windows, Dedicated and Low Priority filtered in the query. Both leave out
reservations; they are a second walk per region, the same filter with `priceType eq
'Reservation'` (the filter itTkm/azure-retail-prices `src/index.ts` @ 52e4d00 builds for
`priceType: "Reservation"`; the real reservation rows in ewyluda/macrogauge
`tests/fixtures/azure_gpu_reserved.json` @ 3d58df3 show their shape). Regions: SkyPilot's default
`US_REGIONS` plus West Europe, 2 walks each (itTkm counts 4K+ VM meters of every price type in
West Europe: a few pages of 1000, the real links' `$skip`): a daily crawl of about 50 requests.
Sovereign clouds (US Gov, China) are other hosts and never asked.

A meter per row: `armSkuName` (the VM size, the join key: the API names no GPU), `meterName`
("ND96isrH100v5 Spot", "... Low Priority"), `productName` ("... Series Windows"), `type`,
`retailPrice`, `currencyCode`. Kept: Linux meters (not Windows: SkyPilot's `' Win'` test), not
Low Priority (retiring, gpuhunt), not Dedicated Host (gpuhunt), not DevTestConsumption (Dev/Test
subscriptions only), sizes in the GPU table below, and a positive price (SkyPilot `unitPrice >
0`). Units (the 2026-10-07 recordings; ahmadabdalla/azure-cost-calculator #239):
- Consumption: USD per VM-hour; " Spot" in meterName = the spot price (as SkyPilot splits them).
  The spot meter is the platform's own spot price, on its own row, often on another page than the
  on-demand one: passed on as quoted, even where it equals on demand (H200, GB200 in eastus2).
- Reservation: `retailPrice` is the whole term, prepaid, although `unitOfMeasure` says "1 Hour"
  (1 Year H100 ND96isr: 551221). Offered per year: a 1-year term as is (`min_term_periods` 1), a
  3-year total divided by 3 (`min_term_periods` 3); the total stays in `extra.term_price`. The
  5-year term is not taken (the issue asks 1 and 3 years).
Stock: the API says nothing about capacity (that needs credentials): unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple
from urllib.parse import quote

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider
from sizing import gpu_names

PRICES_URL = "https://prices.azure.com/api/retail/prices"
# SkyPilot's US_REGIONS (fetch_azure.py), and West Europe, Azure's largest EU GPU region.
REGIONS = (
    "centralus", "eastus", "eastus2", "northcentralus", "southcentralus",
    "westcentralus", "westus", "westus2", "westus3", "westeurope",
)  # fmt: skip
PRICE_TYPES = ("Consumption", "Reservation")
PAGE_SIZE = 1000  # the real NextPageLink's `$skip=1000`: a full page with no link is suspect
RESERVATION_YEARS = {"1 Year": 1, "3 Years": 3}  # `reservationTerm`; "5 Years" is not taken


class Series(NamedTuple):
    pattern: str  # the VM size after "Standard_", a regex with the vCPU count as group 1
    card: str  # the GPU as gpu_names.identify reads it
    memory_gb: float
    gpus: dict[int, float]  # vCPUs -> GPUs per VM (a share below 1 is a slice of one card)


# VM sizes -> GPUs. Cards and memory: gpuhunt's `gpu_vm_series`; counts: the Azure size pages SkyPilot
# links (its FAMILY_NAME_TO_SKYPILOT_GPU_NAME, AZURE_MISSING_GPU_COUNT for GB200/GB300/MI300X, which
# the SKU API describes without a count) and the SKU API's GPUs capability (aspire.dev's
# AksNodeVmSizes tables). Slices: NV A10 v5 gives vCPUs/36 of a card (SkyPilot's
# AZURE_FRACTIONAL_A10_INS_TYPE_TO_NUM_GPUS); NC8ads A10 v4 half of one (gpuhunt's memory rule
# 24 GB x min(1, vCPUs/16); SkyPilot's comment calls the line "full GPUs": assumed). Forms where
# Azure states them: NC A100 v4 is PCIe, ND A100 v4 and ND H100 v5 SXM (8 GPUs over NVLink),
# NC H100 v5 the H100 NVL; NCv3/NDv2 V100s stay form-less.
SERIES = (
    Series(r"NC(\d+)as_T4_v3", "T4", 16, {4: 1, 8: 1, 16: 1, 64: 4}),
    Series(r"NC(\d+)r?s_v3", "V100", 16, {6: 1, 12: 2, 24: 4}),
    Series(r"ND(\d+)rs_v2", "V100", 32, {40: 8}),
    Series(r"NC(\d+)ads_A100_v4", "A100 PCIe", 80, {24: 1, 48: 2, 96: 4}),
    Series(r"ND(\d+)asr_v4", "A100 SXM", 40, {96: 8}),
    Series(r"ND(\d+)amsr_A100_v4", "A100 SXM", 80, {96: 8}),
    Series(r"NCC?(\d+)adi?s_H100_v5", "H100 NVL", 94, {40: 1, 80: 2}),
    Series(r"ND(\d+)isr?_H100_v5", "H100 SXM", 80, {96: 8}),
    Series(r"ND(\d+)isr_H200_v5", "H200", 141, {96: 8}),
    Series(r"ND(\d+)isr_NDR_GB200_v6", "GB200", 186, {128: 4}),
    Series(r"ND(\d+)isr_GB300_v6", "GB300", 279, {128: 4}),
    Series(r"ND(\d+)isr?_MI300X_v5", "MI300X", 192, {96: 8}),
    Series(r"NC(\d+)ads_A10_v4", "A10", 24, {8: 0.5, 16: 1, 32: 2}),
    Series(r"NV(\d+)adm?s_A10_v5", "A10", 24, {6: 1 / 6, 12: 1 / 3, 18: 1 / 2, 36: 1, 72: 2}),
)
_SERIES = [(re.compile(rf"^Standard_{series.pattern}$"), series) for series in SERIES]


def vm_gpus(sku: str) -> tuple[str, float, float] | None:
    """(card, memory GB, GPUs per VM) of a VM size, or None for a size with no GPU in the table."""
    for pattern, series in _SERIES:
        match = pattern.match(sku)
        if match and int(match.group(1)) in series.gpus:
            return series.card, series.memory_gb, series.gpus[int(match.group(1))]
    return None


def pricing_url(region: str, price_type: str) -> str:
    """SkyPilot's `get_pricing_url(region)`, with the price type as a parameter."""
    filters = [
        "serviceName eq 'Virtual Machines'",
        f"priceType eq '{price_type}'",
        f"armRegionName eq '{region}'",
    ]
    return f"{PRICES_URL}?$filter={quote(' and '.join(filters))}"


class AzureSpider(PlatformSpider):
    name = "azure"
    sites = ("azure.com",)
    rows_at = ("Items",)
    rows_name = "price meters"
    required = ("armSkuName", "meterName", "productName", "type", "retailPrice")
    kept = ("meterName", "productName", "skuId", "effectiveStartDate", "reservationTerm")
    offer_fields = {"price_per": "instance"}
    # A walk's pages of 1000: West Europe, the largest, has 4K+ VM meters of every price type
    # (itTkm), so a walk of one type takes at most 5; the recorded walks take 1 or 2.
    max_pages = 20

    def first_requests(self) -> Iterable[Request]:
        for region in REGIONS:
            for price_type in PRICE_TYPES:
                yield self.request(pricing_url(region, price_type), self.parse_rows)

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem]:
        sku, meter, product = str(row["armSkuName"]), str(row["meterName"]), str(row["productName"])
        gpus = vm_gpus(sku)
        if gpus is None or " Win" in product or "Dedicated" in product or "Low Priority" in meter:
            return
        card, memory_gb, per_vm = gpus
        region = str(row.get("armRegionName") or "")
        fields: dict[str, Any] = {
            "gpu_name_raw": sku,
            "gpu_count": max(1, int(per_vm)),
            "gpu_frac": round(per_vm, 3) if per_vm < 1 else None,
            "region": region or None,
            "price_currency": str(row.get("currencyCode") or "USD"),
        }
        gpu = gpu_names.identify(card, memory_gb)
        price = parsing.number(row["retailPrice"])
        if row["type"] == "Consumption":
            spot = " Spot" in meter
            yield self.offer(
                response, gpu, offer_id=f"{sku}/{region}", price_amount=price, billing_period="hour",
                pricing_type="spot" if spot else "on_demand", **fields,
            )  # fmt: skip
        elif row["type"] == "Reservation" and (
            years := RESERVATION_YEARS.get(str(row.get("reservationTerm")))
        ):
            yield self.offer(
                response, gpu, offer_id=f"{sku}/{region}/reservation-{years}y",
                price_amount=None if price is None else round(price / years, 6),
                billing_period="year", min_term_periods=years, pricing_type="reserved",
                extra={"term_price": price}, **fields,
            )  # fmt: skip

    def after_rows(self, response: Response, payload: Any, found: Sequence[Any]) -> Iterable[Request]:
        link = payload.get("NextPageLink")
        if link:
            return self.next_page(
                response, link, lambda url: self.request(url, self.parse_rows), "NextPageLink"
            )
        if len(found) >= PAGE_SIZE:
            # Microsoft Q&A 1188465: the link once came back empty on a full page with more to come.
            self.mark_partial(
                f"a full page of {len(found)} meters without a NextPageLink: {self.source_url(response)}"
            )
        return ()
