"""AutoDL (autodl.com): the GPU market a logged-in user sees, with each region's stock.

Needs `AUTODL_TOKEN`: the JWT the web app keeps in `localStorage.token` after login, sent
as `Authorization: <token>` (no "Bearer"; cookies alone are not enough). Without it the
crawl is skipped. The token expires: AutoDL then still answers HTTP 200, with code
"AuthorizeFailed" / msg "登录超时", and the crawl fails saying the token was refused.

Sources (price-sources.md §4.1), envelope `{"code": "Success" | "OK" | <error>, "msg", "data"}`:
- market list `POST https://www.autodl.com/api/v1/user/machine/list` with the body the web
  UI sends (pay-as-you-go, machines with at least one idle GPU, every region and GPU type),
  pages `page_index` 1..`data.max_page`. One offer per machine, rented by the card:
  `payg_price` in 厘 (1/1000 CNY) per GPU-hour, `region_name` ("西北B区") as region.
  Stock: the GPUs one order can take now, `min(gpu_idle_num, gpu_order_num)` (see `orderable`).
  GPU names are AutoDL's own: "A800-80GB-NVLink" (NVLink: the SXM board), "A100-80G" (the form
  not stated: kept unknown, the catalog has no form-less A100), "H20-NVLink" (96 or 141 GB not
  stated: unknown), "V100-32GB", "RTX PRO 6000", and the volume cards "vGPU-32GB" / "vGPU-48GB"
  (no catalog card: unknown, with the memory the name states).
  CPU-only machines (`chip_corp` "cpu") are not GPU offers and are left out.
  Longer periods (包日, 包周, 包月): AutoDL sells them, but no public client, document or
  recording shows how the market list names their prices (every client asks `charge_type`
  "payg" and reads `payg_price`). A machine row is read for `daily_price`, `weekly_price` and
  `monthly_price` (`PERIOD_PRICES`, guessed after `payg_price`; 厘 per GPU and period assumed
  likewise) and each one present gives a plan offer (`<machine_id>/day` ..., the same `machine_id`:
  one machine's free GPUs, counted once however many ways it is paid for); absent, as in every
  answer seen so far, nothing is missed and nothing fails. UNVERIFIED until a token-holding
  crawl records a row that has them.
- region stock `POST https://www.autodl.com/api/v1/machine/region/gpu_type` with
  `{"region_sign_list": [sign]}` -> `data: [{"RTX 4090": {"idle_gpu_num", "total_gpu_num"}}, ...]`,
  asked once per region sign the list names. Each offer carries its region's idle and total
  GPUs of its type in `extra` (`region_idle_gpus`, `region_total_gpus`: how much market stands
  behind the machine). An offer waits for its region's answer; when that answer fails, the
  failure is recorded and the offer goes out without the figures.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scrapy.http import Request, Response
from twisted.python.failure import Failure

from scrapers import parsing
from scrapers.items import BillingPeriod, OfferItem, PricingType
from scrapers.platform import PlatformSpider, Token
from scrapers.rejects import RejectedOffer
from scrapers.rows import dig, kept

LIST_URL = "https://www.autodl.com/api/v1/user/machine/list"
REGION_STOCK_URL = "https://www.autodl.com/api/v1/machine/region/gpu_type"
OK_CODES = ("Success", "OK")
AUTH_FAILED_CODE = "AuthorizeFailed"
# The web UI asks for 10; the loop follows `max_page`, so a smaller server-side cap loses nothing.
PAGE_SIZE = 100
BYTES_PER_GIB = 1024**3  # `mem_per_gpu` is in bytes
# Price fields a machine row may carry for the longer ways of paying (UNVERIFIED names, see the
# docstring): field -> (offer id suffix, billing period, pricing type).
PERIOD_PRICES: dict[str, tuple[str, BillingPeriod, PricingType]] = {
    "daily_price": ("/day", "day", "daily_plan"),
    "weekly_price": ("/week", "week", "weekly_plan"),
    "monthly_price": ("/month", "month", "monthly_plan"),
}


def list_body(page: int) -> dict[str, Any]:
    """The market query the web UI sends (price-sources.md §4.1), unfiltered, for one page."""
    return {
        "charge_type": "payg",
        "region_sign": "",
        "region_sign_list": [],
        "gpu_type_name": [],
        "machine_tag_name": [],
        "gpu_idle_num": 1,
        "mount_net_disk": False,
        "instance_disk_size_order": "",
        "date_range": "",
        "date_from": "",
        "date_to": "",
        "page_index": page,
        "page_size": PAGE_SIZE,
        "pay_price_order": "",
        "gpu_idle_type": "",
        "default_order": True,
    }


def token_refused(payload: Any) -> bool:
    """AutoDL's answer to a missing or expired token (HTTP 200): AuthorizeFailed / 登录超时."""
    if not isinstance(payload, Mapping):
        return False
    return payload.get("code") == AUTH_FAILED_CODE or "登录" in str(payload.get("msg") or "")


