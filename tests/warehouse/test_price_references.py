"""The history rule (rule 3 of docs/plausibility.md, definitions/00_price_window.sql): an offer under
a tenth of what the other platforms ask for its card over the month before its day is judged
implausible when read, crawled or imported, stored all the same, whatever the load order
(SYNTHETIC offers)."""

from __future__ import annotations

import datetime as dt

import duckdb
import pandas as pd
import pytest
from synthetic_crawls import WriteCrawl, synthetic_offer

from warehouse import gpus, imports
from warehouse.engine import migrate
from warehouse.loading import load_crawl

H100 = "H100 SXM 80GB"
A100 = {"gpu_name_raw": "A100 SXM 80GB", "gpu_model": "A100 SXM 80GB"}


def _load_day(
    con: duckdb.DuckDBPyConnection,
    write_crawl: WriteCrawl,
    day: str,
    *offers: dict,
    platform: str = "synthcloud",
) -> str:
    result = load_crawl(
        con,
        write_crawl(
            [{**offer, "platform": platform, "observed_at": f"{day}T06:00:00Z"} for offer in offers],
            name=f"{platform}-{day}",
            platform=platform,
            started_at=f"{day}T06:00:00Z",
            finished_at=f"{day}T06:05:00Z",
        ),
    )
    return result.crawl_id


def _market(con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl, day: str = "2026-10-01") -> None:
    """Three platforms asking 1.8, 2.0 and 2.2 USD per H100-hour on `day`."""
    for n, (platform, price) in enumerate((("alpha", 1.8), ("beta", 2.0), ("gamma", 2.2))):
        _load_day(con, write_crawl, day, synthetic_offer(n, price_amount=price), platform=platform)


