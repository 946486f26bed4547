"""Job plans on the offline warehouse, each "done when" item pinned.

Two offline refreshes (`gpuplan refresh --offline`: the real spiders replaying their bundled
snapshots, the real loader, sizing model and plan SQL) with a jobs file: DAY1 with every platform,
DAY2 with autodl only. The platforms not crawled on DAY2 keep their last good crawl (stale), so a job
left alone keeps its plan; the user narrowed one job to autodl that day, so its best plan changes.
Then the ad-hoc `gpuplan plans --tokens` on that warehouse, checked against `gpuplan size` and the
offers.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from typer.testing import CliRunner

from gpuplan.cli import app
from gpuplan.commands.plans import JOB_ROWS
from sizing import fabric
from sizing.jobs import Job, parse_duration
from warehouse import daily_plans, job_plans, requirements

pytestmark = pytest.mark.slow

DAY1, DAY2 = "2026-11-29", "2026-11-30"
START = datetime(2026, 12, 1, 8, 0)
JOBS = """\
# SYNTHETIC jobs for the test: one that changes plan when only autodl crawls, one impossible
- name: qwen-lora
  model: qwen2.5-14b
  method: lora
  tokens: 500M
  epochs: 3
  within_days: 4
- name: impossible
  model: 70B
  method: full
  tokens: 10B
  within_days: 1h
  gpus: [4090]
- name: steady
  model: qwen2.5-14b
  method: lora
  tokens: 500M
  epochs: 3
  within_days: 4
