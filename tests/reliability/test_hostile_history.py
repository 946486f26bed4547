"""Hostile history files: dates in the future, counts past INTEGER, no rows.

Each test writes a small file in the format of a public tracker (SYNTHETIC rows: providers and
prices of our own making, columns as the real files have them, see tests/scrapers/history) and
runs `gpuplan import` on a real warehouse, then reads the warehouse back. Before the fix: a row
dated 2099 loaded and `gpuplan backfill` wrote plans for 2099-12-31; a count of 1e20 became
-9223372036854775808 or aborted the import with an INT32 cast error naming no row; a header-only
observations file crashed with a pandas merge error.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner, Result
from warehouse_template import migrated

from gpuplan.cli import app
from scrapers.history.paths import latest_real_day
from warehouse import imports
from warehouse.engine import connect

pytestmark = pytest.mark.faults

OBSERVATIONS_HEADER = (
    "date,provider,gpu_model,gpu_count,region,rental_type,price_min_usd,price_median_usd,"
    "price_max_usd,n_offers,source_url,fetched_at\n"
)


def _observation(day: str, gpu_count: str = "1", provider: str = "synthcloud") -> str:
    return (
        f"{day},{provider},H100,{gpu_count},us,on_demand,2.0,2.1,2.2,3,"
        f"https://synthcloud.invalid/,{day}T01:00:00Z\n"
    )


def _run(warehouse: Path, *args: str) -> Result:
    return CliRunner(env={"COLUMNS": "200"}).invoke(
        app, ["--warehouse", str(warehouse), *args], catch_exceptions=False
    )


def test_history_dated_in_the_future_is_refused(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse.duckdb"
    path = tmp_path / "observations.csv"
    path.write_text(OBSERVATIONS_HEADER + _observation("2026-03-01") + _observation("2099-12-31"), "utf-8")
    result = _run(warehouse, "import", "observations", str(path))
    assert result.exit_code == 1  # loaded what it could; the exit status says not all of it
    assert "refused rows of observations.csv: date is in the future" in " ".join(result.stdout.split())
    with connect.reader(warehouse) as con:
        assert con.execute("SELECT max(observed_date) FROM offers").fetchall() == [(dt.date(2026, 3, 1),)]
        assert con.execute("SELECT count(*) FROM crawl_runs WHERE started_at > now()").fetchall() == [(0,)]
    dated = tmp_path / "lambda_vms_2099-12-31.csv"
    dated.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,Price,Region,GpuInfo,SpotPrice\n", "utf-8"
    )
    refused = _run(warehouse, "import", "skypilot", str(dated))
    assert "the day 2099-12-31 (its name) is in the future" in " ".join(refused.stdout.split())

    # A warehouse that took such a row before the fix: backfill still plans no day after tomorrow.
    runs = pd.DataFrame(
        [
            {
                "crawl_id": "old-2099",
                "platform": "synthcloud",
                "day": dt.date(2099, 12, 31),
                "items_yielded": 1,
                "rows_refused": 0,
                "problem": None,
            }
        ]
    )
    offer = {
        "crawl_id": "old-2099",
        "row_no": 0,
        "item_json": "{}",
        "platform": "synthcloud",
        "offer_id": "old",
        "region": "us",
        "gpu_name_raw": "H100",
        "gpu_model": "H100 SXM 80GB",
        "gpu_form": "SXM",
        "gpu_memory_gb": 80.0,
        "gpu_count": 1,
        "price_amount": 2.0,
        "price_currency": "USD",
        "price_per": "gpu",
        "billing_period": "hour",
        "min_term_periods": 1,
        "pricing_type": "on_demand",
        "available_gpus": None,
        "source_url": "https://synthcloud.invalid/",
        "observed_at": "2099-12-31T00:00:00Z",
    }
    with connect.writer(migrated(warehouse)) as con:
        imports.load_imported(
            con,
            "import:observations",
            "old.csv",
            runs,
            pd.DataFrame([offer]),
            pd.DataFrame(columns=list(imports.IMPORT_REFUSED_COLUMNS)),
        )
    backfilled = _run(warehouse, "backfill")
    assert backfilled.exit_code == 0, backfilled.output
    with connect.reader(warehouse) as con:
        ((latest_plan,),) = con.execute("SELECT max(plan_date) FROM cheapest_plans").fetchall()
    assert latest_plan == dt.date(2026, 3, 1) and latest_plan <= latest_real_day()


@pytest.mark.parametrize("file_format", ["observations", "skypilot", "gpuhunt"])
def test_a_count_of_1e20_refuses_that_row_only(tmp_path: Path, file_format: str) -> None:
    warehouse = tmp_path / "warehouse.duckdb"
    files = {
        "observations": (
            "observations.csv",
            OBSERVATIONS_HEADER
            + _observation("2026-03-01", "1e20")
            + _observation("2026-03-01", "1", "othercloud"),
        ),
        "skypilot": (
            "synthcloud_vms_2026-03-01.csv",
            "InstanceType,AcceleratorName,AcceleratorCount,Price,Region,GpuInfo,SpotPrice\n"
            "huge,H100,1e20,2.0,us,,\nsmall,H100,1,2.0,us,,\n",
        ),
        "gpuhunt": (
            "20260301-1/synthcloud.csv",
            "instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,disk_size\n"
            "huge,us,2.0,8,64,1e20,H100,80,False,100\nsmall,us,2.0,8,64,1,H100,80,False,100\n",
        ),
    }
    name, content = files[file_format]
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, "utf-8")
    result = _run(warehouse, "import", file_format, str(path))
    said = " ".join(result.stdout.split())
    # a SkyPilot catalog reads as its spiders read it, with their reason codes
    assert ("gpu_count_invalid" if file_format == "skypilot" else "is over 2147483647") in said, said
    with connect.reader(warehouse) as con:
        assert con.execute("SELECT count(*), max(gpu_count) FROM offers").fetchall() == [(1, 1)]
        (raw,) = con.execute("SELECT raw FROM rejected_offers").fetchone() or ("",)
        assert "1e20" in raw  # the row kept as written


def test_a_header_only_observations_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "observations.csv"
    path.write_text(OBSERVATIONS_HEADER, "utf-8")
    result = _run(tmp_path / "warehouse.duckdb", "import", "observations", str(path))
    assert result.exit_code == 1
    assert "not imported: observations.csv has a header and no rows" in result.stdout
