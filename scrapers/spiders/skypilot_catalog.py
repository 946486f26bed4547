"""SkyPilot's hosted catalogs: one cloud's `vms.csv` per platform, for clouds with no keyless API.

Source: `GET https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/<cloud>/vms.csv`
(no key), the file SkyPilot reads (skypilot-org/skypilot `sky/catalog/common.py` `read_catalog`
@ 005261080a6b8102f3d95ff2147a855250f40272: HOSTED_CATALOG_DIR_URL / CATALOG_SCHEMA_VERSION "v8"),
and on GitHub's HTTP 429 its S3 mirror, as SkyPilot does. One table per cloud with a header row;
each cloud orders its columns its own way, so cells are read by header name. Each subclass is a
platform of its own (slug, fixture, crawl status). As SkyPilot reads every table
(`common.get_hourly_cost_impl`, `list_accelerators_impl`):

- `Price` and `SpotPrice` are USD per hour of the whole instance of `AcceleratorCount` GPUs. An
  empty `SpotPrice` is no spot offer, one at or above `Price` neither (`parsing.spot_price`); a
  row with a `SpotPrice` and no `Price` (Prime Intellect's `__SPOT` types) is a spot offer alone.
- GPU memory: `GpuInfo`'s `SizeInMiB` / 1024 per GPU (`scrapers.skypilot`), unless a cloud's
  fetcher writes something else there (Shadeform, Prime Intellect: below).
- Rows with no accelerator are no GPU offers (CPU instances; GCP's host VMs and TPUs): skipped
  and counted (`gpuplan/catalog_rows_not_gpu`), never rejected. A table without one GPU row fails.
- Stock: none of these tables counts GPUs, so `available_gpus` is None (unknown). Shadeform's and
  Seeweb's fetchers keep only what is listed somewhere (`extra` says so); that is no count.
- The catalog's date: the file has none and raw.githubusercontent.com sends no Last-Modified (a
  recorded header dump of a raw file, nytimes/covid-19-data issue #312, shows ETag and Date only).
  Once the table is read, GitHub's list-commits API is asked for the file's last commit (keyless,
  60 requests an hour per address); its committer date is every offer's `catalog_date`. The
  offers wait for that one answer, asked once and not retried, and never fail for it: refused,
  rate-limited or absent from a recording, the offers go out with `catalog_date` None and say why
  in `extra.catalog_date_unknown` (and the log warns).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from scrapy.http import Request, Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from scrapers import parsing, rows, skypilot
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider, describe_failure
from scrapers.rejects import RejectedOffer
from sizing import gpu_names
from sizing.gpu_names import GpuIdentity

CATALOG_URL = (
    "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/{cloud}/vms.csv"
)
# SkyPilot's own fallback when GitHub rate-limits raw files (HTTP 429: "github introduced rate limit
# after 2025-05", skypilot issue #5438): HOSTED_CATALOG_DIR_URL_S3_MIRROR in sky/skylet/constants.py,
# synced from the repository every 7 hours (the catalog repo's upload-catalog-to-s3.yml).
MIRROR_URL = "https://skypilot-catalog.s3.us-east-1.amazonaws.com/catalogs/v8/{cloud}/vms.csv"
COMMITS_URL = (
    "https://api.github.com/repos/skypilot-org/skypilot-catalog/commits"
    "?path=catalogs/v8/{cloud}/vms.csv&per_page=1"
)
CATALOG = "skypilot-catalog/v8"  # every offer's `catalog`: where it was read, not the cloud's own API
GITHUB_JSON = {"Accept": "application/vnd.github+json"}  # the media type GitHub's REST docs ask for
DATE_TIMEOUT_S = 20.0  # one try, not the crawl's 30 s x 4: the prices do not depend on the date
HTTP_TOO_MANY_REQUESTS = 429
STAT_NOT_GPU = "gpuplan/catalog_rows_not_gpu"
STAT_DATE_UNKNOWN = "gpuplan/catalog_date_unknown"
Result = OfferItem | RejectedOffer


class SkyPilotCatalogSpider(PlatformSpider):
    """The family base (no `name`): a subclass per cloud names its slug and `cloud`."""

    cloud: ClassVar[str]
    rows_format = "csv"
    rows_at = ()
    rows_name = "catalog rows"
    required: ClassVar[tuple[str, ...]] = ("InstanceType", "AcceleratorName", "AcceleratorCount")
    # The card's name first (the raw name kept), then the machine's, which may state the form.
    gpu_name_fields: ClassVar[tuple[rows.Field, ...]] = ("AcceleratorName", "InstanceType")
    zone_column: ClassVar[str | None] = None  # a column more precise than `Region`, part of the id
    offer_fields: ClassVar[Mapping[str, Any]] = {
        "price_currency": "USD",
        "price_per": "instance",
        "billing_period": "hour",
        "catalog": CATALOG,
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._held: list[OfferItem] = []  # the table's offers, until the catalog's date is known

    def first_requests(self) -> Iterable[Request]:
        request = self.request(CATALOG_URL.format(cloud=self.cloud), self.parse_rows)
        yield request.replace(errback=self.ask_the_mirror)

    def ask_the_mirror(self, failure: Failure) -> list[Request]:
        """GitHub refused the file for its rate limit, after the retries: the S3 mirror SkyPilot
        falls back to (`common.read_catalog`); the offers then cite it. Any other failure is the
        crawl's."""
        error = failure.value
        if isinstance(error, HttpError) and error.response.status == HTTP_TOO_MANY_REQUESTS:
            self.logger.warning(f"HTTP 429 from GitHub for the {self.cloud} catalog: reading its S3 mirror")
            return [self.request(MIRROR_URL.format(cloud=self.cloud), self.parse_rows)]
        self.on_request_failed(failure)
        return []

    def payload(self, response: Response) -> Any:
        table = super().payload(response)
        missing = [column for column in (*self.required, "Price") if table and column not in table[0]]
        if missing:
            header = ", ".join(table[0])
            raise parsing.LayoutChanged(
                f"the catalog has no column {', '.join(missing)} (its header: {header})"
            )
        return table

    def is_gpu_row(self, row: Mapping[str, Any]) -> bool:
        """A row that offers GPUs: it names an accelerator or counts some (one that counts some but
        names none is an incomplete GPU row, rejected, not skipped)."""
        count = parsing.number(row.get("AcceleratorCount"))
        return bool(row.get("AcceleratorName")) or (count is not None and count > 0)

    def complete_rows(
        self, response: Response, found: Sequence[Any]
    ) -> tuple[list[Mapping[str, Any]], list[RejectedOffer]]:
        gpu_rows = [row for row in found if self.is_gpu_row(row)]
        if found and not gpu_rows:
            raise parsing.EmptyResult(
                f"the catalog lists no GPU instance: none of its {len(found)} rows has one"
            )
        self.crawler.stats.inc_value(STAT_NOT_GPU, len(found) - len(gpu_rows))
        return super().complete_rows(response, gpu_rows)

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[Result]:
        count = skypilot.gpu_count(row["AcceleratorCount"])
        if count is None:
            yield self.reject(response, "gpu_count_invalid", row)
            return
        for result in self.row_offers(response, row, count):
            if isinstance(result, OfferItem):
                self._held.append(result)
            else:
                yield result

    def row_offers(self, response: Response, row: Mapping[str, Any], count: int) -> Iterator[Result]:
        """The offers (and rejections) of one GPU row of `count` GPUs."""
        names = rows.named(row, self.gpu_name_fields)
        on_demand, spot = parsing.number(row.get("Price")), parsing.number(row.get("SpotPrice"))
        fields = {
            "offer_id": self.offer_id(row, str(row["InstanceType"])),
            "gpu_name_raw": names[0],
            "gpu_count": count,
            "region": row.get("Region") or None,
            "extra": self.extra_of(row),
        }
        gpu = self.identity(names, self.memory_gb(row, count))
        if on_demand is None and spot is not None:
            yield self.offer(response, gpu, price_amount=spot, pricing_type="spot", **fields)
        else:
            yield from self.on_demand_and_spot(response, gpu, on_demand, spot, **fields)

    def identity(self, names: Sequence[str], memory_gb: float | None) -> GpuIdentity:
        """The card, from its name with the form the machine names state (`parsing.form_in_name`),
        then from each name alone."""
        form = parsing.form_in_name(*names)
        return gpu_names.identify_first([*([f"{names[0]} {form}"] if form else []), *names], memory_gb)

    def memory_gb(self, row: Mapping[str, Any], count: int) -> float | None:
        """Per-GPU memory: `SizeInMiB` is MiB per GPU (SkyPilot divides it by 1024)."""
        mib = skypilot.gpu_memory_mib(skypilot.gpu_info(row.get("GpuInfo")))
        return None if mib is None else mib / skypilot.MIB_PER_GIB

    def offer_id(self, row: Mapping[str, Any], unit: str) -> str:
        """`unit@region[/zone]`: a type repeats per region, some with other specs per region."""
        region, zone = row.get("Region"), row.get(self.zone_column) if self.zone_column else None
        return unit + (f"@{region}" if region else "") + (f"/{zone}" if zone else "")

    def extra_of(self, row: Mapping[str, Any]) -> dict[str, Any]:
        extra = {
            "instance_type": row.get("InstanceType"),
            "vcpus": parsing.number(row.get("vCPUs")),
            "memory_gib": parsing.number(row.get("MemoryGiB")),
            "zone": row.get(self.zone_column) if self.zone_column else None,
        }
        return {key: value for key, value in extra.items() if value is not None}

    # --- the catalog's date ----------------------------------------------------------

    def after_rows(self, response: Response, payload: Any, found: Sequence[Any]) -> Iterable[Request]:
        if not self._held:
            return ()
        request = self.request(
            COMMITS_URL.format(cloud=self.cloud),
            self.parse_catalog_date,
            headers=GITHUB_JSON,
            meta={"dont_retry": True, "download_timeout": DATE_TIMEOUT_S},
        )
        return [request.replace(errback=self.catalog_date_failed)]

    def parse_catalog_date(self, response: Response) -> list[OfferItem]:
        """GitHub's list of the file's commits, newest first: `[0].commit.committer.date`."""
        try:
            commit = parsing.json_body(response)[0]
            committed = str(commit["commit"]["committer"]["date"])
            day = dt.datetime.fromisoformat(committed.replace("Z", "+00:00")).date().isoformat()
            sha = str(commit["sha"])
        except (parsing.CrawlError, LookupError, TypeError, ValueError) as error:
            return self.release(None, f"GitHub's commits answer names no commit date ({error!r})")
        return self.release(day, None, {"catalog_commit": sha, "catalog_committed_at": committed})

    def catalog_date_failed(self, failure: Failure) -> list[OfferItem]:
        return self.release(None, describe_failure(failure, DATE_TIMEOUT_S))

    def release(
        self, day: str | None, unknown: str | None, extra: Mapping[str, Any] | None = None
    ) -> list[OfferItem]:
        """The held offers, with the catalog's date, or with why it is unknown."""
        if unknown is not None:
            self.logger.warning(f"catalog date unknown: {unknown}")
            self.crawler.stats.set_value(STAT_DATE_UNKNOWN, unknown)
            extra = {"catalog_date_unknown": unknown}
        held, self._held = self._held, []
        for offer in held:
            offer.catalog_date = day
            offer.extra = {**offer.extra, **(extra or {})}
        return held


