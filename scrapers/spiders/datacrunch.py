"""DataCrunch (now Verda): the public instance-types list, on-demand and spot prices per instance.

Source: `GET https://api.verda.com/v1/instance-types` (no key), as the SDK asks it:
DataCrunch-io/datacrunch-python, now `verda` (CHANGELOG 1.17.0: "Default API base URL is now
https://api.verda.com/v1"; `verda/instance_types/_instance_types.py` sends no currency
parameter, and no public client does). When that host does not serve the list (its name
does not resolve, it refuses the connection, or answers HTTP 401, 403, 404 or 410), the old one,
`https://api.datacrunch.io/v1/instance-types`, is asked instead; the offers then cite it. A
failure of a host that does serve it (HTTP 5xx, a timeout, a cut answer) is the crawl's failure:
asking a second host then would double the load on a platform already in trouble.

A JSON list; per type (the record gpuhunt's `test_verda.py` pins)
`price_per_hour` and `spot_price` (per instance per hour, as strings, in `currency`, "usd"),
`gpu.number_of_gpus`, `gpu_memory.size_in_gigabytes` for the whole instance, and the names
`name` ("H100 SXM5 80GB"), `model`, `gpu.description` ("1x H100 SXM5 80GB"). A `spot_price`
of 0 or none means no spot quote (our reading: no instance can be rented for free) and yields
no spot offer. The list says nothing about stock or location.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from scrapy.http import Request, Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet.error import ConnectionRefusedError, DNSLookupError
from twisted.python.failure import Failure

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider, describe_failure

INSTANCE_TYPES_URL = "https://api.verda.com/v1/instance-types"
FALLBACK_URL = "https://api.datacrunch.io/v1/instance-types"  # DataCrunch's host before it became Verda
JSON_ACCEPT = {"Accept": "application/json"}
# Answers meaning "this host does not serve the list" (moved, or the old host's name reused).
NOT_SERVED_STATUSES = frozenset({401, 403, 404, 410})


class DatacrunchSpider(PlatformSpider):
    name = "datacrunch"
    sites = ("verda.com", "datacrunch.io")  # Verda is DataCrunch renamed
    rows_at = ()  # the answer is the list
    rows_name = "instance types"
    required = ("instance_type", "price_per_hour", "gpu")
    gpu_name_fields = ("name", "model", ("gpu", "description"))
    kept = ("id", "description", "dynamic_price", "max_dynamic_price", "p2p", "deploy_warning")
    envelope = parsing.CodeEnvelope(ok=())  # success is a list; an error, {"code": ..., "message": ...}
    offer_fields = {"price_per": "instance", "billing_period": "hour"}

    def first_requests(self) -> Iterable[Request]:
        request = self.request(INSTANCE_TYPES_URL, self.parse_rows, headers=JSON_ACCEPT)
        yield request.replace(errback=self.ask_the_old_host)

    def ask_the_old_host(self, failure: Failure) -> Iterator[Request]:
        """Verda's host does not serve the list: the old DataCrunch host answers the same list (its
        errback records); any other failure is recorded as it is."""
        error = failure.value
        not_served = isinstance(error, DNSLookupError | ConnectionRefusedError) or (
            isinstance(error, HttpError) and error.response.status in NOT_SERVED_STATUSES
        )
        if not not_served:
            self.on_request_failed(failure)
            return
        why = describe_failure(failure, self.settings.getfloat("DOWNLOAD_TIMEOUT"))
        self.logger.warning("%s; asking %s", why, FALLBACK_URL)
        yield self.request(FALLBACK_URL, self.parse_rows, headers=JSON_ACCEPT)

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem]:
        gpu_spec = row["gpu"] if isinstance(row["gpu"], Mapping) else {}
        gpu_count = int(parsing.number(gpu_spec.get("number_of_gpus")) or 0)
        if gpu_count == 0:
            return  # a CPU instance: not a GPU offer
        memory_field = row.get("gpu_memory")
        memory = memory_field if isinstance(memory_field, Mapping) else {}
        total_gb = parsing.number(memory.get("size_in_gigabytes"))
        raw_name, gpu = self.gpu_of(row, total_gb / gpu_count if total_gb else None)
        yield from self.on_demand_and_spot(
            response,
            gpu,
            on_demand=parsing.number(row["price_per_hour"]),
            spot=parsing.number(row.get("spot_price")),
            offer_id=str(row["instance_type"]),
            gpu_name_raw=raw_name,
            gpu_count=gpu_count,
            price_currency=str(row.get("currency") or "usd").upper(),
        )
