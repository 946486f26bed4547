"""Stock counted once: every stock figure counts each machine's free GPUs once.

The feeds are SYNTHETIC, in the structure of Vast.ai's `bundles` answer as vast-ai/vast-cli's
`vastai/data/offer.py` @ 55679830a2c2adcf5c7fad08bf08717a9591062a names its fields (each offer a
rentable slot with `machine_id` and the `gpu_ids` of the machine it rents; one machine listed whole
and in slices) and as our Vast spider emits them (each slot on demand and, with a `min_bid`, as a
spot twin of the same offer id; `available_gpus` all of the slot's GPUs while it is rentable), and
of RunPod's (`PlatformSpider.on_demand_and_spot`: one listing on demand and at a spot price, its
stock the same count on both, no machine said).
"""

from __future__ import annotations

import datetime as dt

import duckdb
import pandas as pd
import pytest
from synthetic_crawls import WriteCrawl, synthetic_offer

from config.watches_file import StockWatch
from digest.watches import evaluate_watches
from warehouse import daily_plans, queries
from warehouse.loading import load_crawl

DAY = dt.date(2026, 10, 1)


def _slot(offer_id: str, gpu_model: str, ids: list[int], free: bool, price: float, **fields) -> list[dict]:
    """One Vast slot on demand and as its spot twin (same offer id), as the Vast spider yields it."""
    common = {
        "platform": "vastai",
        "offer_id": offer_id,
        "gpu_name_raw": gpu_model.split()[0],
        "gpu_model": gpu_model,
        "gpu_count": len(ids),
        "price_per": "instance",
        "available_gpus": len(ids) if free else 0,
        "gpu_ids": ids,
    } | fields
    return [
        synthetic_offer(0, **common, price_amount=price * len(ids), pricing_type="on_demand"),
        synthetic_offer(0, **common, price_amount=price * len(ids) * 0.6, pricing_type="spot"),
    ]


def _vast_machine(gpu_model: str, machine_id: str, slices: list[list[int]], price: float) -> list[dict]:
    """One machine listed as these slices of its GPUs (the first the whole machine): every slot free."""
    return [
        offer
        for n, ids in enumerate(slices)
        for offer in _slot(
            f"{machine_id}-{n}", gpu_model, ids, True, price * (1 + 0.02 * n), machine_id=machine_id
        )
    ]


def _load(con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl, platform: str, offers: list[dict]) -> None:
    result = load_crawl(con, write_crawl(offers, name=platform, platform=platform))
    assert result.status == "ok", result.error
    daily_plans.record_plan_crawls(
        con, DAY, pd.DataFrame([{"platform": platform, "crawl_id": result.crawl_id, "status": "ok"}])
    )


@pytest.fixture
def market(writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl) -> duckdb.DuckDBPyConnection:
    """Vast: an 8-GPU H100 machine (whole, a 4-GPU slice, two 2-GPU slices) and a 4-GPU B300 machine
    (whole and two 2-GPU slices), each slot also at a spot bid; a second H100 machine with ids not
    said (a 2-GPU and a 1-GPU slot: the larger counts). RunPod: 8 H100 on demand and their spot twin."""
    h100 = _vast_machine("H100 SXM 80GB", "52001", [list(range(8)), [0, 1, 2, 3], [4, 5], [6, 7]], 2.0)
    b300 = _vast_machine("B300 279GB", "52002", [[0, 1, 2, 3], [0, 1], [2, 3]], 6.0)
    unsaid = [
        offer
        for n, count in ((1, 2), (2, 1))
        for offer in _slot(f"v-unsaid-{n}", "H100 SXM 80GB", list(range(count)), True, 2.2)
    ]
    for offer in unsaid:
        offer.update(machine_id="52003", gpu_ids=None)  # the machine said, its GPU ids not
    _load(writer_con, write_crawl, "vastai", h100 + b300 + unsaid)
    runpod = [
        synthetic_offer(
            0, platform="runpod", offer_id="H100 SXM", available_gpus=8, pricing_type=kind, price_amount=p
        )
        for kind, p in (("on_demand", 2.69), ("spot", 1.99))
    ]
    _load(writer_con, write_crawl, "runpod", runpod)
    return writer_con


