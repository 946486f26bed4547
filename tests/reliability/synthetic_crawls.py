"""SYNTHETIC crawls for the crash tests: made-up offers in the crawl-output format (scrapers.crawl.runner).

Every offer here is invented (platform "synthcloud", offer ids "synthetic-N"); none is a quote.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

PLATFORM = "synthcloud"
# One OfferItem line; %-formatted (platform, offer number, price in USD per GPU-hour, day) because the bulk
# feed has a hundred thousand of them and json.dumps per line would dominate the test.
LINE = (
    '{"platform":"%s","offer_id":"synthetic-%d","gpu_name_raw":"NVIDIA H100 80GB HBM3",'
    '"gpu_model":"H100 SXM 80GB","gpu_memory_gb":80,"gpu_form":"SXM","gpu_count":1,"price_amount":%.2f,'
    '"price_currency":"USD","price_per":"gpu","billing_period":"hour","pricing_type":"on_demand",'
    '"available_gpus":8,"observed_at":"%sT06:00:00Z","source_url":"https://synthcloud.invalid/offers"}\n'
)


def write_crawl(folder: Path, day: date, offers: int, name: str = PLATFORM, platform: str = PLATFORM) -> Path:
    """`<folder>/<name>.jsonl` with `offers` synthetic offers of `platform` (1.00-3.99 USD/GPU-hour)
    and its summary.

    Returns the summary path, the loader's input.
    """
    folder.mkdir(parents=True, exist_ok=True)
    feed = folder / f"{name}.jsonl"
    feed.write_text(
        "".join(LINE % (platform, n, 1 + n % 300 / 100, day.isoformat()) for n in range(offers)), "utf-8"
    )
    summary = folder / f"{name}.summary.json"
    summary.write_text(
        json.dumps(
            {
                "platform": platform,
                "status": "ok",
                "error": None,
                "started_at": f"{day.isoformat()}T06:00:00Z",
                "finished_at": f"{day.isoformat()}T06:01:00Z",
                "items_yielded": offers,
                "offline": False,
                "source": "crawl",
                "feed": feed.name,
            }
        ),
        "utf-8",
    )
    return summary
