"""Crash safety of the warehouse: a loader killed mid-load, a full disk, a path that cannot be written.

Each test builds a history first (a SYNTHETIC crawl loaded and planned by the daily run's
functions, fault_days.run_day), then hurts a load of a large SYNTHETIC crawl, and asserts: the
published snapshot is untouched, the warehouse holds the history exactly and nothing of the hurt
load, and a later run loads that crawl completely, once.

Disk full and unwritable paths are made so they hold for root too (CI runs as root, where chmod
stops nothing): "full" is RLIMIT_FSIZE in the loading child (writes past the limit fail with
EFBIG, the error a full quota gives); "not writable" is a warehouse path under a regular file
(ENOTDIR) or a published path taken by a directory (EISDIR on replace).
"""

from __future__ import annotations

import hashlib
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest
from warehouse_template import migrated

from config.settings import Settings
from reliability.fault_days import METHODS, MODELS, run_day
from reliability.synthetic_crawls import write_crawl
from reliability.warehouse_files import cli
from warehouse.engine import connect
from warehouse.loading import load_crawl

pytestmark = pytest.mark.faults

HISTORY_DAY = date(2026, 11, 29)
LOAD_DAY = date(2026, 11, 30)
HISTORY_OFFERS = 40
# Large enough that loading takes about a second on a CI core, so the kills below land mid-load.
BULK_OFFERS = 150_000
KILL_AFTER_S = (0.1, 0.4)
# Room the limited child may add to the writer file: far less than the bulk crawl needs (~10 MB).
FULL_MARGIN_BYTES = 256 * 1024
CLI = "from gpuplan.cli import run; run()"
CHILD = Path(__file__).with_name("load_child.py")


@dataclass(frozen=True)
class Stored:
    """What the warehouse holds: offers per crawl, the crawls recorded, the plans (no timestamps)."""

    offers_by_crawl: dict[str, int]
    crawls: dict[str, str]  # crawl_id -> status
    plans: list[tuple[object, ...]]


def _settings(root: Path) -> Settings:
    return Settings.from_env(
        {
            "GPUPLAN_WAREHOUSE": str(root / "warehouse" / "warehouse.duckdb"),
            "GPUPLAN_CRAWL_DIR": str(root / "crawls"),
            "GPUPLAN_MODELS": ",".join(MODELS),
            "GPUPLAN_METHODS": ",".join(METHODS),
        }
    )


def _history(settings: Settings) -> Stored:
    write_crawl(settings.crawl_dir / HISTORY_DAY.isoformat(), HISTORY_DAY, HISTORY_OFFERS)
    run_day(settings, HISTORY_DAY)
    return _stored(settings)


def _stored(settings: Settings) -> Stored:
    """Read through the writer (what a crashed run left, after DuckDB's recovery), then publish."""
    with connect.writer(settings.warehouse) as con:
        return Stored(
            offers_by_crawl=dict(
                con.execute("SELECT crawl_id, count(*) FROM offers GROUP BY ALL").fetchall()
            ),
            crawls=dict(con.execute("SELECT crawl_id, status FROM crawl_runs").fetchall()),
            plans=con.execute("SELECT * EXCLUDE (computed_at) FROM cheapest_plans ORDER BY ALL").fetchall(),
        )


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rerun_loads_it_once(settings: Settings, summary: Path, before: Stored) -> None:
    """A later run loads the whole crawl, beside the intact history; a run after it changes nothing."""
    with connect.writer(settings.warehouse) as con:
        result = load_crawl(con, summary)
    assert (result.status, result.offers_loaded) == ("ok", BULK_OFFERS), result
    after = _stored(settings)
    assert after.offers_by_crawl == {**before.offers_by_crawl, result.crawl_id: BULK_OFFERS}
    assert after.plans == before.plans
    with connect.writer(settings.warehouse) as con:
        assert load_crawl(con, summary).already_loaded
        [(offers, distinct)] = con.execute(
            "SELECT count(*), count(DISTINCT offer_id) FROM offers WHERE crawl_id = $id",
            {"id": result.crawl_id},
        ).fetchall()
    assert offers == distinct == BULK_OFFERS


def _assert_one_clear_line(stderr: str, *names: str) -> None:
    """The CLI's contract for a user error: one line, "error: ...", naming what is wrong. Run as
    from cron (stderr not a terminal), where a wrapped line breaks paths apart."""
    assert stderr.startswith("error: ") and stderr.count("\n") == 1, f"not one line: {stderr!r}"
    for name in names:
        assert name in stderr, f"{name!r} not named in {stderr!r}"


