"""Resources: the warehouse (where data lives and what to plan) and the crawler (live or offline).

Both are built from `Settings` when the definitions load; nothing here opens DuckDB or reads
the environment at import time. Secrets never pass through resource config (the UI shows it):
crawls get tokens from the environment they inherit, `settings()` re-reads them at run time.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import date
from pathlib import Path

import dagster as dg
import duckdb
from pydantic import Field

from gpuplan.settings import Settings
from scrapers.runner import CrawlSummary, run_crawl
from warehouse import connect

# Every asset that writes DuckDB runs in this pool, limited to 1 (dagster.yaml): DuckDB allows one
# writing process, so two writing steps must never overlap, across runs and backfills included.
WRITER_POOL = "duckdb_writer"


class WarehouseResource(dg.ConfigurableResource):
    """The DuckDB warehouse and the crawl folders, and which models and methods to plan."""

    warehouse: str = Field(description="Published DuckDB file; the writer keeps a private copy beside it.")
    crawl_dir: str = Field(description="Crawl feeds and summaries, one folder per day (YYYY-MM-DD).")
    models: list[str] = Field(description="Model sizes or presets to plan, e.g. 7B, llama-3.1-70b.")
    methods: list[str] = Field(description="Training methods to plan: full, lora, qlora.")
    price_move_pct: float = Field(description="A plan's rent moving by more than this percent is a change.")

    @classmethod
    def from_settings(cls, settings: Settings) -> WarehouseResource:
        return cls(
            warehouse=str(settings.warehouse),
            crawl_dir=str(settings.crawl_dir),
            models=list(settings.models),
            methods=list(settings.methods),
            price_move_pct=settings.price_move_pct,
        )

    def settings(self) -> Settings:
        """The run's Settings: this resource's fields over the environment read now."""
        return replace(
            Settings.from_env(),
            warehouse=Path(self.warehouse),
            crawl_dir=Path(self.crawl_dir),
            models=tuple(self.models),
            methods=tuple(self.methods),
            price_move_pct=self.price_move_pct,
        )

    def day_dir(self, day: date) -> Path:
        """The folder of one day's crawl feeds and summaries."""
        return Path(self.crawl_dir) / day.isoformat()

    def writer(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        """The single writer connection; publishes the read snapshot when the block ends cleanly."""
        return connect.writer(self.settings())

    def reader(self) -> duckdb.DuckDBPyConnection:
        """A read-only connection on the published snapshot (NoWarehouseError before the first run)."""
        return connect.reader(self.settings())

    def has_snapshot(self) -> bool:
        return Path(self.warehouse).exists()


class CrawlerResource(dg.ConfigurableResource):
    """Runs one platform's spider in a child process, live or replaying its bundled snapshot."""

    offline: bool = Field(
        default=False, description="Replay each spider's bundled snapshot instead of the network."
    )

    def crawl(self, platform: str, out_dir: Path) -> CrawlSummary:
        """Crawl `platform` into `out_dir`; a failed platform is a 'failed' summary, never raised."""
        return run_crawl(platform, out_dir, offline=self.offline)
