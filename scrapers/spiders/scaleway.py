"""Scaleway: the Instance products API of each zone, its GPU types by the hour in EUR, with a stock state.

Source, per zone (no key: toolshedlabs-hash/gpu-price-feed's and getcomputable/gpu-index's
Scaleway collectors call it anonymously):
- `GET https://api.scaleway.com/instance/v1/zones/<zone>/products/servers/availability?per_page=100&page=N`
  `{"servers": {"<type>": {"availability": "available" | "scarce" | "shortage"}}}`, read anonymously
  by public stock trackers (a stock fetcher "verified against the anonymous Scaleway Instance API
  on 2026-09-17"), then
- `GET https://api.scaleway.com/instance/v1/zones/<zone>/products/servers?per_page=100&page=N`
  `{"servers": {"<type>": {...}}}`, the types and their prices.
Both page as gpu-index reads the second: 100 a page (the API's most), a short page is the last
(the answer has no total; Paris had 134-136 types in 2026, two pages). The zones are the nine the
Instance API's SDK lists (scaleway-sdk-js `instance/v1` LOCALITY; toolshedlabs asks the same nine).
The first zone is asked alone; the others once it has answered (a refusal is met once). A
zone whose products fail is missing and the crawl partial; one whose availability fails is
still priced, its stock unknown.

Per type: `gpu` (count; 0 = a CPU type, no offer), `gpu_info` {`gpu_name` "H100-SXM", "L40S",
`gpu_memory` in bytes per GPU (toolshedlabs: "gpu_memory is PER GPU here", L4-8-24G reports 24 GiB)},
`hourly_price` for the whole instance, and `monthly_price`, which is exactly `hourly_price` x 730
on every GPU row (gpu-index, verified live 2026-08-22): a display figure, not a monthly tier, so
it is kept in `extra`, not offered. A `gpu` below 1 is a slice of one card: offered as that share
(`gpu_frac`), never a card. A `mig_profile` (a MIG slice: gpu-index skips them) names no share
we can state: rejected `fractional_gpu`, kept; none is listed today.

THE UNIT: `hourly_price` is EUR per instance-hour, and the answer says so nowhere. Scaleway's
pricing page heads the column "Price (EUR/hour)" and its figures are the API's (toolshedlabs:
"L4-1-24G is 0.7875 from the API and EUR 0.79 on the page"). `offer_fields` below sets EUR; USD
comes from the warehouse's ECB rates, as for every EUR price.
Stock: "shortage" is sold out (0 GPUs); "available" and "scarce" say there is some, not how much
(unknown); a type the availability does not name is unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from scrapy.http import Request, Response
from twisted.python.failure import Failure

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider
from scrapers.rejects import RejectedOffer
from scrapers.rows import dig, value_at

API = "https://api.scaleway.com/instance/v1/zones"
ZONES = (
    "fr-par-1",
    "fr-par-2",
    "fr-par-3",
    "nl-ams-1",
    "nl-ams-2",
    "nl-ams-3",
    "pl-waw-1",
    "pl-waw-2",
    "pl-waw-3",
)
PER_PAGE = 100  # the API's most per page (gpu-index)
BYTES_PER_GIB = 1024**3
SOLD_OUT = "shortage"


class ScalewaySpider(PlatformSpider):
    name = "scaleway"
    sites = ("scaleway.com",)
    rows_at = ("servers",)
    rows_keyed_by = "commercial_type"
    max_pages = 5  # 500 types a zone; Paris has ~136: more pages than this is a catalog we no longer know
    # The zones are nine constants (ZONES), each asked its availability then its types.
    rows_name = "instance types"
    required = ("gpu", "hourly_price")
    gpu_name_fields = (("gpu_info", "gpu_name"),)
    kept = ("monthly_price", "ncpus", "end_of_service")
    # EUR: the API labels no currency; Scaleway's pricing page reads "Price (EUR/hour)" (module docstring).
    offer_fields = {
        "price_currency": "EUR",
        "price_per": "instance",
        "billing_period": "hour",
        "pricing_type": "on_demand",
    }

    def first_requests(self) -> Iterable[Request]:
        yield self.availability_request(ZONES[0], 1, {})

    # --- the stock states, then the types of each zone ------------------------------------

    def availability_request(self, zone: str, page: int, states: dict[str, Any]) -> Request:
        request = self.request(
            f"{API}/{zone}/products/servers/availability?per_page={PER_PAGE}&page={page}",
            self.parse_availability,
            meta={"zone": zone, "page": page, "states": states},
        )
        return request.replace(errback=self.availability_failed)

    def products_request(self, zone: str, page: int, states: dict[str, Any] | None) -> Request:
        return self.request(
            f"{API}/{zone}/products/servers?per_page={PER_PAGE}&page={page}",
            self.parse_rows,
            meta={"zone": zone, "page": page, "states": states},
        )

    def parse_availability(self, response: Response) -> Iterator[Request]:
        zone, page = response.meta["zone"], response.meta["page"]
        found = dig(self.payload(response), "servers", expect=dict)
        states = {
            **response.meta["states"],
            **{name: value_at(s, "availability") for name, s in found.items()},
        }
        if zone == ZONES[0] and page == 1:
            yield from (self.availability_request(other, 1, {}) for other in ZONES[1:])
        more = self.full_page(response, found, lambda page: self.availability_request(zone, page, states))
        yield from more or [self.products_request(zone, 1, states)]

    def availability_failed(self, failure: Failure) -> Iterator[Request]:
        """Recorded; the zone is still priced, its stock unknown. The first zone's first answer
        failing is the platform's: nothing more is asked."""
        self.on_request_failed(failure)
        meta = failure.request.meta  # type: ignore[attr-defined]
        if (meta["zone"], meta["page"]) == (ZONES[0], 1):
            return
        yield self.products_request(meta["zone"], 1, None)

    def after_rows(self, response: Response, payload: Any, found: Sequence[Any]) -> Iterable[Request]:
        zone, states = response.meta["zone"], response.meta["states"]
        return self.full_page(response, found, lambda page: self.products_request(zone, page, states))

    def full_page(
        self, response: Response, found: Sequence[Any], request_of: Callable[[int], Request]
    ) -> list[Request]:
        """The next page after a full one (the answer has no total), within `max_pages`."""
        if len(found) < PER_PAGE:
            return []
        page = response.meta["page"]
        return list(self.next_page(response, page + 1, lambda text: request_of(int(text)), "page number"))

    # --- the rows ----------------------------------------------------------------------

    def complete_rows(
        self, response: Response, found: Sequence[Any]
    ) -> tuple[list[Mapping[str, Any]], list[RejectedOffer]]:
        """The GPU types' rows, checked; a CPU type (`gpu` 0, no `gpu_info`) is no offer to check.
        A zone that sells only CPU types is fine, an empty answer is not."""
        gpu_types = [
            row for row in found if not (isinstance(row, Mapping) and parsing.number(row.get("gpu")) == 0)
        ]
        if found and not gpu_types:
            return [], []
        return super().complete_rows(response, gpu_types)

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem | RejectedOffer]:
        gpus = parsing.number(row["gpu"])
        share = gpus if gpus is not None and 0 < gpus < 1 else None
        if row.get("mig_profile") is not None or gpus is None or (share is None and gpus != int(gpus)):
            yield self.reject(response, "fractional_gpu", row)  # no share of a card we can state
            return
        memory = parsing.number(value_at(row, ("gpu_info", "gpu_memory")))
        raw_name, gpu = self.gpu_of(row, memory / BYTES_PER_GIB if memory else None)
        zone, states = response.meta["zone"], response.meta["states"]
        state = None if states is None else states.get(row["commercial_type"])
        ram = parsing.number(row.get("ram"))
        yield self.offer(
            response,
            gpu,
            offer_id=f"{zone}/{row['commercial_type']}",
            gpu_name_raw=raw_name,
            gpu_count=1 if share else int(gpus),
            gpu_frac=share,
            price_amount=parsing.number(row["hourly_price"]),
            region=zone,
            available_gpus=0 if state == SOLD_OUT else None,
            extra={
                "availability": state,
                "ram_gib": None if ram is None else round(ram / BYTES_PER_GIB, 1),
                "gpu_manufacturer": value_at(row, ("gpu_info", "gpu_manufacturer")),
            },
        )


def _cpu_type(row: Any) -> bool:
    """A type with `gpu` 0 (and `gpu_info` null): a CPU instance, no GPU offer."""
    return isinstance(row, Mapping) and parsing.number(row.get("gpu")) == 0
