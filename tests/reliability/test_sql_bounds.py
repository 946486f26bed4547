"""`gpuplan sql` is bounded: time, memory, disk, rows, and what it prints.

Each test reproduces what was seen on main before the fix: an endless query ran until killed, a
MemoryError printed as an empty "error: ", a large query spilled into `warehouse.duckdb.tmp/` (and
a killed one left its spill behind), `--max-rows` fetched every row first, crawled text reached
the terminal and CSV raw, and a query over 128 KiB could not be passed at all. The warehouse holds
SYNTHETIC offers (reliability.synthetic_crawls), and two with hostile text of our own making.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result
from warehouse_template import migrated

from config.settings import Settings
from gpuplan.cli import app
from reliability.synthetic_crawls import LINE, PLATFORM, write_crawl
from warehouse.engine import connect, sandbox
from warehouse.loading import load_crawl

pytestmark = pytest.mark.faults

ENDLESS = "SELECT count(*) FROM range(10000000000000)"  # hours of counting
# Grouping a million distinct strings needs ~100 MB: over a 40 MB limit it spills, and still answers.
SPILLS = (
    "SELECT s, count(*) AS n FROM (SELECT md5(range::VARCHAR) AS s FROM range(1000000)) "
    "GROUP BY s ORDER BY n, s"
)
NO_SPILL_POSSIBLE = "SELECT list(range) FROM range(30000000)"  # one list value: cannot be spilled
HOSTILE = {
    "synthetic-escape": "\x1b]0;owned\x07\x1b[2J\x1b[31mH100\rA100 \u202eRTX",
    "synthetic-formula": '=HYPERLINK("http://x.invalid","click")',
}


@pytest.fixture
def published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """A published warehouse of SYNTHETIC offers, two with hostile text; spill goes under tmp_path/tmp."""
    settings = Settings.from_env({"GPUPLAN_WAREHOUSE": str(tmp_path / "warehouse" / "warehouse.duckdb")})
    feed = write_crawl(tmp_path / "crawl", date(2026, 11, 30), 5)
    lines = [
        LINE.replace("synthetic-%d", offer_id).replace("synthetic-region", "x")
        % (PLATFORM, 2.0, "2026-11-30")
        for offer_id in HOSTILE
    ]
    feed_path = feed.with_name("synthcloud.jsonl")
    rows = [json.loads(line) for line in lines]
    for row in rows:
        row["region"] = HOSTILE[row["offer_id"]]
    with feed_path.open("a", encoding="utf-8") as out:
        out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    with connect.writer(migrated(settings.warehouse)) as con:
        load_crawl(con, feed)
    spill_root = tmp_path / "tmp"
    spill_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill_root))
    return settings


def _sql(settings: Settings, *args: str, stdin: str | None = None) -> Result:
    return CliRunner(env={"COLUMNS": "200"}).invoke(
        app, ["--warehouse", str(settings.warehouse), "sql", *args], input=stdin
    )


def _fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        if path.is_file()
        else "dir"
        for path in sorted(folder.rglob("*"))
    }


def _one_error_line(result: Result) -> str:
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def test_sql_timeout_interrupts_an_endless_query(published: Settings) -> None:
    started = time.monotonic()
    error = _one_error_line(_sql(published, ENDLESS, "--timeout", "0.5"))
    assert "ran past its 0.5 s limit and was stopped" in error
    # the setting, when --timeout is not given
    result = CliRunner(env={"GPUPLAN_SQL_TIMEOUT_S": "0.5"}).invoke(
        app, ["--warehouse", str(published.warehouse), "sql", ENDLESS]
    )
    assert "ran past its 0.5 s limit" in _one_error_line(result)
    assert time.monotonic() - started < 20


def test_sql_memory_limit_gives_a_real_message(published: Settings) -> None:
    error = _one_error_line(_sql(published, NO_SPILL_POSSIBLE, "--memory-limit", "40MB"))
    assert (
        "the query needs more memory than its limit of 40MB (--memory-limit or GPUPLAN_SQL_MEMORY_LIMIT"
        in error
    )
    assert sandbox.default_memory_limit().endswith("MiB")  # the default: a stated share of RAM


def test_sql_spills_only_to_a_private_folder_removed_on_exit(published: Settings) -> None:
    folder, spill_root = published.warehouse.parent, Path(tempfile.gettempdir())
    before = _fingerprint(folder)
    with sandbox.sandbox(published.warehouse, memory_limit="40MB") as box:
        answer = box.rows(SPILLS, timeout_s=120, max_rows=1)
        first = next(answer.batches)
        (spill,) = spill_root.iterdir()
        assert spill.stat().st_mode & 0o777 == 0o700
        assert any(spill.iterdir()), "the query did not spill: the test proves nothing"
    assert first[0][1] == 1
    assert list(spill_root.iterdir()) == []
    distinct = "SELECT count(*) AS groups FROM (SELECT DISTINCT md5(range::VARCHAR) FROM range(1000000))"
    result = _sql(published, distinct, "--memory-limit", "40MB", "--format", "csv")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["groups", "1000000"]
    assert list(spill_root.iterdir()) == []
    assert _fingerprint(folder) == before, "something was written beside the warehouse"


def test_sql_spill_left_by_a_killed_query_is_removed_at_next_start(published: Settings) -> None:
    spill_root = Path(tempfile.gettempdir())
    child = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from warehouse.engine.sandbox import sandbox\n"
        "with sandbox(Path(sys.argv[1]), memory_limit='40MB', spill_root=Path(sys.argv[2])) as box:\n"
        "    answer = box.rows(sys.argv[3], timeout_s=120, max_rows=1)\n"
        "    next(answer.batches)\n"
        "    print('spilled', flush=True)\n"
        "    time.sleep(120)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", child, str(published.warehouse), str(spill_root), SPILLS],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "spilled"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    (left,) = spill_root.iterdir()
    assert left.name.startswith(f"gpuplan-sql-{process.pid}-")
    result = _sql(published, "SELECT count(*) FROM offers")
    assert result.exit_code == 0, result.output
    assert list(spill_root.iterdir()) == []


def test_sql_max_rows_stops_fetching(published: Settings) -> None:
    endless_rows = "SELECT range AS n FROM range(10000000000000)"
    table = _sql(published, endless_rows, "--max-rows", "5", "--timeout", "20")
    assert table.exit_code == 0, table.output
    assert "first 5 rows fetched, more not fetched" in table.stdout
    as_csv = _sql(published, endless_rows, "--max-rows", "3", "--format", "csv", "--timeout", "20")
    assert as_csv.stdout.splitlines() == ["n", "0", "1", "2"]


def test_sql_output_neutralizes_escapes_and_formulas(published: Settings) -> None:
    query = (
        "SELECT offer_id, region, '-1.5' AS minus_text FROM offers "
        "WHERE offer_id IN ('synthetic-escape', 'synthetic-formula') ORDER BY offer_id"
    )
    table = _sql(published, query)
    assert table.exit_code == 0, table.output
    for raw in ("\x1b", "\x07", "\r", "\u202e"):
        assert raw not in table.stdout
    assert "\\x1b]0;owned\\x07" in table.stdout and "\\u202e" in table.stdout
    rows = list(csv.reader(io.StringIO(_sql(published, query, "--format", "csv").stdout)))
    escape, formula = rows[1], rows[2]
    assert escape[1].startswith("\\x1b]0;owned\\x07\\x1b[2J") and "\x1b" not in escape[1]
    assert formula[1] == '\'=HYPERLINK("http://x.invalid","click")'
    assert escape[2] == "-1.5"  # a number written as text stays a number


def test_sql_query_from_file_and_stdin(published: Settings, tmp_path: Path) -> None:
    # Over 128 KiB: too long for one argument on Linux (MAX_ARG_STRLEN), so it comes as a file or on stdin.
    padding = "\n".join(f"-- padding line {n:06d} " + "x" * 60 for n in range(3000))
    query = f"{padding}\nSELECT count(*) AS offers FROM offers"
    assert len(query.encode()) > 128 * 1024
    path = tmp_path / "long.sql"
    path.write_text(query, "utf-8")
    for args, stdin in ((["-f", str(path)], None), (["-f", "-"], query), ([], query)):
        result = _sql(published, *args, "--format", "csv", stdin=stdin)
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines() == ["offers", "7"]
