"""Job plans across nodes (warehouse/job_plans.py, definitions/50_plan_shapes.sql) on a real, migrated
DuckDB and the real sizing model: whole nodes of one offer, joined only where the cluster table
(sizing/data/clusters.csv) lists the offer, sized at its fabric's speed, billed as the offer bills,
never past the stock shown.

The offers are SYNTHETIC (synthetic_offers.py), named as the real spiders name them (aws
`p5.48xlarge/us-east-1`, lambda `NVIDIA H100 SXM 80 GB/8x`, vastai an offer number). Every expected
figure is computed by hand from the sizing model's throughput at the fabric's bandwidth and the
goodput of sizing/fabric.py.
"""

from __future__ import annotations

import math
from datetime import datetime

import pytest
from synthetic_offers import DAY1, DAY2, crawl, offer
from warehouse_template import scratch

from sizing import fabric
from sizing.jobs import Job, job_requirements
from warehouse import daily_plans, job_plans, plan_sequence
from warehouse.plan_sequence import PlanOptions

START = datetime(2026, 12, 1, 8, 0)
H100 = "H100 SXM 80GB"
A100_40 = "A100 SXM 40GB"
BIG = Job("big", "175B", "full", tokens=10e9)


@pytest.fixture
def con():
    connection = scratch()
    yield connection
    connection.close()


def node(platform: str, offer_id: str, gpu_model: str, usd_per_gpu_hour: float, **fields: object) -> dict:
    """An 8-GPU machine sold whole, priced per instance as the clouds quote it."""
    return offer(
        platform,
        offer_id,
        gpu_model,
        usd_per_gpu_hour,
        gpu_count=8,
        price_per="instance",
        price_amount=usd_per_gpu_hour * 8,
        **fields,
    )


def speed(job: Job, gpu_model: str, gpus: int, gbps_per_gpu: float) -> float:
    (row,) = job_requirements(job, (gpus,), [gpu_model], gbps_per_gpu / 8)
    assert row.fits
    return row.tokens_per_second


def test_only_offers_the_table_lists_are_joined(con):
    crawl(con, DAY1, "aws", [node("aws", "p5.48xlarge/us-east-1", H100, 6.88)])
    crawl(con, DAY1, "lambda", [node("lambda", "NVIDIA H100 SXM 80 GB/8x", H100, 2.99)])
    crawl(con, DAY1, "vastai", [node("vastai", "48370130", H100, 1.93, available_gpus=8)])
    answer = job_plans.plan_job(con, BIG, start_at=START)
    assert answer.plans and {plan["platform"] for plan in answer.plans} == {"aws"}
    (plan,) = answer.plans
    assert (
        plan["nodes"] > 1 and plan["units_rented"] == plan["nodes"] and plan["gpu_count"] == 8 * plan["nodes"]
    )
    assert (plan["fabric"], plan["internode_gbps_per_gpu"], plan["nodes_stock"]) == (
        "EFA 400",
        400,
        "unknown",
    )
    assert "a cluster of" in job_plans.plan_text(plan) and "over EFA 400" in job_plans.plan_text(plan)
    # the cheaper machines are never joined: lambda's on-demand instances and vastai's overlay are no fabric
    assert all(
        p["platform"] == "aws" for p in job_plans.plan_job(con, BIG, start_at=START, fastest=True).plans
    )
    lines = job_plans.cluster_assumptions(answer.plans)
    assert any("goodput" in line for line in lines) and any("unknown on aws" in line for line in lines)


def test_without_clusters_a_175b_job_has_no_plan(con):
    crawl(con, DAY1, "aws", [node("aws", "p5.48xlarge/us-east-1", H100, 6.88)])
    answer = job_plans.plan_job(con, BIG, start_at=START, max_nodes=1)
    assert not answer.plans and answer.reason and "fits on no GPU" in answer.reason


def test_a_cluster_is_sized_at_its_fabric_and_billed_as_the_offer_with_goodput(con):
    # p4d: 400 Gb/s of EFA per instance of 8 A100s, 50 per GPU; p4de's 80 GB cards are left out
    crawl(con, DAY1, "aws", [node("aws", "p4d.24xlarge/us-east-1", A100_40, 2.75)])
    job = Job("a100", "70B", "full", tokens=2e9, gpus=(A100_40,))
    (plan,) = job_plans.plan_job(con, job, start_at=START).plans
    gpus = plan["gpu_count"]
    assert plan["internode_gbps_per_gpu"] == 50 and plan["fabric"] == "EFA 50"
    tokens_per_second = speed(job, A100_40, gpus, 50)
    assert plan["tokens_per_second"] == pytest.approx(tokens_per_second)
    assert plan["goodput"] == pytest.approx(
        1 / (1 + fabric.INTERRUPTIONS_PER_GPU_HOUR * gpus * 0.30901), rel=1e-4
    )
    hours = 2e9 / (tokens_per_second * 3600) / plan["goodput"]
    assert plan["train_days"] == pytest.approx(hours / 24)
    assert plan["billed_hours"] == math.ceil(hours)
    assert plan["total_usd"] == pytest.approx(2.75 * gpus * math.ceil(hours))
    # at 400 Gb/s the same GPUs would train faster: the fabric, not a fixed figure, sized it
    assert speed(job, A100_40, gpus, 400) > tokens_per_second


