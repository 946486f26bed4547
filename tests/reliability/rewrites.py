"""Content faults as rewrites of a platform's recorded answers, generic: no code per platform.

JSON answers: the *records* are the container (list or object) holding the most objects (Vast's
`offers`, RunPod's `gpuTypes`, Lambda's `data`, DataCrunch's top-level list); prices are the values
under keys that look like prices (`PRICE_KEY`); GPU names are the strings `sizing.gpu_names` maps to
a catalog GPU. HTML pages: the records are the table rows with data cells, prices the amounts
after a currency sign, GPU names the text of elements that `sizing.gpu_names` recognises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from loopback import Reply, Rewrite

from scrapers.replay import Exchange
from sizing import gpu_names
from sizing.catalog import load_gpus

# Keys whose values are prices in the platforms' answers: Vast dph_total / min_bid, DataCrunch
# price_per_hour / spot_price, RunPod uninterruptablePrice / minimumBidPrice, Lambda
# price_cents_per_hour, the Chinese platforms' price / payg_price.
PRICE_KEY = re.compile(r"price|dph|bid", re.IGNORECASE)
# Times a quote by: turns any real GPU-hour price (cents to tens of dollars or yuan) into one far
# above the 100 USD / 700 CNY per GPU-hour limit of scrapers.parsing.MAX_PRICE_PER_GPU_HOUR.
ABSURD_FACTOR = 1_000_000
# A word no GPU name carries: a known name followed by it is a different, unknown product
# (sizing.gpu_names: "any other word means a different product").
UNKNOWN_WORD = "Zeta"
# A lone byte 0xFF is never valid UTF-8 (it starts no sequence); written as a surrogate escape.
NOT_UTF8 = "\udcff"
# A challenge page a CDN serves instead of the API (Cloudflare's wording).
HTML_PAGE = b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>Checking</body></html>"
# An HTTP-200 error answer in every envelope shape scrapers.parsing recognises: {"error": ...},
# GraphQL {"errors": [...]}, {"success": false, "msg": ...} and {"code": <not ok>, "msg": ...}.
ENVELOPE_MESSAGE = "synthetic outage: service temporarily unavailable"
ERROR_ENVELOPE = {
    "success": False,
    "code": 50001,
    "msg": ENVELOPE_MESSAGE,
    "error": ENVELOPE_MESSAGE,
    "errors": [{"message": ENVELOPE_MESSAGE}],
}

# --- finding things in a platform's JSON ----------------------------------------------------------


def _children(node: Any) -> list[Any]:
    if isinstance(node, Mapping):
        return list(node.values())
    return list(node) if isinstance(node, list) else []


def records(payload: Any) -> Any:
    """The JSON container (list or object) holding the most objects: the platform's records."""
    best, best_count = None, 0
    stack = [payload]
    while stack:
        node = stack.pop()
        children = _children(node)
        count = sum(isinstance(child, Mapping) for child in children)
        if count > best_count:
            best, best_count = node, count
        stack.extend(child for child in children if isinstance(child, Mapping | list))
    return best


def _map_records(payload: Any, change: Callable[[Any], Any]) -> Any:
    """`payload` with its records container replaced by `change(container)`."""
    target = records(payload)
    if target is None:
        return payload

    def walk(node: Any) -> Any:
        if node is target:
            return change(node)
        if isinstance(node, Mapping):
            return {key: walk(value) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(value) for value in node]
        return node

    return walk(payload)


def _each_value(node: Any, change: Callable[[str | None, Any], Any], key: str | None = None) -> Any:
    """Every leaf value, rebuilt through `change(key, value)`; object keys through `change(None, key)`."""
    if isinstance(node, Mapping):
        return {
            change(None, k) if isinstance(k, str) else k: _each_value(v, change, k) for k, v in node.items()
        }
    if isinstance(node, list):
        return [_each_value(value, change, key) for value in node]
    return change(key, node)


@cache
def _memory_sizes_gb() -> tuple[float | None, ...]:
    return (None, *sorted({gpu.memory_gb for gpu in load_gpus()}))


@cache
def _is_gpu_name(text: str) -> bool:
    """A name sizing.gpu_names maps to a catalog GPU, alone or with one of the catalog's memory sizes."""
    spaced = text.replace("_", " ")  # Vultr's gpu_type: "NVIDIA_H100"
    if any(gpu_names.identify(spaced, memory).gpu_model is not None for memory in _memory_sizes_gb()):
        return True
    try:  # a family name a spider completes from elsewhere (Vultr's bare-metal plan id: "H100 SXM")
        return bool(gpu_names.family_models(spaced))
    except gpu_names.UnknownGpu:
        return False


# --- the content rewrites -------------------------------------------------------------------------


def rename_fields(payload: Any) -> Any:
    """A new API version: every field of every record renamed (`gpu_name` -> `gpu_name_v2`)."""

    def rename(container: Any) -> Any:
        def renamed(row: Any) -> Any:
            return {f"{key}_v2": value for key, value in row.items()} if isinstance(row, Mapping) else row

        if isinstance(container, Mapping):
            return {key: renamed(row) for key, row in container.items()}
        return [renamed(row) for row in container]

    return _map_records(payload, rename)


