"""SkyPilot catalog `vms.csv` (one cloud, one dated version) -> offers.

The rows read as the catalog spiders read them: one reader, `scrapers.skypilot_offers` (prices per
instance-hour, spot, per-GPU memory, each cloud's quirks, GCP's GPU rows priced with their host
VM). A row that offers no GPU (a CPU instance, GCP's host VMs and TPUs) is skipped and counted; a
row the reader will not pass on is refused with the spiders' reason (`record_incomplete`,
`gpu_count_invalid`, `host_missing`). No row says anything about stock: `available_gpus` stays
NULL. The file's day is every offer's `catalog_date`. A file with a header and no rows is a broken
catalog run: a failed day, not an empty one.

The file is read as a stream of rows, `ReadOptions.chunk_rows` at a time; GCP's table, whose GPU rows need the
host VMs of their zone, is read twice (its VM rows first).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pandas as pd

from scrapers.history.offers import (
    REJECTED_COLUMNS,
    ImportedChunk,
    PlatformDay,
    ReadOptions,
    last_chunk,
)
from scrapers.history.paths import midnight_utc, observation_day
from scrapers.history.platforms import platform_slug
from scrapers.items import OfferItem
from scrapers.skypilot_offers import CatalogTable, GcpTable, Refused

FORMAT = "skypilot"
DESCRIPTION = (
    "SkyPilot catalog vms.csv of one cloud (price per instance-hour; date from --date or the file name)"
)

_REQUIRED = ("AcceleratorName", "AcceleratorCount", "Price", "Region", "GpuInfo")
_CLOUD_IN_NAME = re.compile(r"^(?P<cloud>[A-Za-z0-9.-]+?)_vms(?:[_.-]|$)")


def read_chunks(path: Path, options: ReadOptions) -> Iterator[ImportedChunk]:
    """Read one cloud's vms.csv; the cloud is `options.platform`, else the file's (lambda_vms_*.csv,
    vast/vms.csv)."""
    day = observation_day(path, options.observed_on)
    slug = platform_slug(options.platform) if options.platform else _platform_in_name(path)
    table = CatalogTable.of(slug)(
        slug, midnight_utc(day), path.resolve().as_uri(), catalog_date=day.isoformat()
    )
    required = (*_REQUIRED, *(column for column in table.required if column not in _REQUIRED))
    header = _header(path)
    missing = [column for column in required if column not in header]
    if missing:
        raise ValueError(f"{path.name}: not a SkyPilot vms.csv, missing columns {missing}")
    if isinstance(table, GcpTable):
        table.learn(_rows(path))
    rows = _rows(path)
    days = (PlatformDay(slug, day),)
    rows_read = rows_not_gpu = 0
    while chunk := list(islice(rows, options.chunk_rows)):
        offers: list[OfferItem] = []
        refused: list[dict[str, Any]] = []
        gpu_rows = [row for row in chunk if table.is_gpu_row(row)]
        for row in gpu_rows:
            for result in table.read_gpu_row(row):
                if isinstance(result, Refused):
                    refused.append(_refused(result, slug, day))
                else:
                    offers.append(result)
        rows_read, rows_not_gpu = rows_read + len(chunk), rows_not_gpu + len(chunk) - len(gpu_rows)
        yield ImportedChunk(_rejected(refused), days, len(chunk), len(chunk) - len(gpu_rows), offers=offers)
    yield last_chunk(days, _problem(path, rows_read, rows_not_gpu))


def _header(path: Path) -> list[str]:
    with path.open(encoding="utf-8-sig", newline="") as file:
        return next(csv.reader(file), [])


def _rows(path: Path) -> Iterator[dict[str, str | None]]:
    """The table's rows, an empty cell as None (as the spiders read the answer, `parsing.csv_rows`)."""
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as file:
        for row in csv.DictReader(file):
            yield {key: value or None for key, value in row.items() if key is not None}


def _refused(result: Refused, slug: str, day: dt.date) -> dict[str, Any]:
    raw = json.dumps(dict(result.row), ensure_ascii=False)
    return {"platform": slug, "day": day, "raw": raw, "reason": result.reason}


def _rejected(refused: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(refused, columns=list(REJECTED_COLUMNS), dtype=object)


def _platform_in_name(path: Path) -> str:
    if path.name == "vms.csv":
        return platform_slug(path.parent.name)
    match = _CLOUD_IN_NAME.match(path.name)
    if match is None:
        raise ValueError(f"{path.name}: cannot tell the cloud from the file name; pass --platform")
    return platform_slug(match["cloud"])


def _problem(path: Path, rows: int, rows_not_gpu: int) -> str | None:
    if rows == 0:
        return (
            f"{path.name} has a header and no rows: a broken catalog run, not a sold-out cloud; "
            "the offers seen before stay current"
        )
    if rows_not_gpu == rows:
        return f"{path.name} lists only CPU instance types, no GPU offer"
    return None
