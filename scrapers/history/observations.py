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

The file is read by DuckDB, in the warehouse (`warehouse/queries/history/import_observations.sql`,
run by `warehouse.imports`): a year of history is millions of rows, and no row becomes a Python
object. What is decided here, in Python, is what the file names: the platform slug of each provider
and the canonical card of each GPU name (`lookups`, once per distinct name).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from scrapers.history.offers import canonical_gpus
from scrapers.history.platforms import platform_slug

FORMAT = "observations"
DESCRIPTION = "daily observations CSV (date, provider, gpu_model, ... price_min_usd per GPU-hour, n_offers)"
# The query that reads the file into the import's staging table (warehouse/queries/), and the one
# that lists the names `lookups` resolves.
QUERY = "history/import_observations"
NAMES_QUERY = "history/observations_names"

REQUIRED = (
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


def check_header(path: Path) -> list[str]:
    """The file's columns; raises ValueError, naming the columns, when it is not a daily observations CSV."""
    with path.open(encoding="utf-8-sig", newline="") as file:
        header = next(csv.reader(file), [])
    missing = [column for column in REQUIRED if column not in header]
    if missing:
        raise ValueError(f"{path.name}: not a daily observations CSV, missing columns {missing}")
    return header


def lookups(providers: Sequence[str], gpu_names: Sequence[str]) -> dict[str, pd.DataFrame]:
    """The frames the query joins (by the names it registers them under): each provider's platform
    slug (`import_platforms`) and each GPU name's canonical card (`import_gpus`: gpu_model, gpu_form,
    gpu_memory_gb; an unknown name has none, and its offers load flagged as unknown GPUs)."""
    platforms = pd.DataFrame(
        {"provider": list(providers), "platform": [platform_slug(name) for name in providers]}, dtype=object
    )
    names = pd.Series(list(gpu_names), dtype=object)
    gpus = canonical_gpus([names], None).astype(object)
    gpus = gpus.where(gpus.notna(), None)  # an unknown card's memory is NULL, never NaN
    gpus.insert(0, "name", names)
    return {"import_platforms": platforms, "import_gpus": gpus}


def problem(path: Path, rows_in_file: int, rows_selected: int) -> str | None:
    """Why the file gave no day, when it gave none."""
    if rows_in_file == 0:
        return f"{path.name} has a header and no rows"
    if rows_selected == 0:
        return f"{path.name}: no row matches the given --date/--platform"
    return None
