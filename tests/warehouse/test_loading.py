"""warehouse/loading.py on real DuckDB files with SYNTHETIC crawl files (tests/warehouse/conftest.py)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import duckdb
import pytest
import warehouse_template
from synthetic_crawls import WriteCrawl, synthetic_offer

from scrapers.crawl.summary import CrawlSummary, SummaryError
from scrapers.items import OfferItem
from warehouse import queries
from warehouse.engine import connect
from warehouse.loading import load_crawl


def _offers(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute("SELECT * FROM offers ORDER BY crawl_id, offer_id, pricing_type").fetchall()


def _rate(con: duckdb.DuckDBPyConnection, currency: str, day: str) -> float:
    ((units_per_usd,),) = con.execute(
        "SELECT units_per_usd FROM fx_rates WHERE currency = $c AND rate_date = $d", {"c": currency, "d": day}
    ).fetchall()
    return units_per_usd


def test_a_crawl_loads_normalized_to_usd_and_cny_per_gpu_hour(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    # 2026-10-01 is a Thursday with an ECB fixing in the bundled history.
    summary = write_crawl(
        [
            synthetic_offer(1, price_amount=2.0),
            synthetic_offer(2, price_amount=16.0, gpu_count=8, price_per="instance"),
            synthetic_offer(3, price_amount=48.0, billing_period="day", pricing_type="daily_plan"),
            synthetic_offer(4, price_amount=336.0, billing_period="week", pricing_type="weekly_plan"),
            synthetic_offer(5, price_amount=1460.0, billing_period="month", pricing_type="monthly_plan"),
            synthetic_offer(6, price_amount=10.0, price_currency="CNY"),
            synthetic_offer(7, price_amount=3.0, price_currency="EUR"),
            synthetic_offer(8, gpu_model=None, gpu_name_raw="Mystery Accelerator 9000"),
            synthetic_offer(9, available_gpus=None),
        ]
    )
    result = load_crawl(writer_con, summary)
    assert (result.status, result.offers_loaded, result.items_rejected, result.already_loaded) == (
        "ok",
        9,
        0,
        False,
    )

    cny = _rate(writer_con, "CNY", "2026-10-01")
    eur = _rate(writer_con, "EUR", "2026-10-01")
    rows = {
        row[0]: row[1:]
        for row in writer_con.execute(
            "SELECT offer_id, price_usd_per_gpu_hour, price_cny_per_gpu_hour, hourly_rentable, fx_date, "
            "gpu_model, available_gpus FROM offers"
        ).fetchall()
    }
    expected_usd = {1: 2.0, 2: 2.0, 3: 2.0, 4: 2.0, 5: 2.0, 6: 10.0 / cny, 7: 3.0 / eur, 8: 2.0, 9: 2.0}
    for n, usd in expected_usd.items():
        price_usd, price_cny, *_ = rows[f"synthetic-{n}"]
        assert price_usd == pytest.approx(usd)
        assert price_cny == pytest.approx(usd * cny)
    assert rows["synthetic-1"][2] is True and rows["synthetic-5"][2] is False  # hourly_rentable
    assert {row[3].isoformat() for row in rows.values()} == {"2026-10-01"}
    assert rows["synthetic-8"][4] is None  # unknown GPU kept, not rejected
    assert rows["synthetic-9"][5] is None  # unknown stock stays unknown, not zero
    ((crawl_id, status, loaded, source),) = writer_con.execute(
        "SELECT crawl_id, status, offers_loaded, fx_source FROM crawl_runs JOIN offers USING (crawl_id) "
        "LIMIT 1"
    ).fetchall()
    assert (crawl_id, status, loaded) == (result.crawl_id, "ok", 9)
    assert "ECB" in source


def test_loading_the_same_crawl_twice_gives_the_same_rows(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    summary = write_crawl([synthetic_offer(n) for n in range(5)] + ["{not json"])
    first = load_crawl(writer_con, summary)
    snapshot = (
        _offers(writer_con),
        writer_con.execute("SELECT * FROM rejected_offers").fetchall(),
        writer_con.execute("SELECT * FROM crawl_runs").fetchall(),
    )
    second = load_crawl(writer_con, summary)
    assert second.already_loaded and not first.already_loaded
    assert (second.crawl_id, second.status, second.offers_loaded) == (first.crawl_id, first.status, 5)
    assert snapshot == (
        _offers(writer_con),
        writer_con.execute("SELECT * FROM rejected_offers").fetchall(),
        writer_con.execute("SELECT * FROM crawl_runs").fetchall(),
    )


REJECTED = [
    (synthetic_offer(1, offer_id=None), "missing required field: offer_id"),
    (
        synthetic_offer(1, gpu_name_raw="", price_amount=None),
        "missing required field: gpu_name_raw, price_amount",
    ),
    (synthetic_offer(1, gpu_count=0), "gpu_count must be a whole number > 0, got 0"),
    (synthetic_offer(1, gpu_count=1.5), "gpu_count must be a whole number > 0, got 1.5"),
    (synthetic_offer(1, price_amount=-1), "price_amount must be > 0, got -1"),
    (synthetic_offer(1, price_amount=0), "price_amount must be > 0, got 0"),
    (synthetic_offer(1, price_amount="abc"), "price_amount is not a number: abc"),
    (synthetic_offer(1, price_currency="XYZ"), "unknown currency XYZ"),
    (synthetic_offer(1, price_currency="usd"), "unknown currency usd"),
    (synthetic_offer(1, price_amount=1500), "absurd price: 1500 USD per GPU-hour (limit 100)"),
    (synthetic_offer(1, price_amount=150), "absurd price: 150 USD per GPU-hour (limit 100)"),
    (synthetic_offer(1, price_amount=0.001), "absurd price: 0.001 USD per GPU-hour (under 0.01)"),
    (
        synthetic_offer(1, billing_period="fortnight"),
        "billing_period must be hour, day, week, month or year, got fortnight",
    ),
    (synthetic_offer(1, price_per="node"), "price_per must be gpu or instance, got node"),
    (synthetic_offer(1, pricing_type="bargain"), "unknown pricing_type bargain"),
    (synthetic_offer(1, observed_at="yesterday"), "observed_at is not an ISO-8601 timestamp: yesterday"),
    (synthetic_offer(1, observed_at="1990-01-01T00:00:00Z"), "no FX rate for USD on or before 1990-01-01"),
    (synthetic_offer(1, available_gpus=-2), "available_gpus must be a whole number >= 0 or null, got -2"),
    (synthetic_offer(1, min_term_periods=0), "min_term_periods must be a whole number >= 1, got 0"),
    (synthetic_offer(1, gpu_memory_gb="lots"), "gpu_memory_gb must be a number > 0 or null, got lots"),
    (synthetic_offer(1, platform="othercloud"), "platform othercloud in a crawl of synthcloud"),
    ('{"offer_id": "synthetic-1", "price_amount": 2.', "malformed JSON"),
    ("[1, 2, 3]", "not a JSON object"),
    ('{"colour": "blue"}', "no offer fields"),
]


@pytest.mark.parametrize(("bad", "reason"), REJECTED, ids=[reason for _, reason in REJECTED])
def test_a_malformed_record_is_rejected_with_its_reason_while_the_rest_loads(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl, bad: dict | str, reason: str
) -> None:
    good = [synthetic_offer(n) for n in range(10, 13)]
    result = load_crawl(writer_con, write_crawl([good[0], bad, *good[1:]]))
    assert (result.status, result.offers_loaded, result.items_rejected) == ("partial", 3, 1)
    assert "1 item(s) rejected" in (result.error or "")
    ((raw, recorded_reason, crawl_id, platform),) = writer_con.execute(
        "SELECT raw, reason, crawl_id, platform FROM rejected_offers"
    ).fetchall()
    assert recorded_reason == reason
    assert (crawl_id, platform) == (result.crawl_id, "synthcloud")
    if isinstance(bad, str):
        assert raw == bad  # unparsable lines are kept verbatim
    else:
        assert json.loads(raw).get("offer_id") == bad.get("offer_id")


def test_duplicates_within_a_crawl_keep_the_latest_observation(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    lines = [
        synthetic_offer(1, price_amount=2.0, observed_at="2026-10-01T06:00:00Z"),
        synthetic_offer(1, price_amount=3.0, observed_at="2026-10-01T06:02:00Z"),  # same offer, later: kept
        synthetic_offer(
            1, price_amount=2.5, observed_at="2026-10-01T06:02:00Z", region="b"
        ),  # same time, cheaper
        synthetic_offer(1, price_amount=1.0, pricing_type="spot"),  # another pricing type: its own offer
    ]
    result = load_crawl(writer_con, write_crawl(lines))
    assert (result.offers_loaded, result.items_rejected) == (2, 2)
    loaded = writer_con.execute("SELECT pricing_type, price_amount FROM offers ORDER BY 1").fetchall()
    assert loaded == [("on_demand", 2.5), ("spot", 1.0)]
    rejected = writer_con.execute("SELECT reason, raw FROM rejected_offers").fetchall()
    assert {reason for reason, _ in rejected} == {
        "duplicate offer_id and pricing_type in this run (the latest observation loaded)"
    }
    assert sorted(json.loads(raw)["price_amount"] for _, raw in rejected) == [2.0, 3.0]


def test_lines_that_are_not_utf8_are_rejected_and_the_rest_loads(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    summary = write_crawl([synthetic_offer(1), synthetic_offer(2)])
    feed = summary.with_name("synthcloud.jsonl")
    feed.write_bytes(feed.read_bytes() + b'{"offer_id": "synthetic-\xff\xfe"}\n')
    result = load_crawl(writer_con, summary)
    assert (result.status, result.offers_loaded, result.items_rejected) == ("partial", 2, 1)
    ((reason,),) = writer_con.execute("SELECT reason FROM rejected_offers").fetchall()
    assert reason == "not UTF-8 text (line 3 of the feed)"


def test_observed_at_is_stored_in_utc(writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl) -> None:
    lines = [
        synthetic_offer(1, observed_at="2026-10-02T07:30:00+08:00"),  # Shanghai morning = UTC previous night
        synthetic_offer(2, observed_at="2026-10-01 23:30:00"),  # no zone: read as UTC
    ]
    load_crawl(writer_con, write_crawl(lines))
    rows = writer_con.execute("SELECT offer_id, observed_at, observed_date FROM offers ORDER BY 1").fetchall()
    assert [(row[1].isoformat(), row[2].isoformat()) for row in rows] == [
        ("2026-10-01T23:30:00", "2026-10-01"),
        ("2026-10-01T23:30:00", "2026-10-01"),
    ]


def test_observed_at_infinities_keep_their_meaning(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    # The UTC conversion skips the time-zone lookup for finite times; these have no microseconds.
    lines = [synthetic_offer(1, observed_at="infinity"), synthetic_offer(2, observed_at="-infinity")]
    load_crawl(writer_con, write_crawl(lines))
    loaded = writer_con.execute(
        "SELECT offer_id, CAST(observed_at AS VARCHAR), CAST(observed_date AS VARCHAR) FROM offers"
    ).fetchall()
    assert loaded == [("synthetic-1", "infinity", "infinity")]
    rejected = writer_con.execute("SELECT reason FROM rejected_offers").fetchall()
    assert rejected == [("no FX rate for USD on or before -infinity",)]


def test_weekend_offers_use_the_nearest_earlier_ecb_rate(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    # 2026-10-03 and -04 are a weekend: the ECB published nothing; Friday the 2nd applies.
    lines = [
        synthetic_offer(1, price_currency="CNY", price_amount=10.0, observed_at="2026-10-04T12:00:00Z"),
        synthetic_offer(2, price_currency="CNY", price_amount=10.0, observed_at="2026-10-05T12:00:00Z"),
    ]
    load_crawl(writer_con, write_crawl(lines))
    rows = writer_con.execute(
        "SELECT offer_id, fx_date, price_usd_per_gpu_hour FROM offers ORDER BY 1"
    ).fetchall()
    assert [row[1].isoformat() for row in rows] == ["2026-10-02", "2026-10-05"]
    assert rows[0][2] == pytest.approx(10.0 / _rate(writer_con, "CNY", "2026-10-02"))
    assert rows[1][2] == pytest.approx(10.0 / _rate(writer_con, "CNY", "2026-10-05"))


def test_fx_uses_the_rate_of_the_day_or_the_nearest_earlier_one(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    # Synthetic rates on days after the bundled ECB history, to pin the rule exactly.
    writer_con.execute(
        "INSERT INTO fx_rates VALUES ('2031-03-02', 'USD', 1.0, 'synthetic'), "
        "('2031-03-02', 'CNY', 7.0, 'synthetic'), ('2031-03-05', 'USD', 1.0, 'synthetic'), "
        "('2031-03-05', 'CNY', 8.0, 'synthetic')"
    )
    days = {1: "2031-03-02", 2: "2031-03-04", 3: "2031-03-05", 4: "2031-03-09"}
    load_crawl(
        writer_con,
        write_crawl(
            [
                synthetic_offer(n, price_currency="CNY", price_amount=56.0, observed_at=f"{d}T00:00:00Z")
                for n, d in days.items()
            ]
        ),
    )
    rows = writer_con.execute(
        "SELECT fx_date, fx_source, price_usd_per_gpu_hour FROM offers ORDER BY offer_id"
    ).fetchall()
    assert [(row[0].isoformat(), row[2]) for row in rows] == [
        ("2031-03-02", 8.0),
        ("2031-03-02", 8.0),
        ("2031-03-05", 7.0),
        ("2031-03-05", 7.0),
    ]
    assert {row[1] for row in rows} == {"synthetic"}


@pytest.mark.parametrize(
    ("offers", "status", "error"),
    [
        (None, "ok", "no offers loaded (0 items yielded, 0 rejected)"),  # no feed written
        ([], "ok", "no offers loaded (0 items yielded, 0 rejected)"),  # an empty feed
        (["{broken"], "ok", "no offers loaded (1 items yielded, 1 rejected)"),  # nothing valid
        (None, "failed", "synthetic outage"),
        (None, "skipped", "synthetic outage"),
    ],
)
def test_an_empty_or_failed_crawl_is_recorded_and_keeps_earlier_offers_visible(
    writer_con: duckdb.DuckDBPyConnection,
    write_crawl: WriteCrawl,
    offers: list | None,
    status: str,
    error: str,
) -> None:
    earlier = write_crawl([synthetic_offer(n) for n in range(3)], name="day1")
    load_crawl(writer_con, earlier)
    later = write_crawl(
        offers,
        name="day2",
        status=status,
        error=None if status == "ok" else "synthetic outage",
        started_at="2026-10-02T06:00:00Z",
        finished_at="2026-10-02T06:05:00Z",
    )
    result = load_crawl(writer_con, later)
    assert result.status == ("failed" if status == "ok" else status)
    assert result.error == error
    assert writer_con.execute("SELECT count(*) FROM offers").fetchall() == [(3,)]
    visible = writer_con.execute("SELECT DISTINCT crawl_id FROM latest_offers").fetchall()
    assert visible == [(load_crawl(writer_con, earlier).crawl_id,)]
    assert writer_con.execute("SELECT count(*) FROM crawl_runs").fetchall() == [(2,)]


def test_a_failed_crawl_keeps_its_valid_items_as_history_but_not_as_latest(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    load_crawl(writer_con, write_crawl([synthetic_offer(1, price_amount=2.0)], name="day1"))
    result = load_crawl(
        writer_con,
        write_crawl(
            [synthetic_offer(1, price_amount=5.0, observed_at="2026-10-02T06:00:00Z")],
            name="day2",
            status="failed",
            error="synthetic: spider closed early",
            finished_at="2026-10-02T06:05:00Z",
        ),
    )
    assert (result.status, result.offers_loaded) == ("failed", 1)
    assert writer_con.execute("SELECT price_amount FROM latest_offers").fetchall() == [(2.0,)]
    assert writer_con.execute("SELECT count(*) FROM offers").fetchall() == [(2,)]


def test_a_feed_named_but_missing_is_a_failed_crawl(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    summary = write_crawl([synthetic_offer(1)])
    summary.with_name("synthcloud.jsonl").unlink()
    result = load_crawl(writer_con, summary)
    assert result.status == "failed"
    assert "does not exist" in (result.error or "")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "cannot read crawl summary"),
        ("[]", "is not a JSON object"),
        ('{"status": "ok"}', "has no platform"),
        ('{"platform": "synthcloud", "status": "fine"}', "status must be one of"),
        ('{"platform": "synthcloud", "status": "ok", "started_at": "noon"}', "started_at is not an ISO-8601"),
    ],
)
def test_a_bad_summary_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "x.summary.json"
    path.write_text(content)
    with pytest.raises(SummaryError, match=re.escape(message)):
        CrawlSummary.read(path)


def test_the_loader_reads_every_offer_item_field() -> None:
    """Consistency: the one list of the offer's fields in SQL (offer_fields, which feed_records reads a
    feed with) names exactly the fields of the OfferItem contract, and the statements that read or
    write records whole take their fields from it, spelling no list of their own."""
    fields = [field.name for field in dataclasses.fields(OfferItem)]
    ((names,),) = warehouse_template.scratch().execute("SELECT offer_field_names()").fetchall()
    assert sorted(names) == sorted(fields) and len(names) == len(set(names))
    records = (Path(connect.__file__).parents[1] / "definitions" / "00_offer_records.sql").read_text("utf-8")
    assert "columns = offer_fields()" in records  # feed_records
    assert "to_json(offer_fields())" in queries.sql("load/unparsed_lines")
    assert "offer_field_names()" in queries.sql("load/insert_rejected")


@pytest.mark.parametrize(
    ("amount", "per", "count", "period", "per_gpu_hour"),
    [
        (2.69, "gpu", 8, "hour", 2.69),
        (31.92, "instance", 8, "hour", 3.99),
        (730.0, "gpu", 1, "month", 1.0),
        (168.0, "instance", 2, "week", 0.5),
        (48.0, "gpu", 1, "day", 2.0),
    ],
)
def test_price_per_gpu_hour_is_one_sql_rule(
    amount: float, per: str, count: int, period: str, per_gpu_hour: float
) -> None:
    """Both loaders price through these macros (migration 032): per GPU, per hour, 730 h a month."""
    con = warehouse_template.scratch()
    ((value,),) = con.execute(
        "SELECT price_per_gpu_hour($amount, $per, $count, $period)",
        {"amount": amount, "per": per, "count": count, "period": period},
    ).fetchall()
    assert value == pytest.approx(per_gpu_hour)
