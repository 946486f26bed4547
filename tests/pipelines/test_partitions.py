"""pipelines/partitions.py: the partitions start at the first day the install has."""

from __future__ import annotations

import datetime as dt

from warehouse_template import migrated

from config.settings import Settings
from pipelines.definitions import build_defs
from pipelines.partitions import FIRST_DAY, first_partition_day
from warehouse.engine import connect

TODAY = dt.date(2026, 11, 30)


def test_a_new_install_starts_yesterday_so_nothing_shows_missing(settings: Settings) -> None:
    assert first_partition_day(settings.warehouse, "Asia/Shanghai", TODAY) == TODAY - dt.timedelta(days=1)
    partitions = build_defs(settings).resolve_assets_def("offers").partitions_def
    assert partitions is not None and len(partitions.get_partition_keys()) == 2  # yesterday and today


def test_the_first_day_with_history_is_the_first_partition(settings: Settings) -> None:
    earlier = TODAY - dt.timedelta(days=40)
    with connect.writer(migrated(settings.warehouse)) as con:
        # imported or loaded history, never planned: a backfill must be able to select its day
        con.execute(
            "INSERT INTO crawl_runs (crawl_id, platform, status, items_yielded, offers_loaded, loaded_at) "
            "VALUES ('earlier', 'quotes', 'ok', 3, 3, $at)",
            {"at": dt.datetime.combine(earlier, dt.time(6))},
        )
    assert first_partition_day(settings.warehouse, "Asia/Shanghai", TODAY) == earlier


def test_an_unreadable_warehouse_hides_no_day(settings: Settings) -> None:
    settings.warehouse.parent.mkdir(parents=True, exist_ok=True)
    settings.warehouse.write_bytes(b"not a database")
    assert first_partition_day(settings.warehouse, "Asia/Shanghai", TODAY) == dt.date.fromisoformat(FIRST_DAY)


def test_a_day_asked_for_before_the_first_is_a_partition_too(settings: Settings) -> None:
    day = dt.date(2025, 3, 1)
    partitions = build_defs(settings, first_day=day).resolve_assets_def("offers").partitions_def
    assert partitions is not None and partitions.get_first_partition_key() == day.isoformat()
