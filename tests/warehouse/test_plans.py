"""warehouse/daily_plans.py against a real, migrated in-memory DuckDB.

Offers and requirements here are SYNTHETIC: a few hand-made offers and a toy memory model
(a job needs `need_gb` in all, split evenly; throughput proportional to GPUs) so each rule of
plans/candidates.sql / plans/cheapest.sql / plans/changes.sql is tested on numbers one can check
by hand. The real spiders and sizing model are exercised in tests/pipelines.
"""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest
from synthetic_offers import CNY_PER_USD, DAY1, DAY2
from synthetic_offers import crawl as _crawl
from synthetic_offers import monthly_cny as _monthly_cny
from synthetic_offers import offer as _offer
from synthetic_offers import plan as _plan
from synthetic_offers import toy_requirements as _requirements
from warehouse_template import scratch

from warehouse import daily_plans


def _row(frame: pd.DataFrame, model: str, method: str, ranking: str = "lowest_rent") -> pd.Series:
    match = frame[(frame["model"] == model) & (frame["method"] == method) & (frame["ranking"] == ranking)]
    assert len(match) == 1, match
    return match.iloc[0]


@pytest.fixture
def con():
    connection = scratch()
    yield connection
    connection.close()


def test_per_card_monthly_quotes_combine_on_one_node_like_the_article(con):
    # The article: 910B 64G at 2139 CNY/month per card; a 30B job needing two cards costs 4278.
    _crawl(con, DAY1, "broker", [_monthly_cny("broker", "910b", "Ascend 910B 64GB", 2139)])
    frame = _plan(con, DAY1, {("13B", "full"): 60, ("30B", "full"): 100})

    small = _row(frame, "13B", "full")
    assert (small["gpu_count"], small["rent_cny_per_month"]) == (1, pytest.approx(2139))
    big = _row(frame, "30B", "full")
    assert (big["gpu_count"], big["units_rented"], big["nodes"]) == (2, 2, 1)
    assert big["rent_cny_per_month"] == pytest.approx(4278)
    assert not big["hourly_rentable"]
    assert big["commitment_cny"] == pytest.approx(4278)
    assert not big["stock_known"]


def test_an_instance_priced_single_gpu_box_is_never_combined(con):
    # Two separate 1-GPU machines are not one 2-GPU job.
    _crawl(con, DAY1, "market", [_offer("market", "box", "H100 SXM 80GB", 2.0, price_per="instance")])
    frame = _plan(con, DAY1, {("30B", "full"): 100})
    assert _row(frame, "30B", "full")["status"] == "no_offer_fits"


def test_separate_nodes_never_combine_but_a_cluster_unit_spans_nodes(con):
    node = {"gpu_count": 8, "price_per": "gpu"}  # even priced per GPU: two machines are not one job
    _crawl(con, DAY1, "cloud", [_offer("cloud", "8x-node", "H100 SXM 80GB", 2.0, **node)])
    assert _row(_plan(con, DAY1, {("70B", "full"): 1200}), "70B", "full")["status"] == "no_offer_fits"

    cluster = {"gpu_count": 16, "price_per": "instance", "available_gpus": 16}
    _crawl(con, DAY2, "cloud", [_offer("cloud", "2-node-cluster", "H100 SXM 80GB", 3.0, **cluster)])
    plan = _row(_plan(con, DAY2, {("70B", "full"): 1200}), "70B", "full")
    assert (plan["offer_id"], plan["gpu_count"], plan["units_rented"], plan["nodes"]) == (
        "2-node-cluster",
        16,
        1,
        2,
    )
    assert plan["multi_node"] and plan["stock_known"]
    assert plan["rent_usd_per_hour"] == pytest.approx(3.0 * 16)


def test_known_stock_caps_the_cards_and_sold_out_offers_are_left_out(con):
    _crawl(
        con,
        DAY1,
        "autodl",
        [
            _offer("autodl", "one-free", "RTX 4090 24GB", 0.2, available_gpus=1),
            _offer("autodl", "sold-out", "RTX 4090 24GB", 0.1, available_gpus=0),
            _offer("autodl", "three-free", "RTX 4090 24GB", 0.3, available_gpus=3),
        ],
    )
    frame = _plan(con, DAY1, {("7B", "lora"): 20, ("13B", "lora"): 40, ("30B", "lora"): 80})
    assert _row(frame, "7B", "lora")["offer_id"] == "one-free"
    two = _row(frame, "13B", "lora")
    assert (two["offer_id"], two["gpu_count"], two["stock_known"], two["available_gpus"]) == (
        "three-free",
        2,
        True,
        3,
    )
    # 80 GB needs four 24 GB cards; no offer has four free
    assert _row(frame, "30B", "lora")["status"] == "no_offer_fits"


