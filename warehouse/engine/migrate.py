"""The warehouse's schema: numbered migrations for tables, columns and data; current definitions for
views and macros (Flyway's versioned and repeatable migrations).

Public API (stable):
    migrate(con, folder=None, definitions=None) -> list[str]
        apply the missing migrations, in order, then the definitions when any of them (or a migration)
        changed; returns the file names applied (empty: no-op)
    apply_definitions(con, folder=None, *, force=False) -> list[str]  the definitions step alone
    available(folder=None) -> list[Migration]     the migrations (default: warehouse/migrations/)
    current(folder=None) -> list[Definition]      the definitions (default: warehouse/definitions/)
    fingerprint(folder=None, definitions=None) -> str  one hash of every migration and definition
    pending(con) -> list[str]  what this code has that the warehouse on `con` lacks (read only)
    MigrationError             a migration or definition that cannot be applied safely

Migrations (`warehouse/migrations/NNN_name.sql`) hold tables, columns and data. NNN orders them and
is the key in `schema_migrations`. Each runs in its own transaction together with its record, so a
failure leaves the warehouse at the previous version. A migration that can delete data (DROP
TABLE/SCHEMA, ALTER TABLE ... DROP, DELETE, TRUNCATE, CREATE OR REPLACE TABLE) must say so on a line
`-- drops data: <why>`; otherwise it is refused before anything runs, so data is never dropped
silently. A migration is never edited once applied: the sha256 recorded with it must match the
file, or `migrate` refuses to run (a change goes in a new migration, which every warehouse then
applies). A migration uses no view or macro: the definitions are applied after the migrations, so
on a fresh warehouse none exists yet when a migration after 090 runs.

Definitions (`warehouse/definitions/NN_name.sql`, see its README.md) hold every view and macro, one
concept per file, as it is now: only `CREATE OR REPLACE VIEW|MACRO` statements. They are applied in
name order, all together in one transaction, after the migrations, whenever a migration was
applied or any definition differs from what `schema_definitions` records. As with Flyway's
repeatable migrations, an object whose file is deleted is dropped by a migration (`DROP VIEW IF
EXISTS name`): a warehouse holding a view or macro that no definition makes is refused, so the
definitions are always all there is. A warehouse that holds migrations this code lacks (written by a
newer gpuplan) keeps its definitions.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import duckdb

_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")
_DEFINITION_NAME = re.compile(r"^\d{2}_[a-z0-9_]+\.sql$")
_DROPS_DATA = re.compile(
    r"\b(DROP\s+TABLE|DROP\s+SCHEMA|ALTER\s+TABLE\s+\S+\s+DROP|DELETE\s+FROM|TRUNCATE|CREATE\s+OR\s+REPLACE\s+TABLE)\b",
    re.IGNORECASE,
)
_DECLARED = re.compile(r"^--\s*drops data:\s*\S", re.IGNORECASE | re.MULTILINE)
_CREATES = re.compile(r"\bCREATE\b", re.IGNORECASE)
_DEFINES = re.compile(r"\bCREATE\s+OR\s+REPLACE\s+(?:VIEW|MACRO)\s+([a-z_][a-z0-9_]*)\b", re.IGNORECASE)
_WRITES = re.compile(r"\b(INSERT|UPDATE|DELETE|DROP|ALTER|TRUNCATE|COPY|ATTACH)\b", re.IGNORECASE)

_CREATE_LEDGER = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version     INTEGER PRIMARY KEY,
    name        VARCHAR NOT NULL,
    sha256      VARCHAR NOT NULL,
    applied_at  TIMESTAMP NOT NULL DEFAULT (now() AT TIME ZONE 'UTC')
)
"""
# One row per definition file as last applied, with the views and macros it made.
_CREATE_DEFINITIONS_LEDGER = """
CREATE TABLE IF NOT EXISTS schema_definitions (
    name        VARCHAR PRIMARY KEY,
    sha256      VARCHAR NOT NULL,
    objects     VARCHAR[] NOT NULL,
    applied_at  TIMESTAMP NOT NULL DEFAULT (now() AT TIME ZONE 'UTC')
)
"""
# Every view and macro of the warehouse's own schema.
_OBJECTS = """
SELECT view_name FROM duckdb_views()
WHERE NOT internal AND database_name = current_database() AND schema_name = 'main'
UNION
SELECT function_name FROM duckdb_functions()
WHERE NOT internal AND function_type IN ('macro', 'table_macro')
  AND database_name = current_database() AND schema_name = 'main'
"""