def test_offers_sum_to_many_times_the_gpus_there_are(market: duckdb.DuckDBPyConnection) -> None:
    """The trap: the plain sum of available_gpus, what every figure used to show."""
    rows = dict(
        market.execute(
            "SELECT platform || ' ' || gpu_model, sum(available_gpus) FROM offers GROUP BY ALL"
        ).fetchall()
    )
    assert rows == {"vastai H100 SXM 80GB": 38, "vastai B300 279GB": 16, "runpod H100 SXM 80GB": 16}


def test_price_history_counts_each_machine_once(market: duckdb.DuckDBPyConnection) -> None:
    rows = dict(
        market.execute(
            "SELECT gpu_model, gpus_available FROM price_history_daily WHERE observed_date = $d", {"d": DAY}
        ).fetchall()
    )
    # H100: Vast's 8 of machine 52001 + 2 of machine 52003 (ids unsaid: its largest slot), RunPod's 8
    assert rows == {"H100 SXM 80GB": 8 + 2 + 8, "B300 279GB": 4}


def test_a_stock_watch_of_six_b300_does_not_fire_on_four(market: duckdb.DuckDBPyConnection) -> None:
    watches = tuple(StockWatch(1, "B300", "B300 279GB", n) for n in (4, 6))
    four, six = evaluate_watches(market, watches, DAY, None)
    assert (four.now.value, four.now.platform, four.fired) == (4, "vastai", True)
    assert (six.now.value, six.fired) == (4, False)
    h100 = evaluate_watches(market, (StockWatch(1, "H100", "H100 SXM 80GB", 10),), DAY, None)[0]
    assert (h100.now.value, h100.now.platform) == (10, "vastai")  # 8 + 2, not 38


def test_the_stock_changes_count_each_machine_once(
    market: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    """The digest's stock section: B300 back in stock says 4 GPUs, not its 16 offer GPUs."""
    yesterday = DAY - dt.timedelta(days=1)
    rented = [
        o | {"available_gpus": 0, "observed_at": "2026-09-30T06:00:00Z"}
        for o in _vast_machine("B300 279GB", "52002", [[0, 1, 2, 3], [0, 1], [2, 3]], 6.0)
    ]
    started = {"started_at": "2026-09-30T06:00:00Z", "finished_at": "2026-09-30T06:05:00Z"}
    result = load_crawl(market, write_crawl(rented, name="vastai-before", platform="vastai", **started))
    daily_plans.record_plan_crawls(
        market, yesterday, pd.DataFrame([{"platform": "vastai", "crawl_id": result.crawl_id, "status": "ok"}])
    )
    rows = queries.records(market, "digest/stock_changes", previous_day=yesterday, day=DAY)
    assert [(r["gpu_model"], r["old_available_gpus"], r["new_available_gpus"]) for r in rows] == [
        ("B300 279GB", 0, 4),
        ("H100 SXM 80GB", 0, 10),
    ]


def test_gpuplan_gpus_counts_each_machine_once(market: duckdb.DuckDBPyConnection) -> None:
    free = queries.records(market, "gpus/cheapest_offers", max_stale_hours=None)
    assert {r["gpu_model"]: r["gpus_free"] for r in free} == {"H100 SXM 80GB": 18, "B300 279GB": 4}


def test_a_fractional_offer_is_no_card(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    offers = [
        synthetic_offer(1, available_gpus=2),
        synthetic_offer(2, gpu_frac=0.25, available_gpus=4, price_amount=0.4),
    ]
    _load(writer_con, write_crawl, "synthcloud", offers)
    ((free,),) = writer_con.execute(
        "SELECT gpus_available FROM price_history_daily WHERE gpu_model = 'H100 SXM 80GB'"
    ).fetchall()
    assert free == 2
    judged = writer_con.execute(
        "SELECT offer_id, fractional, plannable FROM judged_offers($d, $d) ORDER BY offer_id", {"d": DAY}
    ).fetchall()
    assert judged == [("synthetic-1", False, True), ("synthetic-2", True, False)]
