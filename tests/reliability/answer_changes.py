"""One platform's recorded answers with one answer changed, and a real crawl of them: the hostile
answer tests' harness (the loopback server of tests/loopback.py, reached through GPUPLAN_ORIGIN_OVERRIDE)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loopback import FaultServer, Reply, serving

from reliability.fake_secrets import secret_env
from reliability.fault_days import LOOPBACK_SETTINGS, http_date
from reliability.faults import snapshot
from scrapers.crawl.runner import run_crawl
from scrapers.crawl.summary import CrawlSummary
from scrapers.platform import ORIGIN_OVERRIDE_SETTING
from scrapers.replay import Exchange, Snapshot


def changed_json(
    is_target: Callable[[Exchange], bool], change: Callable[[Any], Any]
) -> Callable[[Exchange], Reply]:
    """A rewrite of the recorded answers: the JSON body of the target exchanges through `change`."""

    def rewrite(exchange: Exchange) -> Reply:
        body = exchange.body
        if is_target(exchange):
            body = json.dumps(change(json.loads(body))).encode("utf-8")
        return Reply(exchange.status, dict(exchange.headers), body)

    return rewrite


def served_crawl(
    folder: Path,
    platform: str,
    rewrite: Callable[[Exchange], Reply],
    recorded: Snapshot | None = None,
    date_header: str | None = None,
    settings: dict[str, str] | None = None,
) -> tuple[CrawlSummary, FaultServer]:
    """A real crawl of `platform` answered from `recorded` (default: its snapshot) through `rewrite`,
    every answer dated `date_header` (default: today), with `settings` over the loopback ones."""
    date_header = date_header or http_date(datetime.now(UTC).date())
    with serving(recorded or snapshot(platform), date_header, rewrite) as server:
        summary = run_crawl(
            platform,
            folder,
            env=secret_env(),
            settings={ORIGIN_OVERRIDE_SETTING: server.url, **LOOPBACK_SETTINGS, **(settings or {})},
        )
    return summary, server
