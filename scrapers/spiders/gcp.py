"""Google Cloud GPUs, from SkyPilot's hosted GCP catalog (the family in `skypilot_catalog.py`).

GCP's table prices the GPUs and the VMs apart: a GPU row is priced with its host VM in the same
zone, as SkyPilot prices it (`scrapers.skypilot_offers.GcpTable`, which an import of the same file
reads with). Prices: USD; on demand and spot (GCP's Spot VMs, the `Preemptible` SKUs); no stock.
"""

from __future__ import annotations

from scrapers.spiders.skypilot_catalog import SkyPilotCatalogSpider


class GcpSpider(SkyPilotCatalogSpider):
    name = "gcp"
    cloud = "gcp"
