"""Price history across crawls and imports: bulk loading of imports, trends, and backfilled plans.

Imported history (crawl runs with source `import:<format>`) and our own crawls share the
`offers` table and the `platform` slug; the `daily_runs` view (definitions/20_daily_runs.sql) picks the one
run that stands for a platform on a day, our own crawl first. `backfill_plans` computes the
plans of every past day with data, with the one plan sequence the Dagster plan assets call
(`planning.plan_days`).

Why a bulk path beside `warehouse.loading.load_crawl`: an observations file holds 3,305
(platform, day) runs; one `load_crawl` per run costs ~30-40 ms of DuckDB statements (staging,
pricing, inserts), over two minutes for one file. `load_imported` prices and inserts every run
of a file with a handful of statements, through the same checks and pricing (checked_offers, then
the crawl loader's load/price_staged.sql, after history/stage_imported.sql).
"""

from __future__ import annotations

import datetime as dt
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from scrapers.history.paths import latest_real_day
from scrapers.items import feed_line
from warehouse import daily_plans, plan_sequence, queries
from warehouse.plan_sequence import PlanOptions


@dataclass(frozen=True)
class BackfilledDay:
    """One day's outcome: platforms that fed it, plan rows that fit, plan rows, changes, offers left out."""

    day: dt.date
    platforms: int
    plans_ok: int
    plans: int
    changes: int
    offers_excluded: int


# `gpuplan history --days` default: a model priced within that many days of the latest run
# resolves even before the gpus table lists it.
RECENT_MODEL_DAYS = 90

# Columns of the frames `load_imported` takes (offers: any of OfferItem's fields, by name).
IMPORT_RUN_COLUMNS = ("crawl_id", "platform", "day", "items_yielded", "rows_refused", "problem")
IMPORT_REFUSED_COLUMNS = ("crawl_id", "platform", "raw", "reason")
# DuckDB settings while a file is staged and loaded: a bounded share of memory whatever the file's
# size (the rest spills to the temp directory), and no insertion order to keep, which lets large
# inserts stream. The connection's own values come back after.
IMPORT_SETTINGS = {"memory_limit": "1GB", "preserve_insertion_order": "false"}
_SET = {
    "memory_limit": "SET memory_limit = $value",
    "preserve_insertion_order": "SET preserve_insertion_order = $value",
}


def price_trend(
    con: duckdb.DuckDBPyConnection,
    gpu_model: str,
    since: dt.date,
    until: dt.date,
    *,
    platform: str | None = None,
    pricing_type: str | None = None,
    gpu_count: int | None = None,
) -> pd.DataFrame:
    """Per day in [since, until]: min and median USD per GPU-hour of `gpu_model`, offers, platforms, sources.

    `platform`, `pricing_type` and `gpu_count` (GPUs per offer) narrow the offers; None keeps all.
    Days without any offer are absent, never zero.
    """
    return queries.frame(
        con,
        "history/price_trend",
        gpu_model=gpu_model,
        since=since,
        until=until,
        platform=platform,
        pricing_type=pricing_type,
        gpu_count=gpu_count,
    )


def backfill_crawls(
    con: duckdb.DuckDBPyConnection, first: dt.date | None, last: dt.date | None
) -> pd.DataFrame:
    """Per day with data in [first, last] (None = open): the crawl of each platform its plans read.

    Columns: day (datetime.date), platform, crawl_id, status, already_recorded (TRUE where
    plan_crawls has it).
    """
    frame = queries.frame(con, "history/backfill_crawls", first=first, last=last)
    frame["day"] = pd.to_datetime(frame["day"]).dt.date
    return frame


def record_history_crawls(
    con: duckdb.DuckDBPyConnection, first: dt.date | None, last: dt.date | None
) -> pd.DataFrame:
    """Record, for each day with data in [first, last], the run of each platform the day's crawls lack.

    `con` is the writer. A (day, platform) already in plan_crawls keeps its crawl; the others get
    the run that stands for the platform that day (`daily_runs`). Returns `backfill_crawls`' frame
    (every crawl of those days, `already_recorded` FALSE for the ones recorded now).
    """
    crawls = backfill_crawls(con, first, last)
    new = crawls[~crawls["already_recorded"]]
    for day in sorted(set(new["day"])):
        daily_plans.record_plan_crawls(con, day, new[new["day"] == day])
    return crawls


