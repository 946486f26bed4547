"""Changes to a fixture's answers, derived from what its spider declares (the contract test's inputs).

A spider on the kit's declarative path says where its rows are (`rows_at`, `rows_keyed_by`), what a
row must carry (`required`, `gpu_name_fields`) and its envelope: that is enough to empty an
answer, move its list, drop a field from one row, rename its GPU, or set its price, in any
platform's own recorded answer. Nothing here names a platform.

Prices are found by value: the numbers in a row (or numeric text, "26.00") that read, in one of the
minor units platforms quote in (`parsing.CENTS`, `LI`, `HUNDRED_THOUSANDTHS`), as a price of the
offers built from it.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from crawl_harness import with_exchange

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider
from scrapers.replay import Snapshot
from scrapers.rows import Field

Path = tuple[str | int, ...]
UNITS = (1, parsing.CENTS, parsing.LI, parsing.HUNDRED_THOUSANDTHS)
MYSTERY_GPU = "Mystery GPU 9000"
INJECTED = "injected failure"


def body_of(snapshot: Snapshot, exchange: int, spider: type[PlatformSpider] | None = None) -> Any:
    """An answer's body as data: JSON, or a CSV table's rows (`rows_format` "csv")."""
    raw = snapshot.exchanges[exchange].body
    if spider is not None and spider.rows_format == "csv":
        return list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    return json.loads(raw)


def with_body(snapshot: Snapshot, spider: type[PlatformSpider], exchange: int, data: Any) -> Snapshot:
    """`snapshot` with that answer's body replaced by `data`, written as the spider reads it (a CSV
    table keeps its header's column order)."""
    if spider.rows_format != "csv":
        return with_exchange(snapshot, exchange, body=data)
    raw = snapshot.exchanges[exchange].body.decode("utf-8-sig")
    header = next(csv.reader(io.StringIO(raw)), [])
    header += [key for row in data for key in row if key not in header]
    table = io.StringIO()
    writer = csv.DictWriter(table, header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(data)
    return with_exchange(snapshot, exchange, body=table.getvalue().encode("utf-8"))


def envelopes(spider: type[PlatformSpider]) -> list[dict[str, Any]]:
    """Error answers with HTTP 200 the spider must recognise: the generic one, and its own code
    envelope. A table (CSV) has none."""
    if spider.rows_format == "csv":
        return []
    found: list[dict[str, Any]] = [{"error": {"code": "contract_test", "message": INJECTED}}]
    if spider.envelope is not None:
        found.append({spider.envelope.key: "CONTRACT_TEST", spider.envelope.messages[0]: INJECTED})
    return found


def with_rows(
    snapshot: Snapshot, spider: type[PlatformSpider], exchange: int, change: Callable[[Any], Any]
) -> Snapshot:
    """`snapshot` with the rows of that answer replaced by `change(rows)` (a list, or an object of
    keyed rows)."""
    body = copy.deepcopy(body_of(snapshot, exchange, spider))
    path = spider.rows_path(snapshot.exchanges[exchange].url) or ()
    if not path:
        return with_body(snapshot, spider, exchange, change(body))
    parent = body
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = change(parent[path[-1]])
    return with_body(snapshot, spider, exchange, body)


def emptied(rows: Any) -> Any:
    return type(rows)()


def moved(snapshot: Snapshot, spider: type[PlatformSpider], exchange: int) -> tuple[Snapshot, str] | None:
    """The answer with its rows somewhere else, and what the layout-change message names; None for
    a table (CSV), whose rows are the table."""
    if spider.rows_format == "csv":
        return None
    body = copy.deepcopy(body_of(snapshot, exchange))
    path = spider.rows_path(snapshot.exchanges[exchange].url) or ()
    if not path:
        return with_exchange(snapshot, exchange, body={"items": body}), "expected a list at the top level"
    parent = body
    for key in path[:-1]:
        parent = parent[key]
    parent[f"{path[-1]}_moved"] = parent.pop(path[-1])
    return with_exchange(snapshot, exchange, body=body), f"no {path[-1]!r} at"


def with_row(
    snapshot: Snapshot,
    spider: type[PlatformSpider],
    exchange: int,
    row: int,
    edit: Callable[[dict[str, Any]], None],
) -> Snapshot:
    """`snapshot` with row `row` of that answer passed through `edit` (in place), as the spider
    reads it: a keyed row carries its key under `rows_keyed_by`, and a new value there renames it."""
    keyed_by = spider.rows_keyed_by

    def change(rows: Any) -> Any:
        if keyed_by is None:
            edit(rows[row])
            return rows
        keys = [key for key, value in rows.items() if isinstance(value, Mapping)]
        whole = {keyed_by: keys[row], **rows[keys[row]]}
        edit(whole)
        renamed = str(whole.pop(keyed_by, keys[row]))
        return {
            (renamed if key == keys[row] else key): (whole if key == keys[row] else value)
            for key, value in rows.items()
        }

    return with_rows(snapshot, spider, exchange, change)


def with_every_row(
    snapshot: Snapshot, spider: type[PlatformSpider], exchanges: list[int], edit: Callable[[Any], None]
) -> Snapshot:
    """`snapshot` with every row of those answers passed through `edit` (keyed rows by value)."""

    def change(rows: Any) -> Any:
        for row in rows.values() if isinstance(rows, Mapping) else rows:
            edit(row)
        return rows

    for exchange in exchanges:
        snapshot = with_rows(snapshot, spider, exchange, change)
    return snapshot


def drop(field: Field) -> Callable[[Any], None]:
    """An edit that removes `field` (a key or a nested path) from a row."""

    def edit(row: Any) -> None:
        *parents, last = (field,) if isinstance(field, str) else field
        for key in parents:
            row = row.get(key) if isinstance(row, Mapping) else None
        if isinstance(row, dict):
            row.pop(last, None)

    return edit


def rename_gpu(spider: type[PlatformSpider]) -> Callable[[dict[str, Any]], None]:
    """An edit that gives a row's every GPU name field (those it has) a name no catalog knows."""

    def edit(row: dict[str, Any]) -> None:
        for field in spider.gpu_name_fields:
            *parents, last = (field,) if isinstance(field, str) else field
            node: Any = row
            for key in parents:
                node = node.get(key) if isinstance(node, Mapping) else None
            if isinstance(node, dict) and node.get(last) not in (None, ""):
                node[last] = MYSTERY_GPU

    return edit


def leaves(node: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every scalar of a JSON value with its path."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from leaves(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from leaves(value, (*path, index))
    else:
        yield path, node


def price_paths(row: Any, prices: set[float]) -> list[Path]:
    """The paths of the row's numbers that read as one of `prices` in some minor unit."""
    found = []
    for path, value in leaves(row):
        amount = None if isinstance(value, bool) else parsing.number(value)
        if amount and any(
            math.isclose(amount / unit, price, rel_tol=1e-9) for unit in UNITS for price in prices
        ):
            found.append(path)
    return found


def prices_of(offers: list[OfferItem], with_listed: bool = False) -> set[float]:
    """The offers' prices; `with_listed`: also the prices they keep in `extra` (a list price beside a
    discount one), so that a row's every price is found."""
    prices = {o.price_amount for o in offers if o.price_amount}
    if with_listed:
        prices |= {
            float(value)
            for o in offers
            for key, value in o.extra.items()
            if "price" in key and isinstance(value, int | float) and not isinstance(value, bool) and value
        }
    return prices


def reprice(prices: set[float], new: Callable[[float], float]) -> Callable[[Any], None]:
    """An edit that replaces each of the row's numbers reading as one of `prices` with `new(number)`,
    keeping its type (numeric text stays text)."""

    def edit(row: Any) -> None:
        for path in price_paths(row, prices):
            node = row
            for key in path[:-1]:
                node = node[key]
            value = node[path[-1]]
            changed = new(float(parsing.number(value) or 0))
            node[path[-1]] = str(changed) if isinstance(value, str) else changed

    return edit
