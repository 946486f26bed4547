"""Bench: `gpuplan import` of a big file in bounded memory, against DuckDB's own read of the same file.

    /work/venv/bin/python bench/bench_import.py [--quick] [--rows 7000000] [--days 365]
                                                [--format observations] [--chunk-rows N] [--dir DIR] [--keep]

Writes a SYNTHETIC file in the format the README documents (`--format observations`: the tracker's
daily observations CSV, `date, provider, gpu_model, gpu_count, region, rental_type, price_min_usd,
price_median_usd, price_max_usd, n_offers, source_url, fetched_at`, as
`scrapers/history/observations.py` reads it; 1 row in 1,000 with a price that is no number, so the
refusals are exercised), `--rows` rows spread evenly over `--days` days ending 2026-11-30
(default 365: a year of daily history is the size of the 7M-row file users import), 30
providers. `--format skypilot` writes one cloud's `vms.csv` (SkyPilot's columns) instead, `--format
gpuhunt` one provider's gpuhunt catalog CSV (SYNTHETIC H100 rows, 1 in 1,000 priced `n/a`). Then, each
in a fresh child process so that each peak RSS is its own:

- yardstick: DuckDB's `CREATE TABLE ... AS SELECT * FROM read_csv(file)` into a fresh database file,
  with the import's memory limit (`warehouse.imports.IMPORT_SETTINGS`);
- import: `warehouse.imports.import_file` (what `gpuplan import` calls) on a fresh migrated warehouse
  opened by `warehouse.engine.connect.writer` (publish off: publishing is the same for every writer).

Prints wall time, the ratio to the yardstick, peak RSS of each, and the offers, refusals and runs
stored. Targets: peak RSS <= 2 GiB at 7M rows; time <= 3x the yardstick. Exits 1 when missed
(with `--quick` only the run itself is checked). The file is not kept unless `--keep`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

TARGET_RSS_MB = 2048
TARGET_RATIO = 3.0
DAYS = 365
LAST_DAY = "2026-11-30"
PROVIDERS = 30

OBSERVATIONS_SQL = """
    WITH r AS (SELECT range AS i FROM range($rows))
    SELECT
        CAST(DATE '2026-11-30' - CAST(i // $per_day AS INTEGER) AS VARCHAR) AS date,
        ['runpod', 'vast.ai', 'lambda', 'aws', 'gcp', 'azure', 'oci', 'nebius', 'hyperstack',
         'datacrunch', 'tensordock', 'fluidstack', 'paperspace', 'coreweave', 'crusoe', 'vultr',
         'linode', 'scaleway', 'ovh', 'jarvislabs', 'massed compute', 'shadeform', 'seeweb',
         'primeintellect', 'cudo', 'latitude', 'voltage park', 'together', 'genesis', 'acecloud'][
            1 + CAST((i % $per_day) * 30 // $per_day AS INTEGER)] AS provider,
        ['H100_SXM', 'A100_SXM_80GB', 'RTX_4090', 'H200', 'L40S', 'A10', 'RTX_3090', 'B200',
         'A100_PCIE_40GB', 'L4'][1 + CAST(i % 10 AS INTEGER)] AS gpu_model,
        [1, 2, 4, 8][1 + CAST((i // 10) % 4 AS INTEGER)] AS gpu_count,
        'region-' || ((i // 40) % 20) AS region,
        CASE WHEN (i // 200) % 3 = 0 THEN 'spot' ELSE 'on_demand' END AS rental_type,
        CASE WHEN i % 1000 = 999 THEN 'n/a'
             ELSE CAST(round(0.2 + (hash(i) % 500) / 100.0, 2) AS VARCHAR) END AS price_min_usd,
        round(0.3 + (hash(i) % 500) / 100.0, 2) AS price_median_usd,
        round(0.4 + (hash(i) % 500) / 100.0, 2) AS price_max_usd,
        1 + hash(i) % 40 AS n_offers,
        'https://getdeploying.com' AS source_url,
        CAST(DATE '2026-11-30' - CAST(i // $per_day AS INTEGER) AS VARCHAR) || 'T21:00:03.28764+00:00'
            AS fetched_at
    FROM r
"""

SKYPILOT_SQL = """
    WITH r AS (SELECT range AS i FROM range($rows))
    SELECT
        'gpu_' || [1, 2, 4, 8][1 + CAST(i % 4 AS INTEGER)] || 'x_h100_sxm5_' || i AS InstanceType,
        'H100' AS AcceleratorName,
        [1, 2, 4, 8][1 + CAST(i % 4 AS INTEGER)] AS AcceleratorCount,
        26.0 AS vCPUs, 225.0 AS MemoryGiB,
        CASE WHEN i % 1000 = 999 THEN 'n/a' ELSE CAST(round(2 + (hash(i) % 500) / 100.0, 2) AS VARCHAR) END
            AS Price,
        'region-' || (i % 17) AS Region,
        '{{''Gpus'': [{{''Name'': ''H100'', ''Manufacturer'': ''NVIDIA'', ''Count'': 1.0, '
            || '''MemoryInfo'': {{''SizeInMiB'': 81920}}}}], ''TotalGpuMemoryInMiB'': 81920}}' AS GpuInfo,
        '' AS SpotPrice
    FROM r
"""

GPUHUNT_SQL = """
    WITH r AS (SELECT range AS i FROM range($rows))
    SELECT
        'gpu_' || [1, 2, 4, 8][1 + CAST(i % 4 AS INTEGER)] || 'x_h100_sxm5_' || i AS instance_name,
        'region-' || (i % 17) AS location,
        CASE WHEN i % 1000 = 999 THEN 'n/a' ELSE CAST(round(2 + (hash(i) % 500) / 100.0, 2) AS VARCHAR) END
            AS price,
        26 AS cpu, 225.0 AS memory, [1, 2, 4, 8][1 + CAST(i % 4 AS INTEGER)] AS gpu_count, 'H100' AS gpu_name,
        80.0 AS gpu_memory, CASE WHEN i % 3 = 0 THEN 'True' ELSE 'False' END AS spot, 512.0 AS disk_size,
        'nvidia' AS gpu_vendor, '' AS flags, 'x86' AS cpu_arch, '' AS provider_data
    FROM r
"""
SQL = {"observations": OBSERVATIONS_SQL, "skypilot": SKYPILOT_SQL, "gpuhunt": GPUHUNT_SQL}
# Where each format's file goes: the importers read the day (and a catalog's cloud) from the path.
FILE_NAME = {
    "observations": "observations.csv",
    "skypilot": f"benchcloud_vms_{LAST_DAY}.csv",
    "gpuhunt": f"{LAST_DAY.replace('-', '')}-1/benchcloud.csv",
}

YARDSTICK = """
import json, resource, sys, time, duckdb
from warehouse.imports import IMPORT_SETTINGS
con = duckdb.connect(sys.argv[2])
con.execute("SET memory_limit = $v", {"v": IMPORT_SETTINGS["memory_limit"]})
con.execute("SET preserve_insertion_order = $v", {"v": IMPORT_SETTINGS["preserve_insertion_order"]})
before = resource.getrusage(resource.RUSAGE_SELF)
cpu_before = before.ru_utime + before.ru_stime
start = time.perf_counter()
con.execute("CREATE TABLE t AS SELECT * FROM read_csv($path)", {"path": sys.argv[1]})
seconds = time.perf_counter() - start
rows = con.execute("SELECT count(*) FROM t").fetchone()[0]
usage = resource.getrusage(resource.RUSAGE_SELF)
cpu = usage.ru_utime + usage.ru_stime - cpu_before
print(json.dumps({"seconds": seconds, "cpu_s": cpu, "rss_mb": usage.ru_maxrss / 1024, "rows": rows}))
"""

IMPORT = """
import json, resource, sys, time
from pathlib import Path
from scrapers.history import formats
from warehouse.engine import connect
from warehouse.imports import import_file
file_format, path, warehouse, chunk_rows = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
# The format is looked up before the clock starts, as the yardstick's imports are: it imports every
# reader's module (scrapy's among them), ~0.5 s whatever the file's size.
chosen = formats.get(file_format)
with connect.writer(warehouse, publish=False) as con:
    before = resource.getrusage(resource.RUSAGE_SELF)
    cpu_before = before.ru_utime + before.ru_stime
    start = time.perf_counter()
    report = import_file(con, chosen, path, chunk_rows=chunk_rows, platform=None)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - cpu_before
    stored = con.execute(
        "SELECT (SELECT count(*) FROM offers), (SELECT count(*) FROM rejected_offers), "
        "(SELECT count(*) FROM crawl_runs)"
    ).fetchone()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({
    "seconds": seconds, "cpu_s": cpu, "rss_mb": rss, "error": report.error, "rows_read": report.rows_read,
    "offers": stored[0], "rejected": stored[1], "runs": stored[2],
}))
"""


def write_file(path: Path, file_format: str, rows: int, days: int = DAYS) -> float:
    """Write the SYNTHETIC file; returns seconds taken."""
    sql = SQL[file_format]
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    con = duckdb.connect()
    params = {"rows": rows, "per_day": -(-rows // days)} if file_format == "observations" else {"rows": rows}
    # The rows' query takes bound values; the file's path goes to the writer, never into the SQL.
    con.sql(sql, params=params).write_csv(str(path), header=True, sep=",")
    con.close()
    return time.perf_counter() - start


def child(code: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"child failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def load_average() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=7_000_000)
    parser.add_argument("--days", type=int, default=DAYS, help="days the observations span")
    parser.add_argument("--format", choices=tuple(SQL), default="observations")
    parser.add_argument("--chunk-rows", type=int, default=None, help="default: the importer's CHUNK_ROWS")
    parser.add_argument("--quick", action="store_true", help="10,000 rows, no targets")
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    rows = 10_000 if args.quick else args.rows
    from scrapers.history.offers import CHUNK_ROWS

    chunk_rows = args.chunk_rows or CHUNK_ROWS
    folder = Path(tempfile.mkdtemp(prefix="bench_import_", dir=args.dir))
    try:
        path = folder / FILE_NAME[args.format]
        wrote = write_file(path, args.format, rows, args.days)
        size_mb = path.stat().st_size / 1e6
        print(
            f"{args.format}: {rows:,} rows, {size_mb:,.0f} MB, written in {wrote:.1f} s; "
            f"load {load_average()}"
        )
        yard = child(YARDSTICK, str(path), str(folder / "yardstick.duckdb"))
        print(
            f"yardstick read_csv: {yard['seconds']:.2f} s (CPU {yard['cpu_s']:.2f} s), "
            f"peak RSS {yard['rss_mb']:,.0f} MB, "
            f"{yard['rows']:,} rows"
        )
        got = child(IMPORT, args.format, str(path), str(folder / "warehouse.duckdb"), str(chunk_rows))
        ratio = got["seconds"] / yard["seconds"]
        cpu_ratio = got["cpu_s"] / yard["cpu_s"]
        print(
            f"import: {got['seconds']:.2f} s ({ratio:.2f}x; CPU {got['cpu_s']:.2f} s, {cpu_ratio:.2f}x), "
            f"peak RSS {got['rss_mb']:,.0f} MB; "
            f"{got['offers']:,} offers, {got['rejected']:,} rejected, {got['runs']:,} runs "
            f"(chunks of {chunk_rows:,} rows); load {load_average()}"
        )
        if got["error"]:
            print(f"import error: {got['error']}")
            return 1
        if args.quick:
            print("targets: not judged in --quick")
            return 0
        missed = []
        if got["rss_mb"] > TARGET_RSS_MB:
            missed.append(f"peak RSS {got['rss_mb']:,.0f} MB > {TARGET_RSS_MB} MB")
        if ratio > TARGET_RATIO:
            missed.append(f"time {ratio:.2f}x > {TARGET_RATIO}x")
        print("targets: " + ("MISSED: " + "; ".join(missed) if missed else "met"))
        return 1 if missed else 0
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