def _verdicts(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute(
        "SELECT platform, offer_id, price_usd_per_gpu_hour, reason FROM implausible_offers ORDER BY ALL"
    ).fetchall()


def _import(con: duckdb.DuckDBPyConnection, offer: dict, day: str = "2026-10-03") -> None:
    """Load `offer` as a one-offer history import (run import-1 on `day`), as `gpuplan import` does."""
    runs = pd.DataFrame(
        [
            {
                "crawl_id": "import-1",
                "platform": offer["platform"],
                "day": pd.Timestamp(day).date(),
                "items_yielded": 1,
                "rows_refused": 0,
                "problem": None,
            }
        ]
    )
    imported = {"crawl_id": "import-1", "row_no": 0, "item_json": "{}"}
    offers = pd.DataFrame([{"gpu_form": "SXM", "min_term_periods": 1, **offer, **imported}])
    refused = pd.DataFrame(columns=list(imports.IMPORT_REFUSED_COLUMNS))
    imports.load_imported(con, "import:test", "synthetic.csv", runs, offers, refused)


def test_a_lone_price_under_a_tenth_of_the_other_platforms_is_implausible_and_kept(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    _market(writer_con, write_crawl)
    # The next day a fourth platform's only H100 is 0.15 (7.5% of their 2.0): a unit mistake; 0.25
    # (12.5%) is a bargain. Both are stored: nothing is rejected on load.
    _load_day(
        writer_con,
        write_crawl,
        "2026-10-02",
        synthetic_offer(7, price_amount=0.15),
        synthetic_offer(8, price_amount=0.25),
        platform="delta",
    )
    assert writer_con.execute("SELECT count(*) FROM rejected_offers").fetchall() == [(0,)]
    assert writer_con.execute("SELECT count(*) FROM offers WHERE platform = 'delta'").fetchall() == [(2,)]
    assert _verdicts(writer_con) == [
        (
            "delta",
            "synthetic-7",
            0.15,
            "implausible price: 0.15 USD per GPU-hour is under 10% of what the other platforms ask for this "
            "GPU (2 USD per GPU-hour, the median of 3 other platforms' on-demand prices over 30 days)",
        )
    ]
    judged = writer_con.execute(
        "SELECT offer_id, implausible, plannable FROM judged_offers(latest := TRUE, first_day := NULL, "
        "last_day := NULL) WHERE platform = 'delta' ORDER BY offer_id"
    ).fetchall()
    # the bargain is not implausible, but under the day's price floor (a fifth of the others' median)
    assert judged == [("synthetic-7", True, False), ("synthetic-8", False, False)]


def test_the_history_votes_count_each_platform_once_and_a_window_of_days(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    """A platform votes the median of its daily cheapest over the 30 days to the day; days before
    the window, and the judged platform itself, do not vote."""
    _market(writer_con, write_crawl, "2026-08-01")  # 61 days before: out of the window
    _load_day(writer_con, write_crawl, "2026-10-01", synthetic_offer(1, price_amount=0.1), platform="delta")
    assert _verdicts(writer_con) == []  # no other platform priced the card in the window
    _market(writer_con, write_crawl, "2026-09-15")
    assert [row[:3] for row in _verdicts(writer_con)] == [("delta", "synthetic-1", 0.1)]


def test_a_platforms_vote_is_the_median_of_its_daily_cheapest_over_the_30_days_to_the_day(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    """Hand-computed votes, loaded out of order: the day's cheapest of two crawls, an even count's
    median (the mean of the middle two), and the window's edges (29 days before is in, 30 out)."""
    _load_day(writer_con, write_crawl, "2026-10-01", synthetic_offer(1, price_amount=4.0), platform="omega")
    _load_day(writer_con, write_crawl, "2026-09-16", synthetic_offer(2, price_amount=2.0), platform="omega")
    _load_day(writer_con, write_crawl, "2026-09-30", synthetic_offer(3, price_amount=5.0), platform="omega")
    _load_day(writer_con, write_crawl, "2026-09-01", synthetic_offer(4, price_amount=3.0), platform="omega")
    noon = {"platform": "omega", "observed_at": "2026-09-16T12:00:00Z"}
    second = [{**synthetic_offer(5, price_amount=1.0), **noon}]
    load_crawl(
        writer_con,
        write_crawl(
            second,
            name="omega-2026-09-16-noon",
            platform="omega",
            started_at="2026-09-16T12:00:00Z",
            finished_at="2026-09-16T12:05:00Z",
        ),
    )
    votes = writer_con.execute(
        "SELECT run_day, vote_usd_per_gpu_hour, days FROM price_reference_votes "
        "WHERE platform = 'omega' AND gpu_model = $gpu AND pricing_type = 'on_demand' ORDER BY run_day",
        {"gpu": H100},
    ).fetchall()
    assert votes == [
        (dt.date(2026, 9, 1), 3.0, 1),  # [3.0]
        (dt.date(2026, 9, 16), 2.0, 2),  # [3.0, min(2.0, 1.0)]
        (dt.date(2026, 9, 30), 3.0, 3),  # [3.0, 1.0, 5.0]: 09-01 is 29 days before
        (dt.date(2026, 10, 1), 4.0, 3),  # [1.0, 5.0, 4.0]: 09-01 is 30 days before, out
    ]


def test_spot_is_judged_against_spot(writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl) -> None:
    _market(writer_con, write_crawl)
    for n, platform in enumerate(("alpha", "beta", "gamma")):  # their spot bids, about 0.6
        bid = synthetic_offer(n, price_amount=0.5 + n / 10, pricing_type="spot")
        _load_day(writer_con, write_crawl, "2026-10-02", bid, platform=platform)
    # a spot bid of 0.15 is a quarter of the other spot bids: plausible, though a tenth of on-demand
    spot = synthetic_offer(9, price_amount=0.15, pricing_type="spot")
    _load_day(writer_con, write_crawl, "2026-10-02", spot, platform="delta")
    assert _verdicts(writer_con) == []


def test_a_card_few_platforms_sell_is_judged_by_the_compute_of_the_others(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    gpus.sync_catalog(writer_con)
    _market(writer_con, write_crawl)
    # An A100 nobody else sells, at a hundredth of what H100 compute costs scaled to the A100's TFLOPs.
    _load_day(
        writer_con, write_crawl, "2026-10-02", synthetic_offer(2, price_amount=0.02, **A100), platform="delta"
    )
    ((_, _, _, reason),) = _verdicts(writer_con)
    assert reason.startswith(
        "implausible price: 0.02 USD per GPU-hour is under 10% of what the other platforms ask for its "
        "compute (per TFLOP, scaled to this GPU)"
    )


def test_no_history_judges_nothing(writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl) -> None:
    _load_day(writer_con, write_crawl, "2026-10-01", synthetic_offer(1, price_amount=0.05))
    assert _verdicts(writer_con) == []


def test_imports_pass_the_same_rule(writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl) -> None:
    _market(writer_con, write_crawl)
    _import(writer_con, synthetic_offer(9, price_amount=0.1, platform="importcloud"))
    ((platform, _, _, reason),) = _verdicts(writer_con)
    assert platform == "importcloud" and reason.startswith(
        "implausible price: 0.1 USD per GPU-hour is under 10%"
    )


def test_a_failed_crawls_offers_do_not_vote(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    _market(writer_con, write_crawl)
    load_crawl(
        writer_con,
        write_crawl(
            [synthetic_offer(5, platform="omega", price_amount=50.0)],
            name="omega",
            platform="omega",
            status="failed",
        ),
    )
    votes = writer_con.execute("SELECT DISTINCT platform FROM price_reference_votes ORDER BY 1").fetchall()
    assert votes == [("alpha",), ("beta",), ("gamma",)]


def test_the_same_crawls_in_any_order_give_the_same_verdicts(
    settings, write_crawl: WriteCrawl, tmp_path
) -> None:
    """The old floor judged on load against what was loaded so far; now the order changes nothing."""
    from warehouse_template import migrated

    from warehouse.engine import connect

    days = [
        ("alpha", "2026-10-01", 2.0),
        ("beta", "2026-10-01", 2.1),
        ("gamma", "2026-10-02", 1.9),
        ("delta", "2026-10-02", 0.12),
        ("delta", "2026-10-03", 0.3),
        ("alpha", "2026-10-03", 0.15),
    ]
    seen = []
    for order in (days, list(reversed(days))):
        path = migrated(tmp_path / f"w{len(seen)}" / "warehouse.duckdb")
        with connect.writer(path, publish=False) as con:
            for platform, day, price in order:
                _load_day(con, write_crawl, day, synthetic_offer(1, price_amount=price), platform=platform)
            seen.append(
                (
                    con.execute("SELECT * EXCLUDE (crawl_id) FROM offers ORDER BY ALL").fetchall(),
                    con.execute("SELECT * FROM price_reference_votes ORDER BY ALL").fetchall(),
                    con.execute(
                        "SELECT * EXCLUDE (crawl_id) FROM implausible_offers ORDER BY ALL"
                    ).fetchall(),
                )
            )
    assert seen[0] == seen[1]
    assert [(row[0], row[7]) for row in seen[0][2]] == [("alpha", 0.15), ("delta", 0.12)]


FROM_SCRATCH = """
WITH days AS (SELECT DISTINCT run_day FROM gpu_price_votes),
keys AS (SELECT * FROM price_window_keys('days'))
SELECT * FROM price_window_votes('keys') ORDER BY ALL
"""


def test_the_stored_votes_equal_a_computation_from_scratch(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    """Each load recomputes only the days its run days reach (its day and the month after); after
    crawls out of order, a duplicate, an unknown name and an import, the stored votes must equal
    the votes computed from every offer."""
    _load_day(writer_con, write_crawl, "2026-10-05", synthetic_offer(1, price_amount=2.0))
    _load_day(
        writer_con,
        write_crawl,
        "2026-10-02",
        synthetic_offer(2, price_amount=1.5),
        synthetic_offer(4, price_amount=1.2, **A100),
        synthetic_offer(4, price_amount=1.1, **A100),  # a duplicate: one of the two loads
        synthetic_offer(5, price_amount=1.0, gpu_model=None, gpu_name_raw="Mystery GPU"),
        platform="beta",
    )
    _import(writer_con, synthetic_offer(9, price_amount=1.4, platform="importcloud"), day="2026-09-20")
    stored = writer_con.execute("SELECT * FROM price_reference_votes ORDER BY ALL").fetchall()
    assert stored == writer_con.execute(FROM_SCRATCH).fetchall()
    # importcloud's day votes on its own day and on the later days of its window that hold votes
    voted = [row[0] for row in stored if row[3] == "importcloud"]
    assert voted == [dt.date(2026, 9, 20), dt.date(2026, 10, 2), dt.date(2026, 10, 5)]


@pytest.mark.parametrize("status", ["ok", "failed"])
def test_the_migration_fills_the_tables_from_the_offers_already_loaded(tmp_path, status: str) -> None:
    """A warehouse migrated up to 092 with offers in it gets both vote tables filled from them, as
    the loaders would have."""
    folder = tmp_path / "migrations"
    folder.mkdir()
    for migration in migrate.available():
        if migration.version < 93:
            (folder / migration.name).write_text(migration.sql, encoding="utf-8")
    con = duckdb.connect()
    migrate.migrate(con, folder)
    con.execute(
        "INSERT INTO crawl_runs (crawl_id, platform, status, loaded_at) VALUES ('c', 'p', $status, now())",
        {"status": status},
    )
    for offer_id, usd in (("a", 2.0), ("b", 3.0)):
        con.execute(
            "INSERT INTO offers (crawl_id, platform, offer_id, gpu_name_raw, gpu_model, gpu_count, "
            "price_amount, price_currency, price_per, billing_period, pricing_type, hourly_rentable, "
            "price_usd_per_gpu_hour, observed_at, observed_date, run_day) VALUES ('c', 'p', $offer_id, "
            "'H100', $gpu, 1, $usd, 'USD', 'gpu', 'hour', 'on_demand', TRUE, $usd, now(), DATE '2026-10-01', "
            "DATE '2026-10-01')",
            {"gpu": H100, "offer_id": offer_id, "usd": usd},
        )
    assert "093_price_window.sql" in migrate.migrate(con)
    assert con.execute("SELECT * FROM gpu_price_votes").fetchall() == [
        ("c", "p", dt.date(2026, 10, 1), H100, "on_demand", 2.0, 2)
    ]
    stored = con.execute("SELECT * FROM price_reference_votes ORDER BY ALL").fetchall()
    assert stored == con.execute(FROM_SCRATCH).fetchall()
    assert stored == ([(dt.date(2026, 10, 1), H100, "on_demand", "p", 2.0, 1)] if status == "ok" else [])
    con.close()
