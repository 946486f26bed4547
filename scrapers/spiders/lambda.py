"""Lambda: the public pricing page without a key; the instance-types API (with stock) with one.

Without `LAMBDA_API_KEY`: `https://lambda.ai/service/gpu-cloud`. Its "Instances pricing"
section has one size tab per GPU count ("8x", "4x", "2x", "1x") and one table per tab, rows
`<tr data-plan="NVIDIA H100 SXM">` with cells `data-label="VRAM/GPU"` and
`data-label="PRICE/GPU/HR*"` ($ per GPU per hour, before sales tax). How the live page is read
follows the public parsers that work on it: toolshedlabs-hash/gpu-price-feed
`providers/lambdalabs.py` (@ aad9b32) finds the tabs by their CSS-module class
(`<button class="_tabButton…">8x</button>`) and pairs them with the pricing tables in document
order, refusing to guess when the counts differ; cherielilili/gpu-pricing-tracker
`scripts/lambda_fetcher.py` (@ ecc9327) reads the escaped copy of the same markup in the page's
hydration data (`data-label=\"PRICE\u002fGPU\u002fHR*\"\u003e$X.XX`), which is all some versions
of the page serve. Every one of these shapes is read, and tabs marked up as `role="tab"` with
`aria-controls` too; only a page with none of them is a layout change. Tables without
`data-plan` rows (1-Click Clusters) are not size tables. The page says nothing about stock.

With `LAMBDA_API_KEY`: `GET https://cloud.lambda.ai/api/v1/instance-types` (Bearer token):
`price_cents_per_hour` per instance, and `regions_with_capacity_available`, the stock signal:
one offer per region with capacity (at least one instance, so `available_gpus` = its GPU count,
a lower bound), or one offer with `available_gpus` 0 when the list is empty. The GPU's memory is
read from the description, `8x Tesla V100 (16 GB)` (the regex of dstackai/gpuhunt
`providers/lambdalabs.py`), so a card the catalog does not know keeps it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from parsel import Selector
from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider, Token
from scrapers.rejects import RejectedOffer
from sizing import gpu_names

PRICING_PAGE_URL = "https://lambda.ai/service/gpu-cloud"
INSTANCE_TYPES_URL = "https://cloud.lambda.ai/api/v1/instance-types"
SIZE_TAB = re.compile(r"^\s*(\d+)\s*x\s*$", re.IGNORECASE)
PRICE_LABEL = "PRICE/GPU/HR"  # the cell's label, then "*" (a footnote: before sales tax)
# A size tab in the live page's CSS modules: `class="_tabButton_1wn8q_12 ..."`.
TAB_BUTTONS = '//*[contains(concat(" ", normalize-space(@class)), " _tabButton")]'
PRICING_TABLES = "//table[.//tr[@data-plan]][.//*[starts-with(@data-label, $label)]]"
# "8x Tesla V100 (16 GB)", "1x A10 (24 GB PCIe)": count, name, memory (gpuhunt's reading).
API_DESCRIPTION = re.compile(r"^\s*(\d+)x\s+(?:Tesla\s+)?(.+?)\s*\((\d+)\s*GB", re.IGNORECASE)
# A JSON/JS string literal in a script that carries table markup.
ESCAPED_MARKUP = re.compile(r'"((?:[^"\\]|\\.)*data-plan(?:[^"\\]|\\.)*)"')


class LambdaSpider(PlatformSpider):
    name = "lambda"
    token = Token(
        env="LAMBDA_API_KEY",
        required=False,
        description="Lambda Cloud API key (cloud.lambda.ai, API keys); without it the pricing page is read",
    )
    # The keyless path reads a web page: ask its robots.txt first.
    custom_settings: dict[str, Any] | None = {"ROBOTSTXT_OBEY": True}
    # The API (with a key): `data` is an object of instance types keyed by their name.
    rows_at = ("data",)
    rows_keyed_by = "name"
    rows_name = "instance types"
    required = ("instance_type",)
    gpu_name_fields = (("instance_type", "gpu_description"), ("instance_type", "description"), "name")
    offer_fields = {"price_currency": "USD", "billing_period": "hour"}

    def first_requests(self) -> Iterable[Request]:
        key = self.token_value()
        if key:
            yield self.request(
                INSTANCE_TYPES_URL,
                self.parse_rows,
                headers={"Authorization": f"Bearer {key}", "Accept": "application/json"},
                # An API for key holders, not a page: robots.txt is not its contract.
                meta={"dont_obey_robotstxt": True},
            )
        else:
            yield self.request(PRICING_PAGE_URL, self.parse_pricing_page)

    # --- the pricing page -----------------------------------------------------

    def parse_pricing_page(self, response: Response) -> Iterator[OfferItem | RejectedOffer]:
        # The rendered tables first; the hydration copy when the page ships only that.
        rows = list(_sized_rows(Selector(text=response.text)))
        if not rows:
            rows = [row for fragment in _escaped_fragments(response.text) for row in _sized_rows(fragment)]
        if not rows:
            raise parsing.LayoutChanged(
                "no size tabs (8x, 4x, ...) with data-plan pricing tables on the pricing page, "
                "rendered or in its hydration data"
            )
        for gpu_count, row in rows:
            yield self.page_offer(response, gpu_count, row)

    def page_offer(self, response: Response, gpu_count: int, row: Selector) -> OfferItem | RejectedOffer:
        plan = (row.attrib.get("data-plan") or "").strip()
        cells = {
            (cell.attrib.get("data-label") or "").strip(): " ".join(cell.css("::text").getall()).strip()
            for cell in row.css("td[data-label], th[data-label]")
        }
        if not plan:
            return self.reject(response, "record_incomplete", {"gpu_count": gpu_count, "cells": cells})
        price_label = next((label for label in cells if label.upper().startswith(PRICE_LABEL)), None)
        vram = cells.get("VRAM/GPU", "")
        gpu = gpu_names.identify(plan, parsing.number(vram))
        return self.offer(
            response,
            gpu,
            # A plan name can have two memory sizes ("NVIDIA A100 SXM", 40 and 80 GB).
            offer_id=f"{plan} {vram}/{gpu_count}x".replace("  ", " "),
            gpu_name_raw=plan,
            gpu_count=gpu_count,
            # A sold-out size shows "—": no price, which the item checks reject (price_missing).
            price_amount=parsing.number(cells.get(price_label)) if price_label else None,
            price_per="gpu",
            pricing_type="on_demand",
            extra={
                label.lower(): value for label, value in cells.items() if label in ("vCPUs", "RAM", "STORAGE")
            },
        )

    # --- the API ----------------------------------------------------------------

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem]:
        kind = row["instance_type"] if isinstance(row["instance_type"], Mapping) else {}
        specs = kind.get("specs") or {}
        description = str(kind.get("description") or "")
        listed = parsing.number(specs.get("gpus"))
        gpu_count = int(listed) if listed is not None else _leading_count(description)
        if gpu_count == 0:
            return  # a CPU instance: not a GPU offer
        described = API_DESCRIPTION.match(description)
        raw_name, gpu = self.gpu_of(row, float(described.group(3)) if described else None)
        shared = {
            "gpu_name_raw": raw_name,
            "gpu_count": gpu_count,
            "price_amount": parsing.from_minor_units(kind.get("price_cents_per_hour"), parsing.CENTS),
            "price_per": "instance",
            "pricing_type": "on_demand",
        }
        extra = {
            "instance_type": row["name"],
            **{k: specs[k] for k in ("vcpus", "memory_gib", "storage_gib") if k in specs},
        }
        regions = row.get("regions_with_capacity_available")
        if not isinstance(regions, list) or not regions:
            yield self.offer(
                response,
                gpu,
                offer_id=row["name"],
                available_gpus=None if regions is None else 0,
                extra=extra,
                **shared,
            )
            return
        for region in regions:
            name = region.get("name") if isinstance(region, Mapping) else str(region)
            yield self.offer(
                response,
                gpu,
                offer_id=f"{row['name']}/{name}",
                region=name,
                available_gpus=gpu_count,
                extra={
                    **extra,
                    "region_description": region.get("description") if isinstance(region, Mapping) else None,
                },
                **shared,
            )


def _sized_rows(page: Selector) -> Iterator[tuple[int, Selector]]:
    """(GPU count, row) of every data-plan row of a size tab's table, by either tab markup."""
    by_panel = list(_rows_by_tab_panel(page))
    return iter(by_panel) if by_panel else _rows_by_tab_order(page)