def rename_prices(payload: Any) -> Any:
    """Every price field of every record renamed (`dph_total` -> `dph_total_v2`)."""

    def renamed(node: Any) -> Any:
        if isinstance(node, Mapping):
            return {
                f"{key}_v2" if PRICE_KEY.search(str(key)) else key: renamed(value)
                for key, value in node.items()
            }
        if isinstance(node, list):
            return [renamed(value) for value in node]
        return node

    return _map_records(payload, renamed)


def empty_records(payload: Any) -> Any:
    return _map_records(payload, lambda container: {} if isinstance(container, Mapping) else [])


def duplicate_records(payload: Any) -> Any:
    """Every record twice (only where records are a list: a JSON object cannot repeat a key)."""
    return _map_records(
        payload,
        lambda container: (
            container if isinstance(container, Mapping) else [r for r in container for _ in "12"]
        ),
    )


def absurd_prices(payload: Any) -> Any:
    def scale(key: str | None, value: Any) -> Any:
        if key is None or not PRICE_KEY.search(key) or isinstance(value, bool):
            return value
        if isinstance(value, int | float) and value:
            return value * ABSURD_FACTOR
        if isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?", value.strip()) and float(value):
            return f"{float(value) * ABSURD_FACTOR:.2f}"
        return value

    return _each_value(payload, scale)


def unknown_gpu_names(payload: Any) -> Any:
    def rename(key: str | None, value: Any) -> Any:
        return f"{value} {UNKNOWN_WORD}" if isinstance(value, str) and _is_gpu_name(value) else value

    return _each_value(payload, rename)


def undecodable_names(payload: Any) -> Any:
    """GPU names with a byte that is not UTF-8 (as a GBK or Latin-1 page would send)."""

    def spoil(key: str | None, value: Any) -> Any:
        return (
            f"{value}{NOT_UTF8}"
            if key is not None and isinstance(value, str) and _is_gpu_name(value)
            else value
        )

    return _each_value(payload, spoil)


def error_envelope(payload: Any) -> Any:
    return ERROR_ENVELOPE


# --- the same faults on an HTML page (its table cells and text) ---------------------------------

_TEXT = re.compile(r">([^<>]+)<")
_DATA_ROW = re.compile(r"<tr\b(?:(?!</tr>).)*?<td\b.*?</tr>", re.DOTALL | re.IGNORECASE)
_MONEY = re.compile(r"([¥$€]\s*)(\d[\d,]*(?:\.\d+)?)")


def _each_text(page: str, change: Callable[[str], str]) -> str:
    return _TEXT.sub(lambda match: f">{change(match.group(1))}<", page)


def html_without_rows(page: str) -> str:
    """Every table row with data cells gone; the headers stay."""
    return _DATA_ROW.sub("", page)


def html_absurd_prices(page: str) -> str:
    def scale(match: re.Match[str]) -> str:
        amount = float(match.group(2).replace(",", ""))
        return f"{match.group(1)}{amount * ABSURD_FACTOR:.2f}"

    return _each_text(page, lambda text: _MONEY.sub(scale, text))


def html_unknown_gpu_names(page: str) -> str:
    return _each_text(page, lambda text: f"{text} {UNKNOWN_WORD}" if _is_gpu_name(text.strip()) else text)


def html_undecodable_names(page: str) -> str:
    return _each_text(page, lambda text: f"{text}{NOT_UTF8}" if _is_gpu_name(text.strip()) else text)


def body_rewrite(
    json_change: Callable[[Any], Any] | None, html_change: Callable[[str], str] | None
) -> Rewrite:
    """Rewrite JSON answers with `json_change`, HTML pages with `html_change`; the rest as recorded."""

    def rewrite(exchange: Exchange) -> Reply:
        recorded = Reply(exchange.status, dict(exchange.headers), exchange.body)
        content_type = exchange.headers.get("Content-Type", "")
        if "json" in content_type and json_change is not None:
            payload = json.loads(exchange.body)
            changed = json_change(payload)
            text = json.dumps(changed, ensure_ascii=False) if changed != payload else None
        elif "html" in content_type and html_change is not None:
            page = exchange.body.decode("utf-8")
            changed_page = html_change(page)
            text = changed_page if changed_page != page else None
        else:
            text = None
        if text is None:
            return recorded
        return Reply(exchange.status, dict(exchange.headers), text.encode("utf-8", "surrogateescape"))

    return rewrite


def wrong_content_type(exchange: Exchange) -> Reply:
    """A challenge page (HTML) where JSON belongs; a JSON error where a page belongs."""
    content_type = exchange.headers.get("Content-Type", "")
    if "json" in content_type:
        return Reply(
            exchange.status, {**exchange.headers, "Content-Type": "text/html; charset=utf-8"}, HTML_PAGE
        )
    if "html" in content_type:
        body = json.dumps(ERROR_ENVELOPE).encode("utf-8")
        return Reply(exchange.status, {**exchange.headers, "Content-Type": "application/json"}, body)
    return Reply(exchange.status, dict(exchange.headers), exchange.body)
