"""`gpuplan digest`: preview the day's email digest as an HTML file, or send it (once per day)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated
from zoneinfo import ZoneInfo

import typer

from digest.content import build_digest
from digest.render import embed_images, render
from digest.sending import SendOptions, send_pending
from gpuplan.settings import Settings
from warehouse import connect

# Exit status when a send failed or a day had no plans: the failure is recorded and retried,
# but a script or cron job calling `--send` must see it.
EXIT_SEND_FAILED = 1


def register(app: typer.Typer) -> None:
    app.command(
        "digest",
        help="Build the daily email digest of plan changes: --preview FILE.html writes it, "
        "--send mails it (once per day; failed days are retried on the next --send).",
    )(digest_command)


def digest_command(
    ctx: typer.Context,
    day: Annotated[
        dt.datetime | None,
        typer.Option(
            "--date",
            formats=["%Y-%m-%d"],
            help="Plan date to report (default: today in GPUPLAN_SCHEDULE_TZ, the daily run's day).",
        ),
    ] = None,
    preview: Annotated[
        Path | None,
        typer.Option("--preview", help="Write the HTML mail to this file (chart embedded) and send nothing."),
    ] = None,
    send: Annotated[
        bool,
        typer.Option(
            "--send", help="Send the digest with the GPUPLAN_SMTP_* settings, plus earlier failed days."
        ),
    ] = False,
) -> None:
    settings: Settings = ctx.obj
    if (preview is not None) == send:
        raise typer.BadParameter("give exactly one of --preview FILE.html or --send")
    digest_date = day.date() if day else dt.datetime.now(ZoneInfo(settings.schedule_timezone)).date()
    if preview is not None:
        _preview(settings, digest_date, preview)
    else:
        _send(settings, digest_date)


def _preview(settings: Settings, digest_date: dt.date, path: Path) -> None:
    with connect.reader(settings.warehouse) as con:
        digest = build_digest(con, digest_date, price_move_pct=settings.price_move_pct)
    if not digest.plans:
        raise typer.BadParameter(
            f"no cheapest plans for {digest_date}: run the daily plans first", param_hint="--date"
        )
    rendered = render(digest)
    path.write_text(embed_images(rendered), encoding="utf-8")
    typer.echo(f"{rendered.subject}\npreview: {path}")


def _send(settings: Settings, digest_date: dt.date) -> None:
    with connect.writer(settings.warehouse) as con:
        options = SendOptions(settings.smtp, settings.price_move_pct, settings.digest_skip_empty)
        results = send_pending(con, digest_date, options)
    for result in results:
        if result.status == "sent" and result.attempted:
            line = f"{result.digest_date}: sent to {', '.join(result.recipients)}"
            if result.refused:
                line += f" (refused: {'; '.join(result.refused)})"
        elif result.status in ("sent", "skipped") and not result.attempted:
            line = f"{result.digest_date}: already {result.status}, not sent again"
        elif result.status == "skipped":
            line = f"{result.digest_date}: no changes, not sent (GPUPLAN_DIGEST_SKIP_EMPTY)"
        else:
            line = f"{result.digest_date}: {result.status}: {result.error}"
        typer.echo(line, err=result.status in ("failed", "no_plans"))
    if any(result.status in ("failed", "no_plans") for result in results):
        raise typer.Exit(EXIT_SEND_FAILED)
