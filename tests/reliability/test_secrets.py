"""Secrets never leave the environment: every output of the fault days is searched for the fakes.

The fault days run with every token set to a recognisable fake (fake_secrets.py). Searched: every
file the crawls wrote (feeds, rejected feeds, summaries, logs), every row of every table of the
published and the writer warehouse, and every day's digest. The SMTP password is searched for in
test_digest_delivery.py, where mail is sent.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from reliability.fake_secrets import FAKE_SECRETS
from reliability.fault_checks import recorded
from reliability.fault_days import FaultMatrix
from reliability.faults import BY_NAME, platforms_for, token_env
from warehouse.engine import connect

pytestmark = pytest.mark.faults

TOKENS = {name: value for name, value in FAKE_SECRETS.items() if name != "GPUPLAN_SMTP_PASSWORD"}


def _tables(path: Path) -> dict[str, str]:
    """Every table of a DuckDB file, its rows as text (the relational API: no SQL is formatted)."""
    with duckdb.connect(str(path), read_only=True) as con:
        names = [name for (name,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        return {name: repr(con.table(name).fetchall()) for name in names}


def _where_secrets_are(matrix: FaultMatrix) -> list[str]:
    """'<secret env> in <place>' for every place a fake secret shows up."""
    places: dict[str, str] = {}
    for path in sorted(matrix.settings.crawl_dir.rglob("*")):
        if path.is_file():
            places[str(path)] = path.read_bytes().decode("utf-8", "replace")
    for database in (matrix.settings.warehouse, connect.writer_path(matrix.settings.warehouse)):
        for table, rows in _tables(database).items():
            places[f"{database.name}:{table}"] = rows
    for day, state in matrix.states.items():
        places[f"digest of {day}"] = state.digest_text + state.digest_html
    return [
        f"{name} in {place}"
        for place, text in places.items()
        for name, secret in TOKENS.items()
        if secret in text
    ]


def test_no_token_in_any_output(fault_matrix: FaultMatrix) -> None:
    token_platforms = [
        name for name in {run.platform for run in fault_matrix.runs.values()} if token_env(name)
    ]
    assert token_platforms, "no platform reads a token: nothing to search for"
    for platform in token_platforms:  # the fakes were really sent, so finding none means something
        run, token = fault_matrix.run("clean", platform), FAKE_SECRETS[token_env(platform)]
        in_headers = any(token in value for h in run.request_headers for value in h.values())
        in_bodies = any(token.encode() in body for body in run.request_bodies)  # a signed form's key
        assert in_headers or in_bodies, f"{platform}'s token was never sent"
    places = _where_secrets_are(fault_matrix)
    assert places == [], "a token leaked:\n" + "\n".join(places)


@pytest.mark.parametrize("platform", platforms_for(BY_NAME["token_echoed_in_error"]))
def test_token_echoed_in_error(fault_matrix: FaultMatrix, platform: str) -> None:
    """A platform refusing a token and repeating it in its message: the refusal is recorded, the
    token is not (crawl summary and log, crawl_runs.error, the digest's failed-crawl line)."""
    run = fault_matrix.run("token_echoed_in_error", platform)
    token = FAKE_SECRETS[token_env(platform)]
    row = recorded(fault_matrix, run)
    assert row.status == "failed" and "401" in row.error
    leaks = [
        where
        for where, text in {
            "summary": Path(run.summary.stats["log"]).with_suffix(".summary.json").read_text("utf-8"),
            "log": Path(run.summary.stats["log"]).read_text("utf-8"),
            "crawl_runs.error": row.error,
            "digest": fault_matrix.states[run.day].digest_text,
        }.items()
        if token in text
    ]
    assert leaks == [], f"{platform}'s token, echoed by the platform, was stored in {', '.join(leaks)}"
