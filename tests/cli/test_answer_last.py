"""The answer comes last, and short: what `plans --tokens` and `size` show at 80 columns.

A job's plans end with one line naming the cheapest plan and the fastest (total and finish), after
a table of the best ten and a one-line summary of the sizing's assumptions; `--all` and
`--explain` show the rest. `size` lists the GPU types that fit by count then speed, folds the
others into one line, and leaves out memory components that are zero: at most 60 lines.
"""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner, Result

from config.settings import Settings
from gpuplan.cli import app
from gpuplan.commands.plans import JOB_ROWS
from gpuplan.commands.size import FITTING_ROWS

JOB = ["plans", "--model", "qwen2.5-14b", "--method", "lora", "--tokens", "500M", "--within", "4d"]


def _run(settings: Settings | None, *args: str) -> Result:
    where = ["--warehouse", str(settings.warehouse)] if settings else []
    return CliRunner(env={"COLUMNS": "80"}).invoke(app, [*where, *args])


def test_a_job_ends_with_its_cheapest_and_fastest_plan(recorded: Settings) -> None:
    result = _run(recorded, *JOB)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    plans = json.loads(_run(recorded, *JOB, "--json").stdout)
    assert len(plans) > JOB_ROWS  # else the cap shows nothing
    rule = next(i for i, line in enumerate(lines) if line.startswith("───"))
    rows = [line for line in lines[rule + 1 :] if re.match(r"\s*\d+\s+.*×\d", line)]
    assert len(rows) == JOB_ROWS
    assert f"{len(plans) - JOB_ROWS} more GPU models, ranked lower; --all shows them" in lines
    # one line of assumptions, then the answer: both on the last screen of an 80x24 terminal
    assumed = next(i for i, line in enumerate(lines) if line.startswith("assumes llamafactory, seq 2048, "))
    assert "least ZeRO" in lines[assumed] and "Megatron-Core MFU" in lines[assumed]
    assert lines[assumed].endswith(f"all {len(plans[0]['assumptions'])}: --explain")
    assert len(lines) - assumed <= 3 and len(lines) <= 24
    cheapest = min(plans, key=lambda plan: (plan["total_usd"], plan["finish"]))
    fastest = min(plans, key=lambda plan: (plan["finish"], plan["total_usd"]))
    assert cheapest is not fastest
    answer = lines[assumed + 1 :]
    assert answer[0].startswith("cheapest: ") and f" {cheapest['platform']}, $" in answer[0]
    assert f"${cheapest['total_usd']:,.0f}, done " in answer[0]
    assert answer[-1].startswith(("fastest: ", "cheapest: ")) and f" {fastest['platform']}, $" in answer[-1]
    assert max(len(line) for line in lines) <= 80


def test_all_and_explain_show_the_rest(recorded: Settings) -> None:
    plans = json.loads(_run(recorded, *JOB, "--json").stdout)
    result = _run(recorded, *JOB, "--all", "--explain")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    rows = [line for line in lines if re.match(r"\s*\d+\s+.*×\d", line)]
    assert len(rows) == len(plans)
    assert not any("more GPU models" in line for line in lines)
    assert "Assumptions:" in lines and "flash attention on" in result.stdout
    assert lines[-1].startswith(("cheapest", "fastest"))


def test_all_and_explain_plan_a_job(recorded: Settings) -> None:
    result = _run(recorded, "plans", "--all")
    assert result.exit_code == 1
    assert "--all plan a job: give --tokens too" in result.output


def test_size_70b_full_fits_60_lines_at_80_columns() -> None:
    result = _run(None, "size", "70B", "--method", "full")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) <= 60 and max(len(line) for line in lines) <= 80
    # no zero rows in the memory breakdown (full training holds no sharding buffers on one replica)
    table = lines[lines.index("Memory, one unsharded replica (GB = 1e9 bytes)") :]
    memory = table[3 : next(i for i, line in enumerate(table) if line.startswith("total"))]
    assert memory and all(float(line.split()[-1]) > 0 for line in memory)
    assert not any(line.startswith("sharding_buffers") for line in lines)
    assert sum(line.startswith("assumes llamafactory") for line in lines) == 1
    data = json.loads(_run(None, "size", "70B", "--method", "full", "--json").stdout)
    fitting = sorted(
        (plan for plan in data["plans"] if plan["fits"]), key=lambda p: (p["gpu_count"], -p["tokens_per_day"])
    )
    failing = [plan["gpu"] for plan in data["plans"] if not plan["fits"]]
    assert failing and len(fitting) > FITTING_ROWS
    rule = next(i for i, line in enumerate(lines) if line.split()[:2] == ["GPU", "count"]) + 1
    shown = lines[rule + 1 : rule + 1 + FITTING_ROWS]
    # fewest GPUs first, the fastest first among as many
    assert [int(line.split()[-8]) for line in shown] == [p["gpu_count"] for p in fitting[:FITTING_ROWS]]
    assert [line.split()[-2] for line in shown] == [
        f"{p['tokens_per_day'] / 1e6:,.0f}" for p in fitting[:FITTING_ROWS]
    ]
    more = f"{len(fitting) - FITTING_ROWS} more fit on "
    assert any(line.startswith(more) and line.endswith("; --all lists them") for line in lines)
    start = next(i for i, line in enumerate(lines) if line.startswith("do not fit"))
    folded = " ".join(" ".join(lines[start:]).split())
    assert folded.startswith(f"do not fit on 64 GPUs ({len(failing)}): ")
    assert all(gpu in folded for gpu in failing)
    assert not any(line.startswith(f"{failing[0]} ") for line in lines)  # no row of its own


def test_size_all_lists_every_fitting_gpu() -> None:
    every = _run(None, "size", "70B", "--method", "full", "--all", "--explain")
    assert every.exit_code == 0, every.output
    data = json.loads(_run(None, "size", "70B", "--method", "full", "--json").stdout)
    for plan in data["plans"]:
        if plan["fits"]:
            assert sum(line.startswith(f"{plan['gpu']} ") for line in every.stdout.splitlines()) == 1
    assert "Assumptions:" in every.stdout and "more fit on" not in every.stdout