class HyperstackSpider(SkyPilotCatalogSpider):
    """Hyperstack (NexGen Cloud). Fetcher (skypilot-org/skypilot `fetch_hyperstack.py`, index id
    27216231431): `price = gpu_count * pricebook value` per instance-hour, every flavor of every
    region (no stock filter), no spot; its `GpuInfo` is the `'Manufacturer': null` dialect."""

    name = "hyperstack"
    cloud = "hyperstack"


class NebiusSpider(SkyPilotCatalogSpider):
    """Nebius AI Cloud. Fetcher (`fetch_nebius.py` @ 18b91582185f668be98e66ddd41b9e4aea56bb5a): the
    calculator's hourly list price of each preset per region, spot = the preemptible estimate;
    `InstanceType` `<platform>_<preset>` ("gpu-h100-sxm_8gpu-128vcpu-1600gb") states the form."""

    name = "nebius"
    cloud = "nebius"


class JarvislabsSpider(SkyPilotCatalogSpider):
    """JarvisLabs (India). The fetcher is not public (the catalog repo's update-jarvislabs-catalog.yml
    @ 0aae7853e09c13f8c844493d18c0ee66f20783fc runs it every 7 hours); `Price` is per instance: the
    8x rows are 8 times the 1x ones (27.92 = 8 x 3.49 for H100)."""

    name = "jarvislabs"
    cloud = "jarvislabs"


