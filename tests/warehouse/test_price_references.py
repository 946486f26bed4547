"""Migration 070: an offer under a tenth of the cheapest price ever seen for its GPU is rejected,
crawled or imported, even when it is the only offer of its GPU that day (SYNTHETIC offers)."""

from __future__ import annotations

import duckdb
import pandas as pd
from synthetic_crawls import WriteCrawl, synthetic_offer

from warehouse import gpus, history
from warehouse.loading import load_crawl

H100 = "H100 SXM 80GB"


def _load_day(con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl, day: str, *offers: dict) -> None:
    load_crawl(
        con,
        write_crawl(
            [{**offer, "observed_at": f"{day}T06:00:00Z"} for offer in offers],
            name=f"synthcloud-{day}",
            started_at=f"{day}T06:00:00Z",
            finished_at=f"{day}T06:05:00Z",
        ),
    )


def _rejected(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [
        reason for (reason,) in con.execute("SELECT reason FROM rejected_offers ORDER BY reason").fetchall()
    ]


def _import(con: duckdb.DuckDBPyConnection, offer: dict) -> None:
    """Load `offer` as a one-offer history import (run import-1 on 2026-10-03), as `gpuplan import` does."""
    runs = pd.DataFrame(
        [
            {
                "crawl_id": "import-1",
                "platform": offer["platform"],
                "day": pd.Timestamp("2026-10-03").date(),
                "items_yielded": 1,
                "rows_refused": 0,
                "problem": None,
            }
        ]
    )
    imported = {"crawl_id": "import-1", "row_no": 0, "item_json": "{}"}
    offers = pd.DataFrame([{"gpu_form": "SXM", "min_term_periods": 1, **offer, **imported}])
    refused = pd.DataFrame(columns=list(history.IMPORT_REFUSED_COLUMNS))
    history.load_imported(con, "import:test", "synthetic.csv", runs, offers, refused)


def test_a_lone_price_under_a_tenth_of_the_cards_history_is_rejected(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    _load_day(writer_con, write_crawl, "2026-10-01", synthetic_offer(1, price_amount=2.0))
    # The next day the card's only offer is 0.15 (7.5% of 2.0): a unit mistake; 0.25 (12.5%) is a bargain.
    _load_day(
        writer_con,
        write_crawl,
        "2026-10-02",
        synthetic_offer(2, price_amount=0.15),
        synthetic_offer(3, price_amount=0.25),
    )
    assert _rejected(writer_con) == [
        "implausible price: 0.15 USD per GPU-hour is under 10% of the cheapest price ever seen for this GPU "
        "(2 USD per GPU-hour)"
    ]
    loaded = writer_con.execute("SELECT offer_id FROM offers ORDER BY offer_id").fetchall()
    assert loaded == [("synthetic-1",), ("synthetic-3",)]
    references = writer_con.execute(
        "SELECT reference_usd_per_gpu_hour, reference_source, reference_offers FROM gpu_price_references "
        "WHERE gpu_model = $gpu",
        {"gpu": H100},
    ).fetchall()
    assert references == [(0.25, "history", 2)]  # the bargain is history now


def test_a_card_never_priced_is_judged_by_the_cheapest_compute_in_the_catalog(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    gpus.sync_catalog(writer_con)
    _load_day(writer_con, write_crawl, "2026-10-01", synthetic_offer(1, price_amount=2.0))
    # An A100 never seen before, at a hundredth of what the H100's compute costs scaled to the A100's TFLOPs.
    a100 = {"gpu_name_raw": "A100 SXM 80GB", "gpu_model": "A100 SXM 80GB", "offer_id": "synthetic-a100"}
    _load_day(writer_con, write_crawl, "2026-10-02", synthetic_offer(2, price_amount=0.02, **a100))
    (reason,) = _rejected(writer_con)
    assert reason.startswith(
        "implausible price: 0.02 USD per GPU-hour is under 10% of the cheapest compute ever seen"
    )


def test_no_history_judges_nothing(writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl) -> None:
    _load_day(writer_con, write_crawl, "2026-10-01", synthetic_offer(1, price_amount=0.05))
    assert _rejected(writer_con) == []


def test_imports_pass_the_same_rule(writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl) -> None:
    _load_day(writer_con, write_crawl, "2026-10-01", synthetic_offer(1, price_amount=2.0))
    offer = synthetic_offer(9, price_amount=0.1, platform="importcloud", observed_at="2026-10-03T00:00:00Z")
    _import(writer_con, offer)
    (reason,) = _rejected(writer_con)
    assert reason.startswith("implausible price: 0.1 USD per GPU-hour is under 10%")


SEEN_FROM_OFFERS = """
SELECT gpu_model, min(price_usd_per_gpu_hour), count(*)
FROM offers
WHERE gpu_model IS NOT NULL
  AND price_usd_per_gpu_hour IS NOT NULL
  AND offer_price_problem(price_usd_per_gpu_hour) IS NULL
GROUP BY gpu_model ORDER BY gpu_model
"""


def test_the_cheapest_price_seen_is_kept_equal_to_the_offers_it_stands_for(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    """Migration 080 keeps the references in gpu_price_seen, raised by each load instead of an
    aggregate over every offer: after crawls (a cheaper day, a rejected price, a duplicate) and an
    import it must equal that aggregate row for row."""
    a100 = {"gpu_name_raw": "A100 SXM 80GB", "gpu_model": "A100 SXM 80GB"}
    _load_day(writer_con, write_crawl, "2026-10-01", synthetic_offer(1, price_amount=2.0))
    _load_day(
        writer_con,
        write_crawl,
        "2026-10-02",
        synthetic_offer(2, price_amount=1.5),
        synthetic_offer(3, price_amount=0.1),  # rejected: under a tenth of 2.0
        synthetic_offer(4, price_amount=1.2, **a100),
        synthetic_offer(4, price_amount=1.1, **a100),  # a duplicate: one of the two loads
        synthetic_offer(5, price_amount=1.0, gpu_model=None, gpu_name_raw="Mystery GPU"),
    )
    offer = synthetic_offer(9, price_amount=1.4, platform="importcloud", observed_at="2026-10-03T00:00:00Z")
    _import(writer_con, offer)

    seen = writer_con.execute(
        "SELECT gpu_model, cheapest_usd_per_gpu_hour, offers FROM gpu_price_seen ORDER BY gpu_model"
    ).fetchall()
    assert seen == writer_con.execute(SEEN_FROM_OFFERS).fetchall()
    assert [(model, offers) for model, _, offers in seen] == [("A100 SXM 80GB", 1), (H100, 3)]


def test_the_migration_fills_the_table_from_the_offers_already_loaded(tmp_path) -> None:
    """A warehouse migrated up to 075 with offers in it gets gpu_price_seen filled from them."""
    from warehouse import migrate

    folder = tmp_path / "migrations"
    folder.mkdir()
    for migration in migrate.available():
        if migration.version < 80:  # as a warehouse was before 080 (later ones come after it)
            (folder / migration.name).write_text(migration.sql, encoding="utf-8")
    later = folder / "080_price_seen.sql"
    held = next(m.sql for m in migrate.available() if m.version == 80)
    con = duckdb.connect()
    migrate.migrate(con, folder)
    for offer_id, usd in (("a", 2.0), ("b", 3.0), ("c", 500.0)):  # 500: outside the plausible range
        con.execute(
            "INSERT INTO offers (crawl_id, platform, offer_id, gpu_name_raw, gpu_model, gpu_count, "
            "price_amount, price_currency, price_per, billing_period, pricing_type, hourly_rentable, "
            "price_usd_per_gpu_hour, observed_at, observed_date) VALUES ('c', 'p', $offer_id, 'H100', "
            "$gpu, 1, $usd, 'USD', 'gpu', 'hour', 'on_demand', TRUE, $usd, now(), current_date)",
            {"gpu": H100, "offer_id": offer_id, "usd": usd},
        )
    later.write_text(held, encoding="utf-8")
    assert migrate.migrate(con, folder) == ["080_price_seen.sql"]
    assert con.execute("SELECT * FROM gpu_price_seen").fetchall() == [(H100, 2.0, 2)]
    con.close()
