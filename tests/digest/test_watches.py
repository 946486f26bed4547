"""digest.watches: each kind of watch firing once, on the day it becomes true, read from a migrated
DuckDB with SYNTHETIC rows (the watches file itself: tests/config/test_watches_file.py)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from synthetic_warehouse import CNY_PER_USD, NOW

from config.watches_file import WatchList, parse_watches
from digest.content import build_digest, previous_plan_day
from digest.watches import evaluate_watches

DAYS = [date(2026, 11, 29) + timedelta(days=n) for n in range(3)]


def _parse(text: str):
    return parse_watches(text, "watches.yaml", ("vastai", "runpod", "autodl"))


# the cheapest on-demand H100 under 2 USD per GPU-hour, anywhere
H100_UNDER_2 = "- gpu: H100\n  below_usd_per_gpu_hour: 2.0\n"


def _day(
    warehouse, day, offers: dict[str, list[tuple[str, float, int | None]]], job_total: float | None = None
):
    """One plan day: a plan row, each platform's offers (gpu, usd, available), the job's best plan."""
    warehouse.plans(day, [warehouse.plan("7B", "lora", "vastai", "RTX 4090 24GB", 1, 300.0)])
    for platform, rows in offers.items():
        warehouse.crawl(day, platform, [{"gpu_model": g, "usd": usd, "available": n} for g, usd, n in rows])
    if job_total is not None:
        warehouse._insert(
            "job_plans",
            [
                {
                    "plan_date": day,
                    "job": "qwen-sft",
                    "rank": 1,
                    "status": "ok",
                    "model": "qwen2.5-14b",
                    "method": "lora",
                    "tokens": 5e8,
                    "epochs": 1.0,
                    "platform": "autodl",
                    "gpu_model": "RTX 4090 24GB",
                    "gpu_count": 4,
                    "total_usd": job_total,
                    "total_cny": job_total * CNY_PER_USD,
                    "computed_at": NOW,
                }
            ],
        )


H100 = "H100 SXM 80GB"
# Three plan days; each watch is false on the first, becomes true on the second, stays true on the
# third: it fires on the second day only.
FIRE_CASES = {
    "price in USD": (
        "- gpu: H100\n  below_usd_per_gpu_hour: 2.0\n",
        [{"vastai": [(H100, 2.2, 1)]}, {"vastai": [(H100, 1.9, 1)]}, {"vastai": [(H100, 1.8, 1)]}],
        [None, None, None],
        [2.2, 1.9, 1.8],
    ),
    "price in CNY, on one platform": (
        "- gpu: H100\n  below_cny_per_gpu_hour: 14.0\n  platforms: [runpod]\n",
        # vastai is under the threshold all along, but the watch only looks at runpod
        [
            {"runpod": [(H100, 2.5, 1)], "vastai": [(H100, 1.0, 1)]},
            {"runpod": [(H100, 1.9, 1)], "vastai": [(H100, 1.0, 1)]},
            {"runpod": [(H100, 1.9, 1)], "vastai": [(H100, 1.0, 1)]},
        ],
        [None, None, None],
        [18.0, 13.68, 13.68],
    ),
    "stock appears": (
        "- gpu: H100\n  min_available_gpus: 8\n",
        [
            {"vastai": [(H100, 2.0, 4)], "runpod": [(H100, 2.1, 4)]},  # 8 in all, but not on one platform
            {"vastai": [(H100, 2.0, 4), (H100, 2.2, 4)], "runpod": [(H100, 2.1, 0)]},
            {"vastai": [(H100, 2.0, 16)]},
        ],
        [None, None, None],
        [4, 8, 16],
    ),
    "a job's total falls": (
        "- job: qwen-sft\n  below_total_usd: 500\n",
        [{}, {}, {}],
        [620.0, 480.0, 470.0],
        [620.0, 480.0, 470.0],
    ),
}


@pytest.mark.parametrize("text, offers, totals, readings", FIRE_CASES.values(), ids=FIRE_CASES.keys())
def test_each_kind_of_watch_fires_once_on_the_day_it_becomes_true(warehouse, text, offers, totals, readings):
    watches = WatchList(_parse(text))
    for day, day_offers, total in zip(DAYS, offers, totals, strict=True):
        _day(warehouse, day, day_offers, total)
    # What build_digest reads for its watches on each day (the digest itself, once, below)
    results = [
        evaluate_watches(warehouse.con, watches.watches, day, previous_plan_day(warehouse.con, day))
        for day in DAYS
    ]
    assert [len(day) for day in results] == [1, 1, 1]
    [first], [second], [third] = results
    assert [r.now.value if r.now else None for r in (first, second, third)] == pytest.approx(readings)
    assert [(r.holds, r.fired) for r in (first, second, third)] == [
        (False, False),
        (True, True),
        (True, False),
    ]
    digest = build_digest(warehouse.con, DAYS[1], price_move_pct=10.0, watches=watches)
    assert digest.fired_watches == (second,) and not digest.is_quiet


def test_a_watch_that_holds_on_the_first_day_fires(warehouse):
    """No previous day with plans: nothing held before, so a watch true on day one is news."""
    _day(warehouse, DAYS[0], {"vastai": [(H100, 1.5, 1)]})
    [result] = build_digest(
        warehouse.con, DAYS[0], price_move_pct=10.0, watches=WatchList(_parse(H100_UNDER_2))
    ).watches
    assert result.before is None and result.fired


def test_a_placeholder_price_does_not_fire_a_price_watch(warehouse):
    """The watch reads the offers the plans read (judged_offers): RunPod's 0.5 placeholder beside four
    platforms asking 2.5-3 USD is no H100 under 2 USD."""
    market = {"lambda": 2.99, "nebius": 2.95, "vastai": 2.6, "datacrunch": 2.5}
    for day in DAYS[:2]:
        _day(warehouse, day, {platform: [(H100, usd, 1)] for platform, usd in market.items()})
    warehouse.crawl(DAYS[1], "runpod", [{"gpu_model": H100, "usd": 0.5}])
    [result] = build_digest(
        warehouse.con, DAYS[1], price_move_pct=10.0, watches=WatchList(_parse(H100_UNDER_2))
    ).watches
    assert result.now is not None and result.now.value == 2.5 and not result.fired
