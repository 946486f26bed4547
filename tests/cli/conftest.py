"""Fixtures for the CLI tests: a published warehouse of the platforms' recorded crawls."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from warehouse_template import migrated, published_copy

from config.settings import Settings
from scrapers.crawl.summary import CrawlSummary, digest_feed
from scrapers.registry import fixture_dir, platforms
from warehouse.engine import connect
from warehouse.loading import load_crawl


@pytest.fixture(scope="session")
def recorded_writer_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The writer file of `recorded`, loaded once per session (read it, never write it)."""
    warehouse = tmp_path_factory.mktemp("recorded") / "warehouse.duckdb"
    with connect.writer(migrated(warehouse), publish=False) as con:
        for platform in platforms():
            load_crawl(con, offline_crawl(platform, fixture_dir(platform) / "expected.jsonl"))
    return connect.writer_path(warehouse)


def offline_crawl(platform: str, feed: Path) -> CrawlSummary:
    """The summary of an offline crawl of `platform` that wrote `feed`, observed when its first offer was."""
    lines = [line for line in feed.read_text(encoding="utf-8").splitlines() if line.strip()]
    observed = dt.datetime.fromisoformat(json.loads(lines[0])["observed_at"])
    return CrawlSummary(
        platform=platform,
        status="ok",
        error=None,
        started_at=observed,
        finished_at=observed,
        items_yielded=len(lines),
        offline=True,
        feed=feed,
        feed_sha256=digest_feed(feed).sha256,
    )


@pytest.fixture(scope="session")
def recorded_published(tmp_path_factory: pytest.TempPathFactory, recorded_writer_file: Path) -> Path:
    """`recorded_writer_file` published by a writer session, once per session (read it, never write it)."""
    warehouse = tmp_path_factory.mktemp("recorded_published") / "warehouse.duckdb"
    with connect.writer(migrated(warehouse, source=recorded_writer_file)):
        pass
    return warehouse


@pytest.fixture
def recorded(settings: Settings, recorded_published: Path) -> Settings:
    """A published warehouse holding, for every platform, the items its recorded snapshot yields
    (`scrapers/fixtures/<slug>/expected.jsonl`, checked against the recording by the spider tests),
    loaded as that platform's offline crawl: a copy of the session's published one."""
    published_copy(settings.warehouse, recorded_published)
    return settings
