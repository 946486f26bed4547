"""warehouse/definitions/ and migrate.py's definitions step: views and macros as current files.

The move itself (migration 090) is checked on the real files: a fresh warehouse migrated as it was
before the move (the migrations below 090, which are never edited, made every view and macro) and
one migrated now hold the same objects with the same SQL, but for the differences named here.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import duckdb
import pytest

from config.settings import Settings
from scrapers.crawl.summary import STATUSES, WORKED_STATUSES
from warehouse.engine import connect
from warehouse.engine.migrate import MigrationError, apply_definitions, available, current, migrate, pending

HANDOVER = 90  # migration 090_definitions_handover.sql

# Macros the definitions call where the migrations spelled the same rule inline: with their calls
# inlined again, an object's SQL must be what the migrations made.
ADOPTED = {
    "run_day_of": "made by migration 085, whose callers still spelled it",
    "run_worked": "'a run worked' (ok or partial), spelled 16 times before",
    "crawled_at_of": "when a run crawled (capped by loaded_at), spelled in usable_runs before",
}
# Objects whose SQL differs on purpose from what the migrations made, even so, and why.
CHANGED: dict[str, str] = {
    "hours_per_billing_period": "a year is 8760 h, the reserved terms of the offer contract",
    "judged_offers": "a fractional offer (gpu_frac) is never planned as a card nor a price reference",
    "price_history_daily": "gpus_available counts each machine's free GPUs once (free_gpus)",
    "history_price_problem": "judged against the other platforms' median over a window",
    # a failed crawl does not rewrite the day's plans: carried crawls, stale offers
    "daily_runs": "says when its run crawled (crawled_at), as day_runs does",
    "day_runs": "a failed platform's carried last good crawl stands for the day, stale, with crawled_at",
    "latest_runs": "stale when a later attempt failed, and by how many hours (the same rule, latest)",
    "latest_offers": "the offers standing now: a carried crawl's too, marked stale",
    "plan_shapes": "passes judged_offers' bound on a stale latest crawl (max_stale_hours)",
    "ranked_plans": "each plan says its offer's crawled_at and whether it is stale",
    "usable_runs": "says when its prices are from (priced_at: its catalog's own date when older)",
}
DROPPED = {
    "daily_run_offers": "dead: nothing read it since migration 040 (judged_offers)",
    "gpu_price_references": "the running minimum of the old history floor (migration 093: price_references)",
}
ADDED = {
    "run_worked": ADOPTED["run_worked"],
    "price_history_between": "price_history_daily of some days, reading only their offers (dataset export)",
    "feed_records": "how a crawl feed is read, once a statement's first part (load_stage_feed.sql)",
    "checked_offers": "the checks every offer passes, once appended to another file (load_check_staged.sql)",
    "best_plans": "the best plan of each daily plan and job, what the one change detector compares",
    "job_plan_changes": "a view now: the table's rows moved into plan_changes (migration 091)",
    "changed_plans": "one row per plan change, the one count of what changed (digest, refresh, Dagster)",
    "free_gpus": "how stock is counted: each machine's free GPUs once",
    "price_window_days": "the history rule judged when read, over a window (migration 093)",
    "price_reference_min_platforms": "the history rule's fewest other platforms",
    "price_references": "the history rule's references, the other platforms' median",
    "price_window_votes": "the history rule's votes, kept in price_reference_votes",
    "price_window_keys": "the keys of a day's history-rule votes: its platforms with prices in its window",
    "implausible_offers": "every stored offer the history rule judges implausible, with why",
    "price_floor_reason": "the price floor's reason in words, once for the check and the exclusions",
    "crawled_at_of": ADOPTED["crawled_at_of"],
    "plan_day_reached": "the latest plans are the newest day begun anywhere, not one dated ahead",
    "cluster_billed_hours": "a cluster's bill: the offer's, never under the cluster's own minimum term",
    # a partial crawl stands only for what it read: the carry rule in one home
    "crawl_stands_for": "what a crawl stands for: all, what it read, nothing",
    "carry_hours": "the hours between an attempt and the last good crawl carried for it",
    "carry_chain": "a carried partial crawl brings its own carried crawl, and so on back",
    "crawl_carries": "each attempt that does not stand for all, with its last good crawl",
    "standing_offers": "the offers of runs, less what a partial crawl beside a carried one read",
    "watch_scopes": "the card watches of one digest query, all watches read in one pass",
    # the offer's fields in one list in SQL, which the statements reading records derive theirs from
    "offer_fields": "the offer's fields and the type a record holds each in (the one list in SQL)",
    "offer_field_names": "offer_fields' names, in order",
    "offer_record": "a record with every field NULL, for a reader that builds records in SQL",
    # a catalog's own date is judged by the carry rule's bound
    "priced_at_of": "when a crawl's prices are from: its crawl, or its catalog's date when older",
}

VIEWS = """
SELECT view_name, sql FROM duckdb_views()
WHERE NOT internal AND schema_name = 'main' ORDER BY view_name
"""
MACROS = """
SELECT function_name, function_type, parameters, macro_definition FROM duckdb_functions()
WHERE NOT internal AND schema_name = 'main' AND function_type IN ('macro', 'table_macro')
ORDER BY function_name
"""


def _catalog(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[object, ...]]:
    """Every view and macro by name, with the SQL DuckDB keeps for it (normalised: no comments)."""
    found: dict[str, tuple[object, ...]] = {}
    for name, sql in con.execute(VIEWS).fetchall():
        found[name] = ("view", sql)
    for name, kind, parameters, definition in con.execute(MACROS).fetchall():
        found[name] = (kind, tuple(parameters), definition)
    return found


def _inlined(sql: object, macros: dict[str, tuple[object, ...]]) -> object:
    """`sql` with every call of an ADOPTED macro replaced by the macro's body (arguments without
    parentheses, as the callers write them)."""
    if not isinstance(sql, str):
        return sql
    for name in ADOPTED:
        _, parameters, body = macros[name]
        assert isinstance(parameters, tuple) and isinstance(body, str)

        def expand(call: re.Match[str], parameters: tuple[str, ...] = parameters, body: str = body) -> str:
            arguments = dict(zip(parameters, (a.strip() for a in call.group(1).split(",")), strict=True))
            return re.sub(r"\b(" + "|".join(parameters) + r")\b", lambda p: arguments[p.group(1)], body)

        sql = re.sub(rf"\b{name}\(([^()]*)\)", expand, sql)
    return sql


def _migrations_before(tmp_path: Path, version: int) -> Path:
    folder = tmp_path / f"before_{version:03d}"
    folder.mkdir()
    shipped = Path(connect.__file__).parents[1] / "migrations"
    for migration in available():
        if migration.version < version:
            shutil.copy(shipped / migration.name, folder)
    return folder


def test_the_move_keeps_every_view_and_macro_but_the_named_ones(tmp_path: Path) -> None:
    with duckdb.connect() as con:
        migrate(con, _migrations_before(tmp_path, HANDOVER))
        before = _catalog(con)
    with duckdb.connect() as con:
        migrate(con)
        after = _catalog(con)
    assert sorted(set(before) - set(after)) == sorted(DROPPED)
    assert sorted(set(after) - set(before)) == sorted(ADDED)
    differ = []
    for name in sorted(set(before) & set(after)):
        old = tuple(_inlined(part, after) for part in before[name])
        new = tuple(_inlined(part, after) for part in after[name])
        if old != new:
            differ.append(name)
    assert differ == sorted(CHANGED)
    # and the adoption did change them: the test would not see a regex that matched nothing
    assert before["usable_runs"] != after["usable_runs"]


def test_every_view_and_macro_of_a_fresh_warehouse_is_a_definition() -> None:
    with duckdb.connect() as con:
        migrate(con)
        made = set(_catalog(con))
        recorded = con.execute("SELECT name, objects FROM schema_definitions ORDER BY name").fetchall()
    defined = {name for definition in current() for name in definition.objects}
    assert made == defined
    assert recorded == [(d.name, list(d.objects)) for d in current()]


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "definitions"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for name, sql in files.items():
        (folder / name).write_text(sql, encoding="utf-8")
    return folder


def _migrations(tmp_path: Path) -> Path:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "001_t.sql").write_text("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2);", "utf-8")
    return folder


def test_a_changed_definition_is_applied_again_and_a_deleted_one_needs_its_migration(
    tmp_path: Path,
) -> None:
    migrations = _migrations(tmp_path)
    first = {
        "00_double.sql": "CREATE OR REPLACE MACRO double(x) AS x * 2;",
        "10_doubled.sql": "CREATE OR REPLACE VIEW doubled AS SELECT double(x) AS y FROM t;",
        "10_gone.sql": "CREATE OR REPLACE MACRO gone() AS TABLE SELECT 1 AS one;",
    }
    with duckdb.connect() as con:
        assert migrate(con, migrations, _folder(tmp_path, first)) == ["001_t.sql", *sorted(first)]
        assert migrate(con, migrations, _folder(tmp_path, first)) == []
        assert con.execute("SELECT sum(y) FROM doubled").fetchall() == [(6,)]
        then = {**first, "00_double.sql": "CREATE OR REPLACE MACRO double(x) AS x * 20;"}
        del then["10_gone.sql"]
        with pytest.raises(MigrationError, match=r"no definition makes: gone\. .*DROP MACRO \[TABLE\]"):
            migrate(con, migrations, _folder(tmp_path, then))
        assert con.execute("SELECT sum(y) FROM doubled").fetchall() == [(6,)]  # as it was
        (migrations / "002_drop_gone.sql").write_text("DROP MACRO TABLE IF EXISTS gone;", "utf-8")
        assert migrate(con, migrations, _folder(tmp_path, then)) == [
            "002_drop_gone.sql",
            "00_double.sql",
            "10_doubled.sql",
        ]
        assert con.execute("SELECT sum(y) FROM doubled").fetchall() == [(60,)]
        assert "gone" not in _catalog(con)
        assert con.execute("SELECT name FROM schema_definitions ORDER BY 1").fetchall() == [
            ("00_double.sql",),
            ("10_doubled.sql",),
        ]


def test_a_failing_definition_leaves_the_previous_ones(tmp_path: Path) -> None:
    migrations = _migrations(tmp_path)
    good = {"00_double.sql": "CREATE OR REPLACE MACRO double(x) AS x * 2;"}
    with duckdb.connect() as con:
        migrate(con, migrations, _folder(tmp_path, good))
        broken = {**good, "10_bad.sql": "CREATE OR REPLACE VIEW bad AS SELECT * FROM no_such_table;"}
        with pytest.raises(MigrationError, match=r"definition 10_bad\.sql failed"):
            apply_definitions(con, _folder(tmp_path, broken))
        assert con.execute("SELECT double(21)").fetchall() == [(42,)]
        assert con.execute("SELECT name FROM schema_definitions").fetchall() == [("00_double.sql",)]


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"00_t.sql": "CREATE TABLE u (x INTEGER);"}, "only CREATE OR REPLACE VIEW / MACRO"),
        ({"00_v.sql": "CREATE VIEW v AS SELECT 1;"}, "only CREATE OR REPLACE VIEW / MACRO"),
        ({"00_i.sql": "CREATE OR REPLACE VIEW v AS SELECT 1; INSERT INTO t VALUES (3);"}, "only CREATE"),
        ({"0_v.sql": "CREATE OR REPLACE VIEW v AS SELECT 1;"}, "NN_name.sql"),
        (
            {
                "00_a.sql": "CREATE OR REPLACE VIEW v AS SELECT 1;",
                "10_b.sql": "CREATE OR REPLACE VIEW v AS SELECT 2;",
            },
            "v is defined twice",
        ),
    ],
)
def test_a_definition_holds_views_and_macros_only(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    with pytest.raises(MigrationError, match=message):
        current(_folder(tmp_path, files))


def test_a_reader_of_a_snapshot_with_other_definitions_is_told_and_a_writer_renews_them(
    settings: Settings,
) -> None:
    with connect.writer(settings.warehouse):
        pass
    with duckdb.connect(str(settings.warehouse)) as con:  # as if published by a gpuplan with other rules
        con.execute("UPDATE schema_definitions SET sha256 = 'older' WHERE name = '40_judged_offers.sql'")
        con.execute("UPDATE warehouse_stamp SET prepared_for = NULL")
        assert pending(con) == ["definitions/40_judged_offers.sql"]
    with pytest.raises(connect.OutdatedWarehouseError, match=r"definitions/40_judged_offers\.sql"):
        connect.reader(settings.warehouse)
    shutil.copyfile(settings.warehouse, connect.writer_path(settings.warehouse))
    with connect.writer(settings.warehouse):
        pass
    with connect.reader(settings.warehouse) as con:
        assert pending(con) == []


def test_a_warehouse_from_a_newer_gpuplan_keeps_its_definitions(tmp_path: Path) -> None:
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        migrate(con)
        con.execute(
            "INSERT INTO schema_migrations (version, name, sha256) VALUES (999, '999_later.sql', 'x')"
        )
        con.execute("UPDATE schema_definitions SET sha256 = 'newer'")
        assert pending(con) == []
        assert migrate(con) == []
        assert con.execute("SELECT DISTINCT sha256 FROM schema_definitions").fetchall() == [("newer",)]


def test_python_and_sql_agree_on_which_runs_worked() -> None:
    with duckdb.connect() as con:
        migrate(con)
        worked = con.execute(
            "SELECT list(status ORDER BY status) FILTER (run_worked(status)) "
            "FROM unnest($statuses) AS s(status)",
            {"statuses": list(STATUSES)},
        ).fetchall()[0][0]
    assert worked == sorted(WORKED_STATUSES)
