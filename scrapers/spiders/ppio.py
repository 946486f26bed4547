"""派欧云 PPIO (ppio.com / ppinfra.com): GPU instance products, per GPU, on demand, at spot and by
monthly subscription (`monthlyPrice`).

Needs `PPIO_API_KEY`, sent as `Authorization: Bearer <key>`; without it the crawl is skipped.
The request is SkyPilot's PPIO catalog fetcher's (skypilot-org/skypilot
sky/catalog/data_fetchers/fetch_ppio.py @ a96a5312f4cdd05f337ba7178914fbb092f75fbd): `GET
https://api.ppinfra.com/gpu-instance/openapi/v1/products?available=true`, asked twice: as it is (the
on-demand listing, PPIO's default `billingMethod` per ppio.cn/docs/gpus/reference-list-gpu-products),
read for the hourly and spot prices, and with `billingMethod=monthly` (that doc: 包年包月), read for
the subscriptions: a product sold only by the month may be missing from the default listing, and
each answer gives each price once. The answer is `{"data": [product]}` (the same API as Novita AI,
PPIO's international brand: php-workx/novita-sdk-python src/novita/generated/models.py @ 17d32e4c,
GPUProduct):
- `price` and `spotPrice`: per GPU per hour in 1/100000 of the currency, integer text
  (`parsing.HUNDRED_THOUSANDTHS`; SkyPilot: `float(instance['price']) / 100000`); spot only where
  `billingMethods` names it and `parsing.spot_price` says it is one.
- `monthlyPrice[] {price, month}`: a subscription of `month` months, same unit. Whether `price` is
  the month's or the whole term's is not known; it is read as the month's (the SDK calls it the
  "unit price"), the reading that can only make a long term look dearer, never cheaper than it is.
  A term of 12 months or more is a reservation, shorter ones monthly plans.
- one offer per `regions[]` entry (SkyPilot writes one row per region), a product being one GPU
  (SkyPilot's `gpu_count = 1`; instances take 1-8 at the same per-GPU price).
- stock: `availableDeploy` false or `inventoryState` none is 0; otherwise unknown, the state
  (low | normal | high) kept. SkyPilot drops promotional (`activityProduct`) and unbuyable
  (`canBuy` false) products: they are refused here, visibly.
- the card: `name` states model and memory ("RTX 4090 24GB", "A100 SXM 80GB"); `memoryPerGpu` is the
  host's RAM per GPU, not the card's.
Currency: CNY, assumed for the China site (the answer names none; Novita's api.novita.ai is USD).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider, Token
from scrapers.rejects import RejectedOffer

PRODUCTS_URL = "https://api.ppinfra.com/gpu-instance/openapi/v1/products?available=true"
MONTHLY_URL = PRODUCTS_URL + "&billingMethod=monthly"
RESERVED_MONTHS = 12  # a subscription this long is a reservation, not a monthly plan
NO_STOCK = "none"  # inventoryState


class PpioSpider(PlatformSpider):
    name = "ppio"
    sites = ("ppinfra.com",)
    token = Token(
        env="PPIO_API_KEY",
        required=True,
        description="PPIO (派欧云) API key, from the console's key management (Bearer key)",
    )
    rows_at = ("data",)
    rows_name = "GPU products"
    required = ("id", "name")  # a product sold only by the month may carry no hourly `price`
    gpu_name_fields = ("name",)
    kept = ("cpuPerGpu", "memoryPerGpu", "diskPerGpu", "billingMethods", "inventoryState")
    offer_fields = {"price_currency": "CNY", "price_per": "gpu"}

    def first_requests(self) -> Iterable[Request]:
        self._headers = {
            "Authorization": f"Bearer {self.token_value() or ''}",
            "Content-Type": "application/json",
        }
        yield self.request(PRODUCTS_URL, self.parse_rows, headers=self._headers)

    def after_rows(self, response: Response, payload: Any, found: Sequence[Any]) -> Iterable[Request]:
        """The subscriptions' listing, once the default one has answered (a refused key fails there)."""
        if response.meta["source_url"] == PRODUCTS_URL:
            yield self.request(MONTHLY_URL, self.parse_rows, headers=self._headers)

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem | RejectedOffer]:
        if row.get("activityProduct"):
            yield self.reject(response, "promotional_product", row)
            return
        if row.get("canBuy") is False:
            yield self.reject(response, "not_buyable", row)
            return
        regions = [str(r) for r in row.get("regions") or () if str(r).strip()] or [""]
        raw_name, gpu = self.gpu_of(row, parsing.memory_in_name(str(row["name"])))
        sold_out = row.get("availableDeploy") is False or row.get("inventoryState") == NO_STOCK
        hourly = response.meta["source_url"] == PRODUCTS_URL  # else the subscriptions' listing
        for region in regions:
            common = {
                "gpu_name_raw": raw_name,
                "gpu_count": 1,
                "region": region or None,
                "available_gpus": 0 if sold_out else None,
            }
            place = f"{row['id']}@{region}"
            if hourly:
                spot = row.get("spotPrice") if "spot" in (row.get("billingMethods") or ()) else None
                yield from self.on_demand_and_spot(
                    response,
                    gpu,
                    on_demand=parsing.from_minor_units(row.get("price"), parsing.HUNDRED_THOUSANDTHS),
                    spot=parsing.from_minor_units(spot, parsing.HUNDRED_THOUSANDTHS),
                    offer_id=place,
                    billing_period="hour",
                    **common,
                )
            else:
                yield from self.monthly_offers(response, row, gpu, place, common)

    def monthly_offers(
        self, response: Response, row: Mapping[str, Any], gpu: Any, place: str, common: Mapping[str, Any]
    ) -> Iterator[OfferItem]:
        for entry in subscriptions(row.get("monthlyPrice")):
            months = int(entry["month"])
            yield self.offer(
                response,
                gpu,
                offer_id=f"{place}/month-{months}",
                price_amount=parsing.from_minor_units(entry["price"], parsing.HUNDRED_THOUSANDTHS),
                billing_period="month",
                pricing_type="reserved" if months >= RESERVED_MONTHS else "monthly_plan",
                min_term_periods=months,
                **common,
            )


def subscriptions(value: Any) -> list[Mapping[str, Any]]:
    """The `monthlyPrice` entries that name a whole number of months and a price."""
    entries: Sequence[Any] = value if isinstance(value, list) else ()
    found = []
    for entry in entries:
        months = parsing.number(entry.get("month")) if isinstance(entry, Mapping) else None
        if months is not None and months >= 1 and months == int(months) and entry.get("price") is not None:
            found.append(entry)
    return found
