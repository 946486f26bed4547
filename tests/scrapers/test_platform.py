"""scrapers/platform.py, the kit, on the shapes the next platforms bring that no spider has yet: a
CSV catalog served to several slugs by one base (SkyPilot's catalogs), and a list paged by a
next link (Azure's `NextPageLink`). The spiders here are the tests' own, over snapshots built in
memory; the kit's paths that today's spiders take are the contract test's (test_contract.py).

The catalog table follows SkyPilot's lambda `vms.csv` header (shared/samples/skypilot_catalog_format/
lambda_vms_2026-04-02.csv, real recorded files); the real file is read where it is beside the project.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from crawl_harness import drive
from row_mutations import drop, with_row
from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider
from scrapers.replay import Exchange, Snapshot

DATE = {"Date": "Mon, 30 Nov 2026 06:00:00 GMT"}
CATALOG = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/{cloud}/vms.csv"
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
TABLE = HEADER + (
    "cpu_4x_general,,,4.0,16.0,0.2,europe-central-1,,\n"
    "gpu_8x_v100_n,V100,8.0,88.0,448.0,4.4,europe-central-1,"
    "\"{'Gpus': [{'Name': 'V100', 'Count': 8.0, 'MemoryInfo': {'SizeInMiB': 16384}}]}\",\n"
    "gpu_1x_h100_sxm5,H100,1.0,26.0,225.0,3.29,us-east-1,"
    "\"{'Gpus': [{'Name': 'H100', 'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 81920}}]}\",2.1\n"
)
REAL_CATALOG = Path(__file__).parents[3] / "shared/samples/skypilot_catalog_format/lambda_vms_2026-04-02.csv"
MIB_PER_GB = 1024


class CatalogSpider(PlatformSpider):
    """A family base (no `name`): one subclass per cloud slug, each its own platform."""

    cloud: ClassVar[str]
    rows_format = "csv"
    rows_at = ()
    rows_name = "catalog rows"
    required = ("InstanceType", "AcceleratorCount", "Price")
    gpu_name_fields = ("AcceleratorName", "InstanceType")  # "H100", then "gpu_1x_h100_sxm5" says SXM
    kept = ("vCPUs", "MemoryGiB")
    offer_fields: ClassVar[Mapping[str, Any]] = {"price_currency": "USD", "price_per": "instance"}

    def first_requests(self) -> Iterable[Request]:
        yield self.request(CATALOG.format(cloud=self.cloud), self.parse_rows)

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem]:
        info = ast.literal_eval(row["GpuInfo"]) if row.get("GpuInfo") else {}
        memory_mib = info["Gpus"][0]["MemoryInfo"]["SizeInMiB"] if info.get("Gpus") else None
        raw_name, gpu = self.gpu_of(row, memory_mib / MIB_PER_GB if memory_mib else None)
        yield from self.on_demand_and_spot(
            response,
            gpu,
            on_demand=parsing.number(row["Price"]),
            spot=parsing.number(row.get("SpotPrice")),
            offer_id=f"{row['InstanceType']}/{row.get('Region')}",
            gpu_name_raw=raw_name,
            gpu_count=int(parsing.number(row["AcceleratorCount"]) or 0),
            region=row.get("Region"),
            billing_period="hour",
        )


class LambdaCatalogSpider(CatalogSpider):
    name = "test_lambda_catalog"
    cloud = "lambda"


class FluidstackCatalogSpider(CatalogSpider):
    name = "test_fluidstack_catalog"
    cloud = "fluidstack"


def _catalog(spider: type[CatalogSpider], table: str | bytes, content_type: str = "text/csv") -> Snapshot:
    body = table.encode("utf-8") if isinstance(table, str) else table
    headers = {"Content-Type": content_type, **DATE}
    exchange = Exchange("GET", CATALOG.format(cloud=spider.cloud), "", 200, headers, body)
    return Snapshot(Path("."), {"platform": spider.name}, [exchange])


def test_a_csv_catalog_gives_offers_per_slug_with_both_prices() -> None:
    outcome = drive(LambdaCatalogSpider, _catalog(LambdaCatalogSpider, TABLE))
    assert (outcome.status, outcome.error) == ("ok", None)
    offers = {(o.offer_id, o.pricing_type): o for o in outcome.offers}
    assert sorted(offers) == [
        ("gpu_1x_h100_sxm5/us-east-1", "on_demand"),
        ("gpu_1x_h100_sxm5/us-east-1", "spot"),
        ("gpu_8x_v100_n/europe-central-1", "on_demand"),
    ]
    v100 = offers["gpu_8x_v100_n/europe-central-1", "on_demand"]
    assert (v100.platform, v100.gpu_count, v100.price_amount, v100.gpu_memory_gb) == (
        "test_lambda_catalog",
        8,
        4.4,
        16.0,
    )
    assert v100.extra == {"vCPUs": "88.0", "MemoryGiB": "448.0"}
    assert offers["gpu_1x_h100_sxm5/us-east-1", "spot"].price_amount == 2.1
    # An empty cell says nothing: the CPU row has no GPU count and is rejected, kept, not dropped.
    assert [(r.reason, r.raw["InstanceType"]) for r in outcome.rejected] == [
        ("record_incomplete", "cpu_4x_general")
    ]
    other = drive(FluidstackCatalogSpider, _catalog(FluidstackCatalogSpider, TABLE))
    assert {o.platform for o in other.offers} == {"test_fluidstack_catalog"}
    assert {o.source_url for o in other.offers} == {CATALOG.format(cloud="fluidstack")}


def test_a_catalog_without_rows_or_in_html_fails_the_crawl() -> None:
    empty = drive(LambdaCatalogSpider, _catalog(LambdaCatalogSpider, HEADER))
    assert (empty.status, empty.error.split(" (from")[0]) == (
        "failed",
        "the platform answered with no catalog rows",
    )
    page = drive(LambdaCatalogSpider, _catalog(LambdaCatalogSpider, "<html>rate limited</html>", "text/html"))
    assert page.status == "failed" and page.error.startswith("expected CSV, got an HTML page (text/html)")
    blank = drive(LambdaCatalogSpider, _catalog(LambdaCatalogSpider, ""))
    assert blank.error.startswith("expected CSV, got no header row")


def test_a_row_edited_in_a_csv_answer_is_written_back_as_a_table() -> None:
    """The contract test's row edits work on tables too (row_mutations.with_row)."""
    snapshot = _catalog(LambdaCatalogSpider, TABLE)
    edited = with_row(snapshot, LambdaCatalogSpider, 0, 1, drop("Price"))
    outcome = drive(LambdaCatalogSpider, edited)
    assert sorted(r.raw["InstanceType"] for r in outcome.rejected) == ["cpu_4x_general", "gpu_8x_v100_n"]
    assert {o.offer_id for o in outcome.offers} == {"gpu_1x_h100_sxm5/us-east-1"}


