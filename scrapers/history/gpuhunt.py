"""dstack gpuhunt catalog CSV (`<provider>.csv` of one catalog version) -> offers.

Semantics (price-sources.md §1.7, gpuhunt `_internal/storage.py`):
- columns `instance_name, location, price, cpu, memory, gpu_count, gpu_name, gpu_memory,
  spot, disk_size` (v1), plus `gpu_vendor, flags, cpu_arch, provider_data` (v2);
- `price` is USD per hour for the whole instance; `gpu_memory` is GB per GPU;
- `spot` is `True`/`False`: one row is either a spot or an on-demand offer;
- `location` is the provider's region or data center, kept as written;
- offline catalogs list the offers that existed at collection, with no count:
  `available_gpus` stays NULL (unknown, not zero);
- rows with `gpu_count` 0 are CPU instances: skipped and counted;
- the raw GPU name is `instance_name`, the provider's own name for the offer, which keeps
  the form and memory (`gpu_1x_h100_sxm5`, `NVIDIA H100 80GB HBM3`) that gpuhunt's
  `gpu_name` (`H100`) drops; `gpu_name` is the fallback and stays in `extra`.
The provider comes from the file name (`runpod.csv`, `lambdalabs.csv`) or `--platform`;
the day from `--date` or the path (catalog versions are `YYYYMMDD-<run>`).
"""

from __future__ import annotations

import datetime as dt
import json
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
)
from scrapers.history.paths import midnight_utc, observation_day
from scrapers.history.platforms import platform_slug

FORMAT = "gpuhunt"
DESCRIPTION = (
    "dstack gpuhunt catalog CSV <provider>.csv (price per instance-hour; date from --date or the path)"
)

_REQUIRED = ("instance_name", "location", "price", "gpu_count", "gpu_name", "gpu_memory", "spot")
_EXTRA_COLUMNS = ("cpu", "memory", "disk_size", "gpu_vendor", "flags", "cpu_arch")
_SPOT = {"True": True, "False": False, "true": True, "false": False}


def read_chunks(path: Path, options: ReadOptions) -> Iterator[ImportedChunk]:
    """Read one provider's catalog CSV, `options.chunk_rows` rows at a time."""
    day = observation_day(path, options.observed_on)
    slug = platform_slug(options.platform or path.stem)
    header = pd.read_csv(path, dtype=str, nrows=0).columns
    missing = [column for column in _REQUIRED if column not in header]
    if missing:
        raise ValueError(f"{path.name}: not a gpuhunt catalog CSV, missing columns {missing}")
    rows = gpu_rows = 0
    for raw in pd.read_csv(path, dtype=str, keep_default_na=False, chunksize=options.chunk_rows):
        chunk = _chunk(raw, path, slug, day)
        rows, gpu_rows = rows + chunk.rows_read, gpu_rows + chunk.rows_read - chunk.rows_not_gpu
        yield chunk
    yield last_chunk((PlatformDay(slug, day),), _problem(path, rows, gpu_rows))


def _chunk(raw: pd.DataFrame, path: Path, slug: str, day: dt.date) -> ImportedChunk:
    """Some rows of the catalog, read."""
    count = pd.to_numeric(raw["gpu_count"], errors="coerce")
    gpu_rows = raw[count.fillna(1) != 0]
    count = count[gpu_rows.index]
    price = pd.to_numeric(gpu_rows["price"], errors="coerce")
    spot = gpu_rows["spot"].map(_SPOT)
    provider_data = gpu_rows.get("provider_data", pd.Series("", index=gpu_rows.index)).map(_json_object)
    reasons = first_failure(
        [
            (count.isna() | (count < 0) | (count % 1 != 0), "gpu_count is not a whole number"),
            (count > MAX_COUNT, f"gpu_count is over {MAX_COUNT}"),
            (gpu_rows["instance_name"].str.strip() == "", "instance_name is empty"),
            (price.isna(), "price is not a number"),
            (price <= 0, "price is not positive"),
            (spot.isna(), "spot is neither True nor False"),
            (provider_data.isna(), "provider_data is not a JSON object"),
        ],
        gpu_rows.index,
    )
    good = reasons.isna()
    rows = gpu_rows[good]
    memory_gb = pd.to_numeric(rows["gpu_memory"], errors="coerce")
    gpu = canonical_gpus([rows["instance_name"], rows["gpu_name"]], memory_gb)
    extra = pd.DataFrame(
        {column: rows[column] for column in _EXTRA_COLUMNS if column in rows}
        | {
            "instance_name": rows["instance_name"],
            "gpu_name": rows["gpu_name"],
            "provider_data": provider_data[good],
        }
    )
    items = offer_frame(
        {
            "platform": slug,
            "offer_id": rows["instance_name"]
            + "@"
            + rows["location"]
            + "/"
            + count[good].astype(int).astype(str)
            + "x",
            "gpu_name_raw": rows["instance_name"],
            "gpu_count": count[good].astype(int),
            "price_amount": price[good],
            "price_currency": "USD",
            "price_per": "instance",
            "billing_period": "hour",
            "pricing_type": spot[good].map({True: "spot", False: "on_demand"}),
            "observed_at": midnight_utc(day),
            "source_url": path.resolve().as_uri(),
            "gpu_model": gpu["gpu_model"],
            "gpu_memory_gb": gpu["gpu_memory_gb"],
            "gpu_form": gpu["gpu_form"],
            "region": rows["location"].where(rows["location"].str.strip() != ""),
            "extra": pd.Series(records(extra), index=rows.index, dtype=object),
        },
        rows.index,
    )
    return ImportedChunk(
        frame=items,
        rejected=rejected_frame(gpu_rows[~good], reasons, slug, day),
        days=(PlatformDay(slug, day),),
        rows_read=len(raw),
        rows_not_gpu=len(raw) - len(gpu_rows),
    )


def _json_object(text: str) -> dict | None:
    """provider_data: `{}` when empty, the object when valid JSON, None when not an object."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _problem(path: Path, rows: int, gpu_rows: int) -> str | None:
    if rows == 0:
        return f"{path.name} has a header and no rows: a broken catalog, not a sold-out provider"
    if gpu_rows == 0:
        return f"{path.name} lists only CPU instances, no GPU offer"
    return None
