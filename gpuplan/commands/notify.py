"""`gpuplan notify`: push the day's news to the channels of GPUPLAN_NOTIFY (chat bots, webhooks)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer

from config.days import today
from config.settings import Settings
from config.shown_text import one_line, visible

EXIT_PUSH_FAILED = 1  # a push failed: recorded and retried at the next run, but scripts must see it


def register(app: typer.Typer) -> None:
    app.command(
        "notify",
        help="Push the day's fired watches, plan changes and failed crawls to the chat bots and webhooks "
        "of GPUPLAN_NOTIFY (each event once per channel; failures retried at the next push). --test sends "
        "one test message to every channel; --dry-run prints what would be sent.",
    )(notify_command)


def notify_command(
    ctx: typer.Context,
    test: Annotated[bool, typer.Option("--test", help="Send one test message to every channel.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would be sent to each channel; send nothing.")
    ] = False,
    day: Annotated[
        dt.datetime | None,
        typer.Option(
            "--date", formats=["%Y-%m-%d"], help="The plan day (default: today in GPUPLAN_SCHEDULE_TZ)."
        ),
    ] = None,
) -> None:
    from config.notify_file import read_channels
    from config.watches_file import read_watches
    from digest.push.delivery import push_day, send_test_messages
    from scrapers.registry import platforms

    settings: Settings = ctx.obj
    if settings.notify_file is None:
        raise typer.BadParameter("set GPUPLAN_NOTIFY to a YAML file of channels (README, Push channels)")
    channels = read_channels(settings.notify_file)
    chosen = day.date() if day else today(settings.schedule_timezone)
    if test:
        results = send_test_messages(channels, chosen)
    else:
        results = push_day(
            settings.warehouse,
            channels,
            chosen,
            price_move_pct=settings.price_move_pct,
            watches=read_watches(settings.watches_file, platforms()),
            dry_run=dry_run,
        )
        if not results:
            typer.echo(f"{chosen}: nothing to push (no plans that day, or no news the channels take)")
    for result in results:
        where = f"{result.channel} ({result.kind}, {result.host})"
        state = {"already": "sent before, not again", "dry-run": "would send:"}.get(
            result.status, result.status
        )
        typer.echo(
            one_line(f"{where} {result.event_key}: {state}" + (f": {result.error}" if result.error else ""))
        )
        if result.status == "dry-run":
            typer.echo("    " + visible(result.text).replace("\n", "\n    "))
    if any(result.status == "failed" for result in results):
        raise typer.Exit(EXIT_PUSH_FAILED)