def test_spot_offers_never_make_a_plan(con):
    _crawl(con, DAY1, "market", [_offer("market", "spot", "RTX 4090 24GB", 0.05, pricing_type="spot")])
    frame = _plan(con, DAY1, {("7B", "qlora"): 6})
    assert _row(frame, "7B", "qlora")["status"] == "no_offer_fits"


def test_the_two_rankings_differ_when_the_faster_gpu_costs_more_per_month(con):
    _crawl(
        con,
        DAY1,
        "cloud",
        [
            _offer("cloud", "4090", "RTX 4090 24GB", 0.4),  # 292 USD/month, 1000 tok/s
            _offer("cloud", "h100", "H100 SXM 80GB", 1.5),  # 1095 USD/month, 5000 tok/s
        ],
    )
    frame = _plan(con, DAY1, {("7B", "qlora"): 6})
    rent = _row(frame, "7B", "qlora", "lowest_rent")
    run = _row(frame, "7B", "qlora", "lowest_run_total")
    assert (rent["offer_id"], run["offer_id"]) == ("4090", "h100")
    assert rent["rent_usd_per_month"] == pytest.approx(0.4 * 730)
    assert rent["tokens_per_day"] == pytest.approx(1000 * 86400)
    assert (rent["measure"], rent["measure_usd"]) == ("commitment_usd", pytest.approx(0.4 * 730))
    # 1e9 tokens on the 4090: 277.8 h, billed 278 h = 111.20 USD; on the H100 55.6 h, billed 56 h = 84
    # USD, and the same 84 on 2, 4 or 8 of them (27.8 -> 28 h, 13.9 -> 14 h, 6.9 -> 7 h): the tie goes
    # to the earlier finish, 8 GPUs
    assert run["total_usd"] == pytest.approx(84.0)
    assert (run["measure"], run["measure_usd"]) == ("total_usd", pytest.approx(84.0))
    assert run["gpu_count"] == 8
    assert run["train_days"] == pytest.approx(1e9 / (8 * 5000) / 86400)
    # the rent per billion tokens stays a column, a rate: the hourly rent over tokens per hour
    assert run["cost_usd_per_billion_tokens"] == pytest.approx(8 * 1.5 / (8 * 5000 * 3600) * 1e9)


def test_the_run_ranking_takes_more_gpus_of_an_offer_where_that_bills_less(con):
    # 0.4 USD/GPU-h by the day on the 4090 (1000 tok/s a GPU), 1e9 tokens: one GPU trains 11.6 days,
    # billed 12 days = 115.20 USD; eight train 1.45 days, billed 2 days = 153.60; three train 3.86
    # days, billed 4 = 115.20; two train 5.8 days, billed 6 = 115.20; four 2.9 days, billed 3 =
    # 115.20; the tie goes to the earliest finish, 4 GPUs
    daily = {"billing_period": "day", "pricing_type": "daily_plan", "hourly_rentable": False}
    _crawl(con, DAY1, "cloud", [_offer("cloud", "4090", "RTX 4090 24GB", 0.4, **daily)])
    run = _row(_plan(con, DAY1, {("7B", "qlora"): 6}), "7B", "qlora", "lowest_run_total")
    assert (run["gpu_count"], run["total_usd"]) == (4, pytest.approx(0.4 * 4 * 3 * 24))


def test_a_long_minimum_term_counts_in_the_month_of_training(con):
    # 0.5 USD/h but three months minimum: 1095 USD to train one month, against 730 on demand.
    _crawl(
        con,
        DAY1,
        "cloud",
        [
            _offer("cloud", "on-demand", "H100 SXM 80GB", 1.0),
            _offer(
                "cloud",
                "quarterly",
                "H100 SXM 80GB",
                0.5,
                billing_period="month",
                min_term_periods=3,
                pricing_type="reserved",
                hourly_rentable=False,
            ),
        ],
    )
    frame = _plan(con, DAY1, {("7B", "full"): 70})
    rent = _row(frame, "7B", "full", "lowest_rent")
    assert (rent["offer_id"], rent["commitment_usd"]) == ("on-demand", pytest.approx(730))
    # The quarterly offer has the lower rent per billion tokens (a rate), but a run of 1e9 tokens
    # (55.6 GPU-hours on the H100) is billed its whole term, 1095 USD, against 56 on demand.
    run = _row(frame, "7B", "full", "lowest_run_total")
    assert (run["offer_id"], run["total_usd"]) == ("on-demand", pytest.approx(56.0))
    # at a rate of 55.56 USD per billion tokens, where the quarterly offer's is 27.78
    assert run["cost_usd_per_billion_tokens"] == pytest.approx(1.0 / (5000 * 3600) * 1e9)


