"""SYNTHETIC offers for the plan tests: hand-made offers loaded as crawls feeding a day.

Each offer is one row as the loaders store it (prices already per GPU-hour, at a fixed synthetic
CNY rate so CNY figures stay exact); a crawl is recorded for its day, as the pipeline records the
crawls of a day's folder, so the same offers are both "the day's" and, being the newest crawl of
their platform, "the latest".
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

import pandas as pd
from warehouse_template import insert_rows

from warehouse import daily_plans

DAY1 = date(2026, 11, 29)
DAY2 = date(2026, 11, 30)
CNY_PER_USD = 7.0  # synthetic rate: keeps CNY figures exact


def offer(platform: str, offer_id: str, gpu_model: str, usd_per_gpu_hour: float, **fields: object) -> dict:
    row = {
        "platform": platform,
        "offer_id": offer_id,
        "source": "crawl",
        "region": None,
        "gpu_name_raw": gpu_model,
        "gpu_model": gpu_model,
        "gpu_count": 1,
        "price_amount": usd_per_gpu_hour,
        "price_currency": "USD",
        "price_per": "gpu",
        "billing_period": "hour",
        "min_term_periods": 1,
        "pricing_type": "on_demand",
        "hourly_rentable": True,
        "price_usd_per_gpu_hour": usd_per_gpu_hour,
        "price_cny_per_gpu_hour": usd_per_gpu_hour * CNY_PER_USD,
        "available_gpus": None,
        "source_url": "https://example.invalid/synthetic",
    }
    row.update(fields)
    return row


def monthly_cny(
    platform: str, offer_id: str, gpu_model: str, cny_per_gpu_month: float, **fields: object
) -> dict:
    """A per-card monthly quote (like the article's broker), derived per GPU-hour over 730 h."""
    cny_hour = cny_per_gpu_month / 730
    return offer(
        platform,
        offer_id,
        gpu_model,
        cny_hour / CNY_PER_USD,
        price_amount=cny_per_gpu_month,
        price_currency="CNY",
        billing_period="month",
        pricing_type="monthly_plan",
        hourly_rentable=False,
        price_cny_per_gpu_hour=cny_hour,
        **fields,
    )


def crawl(
    con,
    day: date,
    platform: str,
    offers: Iterable[dict],
    status: str = "ok",
    stale_hours: float = daily_plans.STALE_HOURS,
) -> None:
    """Load synthetic offers as one crawl of `platform` feeding `day` (loaded at its midnight; a
    failed crawl carries the platform's last good one within `stale_hours`)."""
    crawl_id = f"synthetic-{platform}-{day}"
    observed_at = datetime.combine(day, datetime.min.time())
    # as the loaders set them; run_day: the run's day (loaded_at here)
    rows = [
        {**offer, "crawl_id": crawl_id, "observed_at": observed_at, "observed_date": day, "run_day": day}
        for offer in offers
    ]
    con.execute(
        "INSERT INTO crawl_runs (crawl_id, platform, status, items_yielded, offers_loaded, loaded_at) "
        "VALUES ($id, $platform, $status, $n, $n, $at)",
        {"id": crawl_id, "platform": platform, "status": status, "n": len(rows), "at": observed_at},
    )
    insert_rows(con, "offers", rows)
    daily_plans.record_plan_crawls(
        con, day, pd.DataFrame([{"platform": platform, "crawl_id": crawl_id, "status": status}]), stale_hours
    )


# Toy GPUs: memory (GB), relative speed (tokens per second per GPU), GPUs per node.
GPUS = {
    "RTX 4090 24GB": (24, 1_000.0, 8),
    "H100 SXM 80GB": (80, 5_000.0, 8),
    "Ascend 910B 64GB": (64, 2_000.0, 8),
}


def toy_requirements(
    asks: dict[tuple[str, str], float], counts: Iterable[int] = (1, 2, 3, 4, 8, 16, 24)
) -> pd.DataFrame:
    """Toy sizing: (model, method) -> total memory needed in GB."""
    rows = []
    for (model, method), need_gb in asks.items():
        for gpu_model, (memory_gb, speed, per_node) in GPUS.items():
            for count in counts:
                rows.append(
                    {
                        "model": model,
                        "model_preset": f"toy-{model.lower()}",
                        "params": float(model.rstrip("B")) * 1e9,
                        "method": method,
                        "gpu_model": gpu_model,
                        "gpu_count": count,
                        "gpus_per_node": per_node,
                        "fits": need_gb / count <= memory_gb,
                        "zero_stage": 3 if count > 1 else 0,
                        "per_gpu_memory_gb": need_gb / count,
                        "tokens_per_second": speed * count,
                        "mfu": 0.4,
                        "multi_node": count > per_node,
                    }
                )
    return pd.DataFrame(rows)


def plan(con, day: date, asks: dict[tuple[str, str], float]) -> pd.DataFrame:
    daily_plans.store_requirements(con, day, toy_requirements(asks))
    daily_plans.compute_candidates(con, day)
    daily_plans.compute_cheapest_plans(con, day)
    return daily_plans.plans_for_date(con, day)
