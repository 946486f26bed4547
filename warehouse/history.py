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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import duckdb
import pandas as pd

from scrapers.history.offers import ITEM_COLUMNS
from scrapers.history.paths import latest_real_day
from warehouse import planning, plans, queries
from warehouse.planning import PlanOptions


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

# Columns of the frames `load_imported` takes.
IMPORT_RUN_COLUMNS = ("crawl_id", "platform", "day", "items_yielded", "rows_refused", "problem")
IMPORT_OFFER_COLUMNS = (
    "crawl_id",
    "item_json",
    "platform",
    "offer_id",
    "region",
    "gpu_name_raw",
    "gpu_model",
    "gpu_form",
    "gpu_memory_gb",
    "gpu_count",
    "price_amount",
    "price_currency",
    "price_per",
    "billing_period",
    "min_term_periods",
    "pricing_type",
    "available_gpus",
    "source_url",
    "observed_at",
)
IMPORT_REFUSED_COLUMNS = ("crawl_id", "platform", "raw", "reason")
# What ImportStaging.add takes per offer: the OfferItem fields but `extra`, which comes as JSON text
# (`extra_json`), and the day of its run.
IMPORT_STAGED_OFFER_COLUMNS = (*(name for name in ITEM_COLUMNS if name != "extra"), "extra_json", "day")
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
        plans.record_plan_crawls(con, day, new[new["day"] == day])
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
    re-import is a no-op; `offers` (IMPORT_OFFER_COLUMNS): OfferItem fields, `item_json` the
    whole item (its `extra` is stored, and a rejected row is kept as this text); `refused`
    (IMPORT_REFUSED_COLUMNS): rows the importer could not turn into items. `source` is
    `import:<format>`. Returns crawl_runs' row for every run, with `already_loaded`.
    A file read in chunks loads through `ImportStaging` instead, which ends here too.
    """
    frames = {"import_runs": (runs, IMPORT_RUN_COLUMNS), "import_offers": (offers, IMPORT_OFFER_COLUMNS)}
    frames["import_refused"] = (refused, IMPORT_REFUSED_COLUMNS)
    for name, (frame, columns) in frames.items():
        con.register(name, frame.loc[:, list(columns)])
    try:
        return _load_import(con, source, source_file)
    finally:
        for name in frames:
            con.unregister(name)


def _load_import(con: duckdb.DuckDBPyConnection, source: str, source_file: str) -> pd.DataFrame:
    """The bulk load of the runs, offers and refused rows named import_runs, import_offers and
    import_refused (frames or staged tables)."""
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
    """One imported file's rows, staged chunk by chunk in DuckDB temp tables, then loaded at once.

    A reader hands over a chunk at a time (`add`), so the process holds one chunk; DuckDB keeps the
    staged rows under IMPORT_MEMORY_LIMIT and spills the rest to its temp directory. `load` gives
    each (platform, day) its run and content-hashed `crawl_id` (history/import_runs.sql: the same
    id whatever the chunk size or row order) and loads every run in one transaction, as
    `load_imported` does. Use as a context manager: the staging is dropped however it ends.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
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

    def add(self, offers: pd.DataFrame, refused: pd.DataFrame) -> None:
        """Append one chunk: `offers` (IMPORT_STAGED_OFFER_COLUMNS), `refused` (platform, day, raw,
        reason)."""
        self.con.register("import_chunk_offers", offers.loc[:, list(IMPORT_STAGED_OFFER_COLUMNS)])
        self.con.register("import_chunk_refused", refused.loc[:, ["platform", "day", "raw", "reason"]])
        try:
            queries.execute(self.con, "history/import_chunk")
        finally:
            self.con.unregister("import_chunk_offers")
            self.con.unregister("import_chunk_refused")

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
    planning.plan_days(con, days, options, progress)
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
