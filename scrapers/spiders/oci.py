"""Oracle Cloud (OCI): the keyless price-list API, GPU shapes priced per GPU-hour.

Source: `GET https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD` (no key,
no pagination: one answer holds the whole price book), the request of ewyluda/macrogauge
(`pipeline/connectors/cloudgpu.py` @ 338a61b) and getcomputable/gpu-index
(`observatory/sources/oracle.py` @ ccf4ba8, whose real answer of 2026-08-22 the fixture holds);
SkyPilot's fetcher reads the same list (`fetch_oci.py` @ 14cffac, `load_prices`: the USD
`PAY_AS_YOU_GO` price of each part number).

`{"lastUpdated": ..., "items": [{partNumber, displayName, metricName, serviceCategory,
currencyCodeLocalizations: [{currencyCode, prices: [{model, value}]}]}]}`. A GPU rental is a part
with `metricName` "GPU Per Hour": its value is USD per GPU per hour (SkyPilot multiplies it by the
shape's GPU count for an instance price; Oracle's pricing page lists the same per-GPU figure).
Not GPU rentals, though priced per GPU-hour in the same category: the "NVIDIA AI Enterprise"
software licences billed on top (taking them would price an H100 at 2.50 instead of 10.00;
gpu-index) and the on-premises Cloud@Customer parts (their own `serviceCategory`). Other metrics
(VMware node commitments, Roving Edge per day, OCPU parts) are not GPU rentals either.

The price list names parts, not shapes: a part maps to its shapes as public clients do (the
table below); a shape's name ends in its GPU count (BM.GPU.H100.8: 8). A part no client maps
(H100T, E4) is rejected with its record, not guessed. Display names drift ("OCI- Compute",
"Compute  - GPU - A10"), so parts are keyed by number; the card is read from the table only while
the part's name still carries the table's token for it (macrogauge's guard against a reassigned
part number), else it stays unknown. One list price for every commercial region (SkyPilot):
region None. Stock: Oracle publishes none. Preemptible capacity (50 % off) depends on the shape
(`allowPreemptible` in the estimator's shapes.json, another source): not offered here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from scrapy.http import Request, Response

from scrapers import parsing, rows
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider
from scrapers.rejects import RejectedOffer
from sizing import gpu_names

PRODUCTS_URL = "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD"
GPU_METRIC = "GPU Per Hour"
GPU_CATEGORIES = ("Compute - GPU", "Compute - GPU - Other")  # not "Compute Cloud@Customer"
LICENCE = "NVIDIA AI Enterprise"


class Part(NamedTuple):
    token: str  # what the part's displayName says of its card, checked before the table is trusted
    card: str  # the card as gpu_names.identify reads it
    memory_gb: float  # per GPU: SkyPilot's GPU_MEMORY_GB (OCI's shape documentation)
    shapes: tuple[str, ...]


# Part number -> shapes: ewyluda/gpu-price-index `sources/oracle.py` @ 1e77fb7 (B112237, B110978,
# B110519, B98415, B109485, B95907, B109479) and a public price script's shape table (B110979,
# B95909, B88517/B88518, B89734, B92740); B112140, B111758 and B112613 by the shape SkyPilot names
# for the card (SHAPE_SPEC_OVERRIDES, its MI355X comment). Cards of the X7/V2/E3 parts from
# SkyPilot's ACCELERATOR_NAME_OVERRIDES (GPU2 P100, GPU3 V100, GPU4 A100 40 GB). The 8-GPU A100
# shapes are HGX (SXM4) boards; the V100s stay form-less.
PARTS = {
    "B98415": Part("H100", "H100 SXM", 80, ("BM.GPU.H100.8",)),
    "B110519": Part("H200", "H200", 141, ("BM.GPU.H200.8",)),
    "B110978": Part("B200", "B200", 180, ("BM.GPU.B200.8",)),
    "B112237": Part("B300", "B300", 262.5, ("BM.GPU.B300.8",)),
    "B110979": Part("GB200", "GB200", 192, ("BM.GPU.GB200.4",)),
    "B112140": Part("GB300", "GB300", 278, ("BM.GPU.GB300.4",)),
    "B109485": Part("MI300X", "MI300X", 192, ("BM.GPU.MI300X.8",)),
    "B111758": Part("MI355X", "MI355X", 288, ("BM.GPU.MI355X.8",)),
    "B109479": Part("L40S", "L40S", 48, ("BM.GPU.L40S.4",)),
    "B112613": Part("RTX PRO 6000", "RTX PRO 6000", 96, ("BM.GPU.RTXPRO.8",)),
    "B95907": Part("A100", "A100 SXM", 80, ("BM.GPU.A100-v2.8",)),
    "B92740": Part("E3", "A100 SXM", 40, ("BM.GPU4.8",)),
    "B95909": Part("A10", "A10", 24, ("VM.GPU.A10.1", "VM.GPU.A10.2", "BM.GPU.A10.4")),
    "B89734": Part("V2", "V100", 16, ("VM.GPU3.1", "VM.GPU3.2", "VM.GPU3.4", "BM.GPU3.8")),
    "B88517": Part("X7", "P100", 16, ("BM.GPU2.2",)),
    "B88518": Part("X7", "P100", 16, ("VM.GPU2.1",)),
}


class OciSpider(PlatformSpider):
    name = "oci"
    sites = ("oracle.com",)
    rows_at = ("items",)
    rows_name = "price-list parts"
    required = ("partNumber", "metricName", "currencyCodeLocalizations")
    gpu_name_fields = ("displayName",)
    kept = ("partNumber", "serviceCategory")
    offer_fields = {
        "price_currency": "USD",
        "price_per": "gpu",
        "billing_period": "hour",
        "pricing_type": "on_demand",
    }

    def first_requests(self) -> Iterator[Request]:
        yield self.request(PRODUCTS_URL, self.parse_rows)

    def payload(self, response: Response) -> Any:
        payload = super().payload(response)
        if isinstance(payload, Mapping) and payload.get("lastUpdated"):
            response.meta["price_list_updated"] = str(payload["lastUpdated"])  # the price book's stamp
        return payload

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem | RejectedOffer]:
        name = str(row.get("displayName") or "")
        if (
            row["metricName"] != GPU_METRIC
            or row.get("serviceCategory") not in GPU_CATEGORIES
            or LICENCE in name
        ):
            return
        part = PARTS.get(str(row["partNumber"]))
        if part is None:
            yield self.reject(response, "part_without_shape", row)
            return
        raw_name, named = self.gpu_of(row)
        still_named = re.search(rf"\b{re.escape(part.token)}\b", name, re.IGNORECASE)
        gpu = gpu_names.identify(part.card, part.memory_gb) if still_named else named
        for shape in part.shapes:
            yield self.offer(
                response,
                gpu,
                offer_id=shape,
                gpu_name_raw=raw_name,
                gpu_count=int(shape.rsplit(".", 1)[1]),
                price_amount=pay_as_you_go(row["currencyCodeLocalizations"]),
                extra=rows.kept(response.meta, ("price_list_updated",)),
            )


def pay_as_you_go(localizations: Any) -> float | None:
    """The USD PAY_AS_YOU_GO value (a JSON number, USD per GPU-hour), or None when there is none."""
    for localization in localizations if isinstance(localizations, list) else ():
        if isinstance(localization, Mapping) and localization.get("currencyCode") == "USD":
            for price in localization.get("prices") or ():
                if isinstance(price, Mapping) and price.get("model") == "PAY_AS_YOU_GO":
                    return parsing.number(price.get("value"))
    return None