def test_the_real_catalog_reads() -> None:
    if not REAL_CATALOG.is_file():
        pytest.skip(f"the recorded SkyPilot catalog is not beside the project ({REAL_CATALOG})")
    outcome = drive(LambdaCatalogSpider, _catalog(LambdaCatalogSpider, REAL_CATALOG.read_bytes()))
    assert outcome.status == "ok"
    h100 = {o.offer_id.split("/")[0]: o.gpu_model for o in outcome.offers if o.gpu_name_raw == "H100"}
    assert h100 and {model for kind, model in h100.items() if "sxm" in kind} == {"H100 SXM 80GB"}
    assert all(r.raw["InstanceType"].startswith("cpu_") for r in outcome.rejected)


PRICES = "https://prices.azure.com/api/retail/prices"


class NextLinkSpider(PlatformSpider):
    """A list paged by a link to the next page in each answer (Azure's retail prices API)."""

    name = "test_next_link"
    rows_at = ("Items",)
    rows_name = "price meters"
    required = ("meterId", "retailPrice", "armSkuName")
    gpu_name_fields = ("productName",)
    offer_fields: ClassVar[Mapping[str, Any]] = {"price_currency": "USD", "price_per": "instance"}

    def first_requests(self) -> Iterable[Request]:
        yield self.request(f"{PRICES}?$filter=serviceName eq 'Virtual Machines'", self.parse_rows)

    def after_rows(self, response: Response, payload: Any, found: Sequence[Any]) -> Iterable[Request]:
        link = payload.get("NextPageLink")
        return [self.request(link, self.parse_rows)] if link else []

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem]:
        raw_name, gpu = self.gpu_of(row)
        yield self.offer(
            response,
            gpu,
            offer_id=str(row["meterId"]),
            gpu_name_raw=raw_name,
            gpu_count=1,
            price_amount=parsing.number(row["retailPrice"]),
            billing_period="hour",
            pricing_type="on_demand",
        )


def _pages(second_status: int = 200) -> Snapshot:
    def page(number: int, link: str | None) -> bytes:
        item = {
            "meterId": f"m{number}",
            "retailPrice": 3.67 * number,
            "armSkuName": "x",
            "productName": "H100",
        }
        return json.dumps({"Items": [item], "NextPageLink": link}).encode("utf-8")

    first_url = f"{PRICES}?$filter=serviceName eq 'Virtual Machines'"
    next_url = f"{first_url}&$skip=100"
    headers = {"Content-Type": "application/json", **DATE}
    return Snapshot(
        Path("."),
        {"platform": NextLinkSpider.name},
        [
            Exchange("GET", first_url, "", 200, headers, page(1, next_url)),
            Exchange("GET", next_url, "", second_status, headers, page(2, None)),
        ],
    )


def test_pages_are_followed_by_their_next_link() -> None:
    outcome = drive(NextLinkSpider, _pages())
    assert (outcome.status, [o.offer_id for o in outcome.offers]) == ("ok", ["m1", "m2"])
    assert [r.meta["source_url"].endswith("$skip=100") for r in outcome.requests] == [False, True]


def test_a_failed_later_page_keeps_the_first_and_is_partial() -> None:
    outcome = drive(NextLinkSpider, _pages(second_status=503))
    assert (outcome.status, [o.offer_id for o in outcome.offers]) == ("partial", ["m1"])
    assert outcome.error.startswith("HTTP 503 from https://prices.azure.com/api/retail/prices?")


def test_the_readme_shows_the_vast_spider_as_it_is() -> None:
    """scrapers/README.md's example is the real spider (its docstring left out): it cannot drift."""
    readme = (Path(__file__).parents[2] / "scrapers" / "README.md").read_text("utf-8")
    source = (Path(__file__).parents[2] / "scrapers" / "spiders" / "vastai.py").read_text("utf-8")
    code = source[source.index("from __future__ import annotations") :].rstrip()
    assert f"```python\n{code}\n```" in readme
