"""The watches file (GPUPLAN_WATCHES): conditions a reader wants to hear about on the day they
become true, read into `Watch` values (the digest evaluates them: `digest.watches`).

The file is a YAML list; each item is one of (format and examples in the README):
    {gpu, below_usd_per_gpu_hour | below_cny_per_gpu_hour, platforms?}   a price watch
    {gpu, min_available_gpus, platforms?}                                stock appears
    {job, below_total_usd}                                               a job's total falls
GPU names are read as people write them (`sizing.gpu_names.resolve`); the platforms a watch may
name are the caller's to give (the scrapers' spider loader knows them; this package is below it).
Each item is checked by a pydantic model of its kind (a union told apart by its keys), and a
model's error is put at the line its key is written on. A malformed file raises `UserFileError`
naming the line; `read_watches` keeps that error in the `WatchList` instead, so a typo in the file
never costs the day's mail.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationInfo,
    model_validator,
)
from pydantic_core import ErrorDetails

from config.settings import ascii_decimal
from config.user_files import Item, UserFileError, given, keys_of, read_text, said, validated, yaml_list
from sizing import gpu_names


@dataclass(frozen=True)
class PriceWatch:
    """Fires when the cheapest plannable offer of the card drops under `below` per GPU-hour."""

    kind: ClassVar[str] = "price"
    line: int  # where the watch starts in the file (1-based)
    gpu: str  # as written in the file
    gpu_model: str  # the catalog card it names
    below: float  # per GPU-hour, in `currency`
    currency: str  # 'USD' | 'CNY'
    platforms: tuple[str, ...] = ()  # empty: every platform


@dataclass(frozen=True)
class StockWatch:
    """Fires when one platform has at least `min_available_gpus` of the card free."""

    kind: ClassVar[str] = "stock"
    line: int
    gpu: str
    gpu_model: str
    min_available_gpus: int
    platforms: tuple[str, ...] = ()


@dataclass(frozen=True)
class JobWatch:
    """Fires when the job's best plan (job_plans, rank 1) costs under `below_total_usd` in all."""

    kind: ClassVar[str] = "job"
    line: int
    job: str
    below_total_usd: float


Watch = PriceWatch | StockWatch | JobWatch


@dataclass(frozen=True)
class WatchList:
    """The watches of a file, or why there are none: `error` is the file's problem, in one line."""

    watches: tuple[Watch, ...] = ()
    error: str | None = None


NO_WATCHES = WatchList()


def _as_number(value: Any) -> Any:
    """A number YAML 1.1 leaves as text (`1e3`, `2E-1`: its floats need a dot, `1.0e+3`) read as
    one, as people mean it (`below_usd_per_gpu_hour: 1e3` was once refused as "not a number"); a whole
    one (`1e1`) as an int. Anything else is returned as it is, for the caller to refuse."""
    if not isinstance(value, str):
        return value
    try:
        number = ascii_decimal(value)
    except ValueError:
        return value
    if not math.isfinite(number):  # "nan", "inf": text, refused as text
        return value
    return int(number) if number.is_integer() else number


