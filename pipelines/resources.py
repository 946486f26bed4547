"""Resources: the warehouse (where data lives and what to plan), the crawler (live or offline), the mailer.

All three are built from `Settings` when the definitions load (`from_settings`), as plain values;
nothing here opens DuckDB or reads the environment at import time, and no step re-reads it at run
time. Secrets never pass through resource config, which the UI shows: the SMTP password is a
`dg.EnvVar`, resolved when the run starts, and platform tokens reach the crawl processes through
the environment they inherit (each spider names its own, `scrapers.platform.Token`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import dagster as dg
import duckdb
from pydantic import Field

from config.settings import Settings
from digest.sending import SendOptions
from scrapers.crawl.lock import this_process
from scrapers.crawl.runner import DEFAULT_TIMEOUT_S, CrawlJob, Progress, iter_crawls
from scrapers.crawl.summary import CrawlSummary
from scrapers.middlewares import CONTACT_SETTING
from scrapers.platform import ORIGIN_OVERRIDE_SETTING
from scrapers.registry import fixture_dir
from warehouse.engine import connect

# How long a writing step waits for the warehouse writer held by someone else (another run, a
# `gpuplan load`) before it fails naming the holder: a backfill of every day since 2024 writes
# for under half an hour, a daily run for a minute.
WRITER_WAIT_S = 1800.0
# The crawl folder of offline runs, under crawl_dir: demo data never lands beside live crawls.
OFFLINE_FOLDER = "offline"


class WarehouseResource(dg.ConfigurableResource):
    """The DuckDB warehouse and the crawl folders, and which models and methods to plan."""

    warehouse: str = Field(description="Published DuckDB file; the writer keeps a private copy beside it.")
    crawl_dir: str = Field(description="Crawl feeds and summaries, one folder per day (YYYY-MM-DD).")
    models: list[str] = Field(description="Model sizes or presets to plan, e.g. 7B, llama-3.1-70b.")
    methods: list[str] = Field(description="Training methods to plan: full, lora, qlora.")
    price_move_pct: float = Field(description="A plan's price moving by at least this percent is a change.")
    jobs_file: str | None = Field(default=None, description="Your jobs (GPUPLAN_JOBS, YAML); unset: none.")
    default_tokens: float = Field(default=1e9, description="Tokens of one run in the daily tables' totals.")
    stale_hours: float = Field(
        default=Settings.stale_hours,
        description="A platform whose crawl failed keeps its last good crawl in the day's plans (stale) "
        "while that crawl is at most this many hours older (GPUPLAN_STALE_HOURS; 0: never).",
    )
    max_nodes: int = Field(
        default=Settings.max_nodes,
        description="The most whole nodes a job plan joins over a platform's training fabric "
        "(GPUPLAN_MAX_NODES; 1: never across nodes).",
    )
    writer_wait_s: float = Field(
        default=WRITER_WAIT_S,
        description="Seconds a writing step waits for another writer (another run, `gpuplan load`), "
        "then fails naming it. DuckDB allows one writing process: the writer is a file lock.",
    )

    @classmethod
    def from_settings(cls, settings: Settings, writer_wait_s: float = WRITER_WAIT_S) -> WarehouseResource:
        return cls(
            writer_wait_s=writer_wait_s,
            warehouse=str(settings.warehouse),
            crawl_dir=str(settings.crawl_dir),
            models=list(settings.models),
            methods=list(settings.methods),
            price_move_pct=settings.price_move_pct,
            jobs_file=str(settings.jobs_file) if settings.jobs_file else None,
            default_tokens=settings.default_tokens,
            stale_hours=settings.stale_hours,
            max_nodes=settings.max_nodes,
        )

    @property
    def path(self) -> Path:
        return Path(self.warehouse)

    def day_dir(self, day: date, offline: bool = False) -> Path:
        """The folder of one day's crawl feeds and summaries (offline runs: under `offline/`)."""
        base = Path(self.crawl_dir) / OFFLINE_FOLDER if offline else Path(self.crawl_dir)
        return base / day.isoformat()

    @contextmanager
    def writer(self, context: dg.AssetExecutionContext) -> Iterator[duckdb.DuckDBPyConnection]:
        """The single writer connection of the step running in `context`. When the block ends cleanly
        it publishes the read snapshot. A run has few writing steps (`offers`, which makes fx_rates,
        gpus and offers; `plans`; `job_plans`), each one session: publishing copies the whole file.

        The writer is one file lock (`warehouse.engine.connect.writer`: the kernel frees it when its holder
        dies, however it dies). A step that finds it held logs who holds it, waits up to
        `writer_wait_s`, and records how long it waited in its materialization's metadata
        (`writer_waited_s`, `writer_held_by`); past the bound it fails with WriterBusyError naming
        the holder."""
        asked = time.monotonic()
        held_by: list[str] = []

        def waiting(holder: str) -> None:
            held_by.append(holder)
            context.log.info(
                f"waiting for the warehouse writer, held by {holder} (up to {self.writer_wait_s:g} s)"
            )

        holder = f"Dagster run {context.run.run_id} ({context.run.job_name}, step {context.op_def.name})"
        with connect.writer(
            self.path,
            self.writer_wait_s,
            holder=f"{holder} in {this_process()}",
            on_wait=waiting,
        ) as con:
            if held_by:
                waited_s = round(time.monotonic() - asked, 1)
                context.log.info(f"got the warehouse writer after {waited_s:g} s")
                # on the step's first asset (a multi-asset's first spec) that it makes: the wait is the step's
                first = next(
                    k
                    for k in context.assets_def.keys_by_output_name.values()
                    if k in context.selected_asset_keys
                )
                context.add_asset_metadata(
                    {"writer_waited_s": waited_s, "writer_held_by": held_by[0]}, asset_key=first
                )
            yield con

    def reader(self) -> duckdb.DuckDBPyConnection:
        """A read-only connection on the published snapshot (NoWarehouseError before the first run)."""
        return connect.reader(self.path)

    def has_snapshot(self) -> bool:
        return self.path.exists()


