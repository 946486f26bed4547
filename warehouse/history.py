"""Price history across crawls and imports: a GPU's price trend, and the GPU models priced lately.

Imported history (crawl runs with source `import:<format>`, `warehouse.imports`) and our own
crawls share the `offers` table and the `platform` slug; the `daily_runs` view
(definitions/20_daily_runs.sql) picks the one run that stands for a platform on a day, our own
crawl first. Plans of past days are `warehouse.backfill`'s.
"""

from __future__ import annotations

import datetime as dt

import duckdb
import pandas as pd

from warehouse import queries

# `gpuplan history --days` default: a model priced within that many days of the latest run
# resolves even before the gpus table lists it.
RECENT_MODEL_DAYS = 90


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