def _known(value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
    known: Collection[str] | None = (info.context or {}).get("platforms")
    unknown = [p for p in value if known is not None and p not in known]
    if unknown:
        raise ValueError(f"unknown platform {unknown[0]!r} (platforms: {', '.join(sorted(known or ()))})")
    return tuple(dict.fromkeys(value))


def _gpu(value: str) -> str:
    gpu_names.resolve(value)  # UnknownGpu (a ValueError), naming close cards
    return value


# Each value's kind, said in its error (`_words`) as "<key> must be <description>, not <value>".
_NAME = Field(strict=True, min_length=1, description="a name")
Name = Annotated[str, _NAME]
Number = Annotated[
    float, BeforeValidator(_as_number), Field(strict=True, gt=0, description="a positive number")
]
Count = Annotated[
    int, BeforeValidator(_as_number), Field(strict=True, gt=0, description="a positive whole number")
]
Gpu = Annotated[str, _NAME, AfterValidator(_gpu)]
Platforms = Annotated[
    tuple[Annotated[str, Field(min_length=1)], ...],
    Field(min_length=1, description="a list of platform names ([vastai, autodl])"),
    AfterValidator(_known),
]


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _PriceEntry(_Entry):
    gpu: Gpu
    below_usd_per_gpu_hour: Number | None = Field(None, description="a positive number")
    below_cny_per_gpu_hour: Number | None = Field(None, description="a positive number")
    platforms: Platforms = ()

    @model_validator(mode="after")
    def _one_currency(self) -> _PriceEntry:
        if self.below_usd_per_gpu_hour is not None and self.below_cny_per_gpu_hour is not None:
            raise ValueError(
                "a price watch gives one of below_usd_per_gpu_hour or below_cny_per_gpu_hour, not both"
            )
        return self

    def watch(self, line: int) -> PriceWatch:
        model = gpu_names.resolve(self.gpu).gpu_model
        if self.below_usd_per_gpu_hour is not None:
            return PriceWatch(line, self.gpu, model, self.below_usd_per_gpu_hour, "USD", self.platforms)
        return PriceWatch(line, self.gpu, model, self.below_cny_per_gpu_hour or 0.0, "CNY", self.platforms)


class _StockEntry(_Entry):
    gpu: Gpu
    min_available_gpus: Count
    platforms: Platforms = ()

    def watch(self, line: int) -> StockWatch:
        model = gpu_names.resolve(self.gpu).gpu_model
        return StockWatch(line, self.gpu, model, self.min_available_gpus, self.platforms)


class _JobEntry(_Entry):
    job: Name
    below_total_usd: Number

    def watch(self, line: int) -> JobWatch:
        return JobWatch(line, self.job, self.below_total_usd)


def _kind(values: Any) -> str | None:
    """A watch's kind, told by its keys (the tags name no key, so an error's place is its key's)."""
    if not isinstance(values, dict):
        return None
    if "job" in values:
        return "job watch"
    if "min_available_gpus" in values:
        return "stock watch"
    return "price watch" if values.keys() & {"below_usd_per_gpu_hour", "below_cny_per_gpu_hour"} else None


_WATCH: TypeAdapter[_PriceEntry | _StockEntry | _JobEntry] = TypeAdapter(
    Annotated[
        Annotated[_PriceEntry, Tag("price watch")]
        | Annotated[_StockEntry, Tag("stock watch")]
        | Annotated[_JobEntry, Tag("job watch")],
        Discriminator(
            _kind,
            custom_error_type="watch_kind",
            custom_error_message=(
                "a watch needs job, min_available_gpus, or below_usd_per_gpu_hour / below_cny_per_gpu_hour"
            ),
        ),
    ]
)
_MODELS: dict[str, type[_Entry]] = {
    "price watch": _PriceEntry,
    "stock watch": _StockEntry,
    "job watch": _JobEntry,
}


def read_watches(path: Path | None, platforms: Collection[str] | None) -> WatchList:
    """The watches in `path` (None: no watches file); `platforms` are the slugs a watch may name
    (None: any). Never raises: a problem is the list's `error`."""
    if path is None:
        return NO_WATCHES
    source = f"GPUPLAN_WATCHES {path}"
    try:
        return WatchList(parse_watches(read_text(path, source, "a watches file"), source, platforms))
    except UserFileError as exc:
        return WatchList(error=str(exc))


def parse_watches(text: str, source: str, platforms: Collection[str] | None = None) -> tuple[Watch, ...]:
    """Watches from YAML `text`; raises UserFileError('<source> line N: ...') on the first problem.
    `platforms`, when given, are the slugs a watch may name."""
    return tuple(_watch(item, source, platforms) for item in yaml_list(text, source, "watches", "- gpu: ..."))


def _watch(item: Item, source: str, platforms: Collection[str] | None) -> Watch:
    mapping = "a watch is a mapping (gpu: ..., below_usd_per_gpu_hour: ...)"
    keys = keys_of(item, source, mapping, "key {key!r} is not a name or is given twice")
    data = {key: given(value) for key, value in keys.items()}
    entry = validated(_WATCH, data, item.written, source, _words, {"platforms": platforms})
    return entry.watch(item.line)


def _words(error: ErrorDetails) -> str:
    if error["type"] in ("value_error", "watch_kind"):
        return said(error)
    kind, key = str(error["loc"][0]), str(error["loc"][1])
    fields = _MODELS[kind].model_fields
    if error["type"] == "extra_forbidden":
        return f"unknown key {key!r} in a {kind} (allowed: {', '.join(sorted(fields))})"
    if error["type"] == "missing":
        return f"a {kind} needs {key}"
    value = _as_number(given) if isinstance(given := error["input"], str) else given
    return f"{key} must be {fields[key].description}, not {value!r}"
