"""Helpers of the warehouse-file faults (test_publishing.py, test_writer_lock.py, test_clock_ahead.py):
a small warehouse of SYNTHETIC crawls, the CLI in a child process, and damage done to a file.

Every offer here is invented (reliability.synthetic_crawls); none is a quote.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import random
import subprocess
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from unittest import mock

import duckdb
from warehouse_template import migrated

from config.settings import Settings
from gpuplan.cli import run
from reliability.synthetic_crawls import write_crawl
from warehouse.engine import blocks, connect, integrity
from warehouse.loading import load_crawl

CLI = "from gpuplan.cli import run; run()"  # the `gpuplan` console script
FIRST_DAY = date(2026, 11, 28)
SECOND_DAY = date(2026, 11, 29)
THIRD_DAY = date(2026, 11, 30)


def settings_in(root: Path) -> Settings:
    return Settings.from_env(
        {
            "GPUPLAN_WAREHOUSE": str(root / "warehouse" / "warehouse.duckdb"),
            "GPUPLAN_CRAWL_DIR": str(root / "crawls"),
        }
    )


def crawl(settings: Settings, day: date, offers: int, name: str = "synthcloud") -> Path:
    """A SYNTHETIC crawl of `offers` offers on `day` in the crawl folder; returns its summary."""
    return write_crawl(settings.crawl_dir / day.isoformat(), day, offers, name=name)


def load(settings: Settings, *summaries: Path) -> None:
    """Load crawls the way `gpuplan load` does: one writer session, published at the end."""
    with connect.writer(migrated(settings.warehouse)) as con:
        for summary in summaries:
            load_crawl(con, summary)


def history(settings: Settings) -> dict[str, int]:
    """Two days of SYNTHETIC crawls, loaded and published; returns the offers per crawl."""
    load(settings, crawl(settings, FIRST_DAY, 40))
    load(settings, crawl(settings, SECOND_DAY, 30))
    return offers_by_crawl(settings.warehouse)


def offers_by_crawl(path: Path) -> dict[str, int]:
    """Offers per crawl in one DuckDB file (the published one, or any other copy), read directly."""
    with duckdb.connect(str(path), read_only=True, config=integrity.SAFE_CONFIG) as con:
        return dict(con.execute("SELECT crawl_id, count(*) FROM offers GROUP BY ALL").fetchall())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cli(
    settings: Settings,
    *args: str,
    child: bool = False,
    preexec_fn: Callable[[], object] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`gpuplan ARGS` through the console entry point (`gpuplan.cli.run`: one line per error), in this
    process (a CLI start costs 1.5 CPU seconds), or with `child` in a child process, as cron runs it
    (`preexec_fn` runs in that child before gpuplan starts, e.g. to set a resource limit)."""
    env = {"GPUPLAN_WAREHOUSE": str(settings.warehouse), "GPUPLAN_CRAWL_DIR": str(settings.crawl_dir)}
    if child:
        full = {**os.environ, **env}
        full.pop("GPUPLAN_DEBUG", None)
        return subprocess.run(
            [sys.executable, "-c", CLI, *args],
            env=full,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            preexec_fn=preexec_fn,
        )
    assert preexec_fn is None, "preexec_fn needs child=True"
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with (
        mock.patch.dict(os.environ, env),
        mock.patch.object(sys, "argv", ["gpuplan", *args]),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        os.environ.pop("GPUPLAN_DEBUG", None)
        try:
            run()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["gpuplan", *args], code, out.getvalue(), err.getvalue())


def assert_one_clear_line(stderr: str, *names: str) -> None:
    """The CLI's contract for an error: one line, "error: ...", naming what is wrong."""
    assert stderr.startswith("error: ") and stderr.count("\n") == 1, f"not one line: {stderr!r}"
    for name in names:
        assert name in stderr, f"{name!r} not named in {stderr!r}"


def data_block_offset(path: Path, table: str) -> int:
    """The file offset of a data block holding `table`'s column data (DuckDB's own storage info)."""
    with duckdb.connect(str(path), read_only=True) as con:
        ((block_id,),) = con.execute(
            "SELECT min(block_id) FROM pragma_storage_info($table) WHERE block_id >= 0 AND persistent",
            {"table": table},
        ).fetchall()
        ((block_size,),) = con.execute("SELECT block_size FROM pragma_database_size()").fetchall()
    return blocks.HEADER_BYTES + int(block_id) * int(block_size)


def overwrite(path: Path, offset: int, size: int = 4096) -> None:
    """Overwrite `size` bytes at `offset` with noise (a bad sector). Noise, not a repeated pattern:
    DuckDB's block checksum is a xor of words, which a pattern repeated an even number of times
    over zeros cancels out (DuckDB itself would not see that damage either)."""
    with path.open("r+b") as handle:
        handle.seek(offset)
        handle.write(random.Random(offset).randbytes(size))