def test_every_ask_gets_both_rankings_even_with_no_offers(con):
    _crawl(con, DAY1, "empty", [], status="failed")
    frame = _plan(con, DAY1, {("7B", "full"): 120, ("70B", "qlora"): 48})
    assert len(frame) == 4
    assert set(frame["status"]) == {"no_offer_fits"}
    assert set(frame["model_preset"]) == {"toy-7b", "toy-70b"}
    missing = daily_plans.missing_plans(con, DAY1, ["7B", "70B"], ["full", "qlora"])
    assert set(zip(missing["model"], missing["method"], strict=True)) == {("7B", "qlora"), ("70B", "full")}
    assert len(missing) == 4  # both rankings of each
    assert list(frame["model"]) == ["7B", "7B", "70B", "70B"]  # smallest model first


def test_a_failed_crawls_stray_offers_make_no_plan(con):
    _crawl(con, DAY1, "cloud", [_offer("cloud", "stray", "H100 SXM 80GB", 1.0)], status="failed")
    assert _row(_plan(con, DAY1, {("7B", "full"): 70}), "7B", "full")["status"] == "no_offer_fits"


def test_offers_only_count_on_the_day_their_crawl_feeds(con):
    _crawl(con, DAY1, "cloud", [_offer("cloud", "yesterday", "H100 SXM 80GB", 1.0)])
    _crawl(con, DAY2, "cloud", [_offer("cloud", "today", "H100 SXM 80GB", 2.0)])
    assert _row(_plan(con, DAY2, {("7B", "full"): 70}), "7B", "full")["offer_id"] == "today"


def test_recomputing_a_day_replaces_that_day_and_nothing_else(con):
    asks = {("7B", "full"): 70, ("30B", "full"): 100}
    _crawl(con, DAY1, "cloud", [_offer("cloud", "a", "H100 SXM 80GB", 1.0)])
    _crawl(con, DAY2, "cloud", [_offer("cloud", "b", "H100 SXM 80GB", 1.2)])
    _plan(con, DAY1, asks)
    _plan(con, DAY2, asks)
    daily_plans.compute_plan_changes(con, DAY2, 10.0)
    before = {
        t: con.execute(f"SELECT * EXCLUDE (computed_at) FROM {t} ORDER BY ALL").df()
        for t in ("cheapest_plans", "plan_candidates", "plan_changes")
    }

    _plan(con, DAY1, asks)
    daily_plans.compute_plan_changes(con, DAY2, 10.0)

    for table, frame in before.items():
        pd.testing.assert_frame_equal(
            con.execute(f"SELECT * EXCLUDE (computed_at) FROM {table} ORDER BY ALL").df(), frame, obj=table
        )


def test_changes_against_the_previous_day(con):
    asks = {("7B", "full"): 70, ("30B", "full"): 100, ("70B", "full"): 1200}
    _crawl(
        con,
        DAY1,
        "cloud",
        [_offer("cloud", "h100", "H100 SXM 80GB", 1.0), _offer("cloud", "4090", "RTX 4090 24GB", 0.3)],
    )
    _crawl(con, DAY1, "broker", [_monthly_cny("broker", "910b", "Ascend 910B 64GB", 2139)])
    _plan(con, DAY1, asks)
    # Day 2: the H100 is gone (cloud crawled fine), the broker lists cheaper, a 2-node cluster appears.
    _crawl(
        con,
        DAY2,
        "cloud",
        [
            _offer("cloud", "4090", "RTX 4090 24GB", 0.3),
            _offer("cloud", "cluster", "H100 SXM 80GB", 2.0, gpu_count=16, price_per="instance"),
        ],
    )
    _crawl(con, DAY2, "broker", [_monthly_cny("broker", "910b", "Ascend 910B 64GB", 1800)])
    _plan(con, DAY2, asks)

    assert daily_plans.compute_plan_changes(con, DAY2, 10.0) > 0
    changes = daily_plans.changes_for_date(con, DAY2)
    by_ask = (
        changes[changes["ranking"] == "lowest_rent"].groupby(["model", "method"])["change_type"].apply(set)
    )
    # 7B: cheapest was the broker's 910B (2139 CNY ~ 306 USD) on day 1, 1800 CNY on day 2: -15.8 %
    assert by_ask[("7B", "full")] == {"price_down"}
    # 70B: 16 H100 only fit as a cluster, which appears on day 2
    assert by_ask[("70B", "full")] == {"now_fits"}
    moved = changes[(changes["model"] == "7B") & (changes["ranking"] == "lowest_rent")].iloc[0]
    assert moved["pct_change"] == pytest.approx(100 * (1800 - 2139) / 2139)
    # the day-1 run ranking for 7B used the H100 offer, which is gone on day 2
    run_7b = changes[(changes["model"] == "7B") & (changes["ranking"] == "lowest_run_total")]
    assert {"out_of_stock", "new_gpu"} <= set(run_7b["change_type"])