def priced_gpu_models(con: duckdb.DuckDBPyConnection, since: dt.date | None = None) -> pd.DataFrame:
    """Canonical GPU model names to resolve a GPU name against (column gpu_model), sorted.

    The GPU catalog (`gpus`) and the models priced by runs of day `since` or later (None: the
    RECENT_MODEL_DAYS days up to the latest run's). Reads only those days' offers, however long
    the history is.
    """
    if since is None:  # an empty warehouse has no latest run, and no offers either
        latest = queries.frame(con, "history/latest_run_day")["latest_day"].iloc[0]
        if not pd.isna(latest):
            since = pd.Timestamp(latest).date() - dt.timedelta(days=RECENT_MODEL_DAYS - 1)
    return queries.frame(con, "history/gpu_models", since=since)


def load_imported(
    con: duckdb.DuckDBPyConnection,
    source: str,
    source_file: str,
    runs: pd.DataFrame,
    offers: pd.DataFrame,
    refused: pd.DataFrame,
) -> pd.DataFrame:
    """Load every run of one imported file, given as frames, in one transaction; runs already loaded
    are left as they are.

    `runs` (IMPORT_RUN_COLUMNS): one row per (platform, day), `crawl_id` a content hash so a
    re-import is a no-op; `offers`: a `crawl_id` and OfferItem fields by name (others are ignored),
    optionally `item_json`, the whole item as JSON, whose fields win (`extra` is read from it);
    `refused` (IMPORT_REFUSED_COLUMNS): rows the importer could not turn into items. `source` is
    `import:<format>`. Returns crawl_runs' row for every run, with `already_loaded`. Staged and
    loaded as `ImportStaging` stages and loads a file.
    """
    frames = {"import_frame_runs": runs, "import_frame_offers": offers, "import_frame_refused": refused}
    with ImportStaging(con) as staging:
        for name, frame in frames.items():
            con.register(name, frame)
        try:
            queries.execute(con, "history/import_frames")
        finally:
            for name in frames:
                con.unregister(name)
        return staging.load_staged(source, source_file)


def _load_import(con: duckdb.DuckDBPyConnection, source: str, source_file: str) -> pd.DataFrame:
    """The bulk load of the runs and rows staged in import_runs and import_rows."""
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    existing = set(queries.frame(con, "history/runs_loaded")["crawl_id"])
    con.execute("BEGIN TRANSACTION")
    try:
        # Staged as a crawl is (checked_offers), then the crawl loader's statements: one rule set
        # for crawled and imported offers.
        queries.execute(con, "history/stage_imported", source=source)
        queries.execute(con, "fx/days")
        queries.execute(con, "fx/day_rates")
        queries.execute(con, "load/price_staged")
        queries.execute(con, "load/insert_offers")
        queries.execute(con, "load/insert_rejected", rejected_at=now)
        queries.execute(con, "history/insert_rejected", rejected_at=now)
        queries.execute(con, "history/record_runs", source=source, source_file=source_file, loaded_at=now)
        queries.execute(con, "load/drop_staging")
        queries.execute(con, "load/price_references")  # once the runs are recorded
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    result = queries.frame(con, "history/runs_loaded")
    result["already_loaded"] = result["crawl_id"].isin(existing)
    return result


