"""AWS EC2: the on-demand Linux price documents the AWS pricing pages read, for the GPU families.

Source: `GET https://b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/ec2/USD/current/ec2-ondemand-without-sec-sel/<Location>/Linux/index.json`
(no key), one document per Location, the Location written as the pages' script writes it
(`encodeURIComponent`: spaces as %20, parentheses as they are), as a public catalog generator
does (its `url.ec2OnDemand`) and as ewyluda/macrogauge asked it when it recorded the N. Virginia
answer of 2026-10-07 (`pipeline/connectors/cloudgpu.py` @ 338a61b). No pagination. Locations: the
three US regions with the whole P and G line-up; a misspelt Location answers 404, a failed
request that makes the crawl partial.

The document (macrogauge's recording): `{"manifest": {..., "hawkFilePublicationDate"},
"regions": {"<Location>": {"p5 48xlarge US East N. Virginia Linux": {row}, ...}}}`, rows keyed
by a compound name (never look them up by instance type), each with `Instance Type`, `price`
(text, USD per instance-hour, 10 decimals), `vCPU`, `Memory`, `Instance Family`. The document
names no GPU: the instance type's family and size give its card and count (the table below).
Rows of other families (CPU, Trainium, Inferentia, FPGA, Radeon, Graviton G5g) are not offers.
Some answers are gzip without a Content-Encoding header (the same generator gunzips by the magic
bytes): read either way. On demand only (reserved instances and Capacity Blocks are other
documents); the list says nothing about capacity: stock unknown.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from scrapy.http import Request, Response

from scrapers import parsing, rows
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider
from sizing import gpu_names

DOCUMENT_URL = (
    "https://b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/ec2/USD/current/"
    "ec2-ondemand-without-sec-sel/{location}/Linux/index.json"
)
# The pricing pages' Location names and the region codes they stand for (AWS's locations.json).
LOCATIONS = {
    "US East (N. Virginia)": "us-east-1",
    "US East (Ohio)": "us-east-2",
    "US West (Oregon)": "us-west-2",
}
GZIP_MAGIC = b"\x1f\x8b"

# Instance family -> (card as gpu_names.identify reads it, GB per GPU, GPUs per size). Counts and
# memory: the AWS Batch user guide's GPU table (g4dn, g5, g6, p3), rapidsai/deployment
# `source/cloud/aws/index.md` (p5 8 x H100 80 GB, p4d 8 x A100 40 GB, p3dn 8 x V100 32 GB, g6.48xlarge
# 8 x L4, g5.48xlarge 8 x A10G, g4dn.metal 8 x T4), gpuhunt's `preview_gpus` (p4de A100 80 GB),
# ewyluda/gpu-price-index `sources/aws.py` @ d789fed (p6-b300, p6-b200, p5en, p5e 8 GPUs,
# p5.4xlarge 1 H100, g6e sizes). Forms: the P4/P5 8-GPU boards are NVSwitch HGX (SXM) boards; P3
# is SXM2. g6f (fractional L4) is left out until its slice sizes are sourced.
ONE_GPU_SIZES = ("xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge")
FAMILIES: dict[str, tuple[str, float, dict[str, int]]] = {
    "p6-b300": ("B300", 279, {"48xlarge": 8}),
    "p6-b200": ("B200", 180, {"48xlarge": 8}),
    "p5en": ("H200", 141, {"48xlarge": 8}),
    "p5e": ("H200", 141, {"48xlarge": 8}),
    "p5": ("H100 SXM", 80, {"4xlarge": 1, "48xlarge": 8}),
    "p4de": ("A100 SXM", 80, {"24xlarge": 8}),
    "p4d": ("A100 SXM", 40, {"24xlarge": 8}),
    "p3dn": ("V100 SXM", 32, {"24xlarge": 8}),
    "p3": ("V100 SXM", 16, {"2xlarge": 1, "8xlarge": 4, "16xlarge": 8}),
    "g6e": ("L40S", 48, {**dict.fromkeys(ONE_GPU_SIZES, 1), "12xlarge": 4, "24xlarge": 4, "48xlarge": 8}),
    "g6": ("L4", 24, {**dict.fromkeys(ONE_GPU_SIZES, 1), "12xlarge": 4, "24xlarge": 4, "48xlarge": 8}),
    "gr6": ("L4", 24, {"4xlarge": 1, "8xlarge": 1}),
    "g5": ("A10G", 24, {**dict.fromkeys(ONE_GPU_SIZES, 1), "12xlarge": 4, "24xlarge": 4, "48xlarge": 8}),
    "g4dn": ("T4", 16, {**dict.fromkeys(ONE_GPU_SIZES, 1), "12xlarge": 4, "metal": 8}),
}


def instance_gpus(instance_type: str) -> tuple[str, float, int] | None:
    """(card, GB per GPU, GPUs) of an instance type, or None for one with no GPU in the table."""
    family, _, size = instance_type.partition(".")
    card, memory_gb, sizes = FAMILIES.get(family, ("", 0.0, {}))
    return (card, memory_gb, sizes[size]) if size in sizes else None


def location_of(url: str) -> str:
    """The Location a document's URL names (the path segment before `/Linux/index.json`)."""
    return unquote(urlsplit(url).path.split("/")[-3])


class AwsSpider(PlatformSpider):
    name = "aws"
    sites = ("awsstatic.com",)
    rows_at = ("regions",)  # then the Location the URL names: `rows_path`
    rows_keyed_by = "rate_key"
    rows_name = "instance prices"
    required = ("Instance Type", "price")
    kept = ("rateCode", "vCPU", "Memory")
    offer_fields = {"price_currency": "USD", "price_per": "instance", "billing_period": "hour"}

    def first_requests(self) -> Iterable[Request]:
        for location, region in LOCATIONS.items():
            url = DOCUMENT_URL.format(location=quote(location, safe="()"))
            yield self.request(url, self.parse_rows, meta={"region": region})

    @classmethod
    def rows_path(cls, url: str) -> tuple[str | int, ...]:
        return ("regions", location_of(url))

    def payload(self, response: Response) -> Any:
        if response.body.startswith(GZIP_MAGIC):
            cap = self.settings.getint("DOWNLOAD_MAXSIZE")
            response = response.replace(body=parsing.gunzipped(response.body, cap, self.source_url(response)))
        payload = super().payload(response)
        manifest = payload.get("manifest") if isinstance(payload, Mapping) else None
        if isinstance(manifest, Mapping) and manifest.get("hawkFilePublicationDate"):
            # when AWS published these prices: worth keeping beside the answer's own date
            response.meta["published"] = str(manifest["hawkFilePublicationDate"])
        return payload

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem]:
        instance_type = str(row["Instance Type"])
        gpus = instance_gpus(instance_type)
        if gpus is None:
            return
        card, memory_gb, count = gpus
        yield self.offer(
            response,
            gpu_names.identify(card, memory_gb),
            offer_id=f"{instance_type}/{response.meta.get('region')}",
            pricing_type="on_demand",
            gpu_name_raw=instance_type,
            gpu_count=count,
            price_amount=parsing.number(row["price"]),
            region=response.meta.get("region"),
            extra={"family_gpu": card, **rows.kept(response.meta, ("published",))},
        )
