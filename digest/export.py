"""A Digest as one JSON object (`gpuplan digest --json`), for programs and chat webhooks.

The same content as the mail, as data: money in USD and CNY (`*_usd*`, `*_cny*`), percentages in
percent, dates as ISO strings, and beside each changed plan and fired watch the sentence the mail
shows (`why`, `text`), in the digest's language. Keys (a test pins them): date, previous_date,
lang, summary, price_move_pct, watches, watch_error, plan_changes, change_causes, price_moves,
stock_changes, failed_crawls, excluded_offers, check_warnings, plans. A plan change says what
differs where both plans are on the same platform and GPU (`differs`), and which of
`change_causes` (the causes several plans share) is its (`cause`, an index; null: its own).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import date, datetime
from typing import Any

from digest.catalogue import DEFAULT_LANGUAGE
from digest.changes import Cause, ChangedPlan, cause_of
from digest.content import Digest
from digest.watches import WatchResult
from digest.wording import Wording


def digest_object(digest: Digest, lang: str = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """The digest's content as plain JSON-ready values."""
    wording = Wording.of(lang)
    causes: dict[object, int] = {
        cause_of(cause.changes[0]): index for index, cause in enumerate(digest.change_causes)
    }
    return {
        "date": digest.digest_date,
        "previous_date": digest.previous_date,
        "lang": lang,
        "summary": wording.summary(digest),
        "price_move_pct": digest.price_move_pct,
        "watches": [watch_entry(result, wording) for result in digest.watches],
        "watch_error": digest.watch_error,
        "plan_changes": [_change(change, wording, causes) for change in digest.plan_changes],
        "change_causes": [_cause(cause, wording) for cause in digest.change_causes],
        # `platform`: where the GPU model is cheapest now (new_platform), as the mail says it
        "price_moves": [{"platform": move.new_platform, **asdict(move)} for move in digest.price_moves],
        "stock_changes": [{**asdict(change), "sold_out": change.sold_out} for change in digest.stock_changes],
        "failed_crawls": [asdict(failure) for failure in digest.failed_crawls],
        "excluded_offers": [asdict(offer) for offer in digest.excluded_offers],
        "check_warnings": [asdict(warning) for warning in digest.check_warnings],
        "plans": [asdict(plan) for plan in digest.plans],
    }


def digest_json(digest: Digest, lang: str = DEFAULT_LANGUAGE) -> str:
    """`digest_object` as JSON text (UTF-8 names kept readable: 矩池云, not \\u77e9...)."""
    return json.dumps(digest_object(digest, lang), ensure_ascii=False, indent=2, default=plain)


def _cause(cause: Cause, wording: Wording) -> dict[str, Any]:
    return {
        "kind": cause.reason.kind,
        "platform": cause.reason.platform,
        "gpu_model": cause.reason.gpu_model,
        "offer_id": cause.offer_id,
        "pricing_type": cause.pricing_type,
        "usd_per_gpu_hour": cause.reason.usd_per_gpu_hour,
        "cny_per_gpu_hour": cause.reason.cny_per_gpu_hour,
        "pct_change": cause.reason.pct_change,
        "plans": len(cause.changes),
        "text": wording.cause(cause),
    }


def _change(change: ChangedPlan, wording: Wording, causes: dict[object, int]) -> dict[str, Any]:
    return {
        "subject": change.subject,
        "job": change.job,
        "model": change.model,
        "method": change.method,
        "ranking": change.ranking,
        "measure": change.measure,
        "old_value_usd": change.old.measure_usd if change.old.ok else None,
        "new_value_usd": change.new.measure_usd if change.new.ok else None,
        "old_value_cny": change.old.measure_cny if change.old.ok else None,
        "new_value_cny": change.new.measure_cny if change.new.ok else None,
        "pct_change": change.pct_change,
        "old": asdict(change.old),
        "new": asdict(change.new),
        "change_types": list(change.change_types),
        "reasons": [asdict(reason) for reason in change.reasons],
        "why": wording.why(change, with_label=False),
        "differs": wording.differs(change) or None,
        "cause": causes.get(cause_of(change)),
    }


def watch_entry(result: WatchResult, wording: Wording) -> dict[str, Any]:
    return {
        "kind": result.watch.kind,
        **asdict(result.watch),
        "holds": result.holds,
        "held_before": result.held_before,
        "fired": result.fired,
        "now": asdict(result.now) if result.now else None,
        "before": asdict(result.before) if result.before else None,
        "text": wording.watch_line(result),
    }


def plain(value: object) -> str:
    """JSON's `default` for the digest's values: dates and times as ISO strings."""
    if isinstance(value, date | datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")