def _rows_by_tab_panel(page: Selector) -> Iterator[tuple[int, Selector]]:
    """Tabs marked up for accessibility: `role="tab"` + `aria-controls` naming the panel."""
    for tab in page.xpath('//*[@role="tab"]'):
        size = SIZE_TAB.match(" ".join(tab.css("::text").getall()))
        panel_id = tab.attrib.get("aria-controls")
        if size is None or not panel_id:
            continue
        for row in page.xpath("//*[@id=$panel]//tr[@data-plan]", panel=panel_id):
            yield int(size.group(1)), row


def _rows_by_tab_order(page: Selector) -> Iterator[tuple[int, Selector]]:
    """The live page's markup: `_tabButton` buttons, and the pricing tables in the same order."""
    sizes = [
        int(label.group(1))
        for tab in page.xpath(TAB_BUTTONS)
        if (label := SIZE_TAB.match(" ".join(tab.css("::text").getall())))
    ]
    tables = page.xpath(PRICING_TABLES, label=PRICE_LABEL)
    if not sizes or not tables:
        return
    if len(sizes) != len(tables):
        raise parsing.LayoutChanged(
            f"{len(sizes)} size tabs but {len(tables)} pricing tables on the pricing page: "
            "which table is which size cannot be told"
        )
    for gpu_count, table in zip(sizes, tables, strict=True):
        for row in table.xpath(".//tr[@data-plan]"):
            yield gpu_count, row


def _escaped_fragments(text: str) -> Iterator[Selector]:
    """The table as escaped markup inside scripts (`\\u003Ctr data-plan=\\"...\\"`), decoded."""
    for script in Selector(text=text).xpath("//script/text()").getall():
        if "data-plan" not in script:
            continue
        for literal in ESCAPED_MARKUP.finditer(script):
            try:
                yield Selector(text=json.loads(f'"{literal.group(1)}"'))
            except json.JSONDecodeError:
                continue


def _leading_count(description: str) -> int:
    match = re.match(r"^\s*(\d+)\s*x", description)
    return int(match.group(1)) if match else 0