def test_small_moves_and_failed_platforms_are_not_changes(con):
    asks = {("7B", "full"): 70}
    _crawl(con, DAY1, "cloud", [_offer("cloud", "h100", "H100 SXM 80GB", 1.0)])
    _crawl(con, DAY1, "other", [_offer("other", "h100b", "H100 SXM 80GB", 1.04)])
    _plan(con, DAY1, asks)
    # Day 2: cloud failed to crawl, so its offer's stock is unknown, not "out of stock"; its day-1
    # crawl stands in (carried, 24 h old: tests/warehouse/test_stale_crawls.py), so its plan stays.
    _crawl(con, DAY2, "cloud", [], status="failed")
    _crawl(con, DAY2, "other", [_offer("other", "h100b", "H100 SXM 80GB", 1.04)])
    _plan(con, DAY2, asks)

    daily_plans.compute_plan_changes(con, DAY2, 10.0)
    assert daily_plans.changes_for_date(con, DAY2).empty  # no out_of_stock, no new_platform


def test_no_changes_on_the_first_day(con):
    _crawl(con, DAY1, "cloud", [_offer("cloud", "h100", "H100 SXM 80GB", 1.0)])
    _plan(con, DAY1, {("7B", "full"): 70})
    assert daily_plans.compute_plan_changes(con, DAY1, 10.0) == 0


def test_a_recrawl_replaces_its_platform_for_the_day_only(con):
    _crawl(con, DAY1, "cloud", [_offer("cloud", "first", "H100 SXM 80GB", 1.0)])
    _crawl(con, DAY1, "other", [_offer("other", "o", "H100 SXM 80GB", 9.0)])
    assert (
        daily_plans.record_plan_crawls(
            con, DAY1, pd.DataFrame([{"platform": "cloud", "crawl_id": "x2", "status": "ok"}])
        )
        == 2
    )
    assert dict(
        con.execute("SELECT platform, crawl_id FROM plan_crawls WHERE plan_date = $d", {"d": DAY1}).fetchall()
    ) == {
        "cloud": "x2",
        "other": f"synthetic-other-{DAY1}",
    }


def test_requirements_are_one_row_per_model_method_gpu_and_count(con):
    twice = _requirements({("7B", "full"): 1})
    with pytest.raises(ValueError, match="twice"):
        daily_plans.store_requirements(con, DAY1, pd.concat([twice, twice.head(1)]))


def test_requirements_need_every_column(con):
    with pytest.raises(ValueError, match="tokens_per_second"):
        daily_plans.store_requirements(
            con, DAY1, _requirements({("7B", "full"): 1}).drop(columns="tokens_per_second")
        )


def _h100_market(con, day: date, cheap_usd: float, others: dict[str, float]) -> None:
    """One crawl per platform for `day`: 'runpod' offers an H100 at `cheap_usd`, the others at their price."""
    _crawl(con, day, "runpod", [_offer("runpod", "cheap", "H100 SXM 80GB", cheap_usd)])
    for platform, usd in others.items():
        _crawl(con, day, platform, [_offer(platform, f"{platform}-h100", "H100 SXM 80GB", usd)])


