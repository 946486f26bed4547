"""Vultr: the keyless plans API, Cloud GPU and bare-metal GPU plans, by the hour and by the month.

Source: `GET https://api.vultr.com/v2/plans?type=all&per_page=500` and
`GET https://api.vultr.com/v2/plans-metal?per_page=500` (no key), the two requests of dstackai/gpuhunt
`providers/vultr.py` @ 3584151. 500 is the most a page holds (vultr-cli `--per-page`); a further
page is asked with `cursor=<meta.links.next>` (vultr-cli `--cursor`), which no page needs today.

Per plan (gpuhunt's records, the real /plans-metal rows of 2026-04-01 in gpuhunt's site database):
`hourly_cost` and `monthly_cost` in USD per plan (an instance), `locations` (region ids; one offer
per location, none when empty), `gpu_type` ("NVIDIA_A100", "AMD_MI300X": the card after the vendor).
- Cloud GPU (`type` "vcg"): `gpu_vram_gb` is the VRAM the plan gets; below one card it is a slice
  of one GPU. The plan's share of a card is `gpu_count` where the plan states it ("1/8", as
  toolshedlabs-hash/gpu-price-feed `providers/vultr.py` @ aad9b32 reads it), else VRAM over the
  card's memory (gpuhunt: `gpu_vram_gb // memory`, 80 GB for Vultr's A100). A slice is kept with
  `gpu_frac` (the warehouse never plans it as a card), `gpu_count` 1.
- Dedicated GPU (`type` "vdm", `disk_type` DEDICATEDMETAL: a whole card passed through, ids
  "vcg-..." as Cloud GPU's) says nothing of its GPUs: no `gpu_type`, `gpu_count` or `gpu_vram_gb`
  (dstackai/gpuhunt `src/tests/providers/test_vultr.py` @ 3b389574a62dd0036b41169921beaba81f7dd369,
  `vdm_gpu_plan`: "a GPU plan whose type differs from its ID prefix, and which has none of the
  gpu_type/gpu_count/gpu_vram_gb fields"). Its card, count and memory come from the plan id, by
  `VDM_CARDS`, gpuhunt's `VDM_GPU_DETAILS` (`src/gpuhunt/providers/vultr.py` @ the same commit).
  A vdm plan not in that table is still a GPU plan: offered as an unknown GPU (`gpu_model` None,
  one unit, the plan id as its raw name, `extra.vdm_plan_unknown`), so the crawl's unknown GPUs
  name it, never dropped as a CPU plan.
- Bare metal: `gpu_vram_gb` is the machine's total (640 on 8 x H100), except the GH200 plan's,
  which is its Grace memory (480 = `ram`); the GPU count is the id's ("vbm-112c-2048gb-8-h100-gpu":
  8; none written: 1). `hourly_cost_preemptible` is the spot price; `deploy_ondemand` /
  `deploy_preemptible` false (real on most 2026-04-01 GPU machines) mean that way to rent is not
  open: no offer for it. The spot rule (`parsing.spot_price`) compares against the on-demand
  price only where on demand can be rented.
Billing: Vultr bills by the hour up to `monthly_cost` a month; the monthly figure is offered as a
one-month plan (`monthly_plan`). Stock: a listed location is not a count: unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider
from scrapers.rows import value_at
from sizing import gpu_names
from sizing.gpu_names import GpuIdentity

API_URL = "https://api.vultr.com/v2"
PLANS_URL = f"{API_URL}/plans?type=all&per_page=500"
METAL_URL = f"{API_URL}/plans-metal?per_page=500"
# Cards whose memory the catalog does not settle from the bare name: gpuhunt's `get_gpu_memory`.
CARD_MEMORY_GB = {"A100": 80.0}
# Bare-metal plans whose fields say less than the machine is (gpuhunt's BARE_METAL_GPU_DETAILS):
# the GH200's HBM (its gpu_vram_gb is CPU memory) and the 8 x H100 machine, Vultr's HGX H100
# board (SXM5; the API writes only NVIDIA_H100: assumed).
METAL_CARDS = {"vbm-72c-480gb-gh200-gpu": ("GH200", 96.0), "vbm-112c-2048gb-8-h100-gpu": ("H100 SXM", 80.0)}
METAL_GPU_COUNT = re.compile(r"-(\d+)-[a-z0-9]+-gpu$")
# Dedicated GPU ("vdm") plans: plan id -> (GPUs, card, GB per GPU), gpuhunt's VDM_GPU_DETAILS
# (src/gpuhunt/providers/vultr.py @ 3b389574a62dd0036b41169921beaba81f7dd369) as it writes them; the
# MI325X's 256 GB is "Vultr's documented 8 x 256 GB MI325X configuration" there (its id says 1536
# in all: not verified). A100 and H100 stay form-less as gpuhunt writes them (unknown to the catalog).
VDM_CARDS: dict[str, tuple[int, str, float]] = {
    "vcg-a16-6c-64g-16vram": (1, "A16", 16.0),
    "vcg-a16-96c-960g-256vram": (16, "A16", 16.0),
    "vcg-a16-96c-878g-256vram": (16, "A16", 16.0),
    "vcg-a40-24c-120g-48vram": (1, "A40", 48.0),
    "vcg-a40-96c-480g-192vram": (4, "A40", 48.0),
    "vcg-a100-12c-120g-80vram": (1, "A100", 80.0),
    "vcg-a100-96c-960g-640vram": (8, "A100", 80.0),
    "vcg-h100-216c-1914gb-640vram": (8, "H100", 80.0),
    "vcg-b200-248c-2826g-1536vram": (8, "B200", 192.0),
    "vcg-mi355x-252c-2872g-2304vram": (8, "MI355X", 288.0),
    "vcg-mi325x-252c-2872g-1536vram": (8, "MI325X", 256.0),
}


def card_of(gpu_type: str) -> str:
    """The card a `gpu_type` names: after the vendor, "_" as spaces ("NVIDIA_A100_SXM": "A100 SXM")."""
    return gpu_type.partition("_")[2].replace("_", " ").strip()


def share_of(text: Any) -> float | None:
    """A stated GPU count as GPUs: "1/8" is 0.125, "2" is 2 (toolshedlabs' `_fraction`)."""
    if text is None:
        return None
    top, _, bottom = str(text).partition("/")
    amount = parsing.number(top)
    if not bottom:
        return amount
    divisor = parsing.number(bottom)
    return amount / divisor if amount is not None and divisor else None


class VultrSpider(PlatformSpider):
    name = "vultr"
    sites = ("vultr.com",)
    rows_at = ("plans",)  # /plans-metal answers under "plans_metal": `rows_path`
    rows_name = "plans"
    required = ("id", "hourly_cost", "locations")
    kept = ("vcpu_count", "cpu_count", "ram", "gpu_vram_gb", "monthly_cost_preemptible", "invoice_type")
    offer_fields = {"price_currency": "USD", "price_per": "instance"}
    max_pages = 10  # 500 plans a page; every list fits one page today (gpuhunt's records)

    def first_requests(self) -> Iterable[Request]:
        for url in (PLANS_URL, METAL_URL):
            yield self.request(url, self.parse_rows, meta={"first_page": url})

    @classmethod
    def rows_path(cls, url: str) -> tuple[str | int, ...]:
        return ("plans_metal",) if "/plans-metal" in url else ("plans",)

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem]:
        gpu_type = str(row.get("gpu_type") or "")
        metal = "/plans-metal" in self.source_url(response)
        extra: dict[str, Any] = {}
        if not metal and row.get("type") == "vdm":
            gpu, count, frac = vdm_gpus(str(row["id"]))
            gpu_type = str(row["id"])  # the plan says nothing of its card: the id is all there is
            if gpu.gpu_memory_gb is None:
                extra = {"vdm_plan_unknown": "a dedicated GPU plan not in the plan table (VDM_CARDS)"}
        elif not gpu_type or (not metal and row.get("type") != "vcg"):
            return  # a CPU plan
        else:
            gpu, count, frac = self.metal_gpus(row, gpu_type) if metal else self.cloud_gpus(row, gpu_type)
        on_demand = row.get("deploy_ondemand") is not False
        hourly = parsing.number(row["hourly_cost"])
        spot = None
        if row.get("deploy_preemptible") is not False:
            spot = parsing.spot_price(
                hourly if on_demand else None, parsing.number(row.get("hourly_cost_preemptible"))
            )
        for location in row["locations"] if isinstance(row["locations"], list) else ():
            fields: dict[str, Any] = {"offer_id": f"{row['id']}/{location}", "region": str(location)}
            fields.update(gpu_name_raw=gpu_type, gpu_count=count, gpu_frac=frac, extra=dict(extra))
            if on_demand:
                yield self.offer(response, gpu, price_amount=hourly, billing_period="hour",
                                 pricing_type="on_demand", **fields)  # fmt: skip
                yield self.offer(response, gpu, price_amount=parsing.number(row.get("monthly_cost")),
                                 billing_period="month", pricing_type="monthly_plan", **fields)  # fmt: skip
            if spot is not None:
                yield self.offer(response, gpu, price_amount=spot, billing_period="hour", pricing_type="spot",
                                 **fields)  # fmt: skip

    def cloud_gpus(self, row: Mapping[str, Any], gpu_type: str) -> tuple[GpuIdentity, int, float | None]:
        """A Cloud GPU plan's card, whole GPUs (at least 1) and the share of one card it gives, if a slice."""
        card = card_of(gpu_type)
        memory_gb = CARD_MEMORY_GB.get(card) or gpu_names.identify(card).gpu_memory_gb
        share = share_of(row.get("gpu_count"))
        vram = parsing.number(row.get("gpu_vram_gb"))
        if share is None and vram and memory_gb:
            share = vram / memory_gb
        gpu = gpu_names.identify(card, memory_gb)
        if share is None:
            return GpuIdentity(None, memory_gb, None), 1, None  # how much of a card: not said
        return gpu, max(1, int(share)), (round(share, 4) if share < 1 else None)

    def metal_gpus(self, row: Mapping[str, Any], gpu_type: str) -> tuple[GpuIdentity, int, None]:
        """A bare-metal plan's card and GPU count (whole cards)."""
        plan = str(row["id"])
        counted = METAL_GPU_COUNT.search(plan)
        count = int(counted.group(1)) if counted else 1
        vram = parsing.number(row.get("gpu_vram_gb"))
        card, memory_gb = card_of(gpu_type), vram / count if vram else None
        refined = METAL_CARDS.get(plan)
        if refined is not None and refined[0].split()[0] == card:  # the table refines the API's name,
            card, memory_gb = refined  # never replaces it: a card the API renames stays unknown
        return gpu_names.identify(card, memory_gb), count, None

    def after_rows(self, response: Response, payload: Any, found: Sequence[Any]) -> Iterable[Request]:
        first = response.meta["first_page"]
        return self.next_page(
            response,
            value_at(payload, ("meta", "links", "next")),
            lambda cursor: self.request(
                f"{first}&{urlencode({'cursor': cursor})}", self.parse_rows, meta={"first_page": first}
            ),
            "cursor",
        )


def vdm_gpus(plan: str) -> tuple[GpuIdentity, int, None]:
    """A dedicated GPU plan's card and GPU count, from `VDM_CARDS`; a plan not there: unknown, one unit."""
    known = VDM_CARDS.get(plan)
    if known is None:
        return GpuIdentity(None, None, None), 1, None
    count, card, memory_gb = known
    return gpu_names.identify(card, memory_gb), count, None