class MigrationError(RuntimeError):
    """A migration or definition file is malformed, would drop data silently, or failed to apply."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str  # file name, e.g. "001_core.sql"
    sql: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Definition:
    name: str  # file name, e.g. "40_judged_offers.sql"
    sql: str
    objects: tuple[str, ...]  # the views and macros it creates, in order

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


def _without_comments(sql: str) -> str:
    return "\n".join(line.split("--", 1)[0] for line in sql.splitlines())


def _package_folder(name: str) -> Traversable:
    return resources.files("warehouse").joinpath(name)


def _listing(folder: Traversable) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """A folder on disk and each `.sql` file's name and sha256: what `available` and `current` read
    is the same while this is. None for a folder that is not a plain directory (a zip import)."""
    if not isinstance(folder, Path):
        return None
    files = []
    for path in sorted(folder.glob("*.sql")):
        files.append((path.name, hashlib.sha256(path.read_bytes()).hexdigest()))
    return str(folder), tuple(files)


# Every writer open compares the warehouse with `fingerprint()`, which parsed and checked the ~100
# files again each time (~4 ms; reading and hashing them is ~0.5 ms). Keyed by their content, so an
# edited, added or removed file is read anew; a folder that fails its checks is never kept (the
# error is raised each time).
@functools.lru_cache(maxsize=8)
def _migrations_in(listing: tuple[str, tuple[tuple[str, str], ...]]) -> tuple[Migration, ...]:
    return tuple(_read_migrations(Path(listing[0])))


@functools.lru_cache(maxsize=8)
def _definitions_in(listing: tuple[str, tuple[tuple[str, str], ...]]) -> tuple[Definition, ...]:
    return tuple(_read_definitions(Path(listing[0])))


def available(folder: Traversable | None = None) -> list[Migration]:
    """The migrations in `folder` (default: the package's), in version order."""
    folder = folder or _package_folder("migrations")
    listing = _listing(folder)
    return list(_migrations_in(listing)) if listing is not None else _read_migrations(folder)


def _read_migrations(folder: Traversable) -> list[Migration]:
    found: dict[int, Migration] = {}
    for entry in folder.iterdir():
        if not entry.name.endswith(".sql"):
            continue
        match = _NAME.match(entry.name)
        if match is None:
            raise MigrationError(f"migration file {entry.name!r} is not named NNN_name.sql")
        version = int(match.group(1))
        if version in found:
            raise MigrationError(
                f"two migrations numbered {version:03d}: {found[version].name}, {entry.name}"
            )
        sql = entry.read_text(encoding="utf-8")
        if _DROPS_DATA.search(_without_comments(sql)) and not _DECLARED.search(sql):
            raise MigrationError(
                f"migration {entry.name} deletes data without a '-- drops data: <why>' line; "
                "refusing to run it"
            )
        found[version] = Migration(version, entry.name, sql)
    return [found[version] for version in sorted(found)]


def current(folder: Traversable | None = None) -> list[Definition]:
    """The definitions in `folder` (default: the package's), in name order (the order they apply in).

    Each file holds only CREATE OR REPLACE VIEW / MACRO statements: no table, no data.
    """
    folder = folder or _package_folder("definitions")
    listing = _listing(folder)
    return list(_definitions_in(listing)) if listing is not None else _read_definitions(folder)


def _read_definitions(folder: Traversable) -> list[Definition]:
    found: list[Definition] = []
    for entry in sorted(folder.iterdir(), key=lambda entry: entry.name):
        if not entry.name.endswith(".sql"):
            continue
        if _DEFINITION_NAME.match(entry.name) is None:
            raise MigrationError(f"definition file {entry.name!r} is not named NN_name.sql")
        sql = entry.read_text(encoding="utf-8")
        code = _without_comments(sql)
        objects = tuple(name.lower() for name in _DEFINES.findall(code))
        if not objects or len(_CREATES.findall(code)) != len(objects) or _WRITES.search(code):
            raise MigrationError(
                f"definition {entry.name} must hold only CREATE OR REPLACE VIEW / MACRO statements "
                "(tables, columns and data belong in a migration)"
            )
        found.append(Definition(entry.name, sql, objects))
    made: dict[str, str] = {}
    for definition in found:
        for name in definition.objects:
            if name in made:
                raise MigrationError(f"{name} is defined twice: in {made[name]} and {definition.name}")
            made[name] = definition.name
    return found


def fingerprint(folder: Traversable | None = None, definitions: Traversable | None = None) -> str:
    """One sha256 over the name and checksum of every migration and definition: changes when any
    file does. `definitions` defaults to the package's when `folder` does (see `migrate`)."""
    lines = "".join(f"{m.version} {m.name} {m.sha256}\n" for m in available(folder))
    if definitions is not None or folder is None:
        lines += "".join(f"definition {d.name} {d.sha256}\n" for d in current(definitions))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def migrate(
    con: duckdb.DuckDBPyConnection,
    folder: Traversable | None = None,
    definitions: Traversable | None = None,
) -> list[str]:
    """Apply every migration (of `folder`, default the package's) not yet recorded, then the
    definitions (of `definitions`) when they are not current; a second call is a no-op.

    `definitions` defaults to the package's with the package's migrations, and to none with another
    migrations folder (the package's views read the package's tables). Returns the file names
    applied by this call, in order: migrations, then every definition when they were re-applied.
    Raises MigrationError, before applying anything, when an applied migration's file no longer
    matches the checksum recorded with it.
    """
    applied = _apply_migrations(con, folder)
    if definitions is not None or folder is None:
        applied += apply_definitions(con, definitions, force=bool(applied))
    return applied


def _apply_migrations(con: duckdb.DuckDBPyConnection, folder: Traversable | None) -> list[str]:
    con.execute(_CREATE_LEDGER)
    done = dict(con.execute("SELECT version, sha256 FROM schema_migrations").fetchall())
    migrations = available(folder)
    changed = [m for m in migrations if m.version in done and done[m.version] != m.sha256]
    if changed:
        first = changed[0]
        raise MigrationError(
            f"migration {first.name} was changed after this warehouse applied it (recorded sha256 "
            f"{done[first.version][:12]}..., the file now {first.sha256[:12]}...): an applied migration is "
            "never edited; restore the file and put the change in a new migration"
        )
    applied: list[str] = []
    for migration in migrations:
        if migration.version in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(migration.sql)
            con.execute(
                "INSERT INTO schema_migrations (version, name, sha256) VALUES ($version, $name, $sha256)",
                {"version": migration.version, "name": migration.name, "sha256": migration.sha256},
            )
            con.execute("COMMIT")
        except duckdb.Error as exc:
            con.execute("ROLLBACK")
            raise MigrationError(f"migration {migration.name} failed: {exc}") from exc
        applied.append(migration.name)
    return applied


def _newer_migrations(con: duckdb.DuckDBPyConnection) -> bool:
    """The warehouse records migrations this code does not have: a newer gpuplan wrote it."""
    known = {m.version for m in available()}
    done = {row[0] for row in con.execute("SELECT version FROM schema_migrations").fetchall()}
    return bool(done - known)


def _recorded(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, list[str]]]:
    """schema_definitions as name -> (sha256, objects); empty before the first application."""
    try:
        rows = con.execute("SELECT name, sha256, objects FROM schema_definitions").fetchall()
    except duckdb.CatalogException:
        return {}
    return {name: (sha256, list(objects)) for name, sha256, objects in rows}


