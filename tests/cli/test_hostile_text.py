"""Crawled text never drives the terminal: a platform's text with escape sequences, through the
real commands.

Before: a region carrying ESC sequences was printed raw by `gpuplan plans --tokens`; a platform's
error message `ESC[2J ... datacrunch: ok, 18 offers` cleared the screen of `gpuplan crawl`, `load`
and the refresh board and printed a status of its own; the digest's text part kept the ESC bytes.
The neutraliser (`config.shown_text`) existed only in `gpuplan sql`.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner, Result
from warehouse_template import migrated

from cli.conftest import offline_crawl
from config.settings import Settings
from config.shown_text import one_line, visible
from gpuplan import display
from gpuplan.cli import app
from gpuplan.crawl_display import CrawlBoard
from scrapers.crawl.summary import CrawlSummary
from scrapers.registry import fixture_dir, platform_tokens
from scrapers.replay import SNAPSHOT_FILE
from warehouse.engine import connect
from warehouse.loading import load_crawl

# A hyperlink (OSC 8), the window title (OSC 0), clear screen and cursor home, a colour, a carriage
# return over the line, and a bidi override: each drives a terminal that gets it raw.
LINK = "\x1b]8;;https://collector.example/\x1b\\rent here\x1b]8;;\x1b\\"
CLEAR = "\x1b[2J\x1b[H"
FAKE_STATUS = f"{CLEAR}datacrunch: ok, 18 offers"
HOSTILE = f"{LINK}{CLEAR}\x1b]0;owned\x07\x1b[31mJapan\rUS \u202eSU"
# What a terminal would obey; rich's own styling uses SGR (ESC[...m) only, and none of these.
DRIVERS = ("\x1b]", "\x1b[2J", "\x1b[H", "\x07", "\r", "\u202e", "\x1b[31m")
OBSERVED = dt.datetime(2026, 11, 30, 6, 0, tzinfo=dt.UTC)


def _drives_nothing(text: str, drivers: tuple[str, ...] = DRIVERS) -> None:
    for raw in drivers:
        assert raw not in text, f"{raw!r} reached the terminal"


def test_the_neutraliser_writes_every_driver_as_an_escape() -> None:
    assert visible(HOSTILE) == (
        "\\x1b]8;;https://collector.example/\\x1b\\rent here\\x1b]8;;\\x1b\\\\x1b[2J\\x1b[H"
        "\\x1b]0;owned\\x07\\x1b[31mJapan\\x0dUS \\u202eSU"
    )
    assert visible("a\nb\tc\u2028d\ufeff") == "a\nb\\x09c\\u2028d\\ufeff"
    assert one_line("HTTP 503\n  <b>busy</b>\t\x1b[2J") == "HTTP 503 <b>busy</b> \\x1b[2J"
    assert visible("RTX 4090 24GB 恒源云 ×2 €") == "RTX 4090 24GB 恒源云 ×2 €"


def test_a_table_cell_keeps_its_style_and_loses_its_escapes() -> None:
    buffer = io.StringIO()
    out = Console(file=buffer, width=300, force_terminal=True, color_system="standard")
    cell = display.Text(f"ok {CLEAR}", style="green")
    display.print_table(out, [display.Column("status"), display.Column("region")], [[cell, HOSTILE]])
    _drives_nothing(buffer.getvalue())
    assert "\x1b[32mok \\x1b[2J\\x1b[H" in buffer.getvalue()  # green, as the cell said


def _hostile_vastai(settings: Settings, folder: Path) -> None:
    """A warehouse of vastai's recorded offers, every region the hostile one."""
    folder.mkdir()
    feed = folder / "vastai.jsonl"
    rows = [
        json.loads(line)
        for line in (fixture_dir("vastai") / "expected.jsonl").read_text("utf-8").splitlines()
    ]
    feed.write_text("".join(json.dumps(row | {"region": HOSTILE}) + "\n" for row in rows), "utf-8")
    with connect.writer(migrated(settings.warehouse)) as con:
        load_crawl(con, offline_crawl("vastai", feed))


def _gpuplan(settings: Settings, *args: str, columns: int = 80) -> Result:
    return CliRunner(env={"COLUMNS": str(columns)}).invoke(
        app, ["--warehouse", str(settings.warehouse), *args]
    )


