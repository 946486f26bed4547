"""warehouse/job_plans.py against a real, migrated in-memory DuckDB and the real sizing model.

The offers are SYNTHETIC (synthetic_offers.py); the throughput is the sizing model's, read back
through the job's own sizing call, so every expected train time and total below is computed from
it by hand: tokens / (tokens per second x 3600) hours, billed in whole periods.
"""

from __future__ import annotations

import json
import math
from datetime import date, datetime

import pandas as pd
import pytest
from synthetic_offers import CNY_PER_USD, DAY1, DAY2, crawl, monthly_cny, offer
from warehouse_template import migrated, scratch

from sizing.jobs import Job, job_requirements
from warehouse import daily_plans, job_plans
from warehouse.engine import connect

START = datetime(2026, 12, 1, 8, 0)
H100 = "H100 SXM 80GB"
RTX4090 = "RTX 4090 24GB"


@pytest.fixture
def con():
    connection = scratch()
    yield connection
    connection.close()


def _speed(job: Job, gpu_model: str, count: int) -> float:
    """The sizing model's tokens per second for `job` on `count` x `gpu_model`."""
    (row,) = job_requirements(job, (count,), [gpu_model])
    assert row.fits
    return row.tokens_per_second


def _hours_job(hours: float, gpu_model: str = H100, count: int = 1, **fields: object) -> Job:
    """A 7B LoRA job sized to train `hours` on `count` x `gpu_model`."""
    probe = Job("probe", "7B", "lora", tokens=1e9)
    tokens = hours * 3600 * _speed(probe, gpu_model, count)
    return Job("job", "7B", "lora", tokens=tokens, **fields)  # type: ignore[arg-type]


def _plan(con, job: Job, **kwargs: object) -> job_plans.JobPlans:
    return job_plans.plan_job(con, job, start_at=START, **kwargs)  # type: ignore[arg-type]


def test_an_hourly_total_is_price_times_gpus_times_hours_rounded_up(con):
    crawl(con, DAY1, "cloud", [offer("cloud", "h100", H100, 2.5)])
    job = _hours_job(10.2)
    (plan,) = _plan(con, job).plans
    hours = job.train_tokens / _speed(job, H100, 1) / 3600
    assert plan["train_days"] == pytest.approx(hours / 24)
    assert (plan["billing_period"], plan["billed_hours"]) == ("hour", 11)
    assert plan["total_usd"] == pytest.approx(2.5 * 1 * math.ceil(hours))
    assert plan["total_cny"] == pytest.approx(2.5 * CNY_PER_USD * 11)
    finish = pd.Timestamp(START) + pd.Timedelta(hours=hours)
    assert abs(plan["finish"] - finish) < pd.Timedelta(seconds=1)


@pytest.mark.parametrize(
    ("hours", "term", "months"),
    [
        (5, 1, 1),  # a week's job on a monthly quote pays its whole month
        (5, 3, 3),  # and a three-month term, all three
        (800, 1, 2),  # 800 h is more than a month (730 h): two
        (2500, 3, 4),  # longer than the term: the months it needs
    ],
)
def test_a_monthly_quote_costs_at_least_its_minimum_term(con, hours, term, months):
    crawl(con, DAY1, "broker", [monthly_cny("broker", "h100", H100, 9000, min_term_periods=term)])
    # on one GPU: with more, the same months of rent would buy a faster run (ranked first on a tie)
    (plan,) = _plan(con, _hours_job(hours, max_gpus=1)).plans
    assert plan["billing_period"] == "month"
    assert plan["billed_hours"] == months * 730
    assert plan["total_cny"] == pytest.approx(9000 * months)
    assert plan["total_cny"] >= 9000 * term


def test_a_daily_offer_bills_whole_days(con):
    crawl(
        con,
        DAY1,
        "cloud",
        [offer("cloud", "h100", H100, 2.0, billing_period="day", pricing_type="daily_plan")],
    )
    (plan,) = _plan(con, _hours_job(30, max_gpus=1)).plans
    assert plan["billed_hours"] == 48
    assert plan["total_usd"] == pytest.approx(2.0 * 48)


