"""The one item pipeline: checks each offer, turns implausible ones into rejected records, counts.

Rejecting here (not in each spider) keeps one rule for every platform: a spider
passes on what the platform said, this decides whether it is a usable quote.
The warehouse loader checks again on load; this stage exists so a crawl never
crashes on a bad quote and the summary can say how many were rejected and why.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.rejects import RejectedOffer

STAT_OFFERS = "gpuplan/offers"
STAT_REJECTED = "gpuplan/rejected"
STAT_REJECTED_BY_REASON = "gpuplan/rejected/"  # + reason code
STAT_STOCK_KNOWN = "gpuplan/stock_known"
STAT_STOCK_UNKNOWN = "gpuplan/stock_unknown"
# Raw names that mapped to no canonical model -> how many offers carried each, most first. Every
# name is kept: a real Vast answer holds about fifty, so a bounded list would fill at once and
# hide which names matter; the counts say which card to add to the catalog first.
STAT_UNKNOWN_GPUS = "gpuplan/unknown_gpus"


def offer_problem(offer: OfferItem) -> str | None:
    """Why an offer is unusable (reason code), or None."""
    if offer.gpu_count < 1:
        return "gpu_count_not_positive"
    if offer.available_gpus is not None and offer.available_gpus < 0:
        return "stock_negative"
    return parsing.price_problem(
        offer.price_amount, offer.price_currency, offer.price_per, offer.gpu_count, offer.billing_period
    )


class OfferChecks:
    """Counts are kept here and written to the crawl stats when the spider closes: a Vast
    answer has ~20,000 items, and Scrapy's stats calls cost more than the checks."""

    def __init__(self, crawler: Crawler) -> None:
        self.stats = crawler.stats
        self.counts: Counter[str] = Counter()
        self.unknown_names: Counter[str] = Counter()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> OfferChecks:
        return cls(crawler)

    def process_item(self, item: Any) -> OfferItem | RejectedOffer:
        if isinstance(item, OfferItem):
            problem = offer_problem(item)
            if problem is None:
                self._count_offer(item)
                return item
            item = RejectedOffer.of_offer(item, problem)
        if isinstance(item, RejectedOffer):
            self.counts[STAT_REJECTED] += 1
            self.counts[STAT_REJECTED_BY_REASON + item.reason] += 1
            return item
        raise DropItem(f"spiders yield OfferItem or RejectedOffer, not {type(item).__name__}")

    def close_spider(self) -> None:
        for key, count in self.counts.items():
            self.stats.inc_value(key, count)
        if self.unknown_names:
            self.stats.set_value(STAT_UNKNOWN_GPUS, dict(self.unknown_names.most_common()))

    def _count_offer(self, offer: OfferItem) -> None:
        self.counts[STAT_OFFERS] += 1
        self.counts[STAT_STOCK_UNKNOWN if offer.available_gpus is None else STAT_STOCK_KNOWN] += 1
        if offer.gpu_model is None:
            self.unknown_names[offer.gpu_name_raw] += 1
