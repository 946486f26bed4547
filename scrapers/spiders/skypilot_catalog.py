"""SkyPilot's hosted catalogs: one cloud's `vms.csv` per platform, for clouds with no keyless API.

Source: `GET https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/<cloud>/vms.csv`
(no key), the file SkyPilot reads (skypilot-org/skypilot `sky/catalog/common.py` `read_catalog`
@ 005261080a6b8102f3d95ff2147a855250f40272: HOSTED_CATALOG_DIR_URL / CATALOG_SCHEMA_VERSION "v8"),
and on GitHub's HTTP 429 its S3 mirror, as SkyPilot does. One table per cloud with a header row;
each cloud orders its columns its own way, so cells are read by header name. Each subclass is a
platform of its own (slug, fixture, crawl status). Its rows turn into offers by the one
reader of the format (`scrapers/skypilot_offers.py`, which `gpuplan import skypilot` calls too):
prices, memory, spot, the rows that are no GPU offers (skipped and counted,
`gpuplan/catalog_rows_not_gpu`, never rejected; a table without one GPU row fails) and each cloud's
quirks are read there. Shadeform's and Seeweb's fetchers keep only what is listed somewhere
(`extra` says so); that is no count.

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
import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from scrapy.http import Request, Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider, describe_failure
from scrapers.rejects import RejectedOffer
from scrapers.skypilot_offers import CatalogTable, Refused

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
GITHUB_JSON = {"Accept": "application/vnd.github+json"}  # the media type GitHub's REST docs ask for
DATE_TIMEOUT_S = 20.0  # one try, not the crawl's 30 s x 4: the prices do not depend on the date
HTTP_TOO_MANY_REQUESTS = 429
STAT_NOT_GPU = "gpuplan/catalog_rows_not_gpu"
STAT_DATE_UNKNOWN = "gpuplan/catalog_date_unknown"
Result = OfferItem | RejectedOffer


class SkyPilotCatalogSpider(PlatformSpider):
    """The family base (no `name`): a subclass per cloud names its slug and `cloud`; its table (how
    its rows read, `CatalogTable.of` its name) is the one an import of the same file reads with."""

    cloud: ClassVar[str]
    table: ClassVar[type[CatalogTable]] = CatalogTable
    # GitHub's API (the file's date) and raw files, and the S3 mirror's one bucket (not all of S3).
    sites = ("api.github.com", "raw.githubusercontent.com", "skypilot-catalog.s3.us-east-1.amazonaws.com")
    rows_format = "csv"
    rows_at = ()
    rows_name = "catalog rows"
    required = CatalogTable.required
    gpu_name_fields = CatalogTable.gpu_name_fields

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.table = CatalogTable.of(getattr(cls, "name", ""))
        cls.required, cls.gpu_name_fields = cls.table.required, cls.table.gpu_name_fields

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._held: list[OfferItem] = []  # the table's offers, until the catalog's date is known
        self._reading: CatalogTable | None = None  # the table of the answer being read

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

    def complete_rows(
        self, response: Response, found: Sequence[Any]
    ) -> tuple[list[Mapping[str, Any]], list[RejectedOffer]]:
        observed_at, source_url = self._stamp(response)
        build = functools.partial(self.offer, response)
        self._reading = reading = self.table(self.name, observed_at, source_url, build)
        reading.learn(found)
        gpu_rows = [row for row in found if reading.is_gpu_row(row)]
        if found and not gpu_rows:
            raise parsing.EmptyResult(
                f"the catalog lists no GPU instance: none of its {len(found)} rows has one"
            )
        self.crawler.stats.inc_value(STAT_NOT_GPU, len(found) - len(gpu_rows))
        return super().complete_rows(response, gpu_rows)

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[Result]:
        if self._reading is None:
            raise RuntimeError("offers_of before complete_rows: the table is read first")
        for result in self._reading.offers_of(row):
            if isinstance(result, Refused):
                yield self.reject(response, result.reason, result.row)
            else:
                self._held.append(result)

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
    `hourly_price / 100` (cents) per instance-hour, `InstanceType` `<cloud>_<type>`; its memory
    quirk is `skypilot_offers.ShadeformTable`'s."""

    name = "shadeform"
    cloud = "shadeform"


class PrimeintellectSpider(SkyPilotCatalogSpider):
    """Prime Intellect's aggregator; the two memory layouts its fetchers wrote are
    `skypilot_offers.PrimeintellectTable`'s."""

    name = "primeintellect"
    cloud = "primeintellect"


class SeewebSpider(SkyPilotCatalogSpider):
    """Seeweb (Italy). Fetcher (`fetch_seeweb.py` @ 34de707e78bad96810f49d2813cf1dfd18155bf7): prices
    with no currency, read as EUR (`skypilot_offers.SeewebTable`), so the crawl is marked unverified."""

    name = "seeweb"
    cloud = "seeweb"
    UNVERIFIED = "Seeweb's hourly_price carries no currency: read as EUR, Seeweb's billing currency"

    def first_requests(self) -> Iterable[Request]:
        self.mark_unverified(self.UNVERIFIED)
        return super().first_requests()
