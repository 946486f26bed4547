"""build_digest on a migrated DuckDB with synthetic rows: one table of cases per section of the mail."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from synthetic_warehouse import CNY_PER_USD, NOW

from digest.content import CHART_DAYS, CHART_MAX_MODELS, Digest, build_digest
from warehouse import queries

DAY = date(2026, 12, 1)
PREVIOUS = DAY - timedelta(days=1)


def _with_plans(warehouse, *days: date) -> None:
    """A minimal plan row on each day, so the day counts as a plan day."""
    for day in days:
        warehouse.plans(day, [warehouse.plan("7B", "lora", "synthetic-cloud", "RTX 4090 24GB", 1, 300.0)])


def test_plans_are_grouped_by_ranking_in_model_size_order(warehouse):
    plan = warehouse.plan
    warehouse.plans(
        DAY,
        [
            plan("70B", "full", "lambda", "H100 SXM 80GB", 16, 40000.0),
            plan("7B", "full", "矩池云", "A100 80GB", 2, 2500.0),
            plan("13B", "qlora", "autodl", "RTX 4090 24GB", 1, 400.0),
            plan("7B", "full", "vastai", "H100 SXM 80GB", 1, 1800.0, ranking="lowest_run_total"),
            {"model": "70B", "params": 70e9, "method": "qlora", "status": "no_offer_fits", "offer_id": None},
        ],
    )
    digest = build_digest(warehouse.con, DAY, price_move_pct=10.0)
    order = [(p.model, p.method, p.ranking, p.platform) for p in digest.plans]
    assert order == [
        ("7B", "full", "lowest_rent", "矩池云"),
        ("7B", "full", "lowest_run_total", "vastai"),
        ("13B", "qlora", "lowest_rent", "autodl"),
        ("70B", "full", "lowest_rent", "lambda"),
        ("70B", "qlora", "lowest_rent", None),
    ]
    groups = digest.plans_by_ranking()
    assert list(groups) == ["lowest_rent", "lowest_run_total"]
    assert [p.model for p in groups["lowest_rent"]] == ["7B", "13B", "70B", "70B"]
    assert digest.plans[-1].status == "no_offer_fits"


# crawls: (day, platform, status, [(gpu_model, usd, pricing_type)])
# expected: (gpu_model, old, new, pct, old_platform, new_platform)
PRICE_MOVE_CASES = {
    "a drop beyond the threshold is listed": (
        [
            (PREVIOUS, "vastai", "ok", [("A100 80GB", 1.00, "on_demand")]),
            (DAY, "vastai", "ok", [("A100 80GB", 0.80, "on_demand")]),
        ],
        [("A100 80GB", 1.00, 0.80, -20.0, "vastai", "vastai")],
    ),
    "a move under the threshold is not": (
        [
            (PREVIOUS, "vastai", "ok", [("A100 80GB", 1.00, "on_demand")]),
            (DAY, "vastai", "ok", [("A100 80GB", 0.95, "on_demand")]),
        ],
        [],
    ),
    "a platform that failed today does not read as a rise": (
        [
            (PREVIOUS, "vastai", "ok", [("H100 SXM 80GB", 2.00, "on_demand")]),
            (PREVIOUS, "lambda", "ok", [("H100 SXM 80GB", 1.00, "on_demand")]),
            (DAY, "vastai", "ok", [("H100 SXM 80GB", 2.00, "on_demand")]),
            (DAY, "lambda", "failed", []),
        ],
        [],
    ),
    "spot offers are left out": (
        [
            (
                PREVIOUS,
                "vastai",
                "ok",
                [("RTX 4090 24GB", 0.40, "on_demand"), ("RTX 4090 24GB", 0.30, "spot")],
            ),
            (DAY, "vastai", "ok", [("RTX 4090 24GB", 0.40, "on_demand"), ("RTX 4090 24GB", 0.10, "spot")]),
        ],
        [],
    ),
    "the cheapest platform can change, biggest move first": (
        [
            (
                PREVIOUS,
                "vastai",
                "ok",
                [("A100 80GB", 1.00, "on_demand"), ("H100 SXM 80GB", 2.00, "on_demand")],
            ),
            (PREVIOUS, "矩池云", "ok", [("A100 80GB", 1.20, "on_demand")]),
            (DAY, "vastai", "ok", [("A100 80GB", 1.30, "on_demand"), ("H100 SXM 80GB", 2.50, "on_demand")]),
            (DAY, "矩池云", "ok", [("A100 80GB", 0.70, "on_demand")]),
        ],
        [
            ("A100 80GB", 1.00, 0.70, -30.0, "vastai", "矩池云"),
            ("H100 SXM 80GB", 2.00, 2.50, 25.0, "vastai", "vastai"),
        ],
    ),
}


@pytest.mark.parametrize("crawls, expected", PRICE_MOVE_CASES.values(), ids=PRICE_MOVE_CASES.keys())
def test_price_moves(warehouse, crawls, expected):
    _with_plans(warehouse, PREVIOUS, DAY)
    for day, platform, status, offers in crawls:
        warehouse.crawl(
            day,
            platform,
            [{"gpu_model": g, "usd": usd, "pricing_type": t} for g, usd, t in offers],
            status=status,
        )
    moves = build_digest(warehouse.con, DAY, price_move_pct=10.0).price_moves
    assert [
        (
            m.gpu_model,
            m.old_usd_per_gpu_hour,
            m.new_usd_per_gpu_hour,
            round(m.pct_change, 6),
            m.old_platform,
            m.new_platform,
        )
        for m in moves
    ] == expected


def test_price_moves_compare_with_the_previous_plan_day_not_the_calendar(warehouse):
    three_days_ago = DAY - timedelta(days=3)
    _with_plans(warehouse, three_days_ago, DAY)
    warehouse.crawl(three_days_ago, "vastai", [{"gpu_model": "A100 80GB", "usd": 1.0}])
    warehouse.crawl(DAY, "vastai", [{"gpu_model": "A100 80GB", "usd": 1.5}])
    digest = build_digest(warehouse.con, DAY, price_move_pct=10.0)
    assert digest.previous_date == three_days_ago
    assert [(m.gpu_model, m.pct_change) for m in digest.price_moves] == [("A100 80GB", 50.0)]


# (previous day's offers, today's offers, today's crawl status) -> expected (platform, gpu, old, new)
STOCK_CASES = {
    "sold out": ([("A100 80GB", 8)], [("A100 80GB", 0)], "ok", [("autodl", "A100 80GB", 8, 0)]),
    "back in stock": ([("A100 80GB", 0)], [("A100 80GB", 4)], "ok", [("autodl", "A100 80GB", 0, 4)]),
    "no longer listed while the platform crawled fine": (
        [("A100 80GB", 8), ("RTX 4090 24GB", 2)],
        [("RTX 4090 24GB", 2)],
        "ok",
        [("autodl", "A100 80GB", 8, 0)],
    ),
    "newly listed with stock": (
        [("RTX 4090 24GB", 2)],
        [("RTX 4090 24GB", 2), ("H20 96GB", 8)],
        "ok",
        [("autodl", "H20 96GB", 0, 8)],
    ),
    "fewer GPUs but still in stock is no stock change": ([("A100 80GB", 8)], [("A100 80GB", 2)], "ok", []),
    "unknown stock is not zero": ([("A100 80GB", None)], [("A100 80GB", 0)], "ok", []),
    "a partial crawl says nothing about stock": ([("A100 80GB", 8)], [("RTX 4090 24GB", 1)], "partial", []),
    "several offers of a model add up": (
        [("A100 80GB", 3), ("A100 80GB", 5)],
        [("A100 80GB", 0), ("A100 80GB", 0)],
        "ok",
        [("autodl", "A100 80GB", 8, 0)],
    ),
}


@pytest.mark.parametrize("before, now, status, expected", STOCK_CASES.values(), ids=STOCK_CASES.keys())
def test_stock_changes(warehouse, before, now, status, expected):
    _with_plans(warehouse, PREVIOUS, DAY)
    warehouse.crawl(PREVIOUS, "autodl", [{"gpu_model": g, "usd": 1.0, "available": n} for g, n in before])
    warehouse.crawl(
        DAY, "autodl", [{"gpu_model": g, "usd": 1.0, "available": n} for g, n in now], status=status
    )
    changes = build_digest(warehouse.con, DAY, price_move_pct=10.0).stock_changes
    assert [
        (s.platform, s.gpu_model, s.old_available_gpus, s.new_available_gpus) for s in changes
    ] == expected


def test_failed_crawls_are_the_ones_feeding_the_day(warehouse):
    _with_plans(warehouse, PREVIOUS, DAY)
    warehouse.crawl(PREVIOUS, "lambda", status="failed", error="yesterday's outage")
    warehouse.crawl(DAY, "vastai", [{"gpu_model": "A100 80GB", "usd": 1.0}])
    warehouse.crawl(DAY, "矩池云", status="failed", error="HTTP 503 from 矩池云")
    warehouse.crawl(
        DAY, "runpod", [{"gpu_model": "A100 80GB", "usd": 1.1}], status="partial", error="page 3 timed out"
    )
    warehouse.crawl(DAY, "gpushare", status="skipped", error="GPUSHARE_TOKEN is not set")
    failures = build_digest(warehouse.con, DAY, price_move_pct=10.0).failed_crawls
    assert [(f.platform, f.status, f.error) for f in failures] == [
        ("gpushare", "skipped", "GPUSHARE_TOKEN is not set"),
        ("runpod", "partial", "page 3 timed out"),
        ("矩池云", "failed", "HTTP 503 from 矩池云"),
    ]


def test_price_history_covers_the_chart_window_for_the_main_models(warehouse):
    first = DAY - timedelta(days=CHART_DAYS - 1)
    models = [f"Synthetic GPU {n}" for n in range(CHART_MAX_MODELS + 1)]
    # The last model is offered by one platform only: it is the one left off the chart.
    for platform in ("vastai", "lambda"):
        offers = [{"gpu_model": m, "usd": 1.0} for m in (models[:-1] if platform == "lambda" else models)]
        warehouse.crawl(first, platform, offers)
    warehouse.crawl(first - timedelta(days=1), "vastai", [{"gpu_model": models[0], "usd": 0.1}])
    warehouse.crawl(
        DAY, "vastai", [{"gpu_model": models[0], "usd": 2.0}, {"gpu_model": models[0], "usd": 3.0}]
    )
    history = build_digest(warehouse.con, DAY, price_move_pct=10.0).price_history
    assert {p.gpu_model for p in history} == set(models[:-1])
    assert [(p.day, p.min_usd_per_gpu_hour) for p in history if p.gpu_model == models[0]] == [
        (first, 1.0),
        (DAY, 2.0),
    ]


def test_a_day_without_plans_has_an_empty_digest(warehouse):
    digest = build_digest(warehouse.con, DAY, price_move_pct=10.0)
    assert digest.plans == () and digest.previous_date is None and digest.is_quiet


QUIET_CASES = {
    "nothing happened": ({}, True),
    "a plan changed": ({"plan_changes": ("x",)}, False),
    "stock changed": ({"stock_changes": ("x",)}, False),
    "a price moved": ({"price_moves": ("x",)}, False),
    "a platform failed to crawl": ({"failed_crawls": ("x",)}, False),
}


@pytest.mark.parametrize("sections, quiet", QUIET_CASES.values(), ids=QUIET_CASES.keys())
def test_is_quiet(sections, quiet):
    empty = {
        k: ()
        for k in ("plans", "plan_changes", "stock_changes", "price_moves", "failed_crawls", "price_history")
    }
    digest = Digest(DAY, PREVIOUS, 10.0, **{**empty, **sections})
    assert digest.is_quiet is quiet


def test_a_placeholder_price_is_no_price_move_and_no_chart_point(warehouse):
    """The digest reads the day's offers through the rule the plans use (judged_offers): RunPod's
    out-of-stock placeholder of 0.5 USD, far under what four other platforms ask, is left out of
    the price moves and the chart, as it is left out of the plans (SYNTHETIC prices)."""
    _with_plans(warehouse, PREVIOUS, DAY)
    market = {"lambda": 2.99, "nebius": 2.95, "vastai": 1.9, "datacrunch": 2.5}
    for day in (PREVIOUS, DAY):
        for platform, usd in market.items():
            warehouse.crawl(day, platform, [{"gpu_model": "H200 SXM 141GB", "usd": usd}])
    warehouse.crawl(PREVIOUS, "runpod", [{"gpu_model": "H200 SXM 141GB", "usd": 3.2}])
    warehouse.crawl(DAY, "runpod", [{"gpu_model": "H200 SXM 141GB", "usd": 0.5}])  # the placeholder
    digest = build_digest(warehouse.con, DAY, price_move_pct=10.0)
    assert digest.price_moves == ()  # the cheapest real offer (vastai 1.9) did not move
    points = [p for p in digest.price_history if p.gpu_model == "H200 SXM 141GB"]
    assert [(p.day, p.min_usd_per_gpu_hour) for p in points] == [(PREVIOUS, 1.9), (DAY, 1.9)]
    # ... and is named once, in the short "left out as implausible" note, as the plans recorded it
    queries.execute(warehouse.con, "plans/record_excluded_offers", plan_date=DAY, computed_at=NOW)
    [excluded] = build_digest(warehouse.con, DAY, price_move_pct=10.0).excluded_offers
    assert (excluded.platform, excluded.gpu_model, excluded.offers) == ("runpod", "H200 SXM 141GB", 1)
    assert excluded.min_usd_per_gpu_hour == 0.5
    assert excluded.reference_usd_per_gpu_hour == 2.725  # the median of the other four platforms
    assert excluded.min_cny_per_gpu_hour == pytest.approx(0.5 * CNY_PER_USD)
