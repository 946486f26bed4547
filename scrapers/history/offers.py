"""Imported offers as DataFrames whose columns are exactly `OfferItem`'s fields, a chunk of rows at a time.

Readers build these frames column by column (no object per row where the format allows);
`offer_frame` checks the columns against the `OfferItem` dataclass, so a renamed contract
field fails here and not silently in the warehouse. A reader yields its file as chunks of at
most `chunk_rows` rows (`ImportedChunk`), so a file of any size is read in bounded memory;
`whole_file` joins them for a caller that wants the file at once.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scrapers.items import OfferItem
from sizing import gpu_names

ITEM_COLUMNS: tuple[str, ...] = tuple(field.name for field in dataclasses.fields(OfferItem))
_DEFAULTS: dict[str, Any] = {
    field.name: (field.default_factory if field.default_factory is not dataclasses.MISSING else field.default)
    for field in dataclasses.fields(OfferItem)
    if field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
}
REJECTED_COLUMNS = ("platform", "day", "raw", "reason")
# Rows a reader turns into offers at a time: a chunk's frames are a few hundred MB at most.
CHUNK_ROWS = 100_000
# Counts are INTEGER (32-bit) in the warehouse: a row with a larger one (1e20, a typo) is refused
# with its reason, never passed on to fail the whole import in a cast.
MAX_COUNT = 2**31 - 1


@dataclass(frozen=True)
class PlatformDay:
    """One platform on one observation day: the unit of an imported crawl run."""

    platform: str
    day: dt.date


@dataclass(frozen=True)
class ImportedFile:
    """One history file read into offers.

    `days` lists every (platform, day) the file speaks for, including those for which
    it holds no usable row: such a day becomes a failed run, never an empty one, so a
    broken file cannot read as "everything sold out". `problem` says why the file
    gave nothing for a day (for example a catalog with a header and no rows).
    """

    path: Path
    format: str
    items: pd.DataFrame  # columns ITEM_COLUMNS, one row per OfferItem
    days: tuple[PlatformDay, ...]
    rows_read: int  # data rows in the file, header excluded
    rows_not_gpu: int  # rows that are not GPU offers (CPU-only instance types), skipped on purpose
    rejected: pd.DataFrame  # columns REJECTED_COLUMNS: (platform, day) when known, the raw row as JSON, why
    problem: str | None = None

    @property
    def source(self) -> str:
        """The `source` value of every run and offer this file produces."""
        return f"import:{self.format}"


@dataclass(frozen=True)
class ReadOptions:
    """What a reader is told beside the file: the day (`--date`) and platform (`--platform`: a
    catalog's platform, or the one platform of a multi-platform file to keep), overriding what the
    file or its name says; and how many rows to read at a time."""

    observed_on: dt.date | None = None
    platform: str | None = None
    chunk_rows: int = CHUNK_ROWS


@dataclass(frozen=True)
class ImportedChunk:
    """Some rows of one history file read into offers (the fields of `ImportedFile`, for these rows).

    `days` are the (platform, day)s these rows speak for; a reader's last chunk carries the file's
    `problem`, known once every row is read. The items come as a frame (`frame`: a reader that
    builds columns) or as OfferItems (`offers`: a row reader), staged as they are (`item_records`);
    `items` is the frame either way, built from the OfferItems only when asked for.
    """

    rejected: pd.DataFrame
    days: tuple[PlatformDay, ...]
    rows_read: int
    rows_not_gpu: int = 0
    problem: str | None = None
    frame: pd.DataFrame | None = None
    offers: Sequence[OfferItem] = ()

    @cached_property
    def items(self) -> pd.DataFrame:
        """The chunk's items as a frame of ITEM_COLUMNS."""
        return self.frame if self.frame is not None else item_frame(self.offers)

    def item_records(self) -> Sequence[OfferItem | dict[str, Any]]:
        """The items as `scrapers.items.feed_line` writes them: the OfferItems themselves, without a
        frame between (building one and reading it back was a third of a row reader's import)."""
        return records(self.frame) if self.frame is not None else self.offers


def last_chunk(days: Sequence[PlatformDay], problem: str | None) -> ImportedChunk:
    """A reader's closing chunk: no rows, the (platform, day)s the file speaks for and its problem."""
    return ImportedChunk(pd.DataFrame(columns=REJECTED_COLUMNS, dtype=object), tuple(days), 0, 0, problem)


def whole_file(path: Path, file_format: str, chunks: Iterable[ImportedChunk]) -> ImportedFile:
    """Every chunk of a file as one `ImportedFile` (days sorted by day, then platform)."""
    read = list(chunks)
    return ImportedFile(
        path=path,
        format=file_format,
        items=pd.concat(
            [chunk.items for chunk in read if len(chunk.items)] or [item_frame([])], ignore_index=True
        ),
        days=sorted_days(day for chunk in read for day in chunk.days),
        rows_read=sum(chunk.rows_read for chunk in read),
        rows_not_gpu=sum(chunk.rows_not_gpu for chunk in read),
        rejected=pd.concat(
            [chunk.rejected for chunk in read if len(chunk.rejected)] or [last_chunk((), None).rejected],
            ignore_index=True,
        ),
        problem=next((chunk.problem for chunk in reversed(read) if chunk.problem), None),
    )


def sorted_days(days: Iterable[PlatformDay]) -> tuple[PlatformDay, ...]:
    """Distinct (platform, day)s, by day then platform: the first is the file's first run."""
    return tuple(sorted(set(days), key=lambda known: (known.day, known.platform)))


def item_frame(items: Sequence[OfferItem], index: pd.Index | None = None) -> pd.DataFrame:
    """OfferItems (a row reader's, like `scrapers.skypilot_offers`) as a frame of ITEM_COLUMNS (each
    item's fields as they are: `dataclasses.asdict`'s deep copy was most of a large catalog's time)."""
    return pd.DataFrame([vars(item) for item in items], columns=list(ITEM_COLUMNS), index=index)


def offer_frame(columns: Mapping[str, Any], index: pd.Index) -> pd.DataFrame:
    """A frame with OfferItem's columns in order; optional fields missing from `columns` get their default.

    Values may be Series aligned on `index` or scalars. Raises on a column OfferItem
    does not have and on a required field left out.
    """
    unknown = set(columns) - set(ITEM_COLUMNS)
    if unknown:
        raise ValueError(f"not OfferItem fields: {sorted(unknown)}")
    missing = [name for name in ITEM_COLUMNS if name not in columns and name not in _DEFAULTS]
    if missing:
        raise ValueError(f"required OfferItem fields missing: {missing}")
    frame = pd.DataFrame(index=index)
    for name in ITEM_COLUMNS:
        if name in columns:
            value = columns[name]
        else:
            default = _DEFAULTS[name]
            value = [default() for _ in range(len(index))] if callable(default) else default
        frame[name] = pd.Series(value, index=index, dtype=object) if value is None else value
    return frame.reset_index(drop=True)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """One dict per row (a missing value None, never NaN), as `extra` holds them: built from the
    columns' lists, several times faster than `DataFrame.to_dict` on a large chunk."""
    names = list(frame.columns)
    columns = [frame[name].astype(object).where(frame[name].notna(), None).tolist() for name in names]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def first_failure(checks: Sequence[tuple[pd.Series, str]], index: pd.Index) -> pd.Series:
    """Per row, the reason of the first check that fails (a True mask), or None when all pass."""
    if not checks:
        return pd.Series(None, index=index, dtype=object)
    reasons = np.select(
        [mask.to_numpy(dtype=bool) for mask, _ in checks],
        [np.full(len(index), reason, dtype=object) for _, reason in checks],
        np.full(len(index), None, dtype=object),
    )
    return pd.Series(reasons, index=index, dtype=object)


def rejected_frame(rows: pd.DataFrame, reasons: pd.Series, platform: object, day: object) -> pd.DataFrame:
    """The refused rows as they were read (JSON text) beside their reasons and, where known, (platform, day).

    `platform` and `day` are a value for the whole file or Series aligned on the file's rows
    (None where the row did not say).
    """
    raw = [json.dumps(record, ensure_ascii=False) for record in records(rows)]
    frame = pd.DataFrame(
        {
            "platform": platform.loc[rows.index] if isinstance(platform, pd.Series) else platform,
            "day": day.loc[rows.index] if isinstance(day, pd.Series) else day,
            "raw": raw,
            "reason": reasons.loc[rows.index],
        },
        index=rows.index,
        columns=REJECTED_COLUMNS,
    )
    return frame.reset_index(drop=True).astype(object)


def canonical_gpus(candidates: Sequence[pd.Series], memory_gb: pd.Series | None) -> pd.DataFrame:
    """Canonical GPU model, form and memory per row (`scrapers.gpu_names.identify_first`).

    `candidates` are raw names in order of preference (an instance-type name that still
    carries the form, then a bare accelerator name); `memory_gb` is the per-GPU memory
    the file states (it separates 40/80 GB or 24/48 GB cards), or None. Columns:
    gpu_model (None when unknown or ambiguous: kept, flagged by the warehouse), gpu_form,
    gpu_memory_gb. Each distinct (names, memory) combination is looked up once.
    """
    index = candidates[0].index
    keys = pd.DataFrame({f"name{i}": names.fillna("").astype(str) for i, names in enumerate(candidates)})
    keys["memory_gb"] = memory_gb.astype(float) if memory_gb is not None else np.nan
    distinct = keys.drop_duplicates().reset_index(drop=True)
    identities = [
        gpu_names.identify_first(list(names), None if pd.isna(memory) else float(memory))
        for *names, memory in zip(*(distinct[column].tolist() for column in distinct.columns), strict=True)
    ]
    distinct["gpu_model"] = [identity.gpu_model for identity in identities]
    distinct["gpu_form"] = [identity.gpu_form for identity in identities]
    distinct["gpu_memory_gb"] = [identity.gpu_memory_gb for identity in identities]
    looked_up = keys.merge(distinct, on=list(keys.columns), how="left")
    result = looked_up[["gpu_model", "gpu_form", "gpu_memory_gb"]].set_axis(index)
    return result.astype({"gpu_model": object, "gpu_form": object, "gpu_memory_gb": float})