class ShadeformSpider(SkyPilotCatalogSpider):
    """Shadeform's marketplace. Fetcher (`fetch_shadeform.py` @ 6dd899d53b9623a37e9f34a452d0c8c924892eff):
    `GET /v1/instances/types?available=true`, a row per region whose `availability[].available`,
    `hourly_price / 100` (cents) per instance-hour, `InstanceType` `<cloud>_<type>`; and
    `'SizeInMiB': int(config['vram_per_gpu_in_gb'])`: GB in the field named MiB."""

    name = "shadeform"
    cloud = "shadeform"
    LARGEST_GPU_GB = 1024  # no card has a terabyte: a figure above is a fixed fetcher's real MiB

    def memory_gb(self, row: Mapping[str, Any], count: int) -> float | None:
        size = skypilot.gpu_memory_mib(skypilot.gpu_info(row.get("GpuInfo")))
        if size is None:
            return None
        return size if size <= self.LARGEST_GPU_GB else size / skypilot.MIB_PER_GIB

    def extra_of(self, row: Mapping[str, Any]) -> dict[str, Any]:
        upstream = str(row.get("InstanceType") or "").partition("_")[0]
        return {**super().extra_of(row), "upstream_cloud": upstream, "listed_as_available": True}


class PrimeintellectSpider(SkyPilotCatalogSpider):
    """Prime Intellect's aggregator. The stored v8 table (with `UpstreamCloudId`, `AvailabilityZone`:
    the data center) was written by a fetcher no longer public; its `Gpus[0].MemoryInfo.SizeInMiB`
    is the whole machine's GPU memory (655360 for 8 x 80 GB). The later fetcher (`fetch_primeintellect.py`
    @ f00893d3287167e36bea67ac477d2bdfb5693828: "gpuMemory is the TOTAL across the box") writes the
    per-GPU figure in a top-level `MemoryInfo`, with no `Gpus` list: both are read."""

    name = "primeintellect"
    cloud = "primeintellect"
    gpu_name_fields = ("AcceleratorName", "InstanceType", "UpstreamCloudId")
    zone_column = "AvailabilityZone"

    def memory_gb(self, row: Mapping[str, Any], count: int) -> float | None:
        info = skypilot.gpu_info(row.get("GpuInfo"))
        if info is not None and "Gpus" in info:
            whole = skypilot.gpu_memory_mib(info)
            return None if whole is None else whole / count / skypilot.MIB_PER_GIB
        per_gpu = skypilot.gpu_memory_mib({"Gpus": [info]}) if info else None
        return None if per_gpu is None else per_gpu / skypilot.MIB_PER_GIB

    def extra_of(self, row: Mapping[str, Any]) -> dict[str, Any]:
        provider = str(row.get("InstanceType") or "").partition("__")[0]
        cloud_id = row.get("UpstreamCloudId")
        return {
            **super().extra_of(row),
            "provider": provider,
            **({"upstream_cloud_id": cloud_id} if cloud_id else {}),
        }


class SeewebSpider(SkyPilotCatalogSpider):
    """Seeweb (Italy). Fetcher (`fetch_seeweb.py` @ 34de707e78bad96810f49d2813cf1dfd18155bf7):
    `price = float(plan.hourly_price)` from Seeweb's own API with no currency: read as EUR, the
    currency Seeweb bills in (assumed, so the crawl is marked unverified); a row per region the plan
    is available in, or one with an empty `Region` when there is none; `SizeInMiB` 0 for a card its
    VRAM table lacks (memory unknown, "RTX PRO 6000 96GB" names it)."""

    name = "seeweb"
    cloud = "seeweb"
    offer_fields = {**SkyPilotCatalogSpider.offer_fields, "price_currency": "EUR"}
    UNVERIFIED = "Seeweb's hourly_price carries no currency: read as EUR, Seeweb's billing currency"

    def first_requests(self) -> Iterable[Request]:
        self.mark_unverified(self.UNVERIFIED)
        return super().first_requests()

    def extra_of(self, row: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().extra_of(row), **({} if row.get("Region") else {"no_region_listed": True})}
