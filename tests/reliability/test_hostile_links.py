"""A URL or an id taken from an answer stays on the platform's site: a next-page link to another
host, a data: URI or a local file, and a region id that would make another host, are refused in
one line and the crawl goes on without them.

Each crawl is the real one (`scrapers.crawl.runner.run_crawl`), answered by the fault server from
the platform's recorded snapshot with one answer changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reliability.answer_changes import changed_json, served_crawl
from scrapers.replay import Exchange

pytestmark = pytest.mark.faults

# Azure's eastus2 Consumption walk has two pages in the recording: page 1 names page 2.
AZURE_PAGE_1 = "armRegionName%20eq%20%27eastus2%27"


def azure_first_page(exchange: Exchange) -> bool:
    return AZURE_PAGE_1 in exchange.url and "skip" not in exchange.url and "Consumption" in exchange.url


@pytest.mark.parametrize(
    "link",
    [
        "file:///etc/hostname",
        "file:///dev/zero",
        'data:application/json,{"Items":[],"NextPageLink":null}',
        "https://collector.example/api/retail/prices?$skip=1000",
        "https://prices.azure.com@collector.example/api/retail/prices",
    ],
)
def test_azure_next_page_link_off_its_site_is_refused(tmp_path: Path, link: str) -> None:
    """Before: the link was followed wherever it pointed: another host's answer loaded as Azure's
    offers (status ok), a data: URI was loaded, file:///etc/hostname was read into the error and
    file:///dev/zero filled the crawl process."""
    summary, server = served_crawl(
        tmp_path, "azure", changed_json(azure_first_page, lambda page: {**page, "NextPageLink": link})
    )

    assert summary.status == "partial"
    errors = summary.stats["errors"]
    assert len(errors) == 1 and "\n" not in errors[0]
    assert errors[0].startswith(f"refused: {link[:60]}")
    assert errors[0].endswith("; not asked")
    assert not any("skip" in hit.path for hit in server.hits), "page 2 is not asked anywhere"
    assert summary.items_yielded > 0, "the other regions' pages are kept"


def test_alicloud_region_id_that_makes_another_host_is_refused(tmp_path: Path) -> None:
    """Before: the region `collector.example/steal#` became the host of a signed POST
    (`https://ecs.collector.example/steal#.aliyuncs.com/`), its AccessKeyId in the Authorization header."""
    hostile = "collector.example/steal#"

    def add_region(payload: Any) -> Any:
        regions = payload["Regions"]["Region"]
        return {**payload, "Regions": {"Region": [*regions, {**regions[0], "RegionId": hostile}]}}

    summary, server = served_crawl(
        tmp_path, "alicloud", changed_json(lambda e: "DescribeRegions" in str(e.request_headers), add_region)
    )

    assert not any(hit.path.startswith("/steal") for hit in server.hits), "no request for the hostile region"
    assert summary.status == "partial"
    assert summary.stats["errors"] == [
        f"refused: the region id {hostile!r} is not [a-z0-9-]+; not asked",
    ]
    assert summary.items_yielded > 0, "the real regions' offers are kept"
