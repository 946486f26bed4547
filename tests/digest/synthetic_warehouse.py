"""A warehouse the digest tests fill by hand: crawls, offers, plans and changes as the pipeline writes."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import duckdb
from warehouse_template import insert_rows

NOW = datetime(2026, 11, 30, 22, 0, 0)  # synthetic crawl time (UTC)
CNY_PER_USD = 7.2  # a synthetic, round exchange rate
HOURS_PER_MONTH = 730


@dataclass
class SyntheticWarehouse:
    """A migrated warehouse and writers of synthetic rows, one table at a time, in bulk."""

    con: duckdb.DuckDBPyConnection
    _ids: itertools.count = field(default_factory=itertools.count)

    def crawl(
        self,
        plan_date: date,
        platform: str,
        offers: Sequence[dict[str, Any]] = (),
        *,
        status: str = "ok",
        error: str | None = None,
    ) -> str:
        """One crawl of `platform` that feeds `plan_date`'s plans (crawl_runs, offers, plan_crawls)."""
        crawl_id = f"synthetic-crawl-{next(self._ids)}"
        self._insert(
            "crawl_runs",
            [
                {
                    "crawl_id": crawl_id,
                    "platform": platform,
                    "status": status,
                    "error": error,
                    "started_at": NOW,
                    "finished_at": NOW,
                    "items_yielded": len(offers),
                    "offers_loaded": len(offers),
                    "loaded_at": NOW,
                }
            ],
        )
        self._insert(
            "plan_crawls",
            [
                {
                    "plan_date": plan_date,
                    "platform": platform,
                    "crawl_id": crawl_id,
                    "status": status,
                    "recorded_at": NOW,
                }
            ],
        )
        if offers:
            self._insert("offers", [self._offer(crawl_id, platform, plan_date, **o) for o in offers])
        return crawl_id

    def _offer(
        self,
        crawl_id: str,
        platform: str,
        plan_date: date,
        gpu_model: str,
        usd: float,
        available: int | None = None,
        pricing_type: str = "on_demand",
        gpu_count: int = 1,
        offer_id: str | None = None,
        region: str | None = None,
    ) -> dict[str, Any]:
        return {
            "region": region,
            "crawl_id": crawl_id,
            "platform": platform,
            "offer_id": offer_id or f"synthetic-offer-{next(self._ids)}",
            "gpu_name_raw": gpu_model,
            "gpu_model": gpu_model,
            "gpu_count": gpu_count,
            "price_amount": usd,
            "price_currency": "USD",
            "price_per": "gpu",
            "billing_period": "hour",
            "pricing_type": pricing_type,
            "hourly_rentable": True,
            "price_usd_per_gpu_hour": usd,
            "price_cny_per_gpu_hour": usd * CNY_PER_USD,
            "available_gpus": available,
            "source_url": "synthetic://test",
            "observed_at": NOW,
            "observed_date": plan_date,
            "run_day": NOW.date(),  # as the loaders set it: the day its crawl started
        }

    def plans(self, plan_date: date, rows: list[dict[str, Any]]) -> None:
        """cheapest_plans rows; each dict needs model, method and either platform... or status."""
        self._insert(
            "cheapest_plans",
            [
                {
                    "plan_date": plan_date,
                    "ranking": "lowest_rent",
                    "status": "ok",
                    "offer_id": "synthetic-plan-offer",
                    "computed_at": NOW,
                    **row,
                }
                for row in rows
            ],
        )

    @staticmethod
    def plan(
        model: str,
        method: str,
        platform: str,
        gpu_model: str,
        gpu_count: int,
        usd_per_month: float,
        **more: Any,
    ) -> dict[str, Any]:
        """A cheapest_plans row that fits (synthetic), CNY at 7.2 per USD, billed by the hour; a run of
        1B tokens billed a tenth of the month's rent. Its measure is what its ranking ranks by
        (definitions/00_ranked_plans.sql): the month's rent for lowest_rent, the run's total for
        lowest_run_total."""
        total_usd = more.get("total_usd", usd_per_month / 10)
        by_run = more.get("ranking") == "lowest_run_total"
        measure_usd = total_usd if by_run else more.get("commitment_usd", usd_per_month)
        return {
            "model": model,
            "params": float(model.rstrip("B")) * 1e9 if model.rstrip("B").isdigit() else None,
            "method": method,
            "platform": platform,
            "gpu_model": gpu_model,
            "gpu_count": gpu_count,
            "pricing_type": "on_demand",
            "billing_period": "hour",
            "stock_known": True,
            "available_gpus": gpu_count,
            "rent_usd_per_hour": usd_per_month / HOURS_PER_MONTH,
            "rent_cny_per_hour": usd_per_month / HOURS_PER_MONTH * CNY_PER_USD,
            "rent_usd_per_month": usd_per_month,
            "rent_cny_per_month": usd_per_month * CNY_PER_USD,
            "commitment_hours": 730,
            "commitment_usd": usd_per_month,
            "cost_usd_per_billion_tokens": usd_per_month / 100,
            "cost_cny_per_billion_tokens": usd_per_month / 100 * CNY_PER_USD,
            "job_tokens": 1e9,
            "total_usd": total_usd,
            "total_cny": total_usd * CNY_PER_USD,
            "measure": "total_usd" if by_run else "commitment_usd",
            "measure_usd": measure_usd,
            "measure_cny": measure_usd * CNY_PER_USD,
            **more,
        }

    def changes(self, change_date: date, rows: list[dict[str, Any]]) -> None:
        """Change rows of the daily plans (plan_changes, subject 'plan')."""
        base = {"subject": "plan", "ranking": "lowest_rent", "measure": "commitment_usd"}
        self._insert(
            "plan_changes",
            [{"change_date": change_date, **base, "computed_at": NOW, **row} for row in rows],
        )

    def job_changes(self, change_date: date, rows: list[dict[str, Any]]) -> None:
        """Change rows of the jobs' plans (plan_changes, subject 'job')."""
        base = {"subject": "job", "ranking": "lowest_total", "measure": "total_usd"}
        self._insert(
            "plan_changes",
            [{"change_date": change_date, **base, "computed_at": NOW, **row} for row in rows],
        )

    def _insert(self, table: str, rows: list[dict[str, Any]]) -> None:
        insert_rows(self.con, table, rows)  # table: a literal of this module
