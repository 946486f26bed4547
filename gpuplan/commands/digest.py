"""`gpuplan digest`: preview the day's email digest as an HTML file, print it as JSON, or send it."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from config.days import today
from config.settings import Settings
from config.shown_text import one_line, visible
from config.watches_file import NO_WATCHES, WatchList, read_watches
from digest.catalogue import LANGUAGES, UnknownLanguage, words
from digest.content import build_digest
from digest.export import digest_json
from digest.render import embed_images, render
from digest.sending import SendOptions, send_pending
from warehouse.engine import connect

# Exit status when a send failed or a day had no plans: the failure is recorded and retried,
# but a script or cron job calling `--send` must see it.
EXIT_SEND_FAILED = 1


def register(app: typer.Typer) -> None:
    app.command(
        "digest",
        help="Build the daily email digest of plan changes and watches: --preview FILE.html writes it, "
        "--json prints it for programs, --send mails it (once per day; failed days are retried on the "
        "next --send).",
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
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print the digest's content as one JSON object and send nothing."),
    ] = False,
    send: Annotated[
        bool,
        typer.Option(
            "--send", help="Send the digest with the GPUPLAN_SMTP_* settings, plus earlier failed days."
        ),
    ] = False,
    lang: Annotated[
        str | None,
        typer.Option(
            "--lang", help=f"Language of the digest: {' or '.join(LANGUAGES)} (default: GPUPLAN_DIGEST_LANG)."
        ),
    ] = None,
) -> None:
    settings: Settings = ctx.obj
    if [preview is not None, as_json, send].count(True) != 1:
        raise typer.BadParameter("give exactly one of --preview FILE.html, --json or --send")
    language = (lang or settings.digest_lang).strip().lower()
    try:
        words(language)
    except UnknownLanguage as exc:
        raise typer.BadParameter(str(exc), param_hint="--lang") from None
    digest_date = day.date() if day else today(settings.schedule_timezone)
    watches = _watches(settings.watches_file)
    if send:
        _send(settings, digest_date, language, watches)
        return
    if watches.error:  # asked for by a person: say it, in one line, and stop (--send mails it)
        typer.echo(f"error: {one_line(watches.error)}", err=True)
        raise typer.Exit(1)
    with connect.reader(settings.warehouse) as con:
        digest = build_digest(con, digest_date, price_move_pct=settings.price_move_pct, watches=watches)
    if not digest.plans:
        raise typer.BadParameter(
            f"no cheapest plans for {digest_date}: run the daily plans first", param_hint="--date"
        )
    if preview is None:  # --json
        typer.echo(digest_json(digest, language))
        return
    rendered = render(digest, language)
    preview.write_text(embed_images(rendered), encoding="utf-8")
    typer.echo(f"{one_line(rendered.subject)}\npreview: {visible(str(preview))}")


def _watches(path: Path | None) -> WatchList:
    if path is None:
        return NO_WATCHES
    from scrapers.registry import platforms  # Scrapy's spider loader: only with a watches file

    return read_watches(path, platforms())


def _send(settings: Settings, digest_date: dt.date, lang: str, watches: WatchList) -> None:
    if watches.error:
        typer.echo(f"warning: {one_line(watches.error)} (the digest says so)", err=True)
    options = SendOptions(settings.smtp, settings.price_move_pct, settings.digest_skip_empty)
    results = send_pending(settings.warehouse, digest_date, replace(options, lang=lang, watches=watches))
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
        # the refusals and errors are the mail server's words
        typer.echo(one_line(line), err=result.status in ("failed", "no_plans"))
    if any(result.status in ("failed", "no_plans") for result in results):
        raise typer.Exit(EXIT_SEND_FAILED)