def test_never_more_nodes_than_the_stock_shows(con):
    crawl(con, DAY1, "aws", [node("aws", "p5.48xlarge/us-east-1", H100, 6.88, available_gpus=32)])
    job = Job("70b", "70B", "full", tokens=20e9)
    answer = job_plans.plan_job(con, job, start_at=START, fastest=True)
    assert answer.plans and all(plan["gpu_count"] <= 32 for plan in answer.plans)
    assert answer.plans[0]["nodes_stock"] == "shown" and answer.plans[0]["nodes"] == 4
    # where the stock covers no cluster the model fits on, there is no plan, and the reason says why
    crawl(con, DAY2, "aws", [node("aws", "p5.48xlarge/us-east-1", H100, 6.88, available_gpus=24)])
    answer = job_plans.plan_job(con, BIG, start_at=START)
    assert not answer.plans and "or 64 nodes where a platform sells a fabric" in (answer.reason or "")


def test_a_deadline_scales_out_where_one_node_is_too_slow(con):
    crawl(con, DAY1, "aws", [node("aws", "p5.48xlarge/us-east-1", H100, 6.88)])
    crawl(con, DAY1, "cloud", [node("cloud", "h100x8", H100, 2.0)])  # one cheap machine, no fabric
    job = Job("ft", "13B", "full", tokens=20e9)
    (cheapest,) = job_plans.plan_job(con, job, start_at=START).plans
    assert cheapest["platform"] == "cloud" and cheapest["nodes"] == 1
    rushed = Job("ft", "13B", "full", tokens=20e9, within_days=cheapest["train_days"] / 3)
    (plan,) = job_plans.plan_job(con, rushed, start_at=START).plans
    assert plan["platform"] == "aws" and plan["nodes"] >= 3 and plan["train_days"] <= rushed.within_days
    # a job's GPU limit bounds a cluster too
    limited = Job("ft", "13B", "full", tokens=20e9, within_days=cheapest["train_days"] / 3, max_gpus=16)
    assert not job_plans.plan_job(con, limited, start_at=START).plans


def _daily(con, models: tuple[str, ...], max_nodes: int):
    options = PlanOptions(
        models=models, methods=("full",), default_tokens=1e9, price_move_pct=10.0, max_nodes=max_nodes
    )
    plan_sequence.plan_days(con, [DAY1], options)
    return daily_plans.plans_for_date(con, DAY1)


def test_the_daily_tables_plan_a_cluster_where_no_machine_holds_the_model(con):
    crawl(con, DAY1, "aws", [node("aws", "p5.48xlarge/us-east-1", H100, 6.88)])
    crawl(con, DAY1, "lambda", [node("lambda", "NVIDIA H100 SXM 80 GB/8x", H100, 2.99)])
    both = _daily(con, ("13B", "175B"), fabric.DEFAULT_MAX_NODES)
    assert set(both["status"]) == {"ok"}
    small = both[both["model"] == "13B"]  # one machine holds it: its rows beside the clusters' stand
    assert len(small) == 2 and (small["train_days"] > 0).all()
    daily = both[both["model"] == "175B"]
    assert set(daily["platform"]) == {"aws"} and (daily["nodes"] > 1).all()
    run = daily[daily["ranking"] == "lowest_run_total"].iloc[0]
    gpus = int(run["gpu_count"])
    hours = 1e9 / (speed(BIG, H100, gpus, 400) * 3600) / fabric.goodput(gpus)
    assert run["train_days"] == pytest.approx(hours / 24)
    assert run["total_usd"] == pytest.approx(6.88 * gpus * math.ceil(hours))
    # one machine only (GPUPLAN_MAX_NODES 1): the 175B model fits nowhere, as before
    assert set(_daily(con, ("175B",), 1)["status"]) == {"no_offer_fits"}


def test_a_daily_cluster_plan_stores_its_fabric_and_the_digest_names_it(con):
    crawl(con, DAY1, "aws", [node("aws", "p5.48xlarge/us-east-1", H100, 6.88)])
    daily = _daily(con, ("175B",), fabric.DEFAULT_MAX_NODES)
    for plan in daily.to_dict("records"):
        gpus = int(plan["gpu_count"])
        assert (plan["fabric"], plan["internode_gbps_per_gpu"], plan["nodes"]) == ("EFA 400", 400, gpus // 8)
        assert plan["goodput"] == pytest.approx(fabric.goodput(gpus))
    sides = con.execute(
        "SELECT DISTINCT fabric FROM best_plans WHERE subject = 'plan' AND plan_date = $d", {"d": DAY1}
    ).fetchall()
    assert sides == [("EFA 400",)]


def test_no_daily_plan_rents_one_node_of_an_instant_cluster(con):
    crawl(con, DAY1, "aws", [node("aws", "p5.48xlarge/us-east-1", H100, 6.88)])
    # RunPod sells this offer only as 2-8 nodes: never one node alone, however cheap
    crawl(
        con,
        DAY1,
        "runpod",
        [offer("runpod", "NVIDIA H100 80GB HBM3/cluster/US-KS-2", H100, 0.99, gpu_count=8)],
    )
    alone = _daily(con, ("7B", "175B"), 1)
    assert "runpod" not in set(alone["platform"].dropna()) and alone["fabric"].isna().all()
    assert set(alone.loc[alone["model"] == "175B", "status"]) == {"no_offer_fits"}
    joined = _daily(con, ("7B", "175B"), fabric.DEFAULT_MAX_NODES)
    runpod = joined[joined["platform"] == "runpod"]
    assert not runpod.empty and (runpod["nodes"] >= 2).all() and (runpod["fabric"] == "IB/RoCE 400").all()