def test_a_deadline_takes_more_gpus_of_the_same_offer(con):
    crawl(con, DAY1, "cloud", [offer("cloud", "h100", H100, 2.0, available_gpus=8)])
    alone = _plan(con, _hours_job(100, within_days=1.5, max_gpus=1))  # 100 h on one H100
    assert alone.plans == [] and alone.fastest["gpu_count"] == 1
    hurried = _plan(con, _hours_job(100, within_days=1.5)).plans[0]
    assert hurried["offer_id"] == "h100"
    assert hurried["units_rented"] == hurried["gpu_count"] > 2  # one offer, cards picked on one node
    assert hurried["train_days"] <= 1.5
    assert hurried["nodes"] == 1


def test_no_more_gpus_than_in_stock_and_never_separate_machines(con):
    crawl(
        con,
        DAY1,
        "cloud",
        [
            offer("cloud", "two-free", H100, 2.0, available_gpus=2),
            offer("cloud", "box", H100, 1.0, price_per="instance"),  # a 1-GPU machine: one at most
            offer("cloud", "spot", H100, 0.5, pricing_type="spot", available_gpus=8),
        ],
    )
    answer = _plan(con, _hours_job(100, within_days=1.0))
    assert answer.plans == []
    assert answer.fastest is not None
    assert (answer.fastest["offer_id"], answer.fastest["gpu_count"]) == ("two-free", 2)
    assert answer.reason.startswith("nothing finishes within 24 h: the fastest plan, cloud H100 SXM 80GB x2")


def test_a_cluster_unit_spans_nodes_but_nodes_never_combine(con):
    cluster = {"gpu_count": 16, "price_per": "instance", "available_gpus": 16}
    crawl(
        con,
        DAY1,
        "cloud",
        [offer("cloud", "node", H100, 2.0, gpu_count=8), offer("cloud", "cluster", H100, 3.0, **cluster)],
    )
    answer = _plan(con, _hours_job(200, within_days=1.0))
    (plan,) = answer.plans
    assert (plan["offer_id"], plan["gpu_count"], plan["nodes"]) == ("cluster", 16, 2)
    assert _plan(con, _hours_job(200, within_days=1.0, max_gpus=8)).plans == []


def test_the_best_plan_per_gpu_model_cheapest_or_fastest_first(con):
    crawl(con, DAY1, "cloud", [offer("cloud", "h100", H100, 3.0), offer("cloud", "4090", RTX4090, 0.3)])
    job = _hours_job(20)
    cheapest = _plan(con, job).plans
    assert [plan["gpu_model"] for plan in cheapest] == [RTX4090, H100]
    assert [plan["rank"] for plan in cheapest] == [1, 2]
    assert cheapest[0]["total_usd"] <= cheapest[1]["total_usd"]
    fastest = _plan(con, job, fastest=True).plans
    assert [plan["gpu_model"] for plan in fastest] == [H100, RTX4090]
    assert fastest[0]["train_days"] <= fastest[1]["train_days"]


def test_a_tighter_deadline_never_gives_a_cheaper_best_plan(con):
    crawl(
        con,
        DAY1,
        "cloud",
        [
            offer("cloud", "h100", H100, 2.6, available_gpus=8),
            offer("cloud", "4090", RTX4090, 0.35, available_gpus=8),
            offer("cloud", "h100-day", H100, 2.0, billing_period="day", pricing_type="daily_plan"),
        ],
    )
    crawl(con, DAY1, "broker", [monthly_cny("broker", "h100m", H100, 9000)])
    job = _hours_job(60)
    totals = []
    for within in (None, 20, 5, 3, 2, 1.5, 1, 0.5, 0.3):
        answer = _plan(con, _hours_job(60, within_days=within) if within else job)
        if not answer.plans:
            break
        totals.append(answer.plans[0]["total_usd"])
    assert len(totals) >= 5
    assert totals == sorted(totals)


def test_a_placeholder_price_makes_no_job_plan(con):
    crawl(con, DAY1, "runpod", [offer("runpod", "cheap", H100, 0.3)])
    for platform, usd in {"a": 2.0, "b": 2.2, "c": 2.5}.items():
        crawl(con, DAY1, platform, [offer(platform, f"{platform}-h100", H100, usd)])
    plans = _plan(con, _hours_job(10)).plans
    assert plans[0]["platform"] == "a"
    assert "runpod" not in {plan["platform"] for plan in plans}