class ImportStaging:
    """One imported file's rows, staged chunk by chunk in a DuckDB temp table, then loaded at once.

    A reader read in Python hands over a chunk at a time (`add`: its items written as a crawl feed
    is, read back by the crawl loader's reader), a reader in SQL stages the whole file in one
    statement (`execute`), so the process holds at most one chunk; DuckDB keeps the staged rows
    under IMPORT_SETTINGS' memory limit and spills the rest to its temp directory. `load` gives
    each (platform, day) its run and content-hashed `crawl_id` (history/import_runs.sql: the same
    id whatever the chunk size or row order) and loads every run in one transaction. Use as a
    context manager: the staging is dropped however it ends.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, feeds: Path | None = None) -> None:
        """`feeds`: the folder where `add` writes a chunk's feed (default: the system's temp folder)."""
        self.con = con
        self.feeds = feeds
        self._settings: dict[str, str] = {}

    def __enter__(self) -> ImportStaging:
        for name, value in IMPORT_SETTINGS.items():
            (current,) = self.con.execute("SELECT current_setting($name)", {"name": name}).fetchall()[0]
            self._settings[name] = str(current)
            self.con.execute(_SET[name], {"value": value})
        queries.execute(self.con, "history/import_staging")
        return self

    def __exit__(self, *exc: object) -> None:
        queries.execute(self.con, "history/import_drop")
        for name, value in self._settings.items():
            self.con.execute(_SET[name], {"value": value})

    def add(self, items: Iterable[Mapping[str, Any]], refused: pd.DataFrame) -> None:
        """Append one chunk: `items`, OfferItems as dicts (scrapers.items.feed_line writes each as a
        line of a crawl feed), and `refused` (platform, day, raw, reason)."""
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", suffix=".jsonl", dir=self.feeds, delete=False
        ) as feed:
            feed.writelines(feed_line(item) for item in items)
        self.con.register("import_chunk_refused", refused.loc[:, ["platform", "day", "raw", "reason"]])
        try:
            queries.execute(self.con, "history/import_items", feed=feed.name)
        finally:
            self.con.unregister("import_chunk_refused")
            Path(feed.name).unlink()

    def execute(self, query: str, frames: Mapping[str, pd.DataFrame], **params: Any) -> dict[str, Any]:
        """Stage a whole file with `query` (a reader in SQL), `frames` registered by name beside it;
        returns what it staged (history/import_tally.sql: rows_read, rows_refused, reasons, days)."""
        for name, frame in frames.items():
            self.con.register(name, frame)
        try:
            queries.execute(self.con, query, **params)
        finally:
            for name in frames:
                self.con.unregister(name)
        (tally,) = queries.records(self.con, "history/import_tally")
        return tally

    def load(
        self, source: str, source_file: str, days: Sequence[tuple[str, dt.date]], problem: str | None
    ) -> pd.DataFrame:
        """Load the staged rows as the runs of `days` ((platform, day), the first the file's first run,
        which rows that say neither belong to). Returns what `load_imported` returns."""
        if days:
            first_platform, first_day = days[0]
            queries.execute(
                self.con, "history/import_unplaced", platform=first_platform, day=first_day.isoformat()
            )
        day_frame = pd.DataFrame(
            {"platform": [platform for platform, _ in days], "day": [day.isoformat() for _, day in days]},
            dtype=object,
        )
        self.con.register("import_days", day_frame)
        try:
            queries.execute(self.con, "history/import_runs", source=source, problem=problem)
        finally:
            self.con.unregister("import_days")
        return self.load_staged(source, source_file)

    def load_staged(self, source: str, source_file: str) -> pd.DataFrame:
        """Load the staged rows under the runs in import_runs, in one transaction."""
        queries.execute(self.con, "history/import_views")
        return _load_import(self.con, source, source_file)


def planned_days(con: duckdb.DuckDBPyConnection, first: dt.date, last: dt.date) -> pd.DataFrame:
    """Per plan day in [first, last]: plan_date (datetime.date), plans, plans_ok, changes, offers_excluded."""
    frame = queries.frame(con, "history/planned_days", first=first, last=last)
    frame["plan_date"] = pd.to_datetime(frame["plan_date"]).dt.date
    return frame


def backfill_plans(
    con: duckdb.DuckDBPyConnection,
    options: PlanOptions,
    first: dt.date | None,
    last: dt.date | None,
    progress: Callable[[Sequence[dt.date], int], Iterable[dt.date]] | None = None,
) -> list[BackfilledDay]:
    """Plans and changes for each day with data in [first, last] (None = open), oldest first.

    `con` is the writer. The day's crawls are recorded first (`record_history_crawls`), then the
    days are planned by the one plan sequence the Dagster plan assets run (`planning.plan_days`,
    with the same `options`). Each day's rows are replaced (re-running a day changes nothing
    else). `progress(days, total)` may wrap the day sequence (a progress bar). No day after
    `latest_real_day()` is planned, whatever `last` says or the warehouse holds: an observation
    dated 2099 (loaded before imports refused such rows) must not give plans for 2099.
    """
    latest = latest_real_day()
    last = latest if last is None else min(last, latest)
    if first is not None and first > last:
        return []
    crawls = record_history_crawls(con, first, last)
    if crawls.empty:
        return []
    platforms_per_day = crawls.groupby("day").size()
    days = sorted(platforms_per_day.index)
    plan_sequence.plan_days(con, days, options, progress)
    outcome = {row["plan_date"]: row for row in planned_days(con, days[0], days[-1]).to_dict("records")}
    return [
        BackfilledDay(
            day=day,
            platforms=int(platforms_per_day[day]),
            plans_ok=int(outcome[day]["plans_ok"]),
            plans=int(outcome[day]["plans"]),
            changes=int(outcome[day]["changes"]),
            offers_excluded=int(outcome[day]["offers_excluded"]),
        )
        for day in days
    ]
