"""The plans tables on `gpuplan.display`'s rule, without a warehouse: one plan per line
at 80 columns, the legend below saying what short headers mean and what was hidden, every column
on a wide console or with --wide. `gpuplan refresh` prints the daily table through the same call."""

from __future__ import annotations

import datetime as dt
import io
from zoneinfo import ZoneInfo

import pandas as pd
from rich.console import Console

from gpuplan.plan_tables import Currency, print_job_plans, print_plans

PLAN = {
    "plan_date": pd.Timestamp("2026-11-29"),
    "job_tokens": 1e9,
    "status": "ok",
    "stock_known": False,
    "nodes": 1,
    "pricing_type": "monthly_plan",
    "rent_cny_per_month": 17112.0,
    "rent_usd_per_month": 2572.0,
    "tokens_per_day": 1.22e9,
    "cost_usd_per_billion_tokens": 69.0,
    "train_days": 0.8,
    "total_usd": 2572.0,
    "total_cny": 17112.0,
    "per_gpu_memory_gb": 48.0,
}
DAILY = pd.DataFrame(
    [
        {**PLAN, "model": "7B", "method": "full", "ranking": "lowest_rent", "gpu_model": "Ascend 910B 64GB"}
        | {"gpu_count": 2, "platform": "quotes"},
        {**PLAN, "model": "70B", "method": "qlora", "ranking": "lowest_run_total"}
        | {"gpu_model": "A100 PCIe 40GB", "gpu_count": 16, "platform": "datacrunch", "nodes": 2},
        {**PLAN, "model": "70B", "method": "full", "ranking": "lowest_rent", "status": "no_plan"}
        | {"gpu_model": None, "gpu_count": None, "platform": None},
        {**PLAN, "model": "70B", "method": "full", "ranking": "lowest_run_total"}
        | {"gpu_model": "H100 SXM 80GB", "gpu_count": 16, "platform": "lambda", "nodes": 2}
        | {"pricing_type": "on_demand", "stock_known": True},
    ]
).astype({"gpu_count": "Int64", "nodes": "Int64"})  # as the warehouse gives them
JOB = [  # JobPlans.plans: plain rows
    {"rank": rank, "gpu_model": gpu, "gpu_count": count, "platform": platform, "stock_known": True}
    | {"nodes": 1, "billing_period": "hour", "region": "Japan, JP", "offer_id": "29400102"}
    | {"mfu": 0.18, "price_usd_per_gpu_hour": 0.08, "price_cny_per_gpu_hour": 0.55, "train_days": 25.3}
    | {"finish": dt.datetime(2026, 12, 26, 18, 48), "total_usd": 51.0, "total_cny": 337.0}
    | {"billed_hours": 608}
    for rank, gpu, count, platform in [
        (1, "RTX A4000 16GB", 1, "vastai"),
        (2, "A100 PCIe 40GB", 1, "lambda"),
    ]
]


def _lines(print_table, width: int) -> list[str]:
    buffer = io.StringIO()
    print_table(Console(file=buffer, width=width, force_terminal=False))
    return [line.rstrip() for line in buffer.getvalue().splitlines()]


def _rows(lines: list[str], count: int) -> tuple[list[str], list[str]]:
    rule = next(index for index, line in enumerate(lines) if line.startswith("───"))
    return lines[rule - 1].split(), lines[rule + 1 : rule + 1 + count]


def test_daily_plans_at_80_columns_are_one_line_each_with_the_legend_below() -> None:
    lines = _lines(lambda out: print_plans(out, DAILY), 80)
    assert lines[0] == "Cheapest plans, 2026-11-29"
    assert max(map(len, lines)) <= 80
    header, rows = _rows(lines, len(DAILY))
    assert header == ["model", "by", "plan", "CNY/mo", "USD/Btok", "days", "USD/1B"]
    assert rows[0].split()[:5] == ["7B", "full", "rent", "910B×2", "quotes*"]
    assert "(mo)" in rows[0]
    assert rows[1].split()[3].startswith("A100") and "…" in rows[1]  # too long: cut, the numbers whole
    assert rows[1].split()[-4:] == ["17,112", "69", "0.8", "2,572"]
    assert "no offer fits" in rows[2]
    assert rows[3].split()[3:7] == ["H100×16", "lambda", "[2", "nodes]"]
    legend = " ".join(lines[lines.index(rows[-1]) + 1 :])
    assert legend.startswith("by: rent least rent for a month")
    assert "USD/1B: that run in total as billed" in legend
    assert "hidden at this width: USD/mo, Mtok/day, CNY/1B, GB/GPU; --wide shows all" in legend


def test_daily_plans_show_every_column_on_a_wide_console_or_with_wide() -> None:
    every = ["model", "by", "plan", "CNY/mo", "USD/mo", "Mtok/day", "USD/Btok", "days", "USD/1B"]
    every += ["CNY/1B", "GB/GPU"]
    for lines in (
        _lines(lambda out: print_plans(out, DAILY), 200),
        _lines(lambda out: print_plans(out, DAILY, wide=True), 80),
    ):
        header, rows = _rows(lines, len(DAILY))
        assert header == every
        assert rows[0].split()[-8:] == ["17,112", "2,572", "1,220", "69", "0.8", "2,572", "17,112", "48.0"]
        assert not any("hidden" in line for line in lines)


def test_job_plans_at_80_columns_keep_the_plan_whole_and_say_the_year_once() -> None:
    zone = ZoneInfo("Asia/Shanghai")
    lines = _lines(lambda out: print_job_plans(out, JOB, Currency.USD, zone), 80)
    assert max(map(len, lines)) <= 80
    header, rows = _rows(lines, len(JOB))
    assert header == ["#", "plan", "bill", "MFU", "USD/GPU-h", "days", "finish", "USD", "total"]
    assert rows[1].split()[:4] == ["2", "A100", "PCIe", "40GB×1"] and "lambda" in rows[1]
    assert "12-27 02:48" in rows[0]  # local time; the year is in the legend
    legend = " ".join(lines[lines.index(rows[-1]) + 1 :])
    assert legend.startswith("plan: GPU×count platform")
    assert "finish: if started now (Asia/Shanghai, 2026)" in legend
    assert "hidden at this width: region, offer, billed h, CNY total" in legend
    wide = _lines(lambda out: print_job_plans(out, JOB, Currency.CNY, zone, wide=True), 80)
    header, rows = _rows(wide, len(JOB))
    assert {"region", "offer", "billed", "USD"} <= set(header)
    assert "2026-12-27 02:48" in rows[0] and "0.55" in rows[0] and "29400102" in rows[0]


def test_a_long_platform_name_stays_whole_at_80_columns_the_mfu_goes_first() -> None:
    """primeintellect, tencentcloud: with 28 platforms a plan label is up to 22 cells; finishing in
    two years, the finish column is a full date. The plan is what the line is about: MFU gives way."""
    zone = ZoneInfo("Asia/Shanghai")
    job = [
        JOB[0] | {"gpu_model": "B200 180GB", "gpu_count": 8, "platform": "primeintellect"},
        JOB[1] | {"finish": dt.datetime(2027, 1, 4, 21, 43)},
    ]
    lines = _lines(lambda out: print_job_plans(out, job, Currency.USD, zone), 80)
    assert max(map(len, lines)) <= 80
    header, rows = _rows(lines, len(job))
    assert "B200×8 primeintellect " in rows[0]
    assert "MFU" not in header
    assert "hidden at this width: region, offer, MFU, billed h, CNY total" in " ".join(lines)
