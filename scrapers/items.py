"""The one item type every spider yields; one JSON line per offer in the crawl's feed.

This is the contract between `scrapers/` and `warehouse/`: the loader reads these
fields by name from JSONL, so renaming one is a migration of both sides.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

# The currencies gpuplan prices in (ISO 4217): platforms quote USD, CNY or EUR
# (shared/reference/price-sources.md). The warehouse keeps FX rates for exactly these; an offer in
# any other is rejected. Adding one here (any ECB currency) is all it takes to accept it.
CURRENCIES: tuple[str, ...] = ("USD", "EUR", "CNY")

PricePer = Literal["gpu", "instance"]
BillingPeriod = Literal["hour", "day", "week", "month", "year"]
PricingType = Literal["on_demand", "spot", "monthly_plan", "weekly_plan", "daily_plan", "reserved"]
# What a price billed by each period is, when it is not spot or reserved: an hourly price is on
# demand, a longer period is a plan rented for at least that long (compshare's 按天/按月, the quotes
# file's monthly quotes). A price billed by the year is a reserved term (a 1- or 3-year commitment:
# billing_period "year", min_term_periods 1 or 3; a year is 8760 h, 365 days).
PLAN_OF_PERIOD: dict[BillingPeriod, PricingType] = {
    "hour": "on_demand",
    "day": "daily_plan",
    "week": "weekly_plan",
    "month": "monthly_plan",
    "year": "reserved",
}


@dataclass
class OfferItem:
    """One rentable offer as the platform quoted it.

    Prices stay as quoted (amount, currency, per GPU or per instance, billing
    period); the warehouse derives per-GPU-hour figures with the FX rate of the
    observation date. `available_gpus` is None when the platform says nothing
    about stock: unknown is not zero.

    The last fields say what the platform says about the hardware behind the offer, when it does:
    `gpu_frac` the share of one card a unit gives (a sliced GPU, 0 < x < 1; None = whole cards:
    such an offer is stored and shown, never planned as a card, never a price reference, and its
    stock never counts as cards); `machine_id` the physical machine (offers sharing it share its
    GPUs) and `gpu_ids` which of its GPUs the offer rents (Vast's `machine_id`, `gpu_ids`); the
    warehouse counts each machine's free GPUs once (docs in README, "How stock is counted").
    `pool_id` names a shared stock count the offer is one listing of: offers that are sizes, tiers
    or regions drawn off one count the platform reports (RunPod's 1x/2x/4x/8x pods of one GPU type
    and cloud, each "in stock" meaning at least one pod of its size) share it, and the warehouse
    counts the pool once, by its largest listing.
    `catalog` names a hosted catalog the offer came from (e.g. "skypilot-catalog/v8"; None for
    the platform's own API or page), `catalog_date` its file's date (YYYY-MM-DD) when known.
    """

    platform: str  # spider slug, e.g. "vastai"
    offer_id: str  # the platform's own id, or a stable composite
    gpu_name_raw: str  # exactly as the platform wrote it
    gpu_count: int  # GPUs in one rentable unit
    # As quoted, in `price_currency` per `billing_period`. None only on the way from a spider to the
    # item checks, which reject it (`price_missing`): a feed never holds one.
    price_amount: float | None
    price_currency: str  # ISO 4217, one of CURRENCIES
    price_per: PricePer
    billing_period: BillingPeriod
    pricing_type: PricingType
    observed_at: str  # ISO-8601 UTC, e.g. "2026-11-30T06:00:00Z"
    source_url: str
    gpu_model: str | None = None  # canonical name from sizing.gpu_names; None = unknown, kept
    gpu_memory_gb: float | None = None
    gpu_form: str | None = None  # "SXM" | "PCIe" | "NVL" | None
    region: str | None = None
    min_term_periods: int = 1  # minimum number of billing periods one must rent
    available_gpus: int | None = None
    extra: dict = field(default_factory=dict)  # platform fields worth keeping (JSON object)
    gpu_frac: float | None = None  # share of ONE card per unit (0 < x < 1); None = whole cards
    machine_id: str | None = None  # the physical machine, when the platform says
    gpu_ids: list[int] | None = None  # which of the machine's GPUs, when the platform says
    catalog: str | None = None  # hosted catalog the offer came from; None = the platform itself
    catalog_date: str | None = None  # ISO date (YYYY-MM-DD) of that catalog file, when known
    pool_id: str | None = None  # the shared stock count the offer is one listing of, when it is


def feed_line(item: OfferItem | Mapping[str, Any]) -> str:
    """One item as a line of a crawl feed (JSONL): a JSON object of its fields, as the feed exporter
    writes the spiders' items. A number that is no number (NaN, inf: a reader's missing value) is
    written as null, as JSON has none; the loader then reads it as absent."""
    fields = vars(item) if isinstance(item, OfferItem) else dict(item)
    try:
        return json.dumps(fields, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError:
        return json.dumps(_finite(fields), ensure_ascii=False, allow_nan=False) + "\n"


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_finite(inner) for inner in value]
    return value