def test_a_placeholder_price_far_below_the_other_platforms_makes_no_plan(con):
    # RunPod's out-of-stock placeholder: 0.5 USD where three other platforms ask 2.0-2.5 (median 2.2)
    _h100_market(con, DAY1, 0.3, {"a": 2.0, "b": 2.2, "c": 2.5})
    plan = _row(_plan(con, DAY1, {("7B", "lora"): 20}), "7B", "lora")
    assert (plan["platform"], plan["offer_id"]) == ("a", "a-h100")
    excluded = daily_plans.excluded_offers(con, DAY1)
    assert excluded[["platform", "offer_id", "price_reference", "reference_offers"]].values.tolist() == [
        ["runpod", "cheap", "other_platforms", 3]
    ]
    assert excluded["reference_usd_per_gpu_hour"].tolist() == [pytest.approx(2.2)]
    assert excluded["price_usd_per_gpu_hour"].tolist() == [pytest.approx(0.3)]
    # left out of plans, not deleted: the offer is history
    assert con.execute("SELECT count(*) FROM offers WHERE offer_id = 'cheap'").fetchall() == [(1,)]
    # the offers check is told before any plan is computed
    below = daily_plans.offers_below_price_floor(con, DAY1)
    assert below[["platform", "offer_id"]].values.tolist() == [["runpod", "cheap"]]
    assert "placeholder" in below["reason"].iloc[0]


@pytest.mark.parametrize(
    ("cheap_usd", "others", "why"),
    [
        (0.5, {"a": 2.0, "b": 2.2, "c": 2.5}, "a real deal: 0.5 is not under a fifth of 2.2"),
        (0.3, {"a": 2.0, "b": 2.2}, "two other platforms are too few, and it is runpod's only H100"),
        (0.29, {"a": 0.3, "b": 0.35, "c": 2.5}, "as cheap as half the market: its median is 0.35"),
    ],
)
def test_a_low_price_stays_when_the_market_does_not_say_otherwise(con, cheap_usd, others, why):
    _h100_market(con, DAY1, cheap_usd, others)
    plan = _row(_plan(con, DAY1, {("7B", "lora"): 20}), "7B", "lora")
    assert plan["platform"] == "runpod", why
    assert daily_plans.excluded_offers(con, DAY1).empty


def test_where_few_platforms_sell_a_gpu_a_placeholder_is_judged_by_its_platforms_other_offers(con):
    # As RunPod's MI300X when it was the only seller: 0.5 for "any" cloud beside its own secure 1.99
    offers = [
        _offer("runpod", "any", "H100 SXM 80GB", 0.5),
        _offer("runpod", "secure", "H100 SXM 80GB", 1.99),
        _offer("runpod", "community", "H100 SXM 80GB", 1.2),
    ]
    _crawl(con, DAY1, "runpod", offers)
    _crawl(con, DAY1, "lambda", [_offer("lambda", "h100", "H100 SXM 80GB", 2.99)])  # one other: too few
    plan = _row(_plan(con, DAY1, {("7B", "lora"): 20}), "7B", "lora")
    assert plan["offer_id"] == "community"  # 1.2: a cheaper tier of its own, not a placeholder
    excluded = daily_plans.excluded_offers(con, DAY1)
    assert excluded[["offer_id", "price_reference", "reference_offers"]].values.tolist() == [
        ["any", "own_offers", 2]
    ]
    assert excluded["reference_usd_per_gpu_hour"].tolist() == [pytest.approx((1.99 + 1.2) / 2)]
    assert "other offers of this GPU" in daily_plans.offers_below_price_floor(con, DAY1)["reason"].iloc[0]


def test_each_other_platform_has_one_vote_its_cheapest_price(con):
    # A marketplace with many dear listings does not lift the median: its vote is its cheapest, 2.0,
    # so the median is 2.5 and 0.6 stands; per listing the median would be 10 and 0.6 would go.
    listings = [_offer("market", f"m{i}", "H100 SXM 80GB", 2.0 if i == 0 else 10.0) for i in range(9)]
    _crawl(con, DAY1, "market", listings)
    _h100_market(con, DAY1, 0.6, {"b": 2.5, "c": 2.8})
    assert _row(_plan(con, DAY1, {("7B", "lora"): 20}), "7B", "lora")["platform"] == "runpod"
    # and spot prices neither vote nor get judged: a plan never uses them
    _crawl(con, DAY2, "market", [_offer("market", "spot", "H100 SXM 80GB", 0.1, pricing_type="spot")])
    _h100_market(con, DAY2, 0.6, {"b": 2.5, "c": 2.8})
    assert daily_plans.offers_below_price_floor(con, DAY2).empty


