"""DataCrunch (now Verda): the public instance-types list, on-demand and spot prices per instance.

Source: `GET https://api.datacrunch.io/v1/instance-types?currency=usd` (no key;
toolshedlabs' methodology, the DataCrunch Python SDK's InstanceType fields). A
JSON list; per type `price_per_hour` and `spot_price` (USD per instance per
hour, as strings), `gpu.number_of_gpus`, and `gpu_memory.size_in_gigabytes`
for the whole instance. A `spot_price` of 0 or none means no spot quote (our
reading: no instance can be rented for free) and yields no spot offer. The
list says nothing about stock or location.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider
from scrapers.rejects import RejectedOffer
from sizing import gpu_names

INSTANCE_TYPES_URL = "https://api.datacrunch.io/v1/instance-types?currency=usd"
REQUIRED = ("instance_type", "price_per_hour", "gpu")
KEPT = ("id", "description", "dynamic_price", "max_dynamic_price", "p2p", "deploy_warning")


class DatacrunchSpider(PlatformSpider):
    name = "datacrunch"

    def first_requests(self) -> Iterable[Request]:
        yield self.request(
            INSTANCE_TYPES_URL, self.parse_instance_types, headers={"Accept": "application/json"}
        )

    def parse_instance_types(self, response: Response) -> Iterator[OfferItem | RejectedOffer]:
        payload = parsing.json_body(response)
        # Success is a list; an error is an object {"code": ..., "message": ...}.
        parsing.check_code(payload, ok_codes=(), message_keys=("message", "msg"))
        parsing.check_error_envelope(payload)
        rows = parsing.dig(payload, expect=list)
        complete, rejected = self.complete_rows(response, rows, REQUIRED, "instance types")
        yield from rejected
        for row in complete:
            yield from self.offers_of(response, row)

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem | RejectedOffer]:
        gpu_spec = row["gpu"] if isinstance(row["gpu"], Mapping) else {}
        gpu_count = int(parsing.number(gpu_spec.get("number_of_gpus")) or 0)
        if gpu_count == 0:
            return  # a CPU instance: not a GPU offer
        memory_field = row.get("gpu_memory")
        memory = memory_field if isinstance(memory_field, Mapping) else {}
        total_gb = parsing.number(memory.get("size_in_gigabytes"))
        names = [str(row.get(key) or "") for key in ("name", "model")] + [
            str(gpu_spec.get("description") or "")
        ]
        gpu = gpu_names.identify_first(names, total_gb / gpu_count if total_gb else None)
        shared = {
            "offer_id": str(row["instance_type"]),
            "gpu_name_raw": next(name for name in [*names, str(row["instance_type"])] if name),
            "gpu_count": gpu_count,
            "price_currency": str(row.get("currency") or "usd").upper(),
            "price_per": "instance",
            "billing_period": "hour",
            "extra": parsing.kept(row, KEPT),
        }
        on_demand = parsing.number(row["price_per_hour"])
        if on_demand is None:
            yield self.reject(response, "price_missing", row)
        else:
            yield self.offer(response, gpu, price_amount=on_demand, pricing_type="on_demand", **shared)
        spot = parsing.number(row.get("spot_price"))
        if spot:
            yield self.offer(response, gpu, price_amount=spot, pricing_type="spot", **shared)
