"""One reader per format: a SkyPilot catalog file gives the same offers whether a spider crawls it
or `gpuplan import skypilot` reads it (both call `scrapers.skypilot_offers`).

For every platform whose spider reads a SkyPilot catalog, its fixture's recorded `vms.csv` is
imported into a real warehouse and the stored offers are compared with the offers the spider yields
from the same answer: ids, GPU, count, price and pricing type.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import warehouse_template
from crawl_harness import drive, snapshot_of

from scrapers.history import formats
from scrapers.registry import platforms, spider_class
from scrapers.spiders.skypilot_catalog import SkyPilotCatalogSpider
from warehouse.imports import import_file

CATALOG_PLATFORMS = [name for name in platforms() if issubclass(spider_class(name), SkyPilotCatalogSpider)]
DAY = "2026-11-30"  # the fixtures' recording day


def test_every_catalog_spider_is_covered() -> None:
    assert {"gcp", "hyperstack", "jarvislabs", "nebius", "primeintellect", "seeweb", "shadeform"} <= set(
        CATALOG_PLATFORMS
    )


@pytest.mark.parametrize("platform", CATALOG_PLATFORMS)
def test_importing_a_catalog_gives_the_spiders_offers(platform: str, tmp_path: Path) -> None:
    outcome = drive(platform)
    assert outcome.status == "ok" and outcome.offers
    catalog = tmp_path / f"{platform}_vms_{DAY}.csv"
    catalog.write_bytes(snapshot_of(platform).exchanges[0].body)

    con = warehouse_template.scratch()
    report = import_file(con, formats.get("skypilot"), catalog)
    assert report.error is None, report

    crawled = sorted(
        (o.offer_id, o.gpu_model, o.gpu_count, o.price_amount, o.price_currency, o.pricing_type)
        for o in outcome.offers
    )
    imported = con.execute(
        "SELECT offer_id, gpu_model, gpu_count, price_amount, price_currency, pricing_type "
        "FROM offers WHERE platform = $platform ORDER BY ALL",
        {"platform": platform},
    ).fetchall()
    assert imported == crawled
    # what the spider rejected, the import refused for the same reason
    rejected = con.execute(
        "SELECT reason FROM rejected_offers WHERE platform = $platform ORDER BY ALL", {"platform": platform}
    ).fetchall()
    assert [reason for (reason,) in rejected] == sorted(r.reason for r in outcome.rejected)
