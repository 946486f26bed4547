"""`gpuplan doctor`: check the published warehouse, its previous snapshot and the writer file; repair.

Every block of each file is checked (`warehouse.engine.integrity.check_file`), so a damaged block shows
here even when no query has touched it yet. `--fix` makes the warehouse whole from the newest good
copy; `--restore` goes back to the previous snapshot. Nothing is deleted: a file replaced is kept
beside the warehouse as `<name>.replaced-<time>` (or `.damaged-<time>`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from config.settings import Settings
from config.shown_text import one_line

if TYPE_CHECKING:
    from warehouse.engine.integrity import FileCheck

# Exit status when a file is damaged (or nothing good is left): cron and scripts must see it.
EXIT_DAMAGED = 1
LOCK_TIMEOUT_S = 10.0  # a repair waits this long for a running writer before saying so


def register(app: typer.Typer) -> None:
    app.command(
        "doctor",
        help="Check every block of the published warehouse, its previous snapshot (.prev) and the "
        "writer file, and say which are good. --fix repairs from the newest good copy; --restore "
        "brings back the previous snapshot. Nothing is deleted.",
    )(doctor_command)


def doctor_command(
    ctx: typer.Context,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Repair: publish the writer file if it is good, else start it again from the published "
            "warehouse, else restore the previous snapshot into both.",
        ),
    ] = False,
    restore: Annotated[
        bool,
        typer.Option(
            "--restore",
            help="Go back to the previous snapshot (.prev): it becomes the published warehouse and the "
            "writer file; the current ones are kept beside them.",
        ),
    ] = False,
) -> None:
    from warehouse.engine import connect, layout

    settings: Settings = ctx.obj
    if fix and restore:
        raise typer.BadParameter("give at most one of --fix and --restore")
    warehouse = settings.warehouse
    if fix:  # first: the lock file may be one of them, and renaming a link writes nothing through it
        for aside in _links_set_aside(warehouse):
            typer.echo(one_line(aside))
    if fix or restore:
        with connect.locked(warehouse, LOCK_TIMEOUT_S):
            typer.echo(one_line(_restore(warehouse) if restore else _fix(warehouse)))
    checks = _checks(warehouse)
    for check in checks:
        typer.echo(one_line(_line(check)))  # a path, a link's target, DuckDB's words on a file
    links = layout.links(warehouse)
    for path, target in links:
        typer.echo(one_line(f"{path}: a symbolic link to {target}: gpuplan writes nothing through it"))
    verdict, healthy = _verdict(checks)
    if links:
        verdict, healthy = (
            "a warehouse file is a symbolic link, so every writer refuses to run: "
            "`gpuplan doctor --fix` sets the link aside (its target is not touched)",
            False,
        )
    typer.echo(verdict)
    if not healthy:
        raise typer.Exit(EXIT_DAMAGED)


def _links_set_aside(warehouse: Path) -> list[str]:
    """Rename each link where a warehouse file belongs (the link itself, never its target)."""
    from warehouse.engine import layout

    done = []
    for path, target in layout.links(warehouse):
        aside = layout.set_aside(path, "link")
        done.append(f"set the symbolic link {path} (to {target}) aside as {aside}; {target} is untouched")
    return done


def _files(warehouse: Path) -> tuple[Path, Path, Path]:
    from warehouse.engine import connect

    return warehouse, connect.previous_path(warehouse), connect.writer_path(warehouse)


def _checks(warehouse: Path) -> list[FileCheck]:
    from warehouse.engine.integrity import check_file

    return [check_file(path) for path in _files(warehouse)]


def _line(check: FileCheck) -> str:
    if not check.exists:
        return f"{check.path}: missing"
    if not check.good:
        return f"{check.path}: DAMAGED: {check.problem}"
    written = check.stamp.written_at if check.stamp and check.stamp.written_at else None
    when = f", written {written:%Y-%m-%d %H:%M} UTC" if written else ""
    generation = f"generation {check.generation}" if check.generation is not None else "no stamp"
    return f"{check.path}: good ({generation}{when}, {check.size_bytes / 1e6:.1f} MB, {check.blocks} blocks)"


def _verdict(checks: list[FileCheck]) -> tuple[str, bool]:
    """One line on what to do, and whether the warehouse is healthy: published and writer good, and
    a good previous snapshot to go back to (none is kept before the second publish)."""
    published, previous, private = checks
    if not published.exists and not private.exists:
        return "no warehouse here yet: run `gpuplan refresh`", previous.good or not previous.exists
    first_publish = not previous.exists and (published.generation or 0) <= 1
    if published.good and (private.good or not private.exists) and not (previous.good or first_publish):
        state = "damaged" if previous.exists else "missing"
        return (
            f"no copy to go back to: the published warehouse is good, but its previous snapshot is "
            f"{state}; `gpuplan doctor --fix` keeps one",
            False,
        )
    if published.good and (private.good or not private.exists):
        behind = (
            private.good
            and published.generation is not None
            and private.generation is not None
            and private.generation > published.generation
        )
        note = " (the writer file holds work not published yet: the next run publishes it)" if behind else ""
        return f"healthy: the published warehouse is good{note}", True
    good = [check for check in checks if check.good]
    if not good:
        return "no good copy of the warehouse is left: the files are kept as they are", False
    best = max(good, key=lambda check: check.generation or 0)
    return f"repairable from {best.path}: run `gpuplan doctor --fix`", False


def _fix(warehouse: Path) -> str:
    from warehouse.engine import connect, publishing

    published, previous, private = _checks(warehouse)
    if private.good and (not published.good or (private.generation or 0) >= (published.generation or 0)):
        note = ""
        if published.exists and not published.good:
            aside = publishing.set_aside(published.path, "damaged", keep=True)
            note = f"; the damaged one is kept as {aside}"
        publishing.publish(warehouse, private.generation or 0, keep_previous=published.good)
        return f"published the writer file {private.path} (generation {private.generation}){note}"
    if published.good:
        if private.exists:
            aside = publishing.set_aside(private.path, "damaged")
            note = f"; the damaged writer file is kept as {aside}"
        else:
            note = ""
        publishing.seed_writer(warehouse)
        return f"the writer file starts again from {published.path} (generation {published.generation}){note}"
    if previous.good:
        publishing.restore(previous.path, warehouse)
        return f"restored the previous snapshot {previous.path} (generation {previous.generation})"
    raise connect.WarehouseDamagedError("no good copy of the warehouse to repair from; the files are kept")


def _restore(warehouse: Path) -> str:
    from warehouse.engine import publishing

    previous = publishing.previous_path(warehouse)
    publishing.restore(previous, warehouse)
    return f"restored the previous snapshot {previous}: it is now the published warehouse and the writer file"
