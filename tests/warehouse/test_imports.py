"""Imports end to end into a real (in-memory) warehouse: runs, offers, refusals, re-imports, trends."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import warehouse_template

from scrapers.history import formats
from warehouse import history, imports
from warehouse.imports import import_file

OBSERVATIONS = "price_history/cherielilili_observations_2026-02-11_to_2026-07-20.csv"
HEADER = (
    "date,provider,gpu_model,gpu_count,region,rental_type,price_min_usd,price_median_usd,"
    "price_max_usd,n_offers,source_url,fetched_at\n"
)


def _lambda_h100_1x(con) -> list[tuple[dt.date, float]]:
    trend = history.price_trend(
        con,
        "H100 SXM 80GB",
        dt.date(2026, 1, 1),
        dt.date(2026, 12, 31),
        platform="lambda",
        pricing_type="on_demand",
        gpu_count=1,
    )
    return [
        (day.date(), price) for day, price in zip(trend["day"], trend["min_usd_per_gpu_hour"], strict=True)
    ]


def test_lambda_catalogs_show_the_april_price_rise(sample) -> None:
    con = warehouse_template.scratch()
    skypilot = formats.get("skypilot")
    for day in ("2026-04-02", "2026-04-06", "2026-04-20", "2026-05-07"):
        report = import_file(con, skypilot, sample(f"skypilot_catalog_format/lambda_vms_{day}.csv"))
        assert report.ok, report
    # gpu_1x_h100_sxm5: 3.78 -> 4.29 USD/h between the 2 and the 6 April catalogs
    assert _lambda_h100_1x(con) == [
        (dt.date(2026, 4, 2), 3.78),
        (dt.date(2026, 4, 6), 4.29),
        (dt.date(2026, 4, 20), 4.29),
        (dt.date(2026, 5, 7), 4.29),
    ]
    # the 8-GPU instance is per instance in the file: 27.52 / 8 per GPU-hour
    eight = history.price_trend(
        con, "H100 SXM 80GB", dt.date(2026, 4, 2), dt.date(2026, 4, 2), platform="lambda", gpu_count=8
    )
    assert eight["min_usd_per_gpu_hour"].tolist() == [27.52 / 8]
    marks = con.execute("SELECT DISTINCT platform, source FROM offers").fetchall()
    assert marks == [("lambda", "import:skypilot")]  # the provider slug, marked as imported
    assert con.execute("SELECT count(*) FROM latest_offers").fetchall() == [
        (0,)
    ]  # history, not "on offer now"


def test_header_only_catalog_is_a_failed_day_not_sold_out(sample) -> None:
    con = warehouse_template.scratch()
    skypilot = formats.get("skypilot")
    import_file(con, skypilot, sample("skypilot_catalog_format/lambda_vms_2026-04-20.csv"))
    broken = import_file(
        con, skypilot, sample("skypilot_catalog_format/lambda_vms_2026-05-07_header_only.csv")
    )

    assert not broken.ok and broken.error is None
    ((status, error, offers),) = con.execute(
        "SELECT status, error, offers_loaded FROM crawl_runs WHERE started_at = DATE '2026-05-07'"
    ).fetchall()
    assert (status, offers) == ("failed", 0) and "header and no rows" in error and "not a sold-out" in error
    # the broken day adds no point (no zero, no gap filled with nothing): 20 April stays the last word
    assert _lambda_h100_1x(con) == [(dt.date(2026, 4, 20), 4.29)]
    assert con.execute("SELECT max(day) FROM daily_runs WHERE platform = 'lambda'").fetchall() == [
        (dt.date(2026, 4, 20),)
    ]
    # nothing claims zero stock: a catalog says nothing about capacity
    assert con.execute("SELECT count(*) FROM offers WHERE available_gpus IS NOT NULL").fetchall() == [(0,)]
    # the fixed catalog of the same day still loads and stands for the day
    fixed = import_file(con, skypilot, sample("skypilot_catalog_format/lambda_vms_2026-05-07.csv"))
    assert fixed.ok
    assert _lambda_h100_1x(con)[-1] == (dt.date(2026, 5, 7), 4.29)


@pytest.fixture(scope="module")
def observations_warehouse(sample):
    con = warehouse_template.scratch()
    report = import_file(con, formats.get("observations"), sample(OBSERVATIONS))
    return con, report


def test_observations_file_loads_completely(observations_warehouse) -> None:
    con, report = observations_warehouse
    assert report.ok and report.offers_loaded == 33_654
    ((offers, runs, days, widest),) = con.execute(
        "SELECT count(*), count(DISTINCT crawl_id), count(DISTINCT observed_date), max(price_amount) "
        "FROM offers WHERE source = 'import:observations'"
    ).fetchall()
    assert (offers, runs, days) == (33_654, 3_305, 159)
    assert widest == 98.32  # azure 8x H100 on 2026-02-11: an outlier, loaded as it is
    assert con.execute("SELECT status, count(*) FROM crawl_runs GROUP BY status").fetchall() == [
        ("ok", 3_305)
    ]
    assert con.execute("SELECT count(*) FROM rejected_offers").fetchall() == [(0,)]
    row = con.execute(
        "SELECT price_usd_per_gpu_hour, extra->>'n_offers', available_gpus FROM offers "
        "WHERE platform = 'lambda' AND observed_date = DATE '2026-05-08' AND gpu_model = 'H100 SXM 80GB'"
    ).fetchall()
    assert row == [(3.99, "4", None)]  # the file's row: 2026-05-08,lambda,H100_SXM,1,us,...,3.99,...,4,...


def test_reimport_is_a_no_op(observations_warehouse, sample) -> None:
    con, _ = observations_warehouse
    again = import_file(con, formats.get("observations"), sample(OBSERVATIONS))
    assert again.runs["already_loaded"].all()
    assert con.execute("SELECT count(*) FROM offers").fetchall() == [(33_654,)]


def test_a_newer_file_version_adds_only_new_or_changed_days(tmp_path) -> None:
    con = warehouse_template.scratch()
    rows = [
        "2026-05-08,vast.ai,H100_SXM,1,US,on_demand,1.9,2.0,2.5,4,https://x,2026-05-08T01:00:00+00:00\n",
        "2026-05-09,vast.ai,H100_SXM,1,US,on_demand,1.8,2.0,2.5,4,https://x,2026-05-09T01:00:00+00:00\n",
        "2026-05-10,vast.ai,H100_SXM,1,US,on_demand,1.7,2.0,2.5,4,https://x,2026-05-10T01:00:00+00:00\n",
    ]
    older, newer = tmp_path / "v1.csv", tmp_path / "v2.csv"
    older.write_text(HEADER + "".join(rows[:2]))
    newer.write_text(HEADER + "".join(rows))
    observations = formats.get("observations")
    import_file(con, observations, older)
    report = import_file(con, observations, newer)
    assert report.runs["already_loaded"].tolist() == [True, True, False]
    assert con.execute("SELECT count(*) FROM offers").fetchall() == [(3,)]


def test_refused_rows_are_kept_with_their_reason(tmp_path) -> None:
    con = warehouse_template.scratch()
    csv = tmp_path / "observations.csv"
    csv.write_text(
        HEADER
        + "2026-05-08,vast.ai,H100_SXM,1,US,on_demand,1.9,2.0,2.5,4,https://x,2026-05-08T01:00:00+00:00\n"
        + "2026-05-08,vast.ai,H100_SXM,1,US,reserved,1.9,2.0,2.5,4,https://x,2026-05-08T01:00:00+00:00\n"
        + "2026-05-09,vast.ai,H100_SXM,2,US,spot,nan?,1.5,1.5,1,https://x,2026-05-09T01:00:00+00:00\n"
    )
    report = import_file(con, formats.get("observations"), csv)
    assert not report.ok and report.rows_refused == 2
    runs = dict(con.execute("SELECT CAST(started_at AS DATE), status FROM crawl_runs").fetchall())
    assert runs == {dt.date(2026, 5, 8): "partial", dt.date(2026, 5, 9): "failed"}
    reasons = con.execute(
        "SELECT reason, raw LIKE '%reserved%' FROM rejected_offers ORDER BY reason"
    ).fetchall()
    assert reasons == [
        ("price_min_usd is not a number", False),
        ("rental_type is neither on_demand nor spot", True),
    ]


def test_an_unreadable_file_changes_nothing(tmp_path) -> None:
    con = warehouse_template.scratch()
    missing = import_file(con, formats.get("skypilot"), tmp_path / "lambda_vms_2026-04-02.csv")
    assert missing.error.startswith("no such file")
    undated = tmp_path / "vms.csv"
    undated.write_text("InstanceType,AcceleratorName,AcceleratorCount,Price,Region,GpuInfo,SpotPrice\n")
    assert "--date" in import_file(con, formats.get("skypilot"), undated).error
    assert con.execute("SELECT count(*) FROM crawl_runs").fetchall() == [(0,)]


STORED = {
    "offers": "SELECT crawl_id, platform, offer_id, gpu_model, gpu_count, price_amount, pricing_type, "
    "region, extra FROM offers",
    "runs": "SELECT crawl_id, platform, status, error, items_yielded, items_rejected, offers_loaded "
    "FROM crawl_runs",
    "rejected": "SELECT crawl_id, platform, raw, reason FROM rejected_offers",
}


def _stored(con) -> dict[str, list[tuple]]:
    return {name: sorted(con.execute(sql).fetchall(), key=repr) for name, sql in STORED.items()}


def _observations_shuffled(tmp_path, sample):
    """The real observations file with its rows reversed, a row with no provider and one dated ahead."""
    lines = sample(OBSERVATIONS).read_text(encoding="utf-8").splitlines()
    header, rows = lines[0], lines[1:2000]
    odd = [
        "2026-05-08,,H100_SXM,1,US,on_demand,1.9,2.0,2.5,4,https://x,2026-05-08T01:00:00+00:00",
        "2099-05-08,vast.ai,H100_SXM,1,US,on_demand,1.9,2.0,2.5,4,https://x,2099-05-08T01:00:00+00:00",
    ]
    path = tmp_path / "observations.csv"
    path.write_text("\n".join([header, *reversed(rows), *odd]) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("file_format", ["observations", "skypilot", "gpuhunt"])
def test_what_is_stored_does_not_depend_on_the_chunk_size(file_format, tmp_path, sample) -> None:
    if file_format == "observations":
        path = _observations_shuffled(tmp_path, sample)
    elif file_format == "skypilot":  # GCP: its GPU rows need the host VMs, read before them
        path = tmp_path / "gcp_vms_2026-11-30.csv"
        path.write_bytes(
            (Path(__file__).parents[2] / "scrapers/fixtures/gcp/01-catalogs-v8-gcp-vms.csv").read_bytes()
        )
    else:
        path = Path(__file__).parents[1] / "scrapers/history/fixtures/gpuhunt/20260402-7/runpod.csv"
    stored = []
    for chunk_rows in (300 if file_format == "observations" else 5, 1_000_000):
        con = warehouse_template.scratch()
        report = import_file(con, formats.get(file_format), path, chunk_rows=chunk_rows)
        assert report.error is None and report.offers_loaded > 0, report
        stored.append((_stored(con), report.rows_read, report.rows_refused, report.refusals))
    assert stored[0] == stored[1]


def test_a_load_past_the_memory_limit_is_a_clear_error_and_stores_nothing(
    sample, monkeypatch: pytest.MonkeyPatch
) -> None:
    con = warehouse_template.scratch()
    monkeypatch.setitem(imports.IMPORT_SETTINGS, "memory_limit", "2MB")
    report = import_file(con, formats.get("observations"), sample(OBSERVATIONS))
    assert report.error is not None and "of DuckDB memory; nothing stored" in report.error, report
    assert con.execute("SELECT count(*) FROM crawl_runs").fetchall() == [(0,)]
    assert con.execute("SELECT count(*) FROM offers").fetchall() == [(0,)]
    # the connection's own limit is back, and the next import loads
    monkeypatch.undo()
    assert import_file(con, formats.get("observations"), sample(OBSERVATIONS)).ok


EDGE_CASES = Path(__file__).parent / "fixtures" / "imports" / "observations_edge_cases.csv"


def test_the_sql_reader_stores_what_the_pandas_reader_stored() -> None:
    """A SYNTHETIC observations file of every refusal, an unknown GPU, a blank region, a count
    written 1.0, a duplicate, a price the shared checks reject and one no provider could charge,
    imported through the reader in SQL, stores the offers, refusals and runs the pandas reader
    stored (recorded from it in observations_edge_cases.stored.json). JSON is compared parsed: the
    old refusals' text had Python's spaces, and a number in `extra` may be 4 where pandas wrote 4.0."""
    con = warehouse_template.scratch()
    report = import_file(con, formats.get("observations"), EDGE_CASES)
    assert (report.rows_read, report.rows_refused, report.error) == (17, 9, None)
    old = json.loads(EDGE_CASES.with_suffix(".stored.json").read_text(encoding="utf-8"))
    offers = con.execute(
        "SELECT platform, offer_id, region, gpu_name_raw, gpu_model, gpu_form, gpu_memory_gb, gpu_count, "
        "price_amount, pricing_type, price_usd_per_gpu_hour, source_url, "
        "strftime(observed_at, '%Y-%m-%dT%H:%M:%S'), CAST(extra AS VARCHAR) FROM offers ORDER BY ALL"
    ).fetchall()
    assert [[*row[:-1], json.loads(row[-1])] for row in offers] == old["offers"]
    rejected = con.execute("SELECT platform, raw, reason FROM rejected_offers").fetchall()
    assert (
        sorted(([platform, json.loads(raw), reason] for platform, raw, reason in rejected), key=repr)
        == (old["rejected"])
    )
    runs = con.execute(
        "SELECT platform, status, error, strftime(started_at, '%Y-%m-%d'), items_yielded, items_rejected, "
        "offers_loaded FROM crawl_runs ORDER BY ALL"
    ).fetchall()
    assert [list(row) for row in runs] == old["runs"]


def test_a_row_the_csv_reader_cannot_split_is_one_line_naming_the_file_and_line(tmp_path) -> None:
    csv = tmp_path / "observations.csv"
    csv.write_text(
        HEADER
        + "2026-05-08,vast.ai,H100_SXM,1,US,on_demand,1.9,2.0,2.5,4,https://x,2026-05-08T01:00:00+00:00\n"
        + "2026-05-09,vast.ai,H100_SXM,1,US,on_demand,1.9,2.0,2.5,4,https://x\n"
    )
    con = warehouse_template.scratch()
    report = import_file(con, formats.get("observations"), csv)
    assert report.error is not None and "\n" not in report.error
    assert report.error.startswith("observations.csv: ") and "Line: 3" in report.error, report.error
    assert con.execute("SELECT count(*) FROM crawl_runs").fetchall() == [(0,)]