class CrawlerResource(dg.ConfigurableResource):
    """Runs the platforms' spiders together in one crawl process, live or replaying their snapshots."""

    offline: bool = Field(
        default=False, description="Replay each spider's bundled snapshot instead of the network."
    )
    timeout_s: float = Field(
        default=DEFAULT_TIMEOUT_S, description="Seconds before a platform's crawl is stopped and failed."
    )
    snapshot: str = Field(
        default="",
        description="Offline, which recorded day to replay: '' the latest (scrapers/fixtures/<slug>/), "
        "or the name of a folder in it holding another (e.g. 'previous', the day before).",
    )
    contact: str | None = Field(default=None, description="The crawler's contact in its User-Agent.")
    origin_override: str | None = Field(
        default=None,
        description="Live crawls send every request here instead of to the platform (the Scrapy setting "
        "GPUPLAN_ORIGIN_OVERRIDE, path and query kept): a platform's recorded answers served on loopback.",
    )

    def crawl_progress(self, platforms: Sequence[str], out_dir: Path) -> Iterator[Progress]:
        """Crawl `platforms` into `out_dir`, all at once: each platform's progress as it happens,
        its summary when it ends ('failed' for a failure, never raised)."""
        jobs = [
            CrawlJob(platform, replay_dir=fixture_dir(platform) / self.snapshot if self.snapshot else None)
            for platform in platforms
        ]
        return iter_crawls(
            jobs,
            out_dir,
            offline=self.offline,
            timeout_s=self.timeout_s,
            settings={
                CONTACT_SETTING: self.contact or "",
                **({ORIGIN_OVERRIDE_SETTING: self.origin_override} if self.origin_override else {}),
            },
        )

    def crawl(self, platforms: Sequence[str], out_dir: Path) -> list[CrawlSummary]:
        """Crawl `platforms` into `out_dir`; their summaries, in order."""
        done = {
            step.platform: step.summary for step in self.crawl_progress(platforms, out_dir) if step.summary
        }
        return [done[platform] for platform in platforms]


class MailerResource(dg.ConfigurableResource):
    """Where the digest goes (GPUPLAN_SMTP_*). The password is an EnvVar: never in the UI."""

    host: str | None = Field(default=None, description="SMTP server; unset: the digest is not sent.")
    port: int = Field(default=587, description="SMTP port.")
    security: str = Field(default="starttls", description="starttls, ssl or none.")
    user: str | None = Field(default=None, description="SMTP login, if the server wants one.")
    password: str | None = Field(default=None, description="SMTP password (GPUPLAN_SMTP_PASSWORD).")
    sender: str | None = Field(default=None, description="From address.")
    recipients: list[str] = Field(default_factory=list, description="To addresses.")
    skip_empty: bool = Field(default=False, description="Send nothing on a day without any change.")
    price_move_pct: float = Field(default=10.0, description="Price moves smaller than this are left out.")
    digest_lang: str = Field(
        default="en", description="The digest's language: en or zh (GPUPLAN_DIGEST_LANG)."
    )
    watches_file: str | None = Field(default=None, description="YAML list of watches (GPUPLAN_WATCHES).")

    @classmethod
    def from_settings(cls, settings: Settings) -> MailerResource:
        smtp = settings.smtp
        return cls(
            host=smtp.host,
            port=smtp.port,
            security=smtp.security,
            user=smtp.user,
            # Resolved from the environment when a run starts; only named here.
            password=dg.EnvVar("GPUPLAN_SMTP_PASSWORD") if smtp.password else None,  # type: ignore[arg-type]
            sender=smtp.sender,
            recipients=list(smtp.recipients),
            skip_empty=settings.digest_skip_empty,
            price_move_pct=settings.price_move_pct,
            digest_lang=settings.digest_lang,
            watches_file=str(settings.watches_file) if settings.watches_file else None,
        )

    def options(self) -> SendOptions:
        """How to send; the watches are read by the caller (config.watches_file.read_watches)."""
        return SendOptions(
            smtp=self, price_move_pct=self.price_move_pct, skip_empty=self.skip_empty, lang=self.digest_lang
        )
