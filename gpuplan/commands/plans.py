"""`gpuplan plans`: the day's cheapest plans, or with --tokens the plans for one job of yours.

Without --tokens: the daily model-size tables from the published warehouse (no Dagster needed).
With --tokens: your job planned on the fly from each platform's latest good crawl, priced in full by
each platform's billing (`warehouse.job_plans`); nothing is written and no refresh is needed.
What it prints is `gpuplan.plan_tables`'s (tables that fit the terminal, and the JSON).
A job's plans come as plain rows: that path imports no pandas (half its process's start); the
daily tables' frames import it where they are built.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, NoReturn, TypeVar
from zoneinfo import ZoneInfo

import typer

from config import model_files
from config.settings import Settings
from config.shown_text import one_line
from gpuplan import display
from gpuplan.assumed import print_assumptions
from gpuplan.options import METHOD_HELP, daily_model, training_method
from gpuplan.plan_tables import (
    Currency,
    job_answer,
    job_heading,
    local_text,
    plain_records,
    plans_json,
    print_answer,
    print_job_plans,
    print_plans,
)
from scrapers import registry
from sizing import assumptions, gpu_names
from sizing.jobs import (
    DURATION_HOURS,
    MAX_EPOCHS,
    MAX_WITHIN_DAYS,
    Job,
    job_sizing,
    parse_duration,
    parse_tokens,
)
from sizing.planner import MAX_GPUS
from sizing.setup import MAX_COUNT, MAX_SEQ_LEN
from warehouse import daily_plans, job_plans
from warehouse.engine import connect

T = TypeVar("T")

# Job plans a table shows (--all: every one): the best ten keep the answer on an 80x24 screen.
JOB_ROWS = 10


def register(app: typer.Typer) -> None:
    app.command(
        "plans",
        help="The cheapest way to train each model size with each method on a day (lowest rent for a "
        "month, lowest rent per billion tokens at full use, days and total as billed for a default "
        "run), or with --tokens the "
        "plans for your own job from the latest offers: where, how many GPUs, when it finishes, what it "
        "costs in total.",
    )(plans_command)


def plans_command(
    ctx: typer.Context,
    day: Annotated[
        dt.datetime | None,
        typer.Option(
            "--date", formats=["%Y-%m-%d"], help="Day of the plans (YYYY-MM-DD); default: the latest."
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Model size, preset or config.json, e.g. 70B or qwen2.5-14b."),
    ] = None,
    method: Annotated[
        str | None, typer.Option("--method", callback=training_method, metavar="<method>", help=METHOD_HELP)
    ] = None,
    gpu: Annotated[
        list[str] | None,
        typer.Option(
            "--gpu", help="Only plans on this GPU, as people write it: H100, 4090, 910B (repeatable)."
        ),
    ] = None,
    tokens: Annotated[
        str | None, typer.Option("--tokens", help="Plan your job: tokens of one epoch, e.g. 500M, 2B, 1.5e9.")
    ] = None,
    epochs: Annotated[
        float | None,
        typer.Option("--epochs", min=0, max=MAX_EPOCHS, help="Epochs over the tokens (default 1)."),
    ] = None,
    within: Annotated[
        str | None,
        typer.Option("--within", help="Deadline: 36h, 3d, 2w, or a date (YYYY-MM-DD, by its end)."),
    ] = None,
    seq_len: Annotated[
        int | None, typer.Option("--seq-len", min=1, max=MAX_SEQ_LEN, help="Tokens per sequence (sizing).")
    ] = None,
    batch: Annotated[
        int | None, typer.Option("--batch", min=1, max=MAX_COUNT, help="Micro-batch (sequences) per GPU.")
    ] = None,
    max_gpus: Annotated[
        int | None, typer.Option("--max-gpus", min=1, max=MAX_GPUS, help="The most GPUs a plan may use.")
    ] = None,
    framework: Annotated[
        str | None,
        typer.Option(
            "--framework",
            "-f",
            help="Training framework whose defaults the sizing takes (default: llamafactory).",
        ),
    ] = None,
    platform: Annotated[
        list[str] | None, typer.Option("--platform", "-p", help="Only this platform's offers (repeatable).")
    ] = None,
    currency: Annotated[
        Currency, typer.Option("--currency", help="Currency of the job table's prices and totals.")
    ] = Currency.USD,
    fastest: Annotated[bool, typer.Option("--fastest", help="Rank job plans by finish time.")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="Show every column, whatever the width.")] = False,
    show_all: Annotated[
        bool, typer.Option("--all", help=f"Every job plan (default: the best {JOB_ROWS}).")
    ] = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Every sizing assumption with its source, not one line.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON records instead of a table.")] = False,
) -> None:
    settings: Settings = ctx.obj
    job_options: dict[str, object] = {
        "--epochs": epochs,
        "--within": within,
        "--seq-len": seq_len,
        "--batch": batch,
    }
    job_options |= {"--max-gpus": max_gpus, "--platform": platform, "--fastest": fastest or None}
    job_options |= {"--all": show_all or None, "--explain": explain or None}
    try:
        gpus = [_resolve_gpu(name) for name in gpu or []]
        platforms = [registry.platform(name) for name in platform or []]
        if tokens is None:
            given = [name for name, value in job_options.items() if value is not None]
            if given:
                raise ValueError(f"{', '.join(given)} plan a job: give --tokens too")
            daily = daily_model(settings, model) if model is not None else None
            _daily(settings, day.date() if day else None, daily, method, gpus, wide, as_json)
            return
        if model is None or method is None:
            raise ValueError("--tokens plans a job: give --model and --method too")
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        shape = model_files.model(model)
        job = Job(
            name="ad hoc",
            model=model,
            shape=None if isinstance(shape, str) else shape,
            method=method,
            tokens=_option("--tokens", parse_tokens, tokens),
            epochs=1.0 if epochs is None else epochs,
            within_days=None
            if within is None
            else _option("--within", _within_days, within, now, settings.schedule_timezone),
            seq_len=seq_len,
            batch=batch,
            max_gpus=max_gpus,
            platforms=tuple(platforms),
            gpus=tuple(gpus),
            framework=framework,
        )
        shown = JobShown(currency, fastest, wide, show_all, explain, as_json)
        _job(settings, job, day.date() if day else None, now, shown)
    except (
        ValueError,
        registry.UnknownPlatform,
        connect.NoWarehouseError,
        connect.OutdatedWarehouseError,
    ) as exc:
        _fail(str(exc))


def _option(name: str, read: Callable[..., T], *given: Any) -> T:
    """`read(*given)`, its ValueError said as one about option `name` (`--tokens 1e30`
    was an error of DuckDB's, naming nothing the user typed)."""
    try:
        return read(*given)
    except ValueError as exc:
        message, field = str(exc), name.removeprefix("--").replace("-", "_")
        if message.startswith(f"{field} "):  # "tokens must be ..." -> "--tokens must be ..."
            message = name + message.removeprefix(field)
        raise ValueError(message if message.startswith(name) else f"{name}: {message}") from None


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {one_line(message)}", err=True)
    raise typer.Exit(1)


def _resolve_gpu(name: str) -> str:
    match = gpu_names.resolve(name)
    if match.note:
        typer.echo(one_line(match.note), err=True)
    return match.gpu_model


def _within_days(text: str, now: dt.datetime, timezone: str) -> float:
    """--within as days from `now` (UTC): a duration, or a date meaning the end of that day in `timezone`."""
    try:
        date = dt.date.fromisoformat(text)
    except ValueError:
        date = None
    if date is None:
        try:
            return parse_duration(text) / dt.timedelta(days=1)
        except ValueError:
            if text.strip()[-1:].lower() in DURATION_HOURS:  # a duration, out of bounds: say so
                raise
            raise ValueError(f"--within takes 36h, 3d, 2w or a date (YYYY-MM-DD), got {text!r}") from None
    if (date - now.date()).days > MAX_WITHIN_DAYS:  # before the date arithmetic overflows (9999-12-31)
        raise ValueError(f"--within must be at most {MAX_WITHIN_DAYS:g} days from now, got {text}")
    end = dt.datetime.combine(date + dt.timedelta(days=1), dt.time(), ZoneInfo(timezone))
    deadline = end.astimezone(dt.UTC).replace(tzinfo=None)
    if deadline <= now:
        raise ValueError(f"the deadline {text} ({timezone}) is in the past")
    return (deadline - now) / dt.timedelta(days=1)


# --- the daily tables ------------------------------------------------------------------------------


def _daily(
    settings: Settings,
    day: dt.date | None,
    model: str | None,
    method: str | None,
    gpus: list[str],
    wide: bool,
    as_json: bool,
) -> None:
    import pandas as pd  # the daily tables are frames

    with connect.reader(settings.warehouse) as con:
        if gpus:
            frame = pd.concat(
                [daily_plans.plans_for_gpu(con, g, day, model, method) for g in gpus], ignore_index=True
            )
        else:
            frame = daily_plans.plans_for_date(con, day, model, method)
        excluded = daily_plans.excluded_offers(con, frame["plan_date"].iloc[0]) if len(frame) else None
    if frame.empty:
        wanted = " ".join(filter(None, [model, method, *gpus])) or "any model"
        when = day.isoformat() if day else "any day"
        _fail(f"no plans for {wanted} on {when} in {settings.warehouse}; run `gpuplan refresh`")
    if as_json:
        typer.echo(plans_json(frame))
        return
    print_plans(display.console(), frame, excluded, wide=wide)


@dataclass(frozen=True)
class JobShown:
    """How a job's plans are shown: the options that rank and print them."""

    currency: Currency
    fastest: bool
    wide: bool
    show_all: bool
    explain: bool
    as_json: bool


def _job(settings: Settings, job: Job, day: dt.date | None, now: dt.datetime, shown: JobShown) -> None:
    with connect.reader(settings.warehouse) as con:
        answer = job_plans.plan_job(
            con,
            job,
            start_at=now,
            plan_date=day,
            fastest=shown.fastest,
            stale_hours=settings.stale_hours,
            max_nodes=settings.max_nodes,
        )
    zone = ZoneInfo(settings.schedule_timezone)
    if answer.reason is not None:
        # a fastest plan past a century has no finish (warehouse.job_plans.MAX_TRAIN_DAYS): its reason says so
        if answer.fastest is not None and job.within_days is not None and answer.fastest["finish"]:
            best, deadline = answer.fastest, now + dt.timedelta(days=job.within_days)
            _fail(
                f"no plan finishes by {local_text(deadline, zone)}: the fastest is "
                f"{job_plans.plan_text(best)}, {job_plans.duration_text(best['train_days'])}, finishing "
                f"{local_text(best['finish'], zone)} ({settings.schedule_timezone})"
            )
        _fail(answer.reason)
    sizing = job_sizing(job)
    lines = assumptions.describe(sizing) + job_plans.cluster_assumptions(answer.plans)
    if shown.as_json:
        records = plain_records(answer.plans)
        for record in records:
            record["finish"] = f"{record['finish']}Z" if record["finish"] else None
            record["assumptions"] = lines
        typer.echo(json.dumps(records, ensure_ascii=False, indent=1))
        return
    console = display.console()
    console.print(job_heading(job, day, now, zone), highlight=False)
    limit = None if shown.show_all else JOB_ROWS
    print_job_plans(console, answer.plans, shown.currency, zone, wide=shown.wide, limit=limit)
    print_assumptions(console, sizing, lines, explain=shown.explain)
    print_answer(console, job_answer(answer.plans, shown.currency, zone))
