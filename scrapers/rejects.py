"""Quotes a spider read but would not pass on as offers: kept, with the reason, in a second feed.

Nothing is lost: `<platform>.rejected.jsonl` beside the offers feed holds every
rejected quote as the platform gave it, so a wrong rule can be found and fixed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from scrapers.items import OfferItem


@dataclass
class RejectedOffer:
    """One rejected quote. `reason` is a short code ("price_absurd"); `raw` what we had."""

    platform: str
    reason: str
    observed_at: str  # ISO-8601 UTC
    source_url: str
    raw: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of_offer(cls, offer: OfferItem, reason: str) -> RejectedOffer:
        return cls(
            platform=offer.platform,
            reason=reason,
            observed_at=offer.observed_at,
            source_url=offer.source_url,
            raw=asdict(offer),
        )