def test_changes_of_several_days_run_oldest_first_and_refresh_the_next_day(con):
    asks = {("7B", "full"): 70}
    for day, usd in ((DAY1, 1.0), (DAY2, 2.0)):
        _crawl(con, day, "cloud", [_offer("cloud", "a", "H100 SXM 80GB", usd)])
        _plan(con, day, asks)
    assert daily_plans.compute_plan_changes_for_days(con, [DAY2], 10.0) == 2  # both rankings got dearer
    earlier = date(2026, 11, 28)
    _crawl(con, earlier, "cloud", [_offer("cloud", "a", "H100 SXM 80GB", 4.0)])
    _plan(con, earlier, asks)
    daily_plans.compute_plan_changes_for_days(con, [DAY1, earlier], 10.0)
    changes = con.execute("SELECT change_date, change_type FROM plan_changes ORDER BY ALL").fetchall()
    # 11-28 has no day before it; 11-29 got cheaper than 11-28; 11-30, recomputed, still dearer than 11-29
    assert changes == [(DAY1, "price_down")] * 2 + [(DAY2, "price_up")] * 2
    assert daily_plans.recorded_days(con, date(2026, 11, 1), DAY1) == [earlier, DAY1]


def test_the_daily_tables_give_days_and_total_for_a_default_run(con):
    # 1e8 tokens: 27.8 h on the hourly 4090 (1000 tok/s), billed 28 h = 11.20 USD, and 11.20 on 2 or
    # 4 of them (13.9 -> 14 h, 6.9 -> 7 h; 3: 9.3 -> 10 h = 12.00); 5.6 h on the H100 quoted by the
    # month (5000 tok/s), billed its whole month, 730 USD
    h100_month = {"billing_period": "month", "pricing_type": "monthly_plan", "hourly_rentable": False}
    _crawl(
        con,
        DAY1,
        "cloud",
        [
            _offer("cloud", "4090", "RTX 4090 24GB", 0.4),
            _offer("cloud", "h100", "H100 SXM 80GB", 1.0, **h100_month),
        ],
    )
    daily_plans.store_requirements(con, DAY1, _requirements({("7B", "qlora"): 6}))
    daily_plans.compute_candidates(con, DAY1, job_tokens=1e8)
    daily_plans.compute_cheapest_plans(con, DAY1)
    frame = daily_plans.plans_for_date(con, DAY1)
    rent = _row(frame, "7B", "qlora", "lowest_rent")
    run = _row(frame, "7B", "qlora", "lowest_run_total")
    assert (rent["offer_id"], rent["gpu_count"], run["offer_id"], run["gpu_count"]) == ("4090", 1, "4090", 4)
    assert (rent["job_tokens"], run["job_tokens"]) == (1e8, 1e8)
    assert rent["train_days"] == pytest.approx(1e8 / 1000 / 86400)
    assert run["train_days"] == pytest.approx(1e8 / 4000 / 86400)
    assert rent["total_usd"] == pytest.approx(0.4 * 28)
    assert rent["total_cny"] == pytest.approx(0.4 * 28 * CNY_PER_USD)
    assert run["total_usd"] == pytest.approx(0.4 * 4 * 7)
    h100 = con.execute("SELECT min(total_usd) FROM plan_candidates WHERE offer_id = 'h100'").fetchall()[0][0]
    assert h100 == pytest.approx(1.0 * 730)
    with pytest.raises(ValueError, match="job_tokens"):
        daily_plans.compute_candidates(con, DAY1, job_tokens=0)


def test_the_best_plans_on_one_gpu_rank_like_the_days_plans(con):
    _crawl(
        con,
        DAY1,
        "cloud",
        [_offer("cloud", "4090", "RTX 4090 24GB", 0.4), _offer("cloud", "h100", "H100 SXM 80GB", 1.5)],
    )
    frame = _plan(con, DAY1, {("7B", "qlora"): 6, ("70B", "full"): 1200})
    assert _row(frame, "7B", "qlora", "lowest_rent")["offer_id"] == "4090"
    on_h100 = daily_plans.plans_for_gpu(con, "H100 SXM 80GB", DAY1)
    assert set(on_h100["ranking"]) == set(daily_plans.RANKINGS)
    assert _row(on_h100, "7B", "qlora", "lowest_rent")["offer_id"] == "h100"
    assert _row(on_h100, "70B", "full", "lowest_rent")["status"] == "no_offer_fits"
    # the latest day by default, and one model or method
    assert len(daily_plans.plans_for_gpu(con, "H100 SXM 80GB", model="7B")) == 2
    assert daily_plans.plans_for_gpu(con, "A100 SXM 80GB", DAY1)["status"].eq("no_offer_fits").all()