def test_platforms_gpus_and_days_narrow_the_offers(con):
    crawl(con, DAY1, "cloud", [offer("cloud", "old", H100, 1.0)])
    crawl(con, DAY2, "cloud", [offer("cloud", "new", H100, 2.0)])
    crawl(con, DAY2, "other", [offer("other", "4090", RTX4090, 0.3)])
    assert {plan["offer_id"] for plan in _plan(con, _hours_job(10)).plans} == {
        "new",
        "4090",
    }  # the latest crawls
    assert {plan["offer_id"] for plan in _plan(con, _hours_job(10), plan_date=DAY1).plans} == {"old"}
    assert {plan["offer_id"] for plan in _plan(con, _hours_job(10, platforms=("Other",))).plans} == {"4090"}
    assert {plan["offer_id"] for plan in _plan(con, _hours_job(10, gpus=("H100",))).plans} == {"new"}
    nothing = _plan(con, _hours_job(10, platforms=("nowhere",), gpus=("H100",)))
    assert nothing.reason == "no offers from nowhere of H100 SXM 80GB in the latest crawls"
    too_big = _plan(con, Job("huge", "70B", "full", tokens=1e9, gpus=(RTX4090,)))
    assert too_big.reason.startswith("no offer fits: 70B full fits on no GPU on offer of RTX 4090 24GB")


def _job_plans(con, day: date, jobs: list[Job]) -> dict[str, dict]:
    job_plans.compute_job_plans(con, day, jobs, START)
    frame = job_plans.job_plans_for_date(con, day)
    return {row["job"]: row for row in frame[frame["rank"] == 1].to_dict("records")}


def test_daily_job_plans_and_what_changed(con):
    cheap = Job("cheap", "7B", "lora", tokens=2e9, max_gpus=1)
    hurry = Job("hurry", "7B", "lora", tokens=2e9, within_days=0.5)
    crawl(con, DAY1, "cloud", [offer("cloud", "h100", H100, 2.0, available_gpus=8)])
    first = _job_plans(con, DAY1, [cheap, hurry])
    assert first["cheap"]["status"] == first["hurry"]["status"] == "ok"
    assert first["cheap"]["tokens"] == 2e9 and first["hurry"]["within_days"] == 0.5
    assert daily_plans.compute_plan_changes(con, DAY1, 10.0, subject="job") == 0  # nothing to compare with
    # day 2: a cheaper platform; the fast plan's stock is gone
    crawl(con, DAY2, "cloud", [offer("cloud", "h100", H100, 2.0, available_gpus=1)])
    crawl(con, DAY2, "other", [offer("other", "h100b", H100, 1.5, available_gpus=1)])
    second = _job_plans(con, DAY2, [cheap, hurry])
    assert second["cheap"]["platform"] == "other"
    assert (
        second["hurry"]["status"] == "no_plan" and "nothing finishes within 12 h" in second["hurry"]["reason"]
    )
    daily_plans.compute_plan_changes(con, DAY2, 25.0, subject="job")
    changes = daily_plans.changes_for_date(con, DAY2, subject="job")
    by_job = changes.groupby("job")["change_type"].apply(set).to_dict()
    # the daily plans' detector: the fast plan's offer, short of GPUs today, is out of stock too
    assert by_job == {
        "cheap": {"new_platform", "price_down"},
        "hurry": {"no_longer_possible", "out_of_stock"},
    }
    moved = changes[changes["change_type"] == "price_down"].iloc[0]
    assert moved["pct_change"] == pytest.approx(-25.0)  # at least the threshold counts
    assert moved["detail"].startswith("other H100 SXM 80GB x1: ")
    gone = changes[changes["job"] == "hurry"].iloc[0]
    assert (
        gone["detail"].startswith("nothing finishes within 12 h")
        and "; was cloud H100 SXM 80GB x" in gone["detail"]
    )
    # recomputing day 1 afterwards refreshes day 2's comparison (oldest first, then the next day)
    assert daily_plans.compute_plan_changes_for_days(con, [DAY1], 25.0, subject="job") == 0
    assert len(daily_plans.changes_for_date(con, DAY2, subject="job")) == len(changes)