@dataclass
class _RegionStock:
    """One region sign's stock per GPU name, and the offers waiting for it (figures None = asked)."""

    waiting: list[OfferItem] = field(default_factory=list)
    figures: dict[str, Mapping[str, Any]] | None = None


class AutodlSpider(PlatformSpider):
    name = "autodl"
    sites = ("autodl.com",)
    token = Token(
        env="AUTODL_TOKEN",
        required=True,
        description="AutoDL login token: after logging in to autodl.com, the browser's localStorage.token",
    )
    rows_at = ("data", "list")
    rows_name = "machines"
    max_pages = 20  # of 100 machines: the recording's market takes 2 (`max_page` 2)
    required = ("machine_id", "gpu_name", "payg_price")
    gpu_name_fields = ("gpu_name",)
    envelope = parsing.CodeEnvelope(ok=OK_CODES)
    offer_fields = {"price_currency": "CNY", "price_per": "gpu", "billing_period": "hour"}

    def first_requests(self) -> Iterable[Request]:
        self._headers = {"Authorization": self.token_value() or ""}
        self._regions: dict[str, _RegionStock] = {}
        yield self.page_request(1)

    def page_request(self, page: int) -> Request:
        return self.request(LIST_URL, self.parse_rows, json_body=list_body(page), headers=self._headers)

    def check_payload(self, payload: Any) -> None:
        """A refused token raises ErrorEnvelope saying so, then the envelope's code is checked."""
        if token_refused(payload):
            raise parsing.ErrorEnvelope(
                f"AutoDL refused AUTODL_TOKEN ({payload.get('code')}: {payload.get('msg') or 'no message'}): "
                "it has expired or is wrong; log in to autodl.com again and copy localStorage.token"
            )
        super().check_payload(payload)

    # --- the market list --------------------------------------------------------

    def after_rows(self, response: Response, payload: Any, found: Sequence[Any]) -> Iterable[Request]:
        return self.later_pages(response, dig(payload, "data", "max_page", expect=int))

    def offers_of(
        self, response: Response, row: Mapping[str, Any]
    ) -> Iterator[OfferItem | RejectedOffer | Request]:
        item = self.machine_offer(response, row)
        for each in [item, *period_offers(item, row)] if isinstance(item, OfferItem) else [item]:
            if isinstance(each, OfferItem) and each.extra.get("region_sign"):
                yield from self._after_region_stock(each)
            elif each is not None:
                yield each

    def machine_offer(self, response: Response, row: Mapping[str, Any]) -> OfferItem | RejectedOffer | None:
        if str(row.get("chip_corp") or "").lower() == "cpu":
            return None  # a CPU-only machine: no GPU to offer
        if row.get("payg") is False:
            return self.reject(response, "not_pay_as_you_go", row)
        try:
            available = orderable(row.get("gpu_idle_num"), row.get("gpu_order_num"))
        except parsing.LayoutChanged:
            return self.reject(response, "stock_invalid", row)
        ram_bytes = parsing.number(row.get("mem_per_gpu"))
        extra = {
            "machine_alias": row.get("machine_alias"),
            "region_sign": row.get("region_sign"),
            "gpu_number": row.get("gpu_number"),
            "gpu_order_num": row.get("gpu_order_num"),
            "cpu_per_gpu": row.get("cpu_per_gpu"),
            "ram_per_gpu_gib": round(ram_bytes / BYTES_PER_GIB, 1) if ram_bytes else None,
            "highest_cuda_version": row.get("highest_cuda_version"),
        }
        raw_name, gpu = self.gpu_of(row, parsing.memory_in_name(str(row["gpu_name"])))
        return self.offer(
            response,
            gpu,
            offer_id=str(row["machine_id"]),
            machine_id=str(row["machine_id"]),
            gpu_name_raw=raw_name,
            gpu_count=1,
            price_amount=parsing.from_minor_units(row["payg_price"], parsing.LI),
            pricing_type="on_demand",
            region=str(row.get("region_name") or "").strip() or None,
            available_gpus=available,
            extra=kept(extra),
        )

    # --- region stock -------------------------------------------------------------

    def _after_region_stock(self, offer: OfferItem) -> Iterator[OfferItem | Request]:
        sign = str(offer.extra["region_sign"])
        region = self._regions.get(sign)
        if region is None:
            self._regions[sign] = _RegionStock(waiting=[offer])
            request = self.request(
                REGION_STOCK_URL,
                self.parse_region_stock,
                json_body={"region_sign_list": [sign]},
                headers=self._headers,
                meta={"region_sign": sign},
            )
            yield request.replace(errback=self.region_stock_failed)
        elif region.figures is None:
            region.waiting.append(offer)
        else:
            yield _with_region_figures(offer, region.figures)

    def parse_region_stock(self, response: Response) -> list[OfferItem]:
        try:
            figures = _figures_by_gpu(dig(self.payload(response), "data"))
        except parsing.CrawlError as error:
            self.record_failure(f"{error} (from {self.source_url(response)})")
            figures = {}
        return self._release(response.meta["region_sign"], figures)

    def region_stock_failed(self, failure: Failure) -> list[OfferItem]:
        self.on_request_failed(failure)
        request: Request = failure.request  # type: ignore[attr-defined]  # set by Scrapy on errbacks
        return self._release(request.meta["region_sign"], {})

    def _release(self, sign: str, figures: dict[str, Mapping[str, Any]]) -> list[OfferItem]:
        region = self._regions[sign]
        region.figures = figures
        waiting, region.waiting = region.waiting, []
        return [_with_region_figures(offer, figures) for offer in waiting]