"""
# DAY2's file: qwen-lora narrowed to autodl (its plan changes); steady as it was (its plan stays).
JOBS_DAY2 = JOBS.replace(
    "  within_days: 4\n- name: impossible", "  within_days: 4\n  platforms: [autodl]\n- name: impossible"
)


def _cli(env: dict[str, str], *args: str, columns: int = 200):
    return CliRunner().invoke(app, list(args), env={**env, "COLUMNS": str(columns)}, catch_exceptions=False)


@pytest.fixture(scope="module")
def offline(tmp_path_factory) -> dict[str, str]:
    """The environment of a warehouse refreshed offline for DAY1 (all platforms) and DAY2 (autodl)."""
    root = tmp_path_factory.mktemp("jobs")
    (root / "jobs.yaml").write_text(JOBS, encoding="utf-8")
    env = {
        "GPUPLAN_WAREHOUSE": str(root / "warehouse.duckdb"),
        "GPUPLAN_CRAWL_DIR": str(root / "crawls"),
        "GPUPLAN_JOBS": str(root / "jobs.yaml"),
        # the daily tables' model list extended past one machine (the default stays 7B..70B)
        "GPUPLAN_MODELS": "7B,13B,30B,70B,175B",
    }
    for args, jobs in ((["--date", DAY1], JOBS), (["--date", DAY2, "--platform", "autodl"], JOBS_DAY2)):
        (root / "jobs.yaml").write_text(jobs, encoding="utf-8")
        result = _cli(env, "refresh", "--offline", *args)
        assert result.exit_code == 0, result.output
    return env


def _plans(env: dict[str, str], *args: str) -> list[dict]:
    result = _cli(env, "plans", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # a GPU name's note goes to stderr


def test_a_jobs_file_gives_job_plans_and_changes_for_the_digest(offline):
    with duckdb.connect(offline["GPUPLAN_WAREHOUSE"], read_only=True) as con:
        first = job_plans.job_plans_for_date(con, pd.Timestamp(DAY1).date())
        second = job_plans.job_plans_for_date(con, pd.Timestamp(DAY2).date())
        changes = daily_plans.changes_for_date(con, pd.Timestamp(DAY2).date(), subject="job")
    for day in (first, second):
        assert set(day["job"]) == {"qwen-lora", "impossible", "steady"}
        impossible = day[day["job"] == "impossible"]
        assert impossible[["rank", "status"]].values.tolist() == [[1, "no_plan"]]
        assert impossible["reason"].iloc[0]  # a stated reason
    best1 = first[(first["job"] == "qwen-lora") & (first["rank"] == 1)].iloc[0]
    best2 = second[(second["job"] == "qwen-lora") & (second["rank"] == 1)].iloc[0]
    assert best1["platform"] != "autodl" and best2["platform"] == "autodl"
    assert best2["train_days"] <= 4 and best2["total_usd"] > 0 and best2["billing_period"] == "hour"
    assert (first[first["job"] == "qwen-lora"]["rank"].tolist()) == list(
        range(1, (first["job"] == "qwen-lora").sum() + 1)
    )
    qwen = changes[changes["job"] == "qwen-lora"]
    assert "new_platform" in set(qwen["change_type"])
    line = qwen[qwen["change_type"] == "new_platform"]["detail"].iloc[0]
    assert line.startswith(f"{best1['platform']} {best1['gpu_model']} x") and " -> autodl " in line
    assert "impossible" not in set(changes["job"])  # no plan either day: nothing changed
    # steady was left alone: the platforms not crawled on DAY2 stand in with their last good crawl
    steady1 = first[(first["job"] == "steady") & (first["rank"] == 1)].iloc[0]
    steady2 = second[(second["job"] == "steady") & (second["rank"] == 1)].iloc[0]
    assert (steady2["platform"], steady2["offer_id"]) == (steady1["platform"], steady1["offer_id"])
    assert steady2["platform"] != "autodl" and bool(steady2["stale"]) and not bool(steady1["stale"])
    # same offer; its GPU count may move, since a carried offer's stock is unknown (stale)
    steady = changes[changes["job"] == "steady"]
    assert not {"new_platform", "new_gpu"} & set(steady["change_type"])


def test_train_days_match_gpuplan_size_for_the_same_gpus(offline):
    records = _plans(offline, "--model", "13B", "--method", "lora", "--tokens", "1B")
    assert len(records) >= 3
    for plan in records[:4]:
        size = _cli(
            offline,
            "size",
            "13B",
            "--method",
            "lora",
            "--gpu",
            plan["gpu_model"],
            "--gpus",
            str(plan["gpu_count"]),
            "--json",
        )
        assert size.exit_code == 0, size.output
        tokens_per_second = json.loads(size.output)["tokens_per_second"]
        assert plan["train_days"] == pytest.approx(1e9 / tokens_per_second / 86400, rel=1e-4)
        assert plan["mfu"] == pytest.approx(json.loads(size.output)["mfu"], abs=1e-4)


def test_an_hourly_total_is_price_times_gpus_times_hours_rounded_up(offline):
    records = _plans(offline, "--model", "7B", "--method", "qlora", "--tokens", "300M")
    hourly = [plan for plan in records if plan["billing_period"] == "hour"]
    assert len(hourly) >= 3
    for plan in hourly:
        hours = math.ceil(plan["train_days"] * 24 - 1e-9)
        assert plan["billed_hours"] == hours
        assert plan["total_usd"] == pytest.approx(plan["price_usd_per_gpu_hour"] * plan["gpu_count"] * hours)


def test_a_monthly_quote_never_costs_less_than_its_minimum_term(offline):
    with duckdb.connect(offline["GPUPLAN_WAREHOUSE"], read_only=True) as con:
        terms = dict(
            con.execute(
                "SELECT offer_id, min_term_periods FROM latest_offers WHERE billing_period = 'month'"
            ).fetchall()
        )
    assert terms
    for tokens in ("10M", "1B", "20B"):
        records = _plans(
            offline, "--model", "7B", "--method", "lora", "--tokens", tokens, "--platform", "quotes"
        )
        assert records and {plan["billing_period"] for plan in records} == {"month"}
        for plan in records:
            least = plan["price_usd_per_gpu_hour"] * plan["gpu_count"] * 730 * terms[plan["offer_id"]]
            assert plan["total_usd"] >= least * (1 - 1e-9)
            assert plan["billed_hours"] >= plan["train_days"] * 24
            assert plan["billed_hours"] % 730 == 0


def test_a_tighter_deadline_never_gives_a_cheaper_best_plan(offline):
    totals = []
    for within in (None, "30d", "10d", "5d", "3d", "2d", "36h", "1d", "12h", "6h", "2h"):
        args = ["plans", "--json", "--model", "13B", "--method", "lora", "--tokens", "2B"]
        result = _cli(offline, *args, *(["--within", within] if within else []))
        if result.exit_code != 0:
            break
        best = json.loads(result.stdout)[0]
        assert within is None or best["train_days"] <= parse_duration(within) / timedelta(days=1)
        totals.append(best["total_usd"])
    assert len(totals) >= 5, totals
    assert totals == sorted(totals)


def test_an_impossible_deadline_is_one_clear_line_naming_the_fastest_plan(offline):
    result = _cli(offline, "plans", "--model", "70B", "--method", "full", "--tokens", "10B", "--within", "1h")
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: no plan finishes by ")
    assert ": the fastest is " in line and ", finishing " in line and "(Asia/Shanghai)" in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "7Q", "--method", "lora", "--tokens", "1B"], "error: unknown model '7Q'"),
        (["--model", "7B", "--method", "lora", "--tokens", "0"], "error: --tokens must be more than 0"),
        (
            ["--model", "7B", "--method", "lora", "--tokens", "1e30"],
            "error: --tokens must be more than 0 and at most 1000T",
        ),
        (
            ["--model", "7B", "--method", "lora", "--tokens", "1B", "--within", "2020-01-01"],
            "error: --within: the deadline 2020-01-01",
        ),
        (
            ["--model", "7B", "--method", "lora", "--tokens", "1B", "--within", "soon"],
            "error: --within takes 36h",
        ),
        (["--model", "7B", "--tokens", "1B"], "error: --tokens plans a job: give --model and --method"),
        (["--within", "3d"], "error: --within plan a job: give --tokens too"),
        (["--gpu", "H1000"], "error: unknown GPU 'H1000'"),
    ],
)
def test_bad_input_is_one_line_and_a_non_zero_exit(offline, args, message):
    result = _cli(offline, "plans", *args)
    assert result.exit_code != 0
    (line,) = result.output.strip().splitlines()
    assert line.startswith(message), line


def test_an_ad_hoc_plan_writes_nothing(offline):
    published = Path(offline["GPUPLAN_WAREHOUSE"])
    before = (published.stat().st_mtime_ns, published.read_bytes())
    assert _cli(offline, "plans", "--model", "7B", "--method", "lora", "--tokens", "1B").exit_code == 0
    assert (published.stat().st_mtime_ns, published.read_bytes()) == before


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--gpu", "H100"],
        ["--model", "qwen2.5-14b", "--method", "lora", "--tokens", "500M", "--epochs", "3", "--within", "4d"],
        ["--model", "7B", "--method", "qlora", "--tokens", "1B", "--fastest", "--currency", "CNY"],
    ],
)
def test_at_80_columns_one_plan_per_line_and_no_line_longer(offline, args):
    result = _cli(offline, "plans", *args, columns=80)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    hidden = next(i for i, line in enumerate(lines) if line.startswith("hidden at this width"))
    # the table and its legend fit; a note after them (offers left out) is prose, one line each
    assert max(len(line.rstrip()) for line in lines[: hidden + 1]) <= 80
    plans = len(_plans(offline, *args))
    if "--tokens" in args:  # a job's table lists its best JOB_ROWS (--all: every one)
        plans = min(plans, JOB_ROWS)
    rule = next(index for index, line in enumerate(lines) if line.startswith("───"))
    rows, after = lines[rule + 1 : rule + 1 + plans], lines[rule + 1 + plans]
    assert all("×" in row or "no offer fits" in row for row in rows), rows  # none wrapped
    assert after.startswith(("by: ", "plan: "))  # then the legend: no more rows than plans
    assert any(line.startswith("hidden at this width: ") for line in lines[rule + 1 + plans :])
    wide = _cli(offline, "plans", *args, "--wide", columns=80)
    assert wide.exit_code == 0 and max(len(line) for line in wide.stdout.splitlines()) > 80


def test_a_bad_jobs_file_is_one_line_and_a_non_zero_refresh_while_the_rest_runs(tmp_path):
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(JOBS.replace("tokens: 500M", "tokens: lots"), encoding="utf-8")
    env = {
        "GPUPLAN_WAREHOUSE": str(tmp_path / "warehouse.duckdb"),
        "GPUPLAN_CRAWL_DIR": str(tmp_path / "crawls"),
        "GPUPLAN_JOBS": str(jobs),
    }
    result = _cli(env, "refresh", "--offline", "--date", DAY1, "--platform", "quotes")
    assert result.exit_code == 1
    # one line per day run: the recorded day before (a first offline run replays it) and the day
    lines = [line for line in result.output.splitlines() if "job_plans" in line]
    assert 1 <= len(lines) <= 2
    assert all(f"{jobs} line 5: job 'qwen-lora': tokens must be" in line for line in lines)
    assert "Cheapest plans" in result.output  # the daily plans were made and printed


def test_a_175b_job_plans_clusters_on_three_platforms_that_sell_a_fabric(offline):
    records = _plans(offline, "--model", "175B", "--method", "full", "--tokens", "10B")
    platforms = {plan["platform"] for plan in records}
    assert len(platforms) >= 3
    for plan in records:
        listed = fabric.fabric_for(plan["platform"], plan["offer_id"])
        assert listed is not None and plan["fabric"] == listed.label and plan["nodes"] > 1
        assert plan["internode_gbps_per_gpu"] == listed.internode_gbps_per_gpu
        assert plan["train_days"] > 0 and plan["total_usd"] > 0 and plan["finish"]
        assert plan["nodes_stock"] in ("shown", "unknown")
    table = _cli(offline, "plans", "--model", "175B", "--method", "full", "--tokens", "10B")
    assert table.exit_code == 0, table.output
    assert any(f"[{plan['nodes']} nodes, {plan['fabric']}]" in table.output for plan in records)


def test_a_70b_job_within_14_days_scales_out_to_a_plan(offline):
    records = _plans(offline, "--model", "70B", "--method", "full", "--tokens", "20B", "--within", "14d")
    assert records and all(plan["train_days"] <= 14 for plan in records)
    assert any(plan["nodes"] > 1 and plan["fabric"] for plan in records)


def test_no_plan_on_any_platform_joins_nodes_of_an_offer_the_table_does_not_list(offline):
    with duckdb.connect(offline["GPUPLAN_WAREHOUSE"], read_only=True) as con:
        platforms = sorted(
            row[0] for row in con.execute("SELECT DISTINCT platform FROM latest_offers").fetchall()
        )
        # fast and slow jobs, per platform: the fastest plans take the most nodes anything allows
        jobs = [
            Job(f"{platform}-{model}", model, method, tokens=tokens, platforms=(platform,))
            for platform in platforms
            for model, method, tokens in (("175B", "full", 10e9), ("70B", "full", 20e9), ("7B", "lora", 1e9))
        ]
        answers = job_plans.plan_jobs(con, jobs, start_at=START, fastest=True)
    assert len(platforms) >= 20
    joined = set()
    for answer in answers:
        for plan in [*answer.plans, *([answer.fastest] if answer.fastest else [])]:
            if plan["units_rented"] > 1 and plan["nodes"] > 1:  # separate machines put together
                listed = fabric.fabric_for(plan["platform"], plan["offer_id"])
                assert listed is not None, plan
                assert plan["fabric"] == listed.label
                joined.add(plan["platform"])
            else:
                assert plan["fabric"] is None
    assert joined and joined <= {row.platform for row in fabric.load_fabrics() if row.crawled}


def test_a_daily_175b_plan_joins_nodes_over_a_listed_fabric(offline):
    with duckdb.connect(offline["GPUPLAN_WAREHOUSE"], read_only=True) as con:
        daily = daily_plans.plans_for_date(con, pd.Timestamp(DAY1).date(), model="175B", method="full")
    assert set(daily["ranking"]) == set(daily_plans.RANKINGS) and (daily["status"] == "ok").all()
    for plan in daily.to_dict("records"):
        listed = fabric.fabric_for(plan["platform"], plan["offer_id"])
        assert listed is not None and plan["fabric"] == listed.label and plan["nodes"] > 1
        assert plan["internode_gbps_per_gpu"] == listed.internode_gbps_per_gpu
        assert plan["goodput"] == pytest.approx(fabric.goodput(plan["gpu_count"]))
    table = _cli(offline, "plans", "--date", DAY1, "--model", "175B", "--method", "full", "--wide")
    assert table.exit_code == 0, table.output
    assert any(
        f"[{plan['nodes']} nodes, {plan['fabric']}]" in table.output for plan in daily.to_dict("records")
    )


def test_no_daily_plan_on_any_platform_joins_nodes_of_an_offer_the_table_does_not_list(offline):
    day = pd.Timestamp(DAY1).date()
    with duckdb.connect(offline["GPUPLAN_WAREHOUSE"], read_only=True) as con:
        candidates = con.execute("SELECT * FROM plan_candidates WHERE plan_date = $d", {"d": day}).df()
        # every way the day's plans could rent any platform's offers, clusters included: the shapes
        # the candidates are picked from (plan_shapes with the daily plans' fabrics)
        shapes = con.execute(
            "SELECT * FROM plan_shapes($d, $d, (SELECT map_from_entries(list(DISTINCT (gpu_model, "
            "gpus_per_node))) FROM plan_requirements WHERE plan_date = $d), 64, fabrics := $fabrics)",
            {"d": day, "fabrics": requirements.fabric_rows(fabric.DEFAULT_MAX_NODES)},
        ).df()
    assert shapes["platform"].nunique() >= 20
    for rows in (candidates, shapes):
        joined = rows[(rows["units_rented"] > 1) & (rows["nodes"] > 1)]
        assert not joined.empty
        for plan in joined.to_dict("records"):
            listed = fabric.fabric_for(plan["platform"], plan["offer_id"])
            assert listed is not None, plan
            assert plan["fabric"] == listed.label
        assert rows.loc[~rows.index.isin(joined.index), "fabric"].isna().all()
    assert set(candidates.loc[candidates["fabric"].notna(), "model"]) >= {"175B"}
