"""SYNTHETIC crawl files for the warehouse tests, generated in code (fixture: `write_crawl`).

Every offer written here is made up (offer ids start with "synthetic-") to exercise one
loading rule each; none is a real quote.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

WriteCrawl = Callable[..., Path]


def synthetic_offer(n: int, **fields: Any) -> dict[str, Any]:
    """A valid synthetic OfferItem as a dict: 1 GPU, 2.0 USD per GPU-hour, on 2026-10-01 (UTC)."""
    return {
        "platform": "synthcloud",
        "offer_id": f"synthetic-{n}",
        "gpu_name_raw": "NVIDIA H100 80GB HBM3",
        "gpu_model": "H100 SXM 80GB",
        "gpu_memory_gb": 80,
        "gpu_count": 1,
        "price_amount": 2.0,
        "price_currency": "USD",
        "price_per": "gpu",
        "billing_period": "hour",
        "pricing_type": "on_demand",
        "observed_at": "2026-10-01T06:00:00Z",
        "source_url": "https://synthcloud.invalid/pricing",
        "region": "synthetic-region",
        "available_gpus": 8,
        "extra": {"synthetic": True},
    } | fields


def crawl_writer(folder: Path) -> WriteCrawl:
    """A function that writes a synthetic crawl (`<name>.jsonl` + `<name>.summary.json`) in
    `folder` and returns the summary path.

    `offers` are dicts (JSON lines) or raw strings (written as they are, for malformed lines);
    None writes no feed at all. Summary fields can be overridden by keyword.
    """

    def write(
        offers: Sequence[dict[str, Any] | str] | None,
        *,
        name: str = "synthcloud",
        platform: str = "synthcloud",
        status: str = "ok",
        started_at: str = "2026-10-01T06:00:00Z",
        finished_at: str = "2026-10-01T06:05:00Z",
        **summary: Any,
    ) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        feed = None
        if offers is not None:
            feed = folder / f"{name}.jsonl"
            lines = [line if isinstance(line, str) else json.dumps(line) for line in offers]
            feed.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        path = folder / f"{name}.summary.json"
        body = {
            "platform": platform,
            "status": status,
            "error": None,
            "started_at": started_at,
            "finished_at": finished_at,
            "items_yielded": len(offers or []),
            "offline": False,
            "source": "crawl",
            "feed": feed.name if feed else None,
        } | summary
        path.write_text(json.dumps(body), encoding="utf-8")
        return path

    return write
