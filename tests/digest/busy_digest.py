"""A busy day's Digest, built by hand (SYNTHETIC values): every section of the mail has content.

Platform strings include a hostile one, to prove escaping; 矩池云 and 恒源云 prove wide-character
alignment. Shared by the render, export and catalogue tests.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

from config.watches_file import JobWatch, PriceWatch, StockWatch
from digest.changes import ChangedPlan, PlanSide, Reason
from digest.content import (
    CheckWarning,
    CrawlFailure,
    Digest,
    ExcludedOffer,
    PlanLine,
    PriceMove,
    StockChange,
)
from digest.watches import WatchReading, WatchResult

DAY = date(2026, 12, 1)
PREVIOUS = DAY - timedelta(days=1)
HOSTILE = '<script>alert("x")</script>'
CNY_PER_USD = 7.2


def plan(model, method, ranking, platform, gpu_model, gpu_count, usd, **more) -> PlanLine:
    fields = dict(
        model=model,
        method=method,
        ranking=ranking,
        status="ok",
        platform=platform,
        gpu_model=gpu_model,
        gpu_count=gpu_count,
        pricing_type="on_demand",
        stock_known=True,
        rent_usd_per_month=usd,
        rent_cny_per_month=usd * CNY_PER_USD,
        commitment_hours=730,
        commitment_months=None,
        commitment_usd=usd,
        commitment_cny=usd * CNY_PER_USD,
        cost_usd_per_billion_tokens=usd / 100,
        cost_cny_per_billion_tokens=usd / 100 * CNY_PER_USD,
        job_tokens=1e9,
        total_usd=usd / 10,
        total_cny=usd / 10 * CNY_PER_USD,
    )
    return PlanLine(**{**fields, **more})


def side(platform, gpu_model, gpu_count, usd_per_gpu_hour, measure_usd, billing="hour") -> PlanSide:
    return PlanSide(
        ok=True,
        platform=platform,
        offer_id=f"synthetic-{platform}",
        pricing_type="on_demand",
        billing_period=billing,
        gpu_model=gpu_model,
        gpu_count=gpu_count,
        usd_per_gpu_hour=usd_per_gpu_hour,
        cny_per_gpu_hour=usd_per_gpu_hour * CNY_PER_USD,
        measure_usd=measure_usd,
        measure_cny=measure_usd * CNY_PER_USD,
    )


NO_PLAN = PlanSide(False, None, None, None, None, None, None, None, None, None, None)

JOB_CHANGE = ChangedPlan(
    subject="job",
    job="qwen-sft",
    model="qwen2.5-14b",
    method="lora",
    ranking="lowest_total",
    measure="total_usd",
    change_types=("new_platform", "price_down"),
    previous_date=PREVIOUS,
    old=side("autodl", "RTX 4090 24GB", 4, 0.30, 620.0),
    new=side("矩池云", "RTX 4090 24GB", 4, 0.25, 480.0, billing="day"),
    pct_change=-22.58,
    reasons=(
        Reason("new_offer", "矩池云", "RTX 4090 24GB", 0.25, 1.8),
        Reason("old_gone", "autodl", "RTX 4090 24GB"),
    ),
)
RENT_CHANGE = ChangedPlan(
    subject="plan",
    job=None,
    model="7B",
    method="full",
    ranking="lowest_rent",
    measure="commitment_usd",
    change_types=("new_gpu", "new_platform", "price_down"),
    previous_date=PREVIOUS,
    old=side("thunder", "A100 SXM 80GB", 2, 1.0, 1460.0),
    new=side(HOSTILE, "A100 PCIe 80GB", 2, 0.41, 598.6),
    pct_change=-59.0,
    reasons=(
        Reason("new_offer", HOSTILE, "A100 PCIe 80GB", 0.41, 0.41 * CNY_PER_USD),
        Reason("old_rose", "thunder", "A100 SXM 80GB", 1.12, 1.12 * CNY_PER_USD, 12.0),
    ),
)
RUN_CHANGE = ChangedPlan(
    subject="plan",
    job=None,
    model="7B",
    method="full",
    ranking="lowest_run_total",
    measure="total_usd",
    change_types=("price_up",),
    previous_date=PREVIOUS,
    old=side("lambda", "H100 SXM 80GB", 8, 2.0, 300.0),
    new=side("lambda", "H100 SXM 80GB", 8, 1.7, 255.0),
    pct_change=-15.0,
    reasons=(Reason("price_fell", "lambda", "H100 SXM 80GB", 1.7, 1.7 * CNY_PER_USD, -15.0),),
)
GONE_CHANGE = ChangedPlan(
    subject="plan",
    job=None,
    model="70B",
    method="qlora",
    ranking="lowest_rent",
    measure="commitment_usd",
    change_types=("no_longer_fits", "out_of_stock"),
    previous_date=PREVIOUS,
    old=side("lambda", "H100 SXM 80GB", 8, 2.0, 11680.0),
    new=NO_PLAN,
    pct_change=None,
    reasons=(Reason("none_fits"), Reason("old_short", "lambda", "H100 SXM 80GB", gpus=2)),
)

PRICE_WATCH = PriceWatch(2, "H100", "H100 SXM 80GB", 2.0, "USD")
WATCHES = (
    WatchResult(PRICE_WATCH, WatchReading(1.7, "lambda", "H100 SXM 80GB"), WatchReading(2.0, "lambda")),
    WatchResult(
        StockWatch(5, "H200", "H200 SXM 141GB", 8, ("runpod",)),
        WatchReading(16, "runpod", "H200 SXM 141GB"),
        WatchReading(0, "runpod"),
    ),
    WatchResult(
        JobWatch(9, "qwen-sft", 500.0),
        WatchReading(480.0, "矩池云", "RTX 4090 24GB", 4),
        WatchReading(620.0, "autodl", "RTX 4090 24GB", 4),
    ),
    # holds today and held yesterday: not news, not in the mail
    WatchResult(
        PriceWatch(12, "4090", "RTX 4090 24GB", 0.5, "USD"),
        WatchReading(0.25, "矩池云"),
        WatchReading(0.30, "autodl"),
    ),
)

BUSY = Digest(
    digest_date=DAY,
    previous_date=PREVIOUS,
    price_move_pct=10.0,
    plans=(
        plan("7B", "full", "lowest_rent", HOSTILE, "A100 PCIe 80GB", 2, 598.6),
        plan("7B", "full", "lowest_run_total", "lambda", "H100 SXM 80GB", 8, 9928.0),
        plan(
            "70B",
            "full",
            "lowest_rent",
            "lambda",
            "H100 SXM 80GB",
            16,
            41000.0,
            commitment_hours=2190,
            commitment_months=3.0,
            commitment_usd=123000.0,
            commitment_cny=885600.0,
        ),
        plan(
            "13B",
            "lora",
            "lowest_rent",
            "矩池云",
            "RTX 4090 24GB",
            2,
            450.0,
            stock_known=False,
            pricing_type="monthly_plan",
        ),
        replace(
            plan("70B", "qlora", "lowest_rent", None, None, None, 0.0),
            status="no_offer_fits",
            rent_usd_per_month=None,
        ),
    ),
    plan_changes=(JOB_CHANGE, RENT_CHANGE, RUN_CHANGE, GONE_CHANGE),
    stock_changes=(StockChange("恒源云", "A100 80GB", 8, 0), StockChange("autodl", "RTX 4090 24GB", 0, 16)),
    price_moves=(PriceMove("H100 SXM 80GB", 2.0, 1.5, -25.0, "vastai", "矩池云", 14.4, 10.8),),
    failed_crawls=(CrawlFailure("gpushare", "failed", f"HTTP 503\n{HOSTILE}", None),),
    price_history=(),
    excluded_offers=(ExcludedOffer("runpod", "H200 SXM 141GB", 1, 0.5, 3.6, 2.95, 21.24),),
    check_warnings=(CheckWarning("drift", "vastai", "offers dropped from 1200 to 450"),),
    watches=WATCHES,
)