def _stale(recorded: dict[str, tuple[str, list[str]]], definitions: list[Definition]) -> list[str]:
    """Definition files changed, added or removed since the recorded application, by name."""
    wanted = {d.name: d.sha256 for d in definitions}
    names = sorted(set(wanted) | set(recorded))
    return [name for name in names if wanted.get(name) != recorded.get(name, (None, []))[0]]


def apply_definitions(
    con: duckdb.DuckDBPyConnection, folder: Traversable | None = None, *, force: bool = False
) -> list[str]:
    """Re-create every view and macro from the definitions (of `folder`, default the package's),
    in name order and one transaction, unless `schema_definitions` says they are current (`force`:
    regardless). Returns the file names applied (empty: they were current)."""
    definitions = current(folder)
    con.execute(_CREATE_DEFINITIONS_LEDGER)
    recorded = _recorded(con)
    if folder is None and _newer_migrations(con):
        return []
    if not force and not _stale(recorded, definitions):
        return []
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM schema_definitions")
        for definition in definitions:
            try:
                con.execute(definition.sql)
            except duckdb.Error as exc:
                raise MigrationError(f"definition {definition.name} failed: {exc}") from exc
            con.execute(
                "INSERT INTO schema_definitions (name, sha256, objects) VALUES ($name, $sha256, $objects)",
                {"name": definition.name, "sha256": definition.sha256, "objects": list(definition.objects)},
            )
        made = {name for (name,) in con.execute(_OBJECTS).fetchall()}
        defined = {name for definition in definitions for name in definition.objects}
        if missing := sorted(defined - made):
            raise MigrationError(f"the definitions did not create {', '.join(missing)}")
        if strays := sorted(made - defined):
            raise MigrationError(
                f"the warehouse holds views or macros no definition makes: {', '.join(strays)}. A view or "
                "macro whose definition file is deleted is dropped by a new migration (DROP VIEW IF EXISTS "
                "name, DROP MACRO [TABLE] IF EXISTS name)"
            )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return [definition.name for definition in definitions]


def pending(con: duckdb.DuckDBPyConnection) -> list[str]:
    """What this code's schema has that the warehouse on `con` lacks: migrations not applied, and
    definitions not applied as they are now (`definitions/NN_name.sql`). Reads only; empty when
    the warehouse is current, or was written by a newer gpuplan (whose definitions it keeps)."""
    done = {row[0] for row in con.execute("SELECT version FROM schema_migrations").fetchall()}
    missing = [m.name for m in available() if m.version not in done]
    if missing or _newer_migrations(con):
        return missing
    return [f"definitions/{name}" for name in _stale(_recorded(con), current())]
