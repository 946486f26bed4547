"""`gpuplan load SUMMARY.json...` loads crawl files by hand and publishes the warehouse."""

from __future__ import annotations

from pathlib import Path

from synthetic_crawls import WriteCrawl, synthetic_offer
from typer.testing import CliRunner, Result

from config.settings import Settings
from gpuplan.cli import app
from warehouse.engine import connect


def _load(settings: Settings, *paths: Path) -> Result:
    return CliRunner(env={"COLUMNS": "200"}).invoke(
        app, ["--warehouse", str(settings.warehouse), "load", *map(str, paths)]
    )


def test_load_then_load_again(settings: Settings, write_crawl: WriteCrawl) -> None:
    summary = write_crawl([synthetic_offer(n) for n in range(4)] + ['{"broken'])
    first = _load(settings, summary)
    assert first.exit_code == 0, first.output
    assert "synthcloud" in first.stdout and "partial" in first.stdout and "1 item(s) rejected" in first.stdout
    again = _load(settings, summary)
    assert again.exit_code == 0 and "already loaded" in again.stdout
    with connect.reader(settings.warehouse) as con:  # published
        assert con.execute("SELECT count(*) FROM offers").fetchall() == [(4,)]


def test_a_bad_summary_fails_the_command_but_not_the_others(
    settings: Settings, write_crawl: WriteCrawl, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.summary.json"
    bad.write_text("{")
    good = write_crawl([synthetic_offer(1)])
    result = _load(settings, bad, good)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: cannot read crawl summary") and result.stderr.count("\n") == 1
    with connect.reader(settings.warehouse) as con:
        assert con.execute("SELECT count(*) FROM offers").fetchall() == [(1,)]
