"""The views for people (migrations 003, 040): latest_offers and price_history_daily, on SYNTHETIC crawls."""

from __future__ import annotations

import datetime as dt

import duckdb
import pandas as pd
import pytest
from synthetic_crawls import WriteCrawl, synthetic_offer

from warehouse import daily_plans
from warehouse.loading import load_crawl


def _day(day: str, hour: str = "06") -> dict[str, str]:
    return {"started_at": f"{day}T{hour}:00:00Z", "finished_at": f"{day}T{hour}:05:00Z"}


def test_latest_offers_is_each_platforms_last_good_crawl(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    def crawl(name: str, platform: str, day: str, offers: list, **summary: str) -> None:
        at = {"observed_at": f"{day}T06:00:00Z", "platform": platform}
        lines = [synthetic_offer(n, **at) | extra for n, extra in enumerate(offers)]
        load_crawl(writer_con, write_crawl(lines, name=name, platform=platform, **_day(day), **summary))

    crawl("a1", "alpha", "2026-10-01", [{"price_amount": 1.0}])
    crawl("a2", "alpha", "2026-10-02", [{"price_amount": 2.0}, {"price_currency": "XYZ"}])  # partial
    crawl("b1", "beta", "2026-10-01", [{"price_amount": 3.0}])
    crawl("b2", "beta", "2026-10-02", [{"price_amount": 4.0}], status="failed", error="synthetic")
    # An old crawl file loaded late does not replace the newer one.
    crawl("a0", "alpha", "2026-09-30", [{"price_amount": 9.0}])
    rows = writer_con.execute("SELECT platform, price_amount FROM latest_offers ORDER BY platform").fetchall()
    assert rows == [("alpha", 2.0), ("beta", 3.0)]


def test_price_history_daily(writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl) -> None:
    def offer(n: int, platform: str, usd: float, stock: int | None, hour: str = "06") -> dict:
        return synthetic_offer(
            n,
            platform=platform,
            price_amount=usd,
            available_gpus=stock,
            observed_at=f"2026-10-01T{hour}:00:00Z",
        )

    load_crawl(
        writer_con,
        write_crawl([offer(1, "alpha", 2.0, 8), offer(2, "alpha", 4.0, None)], name="a", platform="alpha"),
    )
    load_crawl(writer_con, write_crawl([offer(1, "beta", 3.0, 2)], name="b", platform="beta"))
    # alpha crawled again the same day: offer 1 counts once, with its later price and stock.
    load_crawl(
        writer_con,
        write_crawl(
            [offer(1, "alpha", 1.0, 4, hour="18")],
            name="a-again",
            platform="alpha",
            **_day("2026-10-01", "18"),
        ),
    )
    load_crawl(
        writer_con,
        write_crawl([offer(9, "beta", 5.0, None) | {"gpu_model": "L40S 48GB"}], name="c", platform="beta"),
    )

    rows = writer_con.execute(
        "SELECT gpu_model, min_usd_per_gpu_hour, median_usd_per_gpu_hour, offers, "
        "gpus_available, offers_with_stock, platforms, "
        "min_cny_per_gpu_hour / min_usd_per_gpu_hour "
        "FROM price_history_daily WHERE observed_date = '2026-10-01' ORDER BY gpu_model"
    ).fetchall()
    ((cny_per_usd,),) = writer_con.execute(
        "SELECT units_per_usd FROM fx_rates WHERE currency = 'CNY' AND rate_date = '2026-10-01'"
    ).fetchall()
    h100, l40s = rows
    assert h100[:7] == ("H100 SXM 80GB", 1.0, 3.0, 3, 6, 2, 2)  # offers 1.0 (alpha), 4.0 (alpha), 3.0 (beta)
    assert h100[7] == pytest.approx(cny_per_usd)
    assert l40s[:7] == ("L40S 48GB", 5.0, 5.0, 1, None, 0, 1)  # no stock figure: unknown, not zero


def test_demo_data_never_poses_as_live_data(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    """Demo (offline replay), then live, then demo again: the live offers stay the latest, and the
    day's plans read the live crawl; a platform never crawled live keeps its demo offers."""

    def crawl(name: str, platform: str, day: str, usd: float, offline: bool) -> str:
        offer = synthetic_offer(0, platform=platform, price_amount=usd, observed_at=f"{day}T06:00:00Z")
        summary = write_crawl([offer], name=name, platform=platform, offline=offline, **_day(day))
        return load_crawl(writer_con, summary).crawl_id

    def latest() -> list[tuple[str, float, bool]]:
        return writer_con.execute(
            "SELECT o.platform, o.price_amount, r.offline FROM latest_offers AS o "
            "JOIN crawl_runs AS r USING (crawl_id) ORDER BY o.platform"
        ).fetchall()

    def planned(day: str, platform: str, crawl_id: str) -> str:
        frame = pd.DataFrame([{"platform": platform, "crawl_id": crawl_id, "status": "ok"}])
        daily_plans.record_plan_crawls(writer_con, dt.date.fromisoformat(day), frame)
        ((recorded,),) = writer_con.execute(
            "SELECT crawl_id FROM plan_crawls WHERE plan_date = $d AND platform = $p",
            {"d": dt.date.fromisoformat(day), "p": platform},
        ).fetchall()
        return recorded

    demo = crawl("demo1", "alpha", "2026-10-01", 9.0, offline=True)
    crawl("demo-beta", "beta", "2026-10-01", 7.0, offline=True)
    assert latest() == [("alpha", 9.0, True), ("beta", 7.0, True)]  # never crawled live: the demo shows
    assert planned("2026-10-01", "alpha", demo) == demo

    live = crawl("live", "alpha", "2026-10-02", 2.0, offline=False)
    assert latest() == [("alpha", 2.0, False), ("beta", 7.0, True)]
    assert planned("2026-10-02", "alpha", live) == live

    again = crawl("demo2", "alpha", "2026-10-03", 9.5, offline=True)  # newer, but a replay
    assert latest() == [("alpha", 2.0, False), ("beta", 7.0, True)]
    assert planned("2026-10-03", "alpha", again) == live, "the day's plans must read the live crawl"
    assert planned("2026-10-02", "alpha", again) == live, "a demo never replaces a day's live crawl"
    # Nothing is lost: the demo runs stay in the history, marked offline.
    offline_runs = writer_con.execute(
        "SELECT count(*) FROM crawl_runs WHERE offline AND platform = 'alpha'"
    ).fetchall()
    assert offline_runs == [(2,)]