def test_loader_killed_mid_load_then_run_again(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    before = _history(settings)
    published = _digest(settings.warehouse)
    summary = write_crawl(settings.crawl_dir / LOAD_DAY.isoformat(), LOAD_DAY, BULK_OFFERS)
    interrupted = []
    for delay_s in KILL_AFTER_S:
        child = subprocess.Popen(
            [sys.executable, str(CHILD), str(settings.warehouse), str(summary)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stdout.readline().strip() == "loading", child.stderr.read()
        time.sleep(delay_s)
        child.send_signal(signal.SIGKILL)
        rest, _ = child.communicate(timeout=60)
        finished = "loaded" in rest
        interrupted.append(not finished)
        if finished:  # the load won the race: the warehouse must then hold all of it
            break
        assert child.returncode == -signal.SIGKILL
        assert _digest(settings.warehouse) == published, "a killed load changed the published snapshot"
        assert _stored(settings) == before, "a killed load left part of itself in the warehouse"
        published = _digest(settings.warehouse)  # reading through the writer published it again
    assert interrupted[0], f"the load of {BULK_OFFERS} offers ended within {KILL_AFTER_S[0]} s: kill sooner"
    _rerun_loads_it_once(settings, summary, before)


def test_warehouse_full_mid_load(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    before = _history(settings)
    published = _digest(settings.warehouse)
    summary = write_crawl(settings.crawl_dir / LOAD_DAY.isoformat(), LOAD_DAY, BULK_OFFERS)
    limit = connect.writer_path(settings.warehouse).stat().st_size + FULL_MARGIN_BYTES

    def full_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    result = cli(settings, "load", str(summary), child=True, preexec_fn=full_disk)
    assert result.returncode == 1
    assert _digest(settings.warehouse) == published
    after = _stored(settings)
    assert after == before, (
        "the load that ran out of space left a record behind: "
        f"{ {k: v for k, v in after.crawls.items() if k not in before.crawls} }"
    )
    _rerun_loads_it_once(settings, summary, before)
    _assert_one_clear_line(result.stderr, "File too large")


def test_warehouse_folder_not_writable(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a regular file where the warehouse folder should be\n", "utf-8")
    settings = _settings(tmp_path)
    summary = write_crawl(settings.crawl_dir / LOAD_DAY.isoformat(), LOAD_DAY, HISTORY_OFFERS)
    files_before = sorted(tmp_path.rglob("*"))
    blocked = settings.with_warehouse(blocker / "warehouse.duckdb")
    result = cli(blocked, "load", str(summary), child=True)
    assert result.returncode == 1
    assert sorted(tmp_path.rglob("*")) == files_before, "a failed run left files behind"
    with connect.writer(
        migrated(settings.warehouse)
    ) as con:  # the crawl, untouched, loads where the warehouse can live
        assert load_crawl(con, summary).offers_loaded == HISTORY_OFFERS
    _assert_one_clear_line(result.stderr, str(blocker))


def test_published_path_not_replaceable(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    before = _history(settings)
    summary = write_crawl(settings.crawl_dir / LOAD_DAY.isoformat(), LOAD_DAY, HISTORY_OFFERS)
    taken = settings.with_warehouse(settings.warehouse.with_name("taken.duckdb"))
    taken.warehouse.mkdir()  # someone's folder where the snapshot goes: os.replace cannot take it
    connect.writer_path(taken.warehouse).write_bytes(connect.writer_path(settings.warehouse).read_bytes())
    result = cli(taken, "load", str(summary), child=True)
    assert result.returncode == 1
    assert list(taken.warehouse.iterdir()) == [] and not list(taken.warehouse.parent.glob(".taken.duckdb.*"))
    taken.warehouse.rmdir()
    # already in the writer file: published now
    assert cli(taken, "load", str(summary), child=True).returncode == 0
    with connect.reader(taken.warehouse) as con:
        [(loaded,)] = con.execute("SELECT count(*) FROM offers").fetchall()
    assert loaded == sum(before.offers_by_crawl.values()) + HISTORY_OFFERS
    _assert_one_clear_line(
        result.stderr, "could not publish the warehouse", str(connect.writer_path(taken.warehouse))
    )