def test_every_job_gets_a_row(con):
    crawl(con, DAY1, "cloud", [offer("cloud", "h100", H100, 2.0)])
    jobs = [Job("ok", "7B", "lora", tokens=1e9), Job("nowhere", "7B", "lora", tokens=1e9, platforms=("x",))]
    job_plans.compute_job_plans(con, DAY1, jobs, START)
    assert job_plans.jobs_without_plan(con, DAY1, ["ok", "nowhere", "unplanned"]) == ["unplanned"]
    rows = job_plans.job_plans_for_date(con)
    assert rows[rows["job"] == "nowhere"]["reason"].tolist() == [
        "no offers from x in the crawls of 2026-11-29"
    ]
    job_plans.compute_job_plans(con, DAY1, jobs[:1], START)  # a job gone from the file: its rows go
    assert set(job_plans.job_plans_for_date(con, DAY1)["job"]) == {"ok"}


def test_jobs_planned_in_chunks_get_the_plans_each_gets_alone(con, monkeypatch):
    """The daily run prices its jobs a chunk at a time over shapes made once for all of them: each
    job's stored plans are those it gets planned alone, whichever chunk it falls in and whatever
    the other jobs in it name (platforms, GPUs, a GPU limit, a deadline)."""
    crawl(
        con,
        DAY1,
        "cloud",
        [
            offer("cloud", "h100x8", H100, 2.0, gpu_count=8, available_gpus=8),
            offer("cloud", "h100", H100, 2.4, available_gpus=4),
            offer("cloud", "4090", RTX4090, 0.5, available_gpus=2),
        ],
    )
    crawl(con, DAY1, "other", [offer("other", "h100", H100, 2.2), offer("other", "4090", RTX4090, 0.4)])
    jobs = [
        Job("plain", "7B", "lora", tokens=2e9),
        Job("other-only", "7B", "lora", tokens=2e9, platforms=("other",)),
        Job("hurry", "7B", "full", tokens=5e9, within_days=1.0),
        Job("4090s", "7B", "qlora", tokens=1e9, gpus=(RTX4090,)),
        Job("two-gpus", "13B", "lora", tokens=3e9, max_gpus=2),
        Job("never", "7B", "lora", tokens=2e9, within_days=0.001),
        Job("cloud-big", "13B", "full", tokens=1e10, platforms=("cloud",), within_days=3.0),
    ]
    monkeypatch.setattr(job_plans, "JOB_CHUNK", 3)
    job_plans.compute_job_plans(con, DAY1, jobs, START)
    stored = job_plans.job_plans_for_date(con, DAY1)
    columns = ["rank", "status", "platform", "offer_id", "gpu_model", "gpu_count"]
    columns += ["billed_hours", "total_usd"]
    compared = 0
    for job in jobs:
        alone = _plan(con, job, plan_date=DAY1)
        rows = stored[stored["job"] == job.name].sort_values("rank")
        if alone.reason is not None:
            assert rows[["status", "reason"]].values.tolist() == [["no_plan", alone.reason]]
            continue
        expected = [[plan["rank"], "ok", *(plan[column] for column in columns[2:])] for plan in alone.plans]
        assert rows[columns].values.tolist() == expected, job.name
        compared += len(expected)
    assert compared >= 8 and set(stored["status"]) == {"ok", "no_plan"}


def test_the_ad_hoc_job_plan_imports_no_pandas(settings, probe_gpuplan):
    """`gpuplan plans --tokens` is planned in plain rows: pandas (and numpy through it) would be half
    its process's start. The whole command runs, table and JSON, on a published warehouse."""
    with connect.writer(migrated(settings.warehouse)) as con:
        crawl(con, DAY1, "cloud", [offer("cloud", "h100", H100, 2.0, available_gpus=8)])
        crawl(con, DAY1, "broker", [monthly_cny("broker", "h100m", H100, 9000)])
    env = {"PATH": "", "GPUPLAN_WAREHOUSE": str(settings.warehouse), "PYTHONDONTWRITEBYTECODE": "1"}
    job = ["plans", "--model", "7B", "--method", "lora", "--tokens", "2B", "--within", "3d"]
    for args in ([*job, "--json"], job):
        probed = probe_gpuplan(env, *args)
        assert probed.exit_code == 0, probed
        assert "typer" in probed.imported and "duckdb" in probed.imported, "the probe did not run gpuplan"
        assert {"pandas", "numpy"} & probed.imported == set(), f"gpuplan {' '.join(args)} imported them"
    (plan,) = json.loads(probe_gpuplan(env, *job, "--json").stdout)
    assert (plan["offer_id"], plan["gpu_model"], plan["rank"]) == ("h100", H100, 1)
    assert plan["finish"].endswith("Z") and plan["assumptions"]
