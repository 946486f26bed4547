"""The `gpuplan` command: a thin layer over the functions the Dagster assets call.

Commands live one module each in `gpuplan/commands/`; every module there exposes
`register(app)`, and this file finds them, so adding a command touches no list.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from gpuplan import __version__, commands
from gpuplan.settings import Settings

app = typer.Typer(
    name="gpuplan",
    help="The cheapest way to train a model of size X with method Y, from live GPU rental quotes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpuplan {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    warehouse: Annotated[
        Path | None,
        typer.Option("--warehouse", help="DuckDB warehouse file (default: $GPUPLAN_WAREHOUSE)."),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """gpuplan: GPU rental prices, training sizing and daily cheapest plans."""
    settings = Settings.from_env()
    if warehouse is not None:
        settings = settings.with_warehouse(warehouse.expanduser())
    ctx.obj = settings


for _module in pkgutil.iter_modules(commands.__path__):
    importlib.import_module(f"{commands.__name__}.{_module.name}").register(app)


def run() -> None:
    """Console entry point: user errors print one line, never a traceback."""
    try:
        app(standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("GPUPLAN_DEBUG"):
            raise
        # One line whatever the terminal width: cron mail and CI logs must not wrap paths.
        message = " ".join(str(exc).split())
        typer.echo(f"error: {message}", err=True)
        sys.exit(1)
