"""Daily observations CSV (cherielilili/gpu-pricing-tracker `data/observations.csv`) -> offers.

One row is one day's aggregate of a provider's offers for (GPU model, GPUs per offer,
region, rental type): `price_min_usd`, `price_median_usd`, `price_max_usd` in USD per
GPU-hour, and `n_offers`, the number of offers aggregated.

Choices (samples/README.md):
- One offer per row, priced at the row's minimum: the cheapest rentable price is what
  plans compare. The median, the maximum, `n_offers` and `fetched_at` stay in `extra`.
- `available_gpus` is NULL: `n_offers` counts offers, not GPUs, and for the aggregator
  backfill rows (getdeploying.com) it is not a stock signal at all.
- `region` as written: a country code, `global`, or for RunPod its cloud tier
  (`secure`, `community`, `any`).
- `observed_at` is the row's `date` at 00:00 UTC (the file is a daily series); the
  tracker's own fetch time stays in `extra.fetched_at`.
- Every row with a positive price loads, outliers included: judging prices is the
  plans' and the checks' work, not the importer's. Known quirk of the real file: in its
  first week (aggregator rows of 2026-02-11 to about 02-18) many multi-GPU rows quote the
  instance total, not the per-GPU price (aws 8x H100 55.04 on 02-11, 6.88 from 02-21).
  They load as written: those offers look dearer than they were and lift that week's median.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from scrapers.history.offers import (
    MAX_COUNT,
    ImportedChunk,
    PlatformDay,
    ReadOptions,
    canonical_gpus,
    first_failure,
    last_chunk,
    offer_frame,
    records,
    rejected_frame,
    sorted_days,
)
from scrapers.history.paths import latest_real_day
from scrapers.history.platforms import platform_slug, platform_slugs

FORMAT = "observations"
DESCRIPTION = "daily observations CSV (date, provider, gpu_model, ... price_min_usd per GPU-hour, n_offers)"

_REQUIRED = (
    "date",
    "provider",
    "gpu_model",
    "gpu_count",
    "region",
    "rental_type",
    "price_min_usd",
    "price_median_usd",
    "price_max_usd",
    "n_offers",
    "source_url",
    "fetched_at",
)
_PRICING_TYPES = {"on_demand": "on_demand", "spot": "spot"}


def read_chunks(path: Path, options: ReadOptions) -> Iterator[ImportedChunk]:
    """Read the file `options.chunk_rows` rows at a time; each row's `date` and `provider` say its day
    and platform. `options.observed_on` and `options.platform`, when given, keep only that day or
    platform.
    """
    header = pd.read_csv(path, dtype=str, nrows=0).columns
    missing = [column for column in _REQUIRED if column not in header]
    if missing:
        raise ValueError(f"{path.name}: not a daily observations CSV, missing columns {missing}")
    rows_in_file = rows_selected = 0
    for raw in pd.read_csv(path, dtype=str, keep_default_na=False, chunksize=options.chunk_rows):
        chunk = _chunk(raw, options.observed_on, options.platform)
        rows_in_file, rows_selected = rows_in_file + len(raw), rows_selected + chunk.rows_read
        yield chunk
    yield last_chunk((), _problem(path, rows_in_file, rows_selected))


def _chunk(raw: pd.DataFrame, observed_on: dt.date | None, platform: str | None) -> ImportedChunk:
    """Some rows of the file, read; `rows_read` counts those the options keep."""
    days = pd.to_datetime(raw["date"], format="%Y-%m-%d", errors="coerce").dt.date
    platforms = platform_slugs(raw["provider"].where(raw["provider"].str.strip() != ""))
    selected = pd.Series(True, index=raw.index)
    if observed_on is not None:
        selected &= days == observed_on
    if platform is not None:
        selected &= platforms == platform_slug(platform)
    raw, days, platforms = raw[selected], days[selected], platforms[selected]
    future = days.notna() & (days > latest_real_day())

    count = pd.to_numeric(raw["gpu_count"], errors="coerce")
    price = pd.to_numeric(raw["price_min_usd"], errors="coerce")
    pricing_type = raw["rental_type"].map(_PRICING_TYPES)
    reasons = first_failure(
        [
            (days.isna(), "date is not YYYY-MM-DD"),
            (future, "date is in the future"),
            (platforms.isna(), "provider is empty"),
            (raw["gpu_model"].str.strip() == "", "gpu_model is empty"),
            (count.isna() | (count <= 0) | (count % 1 != 0), "gpu_count is not a positive whole number"),
            (count > MAX_COUNT, f"gpu_count is over {MAX_COUNT}"),
            (price.isna(), "price_min_usd is not a number"),
            (price <= 0, "price_min_usd is not positive"),
            (pricing_type.isna(), "rental_type is neither on_demand nor spot"),
        ],
        raw.index,
    )
    good = reasons.isna()
    rows = raw[good]
    day_text = days[good].map(dt.date.isoformat)
    gpu = canonical_gpus([rows["gpu_model"]], None)
    extra = pd.DataFrame(
        {
            "price_median_usd_per_gpu_hour": pd.to_numeric(rows["price_median_usd"], errors="coerce"),
            "price_max_usd_per_gpu_hour": pd.to_numeric(rows["price_max_usd"], errors="coerce"),
            "n_offers": pd.to_numeric(rows["n_offers"], errors="coerce"),
            "fetched_at": rows["fetched_at"],
            "provider": rows["provider"],
        }
    )
    items = offer_frame(
        {
            "platform": platforms[good],
            "offer_id": (
                rows["gpu_model"]
                + "/"
                + rows["gpu_count"]
                + "x/"
                + rows["region"]
                + "/"
                + rows["rental_type"]
            ),
            "gpu_name_raw": rows["gpu_model"],
            "gpu_count": count[good].astype(int),
            "price_amount": price[good],
            "price_currency": "USD",
            "price_per": "gpu",
            "billing_period": "hour",
            "pricing_type": pricing_type[good],
            "observed_at": day_text + "T00:00:00Z",
            "source_url": rows["source_url"],
            "gpu_model": gpu["gpu_model"],
            "gpu_memory_gb": gpu["gpu_memory_gb"],
            "gpu_form": gpu["gpu_form"],
            "region": rows["region"].where(rows["region"].str.strip() != ""),
            "extra": pd.Series(records(extra), index=rows.index, dtype=object),
        },
        rows.index,
    )
    # A day in the future is no run of ours: its rows are refused under the file's first run.
    days = days.where(~future)
    covered = pd.DataFrame({"platform": platforms, "day": days}).dropna().drop_duplicates()
    return ImportedChunk(
        items=items,
        rejected=rejected_frame(raw[~good], reasons, platforms, days),
        days=sorted_days(PlatformDay(platform, day) for platform, day in covered.itertuples(index=False)),
        rows_read=len(raw),
    )


def _problem(path: Path, rows_in_file: int, rows_selected: int) -> str | None:
    if rows_in_file == 0:
        return f"{path.name} has a header and no rows"
    if rows_selected == 0:
        return f"{path.name}: no row matches the given --date/--platform"
    return None
