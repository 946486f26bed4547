"""The watches file (GPUPLAN_WATCHES): conditions a reader wants to hear about on the day they
become true, read into `Watch` values (the digest evaluates them: `digest.watches`).

The file is a YAML list; each item is one of (format and examples in the README):
    {gpu, below_usd_per_gpu_hour | below_cny_per_gpu_hour, platforms?}   a price watch
    {gpu, min_available_gpus, platforms?}                                stock appears
    {job, below_total_usd}                                               a job's total falls
GPU names are read as people write them (`sizing.gpu_names.resolve`); the platforms a watch may
name are the caller's to give (the scrapers' spider loader knows them; this package is below it).
A malformed file raises `UserFileError` naming the line; `read_watches` keeps that error in the
`WatchList` instead, so a typo in the file never costs the day's mail.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from config.settings import ascii_decimal
from config.user_files import Item, UserFileError, read_text, yaml_list
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

# kind -> (keys it must have, keys it may have); `below_*` of a price watch: exactly one of the two
_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "price": (
        frozenset({"gpu"}),
        frozenset({"below_usd_per_gpu_hour", "below_cny_per_gpu_hour", "platforms"}),
    ),
    "stock": (frozenset({"gpu", "min_available_gpus"}), frozenset({"platforms"})),
    "job": (frozenset({"job", "below_total_usd"}), frozenset()),
}
_PRICE_KEYS = {"below_usd_per_gpu_hour": "USD", "below_cny_per_gpu_hour": "CNY"}


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
    line = item.line

    def fail(problem: str, at: int = line) -> UserFileError:
        return UserFileError(source, problem, at)

    if item.refused is not None:
        raise fail(item.refused)
    if item.written.pairs is None:
        raise fail("a watch is a mapping (gpu: ..., below_usd_per_gpu_hour: ...)")
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    texts: dict[str, str | None] = {}  # each value as written: `gpu: 4090` is the name 4090, not a number
    for written_key, written_value in item.written.pairs:
        name = written_key.value
        if not isinstance(name, str) or name in values:
            raise fail(f"key {name!r} is not a name or is given twice", written_key.line)
        values[name], lines[name] = written_value.value, written_value.line
        texts[name] = written_value.text
    kind = (
        "job"
        if "job" in values
        else "stock"
        if "min_available_gpus" in values
        else "price"
        if values.keys() & _PRICE_KEYS.keys()
        else None
    )
    if kind is None:
        raise fail(
            "a watch needs job, min_available_gpus, or below_usd_per_gpu_hour / below_cny_per_gpu_hour"
        )
    required, optional = _KEYS[kind]
    for key in values.keys() - required - optional:
        allowed = ", ".join(sorted(required | optional))
        raise fail(f"unknown key {key!r} in a {kind} watch (allowed: {allowed})", lines[key])
    if missing := sorted(required - values.keys()):
        raise fail(f"a {kind} watch needs {', '.join(missing)}")

    def number(key: str, *, integer: bool = False) -> Any:
        # as written, not as YAML 1.1 builds it (`4_8` is its int 48, `0x30` too): ASCII digits only
        value = _as_number(texts[key] if isinstance(texts[key], str) else values[key])
        ok = isinstance(value, int) if integer else isinstance(value, int | float)
        if isinstance(value, bool) or not ok or value <= 0:
            raise fail(
                f"{key} must be a positive {'whole ' if integer else ''}number, not {value!r}", lines[key]
            )
        return value

    def text(key: str) -> str:
        value = values[key]
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = texts[key]
        if not isinstance(value, str) or not value.strip():
            raise fail(f"{key} must be a name, not {value!r}", lines[key])
        return value.strip()

    if kind == "job":
        return JobWatch(line, text("job"), float(number("below_total_usd")))
    gpu = text("gpu")
    try:
        gpu_model = gpu_names.resolve(gpu).gpu_model
    except ValueError as exc:  # UnknownGpu, naming close cards
        raise fail(str(exc), lines["gpu"]) from None
    chosen = _platforms(values.get("platforms"), platforms, lambda problem: fail(problem, lines["platforms"]))
    if kind == "stock":
        return StockWatch(line, gpu, gpu_model, number("min_available_gpus", integer=True), chosen)
    given = sorted(values.keys() & _PRICE_KEYS.keys())
    if len(given) > 1:
        raise fail("a price watch gives one of below_usd_per_gpu_hour or below_cny_per_gpu_hour, not both")
    return PriceWatch(line, gpu, gpu_model, float(number(given[0])), _PRICE_KEYS[given[0]], chosen)


def _as_number(value: Any) -> Any:
    """A number YAML 1.1 leaves as text (`1e3`, `2E-1`: its floats need a dot, `1.0e+3`) read as
    one, as people mean it (issue 29: `below_usd_per_gpu_hour: 1e3` was "not a number"); a whole
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


def _platforms(
    value: Any, known: Collection[str] | None, fail: Callable[[str], UserFileError]
) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not value or not all(isinstance(p, str) and p for p in value):
        raise fail(f"platforms must be a list of platform names ([vastai, autodl]), not {value!r}")
    unknown = [p for p in value if known is not None and p not in known]
    if unknown:
        raise fail(f"unknown platform {unknown[0]!r} (platforms: {', '.join(sorted(known or ()))})")
    return tuple(dict.fromkeys(value))
