"""Watches (GPUPLAN_WATCHES): conditions a reader wants to hear about on the day they become true.

The file is a YAML list; each item is one of (format and examples in the README):
    {gpu, below_usd_per_gpu_hour | below_cny_per_gpu_hour, platforms?}   a price watch
    {gpu, min_available_gpus, platforms?}                                stock appears
    {job, below_total_usd}                                               a job's total falls
A watch that holds on the digest day and did not hold on the previous day with plans fires: the
digest lists it first, `--json` carries it, and a Dagster asset check shows it.

Parsing is pure (text in, watches out) and happens at the edge, which passes the rule for GPU names
(`sizing.gpu_names.resolve`: this package imports only the warehouse) and the known platforms.
A malformed file raises `WatchFileError` naming the line; `read_watch_file` keeps that error in the
`WatchList` instead, so a typo in the file never costs the day's mail.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import yaml

from warehouse import queries


class WatchFileError(ValueError):
    """A watches file that cannot be used; the message names the file and the line."""


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


def read_watch_file(
    path: Path | None,
    *,
    resolve_gpu: Callable[[str], str],
    platforms: Collection[str] | None = None,
) -> WatchList:
    """The watches in `path` (None: no watches file). Never raises: a problem is the list's `error`."""
    if path is None:
        return NO_WATCHES
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return WatchList(error=f"GPUPLAN_WATCHES {path}: cannot read: {exc}")
    try:
        return WatchList(parse_watches(text, f"GPUPLAN_WATCHES {path}", resolve_gpu, platforms))
    except WatchFileError as exc:
        return WatchList(error=str(exc))


def parse_watches(
    text: str,
    source: str,
    resolve_gpu: Callable[[str], str],
    platforms: Collection[str] | None = None,
) -> tuple[Watch, ...]:
    """Watches from YAML `text`; raises WatchFileError('<source> line N: ...') on the first problem.

    `resolve_gpu(name)` returns the catalog card a person's GPU name means and raises ValueError for
    an unknown one; `platforms`, when given, are the slugs a watch may name.
    """
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return ()
        if not isinstance(root, yaml.SequenceNode):
            raise WatchFileError(f"{source} line {_line(root)}: expected a list of watches (- gpu: ...)")
        return tuple(_watch(loader, item, source, resolve_gpu, platforms) for item in root.value)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise WatchFileError(f"{source}{where}: not valid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise WatchFileError(f"{source}: not valid YAML: {exc}") from None
    finally:
        loader.dispose()


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _watch(
    loader: yaml.SafeLoader,
    node: yaml.Node,
    source: str,
    resolve_gpu: Callable[[str], str],
    platforms: Collection[str] | None,
) -> Watch:
    line = _line(node)

    def fail(problem: str, at: int = line) -> WatchFileError:
        return WatchFileError(f"{source} line {at}: {problem}")

    if not isinstance(node, yaml.MappingNode):
        raise fail("a watch is a mapping (gpu: ..., below_usd_per_gpu_hour: ...)")
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str) or key in values:
            raise fail(f"key {key!r} is not a name or is given twice", _line(key_node))
        values[key], lines[key] = loader.construct_object(value_node, deep=True), _line(value_node)
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
        value = values[key]
        ok = isinstance(value, int) if integer else isinstance(value, int | float)
        if isinstance(value, bool) or not ok or value <= 0:
            raise fail(
                f"{key} must be a positive {'whole ' if integer else ''}number, not {value!r}", lines[key]
            )
        return value

    def text(key: str) -> str:
        value = values[key]
        if not isinstance(value, str) or not value.strip():
            raise fail(f"{key} must be a name, not {value!r}", lines[key])
        return value.strip()

    if kind == "job":
        return JobWatch(line, text("job"), float(number("below_total_usd")))
    gpu = text("gpu")
    try:
        gpu_model = resolve_gpu(gpu)
    except ValueError as exc:
        raise fail(str(exc), lines["gpu"]) from None
    chosen = _platforms(values.get("platforms"), platforms, lambda problem: fail(problem, lines["platforms"]))
    if kind == "stock":
        return StockWatch(line, gpu, gpu_model, number("min_available_gpus", integer=True), chosen)
    given = sorted(values.keys() & _PRICE_KEYS.keys())
    if len(given) > 1:
        raise fail("a price watch gives one of below_usd_per_gpu_hour or below_cny_per_gpu_hour, not both")
    return PriceWatch(line, gpu, gpu_model, float(number(given[0])), _PRICE_KEYS[given[0]], chosen)


