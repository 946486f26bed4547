"""Rows out of a platform's answer: where they are, which are complete, the fields worth keeping.

A market answers with a list of rows (Vast's offers, matpool's machine pools, RunPod's GPU types),
or an object of rows keyed by their name (Lambda's instance types). The spider kit
(`PlatformSpider.parse_rows`) reads them with these functions; a spider calls them itself where
an answer has rows that are not offers (RunPod's type list, compshare's zones).

A field is a key of the row (`"gpu_name"`) or a path into it (`("baseInfo", "gpuName")`).
Missing structure raises `LayoutChanged` naming what is missing: a changed layout is a failed
crawl, never "zero offers".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scrapers.parsing import EmptyResult, LayoutChanged

Field = str | tuple[str, ...]  # a key of a row, or the path to a value nested in it


def dig(payload: Any, *path: str | int, expect: type = list) -> Any:
    """payload[path[0]][path[1]]... checked to be an `expect`; LayoutChanged names what is missing."""
    node = payload
    for depth, key in enumerate(path):
        where = "".join(f"[{k!r}]" for k in path[:depth]) or "the top level"
        if isinstance(key, int):
            if not isinstance(node, list) or not -len(node) <= key < len(node):
                raise LayoutChanged(f"no item {key} at {where}")
        elif not isinstance(node, Mapping) or key not in node:
            keys = (
                ", ".join(sorted(map(str, node))[:12]) if isinstance(node, Mapping) else type(node).__name__
            )
            raise LayoutChanged(f"no {key!r} at {where} (found: {keys})")
        node = node[key]
    if not isinstance(node, expect):
        where = "".join(f"[{k!r}]" for k in path) or "the top level"
        raise LayoutChanged(f"expected a {expect.__name__} at {where}, got {type(node).__name__}")
    return node


def rows_at(payload: Any, path: Sequence[str | int], keyed_by: str | None = None) -> list[Any]:
    """The rows at `path` (`()`: the answer is the list). With `keyed_by`, the rows are the values of
    an object, each given its key under that name (`{"gpu_1x_a10": {...}}` -> `{"name":
    "gpu_1x_a10", ...}`); values that are no object are no rows."""
    if keyed_by is None:
        return list(dig(payload, *path))
    found = dig(payload, *path, expect=dict)
    return [{keyed_by: key, **row} for key, row in found.items() if isinstance(row, Mapping)]


def value_at(row: Any, field: Field) -> Any:
    """The row's value of `field` (a key or a path into nested objects), or None where it has none."""
    if isinstance(field, str):  # the common case, on every row of a market answer
        return row.get(field) if isinstance(row, Mapping) else None
    node = row
    for key in field:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def named(row: Any, fields: Sequence[Field]) -> list[str]:
    """The texts the row gives in `fields`, in that order, stripped; empty ones left out."""
    texts = []
    for field in fields:
        value = value_at(row, field)
        if value is not None and (text := str(value).strip()):
            texts.append(text)
    return texts


def kept(row: Mapping[str, Any], keys: Sequence[str] | None = None) -> dict[str, Any]:
    """The fields of `row` worth keeping in an offer's `extra`: those named in `keys` (all when None)
    that say something (neither None nor empty text)."""
    names = row.keys() if keys is None else keys
    return {key: row[key] for key in names if row.get(key) not in (None, "")}


def is_complete(row: Any, required: Sequence[str], names: Sequence[Field] = ()) -> bool:
    """Whether `row` is an object carrying every `required` field and, when `names` are given (where
    it names its GPU), at least one of them."""
    if not isinstance(row, Mapping) or any(row.get(field) is None for field in required):
        return False
    return not names or bool(named(row, names))


def split_complete(
    rows: Sequence[Any], required: Sequence[str], what: str, names: Sequence[Field] = ()
) -> tuple[list[Mapping[str, Any]], list[Any]]:
    """Rows that are complete (`is_complete`), and the others (to be rejected, not dropped).

    Raises EmptyResult for no rows, and LayoutChanged when there are rows but none
    is complete: that is a changed layout, not a market with zero offers.
    """
    if not rows:
        raise EmptyResult(f"the platform answered with no {what}")
    complete: list[Mapping[str, Any]] = []
    incomplete: list[Any] = []
    for row in rows:
        (complete if is_complete(row, required, names) else incomplete).append(row)
    if not complete:
        first = rows[0]
        found = (
            ", ".join(sorted(map(str, first))[:15]) if isinstance(first, Mapping) else type(first).__name__
        )
        said = not names or any(name in required for name in names)  # a required field names it
        wanted = [*required, *([] if said else [" or ".join(map(_label, names))])]
        raise LayoutChanged(
            f"none of the {len(rows)} {what} has the fields the spider reads ({', '.join(wanted)}); "
            f"the first has: {found}"
        )
    return complete, incomplete


def _label(field: Field) -> str:
    return field if isinstance(field, str) else ".".join(field)
