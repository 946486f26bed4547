"""The one item type every spider yields; one JSON line per offer in the crawl's feed.

This is the contract between `scrapers/` and `warehouse/`: the loader reads these
fields by name from JSONL, so renaming one is a migration of both sides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# The currencies gpuplan prices in (ISO 4217): platforms quote USD, CNY or EUR
# (shared/reference/price-sources.md). The warehouse keeps FX rates for exactly these; an offer in
# any other is rejected. Adding one here (any ECB currency) is all it takes to accept it.
CURRENCIES: tuple[str, ...] = ("USD", "EUR", "CNY")

PricePer = Literal["gpu", "instance"]
BillingPeriod = Literal["hour", "day", "week", "month"]
PricingType = Literal["on_demand", "spot", "monthly_plan", "weekly_plan", "daily_plan", "reserved"]
# What a price billed by each period is, when it is not spot or reserved: an hourly price is on
# demand, a longer period is a plan rented for at least that long (compshare's 按天/按月, the quotes
# file's monthly quotes).
PLAN_OF_PERIOD: dict[BillingPeriod, PricingType] = {
    "hour": "on_demand",
    "day": "daily_plan",
    "week": "weekly_plan",
    "month": "monthly_plan",
}


@dataclass
class OfferItem:
    """One rentable offer as the platform quoted it.

    Prices stay as quoted (amount, currency, per GPU or per instance, billing
    period); the warehouse derives per-GPU-hour figures with the FX rate of the
    observation date. `available_gpus` is None when the platform says nothing
    about stock: unknown is not zero.
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