def test_plans_for_a_job_show_a_hostile_region_as_escapes(settings: Settings, tmp_path: Path) -> None:
    _hostile_vastai(settings, tmp_path / "crawl")
    job = ["plans", "--model", "7B", "--method", "lora", "--tokens", "1B", "--date", "2026-11-30"]
    for args, columns in (([*job, "--wide"], 80), (job, 200), (job, 80)):
        result = _gpuplan(settings, *args, columns=columns)
        assert result.exit_code == 0, result.output
        _drives_nothing(result.output)
    wide = _gpuplan(settings, *job, "--wide").stdout
    assert "\\x1b]8;;https://collector.example/" in wide and "\\u202eSU" in wide


def test_load_shows_a_crawls_hostile_error_as_escapes(settings: Settings, tmp_path: Path) -> None:
    summary = CrawlSummary(
        platform="datacrunch",
        status="failed",
        error=f"HTTP 503\n{FAKE_STATUS}",
        started_at=OBSERVED,
        finished_at=OBSERVED,
        items_yielded=0,
        offline=True,
    ).write(tmp_path / "datacrunch.summary.json")
    with connect.writer(migrated(settings.warehouse)):
        pass
    result = _gpuplan(settings, "load", str(summary.path))
    assert result.exit_code == 0, result.output
    _drives_nothing(result.output)
    assert "datacrunch: HTTP 503 \\x1b[2J\\x1b[Hdatacrunch: ok, 18 offers" in result.stdout
    assert not any(line.startswith("datacrunch: ok") for line in result.stdout.splitlines())


def test_the_refresh_board_shows_a_hostile_error_as_escapes() -> None:
    """The live board `gpuplan refresh` and `gpuplan crawl` draw on a terminal, then its record."""
    buffer = io.StringIO()
    out = Console(file=buffer, width=80, height=24, force_terminal=True, color_system=None)
    failed = CrawlSummary("datacrunch", "failed", FAKE_STATUS, OBSERVED, OBSERVED, 0, offline=False)
    with CrawlBoard(out, ["datacrunch", "vastai"], platform_tokens(), offline=False) as board:
        board.update("datacrunch", "crawling")
        board.update("datacrunch", "done", failed)
    # the live display returns the cursor with a carriage return of its own
    _drives_nothing(buffer.getvalue(), tuple(raw for raw in DRIVERS if raw != "\r"))
    assert "datacrunch: failed, 0 offers: \\x1b[2J\\x1b[Hdatacrunch: ok, 18 offers" in buffer.getvalue()


@pytest.mark.slow
def test_crawl_shows_a_platforms_hostile_error_message_as_escapes(tmp_path: Path) -> None:
    """DataCrunch's error envelope (`{"code": ..., "message": ...}`, the one its public client
    reads) quoting the fake status, replayed through the real crawl."""
    snapshot = tmp_path / "snapshot"
    shutil.copytree(fixture_dir("datacrunch"), snapshot, ignore=shutil.ignore_patterns("previous"))
    (snapshot / "error.json").write_text(json.dumps({"code": "unavailable", "message": FAKE_STATUS}), "utf-8")
    meta = json.loads((snapshot / SNAPSHOT_FILE).read_text("utf-8"))
    meta["exchanges"][0]["response"]["body_file"] = "error.json"
    (snapshot / SNAPSHOT_FILE).write_text(json.dumps(meta), "utf-8")

    result = CliRunner(env={"COLUMNS": "200"}).invoke(
        app, ["crawl", "datacrunch", "--replay", str(snapshot), "--out-dir", str(tmp_path / "out")]
    )
    assert result.exit_code == 1, result.output  # no offers
    _drives_nothing(result.output)
    assert "\\x1b[2J\\x1b[Hdatacrunch: ok, 18 offers" in result.output
    assert not any(line.startswith("datacrunch: ok") for line in result.output.splitlines())


def test_sql_errors_quoting_crawled_text_show_it_as_escapes(settings: Settings, tmp_path: Path) -> None:
    """DuckDB's error may quote a value (`error(region)`, a failed cast); color=True: click strips
    escape sequences only when it guesses no terminal, and a terminal gets them raw."""
    _hostile_vastai(settings, tmp_path / "crawl")
    query = "SELECT error(region) FROM offers LIMIT 1"
    runner = CliRunner(env={"COLUMNS": "80"})
    for args, stdin in (([query], None), ([], f"{query};\n")):
        result = runner.invoke(
            app, ["--warehouse", str(settings.warehouse), "sql", *args], input=stdin, color=True
        )
        assert result.exit_code == 1
        _drives_nothing(result.stderr)
        assert result.stderr.count("\n") == 1 and "\\x1b]8;;https://collector.example/" in result.stderr
