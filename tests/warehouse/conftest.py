"""Fixtures for the warehouse tests: SYNTHETIC crawl files (see synthetic_crawls.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic_crawls import WriteCrawl, crawl_writer


@pytest.fixture
def write_crawl(tmp_path: Path) -> WriteCrawl:
    """Writes synthetic crawls under `tmp_path/crawls`; returns each summary's path."""
    return crawl_writer(tmp_path / "crawls")
