"""Numbered SQL migrations, applied in order and recorded in `schema_migrations`.

Public API (stable):
    migrate(con, folder=None) -> list[str]   apply what is missing; returns the names applied (empty: no-op)
    available(folder=None) -> list[Migration]  the migrations in `folder` (default: warehouse/migrations/)
    fingerprint(folder=None) -> str  names and checksums of every migration in one hash
    MigrationError                   a migration that cannot be applied safely

A migration is `warehouse/migrations/NNN_name.sql`; NNN orders them and is the key in
`schema_migrations`. Each runs in its own transaction together with its record, so a
failure leaves the warehouse at the previous version. A migration that can delete data
(DROP TABLE/SCHEMA, ALTER TABLE ... DROP, DELETE, TRUNCATE, CREATE OR REPLACE TABLE) must
say so on a line `-- drops data: <why>`; otherwise it is refused before anything runs, so
data is never dropped silently. A migration is never edited once applied: the sha256 recorded
with it must match the file, or `migrate` refuses to run (a change goes in a new migration, which
every warehouse then applies; an edited one would leave older warehouses with the old schema).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

import duckdb

_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")
_DROPS_DATA = re.compile(
    r"\b(DROP\s+TABLE|DROP\s+SCHEMA|ALTER\s+TABLE\s+\S+\s+DROP|DELETE\s+FROM|TRUNCATE|CREATE\s+OR\s+REPLACE\s+TABLE)\b",
    re.IGNORECASE,
)
_DECLARED = re.compile(r"^--\s*drops data:\s*\S", re.IGNORECASE | re.MULTILINE)

_CREATE_LEDGER = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version     INTEGER PRIMARY KEY,
    name        VARCHAR NOT NULL,
    sha256      VARCHAR NOT NULL,
    applied_at  TIMESTAMP NOT NULL DEFAULT (now() AT TIME ZONE 'UTC')
)
"""


class MigrationError(RuntimeError):
    """A migration file is malformed, would drop data silently, or failed to apply."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str  # file name, e.g. "001_core.sql"
    sql: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


def _without_comments(sql: str) -> str:
    return "\n".join(line.split("--", 1)[0] for line in sql.splitlines())


def available(folder: Traversable | None = None) -> list[Migration]:
    """The migrations in `folder` (default: the package's), in version order."""
    folder = folder or resources.files("warehouse").joinpath("migrations")
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


def fingerprint(folder: Traversable | None = None) -> str:
    """One sha256 over the name and checksum of every migration: changes when any file does."""
    lines = "".join(f"{m.version} {m.name} {m.sha256}\n" for m in available(folder))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def migrate(con: duckdb.DuckDBPyConnection, folder: Traversable | None = None) -> list[str]:
    """Apply every migration (of `folder`, default the package's) not yet recorded; a second call is a no-op.

    Returns the file names applied by this call, in order. Raises MigrationError, before applying
    anything, when an applied migration's file no longer matches the checksum recorded with it.
    """
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
