"""A real PostgreSQL server for a test, in a temporary folder: the machine's own `initdb`/`pg_ctl`.

`postgres_server()` finds the server binaries (on PATH, or Debian's /usr/lib/postgresql/<v>/bin),
makes a cluster listening on a free loopback port only, and stops it and removes the folder at the
end. PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` system user
(which the distribution's package creates) and its commands run through `runuser`.

Where no server can be had, the test skips saying why; with `GPUPLAN_REQUIRE_POSTGRES=1` (CI sets
it, `.ci/run`) it fails instead, so a CI machine without PostgreSQL is noticed.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from loopback import free_port


@dataclass(frozen=True)
class Postgres:
    host: str
    port: int
    user: str
    database: str

    def env(self) -> dict[str, str]:
        """The variables deploy/dagster.yaml reads (password unused: the cluster trusts loopback)."""
        return {
            "DAGSTER_PG_HOST": self.host,
            "DAGSTER_PG_PORT": str(self.port),
            "DAGSTER_PG_USER": self.user,
            "DAGSTER_PG_PASSWORD": "unused",
            "DAGSTER_PG_DB": self.database,
        }


def _binaries() -> Path | None:
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).resolve().parent  # a link to the version's folder (createdb beside it)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def _unavailable(reason: str) -> None:
    if os.environ.get("GPUPLAN_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required here (GPUPLAN_REQUIRE_POSTGRES=1) but {reason}")
    pytest.skip(f"no PostgreSQL server to test against: {reason}")


@contextmanager
def postgres_server(database: str = "dagster") -> Iterator[Postgres]:
    bin_dir = _binaries()
    if bin_dir is None:
        _unavailable("initdb is neither on PATH nor under /usr/lib/postgresql/*/bin")
    assert bin_dir is not None
    runner: list[str] = []
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            _unavailable("running as root and there is no `postgres` user to own the cluster")
        runner = ["runuser", "-u", "postgres", "--"]
    folder = Path(tempfile.mkdtemp(prefix="gpuplan-pg-"))
    if runner:
        os.chown(folder, owner.pw_uid, owner.pw_gid)
    data, port = folder / "data", free_port()

    def run(*argv: str) -> None:
        subprocess.run([*runner, *argv], check=True, capture_output=True, timeout=120)

    try:
        run(str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "dagster", "-E", "UTF8")
        run(
            str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(folder / "server.log"), "-w", "-t", "60",
            "-o", f"-h 127.0.0.1 -p {port} -k {folder} -c fsync=off", "start",
        )  # fmt: skip
        try:
            run(str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "dagster", database)
            yield Postgres("127.0.0.1", port, "dagster", database)
        finally:
            subprocess.run(
                [*runner, str(bin_dir / "pg_ctl"), "-D", str(data), "-w", "-m", "immediate", "stop"],
                capture_output=True, timeout=60,
            )  # fmt: skip
            time.sleep(0.1)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