def _platforms(
    value: Any, known: Collection[str] | None, fail: Callable[[str], WatchFileError]
) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not value or not all(isinstance(p, str) and p for p in value):
        raise fail(f"platforms must be a list of platform names ([vastai, autodl]), not {value!r}")
    unknown = [p for p in value if known is not None and p not in known]
    if unknown:
        raise fail(f"unknown platform {unknown[0]!r} (platforms: {', '.join(sorted(known or ()))})")
    return tuple(dict.fromkeys(value))


# --- evaluation --------------------------------------------------------------------------------


@dataclass(frozen=True)
class WatchReading:
    """What a watch looked at on one day: a price per GPU-hour in the watch's currency, the GPUs free,
    or a job's total in USD; where; and for a job, its plan's GPUs."""

    value: float
    platform: str | None
    gpu_model: str | None = None
    gpu_count: int | None = None


@dataclass(frozen=True)
class WatchResult:
    """A watch on the digest day (`now`) and on the previous day with plans (`before`; None when
    there is none or nothing to read). `fired`: holds now, did not before."""

    watch: Watch
    now: WatchReading | None
    before: WatchReading | None

    @property
    def holds(self) -> bool:
        return _holds(self.watch, self.now)

    @property
    def held_before(self) -> bool:
        return _holds(self.watch, self.before)

    @property
    def fired(self) -> bool:
        return self.holds and not self.held_before


def _holds(watch: Watch, reading: WatchReading | None) -> bool:
    if reading is None:
        return False
    if isinstance(watch, StockWatch):
        return reading.value >= watch.min_available_gpus
    if isinstance(watch, PriceWatch):
        return reading.value < watch.below
    return reading.value < watch.below_total_usd


def evaluate_watches(
    con: duckdb.DuckDBPyConnection, watches: tuple[Watch, ...], day: date, previous_day: date | None
) -> tuple[WatchResult, ...]:
    """Each watch read on `day` and on `previous_day` (the digest's previous day with plans)."""
    days = [d for d in (previous_day, day) if d is not None]
    results = []
    for watch in watches:
        readings = _readings(con, watch, days)
        results.append(WatchResult(watch, readings.get(day), readings.get(previous_day)))
    return tuple(results)


def _readings(
    con: duckdb.DuckDBPyConnection, watch: Watch, days: list[date]
) -> dict[date | None, WatchReading]:
    if isinstance(watch, JobWatch):
        rows = _fetch(con, "digest/watch_jobs", days=days, job=watch.job)
        return {
            r["day"]: WatchReading(r["total_usd"], r["platform"], r["gpu_model"], r["gpu_count"])
            for r in rows
        }
    scope = {"days": days, "gpu_model": watch.gpu_model, "platforms": list(watch.platforms) or None}
    if isinstance(watch, StockWatch):
        rows = _fetch(con, "digest/watch_stock", **scope)
        return {r["day"]: WatchReading(r["available_gpus"], r["platform"], watch.gpu_model) for r in rows}
    rows = _fetch(con, "digest/watch_prices", **scope)
    column = "usd" if watch.currency == "USD" else "cny"
    return {
        r["day"]: WatchReading(r[f"min_{column}_per_gpu_hour"], r[f"{column}_platform"], watch.gpu_model)
        for r in rows
        if r[f"min_{column}_per_gpu_hour"] is not None
    }


def _fetch(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> list[dict[str, Any]]:
    # fetchall (see content._rows): plain Python values, and no half-read result left open
    cursor = con.execute(queries.sql(name), params)
    columns = [column[0] for column in cursor.description]
    return [dict(zip(columns, values, strict=True)) for values in cursor.fetchall()]