def period_offers(hourly: OfferItem, row: Mapping[str, Any]) -> list[OfferItem]:
    """The plan offers of a machine whose row prices a longer period (`PERIOD_PRICES`): the hourly
    offer's copy with that price, period and id. None present (every row seen so far): none."""
    offers = []
    for field_name, (suffix, period, pricing) in PERIOD_PRICES.items():
        if row.get(field_name) is None:
            continue
        offers.append(
            dataclasses.replace(
                hourly,
                offer_id=f"{hourly.offer_id}{suffix}",
                price_amount=parsing.from_minor_units(row[field_name], parsing.LI),
                billing_period=period,
                pricing_type=pricing,
                extra=dict(hourly.extra),
            )
        )
    return offers


def orderable(idle: Any, order_num: Any) -> int | None:
    """GPUs one can rent on a machine now: its idle GPUs, as far as one order may take them.

    The public clients read `gpu_order_num` two ways: mfznttkx/autodl-gpuhunter as the most GPUs
    one order can take (`gpu_order_num >= wanted`; its example listing shows 0 for a machine that
    takes no orders), Bit0r/crawlers as an order granularity (`wanted % gpu_order_num == 0`). We
    read the first: a listed machine with 0 cannot be a granularity, and as a ceiling the stock
    errs low (a granularity of 1 on a machine with 5 idle GPUs would read as 1 available).
    """
    free = parsing.stock_from_count(idle)
    ceiling = parsing.stock_from_count(order_num)
    if free is None or ceiling is None:
        return free
    return min(free, ceiling)


def _figures_by_gpu(entries: list[Any]) -> dict[str, Mapping[str, Any]]:
    """`[{"RTX 4090": {"idle_gpu_num": 3, "total_gpu_num": 2686}}, ...]` as one dict by GPU name."""
    figures: dict[str, Mapping[str, Any]] = {}
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise parsing.LayoutChanged(
                f"region stock entries are single-key objects, got {type(entry).__name__}"
            )
        figures.update({str(name): counts for name, counts in entry.items() if isinstance(counts, Mapping)})
    return figures


def _with_region_figures(offer: OfferItem, figures: Mapping[str, Mapping[str, Any]]) -> OfferItem:
    counts = figures.get(offer.gpu_name_raw)
    if counts is not None:
        offer.extra["region_idle_gpus"] = counts.get("idle_gpu_num")
        offer.extra["region_total_gpus"] = counts.get("total_gpu_num")
    return offer
